#!/usr/bin/python3
"""Reshapes whose target shape is computed at run time, as torch.onnx
exports x.view(x.size(0), ...): Shape -> Gather -> Unsqueeze -> Concat ->
Reshape on inputs with symbolic dims, and a Reshape whose shape is a model
input. The shape arithmetic stays on the reference provider (int64); the
oneDNN provider must claim every Reshape, read the shape when it builds a
plan, and build another plan when the shape's *values* change (the last
case keeps the input shapes and changes only the target shape). Each case
has several data sets of different sizes run in one session. Expected
outputs are numpy in float64.
usage: shape_cases.py OUT_DIR (prints the case dirs, one a line)
The caller checks that onednn claims every Reshape (RESHAPES below).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 13
rng = np.random.default_rng(20260611)

# Reshape node names that oneDNN must claim, per case
RESHAPES = {
    "odn_shape_heads": ["split_heads", "merge_heads"],
    "odn_shape_input": ["reshape_s"],
}


def save_case(out_dir, name, nodes, inputs, outputs, datasets, inits=(), opset=OPSET):
    """inputs/outputs: (name, elem type, dims with str for symbols);
    datasets: list of (input arrays, output arrays) in that order."""
    g = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(n, t, d) for n, t, d in inputs],
        [helper.make_tensor_value_info(n, t, d) for n, t, d in outputs],
        [numpy_helper.from_array(a, n) for n, a in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    onnx.checker.check_model(m)
    d = os.path.join(out_dir, name)
    os.makedirs(d, exist_ok=True)
    onnx.save(m, os.path.join(d, "model.onnx"))
    np_type = {TensorProto.FLOAT: np.float32, TensorProto.INT64: np.int64, TensorProto.INT32: np.int32,
               TensorProto.UINT8: np.uint8, TensorProto.INT8: np.int8}
    for k, (ins, outs) in enumerate(datasets):
        sd = os.path.join(d, "test_data_set_%d" % k)
        os.makedirs(sd, exist_ok=True)
        for prefix, specs, arrs in (("input", inputs, ins), ("output", outputs, outs)):
            for i, ((n, t, _), a) in enumerate(zip(specs, arrs)):
                with open(os.path.join(sd, "%s_%d.pb" % (prefix, i)), "wb") as f:
                    f.write(numpy_helper.from_array(np.asarray(a).astype(np_type[t]), n).SerializeToString())
    print(d)


def i64(name, values):
    return (name, np.array(values, dtype=np.int64))


def heads_case(out_dir):
    """X [batch, seq, 16]: q = X.W; q.view(X.size(0), X.size(1), 2, 8)
    (Shape/Gather/Unsqueeze/Concat), Transpose to heads, Relu, Transpose
    back, .view(0, -1, 16) (0 copies the run-time batch, -1 infers seq from
    the shape's Concat), MatMul W2."""
    w = rng.standard_normal((16, 16)).astype(np.float32) * 0.3
    w2 = rng.standard_normal((16, 3)).astype(np.float32) * 0.3
    nodes = [helper.make_node("Shape", ["X"], ["sx"]),
             helper.make_node("Gather", ["sx", "I0"], ["b"], axis=0),
             helper.make_node("Gather", ["sx", "I1"], ["t"], axis=0),
             helper.make_node("Unsqueeze", ["b", "AX0"], ["bu"]),
             helper.make_node("Unsqueeze", ["t", "AX0"], ["tu"]),
             helper.make_node("Concat", ["bu", "tu", "HEADS"], ["shape_h"], axis=0),
             helper.make_node("Concat", ["ZERO", "MINUS1", "WIDTH"], ["shape_m"], axis=0),
             helper.make_node("MatMul", ["X", "W"], ["q"]),
             helper.make_node("Reshape", ["q", "shape_h"], ["qh"], name="split_heads"),
             helper.make_node("Transpose", ["qh"], ["qt"], perm=[0, 2, 1, 3]),
             helper.make_node("Relu", ["qt"], ["r"]),
             helper.make_node("Transpose", ["r"], ["rt"], perm=[0, 2, 1, 3]),
             helper.make_node("Reshape", ["rt", "shape_m"], ["m"], name="merge_heads"),
             helper.make_node("MatMul", ["m", "W2"], ["Y"])]
    datasets = []
    for batch, seq in ((2, 4), (1, 7), (3, 5), (2, 4)):
        x = rng.standard_normal((batch, seq, 16)).astype(np.float32)
        q = x.astype(np.float64) @ w.astype(np.float64)
        r = np.maximum(q.reshape(batch, seq, 2, 8).transpose(0, 2, 1, 3), 0)
        y = r.transpose(0, 2, 1, 3).reshape(batch, seq, 16) @ w2.astype(np.float64)
        datasets.append(([x], [y]))
    # shape_m is a Concat of constants only; should the host ever fold it,
    # merge_heads becomes an ordinary constant-shape Reshape
    save_case(out_dir, "odn_shape_heads", nodes, [("X", TensorProto.FLOAT, ["batch", "seq", 16])],
              [("Y", TensorProto.FLOAT, ["batch", "seq", 3])], datasets,
              [("W", w), ("W2", w2), i64("I0", 0), i64("I1", 1), i64("AX0", [0]), i64("HEADS", [2, 8]),
               i64("ZERO", [0]), i64("MINUS1", [-1]), i64("WIDTH", [16])])


def input_shape_case(out_dir):
    """X [batch, 12] reshaped to S (an int64 model input of 3 values: the
    plan is keyed by S's values), then Softmax over the last axis and a
    Mul by 2. Data sets: same X shape with S = [2,3,4], then [2,4,3] (only
    the values change), [2,2,6] with 0 copying the batch, [3,-1,4] for a
    batch of 3 (-1 inferred), and [2,3,4] again."""
    nodes = [helper.make_node("Reshape", ["X", "S"], ["xr"], name="reshape_s"),
             helper.make_node("Softmax", ["xr"], ["p"], axis=-1),
             helper.make_node("Mul", ["p", "TWO"], ["Y"])]
    datasets = []
    for batch, s in ((2, [2, 3, 4]), (2, [2, 4, 3]), (2, [0, 2, 6]), (3, [3, -1, 4]), (2, [2, 3, 4])):
        x = rng.standard_normal((batch, 12)).astype(np.float32)
        target = [batch if v == 0 else v for v in s]
        xr = x.astype(np.float64).reshape(target)
        e = np.exp(xr - xr.max(axis=-1, keepdims=True))
        y = 2 * e / e.sum(axis=-1, keepdims=True)
        datasets.append(([x, np.array(s, dtype=np.int64)], [y]))
    save_case(out_dir, "odn_shape_input", nodes,
              [("X", TensorProto.FLOAT, ["batch", 12]), ("S", TensorProto.INT64, [3])],
              [("Y", TensorProto.FLOAT, ["a", "b", "c"])], datasets,
              [("TWO", np.array(2, dtype=np.float32))])


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    heads_case(out_dir)
    input_shape_case(out_dir)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
