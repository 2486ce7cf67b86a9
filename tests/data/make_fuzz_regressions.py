#!/usr/bin/python3
"""Builds the regression models of tests/unit/test_fuzz_regressions.c: one
tiny model per finding of the libFuzzer session target (tools/fuzz.sh
session), each reduced to the node and attributes that broke the runtime.
They are written to tests/data/fuzz/.

Run with the system python (onnx 1.12 + numpy):
    /usr/bin/python3 make_fuzz_regressions.py
The models are hostile on purpose: onnx.checker is not run on them.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "fuzz")
INT64_MAX = 2**63 - 1


def save(name, nodes, inputs, outputs, inits=(), opset=22):
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)
    onnx.save(m, os.path.join(OUT, name + ".onnx"))


def f32(name, dims):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, dims)


def conv_transpose_output_padding():
    """ConvTranspose with output_shape given (so the shape rule takes it and
    does not look at output_padding) and output_padding INT64_MAX: the
    kernel added it to the output length (signed overflow,
    ref_nn_conv.c)."""
    w = numpy_helper.from_array(np.zeros((1, 2, 3, 3), np.float32), "W")
    save("conv_transpose_output_padding",
         [helper.make_node("ConvTranspose", ["X", "W"], ["Y"], kernel_shape=[3, 3],
                           output_padding=[1, INT64_MAX], output_shape=[10, 1],
                           strides=[3, 2])],
         [f32("X", [1, 1, "n", 3])], [f32("Y", None)], [w])


def maxpool_same_huge_kernel():
    """MaxPool with auto_pad SAME_UPPER and kernel_shape [3, INT64_MAX]: the
    shape rule skipped the kernel check for SAME padding and the kernel
    overflowed working out the padding (ref_nn_pool.c)."""
    save("maxpool_same_huge_kernel",
         [helper.make_node("MaxPool", ["x"], ["y"], auto_pad="SAME_UPPER",
                           kernel_shape=[3, INT64_MAX], strides=[2**31, 2])],
         [f32("x", [1, 1, 5, 5])], [f32("y", None)])


def split_huge_entry():
    """Split (opset 6, split as an attribute) with split = [2, INT64_MAX]:
    summing the entries overflowed in the shape rule (shape_ops_tensor.c)
    and in the kernel."""
    save("split_huge_entry",
         [helper.make_node("Split", ["x"], ["a", "b"], axis=0, split=[2, INT64_MAX])],
         [f32("x", [3])], [f32("a", [2]), f32("b", [1])], opset=6)


def conv_huge_pad():
    """3-D Conv whose end pad of 65536 on the middle axis makes a long
    output of windows wholly on padding: im2col went through each of those
    rows per kernel tap (over 10 s under the sanitizers); they are now
    skipped a run at a time. Must run cleanly."""
    rng = np.random.RandomState(0)
    w = numpy_helper.from_array(rng.randn(6, 2, 3, 3, 3).astype(np.float32), "W")
    b = numpy_helper.from_array(rng.randn(6).astype(np.float32), "B")
    save("conv_huge_pad",
         [helper.make_node("Conv", ["X", "W", "B"], ["Y"], group=2, kernel_shape=[3, 3, 3],
                           pads=[0, 0, 0, 0, 65536, 0], strides=[1, 1, 1])],
         [f32("X", [1, 4, 4, 5, 4])], [f32("Y", None)], [w, b], opset=15)


def i64(name, values):
    return numpy_helper.from_array(np.array(values, np.int64), name)


def range_huge():
    """Range(0, INT64_MAX, 1) with constant inputs: the shape rule converted
    a length past int64 from double (undefined)."""
    save("range_huge", [helper.make_node("Range", ["s", "l", "d"], ["y"])], [],
         [helper.make_tensor_value_info("y", TensorProto.INT64, None)],
         [i64("s", 0), i64("l", INT64_MAX), i64("d", 1)], opset=17)


def resize_huge_scale():
    """Resize by a scale of 1e30: the shape rule converted dim * scale to
    int64 out of range."""
    sc = numpy_helper.from_array(np.array([1, 1, 1e30, 1e-30], np.float32), "sc")
    save("resize_huge_scale", [helper.make_node("Resize", ["x", "", "sc"], ["y"])],
         [f32("x", [1, 1, 2, 2])], [f32("y", None)], [sc], opset=17)


def resize_runtime_huge_scale():
    """Resize by a scale of 4.6e18 that only exists at run time (CastLike of
    a Constant, as an expanded HardSigmoid mutated into it): the reference
    kernel converted floor(2 * 4.6e18) to int64 out of range (UBSan)."""
    save("resize_runtime_huge_scale",
         [helper.make_node("Constant", [], ["c"], value_floats=[4.611686018427388e18]),
          helper.make_node("CastLike", ["c", "x"], ["s"]),
          helper.make_node("Resize", ["x", "s", "s"], ["y"])],
         [f32("x", [2])], [f32("y", None)], opset=16)


def slice_min_step():
    """Slice with step INT64_MIN: the shape rule negated it (overflow)."""
    save("slice_min_step", [helper.make_node("Slice", ["x", "s", "e", "a", "st"], ["y"])],
         [f32("x", [3])], [f32("y", None)],
         [i64("s", [INT64_MAX]), i64("e", [-INT64_MAX - 1]), i64("a", [0]),
          i64("st", [-INT64_MAX - 1])], opset=17)


def slice_backward_before_start():
    """Slice backward from a start before the first element (-10 on an axis
    of 3): the shape rule clamped the start to 0 and said 1 element, the
    kernel (rightly, as numpy) selects none."""
    save("slice_backward_before_start",
         [helper.make_node("Slice", ["x", "s", "e", "a", "st"], ["y"])],
         [f32("x", [3])], [f32("y", [0])],
         [i64("s", [-10]), i64("e", [-10]), i64("a", [0]), i64("st", [-1])], opset=17)


def eyelike_min_k():
    """EyeLike with k = INT64_MIN: the kernel negated k (overflow)."""
    save("eyelike_min_k", [helper.make_node("EyeLike", ["x"], ["y"], k=-INT64_MAX - 1)],
         [f32("x", [3, 3])], [f32("y", None)], opset=17)


def onehot_huge_depth():
    """OneHot with a constant depth of 1e30 (float): the shape rule
    converted it to int64 out of range."""
    d = numpy_helper.from_array(np.array(1e30, np.float32), "d")
    v = numpy_helper.from_array(np.array([0, 1], np.float32), "v")
    save("onehot_huge_depth", [helper.make_node("OneHot", ["i", "d", "v"], ["y"])],
         [helper.make_tensor_value_info("i", TensorProto.INT64, [2])], [f32("y", None)],
         [d, v], opset=17)


def onehot_empty_indices():
    """OneHot of empty indices [2, 0] with depth 2^40: the kernel looped
    over the whole depth for no elements. Must run cleanly."""
    v = numpy_helper.from_array(np.array([0, 1], np.float32), "v")
    save("onehot_empty_indices", [helper.make_node("OneHot", ["i", "d", "v"], ["y"], axis=1)],
         [helper.make_tensor_value_info("i", TensorProto.INT64, [2, 0])], [f32("y", None)],
         [i64("d", 2**40), v], opset=17)


def empty_initializer_huge_dims():
    """An empty initializer of dims [0, 2^40, 2^40] into Concat: no data
    bounds the nonzero dims, and kernels (Concat, Einsum, Flatten, GatherND,
    GlobalAveragePool, Where...) overflowed computing strides from them."""
    e = helper.make_tensor("e", TensorProto.FLOAT, [0, 2**40, 2**40], [])
    save("empty_initializer_huge_dims",
         [helper.make_node("Concat", ["e", "e"], ["y"], axis=1)], [], [f32("y", None)], [e],
         opset=17)


def empty_input_huge_dims():
    """The same shape declared for a graph input: refused at load."""
    save("empty_input_huge_dims", [helper.make_node("Relu", ["x"], ["y"])],
         [f32("x", [0, 2**40, 2**40])], [f32("y", None)], opset=17)


def einsum_truncated_ellipsis():
    """An output term ending in '.': the shape rule stepped over the
    equation's terminator looking for the rest of '...' (fuzz_model)."""
    save("einsum_truncated_ellipsis", [helper.make_node("Einsum", ["x"], ["y"], equation="ij->.")],
         [f32("x", [2, 3])], [f32("y", None)], opset=17)


def convinteger_wide_padded_window():
    """ConvInteger with a 1x65536 kernel over a 1x1 input padded by 65536 on
    each side: the reference kernel walked every tap of every output, all
    but one in padding (65538 x 65536 steps, seconds); it now visits only
    the taps inside the input (fuzz_session timeout)."""
    w = np.ones((1, 1, 1, 65536), np.uint8)
    save("convinteger_wide_padded_window",
         [helper.make_node("ConvInteger", ["x", "w"], ["y"], pads=[0, 65536, 0, 65536])],
         [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, 1, 1, 1])],
         [helper.make_tensor_value_info("y", TensorProto.INT32, None)],
         [numpy_helper.from_array(w, "w")], opset=17)


def roialign_huge_sampling():
    """RoiAlign with a 4096 x 4096 sampling grid in each of 64 x 64 bins:
    each attribute is in range, but the sampling ran for minutes
    (fuzz_session timeout); the work over all ROIs is now bounded."""
    save("roialign_huge_sampling",
         [helper.make_node("RoiAlign", ["x", "rois", "bi"], ["y"], output_height=64, output_width=64,
                           sampling_ratio=4096)],
         [f32("x", [1, 64, 8, 8]), f32("rois", [1, 4]),
          helper.make_tensor_value_info("bi", TensorProto.INT64, [1])],
         [f32("y", None)], opset=16)


def maxunpool_huge_stride():
    """MaxUnpool with a stride of 2^63-1: the shape rule computed
    (2 - 1) * stride + kernel in int64, overflowing (undefined; found by
    fuzz_session under UBSan); it now works in 128 bits and leaves a size past
    int64 unknown, and the kernel refuses the stride."""
    save("maxunpool_huge_stride",
         [helper.make_node("MaxUnpool", ["x", "i"], ["y"], kernel_shape=[2, 2], strides=[2, 9223372036854775807])],
         [f32("x", [1, 1, 2, 2]), helper.make_tensor_value_info("i", TensorProto.INT64, [1, 1, 2, 2])],
         [f32("y", None)], opset=11)


def attention_huge_heads():
    """Attention (3-D layout) with q_num_heads 2^63-1: its shape rule
    multiplied the heads by v's head size in int64, overflowing (undefined;
    found by fuzz_session under UBSan); the product past int64 is now left
    unknown, and the kernel refuses the head count."""
    save("attention_huge_heads",
         [helper.make_node("Attention", ["q", "k", "v"], ["y"], q_num_heads=9223372036854775807, kv_num_heads=1)],
         [f32("q", [1, 2, 8]), f32("k", [1, 2, 8]), f32("v", [1, 2, 4])],
         [f32("y", None)], opset=23)


def main():
    os.makedirs(OUT, exist_ok=True)
    attention_huge_heads()
    maxunpool_huge_stride()
    roialign_huge_sampling()
    convinteger_wide_padded_window()
    einsum_truncated_ellipsis()
    conv_transpose_output_padding()
    maxpool_same_huge_kernel()
    split_huge_entry()
    conv_huge_pad()
    range_huge()
    resize_huge_scale()
    resize_runtime_huge_scale()
    slice_min_step()
    slice_backward_before_start()
    eyelike_min_k()
    onehot_huge_depth()
    onehot_empty_indices()
    empty_initializer_huge_dims()
    empty_input_huge_dims()


if __name__ == "__main__":
    main()
