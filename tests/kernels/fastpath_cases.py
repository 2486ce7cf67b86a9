#!/usr/bin/python3
"""Backend-style cases for the reference provider's fast paths that must
equal the plain definition exactly: NonMaxSuppression through a heap that
stops after max_output_boxes_per_class (many tied scores: lower box index
first; NaN scores last), Expand and ConstantOfShape as broadcast fills
(int64, bool, float16, float, string; broadcast on inner, outer and middle
axes), IsNaN/IsInf on float16/float/double, comparisons, logical ops and
Where on contiguous and scalar-broadcast operands, GridSample's bilinear
float path (its double arithmetic transcribed: bit for bit too). Expected
outputs: numpy (NMS and GridSample by a direct transcription of the
definition). `tessera test -p reference --rtol 0 --atol 0` runs them
(ctest `reference_fastpath`).
usage: fastpath_cases.py OUT_DIR (prints the case dirs, one a line)
"""
import os
import sys

import numpy as np
from onnx import helper, numpy_helper

import case_io

rng = np.random.default_rng(20261208)


def save_case(*args, opset=16, **kw):
    case_io.save_case(*args, opset=opset, **kw)


# ---------------------------------------------------------------- NMS

def nms_ref(boxes, scores, max_out, iou_t, score_t, center):
    f = np.float32
    nb, nboxes, _ = boxes.shape
    ncls = scores.shape[1]
    sel = []
    for b in range(nb):
        bx = []
        for v in boxes[b]:
            if center:
                hw, hh = v[2] / f(2), v[3] / f(2)
                bx.append((v[0] - hw, v[0] + hw, v[1] - hh, v[1] + hh))
            else:
                bx.append((min(v[1], v[3]), max(v[1], v[3]), min(v[0], v[2]), max(v[0], v[2])))
        for k in range(ncls):
            sc = scores[b, k]
            cand = [i for i in range(nboxes) if score_t is None or sc[i] > score_t]
            cand.sort(key=lambda i: (bool(np.isnan(sc[i])), 0.0 if np.isnan(sc[i]) else -float(sc[i]), i))
            kept = []
            for i in cand:
                if len(kept) >= max_out:
                    break
                a = bx[i]
                ok = True
                for q in kept:
                    c = bx[q]
                    ix0, ix1 = max(a[0], c[0]), min(a[1], c[1])
                    iy0, iy1 = max(a[2], c[2]), min(a[3], c[3])
                    if ix1 <= ix0 or iy1 <= iy0:
                        continue
                    inter = f((ix1 - ix0) * (iy1 - iy0))
                    aa, ac = f((a[1] - a[0]) * (a[3] - a[2])), f((c[1] - c[0]) * (c[3] - c[2]))
                    uni = f(aa + ac - inter)
                    if inter <= 0 or aa <= 0 or ac <= 0 or uni <= 0:
                        continue
                    if f(inter / uni) > f(iou_t):
                        ok = False
                        break
                if ok:
                    kept.append(i)
                    sel.append((b, k, i))
    return np.array(sel, dtype=np.int64).reshape(-1, 3)


def nms_cases(out_dir):
    for name, nb, nboxes, ncls, max_out, iou, st, center, nan in (
            ("ref_nms_ties", 2, 400, 5, 15, 0.3, None, 0, 0),
            ("ref_nms_ties_all", 1, 300, 3, 1000, 0.5, None, 0, 0),
            ("ref_nms_ties_threshold_center", 1, 350, 4, 12, 0.4, 0.25, 1, 0),
            ("ref_nms_nan_scores", 1, 200, 2, 500, 0.5, None, 0, 1),
            ("ref_nms_one_kept", 1, 100, 3, 1, 0.5, None, 0, 0)):
        # quarter-grid boxes and few score levels: many exact ties in both
        c0 = rng.integers(0, 40, (nb, nboxes, 2)) / 4
        wh = rng.integers(1, 16, (nb, nboxes, 2)) / 4
        if center:
            boxes = np.concatenate([c0, wh], axis=2).astype(np.float32)
        else:
            boxes = np.concatenate([c0, c0 + wh], axis=2).astype(np.float32)
            flip = rng.random((nb, nboxes)) < 0.3  # opposite corners in the other order
            boxes[flip] = boxes[flip][:, [2, 3, 0, 1]]
        scores = (rng.integers(0, 8, (nb, ncls, nboxes)) / 8).astype(np.float32)
        if nan:
            scores.reshape(-1)[rng.choice(scores.size, 9, replace=False)] = np.nan
        sel = nms_ref(boxes, scores, max_out, iou, None if st is None else np.float32(st), center)
        ins = ["B", "S", "M", "I"] + (["T"] if st is not None else [])
        inits = [("M", np.array([max_out], np.int64)), ("I", np.array([iou], np.float32))]
        if st is not None:
            inits.append(("T", np.array([st], np.float32)))
        save_case(out_dir, name, helper.make_node("NonMaxSuppression", ins, ["Y"], center_point_box=center),
                  [("B", boxes), ("S", scores)], [("Y", sel)], inits, opset=11)


# ------------------------------------------------------ Expand, fills

def expand_cases(out_dir):
    vals = {"int64": rng.integers(-2**40, 2**40, 256).astype(np.int64),
            "bool": rng.random(64) < 0.5,
            "float16": rng.standard_normal(64).astype(np.float16),
            "float": rng.standard_normal(64).astype(np.float32),
            "double": rng.standard_normal(64),
            "uint8": rng.integers(0, 256, 64).astype(np.uint8),
            "string": np.array(["s%d" % i for i in range(64)], dtype=object)}
    for kind, xshape, shape in (("int64", (37, 1), (37, 130)),        # inner axis (index expand)
                                ("int64", (1, 129), (23, 129)),       # outer axis
                                ("int64", (5, 1, 7), (5, 6, 7)),      # middle axis
                                ("int64", (3, 1, 1), (2, 3, 4, 33)),  # inner two and a new outer
                                ("bool", (41, 1), (41, 67)),
                                ("bool", (1, 3, 1), (4, 3, 5)),
                                ("float16", (19, 1), (19, 45)),
                                ("float16", (1, 8), (9, 8)),
                                ("float", (2, 1, 3, 1), (2, 4, 3, 17)),
                                ("double", (11, 1), (11, 2)),
                                ("uint8", (7, 1), (7, 300)),
                                ("string", (3, 1), (3, 5)),
                                ("float", (1,), (6, 1))):        # a scalar-like input, last dim 1
        n = int(np.prod(xshape))
        x = vals[kind][:n].reshape(xshape)
        y = np.broadcast_to(x, np.broadcast_shapes(xshape, shape)).copy()
        name = "ref_expand_%s_%s" % (kind, "x".join(map(str, xshape)))
        save_case(out_dir, name, helper.make_node("Expand", ["X", "S"], ["Y"]), [("X", x)], [("Y", y)],
                  [("S", np.array(shape, np.int64))], opset=13)
    for kind, v in (("int64", np.array([-7], np.int64)), ("bool", np.array([True])),
                    ("float16", np.array([1.5], np.float16)), ("double", np.array([-2.25])),
                    ("uint8", np.array([201], np.uint8)), ("int32", np.array([-3], np.int32))):
        shape = np.array([3, 5, 77], np.int64)
        node = helper.make_node("ConstantOfShape", ["S"], ["Y"], value=numpy_helper.from_array(v, "value"))
        save_case(out_dir, "ref_constantofshape_%s" % kind, node, [("S", shape)],
                  [("Y", np.full(tuple(shape), v[0], dtype=v.dtype))], opset=9)


# ------------------------------------------- masks: IsNaN, compare, Where

def special(shape, dtype):
    x = rng.standard_normal(shape).astype(dtype)
    flat = x.reshape(-1)
    k = max(3, flat.size // 10)
    pos = rng.choice(flat.size, 3 * k, replace=False)
    flat[pos[:k]] = np.inf
    flat[pos[k:2 * k]] = -np.inf
    flat[pos[2 * k:]] = np.nan
    flat[pos[2 * k]] = -np.nan if dtype != np.float16 else np.float16(-np.nan)
    return x


def mask_cases(out_dir):
    for dt in (np.float16, np.float32, np.float64):
        x = special((3, 7, 29), dt)
        tn = np.dtype(dt).name
        save_case(out_dir, "ref_isnan_" + tn, helper.make_node("IsNaN", ["X"], ["Y"]), [("X", x)],
                  [("Y", np.isnan(x))], opset=13)
        for pos, neg in ((1, 1), (1, 0), (0, 1), (0, 0)):
            y = (np.isposinf(x) & bool(pos)) | (np.isneginf(x) & bool(neg))
            save_case(out_dir, "ref_isinf_%s_%d%d" % (tn, pos, neg),
                      helper.make_node("IsInf", ["X"], ["Y"], detect_positive=pos, detect_negative=neg),
                      [("X", x)], [("Y", y)], opset=10 if dt != np.float16 else 20)
    m = rng.random((5, 6, 31)) < 0.5
    save_case(out_dir, "ref_not_bool", helper.make_node("Not", ["X"], ["Y"]), [("X", m)], [("Y", ~m)], opset=1)

    def operand(dt, shape):
        if dt == np.bool_:
            return rng.random(shape) < 0.5
        if np.issubdtype(dt, np.integer):
            return rng.integers(-3 if dt != np.uint8 else 0, 4, shape).astype(dt)
        v = np.round(rng.standard_normal(shape) * 2).astype(dt)  # ties for Equal
        flat = v.reshape(-1)
        flat[rng.choice(flat.size, max(1, flat.size // 8), replace=False)] = np.nan
        return v

    cmps = {"Equal": np.equal, "Less": np.less, "Greater": np.greater, "LessOrEqual": np.less_equal,
            "GreaterOrEqual": np.greater_equal}
    logic = {"And": np.logical_and, "Or": np.logical_or, "Xor": np.logical_xor}
    shapes = (((4, 9, 33), (4, 9, 33)), ((4, 9, 33), ()), ((1,), (4, 9, 33)), ((9, 33), (4, 1, 33)),
              ((4, 9, 1), (9, 33)))
    k = 0
    for dt in (np.float32, np.float64, np.int64, np.int32, np.uint8, np.float16):
        for op, f in cmps.items():
            sa, sb = shapes[k % len(shapes)]
            k += 1
            a, b = operand(dt, sa), operand(dt, sb)
            if op == "Equal" and dt != np.float16:
                b = np.broadcast_to(a.reshape(-1)[:1], sb).copy() if sb != sa else a.copy()
                b.reshape(-1)[::3] = operand(dt, b.shape).reshape(-1)[::3]
            save_case(out_dir, "ref_%s_%s_%d" % (op.lower(), np.dtype(dt).name, k), helper.make_node(op, ["A", "B"], ["Y"]),
                      [("A", a), ("B", b)], [("Y", f(a, b))], opset=16)
    for op, f in logic.items():
        for sa, sb in shapes:
            k += 1
            a, b = operand(np.bool_, sa), operand(np.bool_, sb)
            save_case(out_dir, "ref_%s_bool_%d" % (op.lower(), k), helper.make_node(op, ["A", "B"], ["Y"]),
                      [("A", a), ("B", b)], [("Y", f(a, b))], opset=7)
    wshapes = (((4, 9, 33), (4, 9, 33), (4, 9, 33)), ((9, 33), (), (2, 4, 9, 33)), ((4, 9, 33), (4, 9, 33), ()),
               ((4, 9, 33), (), ()), ((), (4, 9, 33), (4, 9, 33)), ((4, 1, 33), (9, 1), (4, 9, 33)),
               ((1, 9, 1), (4, 9, 33), (33,)))
    for dt in (np.bool_, np.float16, np.float32, np.int64, np.float64, np.int8):
        for sc, sx, sy in wshapes:
            k += 1
            cnd = rng.random(sc) < 0.5
            x = operand(dt, sx) if dt != np.int8 else rng.integers(-100, 100, sx).astype(np.int8)
            y = operand(dt, sy) if dt != np.int8 else rng.integers(-100, 100, sy).astype(np.int8)
            save_case(out_dir, "ref_where_%s_%d" % (np.dtype(dt).name, k), helper.make_node("Where", ["C", "X", "Y"], ["Z"]),
                      [("C", cnd), ("X", x), ("Y", y)], [("Z", np.where(cnd, x, y))], opset=16)
    xs = np.array(["a", "bb", "", "ccc"], dtype=object)
    cnd = np.array([[True, False, True, False], [False, False, True, True]])
    ys = np.array(["z"], dtype=object)
    save_case(out_dir, "ref_where_string", helper.make_node("Where", ["C", "X", "Y"], ["Z"]),
              [("C", cnd), ("X", xs), ("Y", ys)], [("Z", np.where(cnd, xs, ys))], opset=16)


# ------------------------------------------------------------ GridSample

def linear_taps(x, size, border, align):
    """The reference provider's linear taps along one axis (double)."""
    lo, hi = (0.0, size - 1.0) if align else (-0.5, size - 0.5)
    nan = np.isnan(x)
    x = np.where(nan, 0.0, x)
    if border:
        x = np.where((x < lo) | (x > hi), np.where(x < 0, 0.0, size - 1.0), x)
    far = ~((x > -4.0) & (x < size + 4.0)) | nan
    x = np.where(far, 0.0, x)
    x0 = np.floor(x)
    t = x - x0
    idx, w = [], []
    for k, wk in ((0, 1.0 - t), (1, t)):
        i = x0 + k
        if border:
            i = np.clip(i, 0, size - 1)
            ok = ~far
        else:
            ok = (i >= 0) & (i <= size - 1) & ~far
        idx.append(np.where(ok, i, 0).astype(np.int64))
        w.append(np.where(far, 0.0, wk))
        idx[-1] = np.where(ok, idx[-1], -1)
    return idx, w


def grid_sample_ref(x, grid, border, align):
    """2-D bilinear GridSample as the reference provider computes it: the
    coordinate and weights in double, the taps summed in double in the
    order (h0,w0), (h0,w1), (h1,w0), (h1,w1), zero reads and zero weights
    skipped, one rounding to float."""
    n_, c_, h, w = x.shape
    g = grid.astype(np.float64)
    def denorm(v, size):
        return (v + 1.0) / 2.0 * (size - 1) if align else ((v + 1.0) * size - 1.0) / 2.0
    ih, wh = linear_taps(denorm(g[..., 1], h), h, border, align)
    iw, ww = linear_taps(denorm(g[..., 0], w), w, border, align)
    xd = x.astype(np.float64)
    acc = np.zeros((n_, c_) + grid.shape[1:3])
    for a in range(2):
        for b in range(2):
            wt = ww[b] * wh[a]
            ok = (ih[a] >= 0) & (iw[b] >= 0) & (wt != 0.0)
            off = np.where(ok, ih[a] * w + iw[b], 0)
            for n in range(n_):
                v = xd[n].reshape(c_, -1)[:, off[n].reshape(-1)].reshape((c_,) + grid.shape[1:3])
                acc[n] = np.where(ok[n], acc[n] + wt[n] * v, acc[n])
    return acc.astype(np.float32)


def grid_cases(out_dir):
    x = rng.standard_normal((2, 3, 13, 17)).astype(np.float32)
    x[0, 1, 5, 6] = np.inf  # read with weight 0 it must not give NaN
    grid = rng.uniform(-1.3, 1.3, (2, 11, 19, 2)).astype(np.float32)
    flat = grid.reshape(-1, 2)
    flat[:40] = np.round(flat[:40] * 4) / 4  # on pixel centres and edges: zero weights
    flat[40:44, 0] = np.nan
    flat[44:48, 1] = np.float32(1e9)
    flat[48:52] = -1.0
    flat[52:56] = 1.0
    for pad in ("zeros", "border"):
        for align in (0, 1):
            y = grid_sample_ref(x, grid, pad == "border", align)
            node = helper.make_node("GridSample", ["X", "G"], ["Y"], mode="bilinear", padding_mode=pad,
                                    align_corners=align)
            save_case(out_dir, "ref_gridsample_bilinear_%s_align%d" % (pad, align), node,
                      [("X", x), ("G", grid)], [("Y", y)], opset=16)


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    nms_cases(out_dir)
    expand_cases(out_dir)
    mask_cases(out_dir)
    grid_cases(out_dir)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
