"""A float16 CNN classifier as onnxconverter_common.float16.convert_float_to_float16 writes it
(keep_io_types=False) from a torch.onnx opset-13 export.

Imitates `convert_float_to_float16(onnx.load("resnet_mini.onnx"))`: the whole graph is
float16 -- input and output float16 with no Cast at either end, every float initializer and
Constant float16, value types rewritten -- including:
- Conv (bias) + BatchNormalization (a node, float16 scale/bias/mean/var) + Relu, MaxPool,
  residual basic blocks (Conv-BN-Relu-Conv-BN, Add, Relu) with 1x1 stride-2 projections;
- GlobalAveragePool, Flatten, an MLP head of MatMul+Add, Relu, MatMul+Add, Softmax.
Output probs [batch, classes] float16. Tolerances are float16's (rtol 1e-2, atol 1e-3).
Full: 3x224x224, stages 32/64/128/256, head 256 -> 512 -> 100. Small: 3x16x16, stages
4/8/16, head 16 -> 32 -> 10.
"""
import numpy as np
from onnx import TensorProto, numpy_helper

import zoolib as Z

META = {
    "about": "float16 ResNet-style CNN + MLP head, float16 I/O (onnxconverter_common), opset 13",
    "dims_small": {"batch": 2},
    "dims_full": {"batch": 1},
    "rtol": 1e-2, "atol": 1e-3,
}

CFG = {"small": dict(img=16, stem=4, stages=[4, 8, 16], mlp=32, classes=10),
       "full": dict(img=224, stem=32, stages=[32, 64, 128, 256], mlp=512, classes=100)}


def to_float16(model):
    """onnxconverter_common.float16.convert_float_to_float16(model, keep_io_types=False) for
    a graph with no blocked ops: float tensors become float16 everywhere."""
    g = model.graph

    def conv_tensor(t):
        if t.data_type == TensorProto.FLOAT:
            a = numpy_helper.to_array(t).astype(np.float16)
            t.CopyFrom(numpy_helper.from_array(a, t.name))

    for t in g.initializer:
        conv_tensor(t)
    for n in g.node:
        for a in n.attribute:
            if a.type == a.TENSOR:
                conv_tensor(a.t)
    for vi in list(g.input) + list(g.output) + list(g.value_info):
        if vi.type.tensor_type.elem_type == TensorProto.FLOAT:
            vi.type.tensor_type.elem_type = TensorProto.FLOAT16
    return model


def block(g, x, cin, cout, stride, name):
    y = Z.conv_bn_act(g, x, cin, cout, 3, stride, act_kind="relu", bn_mode="node",
                      conv_name=name + "/conv1", bn_name=name + "/bn1", act_name=name + "/relu")
    y = Z.conv_bn_act(g, y, cout, cout, 3, 1, act_kind=None, bn_mode="node", gain=0.7,
                      conv_name=name + "/conv2", bn_name=name + "/bn2")
    if stride != 1 or cin != cout:
        x = Z.conv_bn_act(g, x, cin, cout, 1, stride, act_kind=None, bn_mode="node", pads=0,
                          conv_name=name + "/downsample/downsample.0", bn_name=name + "/downsample/downsample.1")
    y = g.node("Add", [y, x], name=name + "/Add")
    return g.node("Relu", [y], name=name + "/Relu")


def build(size):
    c = CFG[size]
    g = Z.Graph("torch_jit", opset=13, seed=16)
    x = g.input("input", ["batch", 3, c["img"], c["img"]])
    y = Z.conv_bn_act(g, x, 3, c["stem"], 3, 2, act_kind="relu", bn_mode="node",
                      conv_name="/conv1", bn_name="/bn1", act_name="/relu")
    y = g.node("MaxPool", [y], name="/maxpool/MaxPool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = c["stem"]
    for i, cout in enumerate(c["stages"]):
        y = block(g, y, cin, cout, 1 if i == 0 else 2, "/layer%d/layer%d.0" % (i + 1, i + 1))
        cin = cout
    y = g.node("GlobalAveragePool", [y], name="/avgpool/GlobalAveragePool")
    y = g.node("Flatten", [y], name="/Flatten", axis=1)
    y = Z.dense(g, y, cin, c["mlp"], "/head/fc1", gain=np.sqrt(2.0))
    y = g.node("Relu", [y], name="/head/Relu")
    y = Z.dense(g, y, c["mlp"], c["classes"], "/head/fc2", gain=2.0)
    y = g.node("Softmax", [y], name="/Softmax", axis=1)
    g.nodes.append(Z.helper.make_node("Identity", [y], ["probs"], name="/Identity"))
    g.output("probs", ["batch", c["classes"]])
    m = g.model(producer="pytorch", producer_version="1.13.1")
    return to_float16(m)
