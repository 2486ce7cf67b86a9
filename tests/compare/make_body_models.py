"""Writes the models `compare --per-node` is tested on inside control-flow
bodies, with the inputs and the numpy answers the tests check against.

usage: make_body_models.py OUT_DIR

OUT_DIR/loop_if.onnx — a Loop (`loop0`, 3 iterations) carrying h [2, 3];
  its body holds an If (`body_if`) that takes then_branch in iterations 0
  and 1 (i < 2) and else_branch in iteration 2. Main graph:
      loop0: Loop(trip, go, h0) -> h_final, ts (the If's output per iteration)
      final: Tanh(h_final) -> y
  loop0/body (i, cond_in, h_in):
      body_relu: hr = Relu(h_in)
      body_take: take = Less(i, two)
      body_if:   t = If(take)
      body_add:  h_out = Add(t, h_in)
      keep_going: cond_out = Identity(cond_in)
  loop0/body/body_if/then_branch (reads xl, w, hr, scale, tiny from outside):
      dot_then:    d = MatMul(xl, w)        the model's only MatMul
      shrink_then: dq = Div(d, big)
      mul_then:    m = Mul(hr, scale)       the model's only Mul
      sum_then:    so = Add(m, dq)
      amp_then:    t_then = Div(so, tiny)   magnifies what reaches it 1e4 times
  loop0/body/body_if/else_branch: neg_else: t_else = Neg(hr)
  h0 holds multiples of 1/8 and scale [0.5, -1, 2]: hr * scale is exact in
  float32, so a fault added to that Mul can be computed exactly.
  xl [2, K] and w [K, 3] are make_oracle_models.py's kind: terms of +-1e4
  that nearly cancel, so a MatMul summed in float32 (plugin_lossy.c) is far
  from the float64 result.
OUT_DIR/scan.onnx — a Scan (`scan0`) over xs [4, 3] carrying s [3]:
      scan_add: s_out = Add(s_in, x_t)   the model's only Add
      scan_neg: n_t = Neg(s_out)         (scan output)
OUT_DIR/h0.pb, xl.pb, s0.pb, xs.pb — the inputs.
OUT_DIR/expected.json — numpy's figures:
  "mul_fault": largest |fl32(p + delta) - p| for p = Relu(h0) * scale (the
               faulty Mul in iteration 0), per delta ("0.001", "1e-06");
  "add_fault": the same for the Scan's first Add, s0 + xs[0], delta 0.001;
  "dot_lossy": largest |lossy - fl32(exact)| of the MatMul, lossy being the
               float32 sum in order (numpy cumsum) and exact numpy float64.
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

K = 4096


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def fault(p, delta):
    """What plugin_faulty makes of p: p + delta, rounded to float32."""
    got = (p.astype(np.float32) + np.float32(delta)).astype(np.float32)
    return float(np.abs(got.astype(np.float64) - p.astype(np.float64)).max())


def loop_if_model(out):
    rng = np.random.default_rng(23)
    w = np.empty((K, 3), np.float32)
    w[0::2] = rng.uniform(5e3, 1e4, (K // 2, 3)).astype(np.float32)
    w[1::2] = -w[0::2] + rng.uniform(-1.0, 1.0, (K // 2, 3)).astype(np.float32)
    xl = rng.uniform(0.9, 1.1, (2, K)).astype(np.float32)
    xl[:, 1::2] = xl[:, 0::2]
    xl[:, 1::2] += rng.uniform(-1e-3, 1e-3, (2, K // 2)).astype(np.float32)
    h0 = (rng.integers(-16, 17, (2, 3)) / 8.0).astype(np.float32)
    scale = np.array([0.5, -1.0, 2.0], np.float32)

    f23 = [2, 3]
    then_g = helper.make_graph(
        [helper.make_node("MatMul", ["xl", "w"], ["d"], name="dot_then"),
         helper.make_node("Div", ["d", "big"], ["dq"], name="shrink_then"),
         helper.make_node("Mul", ["hr", "scale"], ["m"], name="mul_then"),
         helper.make_node("Add", ["m", "dq"], ["so"], name="sum_then"),
         helper.make_node("Div", ["so", "tiny"], ["t_then"], name="amp_then")],
        "then", [], [vi("t_then", TensorProto.FLOAT, f23)])
    else_g = helper.make_graph(
        [helper.make_node("Neg", ["hr"], ["t_else"], name="neg_else")],
        "else", [], [vi("t_else", TensorProto.FLOAT, f23)])
    body = helper.make_graph(
        [helper.make_node("Relu", ["h_in"], ["hr"], name="body_relu"),
         helper.make_node("Less", ["i", "two"], ["take"], name="body_take"),
         helper.make_node("If", ["take"], ["t"], name="body_if", then_branch=then_g,
                          else_branch=else_g),
         helper.make_node("Add", ["t", "h_in"], ["h_out"], name="body_add"),
         helper.make_node("Identity", ["cond_in"], ["cond_out"], name="keep_going")],
        "loop_body",
        [vi("i", TensorProto.INT64, []), vi("cond_in", TensorProto.BOOL, []),
         vi("h_in", TensorProto.FLOAT, f23)],
        [vi("cond_out", TensorProto.BOOL, []), vi("h_out", TensorProto.FLOAT, f23),
         vi("t", TensorProto.FLOAT, f23)])
    nodes = [
        helper.make_node("Loop", ["trip", "go", "h0"], ["h_final", "ts"], name="loop0", body=body),
        helper.make_node("Tanh", ["h_final"], ["y"], name="final"),
    ]
    inits = [
        numpy_helper.from_array(np.array(3, np.int64), "trip"),
        numpy_helper.from_array(np.array(True), "go"),
        numpy_helper.from_array(np.array(2, np.int64), "two"),
        numpy_helper.from_array(w, "w"),
        numpy_helper.from_array(scale, "scale"),
        numpy_helper.from_array(np.array(1e4, np.float32), "big"),
        numpy_helper.from_array(np.array(1e-4, np.float32), "tiny"),
    ]
    graph = helper.make_graph(
        nodes, "loop_if",
        [vi("h0", TensorProto.FLOAT, f23), vi("xl", TensorProto.FLOAT, [2, K])],
        [vi("y", TensorProto.FLOAT, f23), vi("ts", TensorProto.FLOAT, [3, 2, 3])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, "loop_if.onnx"))
    for name, a in (("h0", h0), ("xl", xl)):
        with open(os.path.join(out, name + ".pb"), "wb") as f:
            f.write(numpy_helper.from_array(a, name).SerializeToString())

    p = np.maximum(h0, 0) * scale  # exact in float32
    assert (p.astype(np.float64) == np.maximum(h0, 0).astype(np.float64) * scale).all()
    exact = xl.astype(np.float64) @ w.astype(np.float64)
    lossy = np.empty((2, 3), np.float32)
    for r in range(2):
        for c in range(3):
            lossy[r, c] = np.cumsum(xl[r, :] * w[:, c], dtype=np.float32)[-1]
    dot = float(np.abs(lossy.astype(np.float64) -
                       exact.astype(np.float32).astype(np.float64)).max())
    return {"mul_fault": {"0.001": fault(p, 1e-3), "1e-06": fault(p, 1e-6)}, "dot_lossy": dot}


def scan_model(out):
    s0 = np.array([0.25, -0.5, 1.0], np.float32)
    xs = (np.arange(12).reshape(4, 3) / 4.0 - 1.0).astype(np.float32)
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "x_t"], ["s_out"], name="scan_add"),
         helper.make_node("Neg", ["s_out"], ["n_t"], name="scan_neg")],
        "scan_body",
        [vi("s_in", TensorProto.FLOAT, [3]), vi("x_t", TensorProto.FLOAT, [3])],
        [vi("s_out", TensorProto.FLOAT, [3]), vi("n_t", TensorProto.FLOAT, [3])])
    nodes = [helper.make_node("Scan", ["s0", "xs"], ["s_final", "ns"], name="scan0", body=body,
                              num_scan_inputs=1)]
    graph = helper.make_graph(
        nodes, "scan",
        [vi("s0", TensorProto.FLOAT, [3]), vi("xs", TensorProto.FLOAT, [4, 3])],
        [vi("s_final", TensorProto.FLOAT, [3]), vi("ns", TensorProto.FLOAT, [4, 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, "scan.onnx"))
    for name, a in (("s0", s0), ("xs", xs)):
        with open(os.path.join(out, name + ".pb"), "wb") as f:
            f.write(numpy_helper.from_array(a, name).SerializeToString())
    return {"add_fault": fault(s0 + xs[0], 1e-3)}


def main(out):
    os.makedirs(out, exist_ok=True)
    expected = loop_if_model(out)
    expected.update(scan_model(out))
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1])
