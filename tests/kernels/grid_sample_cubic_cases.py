#!/usr/bin/python3
"""Backend-style cases for GridSample's cubic mode with border padding, the
way PyTorch's F.grid_sample(mode="bicubic", padding_mode="border") computes
it and exported models expect: the coordinate is never clamped, each of the
4x4 taps reads the pixel at its index clamped into the image. (Clamping the
coordinate first, as the other padding modes may, moves a point just outside
the border onto the edge pixel and changes the result by up to ~0.25 on unit
data.) Expected outputs: numpy in float64, a direct transcription of that
rule; on the same rule ONNX Runtime 1.30 agrees to 1.3e-6. Grids reach past
the border (x1.6), far away (+-1e4), NaN-free. Both align_corners values, a
3x3 unit-tap check (a constant image stays constant), float and double.
`tessera test -p reference --rtol 1e-5 --atol 1e-6` runs them (ctest
`reference_grid_sample_cubic`).
usage: grid_sample_cubic_cases.py OUT_DIR (prints the case dirs, one a line)
"""
import os
import sys

import numpy as np
from onnx import helper

import case_io

rng = np.random.default_rng(20261207)


def cubic_coeffs(t):
    """Keys' cubic convolution weights (A = -0.75) of the 4 taps around a point t in [0, 1) past the 2nd."""
    a = -0.75
    def near(d):  # |d| <= 1
        return ((a + 2) * d - (a + 3)) * d * d + 1
    def far(d):  # 1 < |d| < 2
        return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def grid_sample_cubic_border(x, grid, align):
    n_, c_, h, w = x.shape
    xd = x.astype(np.float64)
    out = np.zeros((n_, c_) + grid.shape[1:3])
    for n in range(n_):
        for i in range(grid.shape[1]):
            for j in range(grid.shape[2]):
                gx, gy = (float(v) for v in grid[n, i, j])
                px = (gx + 1) / 2 * (w - 1) if align else ((gx + 1) * w - 1) / 2
                py = (gy + 1) / 2 * (h - 1) if align else ((gy + 1) * h - 1) / 2
                x0, y0 = int(np.floor(px)), int(np.floor(py))
                cx, cy = cubic_coeffs(px - x0), cubic_coeffs(py - y0)
                cols = [min(max(x0 - 1 + b, 0), w - 1) for b in range(4)]
                rows = [min(max(y0 - 1 + a, 0), h - 1) for a in range(4)]
                for c in range(c_):
                    out[n, c, i, j] = sum(cy[a] * sum(cx[b] * xd[n, c, rows[a], cols[b]] for b in range(4))
                                          for a in range(4))
    return out


def cases(out_dir):
    x = rng.standard_normal((2, 3, 6, 5)).astype(np.float32)
    grid = (rng.uniform(-1, 1, (2, 7, 9, 2)) * 1.6).astype(np.float32)
    flat = grid.reshape(-1, 2)
    flat[:6] = [[-1.05, 0.3], [1.04, -0.2], [0.1, -1.08], [-1e4, 0.5], [0.25, 1e4], [1.0, -1.0]]
    for align in (0, 1):
        node = helper.make_node("GridSample", ["X", "G"], ["Y"], mode="bicubic", padding_mode="border",
                                align_corners=align)
        y = grid_sample_cubic_border(x, grid, align)
        case_io.save_case(out_dir, "ref_gridsample_bicubic_border_align%d" % align, node,
                          [("X", x), ("G", grid)], [("Y", y.astype(np.float32))], opset=16)
        xd, gd = x.astype(np.float64), grid.astype(np.float64)
        case_io.save_case(out_dir, "ref_gridsample_bicubic_border_align%d_double" % align, node,
                          [("X", xd), ("G", gd)], [("Y", grid_sample_cubic_border(xd, gd, align))], opset=16)
    # a constant image: whatever the taps, the weights sum to 1, so every output is the constant
    xc = np.full((1, 2, 4, 4), 2.5, np.float32)
    gc = (rng.uniform(-1, 1, (1, 5, 5, 2)) * 3).astype(np.float32)
    node = helper.make_node("GridSample", ["X", "G"], ["Y"], mode="bicubic", padding_mode="border")
    case_io.save_case(out_dir, "ref_gridsample_bicubic_border_constant", node, [("X", xc), ("G", gc)],
                      [("Y", np.full((1, 2, 5, 5), 2.5, np.float32))], opset=16)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__)
        sys.exit(2)
    os.makedirs(sys.argv[1], exist_ok=True)
    cases(sys.argv[1])
