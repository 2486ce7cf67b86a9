#!/usr/bin/python3
"""Backend-style LRN cases for the oneDNN provider's even-size path (an
asymmetrically padded average pool over channels, odn_build_lrn.c): sizes
2, 4 and 6 on 3, 5 and 8 channels (windows wider than C included), with
non-default alpha, beta and bias, on rank 3, 4 and 5 inputs and after a
Conv (whose output oneDNN keeps blocked), plus odd size 3 on the same data
for comparison. Expected outputs: the ONNX spec's formula in float64
(extra_cases.lrn_ref: window [c - floor((size-1)/2), c + ceil((size-1)/2)]
clipped to [0, C-1]).
usage: extra_cases_lrn.py OUT_DIR (prints the case dirs, one a line)
"""
import os
import sys

import numpy as np
from onnx import helper

from extra_cases import lrn_ref, save_case  # the same folder's case writer and spec formula

rng = np.random.default_rng(20261204)


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    attrs = dict(alpha=0.3, beta=0.65, bias=1.7)
    # every size on every channel count, rank 4; values up to ~6 so the
    # alpha term is not negligible next to the bias
    for c in (3, 5, 8):
        x = (rng.standard_normal((2, c, 3, 4)) * 2.0).astype(np.float32)
        for size in (2, 3, 4, 6):
            save_case(out_dir, "odn_lrn_c%d_size%d" % (c, size),
                      [helper.make_node("LRN", ["X"], ["Y"], size=size, **attrs)], [("X", x)],
                      [("Y", lrn_ref(x, size, **attrs))])
    # rank 3 and 5, other attributes
    for name, shape, size, a in (("odn_lrn_rank3_size2", (2, 5, 7), 2, dict(alpha=1.0, beta=0.5, bias=2.0)),
                                 ("odn_lrn_rank5_size4", (1, 8, 2, 3, 2), 4, dict(alpha=0.05, beta=1.2, bias=0.8))):
        x = (rng.standard_normal(shape) * 2.0).astype(np.float32)
        save_case(out_dir, name, [helper.make_node("LRN", ["X"], ["Y"], size=size, **a)], [("X", x)],
                  [("Y", lrn_ref(x, size, **a))])
    # default alpha/beta/bias (only size is required)
    x = (rng.standard_normal((1, 5, 3, 3)) * 10.0).astype(np.float32)
    save_case(out_dir, "odn_lrn_defaults_size2", [helper.make_node("LRN", ["X"], ["Y"], size=2)], [("X", x)],
              [("Y", lrn_ref(x, 2, 1e-4, 0.75, 1.0))])
    # Conv -> LRN (size 4) -> Relu: the LRN input arrives in oneDNN's blocked
    # layout, 16 channels
    x = rng.standard_normal((1, 3, 4, 5)).astype(np.float32)
    w = rng.standard_normal((16, 3)).astype(np.float32)
    conv = np.einsum("oc,nchw->nohw", w.astype(np.float64), x.astype(np.float64))
    y = np.maximum(lrn_ref(conv, 4, **attrs), 0.0)
    save_case(out_dir, "odn_lrn_size4_after_conv",
              [helper.make_node("Conv", ["X", "W"], ["C"]),
               helper.make_node("LRN", ["C"], ["L"], size=4, **attrs),
               helper.make_node("Relu", ["L"], ["Y"])],
              [("X", x)], [("Y", y)], [("W", w.reshape(16, 3, 1, 1))])
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
