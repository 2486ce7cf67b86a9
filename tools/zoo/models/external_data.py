"""An MLP classifier whose weights live in an external data file, as onnx.save_model writes a
model too big for one protobuf (and as torch.onnx does for models > 2 GB), opset 13.

Imitates `onnx.save_model(model, "external_data.onnx", save_as_external_data=True,
all_tensors_to_one_file=True, location="external_data.onnx.data", size_threshold=1024)`:
tensors of 1024 bytes or more (the Gemm weights, the larger biases) are stored in
NAME.onnx.data, referenced by location/offset/length, while small ones (LayerNorm
parameters in the small size, scalar constants) stay inline -- so one model mixes both kinds.
Graph: x [batch, features] -> 4 x (Gemm transB=1 + Relu) -> LayerNorm written out ->
Gemm to classes -> Softmax. build returns (model, save_fn); save_fn removes a stale data file
first (onnx appends to an existing one).
Full: features 512, width 2048, 100 classes (~55 MB external). Small: features 32, width 64,
10 classes.
"""
import os

import numpy as np
import onnx

import zoolib as Z

META = {
    "about": "4-layer Gemm MLP with weights in an external .data file (size_threshold 1024), opset 13",
    "dims_small": {"batch": 2},
    "dims_full": {"batch": 8},
    "rtol": 1e-3, "atol": 1e-5,
}

CFG = {"small": dict(fin=32, width=64, classes=10), "full": dict(fin=512, width=2048, classes=100)}


def gemm(g, x, fin, fout, name, gain=1.0):
    w = g.const((g.rng.standard_normal((fout, fin)) * (gain / np.sqrt(fin))).astype(np.float32), name + ".weight")
    b = g.const((0.05 * g.rng.standard_normal(fout)).astype(np.float32), name + ".bias")
    return g.node("Gemm", [x, w, b], name="/%s/Gemm" % name.replace(".", "/"), alpha=1.0, beta=1.0, transB=1)


def save(model, path):
    location = os.path.basename(path) + ".data"
    data = os.path.join(os.path.dirname(os.path.abspath(path)), location)
    if os.path.exists(data):
        os.remove(data)
    onnx.save_model(model, path, save_as_external_data=True, all_tensors_to_one_file=True,
                    location=location, size_threshold=1024)


def build(size):
    c = CFG[size]
    g = Z.Graph("torch_jit", opset=13, seed=7)
    x = g.input("x", ["batch", c["fin"]])
    fin = c["fin"]
    for i in range(4):
        x = gemm(g, x, fin, c["width"], "layers.%d" % (2 * i), gain=np.sqrt(2.0))
        x = g.node("Relu", [x], name="/layers/layers.%d/Relu" % (2 * i + 1))
        fin = c["width"]
    x = Z.layer_norm(g, x, fin, "/norm")
    x = gemm(g, x, fin, c["classes"], "head", gain=1.5)
    y = g.node("Softmax", [x], name="/Softmax", axis=-1)
    g.nodes.append(Z.helper.make_node("Identity", [y], ["probs"], name="/Identity"))
    g.output("probs", ["batch", c["classes"]])
    return g.model(producer="pytorch", producer_version="1.13.1"), save
