"""ESRGAN / Real-ESRGAN-lite (RRDBNet) x2 as torch.onnx (opset 11) exports it.

Imitates: basicsr's RRDBNet with a small width, dynamic batch/height/width. Covers: 3x3 Conv with
LeakyRelu(0.2), dense residual blocks (each conv reads the Concat of all earlier features),
residual scaling Mul(0.2) + Add, trunk long skip, x2 upsampling as torch's pixel_shuffle exports at
opset < 11 style (Reshape 6-D -> Transpose(0,1,4,2,5,3) -> Reshape) with the shape computed from
Shape/Gather/Div arithmetic, and a second x2 via DepthToSpace(CRD) (opset 11 pixel_shuffle),
final conv to 3 channels at 4x resolution.
full: 1x3x128x128, nf 32, gc 16, 2 RRDB, x4 (-> 512x512). small: 1x3x16x16, nf 8, gc 4, 1 RRDB.
"""
import numpy as np
from zoolib import Graph, set_output, sconst, dim_of, shape_concat, fscalar

META = {"about": "RRDBNet-lite x4 (dense Concat blocks, LeakyRelu, pixel shuffle as Reshape/Transpose and DepthToSpace)",
        "dims_small": {"batch": 1, "height": 16, "width": 16}, "dims_full": {"batch": 1, "height": 128, "width": 128},
        "rtol": 1e-3, "atol": 1e-4}


def lrelu(g, x, name):
    return g.node("LeakyRelu", [x], name=name + "/LeakyRelu", alpha=0.2)


def rdb(g, x, nf, gc, name):
    feats = [x]
    for i in range(5):
        inp = feats[0] if i == 0 else g.node("Concat", feats, name=name + "/Concat", axis=1)
        cin = nf + i * gc
        y = g.conv(inp, cin, gc if i < 4 else nf, 3, name=name + "/conv%d/Conv" % (i + 1))
        if i < 4:
            feats.append(lrelu(g, y, name + "/lrelu"))
    y = g.node("Mul", [y, fscalar(g, 0.2, name)], name=name + "/Mul")
    return g.node("Add", [y, x], name=name + "/Add")


def pixel_shuffle_reshape(g, x, c, r, name):
    """torch pixel_shuffle at opset 9/10: view(b, c, r, r, h, w).permute(0,1,4,2,5,3).view(b, c, h*r, w*r)."""
    b, h, w = [("scalar", dim_of(g, x, i, name)) for i in (0, 2, 3)]
    y = g.node("Reshape", [x, shape_concat(g, [b, c, r, r, h, w], name)], name=name + "/Reshape")
    y = g.node("Transpose", [y], name=name + "/Transpose", perm=[0, 1, 4, 2, 5, 3])
    hr = g.node("Mul", [h[1], sconst(g, r, name)], name=name + "/Mul")
    wr = g.node("Mul", [w[1], sconst(g, r, name)], name=name + "/Mul")
    return g.node("Reshape", [y, shape_concat(g, [b, c, ("scalar", hr), ("scalar", wr)], name)], name=name + "/Reshape")


def build(size="small"):
    full = size == "full"
    nf, gc, nb = (32, 16, 2) if full else (8, 4, 1)
    g = Graph("main_graph", 11, seed=23)
    x = g.input("input", ["batch", 3, "height", "width"])
    fea = g.conv(x, 3, nf, 3, name="/conv_first/Conv")
    y = fea
    for b in range(nb):
        t = y
        for j in range(3):
            t = rdb(g, t, nf, gc, "/body/body.%d/rdb%d" % (b, j + 1))
        t = g.node("Mul", [t, fscalar(g, 0.2, "/body/body.%d" % b)], name="/body/body.%d/Mul" % b)
        y = g.node("Add", [t, y], name="/body/body.%d/Add" % b)
    y = g.conv(y, nf, nf, 3, name="/conv_body/Conv")
    y = g.node("Add", [fea, y], name="/Add")
    y = g.conv(y, nf, 4 * nf, 3, name="/upconv1/Conv")
    y = lrelu(g, pixel_shuffle_reshape(g, y, nf, 2, "/pixel_shuffle"), "/up1")
    y = g.conv(y, nf, 4 * nf, 3, name="/upconv2/Conv")
    y = g.node("DepthToSpace", [y], name="/pixel_shuffle_1/DepthToSpace", blocksize=2, mode="CRD")
    y = lrelu(g, y, "/up2")
    y = lrelu(g, g.conv(y, nf, nf, 3, name="/conv_hr/Conv"), "/hr")
    y = g.conv(y, nf, 3, 3, name="/conv_last/Conv")
    set_output(g, y, "output", ["batch", 3, None, None])
    return g.model(producer_version="1.13.1")
