"""Building blocks for the zoo's model generators (tools/zoo/models/*.py).

Models are written the way real exporters write them, not the way a test
would: weights may be Constant nodes (PyTorch's exporter, opset <= 12), dims
may be symbolic strings, opsets are old, node names are exporter-like
("/backbone/conv1/Conv"). Every generator is seeded, so a re-run writes the
same bytes.
"""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

NP_TO_ONNX = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.float16): TensorProto.FLOAT16,
              np.dtype(np.int64): TensorProto.INT64, np.dtype(np.int32): TensorProto.INT32,
              np.dtype(np.int8): TensorProto.INT8, np.dtype(np.uint8): TensorProto.UINT8,
              np.dtype(np.bool_): TensorProto.BOOL, np.dtype(np.float64): TensorProto.DOUBLE}


class Graph:
    """One graph under construction.

    weights="initializer" keeps weights as graph initializers; "constant"
    emits each as a Constant node, as torch.onnx does with
    do_constant_folding=False or keep_initializers_as_inputs=False on old
    opsets. Names are made unique with a per-prefix counter.
    """

    def __init__(self, name, opset, weights="initializer", seed=0):
        self.name, self.opset, self.weights = name, opset, weights
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.inputs, self.outputs, self.value_info = [], [], [], [], []
        self.counts = {}

    def unique(self, base):
        n = self.counts.get(base, 0)
        self.counts[base] = n + 1
        return base if n == 0 else "%s_%d" % (base, n)

    def input(self, name, shape, elem_type=TensorProto.FLOAT):
        """shape: ints and symbol strings (None for an unnamed dynamic dim)."""
        self.inputs.append(helper.make_tensor_value_info(name, elem_type, shape))
        return name

    def output(self, name, shape=None, elem_type=TensorProto.FLOAT):
        """shape None: taken from ONNX shape inference when the model is made
        (exporters always declare output shapes, symbolic where dynamic)."""
        self.outputs.append(helper.make_tensor_value_info(name, elem_type, shape))
        if shape is None:
            self.outputs[-1].type.tensor_type.ClearField("shape")
        return name

    def const(self, array, name=None, as_constant=None):
        """A constant tensor: an initializer, or a Constant node when the graph
        (or as_constant) says so. Returns the value name."""
        a = np.asarray(array)
        name = self.unique(name or "const")
        constant = (self.weights == "constant") if as_constant is None else as_constant
        if constant:
            self.nodes.append(helper.make_node("Constant", [], [name], name=self.unique("Constant"),
                                               value=numpy_helper.from_array(a, name)))
        else:
            self.inits.append(numpy_helper.from_array(a, name))
        return name

    def ints(self, values, name=None):
        """An int64 1-D constant (shapes, axes, pads), always a Constant node
        when weights are Constant nodes, as exporters write them."""
        return self.const(np.asarray(values, dtype=np.int64), name or "ints")

    def weight(self, shape, name=None, scale=None, dtype=np.float32):
        """Random weights, He-style scaled so activations stay O(1) through
        deep stacks (the zoo checks numerics, so nothing may blow up)."""
        fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else int(shape[0])
        s = scale if scale is not None else np.sqrt(1.0 / max(fan_in, 1))
        return self.const((self.rng.standard_normal(shape) * s).astype(dtype), name or "weight")

    def node(self, op, inputs, n_out=1, name=None, domain=None, **attrs):
        """Adds a node; returns its output name (or a list when n_out > 1)."""
        base = name or op
        nname = self.unique(base)
        outs = ["%s_output_%d" % (nname, i) for i in range(n_out)]
        kw = dict(attrs)
        if domain:
            kw["domain"] = domain
        self.nodes.append(helper.make_node(op, list(inputs), outs, name=nname, **kw))
        return outs[0] if n_out == 1 else outs

    def model(self, producer="pytorch", producer_version="1.13.1", extra_opsets=()):
        g = helper.make_graph(self.nodes, self.name, self.inputs, self.outputs, self.inits,
                              value_info=self.value_info)
        ops = [helper.make_opsetid("", self.opset)] + [helper.make_opsetid(d, v) for d, v in extra_opsets]
        m = helper.make_model(g, opset_imports=ops, producer_name=producer,
                              producer_version=producer_version)
        m.ir_version = 7 if self.opset <= 15 else 8
        inferred = {o.name: o for o in onnx.shape_inference.infer_shapes(m).graph.output}
        for o in m.graph.output:
            if not o.type.tensor_type.HasField("shape") and o.name in inferred:
                o.type.CopyFrom(inferred[o.name].type)
        onnx.checker.check_model(m)
        return m

    # --- common layers (torch.nn names) ----------------------------------
    def conv(self, x, cin, cout, k, stride=1, pad=None, group=1, bias=True, dilation=1, name="Conv"):
        if pad is None:
            pad = (k // 2) * dilation
        w = self.weight((cout, cin // group, k, k), name + ".weight")
        ins = [x, w]
        if bias:
            ins.append(self.const((self.rng.standard_normal(cout) * 0.1).astype(np.float32), name + ".bias"))
        return self.node("Conv", ins, name=name, kernel_shape=[k, k], strides=[stride, stride],
                         pads=[pad] * 4, group=group, dilations=[dilation, dilation])

    def batchnorm(self, x, c, name="BatchNormalization"):
        r = self.rng
        scale = self.const((1.0 + 0.1 * r.standard_normal(c)).astype(np.float32), name + ".weight")
        b = self.const((0.1 * r.standard_normal(c)).astype(np.float32), name + ".bias")
        mean = self.const((0.1 * r.standard_normal(c)).astype(np.float32), name + ".running_mean")
        var = self.const((1.0 + 0.1 * r.random(c)).astype(np.float32), name + ".running_var")
        return self.node("BatchNormalization", [x, scale, b, mean, var], name=name, epsilon=1e-5)

    def linear(self, x, fin, fout, bias=True, name="Linear"):
        """x @ W (+ b) as MatMul + Add, the way torch exports nn.Linear on
        rank > 2 inputs."""
        w = self.weight((fin, fout), name + ".weight")
        y = self.node("MatMul", [x, w], name=name + "/MatMul")
        if bias:
            b = self.const((0.02 * self.rng.standard_normal(fout)).astype(np.float32), name + ".bias")
            y = self.node("Add", [y, b], name=name + "/Add")
        return y


# --- vision blocks ---------------------------------------------------------
# Shared by the vision generators (mobilenetv3, efficientnet_b0, se_classifier,
# db_detector, yolo, unet, qdq_resnet18, fcn_opset9). Functions take the Graph
# first. `name` is a node-name prefix in the exporter's style, e.g.
# "/features/features.3/block/block.1/block.1.0"; each op appends "/OpType"
# as torch.onnx does, and a Conv's weight is named after the prefix's last part
# ("block.1.0.weight"), as torch names the module's parameters.

def make_divisible(v, divisor=8, min_value=None):
    """torchvision's/timm's _make_divisible (channel rounding under a width multiplier)."""
    min_value = min_value or divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v


def _wname(name, default):
    last = name.rstrip("/").rsplit("/", 1)[-1]
    return last or default


def scalar(g, value, name="const", dtype=np.float32):
    """A 0-d constant (the 3.0 and 6.0 of a written-out HardSwish, a Clip bound)."""
    return g.const(np.array(value, dtype=dtype), name)


class TracedGraph(Graph):
    """A Graph that also runs itself in numpy while it is built, on a seeded uniform [-1, 1)
    input with the given concrete dims (a "batch" larger than the test's is the calibration
    batch: more samples, steadier statistics), so blocks can calibrate like a trained network:
    conv2d folds a BatchNorm whose statistics are the real ones (outputs ~N(beta, gamma^2) per
    channel), bn() stores the real running mean/var, and the QDQ generator reads activation
    ranges. g.val[name] is each value's numpy array. Statistics are rounded to float16
    precision before use, so a re-run writes the same bytes."""

    def __init__(self, name, opset, weights="initializer", seed=0, dims=None, input_seed=12345):
        super().__init__(name, opset, weights, seed)
        self.dims, self.val = dict(dims or {}), {}
        self.in_rng = np.random.default_rng(input_seed)

    def input(self, name, shape, elem_type=TensorProto.FLOAT, value=None):
        concrete = [self.dims.get(d, 1) if isinstance(d, str) or d is None else d for d in shape]
        self.val[name] = value if value is not None else \
            self.in_rng.uniform(-1, 1, concrete).astype(np.float32)
        return super().input(name, shape, elem_type)

    def const(self, array, name=None, as_constant=None):
        out = super().const(array, name, as_constant)
        self.val[out] = np.asarray(array)
        return out

    def node(self, op, inputs, n_out=1, name=None, domain=None, **attrs):
        out = super().node(op, inputs, n_out, name, domain, **attrs)
        outs = out if isinstance(out, list) else [out]
        res = _np_op(op, [self.val[i] if i else None for i in inputs], attrs, self.opset, n_out)
        res = res if isinstance(res, (list, tuple)) else [res]
        for o, r in zip(outs, res):
            self.val[o] = r
        return out


def _q16(a):
    """Rounds statistics to float16 precision (robust to last-bit BLAS differences)."""
    return np.asarray(a, np.float64).astype(np.float16).astype(np.float64)


def _pad_hw(x, pads, value=0.0):
    t, l, b, r = pads
    return np.pad(x, ((0, 0), (0, 0), (t, b), (l, r)), constant_values=value)


def _windows(x, k, s, d, pads, value=0.0):
    """[N, C, k*k, Ho, Wo] sliding windows of an NCHW array."""
    xp = _pad_hw(x, pads, value)
    ho = (xp.shape[2] - d * (k[0] - 1) - 1) // s[0] + 1
    wo = (xp.shape[3] - d * (k[1] - 1) - 1) // s[1] + 1
    return np.stack([xp[:, :, i * d:i * d + s[0] * (ho - 1) + 1:s[0], j * d:j * d + s[1] * (wo - 1) + 1:s[1]]
                     for i in range(k[0]) for j in range(k[1])], axis=2)


def _np_conv(x, w, b, strides, pads, group, dilation):
    n, c = x.shape[:2]
    co, cg, kh, kw = w.shape
    cols = _windows(x.astype(np.float32), (kh, kw), strides, dilation, pads)
    ho, wo = cols.shape[-2:]
    cols = cols.reshape(n, group, cg * kh * kw, ho * wo)
    y = np.matmul(w.reshape(group, co // group, cg * kh * kw).astype(np.float32)[None], cols)
    y = y.reshape(n, co, ho, wo)
    return y if b is None else y + b.reshape(1, -1, 1, 1)


def _resize_axis(x, axis, scale, mode):
    n = x.shape[axis]
    m = int(np.floor(n * scale))
    src = np.arange(m) / scale  # asymmetric
    if mode == "nearest":
        return np.take(x, np.minimum(np.floor(src).astype(np.int64), n - 1), axis=axis)
    i0 = np.minimum(np.floor(src).astype(np.int64), n - 1)
    i1 = np.minimum(i0 + 1, n - 1)
    f = (src - i0).astype(np.float32)
    sh = [1] * x.ndim
    sh[axis] = m
    return np.take(x, i0, axis=axis) * (1 - f.reshape(sh)) + np.take(x, i1, axis=axis) * f.reshape(sh)


def _np_op(op, v, a, opset, n_out=1):
    """numpy semantics of the ops the vision generators emit (enough for calibration)."""
    x = v[0] if v else None
    if op == "Conv":
        return _np_conv(x, v[1], v[2] if len(v) > 2 else None, a.get("strides", [1, 1]),
                        a.get("pads", [0] * 4), a.get("group", 1), a.get("dilations", [1, 1])[0])
    if op == "ConvTranspose":
        w = v[1]
        s = a["strides"]
        assert list(a["kernel_shape"]) == list(s) and not any(a.get("pads", [0] * 4)), "k == stride only"
        y = np.einsum("ncij,coab->noiajb", x, w)
        n, o, h, _, wd, _ = y.shape
        y = y.reshape(n, o, h * s[0], wd * s[1])
        return y if len(v) < 3 else y + v[2].reshape(1, -1, 1, 1)
    if op == "BatchNormalization":
        sc, b, m, var = (t.reshape(1, -1, 1, 1) for t in v[1:5])
        return ((x - m) / np.sqrt(var + a.get("epsilon", 1e-5)) * sc + b).astype(np.float32)
    if op == "Relu":
        return np.maximum(x, 0)
    if op == "Clip":
        lo = a.get("min", v[1] if len(v) > 1 and v[1] is not None else -np.inf)
        hi = a.get("max", v[2] if len(v) > 2 and v[2] is not None else np.inf)
        return np.clip(x, lo, hi)
    if op == "Sigmoid":
        return (1 / (1 + np.exp(-x))).astype(np.float32)
    if op == "HardSigmoid":
        return np.clip(a.get("alpha", 0.2) * x + a.get("beta", 0.5), 0, 1).astype(np.float32)
    if op == "HardSwish":
        return x * np.clip(x / 6 + 0.5, 0, 1)
    if op in ("Add", "Sub", "Mul", "Div"):
        f = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide}[op]
        r = f(x, v[1])
        return r.astype(np.result_type(x, v[1])) if x.dtype.kind != "f" else r.astype(x.dtype)
    if op == "GlobalAveragePool":
        return x.mean(axis=(2, 3), keepdims=True)
    if op == "ReduceMean":
        return x.mean(axis=tuple(a["axes"]), keepdims=bool(a.get("keepdims", 1)))
    if op == "Flatten":
        ax = a.get("axis", 1)
        return x.reshape(int(np.prod(x.shape[:ax])), -1)
    if op == "Gemm":
        A = x.T if a.get("transA") else x
        B = v[1].T if a.get("transB") else v[1]
        y = a.get("alpha", 1.0) * (A @ B)
        return (y + a.get("beta", 1.0) * v[2]).astype(np.float32) if len(v) > 2 else y
    if op == "MatMul":
        return np.matmul(x, v[1])
    if op == "MaxPool":
        k, s = a["kernel_shape"], a.get("strides", [1, 1])
        return _windows(x, k, s, 1, a.get("pads", [0] * 4), -np.inf).max(axis=2)
    if op in ("Resize", "Upsample"):
        scales = v[2] if op == "Resize" else v[1]
        mode = a.get("mode", "nearest")
        for ax, sc in enumerate(scales):
            if sc != 1:
                x = _resize_axis(x, ax, float(sc), mode)
        return x
    if op == "Concat":
        return np.concatenate(v, axis=a["axis"])
    if op == "Split":
        sizes = a.get("split") or (list(v[1]) if len(v) > 1 else None)
        ax = a.get("axis", 0)
        if sizes is None:
            return np.split(x, n_out, axis=ax)
        return np.split(x, np.cumsum(sizes)[:-1], axis=ax)
    if op == "Reshape":
        shp = [x.shape[i] if d == 0 else d for i, d in enumerate(v[1])]
        return x.reshape(shp)
    if op == "Transpose":
        return np.transpose(x, a.get("perm"))
    if op == "Shape":
        return np.array(x.shape, np.int64)
    if op == "Gather":
        return np.take(x, v[1], axis=a.get("axis", 0))
    if op in ("Unsqueeze", "Squeeze"):
        axes = a.get("axes") if "axes" in a else list(v[1])
        if op == "Squeeze":
            return np.squeeze(x, axis=tuple(axes))
        for ax in sorted(ax % (x.ndim + len(axes)) for ax in axes):
            x = np.expand_dims(x, ax)
        return x
    if op == "Slice":
        starts, ends = v[1], v[2]
        axes = v[3] if len(v) > 3 else range(len(starts))
        steps = v[4] if len(v) > 4 else [1] * len(starts)
        sl = [slice(None)] * x.ndim
        for st, en, ax, sp in zip(starts, ends, axes, steps):
            sl[ax] = slice(int(st), int(en), int(sp))
        return x[tuple(sl)]
    if op == "Softmax":
        ax = a.get("axis", 1 if opset < 13 else -1)
        if opset < 13:  # coerced to 2-D at axis
            shp = x.shape
            x2 = x.reshape(int(np.prod(shp[:ax % x.ndim])), -1)
            e = np.exp(x2 - x2.max(axis=1, keepdims=True))
            return (e / e.sum(axis=1, keepdims=True)).reshape(shp)
        e = np.exp(x - x.max(axis=ax, keepdims=True))
        return e / e.sum(axis=ax, keepdims=True)
    if op == "Pad":
        pads = a.get("pads") if "pads" in a else list(v[1])
        r = len(pads) // 2
        mode = a.get("mode", "constant")
        width = [(int(pads[i]), int(pads[i + r])) for i in range(r)]
        if mode == "constant":
            cv = a.get("value", 0.0) if "pads" in a else (float(v[2]) if len(v) > 2 and v[2] is not None else 0.0)
            return np.pad(x, width, constant_values=cv)
        return np.pad(x, width, mode={"reflect": "reflect", "edge": "edge"}[mode])
    if op == "QuantizeLinear":
        sc, zp = v[1], v[2]
        ax = a.get("axis", 1)
        if np.ndim(sc):
            sh = [1] * x.ndim
            sh[ax] = -1
            sc, zp = sc.reshape(sh), zp.reshape(sh)
        lo, hi = (0, 255) if zp.dtype == np.uint8 else (-128, 127)
        return np.clip(np.rint(x / sc) + zp.astype(np.int32), lo, hi).astype(zp.dtype)
    if op == "DequantizeLinear":
        sc = v[1]
        zp = v[2] if len(v) > 2 else np.zeros_like(sc, dtype=x.dtype)
        ax = a.get("axis", 1)
        if np.ndim(sc):
            sh = [1] * x.ndim
            sh[ax] = -1
            sc, zp = sc.reshape(sh), zp.reshape(sh)
        return ((x.astype(np.int64) - zp.astype(np.int64)) * sc).astype(np.float32)
    if op == "Identity":
        return x
    raise NotImplementedError("TracedGraph: no numpy for %s" % op)


def conv2d(g, x, cin, cout, k, stride=1, pads=None, group=1, bias=True, gain=1.0, dilation=1,
           name="", wname=None, fold_bn=False, out_std=None):
    """Conv node NAME/Conv. pads: an int for all sides or ONNX's 4-list [top, left, bottom, right]
    (tf2onnx's asymmetric SAME); default k//2. Weights are gain/sqrt(fan_in)-scaled.
    fold_bn: the Conv carries a folded BatchNorm (torch.onnx eval export): on a TracedGraph the
    BN's statistics are the real ones, so each output channel is ~N(beta, gamma^2).
    out_std: on a TracedGraph, rescale the weights so the output's std is this (a final Conv
    ahead of a Sigmoid, say, so it neither saturates nor sits at 0.5)."""
    if pads is None:
        pads = (k // 2) * dilation
    if isinstance(pads, int):
        pads = [pads] * 4
    wname = wname or _wname(name, "conv")
    fan_in = (cin // group) * k * k
    w = (g.rng.standard_normal((cout, cin // group, k, k)) * (gain / np.sqrt(fan_in))).astype(np.float32)
    b = (0.05 * g.rng.standard_normal(cout)).astype(np.float32) if bias else None
    traced = isinstance(g, TracedGraph)
    if fold_bn:
        gamma = 1.0 + 0.1 * g.rng.standard_normal(cout)
        beta = 0.1 * g.rng.standard_normal(cout)
        if traced:
            y = _np_conv(g.val[x], w, None, [stride] * 2, pads, group, dilation)
            # floor: a channel that barely varies over the calibration batch must not blow up
            mean, std = _q16(y.mean(axis=(0, 2, 3))), _q16(np.sqrt(y.var(axis=(0, 2, 3)) + 1e-3))
        else:
            mean, std = np.zeros(cout), np.ones(cout)
        w = (w * (gamma / std).reshape(-1, 1, 1, 1)).astype(np.float32)
        b = (beta - mean * gamma / std).astype(np.float32)
    elif out_std is not None and traced:
        y = _np_conv(g.val[x], w, None, [stride] * 2, pads, group, dilation)
        w = (w * (out_std / _q16(y.std() + 1e-6))).astype(np.float32)
    ins = [x, g.const(w, wname + ".weight")]
    if b is not None:
        ins.append(g.const(b, wname + ".bias"))
    return g.node("Conv", ins, name=name + "/Conv", kernel_shape=[k, k], strides=[stride, stride],
                  pads=list(pads), group=group, dilations=[dilation, dilation])


def bn(g, x, c, name="", eps=1e-5, wname=None):
    """An unfolded BatchNormalization (tf2onnx, Paddle2ONNX, torch with training=PRESERVE). On a
    TracedGraph the running mean/var are the input's real statistics."""
    wname = wname or _wname(name, "bn")
    r = g.rng
    arrs = [1.0 + 0.1 * r.standard_normal(c), 0.1 * r.standard_normal(c),
            0.05 * r.standard_normal(c), 1.0 + 0.2 * r.random(c)]
    if isinstance(g, TracedGraph):
        xv = g.val[x]
        # floor as in conv2d: a channel (nearly) constant over the calibration batch must not blow up
        arrs[2], arrs[3] = _q16(xv.mean(axis=(0, 2, 3))), _q16(xv.var(axis=(0, 2, 3)) + 1e-3)
    ins = [x] + [g.const(np.asarray(a, np.float32), "%s.%s" % (wname, s))
                 for a, s in zip(arrs, ("weight", "bias", "running_mean", "running_var"))]
    return g.node("BatchNormalization", ins, name=name + "/BatchNormalization", epsilon=eps)


def clip(g, x, lo, hi, name=""):
    """Clip with min/max inputs (opset >= 11) or attributes (opset < 11)."""
    if g.opset >= 11:
        return g.node("Clip", [x, scalar(g, lo, "clip_min"), scalar(g, hi, "clip_max")], name=name + "/Clip")
    return g.node("Clip", [x], name=name + "/Clip", min=float(lo), max=float(hi))


ACT_GAIN = {None: 1.0, "relu": np.sqrt(2.0), "relu6": np.sqrt(2.0), "silu": 1.9, "hardswish": 1.9,
            "hardswish_clip": 1.9, "sigmoid": 1.0, "hardsigmoid": 1.0, "hardsigmoid_paddle": 1.0}


def act(g, x, kind, name=""):
    """Activations as exporters write them:
    relu; relu6 -> Clip(0, 6); sigmoid; hardsigmoid -> HardSigmoid(1/6, 0.5) (torch);
    hardsigmoid_paddle -> HardSigmoid(0.2, 0.5) (Paddle's slope/offset);
    silu -> x * Sigmoid(x); hardswish -> HardSwish at opset >= 14, else x * HardSigmoid(x)
    (torch.onnx before opset 14); hardswish_clip -> x * Clip(x + 3, 0, 6) / 6 (Paddle2ONNX)."""
    if kind is None:
        return x
    if kind == "relu":
        return g.node("Relu", [x], name=name + "/Relu")
    if kind == "relu6":
        return clip(g, x, 0.0, 6.0, name)
    if kind == "sigmoid":
        return g.node("Sigmoid", [x], name=name + "/Sigmoid")
    if kind == "hardsigmoid":
        return g.node("HardSigmoid", [x], name=name + "/HardSigmoid", alpha=1.0 / 6, beta=0.5)
    if kind == "hardsigmoid_paddle":
        return g.node("HardSigmoid", [x], name=name + "/HardSigmoid", alpha=0.2, beta=0.5)
    if kind == "silu":
        return g.node("Mul", [x, g.node("Sigmoid", [x], name=name + "/Sigmoid")], name=name + "/Mul")
    if kind == "hardswish":
        if g.opset >= 14:
            return g.node("HardSwish", [x], name=name + "/HardSwish")
        hs = g.node("HardSigmoid", [x], name=name + "/HardSigmoid", alpha=1.0 / 6, beta=0.5)
        return g.node("Mul", [x, hs], name=name + "/Mul")
    if kind == "hardswish_clip":
        a = g.node("Add", [x, scalar(g, 3.0)], name=name + "/Add")
        c = clip(g, a, 0.0, 6.0, name)
        m = g.node("Mul", [x, c], name=name + "/Mul")
        return g.node("Div", [m, scalar(g, 6.0)], name=name + "/Div")
    raise ValueError("unknown activation %r" % kind)


def conv_bn_act(g, x, cin, cout, k, stride=1, group=1, act_kind=None, bn_mode="fold", name="",
                pads=None, gain=None, bn_eps=1e-5, conv_name=None, bn_name=None, act_name=None, dilation=1):
    """Conv + BatchNorm + activation. bn_mode "fold": one Conv with bias (torch.onnx in eval
    mode folds BN; calibrated on a TracedGraph); "node": Conv without bias, then a
    BatchNormalization node; "none": Conv with bias, no BN. conv_name/bn_name/act_name default
    to NAME."""
    if gain is None:
        gain = ACT_GAIN[act_kind]
    cn = name if conv_name is None else conv_name
    y = conv2d(g, x, cin, cout, k, stride, pads, group, bias=(bn_mode != "node"), gain=gain, name=cn,
               fold_bn=(bn_mode == "fold"), dilation=dilation)
    if bn_mode == "node":
        y = bn(g, y, cout, name if bn_name is None else bn_name, eps=bn_eps)
    return act(g, y, act_kind, name if act_name is None else act_name)


def se_block(g, x, c, squeeze, name="", pool="gap", inner="relu", gate="hardsigmoid", style="torch"):
    """Squeeze-excitation: pool to [N, C, 1, 1] (GlobalAveragePool, or ReduceMean over H, W
    with keepdims=1 as tf2onnx writes Keras' GlobalAveragePooling2D(keepdims=True)), 1x1 Conv
    -> inner activation -> 1x1 Conv -> gate -> Mul(x, gate). Layer names: torchvision's
    SqueezeExcitation (avgpool/fc1/activation/fc2/scale_activation), Keras' (se_squeeze,
    se_reduce, se_expand, se_excite) or PaddleOCR's SEModule (avg_pool/conv1/conv2)."""
    n = {"torch": ("/avgpool", "/fc1", "/activation", "/fc2", "/scale_activation", ""),
         "keras": ("se_squeeze", "se_reduce", "se_reduce", "se_expand", "se_expand", "se_excite"),
         "paddle": ("/avg_pool", "/conv1", "/conv1", "/conv2", "/conv2", "")}[style]
    if pool == "gap":
        s = g.node("GlobalAveragePool", [x], name=name + n[0] + "/GlobalAveragePool")
    else:
        s = g.node("ReduceMean", [x], name=name + n[0] + "/ReduceMean", axes=[2, 3], keepdims=1)
    s = conv2d(g, s, c, squeeze, 1, pads=0, gain=ACT_GAIN[inner], name=name + n[1])
    s = act(g, s, inner, name + n[2])
    s = conv2d(g, s, squeeze, c, 1, pads=0, gain=1.0, name=name + n[3])
    s = act(g, s, gate, name + n[4])
    return g.node("Mul", [x, s], name=name + n[5] + "/Mul")


def _ir_names(style, name, has_expand):
    """Node-name prefixes (conv, bn, act) for each part of an inverted residual."""
    if style == "torch":  # torchvision InvertedResidual: block.i = Conv2dNormActivation(conv .0, bn .1, act .2)
        parts, out = ["expand", "dw", "se", "project"] if has_expand else ["dw", "se", "project"], {}
        for i, role in enumerate(parts):
            b = "%s/block/block.%d" % (name, i)
            out[role] = (b + "/block.%d.0" % i, b + "/block.%d.1" % i, b + "/block.%d.2" % i) if role != "se" else (b,) * 3
        return out
    if style == "keras":  # Keras EfficientNet layer names, under tf2onnx's StatefulPartitionedCall/...
        return {"expand": (name + "expand_conv", name + "expand_bn", name + "expand_activation"),
                "dw": (name + "dwconv", name + "bn", name + "activation"),
                "se": (name,) * 3, "project": (name + "project_conv", name + "project_bn", name + "project")}
    if style == "paddle":  # PaddleOCR ResidualUnit: ConvBNLayer(conv, bn) and SEModule
        return {r: ("%s/%s/conv" % (name, p), "%s/%s/bn" % (name, p), "%s/%s" % (name, p))
                for r, p in (("expand", "expand_conv"), ("dw", "bottleneck_conv"), ("project", "linear_conv"))} \
            | {"se": (name + "/mid_se",) * 3}
    raise ValueError(style)


def inverted_residual(g, x, cin, exp, cout, k, stride, act_kind, se_squeeze=None, se_kw=None,
                      bn_mode="fold", name="", style="torch", bn_eps=1e-5, dw_pads=None,
                      residual=True, expand=None, dw_pad_node=None):
    """MobileNetV2/V3 inverted residual and EfficientNet's MBConv: [1x1 expand + BN + act]
    (skipped when exp == cin), kxk depthwise + BN + act, [SE with se_squeeze channels],
    1x1 project + BN (linear), + input when stride 1 and cin == cout. se_kw goes to
    se_block (pool, inner, gate). dw_pads: explicit depthwise pads (tf2onnx's SAME).
    expand=True keeps the expand conv even when exp == cin (PaddleOCR's ResidualUnit).
    dw_pad_node: ONNX pads for an explicit Pad node (opset >= 11, pads as an input) ahead of a
    'valid' depthwise conv, as Keras' ZeroPadding2D(correct_pad) converts."""
    expand = (exp != cin) if expand is None else expand
    names = _ir_names(style, name, expand)
    kw = dict(bn_mode=bn_mode, bn_eps=bn_eps)
    y = x
    if expand:
        c, b, a = names["expand"]
        y = conv_bn_act(g, y, cin, exp, 1, act_kind=act_kind, pads=0, conv_name=c, bn_name=b, act_name=a, **kw)
    c, b, a = names["dw"]
    if dw_pad_node is not None:
        y = g.node("Pad", [y, g.ints(dw_pad_node, c + "_pad/pads"), scalar(g, 0.0, c + "_pad/value")],
                   name=c + "_pad/Pad", mode="constant")
        dw_pads = 0
    y = conv_bn_act(g, y, exp, exp, k, stride, group=exp, act_kind=act_kind,
                    pads=dw_pads, conv_name=c, bn_name=b, act_name=a, **kw)
    if se_squeeze:
        y = se_block(g, y, exp, se_squeeze, name=names["se"][0], style=style, **(se_kw or {}))
    c, b, a = names["project"]
    y = conv_bn_act(g, y, exp, cout, 1, pads=0, conv_name=c, bn_name=b, act_name=a, **kw)
    if residual and stride == 1 and cin == cout:
        y = g.node("Add", [x, y], name=(name + "add" if style == "keras" else name + "/Add"))
    return y


def shape_reshape(g, x, tail, name="", batch_from=None):
    """x.view(x.size(0), *tail) as torch.onnx writes it with a dynamic batch:
    Shape -> Gather(0) -> Unsqueeze -> Concat(with the constant tail) -> Reshape."""
    shp = g.node("Shape", [batch_from or x], name=name + "/Shape")
    b = g.node("Gather", [shp, g.const(np.array(0, np.int64), "gather_idx")], name=name + "/Gather", axis=0)
    if g.opset >= 13:
        bu = g.node("Unsqueeze", [b, g.ints([0], "unsqueeze_axes")], name=name + "/Unsqueeze")
    else:
        bu = g.node("Unsqueeze", [b], name=name + "/Unsqueeze", axes=[0])
    cat = g.node("Concat", [bu, g.ints(list(tail), "shape_tail")], name=name + "/Concat", axis=0)
    return g.node("Reshape", [x, cat], name=name + "/Reshape")


def conv_transpose(g, x, cin, cout, k, name, out_std=None, wname=None):
    """nn.ConvTranspose2d(cin, cout, k, stride=k) with bias, node NAME/ConvTranspose. out_std: on a
    TracedGraph, rescale the weights so the output's std is this (one feeding a Sigmoid)."""
    w = (g.rng.standard_normal((cin, cout, k, k)) * np.sqrt(1.0 / cin)).astype(np.float32)
    b = (0.05 * g.rng.standard_normal(cout)).astype(np.float32)
    if out_std is not None and isinstance(g, TracedGraph):
        y = np.einsum("ncij,coab->noiajb", g.val[x], w)
        w = (w * (out_std / _q16(y.std() + 1e-6))).astype(np.float32)
    wname = wname or _wname(name, "up")
    return g.node("ConvTranspose", [x, g.const(w, wname + ".weight"), g.const(b, wname + ".bias")],
                  name=name + "/ConvTranspose", kernel_shape=[k, k], strides=[k, k], pads=[0, 0, 0, 0],
                  dilations=[1, 1], group=1)


def resize_nearest(g, x, factor, name, roi="constant"):
    """nn.Upsample(scale_factor=factor, mode='nearest') at opset 11-13: Resize(X, roi, scales) with
    asymmetric coordinates and floor rounding. roi "constant": an empty float roi tensor
    (Paddle2ONNX, opset 11); "none": the optional roi left out (torch.onnx at opset 13)."""
    r = g.const(np.zeros(0, np.float32), name + "/roi") if roi == "constant" else ""
    scales = g.const(np.array([1, 1, factor, factor], np.float32), name + "/scales")
    return g.node("Resize", [x, r, scales], name=name + "/Resize", mode="nearest",
                  coordinate_transformation_mode="asymmetric", nearest_mode="floor")


def set_output(g, value, name, shape=None, elem_type=TensorProto.FLOAT):
    """Renames the value a node produced to the graph output NAME (exporters name outputs
    "output", "logits", ...; the value must have no other consumers yet)."""
    for nd in g.nodes:
        for i, o in enumerate(nd.output):
            if o == value:
                nd.output[i] = name
    return g.output(name, shape, elem_type)


# --- sequence blocks ---------------------------------------------------------
# Shared by the sequence/transformer generators (crnn_svtr, gpt2, distilbert,
# vit_tiny, speech_rnn, kws_mel, external_data). Functions take the Graph
# first; `name` is a node-name prefix ("/encoder/layer.0/attention"), each op
# appends "/OpType" as torch.onnx does. Small int/float constants of the shape
# plumbing are Constant nodes ("/encoder/Constant_output_0"), as torch.onnx
# (>= 1.13) writes them even when weights are initializers. Opset-aware:
# Unsqueeze/Squeeze/Split take axes/split as inputs from opset 13,
# ReduceMean keeps its axes attribute up to opset 17.

def sconst(g, value, name="", dtype=np.int64):
    """A Constant node (torch.onnx's "/prefix/Constant" -> "/prefix/Constant_output_0")."""
    nname = g.unique(name + "/Constant")
    out = nname + "_output_0"
    g.nodes.append(helper.make_node("Constant", [], [out], name=nname,
                                    value=numpy_helper.from_array(np.asarray(value, dtype=dtype), out)))
    return out


def unsqueeze(g, x, axes, name=""):
    if g.opset >= 13:
        return g.node("Unsqueeze", [x, sconst(g, list(axes), name)], name=name + "/Unsqueeze")
    return g.node("Unsqueeze", [x], name=name + "/Unsqueeze", axes=list(axes))


def squeeze(g, x, axes, name=""):
    if g.opset >= 13:
        return g.node("Squeeze", [x, sconst(g, list(axes), name)], name=name + "/Squeeze")
    return g.node("Squeeze", [x], name=name + "/Squeeze", axes=list(axes))


def split(g, x, sizes, axis, name=""):
    if g.opset >= 13:
        return g.node("Split", [x, sconst(g, list(sizes), name)], n_out=len(sizes), name=name + "/Split", axis=axis)
    return g.node("Split", [x], n_out=len(sizes), name=name + "/Split", axis=axis, split=list(sizes))


def reduce_mean(g, x, axes, keepdims=1, name=""):
    if g.opset >= 18:
        return g.node("ReduceMean", [x, sconst(g, list(axes), name)], name=name + "/ReduceMean", keepdims=keepdims)
    return g.node("ReduceMean", [x], name=name + "/ReduceMean", axes=list(axes), keepdims=keepdims)


def slice_(g, x, starts, ends, axes, steps=None, name=""):
    """Slice (opset >= 10 inputs); starts/ends may be lists (Constant nodes) or value names."""
    ins = [x]
    for v in (starts, ends, axes) + ((steps,) if steps is not None else ()):
        ins.append(v if isinstance(v, str) else sconst(g, list(v), name))
    return g.node("Slice", ins, name=name + "/Slice")


def dim_of(g, x, i, name="", shape=None):
    """x.size(i): Shape -> Gather(Constant scalar i), a 0-d int64."""
    shape = shape or g.node("Shape", [x], name=name + "/Shape")
    return g.node("Gather", [shape, sconst(g, i, name)], name=name + "/Gather", axis=0)


def size_prefix(g, x, end, name=""):
    """x.size()[:end]: Shape -> Slice(0, end), a 1-D int64."""
    shape = g.node("Shape", [x], name=name + "/Shape")
    return slice_(g, shape, [0], [end], [0], name=name)


def shape_concat(g, parts, name=""):
    """Concat(axis 0) of 1-D int64 pieces: python ints become Constant [v], 0-d values
    (from dim_of) are Unsqueezed first, other strings are used as they are."""
    ins = []
    for p in parts:
        if isinstance(p, (int, np.integer)):
            ins.append(sconst(g, [int(p)], name))
        elif isinstance(p, tuple) and p[0] == "scalar":
            ins.append(unsqueeze(g, p[1], [0], name))
        else:
            ins.append(p)
    return g.node("Concat", ins, name=name + "/Concat", axis=0)


def fscalar(g, value, name="", dtype=np.float32):
    """A 0-d float Constant node (the 1.4142135 of GELU, LayerNorm's eps)."""
    return sconst(g, value, name, dtype=dtype)


def layer_norm(g, x, d, name="", eps=1e-5, op=False, wname=None):
    """nn.LayerNorm over the last axis. op=True: the LayerNormalization op (opset >= 17);
    otherwise written out as every exporter did before opset 17:
    ReduceMean -> Sub -> Pow(2) -> ReduceMean -> Add(eps) -> Sqrt -> Div -> Mul(weight) -> Add(bias)."""
    wname = wname or name.strip("/").replace("/", ".")
    gamma = g.const((1.0 + 0.1 * g.rng.standard_normal(d)).astype(np.float32), wname + ".weight")
    beta = g.const((0.05 * g.rng.standard_normal(d)).astype(np.float32), wname + ".bias")
    if op:
        return g.node("LayerNormalization", [x, gamma, beta], name=name + "/LayerNormalization",
                      axis=-1, epsilon=eps)
    mean = reduce_mean(g, x, [-1], 1, name)
    xc = g.node("Sub", [x, mean], name=name + "/Sub")
    sq = g.node("Pow", [xc, fscalar(g, 2.0, name)], name=name + "/Pow")
    var = reduce_mean(g, sq, [-1], 1, name)
    ve = g.node("Add", [var, fscalar(g, eps, name)], name=name + "/Add")
    sd = g.node("Sqrt", [ve], name=name + "/Sqrt")
    y = g.node("Div", [xc, sd], name=name + "/Div")
    y = g.node("Mul", [y, gamma], name=name + "/Mul")
    return g.node("Add", [y, beta], name=name + "/Add")


def gelu_erf(g, x, name=""):
    """Exact GELU as torch.onnx/paddle2onnx write it before the Gelu op (opset 20):
    x * (1 + Erf(x / sqrt 2)) * 0.5 -> Div, Erf, Add, Mul, Mul."""
    t = g.node("Div", [x, fscalar(g, 1.4142135381698608, name)], name=name + "/Div")
    t = g.node("Erf", [t], name=name + "/Erf")
    t = g.node("Add", [t, fscalar(g, 1.0, name)], name=name + "/Add")
    t = g.node("Mul", [x, t], name=name + "/Mul")
    return g.node("Mul", [t, fscalar(g, 0.5, name)], name=name + "/Mul")


def gelu_tanh(g, x, name=""):
    """HF's NewGELUActivation (GPT-2's gelu_new):
    0.5 * x * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * Pow(x, 3))))."""
    h = g.node("Mul", [fscalar(g, 0.5, name), x], name=name + "/Mul")
    p = g.node("Pow", [x, fscalar(g, 3.0, name)], name=name + "/Pow")
    p = g.node("Mul", [fscalar(g, 0.044715, name), p], name=name + "/Mul")
    p = g.node("Add", [x, p], name=name + "/Add")
    p = g.node("Mul", [fscalar(g, 0.7978845608028654, name), p], name=name + "/Mul")
    t = g.node("Tanh", [p], name=name + "/Tanh")
    t = g.node("Add", [fscalar(g, 1.0, name), t], name=name + "/Add")
    return g.node("Mul", [h, t], name=name + "/Mul")


def split_heads(g, x, heads, hd, name="", style="size"):
    """[B, T, H*hd] -> [B, H, T, hd]. style "size": HF BERT/ViT/GPT-2
    x.view(x.size()[:-1] + (heads, hd)) (Shape -> Slice -> Concat -> Reshape);
    "bs": DistilBERT's x.view(bs, -1, heads, hd) (bs from Shape -> Gather -> Unsqueeze)."""
    if style == "size":
        shp = shape_concat(g, [size_prefix(g, x, -1, name), heads, hd], name)
    else:
        shp = shape_concat(g, [("scalar", dim_of(g, x, 0, name)), -1, heads, hd], name)
    y = g.node("Reshape", [x, shp], name=name + "/Reshape")
    return g.node("Transpose", [y], name=name + "/Transpose", perm=[0, 2, 1, 3])


def merge_heads(g, x, d, name="", style="size", bs_from=None):
    """[B, H, T, hd] -> [B, T, H*hd]: Transpose, then Reshape to x.size()[:-2] + (d,)
    ("size") or (bs, -1, d) ("bs", bs = bs_from.size(0))."""
    y = g.node("Transpose", [x], name=name + "/Transpose", perm=[0, 2, 1, 3])
    if style == "size":
        shp = shape_concat(g, [size_prefix(g, y, -2, name), d], name)
    else:
        shp = shape_concat(g, [("scalar", dim_of(g, bs_from or x, 0, name)), -1, d], name)
    return g.node("Reshape", [y, shp], name=name + "/Reshape")


def attention_core(g, q, k, v, hd, name="", scale="div_scores", mask_fn=None, k_transposed=False):
    """softmax(q k^T * s [masked]) v on [B, H, T, hd] heads. scale: "div_q" (DistilBERT:
    q / sqrt(hd)), "mul_q" (PaddleOCR: q * hd**-0.5), "div_scores" (BERT/ViT/GPT-2).
    mask_fn(scores) -> scores applies a mask (Where or additive) before Softmax."""
    s = float(np.sqrt(hd))
    if scale == "div_q":
        q = g.node("Div", [q, fscalar(g, s, name)], name=name + "/Div")
    elif scale == "mul_q":
        q = g.node("Mul", [q, fscalar(g, 1.0 / s, name)], name=name + "/Mul")
    kt = k if k_transposed else g.node("Transpose", [k], name=name + "/Transpose", perm=[0, 1, 3, 2])
    scores = g.node("MatMul", [q, kt], name=name + "/MatMul")
    if scale == "div_scores":
        scores = g.node("Div", [scores, fscalar(g, s, name)], name=name + "/Div")
    if mask_fn is not None:
        scores = mask_fn(scores)
    p = g.node("Softmax", [scores], name=name + "/Softmax", axis=(-1 if g.opset >= 13 else 3))
    return g.node("MatMul", [p, v], name=name + "/MatMul")


def dense(g, x, fin, fout, name="", wname=None, bias=True, gain=1.0, bias_scale=0.02):
    """nn.Linear on a rank >= 2 input as torch.onnx writes it: MatMul with the (pre-transposed,
    [fin, fout]) weight, then Add of the bias. Weight std gain/sqrt(fin)."""
    wname = wname or name.strip("/").replace("/", ".")
    w = g.const((g.rng.standard_normal((fin, fout)) * (gain / np.sqrt(fin))).astype(np.float32), wname + ".weight")
    y = g.node("MatMul", [x, w], name=name + "/MatMul")
    if bias:
        b = g.const((bias_scale * g.rng.standard_normal(fout)).astype(np.float32), wname + ".bias")
        y = g.node("Add", [y, b], name=name + "/Add")
    return y
