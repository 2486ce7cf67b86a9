"""A ResNet-18-style CNN dynamically quantized the way ONNX Runtime's quantize_dynamic
quantizes Conv and MatMul.

Imitates: a torchvision-resnet18-like net exported by torch.onnx (opset 13, BatchNorm folded
into the Conv weights, dynamic_axes on batch/height/width, classifier written as
x.mean((2, 3)) -> flatten -> x @ W + b so it is a MatMul), then
`onnxruntime.quantization.quantize_dynamic(model, out, op_types_to_quantize=["Conv",
"MatMul"])` with the weight types of its ConvInteger path (QUInt8: uint8 weights with a
per-tensor zero point) and its MatMulInteger path (QInt8, symmetric, zero point 0):
- every Conv becomes DynamicQuantizeLinear(x) (one per distinct input, so a block's conv1
  and its 1x1 downsample share one) -> ConvInteger(x_q, W_q, x_zero_point, W_zero_point)
  -> Cast(float) -> Mul(cast, Mul(x_scale, W_scale)) -> Add(Reshape(bias, [1, -1, 1, 1]))
  (the quantizer's unnamed bias Reshape, shape initializer "<out>_bias_reshape_shape");
- the classifier MatMul becomes DynamicQuantizeLinear -> MatMulInteger(int8 weights) ->
  Cast -> Mul(scales), bias Add left in float;
- Relu, the residual Add, MaxPool 3x3/2 and GlobalAveragePool stay float; the flatten is
  the dynamic-batch Shape -> Gather -> Unsqueeze -> Concat -> Reshape.
Input [batch, 3, height, width], all symbolic. BN folding is calibrated (TracedGraph), so
every conv output is ~N(beta, gamma^2) per channel before quantization.
full: 1x3x224x224, widths 64..512 (BasicBlocks 2/2/2/2, ~1.8 GMAC), 1000 classes.
small: 2x3x32x32, widths 8..64, 10 classes.
"""
import numpy as np
from onnx import TensorProto, helper, numpy_helper

import zoolib as Z

META = {
    "about": "ResNet-ish CNN quantize_dynamic: DynamicQuantizeLinear/ConvInteger(uint8 W)/MatMulInteger, symbolic N/H/W",
    "dims_small": {"batch": 2, "height": 32, "width": 32},
    "dims_full": {"batch": 1, "height": 224, "width": 224},
    # Every conv input is rounded to 8 bits: a one-ulp float difference ahead of a
    # DynamicQuantizeLinear (another summation order in GlobalAveragePool, the float
    # epilogue or the scale's min/max) can move a value across a rounding boundary and the
    # step propagates to the logits (see distilbert_dynquant.py). On the seeded inputs
    # Tessera (reference and onednn) matches ONNX Runtime bit for bit at both sizes; the
    # margin is for such flips on other inputs and machines.
    "rtol": 1e-3, "atol": 0.05,
}

CFG = {"small": dict(w=[8, 16, 32, 64], classes=10, calib=dict(batch=8, height=32, width=32)),
       "full": dict(w=[64, 128, 256, 512], classes=1000, calib=dict(batch=1, height=224, width=224))}


def basic_block(g, x, cin, cout, stride, name):
    y = Z.conv_bn_act(g, x, cin, cout, 3, stride, act_kind="relu", name=name + "/conv1", act_name=name + "/relu")
    y = Z.conv_bn_act(g, y, cout, cout, 3, 1, name=name + "/conv2", gain=0.7)
    if stride != 1 or cin != cout:
        x = Z.conv_bn_act(g, x, cin, cout, 1, stride, pads=0, name=name + "/downsample/downsample.0")
    y = g.node("Add", [y, x], name=name + "/Add")
    return g.node("Relu", [y], name=name + "/relu_1/Relu")


def float_model(size):
    c = CFG[size]
    w = c["w"]
    g = Z.TracedGraph("main_graph", 13, seed=37, dims=c["calib"])
    x = g.input("input", ["batch", 3, "height", "width"])
    y = Z.conv_bn_act(g, x, 3, w[0], 7 if size == "full" else 3, 2, act_kind="relu", name="/conv1",
                      act_name="/relu")
    y = g.node("MaxPool", [y], name="/maxpool/MaxPool", kernel_shape=[3, 3], strides=[2, 2],
               pads=[1, 1, 1, 1], ceil_mode=0)
    cin = w[0]
    for i, co in enumerate(w):
        for j in range(2):
            y = basic_block(g, y, cin, co, 2 if (j == 0 and i > 0) else 1, "/layer%d/layer%d.%d" % (i + 1, i + 1, j))
            cin = co
    y = g.node("GlobalAveragePool", [y], name="/avgpool/GlobalAveragePool")
    y = Z.shape_reshape(g, y, [-1], name="")
    wf = (g.rng.standard_normal((cin, c["classes"])) / np.sqrt(cin)).astype(np.float32)
    y = g.node("MatMul", [y, g.const(wf, "fc.weight")], name="/fc/MatMul")
    y = g.node("Add", [y, g.const((0.05 * g.rng.standard_normal(c["classes"])).astype(np.float32), "fc.bias")],
               name="/fc/Add")
    Z.set_output(g, y, "logits", ["batch", c["classes"]])
    return g.model(producer_version="1.13.1")


def quantize_uint8(w):
    """QUInt8 asymmetric per tensor, as quantize_data does: range widened to include 0,
    scale = (rmax - rmin) / 255, zero point round(-rmin / scale)."""
    rmin, rmax = min(float(w.min()), 0.0), max(float(w.max()), 0.0)
    scale = np.float32((rmax - rmin) / 255 or 1.0)
    zp = int(np.clip(np.rint(-rmin / scale), 0, 255))
    return np.clip(np.rint(w / scale) + zp, 0, 255).astype(np.uint8), scale, np.uint8(zp)


def quantize_int8(w):
    """QInt8 symmetric: scale = 2 max|w| / 255, zero point 0."""
    rmax = float(np.abs(w).max()) or 1.0
    scale = np.float32(2 * rmax / 255)
    return np.clip(np.rint(w / scale), -127, 127).astype(np.int8), scale, np.int8(0)


def build(size="small"):
    m = float_model(size)
    g = m.graph
    inits = {t.name: t for t in g.initializer}
    nodes, qin, new_inits = [], {}, []
    for n in g.node:
        is_conv = n.op_type == "Conv"
        b = inits.get(n.input[1]) if n.op_type in ("Conv", "MatMul") else None
        if b is None:
            nodes.append(n)
            continue
        a = n.input[0]
        if a not in qin:
            qin[a] = (a + "_quantized", a + "_scale", a + "_zero_point")
            nodes.append(helper.make_node("DynamicQuantizeLinear", [a], list(qin[a]), name=a + "_QuantizeLinear"))
        aq, ascale, azp = qin[a]
        wq, ws, wz = (quantize_uint8 if is_conv else quantize_int8)(numpy_helper.to_array(b))
        new_inits += [numpy_helper.from_array(wq, b.name + "_quantized"),
                      numpy_helper.from_array(np.array(ws, np.float32), b.name + "_scale"),
                      numpy_helper.from_array(np.array(wz), b.name + "_zero_point")]
        del inits[b.name]
        out = n.output[0]
        qname = n.name + "_quant"
        if is_conv:
            attrs = {at.name: helper.get_attribute_value(at) for at in n.attribute}
            qout = out + "_output_quantized"
            scaled = out + "quant_scaled_output" if len(n.input) == 3 else out
            nodes += [helper.make_node("ConvInteger", [aq, b.name + "_quantized", azp, b.name + "_zero_point"],
                                       [qout], name=qname, **attrs),
                      helper.make_node("Cast", [qout], [qout + "_cast_output"], name=qout + "_cast",
                                       to=TensorProto.FLOAT),
                      helper.make_node("Mul", [ascale, b.name + "_scale"], [qname + "_scales_mul:0"],
                                       name=qname + "_scales_mul"),
                      helper.make_node("Mul", [qout + "_cast_output", qname + "_scales_mul:0"], [scaled],
                                       name=qname + "_output_scale_mul")]
            if len(n.input) == 3:
                shape_name = out + "_bias_reshape_shape"
                new_inits.append(numpy_helper.from_array(np.array([1, -1, 1, 1], np.int64), shape_name))
                nodes += [helper.make_node("Reshape", [n.input[2], shape_name], [out + "_bias_reshape_output"]),
                          helper.make_node("Add", [scaled, out + "_bias_reshape_output"], [out],
                                           name=out + "_bias_add")]
        else:
            nodes += [helper.make_node("MatMulInteger", [aq, b.name + "_quantized", azp, b.name + "_zero_point"],
                                       [out + "_output_quantized"], name=qname),
                      helper.make_node("Mul", [ascale, b.name + "_scale"], [out + "_scales_mul"],
                                       name=n.name + "_scales_mul"),
                      helper.make_node("Cast", [out + "_output_quantized"], [out + "_output_quantized_cast"],
                                       to=TensorProto.FLOAT, name=n.name + "_output_quantized_cast"),
                      helper.make_node("Mul", [out + "_output_quantized_cast", out + "_scales_mul"], [out],
                                       name=n.name + "_output_quantized_mul")]
    del g.node[:]
    g.node.extend(nodes)
    kept = [t for t in g.initializer if t.name in inits]
    del g.initializer[:]
    g.initializer.extend(kept + new_inits)
    m.producer_name, m.producer_version = "onnx.quantize", "0.1.0"
    return m
