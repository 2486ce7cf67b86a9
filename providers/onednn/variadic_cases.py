#!/usr/bin/python3
"""Cases for the variadic ops Sum, Mean, Max and Min on the oneDNN provider
(odn_build_variadic.c), which older exporters (Caffe2 opset-8 FPNs, TF
converters) write for residual and FPN merges. Expected outputs from numpy
in float64.

  var_<op>_<n>            n = 1, 2, 3, 5 inputs of equal shape [2,3,4,5]
  var_<op>_<n>_bcast      n = 2, 3, 5 inputs broadcasting to [2,3,4,5]
                          ([3,1,1], [1,5], [2,1,4,1], [5], ...)
  var_<op>_<n>_conv       n = 2, 3, 5 Conv outputs (oneDNN's blocked layout),
                          the last a constant [C,1,1] where n = 5, -> Relu
                          -> Conv: the whole model one onednn piece
  var_sum_opset8_conv     the same for Sum at opset 8, as Caffe2 writes it
  var_<max|min>_<n>_nan   n = 3, 5, NaN in the first, a middle and the last
                          input: ONNX Max/Min (numpy's maximum/minimum, the
                          reference provider) give NaN wherever an input is
                          NaN (two-input Max/Min stay oneDNN binaries, which
                          drop a NaN in the first input: docs/onednn.md)
  var_sum_bad_broadcast   hostile: [n,4] + [m,4] + [4] fed n = 3, m = 2: the
                          run fails naming the node
  var_sum_17              17 inputs, above the provider's limit: declined,
                          the reference provider runs it

usage: variadic_cases.py --check TESSERA OUT_DIR   (exit 77 without onnx or onednn)
"""
import os
import sys

try:
    import numpy as np
    from onnx import helper
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import extra_cases as ec
except ImportError:
    np = None

OPS = {"Sum": lambda xs: sum(xs), "Mean": lambda xs: sum(xs) / len(xs),
       "Max": lambda xs: np.maximum.reduce(np.broadcast_arrays(*xs)),
       "Min": lambda xs: np.minimum.reduce(np.broadcast_arrays(*xs))}
FULL = (2, 3, 4, 5)
BCAST = [FULL, (3, 1, 1), (1, 5), (2, 1, 4, 1), (5,)]


def node_case(out, rng, op, shapes, tag):
    xs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    names = ["X%d" % i for i in range(len(xs))]
    want = OPS[op]([x.astype(np.float64) for x in xs])
    ec.save_case(out, "var_%s_%d%s" % (op.lower(), len(xs), tag),
                 [helper.make_node(op, names, ["Y"], name="var_node")], list(zip(names, xs)), [("Y", want)])


def conv_case(out, rng, op, n, opset=None, name=None):
    x = rng.standard_normal((1, 8, 6, 7)).astype(np.float32)
    ws = [(rng.standard_normal((16, 8, 3, 3)) * 0.2).astype(np.float32) for _ in range(min(n, 4))]
    wf = (rng.standard_normal((8, 16, 1, 1)) * 0.2).astype(np.float32)
    convs = [ec.float_conv(x, w, [1, 1], [1] * 4) for w in ws]
    inits = [("W%d" % i, w) for i, w in enumerate(ws)] + [("WF", wf)]
    terms = ["C%d" % i for i in range(len(ws))]
    nodes = [helper.make_node("Conv", ["X", "W%d" % i], [t], pads=[1] * 4) for i, t in enumerate(terms)]
    if n == 5:
        b = rng.standard_normal((16, 1, 1)).astype(np.float32)
        inits.append(("B", b))
        terms.append("B")
        convs.append(b.astype(np.float64))
    nodes += [helper.make_node(op, terms, ["S"], name="var_node"), helper.make_node("Relu", ["S"], ["R"]),
              helper.make_node("Conv", ["R", "WF"], ["Y"])]
    y = ec.float_conv(np.maximum(OPS[op](convs), 0), wf, [1, 1], [0] * 4)
    name = name or "var_%s_%d_conv" % (op.lower(), n)
    ec.save_typed_case(out, name, nodes, [("X", x)], [("Y", y.astype(np.float32))], inits, opset or ec.OPSET)


def nan_case(out, rng, op, n):
    xs = [rng.standard_normal(FULL).astype(np.float32) for _ in range(n)]
    xs[0][0, 0, 0, :2] = np.nan
    xs[n // 2][1, 2, 3, 1:3] = np.nan
    xs[-1][0, 1, 2, 4] = np.nan
    names = ["X%d" % i for i in range(n)]
    want = OPS[op]([x.astype(np.float64) for x in xs])
    ec.save_case(out, "var_%s_%d_nan" % (op.lower(), n), [helper.make_node(op, names, ["Y"], name="var_node")],
                 list(zip(names, xs)), [("Y", want)])


def write(out):
    rng = np.random.default_rng(20261207)
    for op in OPS:
        for n in (1, 2, 3, 5):
            node_case(out, rng, op, [FULL] * n, "")
        for n in (2, 3, 5):
            node_case(out, rng, op, BCAST[:n] if n != 2 else [(3, 1, 1), FULL], "_bcast")
            conv_case(out, rng, op, n)
    conv_case(out, rng, "Sum", 2, opset=8, name="var_sum_opset8_conv")
    for op in ("Max", "Min"):
        for n in (3, 5):
            nan_case(out, rng, op, n)


def bad_broadcast(out):
    d = os.path.join(out, "var_sum_bad_broadcast")
    ec.save_case(out, "var_sum_bad_broadcast", [helper.make_node("Sum", ["A", "B", "C"], ["Y"], name="bad_sum")],
                 [("A", np.ones((3, 4))), ("B", np.ones((2, 4))), ("C", np.ones(4))], [("Y", np.ones((3, 4)))])
    # the first two inputs' row counts symbolic, so the claim cannot see the clash
    import onnx
    m = onnx.load(os.path.join(d, "model.onnx"))
    for i, sym in enumerate(("n", "m")):
        m.graph.input[i].type.tensor_type.shape.dim[0].dim_param = sym
    m.graph.output[0].type.tensor_type.shape.dim[0].dim_param = "n"
    onnx.save(m, os.path.join(d, "model.onnx"))
    return d


def check(tessera, out):
    if np is None:
        print("no numpy/onnx: skipped")
        return 77
    if not ec.has_onednn(tessera):
        return 77
    cases = ec.written_cases(write, out)
    bad = 0 if ec.test_cases(tessera, cases) else 1
    for c in cases:
        report = ec.partition(tessera, c)
        if not ec.claimed_whole(report) or ("_conv" in c and " in 1 piece" not in report.replace(" pieces", " piece")):
            print("%s: expected one onednn piece, got:\n%s" % (os.path.basename(c), report))
            bad += 1
    bad += not ec.fails_naming(tessera, bad_broadcast(out), "'bad_sum'")
    rng = np.random.default_rng(17)
    xs = [rng.standard_normal((2, 3)) for _ in range(17)]
    names = ["X%d" % i for i in range(17)]
    ec.save_case(out, "var_sum_17", [helper.make_node("Sum", names, ["Y"], name="sum17")], list(zip(names, xs)),
                 [("Y", sum(xs))])
    c = os.path.join(out, "var_sum_17")
    if not ec.test_cases(tessera, [c]) or not ec.claimed_whole(ec.partition(tessera, c), reference=1):
        print("var_sum_17: expected the reference provider to run it correctly")
        bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--check":
        sys.exit(check(sys.argv[2], sys.argv[3]))
    sys.stderr.write(__doc__)
    sys.exit(2)
