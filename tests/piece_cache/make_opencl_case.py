#!/usr/bin/env python3
"""A small CNN for the OpenCL provider's compiled-piece cache test.

    make_opencl_case.py make DIR          DIR/model.onnx + DIR/test_data_set_0/
    make_opencl_case.py check DIR OUT     OUT/*.pb (tessera run -o) against
                                          DIR's expected outputs

The expected output is computed here with numpy in float64, so the test
judges imported pieces against something Tessera did not compute. The
graph gives the OpenCL provider several pieces of different kinds, each
building its own programs: Conv with a folded BatchNormalization and Relu,
a depthwise Conv with Clip, a residual Add, MaxPool, GlobalAveragePool,
Flatten + Gemm, Softmax, and a Sigmoid/Mul elementwise chain. (The
elementwise pieces build their kernels at the first run, for the shapes
they meet, so their blobs hold no program; the others hold one each.)

Exit status 77 (ctest: skipped) when python3 lacks onnx or numpy.
"""
import os
import sys

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError as e:
    print("make_opencl_case.py: %s (apt-get install python3-onnx python3-numpy): skipping" % e)
    sys.exit(77)


def conv2d(x, w, b, stride=1, pad=0, groups=1):
    """NCHW cross-correlation, as ONNX Conv, by explicit sums (float64)."""
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = (h + 2 * pad - kh) // stride + 1, (wd + 2 * pad - kw) // stride + 1
    y = np.zeros((n, m, oh, ow))
    mg = m // groups
    for g in range(groups):
        wg = w[g * mg:(g + 1) * mg]
        for i in range(oh):
            for j in range(ow):
                patch = xp[:, g * cg:(g + 1) * cg, i * stride:i * stride + kh, j * stride:j * stride + kw]
                y[:, g * mg:(g + 1) * mg, i, j] = np.einsum("nchw,mchw->nm", patch, wg)
    return y + b.reshape(1, m, 1, 1)


def maxpool2(x):
    n, c, h, w = x.shape
    return x.reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))


def make(d):
    rng = np.random.default_rng(11)
    f32 = lambda a: np.asarray(a, dtype=np.float32)
    x = f32(rng.uniform(-1, 1, (1, 3, 16, 16)))
    w1 = f32(rng.standard_normal((8, 3, 3, 3)) / np.sqrt(27))
    b1 = f32(0.1 * rng.standard_normal(8))
    scale, bias = f32(rng.uniform(0.5, 1.5, 8)), f32(0.1 * rng.standard_normal(8))
    mean, var = f32(0.1 * rng.standard_normal(8)), f32(rng.uniform(0.5, 1.5, 8))
    wd = f32(rng.standard_normal((8, 1, 3, 3)) / 3)
    bd = f32(0.1 * rng.standard_normal(8))
    wg = f32(rng.standard_normal((10, 8)) / np.sqrt(8))
    bg = f32(0.1 * rng.standard_normal(10))
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c1", "scale", "bias", "mean", "var"], ["n1"], epsilon=1e-5),
        helper.make_node("Relu", ["n1"], ["r1"]),
        helper.make_node("Conv", ["r1", "wd", "bd"], ["c2"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=8),
        helper.make_node("Clip", ["c2", "lo", "hi"], ["k2"]),
        helper.make_node("Add", ["k2", "r1"], ["a2"]),
        helper.make_node("MaxPool", ["a2"], ["p2"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Sigmoid", ["p2"], ["s3"]),
        helper.make_node("Mul", ["p2", "s3"], ["m3"]),
        helper.make_node("GlobalAveragePool", ["m3"], ["g3"]),
        helper.make_node("Flatten", ["g3"], ["f3"]),
        helper.make_node("Gemm", ["f3", "wg", "bg"], ["z"], transB=1),
        helper.make_node("Softmax", ["z"], ["y"], axis=1),
    ]
    for n in nodes:
        n.name = n.output[0] + "_node"  # log lines name pieces by their first node
    consts = (("w1", w1), ("b1", b1), ("scale", scale), ("bias", bias), ("mean", mean), ("var", var),
              ("wd", wd), ("bd", bd), ("lo", f32(0.0)), ("hi", f32(6.0)), ("wg", wg), ("bg", bg))
    graph = helper.make_graph(
        nodes, "opencl_cache_cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
        initializer=[numpy_helper.from_array(a, n) for n, a in consts])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)

    v = {n: a.astype(np.float64) for n, a in consts}
    c1 = conv2d(x.astype(np.float64), v["w1"], v["b1"], pad=1)
    r = lambda a: a.reshape(1, -1, 1, 1)
    n1 = (c1 - r(v["mean"])) / np.sqrt(r(v["var"]) + 1e-5) * r(v["scale"]) + r(v["bias"])
    r1 = np.maximum(n1, 0)
    k2 = np.clip(conv2d(r1, v["wd"], v["bd"], pad=1, groups=8), 0, 6)
    p2 = maxpool2(k2 + r1)
    m3 = p2 / (1 + np.exp(-p2))
    z = m3.mean(axis=(2, 3)) @ v["wg"].T + v["bg"]
    y = np.exp(z - z.max()) / np.exp(z - z.max()).sum()

    data = os.path.join(d, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    onnx.save(model, os.path.join(d, "model.onnx"))
    for name, a in (("input_0.pb", numpy_helper.from_array(x, "x")),
                    ("output_0.pb", numpy_helper.from_array(y.astype(np.float32), "y"))):
        with open(os.path.join(data, name), "wb") as f:
            f.write(a.SerializeToString())


def check(d, out):
    """Exit 1 naming the output when OUT's differ from DIR's expected ones."""
    t = onnx.TensorProto()
    with open(os.path.join(d, "test_data_set_0", "output_0.pb"), "rb") as f:
        t.ParseFromString(f.read())
    want = numpy_helper.to_array(t)
    path = os.path.join(out, "y.pb")
    if not os.path.exists(path):
        sys.exit("check: %s missing" % path)
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    got = numpy_helper.to_array(t)
    if got.shape != want.shape or not np.allclose(got, want, rtol=1e-4, atol=1e-5):
        sys.exit("check: y differs from numpy's: got %s, want %s" % (got.ravel()[:4], want.ravel()[:4]))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "make":
        make(sys.argv[2])
    elif len(sys.argv) == 4 and sys.argv[1] == "check":
        check(sys.argv[2], sys.argv[3])
    else:
        sys.exit("usage: make_opencl_case.py make DIR | check DIR OUT")
