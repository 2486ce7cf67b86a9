"""EfficientNet-B0, as tf2onnx (opset 12) converts Keras' tf.keras.applications.EfficientNetB0.

Imitates: tf.keras.applications.EfficientNetB0(include_top=True) saved, then
`python -m tf2onnx.convert --opset 12` (a Keras model: NHWC input, one Transpose to NCHW that
the transpose optimizer leaves at the input).
Covers: NHWC input + Transpose(perm 0,3,1,2), Keras Normalization as Sub + Div, explicit Pad
(opset 11+ pads-as-input, Keras' ZeroPadding2D(correct_pad)) ahead of every stride-2 Conv with
'valid' padding, asymmetric pads, MBConv blocks (1x1 expand, 3x3/5x5 depthwise, 1x1 project),
SiLU written as x * Sigmoid(x), squeeze-excitation as ReduceMean(axes H,W, keepdims=1) -> Conv ->
SiLU -> Conv -> Sigmoid -> Mul, BatchNormalization kept as separate nodes (epsilon 1e-3),
residual Add, head ReduceMean(keepdims=0) -> MatMul + Add -> Softmax, Keras layer names under
"StatefulPartitionedCall/efficientnetb0/". Symbolic batch "batch".
full: batch x 224x224x3, 1000 classes (~0.39 GFLOP). small: 2x64x64x3, channels / 4 (min 8),
repeats capped at 2, 10 classes.
"""
import numpy as np
from zoolib import TracedGraph, bn, conv2d, act, inverted_residual, set_output

# expand ratio, kernel, stride, in, out, repeats, SE ratio 0.25 everywhere
BLOCKS = [(1, 3, 1, 32, 16, 1), (6, 3, 2, 16, 24, 2), (6, 5, 2, 24, 40, 2), (6, 3, 2, 40, 80, 3),
          (6, 5, 1, 80, 112, 3), (6, 5, 2, 112, 192, 4), (6, 3, 1, 192, 320, 1)]
P = "StatefulPartitionedCall/efficientnetb0/"

META = {
    "about": "EfficientNet-B0 (tf2onnx opset 12): NHWC+Transpose, Pad, MBConv, SiLU, SE via ReduceMean, BN nodes",
    "dims_small": {"batch": 2}, "dims_full": {"batch": 1},
    "rtol": 1e-3, "atol": 1e-4,
}


def correct_pad(k):
    """Keras' correct_pad for an even input size: ((k//2 - 1, k//2), (k//2 - 1, k//2)) as ONNX
    NCHW pads [0, 0, top, left, 0, 0, bottom, right]."""
    return [0, 0, k // 2 - 1, k // 2 - 1, 0, 0, k // 2, k // 2]


def zero_pad(g, x, k, name):
    return g.node("Pad", [x, g.ints(correct_pad(k), name + "/pads"), g.const(np.array(0, np.float32), name + "/value")],
                  name=P + name + "/Pad", mode="constant")


def build(size="small"):
    full = size == "full"
    res, classes = (224, 1000) if full else (64, 10)
    ch = (lambda c: c) if full else (lambda c: max(8, c // 4))
    g = TracedGraph("tf2onnx", 12, seed=5, dims={"batch": 2 if full else 8})
    x = g.input("input_1", ["batch", res, res, 3])
    y = g.node("Transpose", [x], name=P + "input_1/Transpose__0", perm=[0, 3, 1, 2])
    # keras.layers.Normalization (ImageNet mean / variance): (x - mean) / sqrt(var)
    mean = np.array([0.485, 0.456, 0.406], np.float32).reshape(1, 3, 1, 1)
    std = np.array([0.229, 0.224, 0.225], np.float32).reshape(1, 3, 1, 1)  # sqrt(variance), folded
    y = g.node("Sub", [y, g.const(mean, P + "normalization/sub/y")], name=P + "normalization/sub")
    y = g.node("Div", [y, g.const(std, P + "normalization/truediv/y")], name=P + "normalization/truediv")
    y = zero_pad(g, y, 3, "stem_conv_pad")
    y = conv2d(g, y, 3, ch(32), 3, 2, pads=0, bias=False, name=P + "stem_conv")
    y = act(g, bn(g, y, ch(32), P + "stem_bn", eps=1e-3), "silu", P + "stem_activation")
    for s, (e, k, st, cin, cout, reps) in enumerate(BLOCKS):
        reps = reps if full else min(reps, 2)
        cin, cout = ch(cin), ch(cout)
        for r in range(reps):
            bname = P + "block%d%s_" % (s + 1, "abcd"[r])
            stride = st if r == 0 else 1
            bin_ = cin if r == 0 else cout
            y = _mbconv(g, y, bin_, bin_ * e, cout, k, stride, max(1, int(bin_ * 0.25)), bname)
    y = conv2d(g, y, ch(320), ch(1280), 1, pads=0, bias=False, name=P + "top_conv")
    y = act(g, bn(g, y, ch(1280), P + "top_bn", eps=1e-3), "silu", P + "top_activation")
    y = g.node("ReduceMean", [y], name=P + "avg_pool/Mean", axes=[2, 3], keepdims=0)
    w = g.weight((ch(1280), classes), P + "predictions/MatMul/ReadVariableOp:0", scale=1.0 / np.sqrt(ch(1280)))
    y = g.node("MatMul", [y, w], name=P + "predictions/MatMul")
    b = g.const((0.02 * g.rng.standard_normal(classes)).astype(np.float32), P + "predictions/BiasAdd/ReadVariableOp:0")
    y = g.node("Add", [y, b], name=P + "predictions/BiasAdd")
    y = g.node("Softmax", [y], name=P + "predictions/Softmax", axis=1)
    set_output(g, y, "predictions", ["batch", classes])
    return g.model(producer="tf2onnx", producer_version="1.9.3 1190aa")


def _mbconv(g, x, cin, exp, cout, k, stride, squeeze, bname):
    """Keras' block(): a stride-2 block pads (ZeroPadding2D) right before its 'valid' depthwise conv."""
    return inverted_residual(g, x, cin, exp, cout, k, stride, "silu", se_squeeze=squeeze,
                             se_kw=dict(pool="reducemean", inner="silu", gate="sigmoid"),
                             bn_mode="node", name=bname, style="keras", bn_eps=1e-3,
                             dw_pad_node=correct_pad(k) if stride == 2 else None)
