#!/usr/bin/env python3
"""Cases for the onednn_output_alignment ctest: upsampling straight into a
large graph output. oneDNN 2.6's AVX2 resampling kernel stores with
vmovntps, which needs 32-byte aligned addresses; graph outputs were calloc'd
16 bytes into their mmap and the run died with SIGSEGV at 1 thread (a
third cliff hunt's Upsample and Resize models). Expected outputs by numpy:
nearest upsampling by 2 is np.repeat along H and W.

usage: alignment_cases.py OUTDIR   (prints the case folders)
"""
import os
import sys

import numpy as np

try:
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError:
    print("skip: python3-onnx is not installed", file=sys.stderr)
    sys.exit(77)


def write_case(folder, model, x, y):
    os.makedirs(os.path.join(folder, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(folder, "model.onnx"))
    for kind, name, arr in (("input", "x", x), ("output", "y", y)):
        with open(os.path.join(folder, "test_data_set_0", kind + "_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(arr, name).SerializeToString())
    print(folder)


def model(node, inits, opset, shape_in, shape_out):
    g = helper.make_graph([node], "upsample", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape_in)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape_out)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 7
    return m


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(11)
    for c, h in ((64, 40), (32, 96)):
        x = rng.standard_normal((1, c, h, h)).astype(np.float32)
        y = np.repeat(np.repeat(x, 2, axis=2), 2, axis=3)
        scales = numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")
        write_case(os.path.join(out, "upsample9_nearest_%dx%d" % (c, h)),
                   model(helper.make_node("Upsample", ["x", "scales"], ["y"], mode="nearest"), [scales], 9,
                         list(x.shape), list(y.shape)), x, y)
        write_case(os.path.join(out, "resize13_nearest_%dx%d" % (c, h)),
                   model(helper.make_node("Resize", ["x", "", "scales"], ["y"], mode="nearest",
                                          coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
                         [scales], 13, list(x.shape), list(y.shape)), x, y)


if __name__ == "__main__":
    main()
