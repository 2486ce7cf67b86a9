"""ConvNeXt-Tiny (torchvision.models.convnext_tiny) as torch.onnx (opset 17) exports it.

Imitates: torchvision ConvNeXt exported with dynamic batch. Covers: depthwise 7x7 Conv, Transpose
NCHW->NHWC, LayerNormalization op (opset 17) over channels, MatMul 4x expansion, exact GELU (Erf),
layer-scale Mul, Transpose back, residual Add; stem 4x4/4 Conv + LayerNorm2d (Permute-LN-Permute);
downsample LayerNorm2d + 2x2/2 Conv; head GAP(ReduceMean) -> LN -> Flatten -> Linear.
full: 1x3x224x224, depths (2,2,6,2) (ConvNeXt-T has (3,3,9,3)), dims (96,192,384,768).
small: 1x3x32x32, depths (1,1,1,1), dims (16,32,64,128).
"""
import numpy as np
from zoolib import Graph, layer_norm, gelu_erf, dense, fscalar, shape_reshape, set_output

META = {"about": "ConvNeXt-T (opset 17, LayerNormalization, NHWC MLP)",
        "dims_small": {"batch": 1}, "dims_full": {"batch": 1}, "rtol": 1e-3, "atol": 1e-4}


def ln2d(g, x, c, name, op=True):
    y = g.node("Transpose", [x], name=name + "/Transpose", perm=[0, 2, 3, 1])
    y = layer_norm(g, y, c, name, eps=1e-6, op=op)
    return g.node("Transpose", [y], name=name + "/Transpose", perm=[0, 3, 1, 2])


def block(g, x, c, name, op=True):
    y = g.conv(x, c, c, 7, group=c, name=name + "/block.0/Conv")
    y = g.node("Transpose", [y], name=name + "/block.1/Transpose", perm=[0, 2, 3, 1])
    y = layer_norm(g, y, c, name + "/block.2", eps=1e-6, op=op)
    y = dense(g, y, c, 4 * c, name + "/block.3")
    y = gelu_erf(g, y, name + "/block.4")
    y = dense(g, y, 4 * c, c, name + "/block.5")
    y = g.node("Transpose", [y], name=name + "/block.6/Transpose", perm=[0, 3, 1, 2])
    ls = g.const((0.3 * g.rng.standard_normal((c, 1, 1))).astype(np.float32), name.strip("/") + ".layer_scale")
    y = g.node("Mul", [ls, y], name=name + "/Mul")
    return g.node("Add", [y, x], name=name + "/Add")


def build(size="small"):
    full = size == "full"
    res, depths, dims = (224, (2, 2, 6, 2), (96, 192, 384, 768)) if full else (32, (1, 1, 1, 1), (16, 32, 64, 128))
    g = Graph("main_graph", 17, seed=11)
    x = g.input("input", ["batch", 3, res, res])
    y = g.conv(x, 3, dims[0], 4, stride=4, pad=0, name="/features/features.0/features.0.0/Conv")
    y = ln2d(g, y, dims[0], "/features/features.0/features.0.1")
    for s in range(4):
        if s > 0:
            y = ln2d(g, y, dims[s - 1], "/features/features.%d/features.%d.0" % (2 * s, 2 * s))
            y = g.conv(y, dims[s - 1], dims[s], 2, stride=2, pad=0,
                       name="/features/features.%d/features.%d.1/Conv" % (2 * s, 2 * s))
        for b in range(depths[s]):
            y = block(g, y, dims[s], "/features/features.%d/features.%d.%d" % (2 * s + 1, 2 * s + 1, b))
    y = g.node("GlobalAveragePool", [y], name="/avgpool/GlobalAveragePool")
    y = ln2d(g, y, dims[3], "/classifier/classifier.0")
    y = g.node("Flatten", [y], name="/classifier/classifier.1/Flatten", axis=1)
    y = g.node("Gemm", [y, g.weight((1000, dims[3]), "classifier.2.weight"),
                        g.const(np.zeros(1000, np.float32), "classifier.2.bias")],
               name="/classifier/classifier.2/Gemm", transB=1)
    set_output(g, y, "output", ["batch", 1000])
    return g.model(producer_version="2.0.1")
