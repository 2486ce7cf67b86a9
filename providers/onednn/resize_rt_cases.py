#!/usr/bin/python3
"""Resizes whose sizes are computed at run time, as torch.onnx exports
F.interpolate(x, size=skip.shape[2:]) on inputs with dynamic H/W (FPN and
U-Net decoders): Shape(skip) -> Slice -> Concat(Shape(x)[:2]) ->
Resize(x, roi, scales, sizes), and a Resize whose sizes are a model input.
The shape arithmetic stays on the reference provider (int64); the oneDNN
provider must claim every Resize, read the sizes when it builds a plan
(oneDNN's resampling where it computes the mapping exactly for those sizes,
else the C loop) and build another plan when the sizes' *values* change.
Each case has several data sets of different sizes run in one session.
Expected outputs are numpy in float64, from an implementation of ONNX's
Resize written here (separable per axis): nearest (asymmetric with floor,
as torch writes it, and half_pixel with round_prefer_floor), linear with
pytorch_half_pixel, half_pixel and align_corners. Also scales computed at
run time (float32 value inputs): opset 9's Upsample as torch writes
F.interpolate(size=...) and a Resize whose scales are a model input.
usage: resize_rt_cases.py OUT_DIR (prints the case dirs, one a line)
The caller checks that onednn claims every Resize (RESIZES below).
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

from shape_cases import i64, save_case

rng = np.random.default_rng(20260612)

# Resize node names that oneDNN must claim, per case
RESIZES = {
    "odn_resize_rt_fpn": ["up"],
    "odn_resize_rt_nearest": ["up_nearest"],
    "odn_resize_rt_modes": ["up_half_pixel", "up_align", "up_nearest_hp"],
    "odn_resize_rt_input": ["resize_linear", "resize_nearest"],
    "odn_resize_rt_upsample9": ["upsample9"],
    "odn_resize_rt_scales_input": ["scales_linear", "scales_nearest"],
    "odn_resize_rt_resize10": ["resize10"],
}


# --- ONNX Resize in numpy (float64), one axis at a time ---------------------

def source_coords(ctm, n_in, n_out, scale=None):
    """Input coordinate of each output index (scale = n_out / n_in, as ONNX
    takes it when sizes are given, else the scale given)."""
    o = np.arange(n_out, dtype=np.float64)
    scale = n_out / n_in if scale is None else float(scale)
    if ctm == "half_pixel":
        return (o + 0.5) / scale - 0.5
    if ctm == "pytorch_half_pixel":
        return (o + 0.5) / scale - 0.5 if n_out > 1 else np.zeros(n_out)
    if ctm == "align_corners":
        return o * (n_in - 1) / (n_out - 1) if n_out > 1 else np.zeros(n_out)
    if ctm == "asymmetric":
        return o / scale
    raise ValueError(ctm)


def resize_axis(a, axis, n_out, mode, ctm, nearest_mode, scale=None):
    n_in = a.shape[axis]
    c = source_coords(ctm, n_in, n_out, scale)
    if mode == "nearest":
        if nearest_mode == "floor":
            idx = np.floor(c)
        elif nearest_mode == "round_prefer_floor":
            idx = np.where(c - np.floor(c) == 0.5, np.floor(c), np.floor(c + 0.5))
        else:
            raise ValueError(nearest_mode)
        return np.take(a, np.clip(idx, 0, n_in - 1).astype(np.int64), axis=axis)
    # linear: the two neighbours, the coordinate clamped to the edge
    c = np.clip(c, 0, n_in - 1)
    lo = np.floor(c).astype(np.int64)
    hi = np.minimum(lo + 1, n_in - 1)
    shape = [1] * a.ndim
    shape[axis] = n_out
    w = (c - lo).reshape(shape)
    return np.take(a, lo, axis=axis) * (1 - w) + np.take(a, hi, axis=axis) * w


def resize(x, sizes, mode, ctm, nearest_mode="round_prefer_floor"):
    a = x.astype(np.float64)
    for axis, n_out in enumerate(sizes):
        a = resize_axis(a, axis, int(n_out), mode, ctm, nearest_mode)
    return a


def resize_scales(x, scales, mode, ctm, nearest_mode="round_prefer_floor"):
    """By scales: out = floor(in * scale) in float32, coordinates by scale."""
    a = x.astype(np.float64)
    for axis, sc in enumerate(np.asarray(scales, dtype=np.float32)):
        n_out = int(np.floor(np.float32(x.shape[axis]) * sc))
        a = resize_axis(a, axis, n_out, mode, ctm, nearest_mode, sc)
    return a


def rand(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def skip_sizes_nodes(prefix=""):
    """sizes = Concat(Shape(x)[0:2], Shape(skip)[2:4]), as torch writes it."""
    return [helper.make_node("Shape", ["skip"], [prefix + "ss"]),
            helper.make_node("Slice", [prefix + "ss", "I2", "I4"], [prefix + "hw"]),
            helper.make_node("Shape", ["x"], [prefix + "xs"]),
            helper.make_node("Slice", [prefix + "xs", "I0", "I2"], [prefix + "nc"]),
            helper.make_node("Concat", [prefix + "nc", prefix + "hw"], ["sizes"], axis=0)]


SLICE_INITS = [i64("I0", [0]), i64("I2", [2]), i64("I4", [4])]


def fpn_case(out_dir):
    """x [N,4,h,w] resized bilinearly (pytorch_half_pixel) to skip's H, W,
    added to skip and a 1x1 Conv with bias: the Resize must share the piece
    with the Add and Conv. Sizes up by 2, fractional, down, to an H of 1
    (pytorch_half_pixel maps that to coordinate 0: the C loop), and the
    first again (its plan reused)."""
    w = rand(3, 4, 1, 1) * 0.5
    b = rand(3)
    nodes = skip_sizes_nodes() + [
        helper.make_node("Resize", ["x", "", "", "sizes"], ["up"], name="up", mode="linear",
                         coordinate_transformation_mode="pytorch_half_pixel"),
        helper.make_node("Add", ["up", "skip"], ["sum"]),
        helper.make_node("Conv", ["sum", "W", "B"], ["Y"])]
    datasets = []
    for n, h, wd, H, W in ((1, 3, 5, 6, 10), (2, 5, 5, 9, 7), (1, 6, 4, 3, 3), (1, 2, 3, 1, 5), (1, 3, 5, 6, 10)):
        x, skip = rand(n, 4, h, wd), rand(n, 4, H, W)
        s = resize(x, (n, 4, H, W), "linear", "pytorch_half_pixel") + skip
        y = np.einsum("mc,nchw->nmhw", w[:, :, 0, 0].astype(np.float64), s) + b.reshape(1, 3, 1, 1)
        datasets.append(([x, skip], [y]))
    save_case(out_dir, "odn_resize_rt_fpn", nodes,
              [("x", TensorProto.FLOAT, ["N", 4, "h", "w"]), ("skip", TensorProto.FLOAT, ["N", 4, "H", "W"])],
              [("Y", TensorProto.FLOAT, ["N", 3, "H", "W"])], datasets,
              SLICE_INITS + [("W", w), ("B", b)])


def nearest_case(out_dir):
    """torch's nearest F.interpolate at opset 11: Resize(x, empty roi, empty
    scales, sizes), asymmetric with floor, then Mul by skip. Integer
    factors (oneDNN's resampling), a fractional one and a downsampling (the
    C loop)."""
    nodes = skip_sizes_nodes() + [
        helper.make_node("Resize", ["x", "ROI", "SCALES", "sizes"], ["up"], name="up_nearest", mode="nearest",
                         coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
        helper.make_node("Mul", ["up", "skip"], ["Y"])]
    datasets = []
    for n, h, wd, H, W in ((1, 4, 4, 8, 8), (2, 3, 5, 9, 15), (1, 3, 4, 7, 9), (1, 6, 5, 4, 5)):
        x, skip = rand(n, 3, h, wd), rand(n, 3, H, W)
        y = resize(x, (n, 3, H, W), "nearest", "asymmetric", "floor") * skip
        datasets.append(([x, skip], [y]))
    save_case(out_dir, "odn_resize_rt_nearest", nodes,
              [("x", TensorProto.FLOAT, ["N", 3, "h", "w"]), ("skip", TensorProto.FLOAT, ["N", 3, "H", "W"])],
              [("Y", TensorProto.FLOAT, ["N", 3, "H", "W"])], datasets,
              SLICE_INITS + [("ROI", np.zeros(0, np.float32)), ("SCALES", np.zeros(0, np.float32))], opset=11)


def modes_case(out_dir):
    """Three Resizes of x to skip's H, W (linear half_pixel, linear
    align_corners, nearest half_pixel with round_prefer_floor), each added
    to skip. Data sets: up by 2, fractional up, down by 2 (nearest ties:
    4 -> 2 maps output 0 to 0.5, where oneDNN would round up, so the C loop
    runs), and fractional down."""
    specs = (("up_half_pixel", "linear", "half_pixel"), ("up_align", "linear", "align_corners"),
             ("up_nearest_hp", "nearest", "half_pixel"))
    nodes = skip_sizes_nodes()
    for k, (name, mode, ctm) in enumerate(specs):
        nodes += [helper.make_node("Resize", ["x", "", "", "sizes"], ["r%d" % k], name=name, mode=mode,
                                   coordinate_transformation_mode=ctm),
                  helper.make_node("Add", ["r%d" % k, "skip"], ["Y%d" % k])]
    datasets = []
    for n, h, wd, H, W in ((1, 3, 4, 6, 8), (2, 3, 3, 5, 7), (1, 4, 8, 2, 4), (1, 5, 7, 3, 4)):
        x, skip = rand(n, 2, h, wd), rand(n, 2, H, W)
        ys = [resize(x, (n, 2, H, W), mode, ctm) + skip for _, mode, ctm in specs]
        datasets.append(([x, skip], ys))
    save_case(out_dir, "odn_resize_rt_modes", nodes,
              [("x", TensorProto.FLOAT, ["N", 2, "h", "w"]), ("skip", TensorProto.FLOAT, ["N", 2, "H", "W"])],
              [("Y%d" % k, TensorProto.FLOAT, ["N", 2, "H", "W"]) for k in range(3)], datasets, SLICE_INITS)


def input_sizes_case(out_dir):
    """sizes S an int64 model input (the plan is keyed by its values): X of
    one shape resized by S linearly (half_pixel) and by nearest
    (asymmetric, floor), each then Relu. S changes only in its values,
    including ones that resize C and N (the C loop)."""
    nodes = [helper.make_node("Resize", ["X", "", "", "S"], ["rl"], name="resize_linear", mode="linear"),
             helper.make_node("Relu", ["rl"], ["Y0"]),
             helper.make_node("Resize", ["X", "", "", "S"], ["rn"], name="resize_nearest", mode="nearest",
                              coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
             helper.make_node("Relu", ["rn"], ["Y1"])]
    datasets = []
    for s in ([2, 3, 8, 10], [2, 3, 6, 7], [2, 5, 4, 5], [3, 2, 5, 4], [2, 3, 8, 10]):
        x = rand(2, 3, 4, 5)
        y0 = np.maximum(resize(x, s, "linear", "half_pixel"), 0)
        y1 = np.maximum(resize(x, s, "nearest", "asymmetric", "floor"), 0)
        datasets.append(([x, np.array(s, dtype=np.int64)], [y0, y1]))
    save_case(out_dir, "odn_resize_rt_input", nodes,
              [("X", TensorProto.FLOAT, [2, 3, 4, 5]), ("S", TensorProto.INT64, [4])],
              [("Y0", TensorProto.FLOAT, ["a", "b", "c", "d"]), ("Y1", TensorProto.FLOAT, ["a", "b", "c", "d"])],
              datasets)


def upsample9_case(out_dir):
    """torch's F.interpolate(x, size=skip.shape[2:]) at opset 9: Upsample
    (nearest) with scales Concat([1, 1], Cast(Shape(skip)[2:]) /
    Cast(Shape(x)[2:])), then + skip; integer factors, as torch's exporter
    requires there. The Div and Concat must stay outside the Upsample's
    piece (the plan reads the scales when it is built)."""
    nodes = [helper.make_node("Shape", ["skip"], ["ss"]),
             helper.make_node("Slice", ["ss"], ["shw"], starts=[2], ends=[4], axes=[0]),
             helper.make_node("Cast", ["shw"], ["shwf"], to=TensorProto.FLOAT),
             helper.make_node("Shape", ["x"], ["xs"]),
             helper.make_node("Slice", ["xs"], ["xhw"], starts=[2], ends=[4], axes=[0]),
             helper.make_node("Cast", ["xhw"], ["xhwf"], to=TensorProto.FLOAT),
             helper.make_node("Div", ["shwf", "xhwf"], ["sc2"]),
             helper.make_node("Concat", ["ones", "sc2"], ["scales"], axis=0),
             helper.make_node("Upsample", ["x", "scales"], ["up"], name="upsample9", mode="nearest"),
             helper.make_node("Add", ["up", "skip"], ["y"])]
    datasets = []
    for (h, w), (fh, fw) in (((4, 5), (2, 2)), ((3, 3), (4, 2)), ((6, 2), (1, 3)), ((4, 5), (2, 2))):
        x, skip = rand(1, 3, h, w), rand(1, 3, h * fh, w * fw)
        y = resize_scales(x, [1, 1, fh, fw], "nearest", "asymmetric", "floor") + skip
        datasets.append(([x, skip], [y]))
    save_case(out_dir, "odn_resize_rt_upsample9", nodes,
              [("x", TensorProto.FLOAT, [1, 3, "h", "w"]), ("skip", TensorProto.FLOAT, [1, 3, "H", "W"])],
              [("y", TensorProto.FLOAT, [1, 3, "H", "W"])], datasets,
              [("ones", np.ones(2, dtype=np.float32))], opset=9)


def input_scales_case(out_dir):
    """scales F a float32 model input (the plan is keyed by its values):
    Resize linear (half_pixel) and nearest (asymmetric, floor) by F, then
    Relu; fractional, integer and shrinking scales."""
    nodes = [helper.make_node("Resize", ["X", "", "F"], ["rl"], name="scales_linear", mode="linear"),
             helper.make_node("Relu", ["rl"], ["Y0"]),
             helper.make_node("Resize", ["X", "", "F"], ["rn"], name="scales_nearest", mode="nearest",
                              coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
             helper.make_node("Relu", ["rn"], ["Y1"])]
    datasets = []
    for f in ([1, 1, 1.5, 2.0], [1, 1, 0.5, 0.75], [1, 1, 2.25, 1.0], [1, 1, 1.5, 2.0]):
        x = rand(2, 3, 6, 5)
        y0 = np.maximum(resize_scales(x, f, "linear", "half_pixel"), 0)
        y1 = np.maximum(resize_scales(x, f, "nearest", "asymmetric", "floor"), 0)
        datasets.append(([x, np.array(f, dtype=np.float32)], [y0, y1]))
    save_case(out_dir, "odn_resize_rt_scales_input", nodes,
              [("X", TensorProto.FLOAT, [2, 3, 6, 5]), ("F", TensorProto.FLOAT, [4])],
              [("Y0", TensorProto.FLOAT, ["a", "b", "c", "d"]), ("Y1", TensorProto.FLOAT, ["a", "b", "c", "d"])],
              datasets)


def resize10_case(out_dir):
    """Resize-10 (scales its second input, asymmetric coordinates) with
    scales a float32 model input, linear, then Relu."""
    nodes = [helper.make_node("Resize", ["X", "F"], ["r"], name="resize10", mode="linear"),
             helper.make_node("Relu", ["r"], ["Y"])]
    datasets = []
    for f in ([1, 1, 2.0, 1.5], [1, 1, 0.5, 3.0]):
        x = rand(1, 2, 4, 6)
        datasets.append(([x, np.array(f, dtype=np.float32)], [np.maximum(resize_scales(x, f, "linear", "asymmetric"), 0)]))
    save_case(out_dir, "odn_resize_rt_resize10", nodes,
              [("X", TensorProto.FLOAT, [1, 2, 4, 6]), ("F", TensorProto.FLOAT, [4])],
              [("Y", TensorProto.FLOAT, ["a", "b", "c", "d"])], datasets, opset=10)


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    upsample9_case(out_dir)
    input_scales_case(out_dir)
    resize10_case(out_dir)
    fpn_case(out_dir)
    nearest_case(out_dir)
    modes_case(out_dir)
    input_sizes_case(out_dir)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
