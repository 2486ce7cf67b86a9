"""A YOLOv8n-style detector, as Ultralytics' exporter writes it (torch.onnx, opset 13,
dynamic=True batch).

Imitates: ultralytics YOLO("yolov8n.pt").export(format="onnx", opset=13, dynamic=True) at a
fixed image size (anchors and strides are constants).
Covers: Conv with BatchNorm folded + SiLU written as x * Sigmoid(x); C2f blocks (1x1 Conv ->
Split (opset 13: split sizes as an input) -> Bottlenecks (3x3, 3x3, residual Add) -> Concat ->
1x1 Conv); SPPF (1x1 Conv, MaxPool 5x5 stride 1 pad 2 three times, Concat, 1x1 Conv); PAN neck
with Resize nearest x2 (empty roi, scales initializer, asymmetric/floor), Concat and stride-2
Convs; decoupled Detect head (box and class branches, Concat), x.view(b, no, -1) via the
dynamic-batch shape subgraph (Shape -> Gather -> Unsqueeze -> Concat -> Reshape), Concat over
levels, Split(box, cls), DFL (Reshape -> Transpose -> Softmax(axis 1) -> 1x1 Conv with arange
weights -> Reshape), dist2bbox (Split, Sub, Add, Div, Concat, Mul by strides), Sigmoid classes,
output [batch, 4 + classes, anchors].
full: 1x3x640x640, widths 16..256, 80 classes, 8400 anchors (~8.7 GFLOP).
small: 1x3x64x64, widths 8..128, 8 classes, 84 anchors.
"""
import numpy as np
from zoolib import TracedGraph, conv2d, conv_bn_act, resize_nearest, shape_reshape, set_output

META = {
    "about": "YOLOv8n-style detector (Ultralytics torch.onnx opset 13): C2f Split/Concat, SPPF, Resize, DFL head",
    "dims_small": {"batch": 1}, "dims_full": {"batch": 1},
    # boxes are in pixels (up to ~900 at 640): cx = (x1 + x2) / 2 near the border cancels, and
    # float rounding upstream moves such a coordinate by up to ~0.006 px between runtimes
    "rtol": 1e-3, "atol": 1e-2,
}
REG_MAX = 16


def cbs(g, x, c1, c2, k=1, s=1, name=""):
    """ultralytics Conv: conv (BN folded) + SiLU."""
    return conv_bn_act(g, x, c1, c2, k, s, act_kind="silu", name=name + "/conv", act_name=name + "/act")


def c2f(g, x, c1, c2, n, shortcut, name):
    c = c2 // 2
    y = cbs(g, x, c1, 2 * c, 1, name=name + "/cv1")
    ys = g.node("Split", [y, g.ints([c, c], name + "/split")], n_out=2, name=name + "/Split", axis=1)
    for i in range(n):
        p = "%s/m.%d" % (name, i)
        b = cbs(g, cbs(g, ys[-1], c, c, 3, name=p + "/cv1"), c, c, 3, name=p + "/cv2")
        ys.append(g.node("Add", [ys[-1], b], name=p + "/Add") if shortcut else b)
    y = g.node("Concat", ys, name=name + "/Concat", axis=1)
    return cbs(g, y, (2 + n) * c, c2, 1, name=name + "/cv2")


def sppf(g, x, c1, c2, name):
    c = c1 // 2
    y = [cbs(g, x, c1, c, 1, name=name + "/cv1")]
    for _ in range(3):
        y.append(g.node("MaxPool", [y[-1]], name=name + "/m/MaxPool", kernel_shape=[5, 5], strides=[1, 1],
                        pads=[2, 2, 2, 2], dilations=[1, 1], ceil_mode=0))
    return cbs(g, g.node("Concat", y, name=name + "/Concat", axis=1), 4 * c, c2, 1, name=name + "/cv2")


def build(size="small"):
    full = size == "full"
    res, nc = (640, 80) if full else (64, 8)
    w = [16, 32, 64, 128, 256] if full else [8, 16, 32, 64, 128]
    g = TracedGraph("main_graph", 13, seed=13, dims={"batch": 2 if full else 32})
    x = g.input("images", ["batch", 3, res, res])
    y = cbs(g, x, 3, w[0], 3, 2, "/model.0")
    y = cbs(g, y, w[0], w[1], 3, 2, "/model.1")
    y = c2f(g, y, w[1], w[1], 1, True, "/model.2")
    y = cbs(g, y, w[1], w[2], 3, 2, "/model.3")
    p3 = c2f(g, y, w[2], w[2], 2, True, "/model.4")
    y = cbs(g, p3, w[2], w[3], 3, 2, "/model.5")
    p4 = c2f(g, y, w[3], w[3], 2, True, "/model.6")
    y = cbs(g, p4, w[3], w[4], 3, 2, "/model.7")
    y = c2f(g, y, w[4], w[4], 1, True, "/model.8")
    p5 = sppf(g, y, w[4], w[4], "/model.9")
    y = g.node("Concat", [resize_nearest(g, p5, 2, "/model.10", roi="none"), p4], name="/model.11/Concat", axis=1)
    h4 = c2f(g, y, w[4] + w[3], w[3], 1, False, "/model.12")
    y = g.node("Concat", [resize_nearest(g, h4, 2, "/model.13", roi="none"), p3], name="/model.14/Concat", axis=1)
    o3 = c2f(g, y, w[3] + w[2], w[2], 1, False, "/model.15")
    y = g.node("Concat", [cbs(g, o3, w[2], w[2], 3, 2, "/model.16"), h4], name="/model.17/Concat", axis=1)
    o4 = c2f(g, y, w[2] + w[3], w[3], 1, False, "/model.18")
    y = g.node("Concat", [cbs(g, o4, w[3], w[3], 3, 2, "/model.19"), p5], name="/model.20/Concat", axis=1)
    o5 = c2f(g, y, w[3] + w[4], w[4], 1, False, "/model.21")
    out = detect(g, [o3, o4, o5], [w[2], w[3], w[4]], nc, res, "/model.22")
    set_output(g, out, "output0", ["batch", 4 + nc, "anchors"])
    return g.model(producer_version="2.1.0")


def detect(g, feats, chs, nc, res, name):
    no = nc + 4 * REG_MAX
    c2, c3 = max(16, chs[0] // 4, 4 * REG_MAX), max(chs[0], min(nc, 100))
    levels = []
    for i, (x, c) in enumerate(zip(feats, chs)):
        p = "%s/cv2.%d/cv2.%d." % (name, i, i)
        box = cbs(g, cbs(g, x, c, c2, 3, name=p + "0"), c2, c2, 3, name=p + "1")
        box = conv2d(g, box, c2, 4 * REG_MAX, 1, pads=0, name=p + "2", out_std=1.5)
        p = "%s/cv3.%d/cv3.%d." % (name, i, i)
        cls = cbs(g, cbs(g, x, c, c3, 3, name=p + "0"), c3, c3, 3, name=p + "1")
        cls = conv2d(g, cls, c3, nc, 1, pads=0, name=p + "2", out_std=2.0)
        y = g.node("Concat", [box, cls], name="%s/Concat" % name, axis=1)
        levels.append(shape_reshape(g, y, [no, -1], name=name, batch_from=feats[0]))
    y = g.node("Concat", levels, name=name + "/Concat", axis=2)
    box, cls = g.node("Split", [y, g.ints([4 * REG_MAX, nc], name + "/split")], n_out=2, name=name + "/Split", axis=1)
    # DFL: softmax over the 16 bins, expectation by a fixed 1x1 Conv
    d = shape_reshape(g, box, [4, REG_MAX, -1], name=name + "/dfl")
    d = g.node("Transpose", [d], name=name + "/dfl/Transpose", perm=[0, 2, 1, 3])
    d = g.node("Softmax", [d], name=name + "/dfl/Softmax", axis=1)
    wd = g.const(np.arange(REG_MAX, dtype=np.float32).reshape(1, REG_MAX, 1, 1), "model.22.dfl.conv.weight")
    d = g.node("Conv", [d, wd], name=name + "/dfl/conv/Conv", kernel_shape=[1, 1], strides=[1, 1],
               pads=[0, 0, 0, 0], dilations=[1, 1], group=1)
    d = shape_reshape(g, d, [4, -1], name=name + "/dfl")
    # dist2bbox(xywh) against constant anchor points, then * stride
    anchors, strides = [], []
    for s in (8, 16, 32):
        n = res // s
        sy, sx = np.meshgrid(np.arange(n) + 0.5, np.arange(n) + 0.5, indexing="ij")
        anchors.append(np.stack([sx.ravel(), sy.ravel()]))
        strides.append(np.full(n * n, s))
    anchors = g.const(np.concatenate(anchors, 1).astype(np.float32)[None], "/model.22/anchors")
    strides = g.const(np.concatenate(strides).astype(np.float32)[None], "/model.22/strides")
    lt, rb = g.node("Split", [d, g.ints([2, 2], name + "/split")], n_out=2, name=name + "/Split", axis=1)
    x1y1 = g.node("Sub", [anchors, lt], name=name + "/Sub")
    x2y2 = g.node("Add", [anchors, rb], name=name + "/Add")
    cxy = g.node("Div", [g.node("Add", [x1y1, x2y2], name=name + "/Add"),
                         g.const(np.array(2, np.float32), "/model.22/two")], name=name + "/Div")
    wh = g.node("Sub", [x2y2, x1y1], name=name + "/Sub")
    dbox = g.node("Mul", [g.node("Concat", [cxy, wh], name=name + "/Concat", axis=1), strides], name=name + "/Mul")
    return g.node("Concat", [dbox, g.node("Sigmoid", [cls], name=name + "/Sigmoid")], name=name + "/Concat", axis=1)
