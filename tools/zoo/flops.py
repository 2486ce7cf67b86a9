"""FLOPs of a model at given input sizes, counting a multiply-add as 2, for
the ops that dominate (Conv, ConvTranspose, MatMul, Gemm, and the matrix
products inside LSTM/GRU); elementwise work is left out, as
../shared/bench's flops.json does. Shapes come from ONNX shape inference on
a copy whose symbolic input dims are fixed."""
import numpy as np
import onnx
from onnx import shape_inference


def _shapes(model, dims):
    m = onnx.ModelProto()
    m.CopyFrom(model)
    for vi in m.graph.input:
        for d in vi.type.tensor_type.shape.dim:
            if d.dim_param:
                d.dim_value = int(dims.get(d.dim_param, 1))
    m = shape_inference.infer_shapes(m, data_prop=True)
    out = {}
    for vi in list(m.graph.value_info) + list(m.graph.input) + list(m.graph.output):
        t = vi.type.tensor_type
        if t.HasField("shape") and all(d.HasField("dim_value") for d in t.shape.dim):
            out[vi.name] = [d.dim_value for d in t.shape.dim]
    for init in m.graph.initializer:
        out[init.name] = list(init.dims)
    for n in m.graph.node:
        if n.op_type == "Constant":
            for a in n.attribute:
                if a.name == "value":
                    out[n.output[0]] = list(a.t.dims)
    return m, out


def _attr(n, name, default):
    for a in n.attribute:
        if a.name == name:
            return onnx.helper.get_attribute_value(a)
    return default


def _node_flops(n, s):
    get = lambda v: s.get(v)
    if n.op_type in ("Conv", "ConvInteger", "QLinearConv"):
        x, w, y = get(n.input[0 if n.op_type != "QLinearConv" else 0]), get(n.input[1 if n.op_type != "QLinearConv" else 3]), get(n.output[0])
        if not (w and y):
            return 0
        return 2 * int(np.prod(y)) * int(np.prod(w[1:]))
    if n.op_type == "ConvTranspose":
        x, w = get(n.input[0]), get(n.input[1])
        if not (x and w):
            return 0
        return 2 * int(np.prod(x)) * int(np.prod(w[1:]))
    if n.op_type in ("MatMul", "MatMulInteger", "Gemm", "QLinearMatMul"):
        a = get(n.input[0])
        y = get(n.output[0])
        if not (a and y):
            return 0
        k = a[-1] if not (n.op_type == "Gemm" and _attr(n, "transA", 0)) else a[0]
        return 2 * int(np.prod(y)) * int(k)
    if n.op_type in ("LSTM", "GRU", "RNN"):
        x, w, r = get(n.input[0]), get(n.input[1]), get(n.input[2])
        if not (x and w and r):
            return 0
        steps = x[0] * x[1] if _attr(n, "layout", 0) == 0 else x[0] * x[1]
        return 2 * int(steps) * (int(np.prod(w)) + int(np.prod(r)))
    return 0


def model_flops(model, dims):
    """Total FLOPs of the main graph and every subgraph (If counts both
    branches: an upper bound)."""
    m, s = _shapes(model, dims)

    def walk(g):
        total = 0
        for n in g.node:
            total += _node_flops(n, s)
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    total += walk(a.g)
        return total

    return walk(m.graph)
