"""Small ONNX models for the Python tests, built with onnx.helper; expected
values are computed with numpy in the tests themselves."""
import numpy as np
from onnx import TensorProto, helper, numpy_helper


def model_bytes(nodes, inputs, outputs, initializers=(), opset=17, **kwargs):
    graph = helper.make_graph(nodes, kwargs.pop("graph_name", "g"), inputs, outputs, list(initializers))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], **kwargs)
    m.ir_version = 8
    return m.SerializeToString()


def mlp(weights, bias):
    """y = Relu(x @ W + b), x: [batch, K] ('batch' symbolic); also returns
    the intermediate 'mm' as a second output."""
    k, n = weights.shape
    return model_bytes(
        [helper.make_node("MatMul", ["x", "W"], ["mm"], name="matmul"),
         helper.make_node("Add", ["mm", "b"], ["pre"], name="add"),
         helper.make_node("Relu", ["pre"], ["y"], name="relu")],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", k])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", n]),
         helper.make_tensor_value_info("mm", TensorProto.FLOAT, ["batch", n])],
        [numpy_helper.from_array(weights, "W"), numpy_helper.from_array(bias, "b")],
        producer_name="tessera-tests", producer_version="1.2", doc_string="a small MLP",
        model_version=7, graph_name="mlp_graph")


def unary(op, elem_in, elem_out=None, shape=(2, 3), **attrs):
    elem_out = elem_in if elem_out is None else elem_out
    return model_bytes([helper.make_node(op, ["x"], ["y"], **attrs)],
                       [helper.make_tensor_value_info("x", elem_in, list(shape))],
                       [helper.make_tensor_value_info("y", elem_out, list(shape))])


def binary(op, elem, shape=(2, 3)):
    return model_bytes([helper.make_node(op, ["a", "b"], ["y"])],
                       [helper.make_tensor_value_info("a", elem, list(shape)),
                        helper.make_tensor_value_info("b", elem, list(shape))],
                       [helper.make_tensor_value_info("y", elem, list(shape))])


def big_matmul(n):
    """y = x @ x for x [n, n]: slow enough on the reference provider to see
    whether the GIL is held during a run."""
    return model_bytes([helper.make_node("MatMul", ["x", "x"], ["y"])],
                       [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n, n])],
                       [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n, n])])


def sequence_model():
    """seq = SequenceConstruct(a, b); n = SequenceLength(seq); first = SequenceAt(s_in, 0)."""
    f = TensorProto.FLOAT
    seq_type = helper.make_tensor_sequence_value_info
    return model_bytes(
        [helper.make_node("SequenceConstruct", ["a", "b"], ["seq"]),
         helper.make_node("SequenceLength", ["s_in"], ["n"]),
         helper.make_node("SequenceAt", ["s_in", "zero"], ["first"])],
        [helper.make_tensor_value_info("a", f, [2]), helper.make_tensor_value_info("b", f, [3]),
         seq_type("s_in", f, None)],
        [seq_type("seq", f, None), helper.make_tensor_value_info("n", TensorProto.INT64, []),
         helper.make_tensor_value_info("first", f, None)],
        [numpy_helper.from_array(np.array(0, np.int64), "zero")])


def optional_model():
    """has = OptionalHasElement(o); o an optional tensor input; and
    out = Optional(x) (always holds x)."""
    f = TensorProto.FLOAT
    opt_in = helper.make_value_info("o", helper.make_optional_type_proto(helper.make_tensor_type_proto(f, [2])))
    opt_out = helper.make_value_info("wrapped", helper.make_optional_type_proto(helper.make_tensor_type_proto(f, [2])))
    return model_bytes(
        [helper.make_node("OptionalHasElement", ["o"], ["has"]),
         helper.make_node("Optional", ["x"], ["wrapped"])],
        [opt_in, helper.make_tensor_value_info("x", f, [2])],
        [helper.make_tensor_value_info("has", TensorProto.BOOL, []), opt_out],
        opset=18)


def string_model():
    """y = StringNormalizer(x, case_change_action=UPPER)."""
    return model_bytes([helper.make_node("StringNormalizer", ["x"], ["y"], case_change_action="UPPER")],
                       [helper.make_tensor_value_info("x", TensorProto.STRING, [3])],
                       [helper.make_tensor_value_info("y", TensorProto.STRING, None)])
