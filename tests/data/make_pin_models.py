#!/usr/bin/python3
"""Makes pin_layernorm.onnx for tests/unit/test_observe.c: a named
LayerNormalization ('ln', opset 17) whose result feeds an Add ('res'), so a
pin on 'ln' must follow the node into its expanded body."""
import os
import onnx
from onnx import helper as h, TensorProto as T

here = os.path.dirname(os.path.abspath(__file__))
ln = h.make_node("LayerNormalization", ["x", "s", "b"], ["y"], name="ln", axis=-1)
res = h.make_node("Add", ["y", "x"], ["z"], name="res")
g = h.make_graph([ln, res], "pin_layernorm",
                 [h.make_tensor_value_info("x", T.FLOAT, [2, 4])],
                 [h.make_tensor_value_info("z", T.FLOAT, [2, 4])],
                 [h.make_tensor("s", T.FLOAT, [4], [1, 1, 1, 1]),
                  h.make_tensor("b", T.FLOAT, [4], [0, 0, 0, 0])])
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), os.path.join(here, "pin_layernorm.onnx"))
