#!/usr/bin/python3
"""Cases that leave two or more optional outputs unnamed, which the ONNX
suite never does (its cases request every output). A provider writing into
the host's scratch for dropped outputs once read freed memory here (the
scratch array was realloc'ed while a kernel held earlier slots). Expected
values by hand:
  Unique(x = [2,1,2,3,1]), only y:            y = [1,2,3] (sorted)
  Unique, only counts (y, indices dropped):    counts = [2,2,1]
  DynamicQuantizeLinear(x = [0,1,4]), only y:  scale 4/255, zero point 0,
                                               y = round(x/scale) = [0,64,255]
  LSTM with only Y_h (Y, Y_c dropped), W = R = 0, B = 0, one step:
      gates i = f = o = sigmoid(0) = 0.5, c~ = tanh(0) = 0,
      c = f*c0 + i*c~ = 0.5*c0, h = o*tanh(c) = 0.5*tanh(0.5*c0)
usage: dropped_outputs.py OUT_DIR"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as T, helper, numpy_helper


def save(out, name, nodes, inputs, outputs, inits=(), opset=13):
    ty = lambda a: onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[a.dtype]
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info(n, ty(a), a.shape) for n, a in inputs],
                          [helper.make_tensor_value_info(n, ty(a), a.shape) for n, a in outputs],
                          [numpy_helper.from_array(a, n) for n, a in inits])
    d = os.path.join(out, name, "test_data_set_0")
    os.makedirs(d, exist_ok=True)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)]), os.path.join(out, name, "model.onnx"))
    for kind, arrs in (("input", inputs), ("output", outputs)):
        for i, (n, a) in enumerate(arrs):
            with open(os.path.join(d, "%s_%d.pb" % (kind, i)), "wb") as f:
                f.write(numpy_helper.from_array(a, n).SerializeToString())


def main(out):
    x = np.array([2, 1, 2, 3, 1], np.float32)
    save(out, "unique_only_y", [helper.make_node("Unique", ["x"], ["y", "", "", ""])], [("x", x)],
         [("y", np.array([1, 2, 3], np.float32))])
    save(out, "unique_only_counts", [helper.make_node("Unique", ["x"], ["", "", "", "c"])], [("x", x)],
         [("c", np.array([2, 2, 1], np.int64))])
    save(out, "dql_only_y", [helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "", ""])],
         [("x", np.array([0, 1, 4], np.float32))], [("y", np.array([0, 64, 255], np.uint8))])
    c0 = np.array([[[1.0, -2.0]]], np.float32)  # [dirs, batch, hidden]
    h0 = np.zeros((1, 1, 2), np.float32)
    xs = np.array([[[0.5]]], np.float32)  # [seq, batch, input]
    w = np.zeros((1, 8, 1), np.float32)
    r = np.zeros((1, 8, 2), np.float32)
    yh = (0.5 * np.tanh(0.5 * c0.astype(np.float64))).astype(np.float32)
    save(out, "lstm_only_yh", [helper.make_node("LSTM", ["X", "W", "R", "", "", "h0", "c0"], ["", "Yh", ""], hidden_size=2)],
         [("X", xs), ("h0", h0), ("c0", c0)], [("Yh", yh)], [("W", w), ("R", r)])
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
