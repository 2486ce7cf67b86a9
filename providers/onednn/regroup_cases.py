#!/usr/bin/python3
"""Cases for how the oneDNN claim groups nodes after giving some back
(odn_provider.c, claim_groups): when shape arithmetic is given back
(odn_shape_calc.c: its value is read outside the piece), the groups are
made afresh, not from the memo of the first grouping, which then holds a
path out of a group and back in. From that memo the host warned "would form
a cycle through ..." and split the piece wherever it chose, a shape value
from its reader ("a shape value leaving the piece" on a Llama GQA block).

  regroup        Relu -> Shape -> Gather(0) -> Unsqueeze -> Concat -> Reshape,
                 the Gather's value also a graph output; two sizes in one
                 session, expected from numpy; the Gather given back, no cycle
  regroup_twice  the same twice in a row on one input (two shape chains given
                 back), so the second grouping must be fresh as well

usage: regroup_cases.py --check TESSERA OUT_DIR   (exit 77 without onnx or onednn)
"""
import os
import sys

try:
    import numpy as np
    from onnx import helper, TensorProto as T
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import extra_cases as ec
except ImportError:
    np = None


def save(out, name, nodes, outputs, inits, sets):
    return ec.save_declared_case(out, name, nodes, [("x", T.FLOAT, ["N", 3, 4])], outputs, inits, sets, 13, 7)


def chain(tag, x, y):
    """x -> Relu -> ... -> Reshape(Mul(a, 2), [N, -1]) = y; the batch size is output bs<tag>."""
    return [helper.make_node("Relu", [x], ["a" + tag]),
            helper.make_node("Shape", ["a" + tag], ["s" + tag]),
            helper.make_node("Gather", ["s" + tag, "zero"], ["bs" + tag], axis=0, name="bs_gather" + tag),
            helper.make_node("Unsqueeze", ["bs" + tag, "ax0"], ["bs1" + tag]),
            helper.make_node("Concat", ["bs1" + tag, "m1"], ["shp" + tag], axis=0),
            helper.make_node("Mul", ["a" + tag, "two"], ["b" + tag]),
            helper.make_node("Reshape", ["b" + tag, "shp" + tag], [y])]


def cases(out, rng):
    inits = [("zero", np.array(0, np.int64)), ("ax0", np.array([0], np.int64)), ("m1", np.array([-1], np.int64)),
             ("two", np.array(2.0, np.float32))]
    once, twice = [], []
    for n in (2, 5):
        x = rng.standard_normal((n, 3, 4)).astype(np.float32)
        y = (np.maximum(x, 0) * 2).reshape(n, -1).astype(np.float32)
        bs = np.array(n, np.int64)
        once.append(([("x", x)], [("y", y), ("bs", bs)]))
        y2 = (np.maximum(y, 0) * 2).reshape(n, -1).astype(np.float32)
        twice.append(([("x", x)], [("y2", y2), ("bs", bs), ("bs_b", bs)]))
    a = save(out, "regroup", chain("", "x", "y"), [("y", T.FLOAT), ("bs", T.INT64)], inits, once)
    b = save(out, "regroup_twice", chain("", "x", "y") + chain("_b", "y", "y2"),
             [("y2", T.FLOAT), ("bs", T.INT64), ("bs_b", T.INT64)], inits, twice)
    return [a, b]


def check(tessera, out):
    if np is None:
        print("no numpy/onnx: skipped")
        return 77
    if not ec.has_onednn(tessera):
        return 77
    cs = cases(out, np.random.default_rng(20261207))
    bad = 0 if ec.test_cases(tessera, cs) else 1
    for c in cs:
        text = ec.partition(tessera, c, with_stderr=True)
        if "cycle" in text or "'bs_gather': computes a shape value read outside" not in text:
            print("%s: expected the Gather given back and no cycle to split:\n%s" % (os.path.basename(c), text))
            bad += 1
        else:
            print("ok: %s grouped afresh" % os.path.basename(c))
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--check":
        sys.exit(check(sys.argv[2], sys.argv[3]))
    sys.stderr.write(__doc__)
    sys.exit(2)
