#!/usr/bin/python3
"""Cases for shape arithmetic inside oneDNN pieces (odn_shape_calc.c):
models with dynamic dims as PyTorch exports them, each fed two input sizes
in one session (test_data_set_0 and _1: the plan is built again for the
second). Expected outputs from numpy.

  groupnorm      GroupNorm at opset 11: Shape -> Gather -> Unsqueeze ->
                 Concat -> Reshape -> InstanceNormalization -> Reshape(Shape(x))
                 -> Mul -> Add, between convolutions; one piece
  heads          attention's head split: Shape -> Gather(1) and
                 Div(Gather(2), heads) -> Concat -> Reshape -> Transpose,
                 MatMul, and back (Shape with start/end, opset 15); one piece
  resize_skip    Resize to a skip tensor's size: Shape -> Slice(2:4) ->
                 Concat -> Resize(sizes), then Add; one piece
  where_minus1   torch's reshape(-1) guard: Where(Equal(shape, 0), 1, shape)
                 and Mul/Sub/Mod on the dims; one piece
  leaves_piece   a computed shape read by ConstantOfShape (the reference
                 provider's) and one that is a graph output: those chains
                 stay off oneDNN and the outputs are still right
  bad_index, div_zero
                 hostile chains (a Gather index past the shape, or -2^62; a
                 zero divisor): the run fails with an error naming the node

usage: shape_calc_cases.py --check TESSERA OUT_DIR   (exit 77 without onnx)
"""
import os
import sys

try:
    import numpy as np
    from onnx import helper, numpy_helper, TensorProto as T
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import extra_cases as ec
except ImportError:
    np = None

OPSET = 15


def save(out, name, nodes, inputs, outputs, inits, sets, pieces):
    """inputs: (name, elem type, dims with symbols); sets: list of (inputs,
    outputs) arrays; pieces: the partition's expected onednn piece count
    (None: not checked)."""
    return ec.save_declared_case(out, name, nodes, inputs, outputs, inits, sets, OPSET, 8), pieces


def i64(*v):
    return np.array(v, dtype=np.int64)


def conv1x1(x, w):
    return np.einsum("nchw,mc->nmhw", x, w[:, :, 0, 0])


def groupnorm(out, rng):
    c, g = 16, 4
    w1 = rng.standard_normal((c, c, 1, 1)).astype(np.float32) * 0.3
    gamma = rng.uniform(0.5, 1.5, c).astype(np.float32)
    beta = rng.standard_normal(c).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["a"]),
        helper.make_node("Shape", ["a"], ["s"]),
        helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
        helper.make_node("Unsqueeze", ["n", "ax0"], ["n1"]),
        helper.make_node("Concat", ["n1", "gm1"], ["s3"], axis=0),
        helper.make_node("Reshape", ["a", "s3"], ["r"]),
        helper.make_node("InstanceNormalization", ["r", "ones", "zeros"], ["in"], epsilon=1e-5),
        helper.make_node("Reshape", ["in", "s"], ["back"]),
        helper.make_node("Mul", ["back", "gamma"], ["gm"]),
        helper.make_node("Add", ["gm", "beta"], ["y"]),
    ]
    inits = [("w1", w1), ("zero", np.array(0, np.int64)), ("ax0", i64(0)), ("gm1", i64(g, -1)),
             ("ones", np.ones(g, np.float32)), ("zeros", np.zeros(g, np.float32)),
             ("gamma", gamma.reshape(c, 1, 1)), ("beta", beta.reshape(c, 1, 1))]
    sets = []
    for n, h, w in ((1, 9, 12), (2, 5, 7)):
        x = rng.standard_normal((n, c, h, w)).astype(np.float32)
        a = conv1x1(x.astype(np.float64), w1.astype(np.float64)).reshape(n, g, -1)
        nrm = (a - a.mean(-1, keepdims=True)) / np.sqrt(a.var(-1, keepdims=True) + 1e-5)
        y = nrm.reshape(n, c, h, w) * gamma.reshape(1, c, 1, 1) + beta.reshape(1, c, 1, 1)
        sets.append(([("x", x)], [("y", y.astype(np.float32))]))
    return save(out, "shape_calc_groupnorm", nodes, [("x", T.FLOAT, ["N", c, "H", "W"])], [("y", T.FLOAT)], inits,
                sets, 1)


def heads(out, rng):
    d, h = 32, 4
    wq = rng.standard_normal((d, d)).astype(np.float32) * 0.2
    nodes = [
        helper.make_node("MatMul", ["x", "wq"], ["q"]),
        helper.make_node("Shape", ["q"], ["s01"], start=0, end=2),
        helper.make_node("Shape", ["q"], ["s2"], start=-1),
        helper.make_node("Div", ["s2", "nh"], ["hd"]),
        helper.make_node("Concat", ["s01", "nh", "hd"], ["s4"], axis=0),
        helper.make_node("Reshape", ["q", "s4"], ["q4"]),
        helper.make_node("Transpose", ["q4"], ["qt"], perm=[0, 2, 1, 3]),
        helper.make_node("Transpose", ["q4"], ["kt"], perm=[0, 2, 3, 1]),
        helper.make_node("MatMul", ["qt", "kt"], ["sc"]),
        helper.make_node("Softmax", ["sc"], ["p"], axis=-1),
        helper.make_node("MatMul", ["p", "qt"], ["o"]),
        helper.make_node("Transpose", ["o"], ["ot"], perm=[0, 2, 1, 3]),
        helper.make_node("Shape", ["x"], ["sx"]),
        helper.make_node("Reshape", ["ot", "sx"], ["y"]),
    ]
    inits = [("wq", wq), ("nh", i64(h))]
    sets = []
    for b, t in ((1, 7), (2, 13)):
        x = rng.standard_normal((b, t, d)).astype(np.float32)
        q = (x.astype(np.float64) @ wq).reshape(b, t, h, d // h).transpose(0, 2, 1, 3)
        sc = q @ q.transpose(0, 1, 3, 2)
        p = np.exp(sc - sc.max(-1, keepdims=True))
        p /= p.sum(-1, keepdims=True)
        y = (p @ q).transpose(0, 2, 1, 3).reshape(b, t, d)
        sets.append(([("x", x)], [("y", y.astype(np.float32))]))
    return save(out, "shape_calc_heads", nodes, [("x", T.FLOAT, ["B", "T", d])], [("y", T.FLOAT)], inits, sets, 1)


def resize_skip(out, rng):
    c = 8
    w1 = rng.standard_normal((c, c, 1, 1)).astype(np.float32) * 0.3
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["a"]),
        helper.make_node("Shape", ["skip"], ["ss"]),
        helper.make_node("Slice", ["ss", "st", "en"], ["hw"]),
        helper.make_node("Shape", ["a"], ["sa"]),
        helper.make_node("Slice", ["sa", "zero1", "st"], ["nc"]),
        helper.make_node("Concat", ["nc", "hw"], ["sizes"], axis=0),
        helper.make_node("Resize", ["a", "", "", "sizes"], ["up"], mode="nearest",
                         coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
        helper.make_node("Add", ["up", "skip"], ["y"]),
    ]
    inits = [("w1", w1), ("st", i64(2)), ("en", i64(4)), ("zero1", i64(0))]
    sets = []
    for h, w in ((4, 5), (6, 3)):
        x = rng.standard_normal((1, c, h, w)).astype(np.float32)
        skip = rng.standard_normal((1, c, 2 * h, 2 * w)).astype(np.float32)
        a = conv1x1(x.astype(np.float64), w1.astype(np.float64))
        y = a.repeat(2, axis=2).repeat(2, axis=3) + skip
        sets.append(([("x", x), ("skip", skip)], [("y", y.astype(np.float32))]))
    return save(out, "shape_calc_resize_skip", nodes,
                [("x", T.FLOAT, [1, c, "H", "W"]), ("skip", T.FLOAT, [1, c, "H2", "W2"])], [("y", T.FLOAT)], inits,
                sets, 1)


def where_minus1(out, rng):
    nodes = [
        helper.make_node("Relu", ["x"], ["a"]),
        helper.make_node("Shape", ["a"], ["s"]),
        helper.make_node("Equal", ["s", "zero"], ["isz"]),
        helper.make_node("Where", ["isz", "one", "s"], ["s1"]),
        helper.make_node("Gather", ["s1", "idx"], ["rc"], axis=0),  # [rows, cols]
        helper.make_node("Mul", ["rc", "mulv"], ["rc2"]),           # [rows*2, cols]
        helper.make_node("Mod", ["rc2", "big"], ["rc3"]),           # unchanged
        helper.make_node("Sub", ["rc3", "zero"], ["rc4"]),
        helper.make_node("Div", ["rc4", "divv"], ["rc5"]),          # [rows*2, cols/2]
        helper.make_node("Reshape", ["a", "rc5"], ["y"]),
    ]
    inits = [("zero", i64(0)), ("one", i64(1)), ("idx", i64(0, 1)), ("mulv", i64(2, 1)),
             ("big", i64(1 << 40)), ("divv", i64(1, 2))]
    sets = []
    for r, c in ((3, 8), (5, 4)):
        x = rng.standard_normal((r, c)).astype(np.float32)
        y = np.maximum(x, 0).reshape(r * 2, c // 2)
        sets.append(([("x", x)], [("y", y)]))
    return save(out, "shape_calc_where_minus1", nodes, [("x", T.FLOAT, ["R", "C"])], [("y", T.FLOAT)], inits, sets,
                1)


def leaves_piece(out, rng):
    nodes = [
        helper.make_node("Relu", ["x"], ["a"]),
        helper.make_node("Shape", ["a"], ["s"]),
        helper.make_node("ConstantOfShape", ["s"], ["ones"], value=numpy_helper.from_array(np.ones(1, np.float32))),
        helper.make_node("Add", ["a", "ones"], ["y"]),
        helper.make_node("Shape", ["y"], ["sy"]),
        helper.make_node("Mul", ["sy", "two"], ["shape_out"]),
    ]
    sets = []
    for r in (3, 6):
        x = rng.standard_normal((r, 5)).astype(np.float32)
        sets.append(([("x", x)], [("y", np.maximum(x, 0) + 1), ("shape_out", i64(2 * r, 10))]))
    return save(out, "shape_calc_leaves_piece", nodes, [("x", T.FLOAT, ["R", 5])],
                [("y", T.FLOAT), ("shape_out", T.INT64)], [("two", i64(2))], sets, None)


def hostile(out, name, index, divisor):
    """Relu -> Shape -> Gather(index) -> Div(divisor) -> Unsqueeze ->
    Concat -> Reshape on a [N, 6] input: a shape chain the plan computes,
    given an index past the shape or a zero divisor. The run must fail
    naming the node, not crash."""
    nodes = [
        helper.make_node("Relu", ["x"], ["a"]),
        helper.make_node("Shape", ["a"], ["s"]),
        helper.make_node("Gather", ["s", "idx"], ["d"], axis=0, name="gather_dim"),
        helper.make_node("Div", ["d", "dv"], ["q"], name="div_dim"),
        helper.make_node("Unsqueeze", ["q", "ax0"], ["q1"]),
        helper.make_node("Concat", ["q1", "m1"], ["shp"], axis=0),
        helper.make_node("Reshape", ["a", "shp"], ["y"]),
    ]
    inits = [("idx", np.array(index, np.int64)), ("dv", np.array(divisor, np.int64)), ("ax0", i64(0)), ("m1", i64(-1))]
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    return save(out, name, nodes, [("x", T.FLOAT, ["N", 6])], [("y", T.FLOAT)], inits, [([("x", x)], [("y", x)])], 1)


HOSTILE = (("shape_calc_bad_index", 5, 1, "node 'gather_dim' (Gather): index 5 out of range"),
           ("shape_calc_bad_index_huge", -(1 << 62), 1, "node 'gather_dim' (Gather): index"),
           ("shape_calc_div_zero", 0, 0, "node 'div_dim' (Div): integer division by zero"))


def check(tessera, out):
    if np is None:
        print("no numpy/onnx: skipped")
        return 77
    if not ec.has_onednn(tessera):
        return 77
    rng = np.random.default_rng(20261207)
    cases = [f(out, rng) for f in (groupnorm, heads, resize_skip, where_minus1, leaves_piece)]
    bad = 0 if ec.test_cases(tessera, [c for c, _ in cases]) else 1
    for name, index, divisor, message in HOSTILE:
        c, _ = hostile(out, name, index, divisor)
        bad += not ec.fails_naming(tessera, c, message)
    for c, pieces in cases:
        part = ec.partition(tessera, c)
        total = [line for line in part.splitlines() if line.startswith("total:")]
        want = "in %d pieces; onednn" % pieces if pieces else None
        if not total or (want and want not in total[0]) or (want and "reference 0," not in total[0]):
            print("%s: expected %s pieces, all onednn:\n%s" % (os.path.basename(c), pieces, part))
            bad += 1
        else:
            print("ok: %s %s" % (os.path.basename(c), total[0]))
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--check":
        sys.exit(check(sys.argv[2], sys.argv[3]))
    sys.stderr.write(__doc__)
    sys.exit(2)
