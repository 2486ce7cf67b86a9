#!/usr/bin/python3
"""body_arena_loop.onnx, for test_body_arena.c (control-flow bodies'
intermediates placed in a planned arena, runtime/cf_util.c):

    x float[n] (symbolic), trip int64 scalar
    Loop 'loop' (trip, "", acc = x):
        half  = Mul(acc_in, 0.5)            intermediate, [n]
        moved = Add(half, x)                intermediate, reads outer x
        acc_out = Relu(moved)               carried
        upto = Range(0, i + 1, 1)           intermediate whose size grows
        total = ReduceSum(Cast(upto))       scan output: 0 + 1 + ... + i
    outputs acc float[n], totals float[trip]

so acc after k iterations is relu(0.5 acc + x) applied k times to x, and
totals[i] = i (i + 1) / 2; test_body_arena.c computes both in C.
usage: make_body_arena_models.py [OUT_DIR] (default: beside this file)"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

F, I64 = TensorProto.FLOAT, TensorProto.INT64
out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))

body = helper.make_graph(
    [helper.make_node("Identity", ["cond_in"], ["cond_out"], name="keep_going"),
     helper.make_node("Mul", ["acc_in", "half_k"], ["half"], name="mul_half"),
     helper.make_node("Add", ["half", "x"], ["moved"], name="add_x"),
     helper.make_node("Relu", ["moved"], ["acc_out"], name="relu"),
     helper.make_node("Add", ["i", "one"], ["i1"], name="next_i"),
     helper.make_node("Range", ["zero", "i1", "one"], ["upto"], name="range"),
     helper.make_node("Cast", ["upto"], ["upto_f"], name="cast", to=F),
     helper.make_node("ReduceSum", ["upto_f"], ["total"], name="sum", keepdims=0)],
    "body",
    [helper.make_tensor_value_info("i", I64, []), helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
     helper.make_tensor_value_info("acc_in", F, ["n"])],
    [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
     helper.make_tensor_value_info("acc_out", F, ["n"]), helper.make_tensor_value_info("total", F, [])],
    [numpy_helper.from_array(np.array(0.5, np.float32), "half_k"),
     numpy_helper.from_array(np.array(0, np.int64), "zero"), numpy_helper.from_array(np.array(1, np.int64), "one")])
g = helper.make_graph(
    [helper.make_node("Loop", ["trip", "", "x"], ["acc", "totals"], name="loop", body=body)], "body_arena",
    [helper.make_tensor_value_info("x", F, ["n"]), helper.make_tensor_value_info("trip", I64, [])],
    [helper.make_tensor_value_info("acc", F, ["n"]), helper.make_tensor_value_info("totals", F, ["trips"])])
save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8),
     os.path.join(out, "body_arena_loop.onnx"))
