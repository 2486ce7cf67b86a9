#!/usr/bin/python3
"""Writes the models that tests/unit/test_gradient.c reads (gradient_*.onnx).

Run from anywhere: /usr/bin/python3 tests/data/make_gradient_models.py
The outputs are committed, so the tests need neither Python nor onnx; this
script is how they were made and how to remake them (onnx 1.12 is enough).
Each graph holds ai.onnx.preview.training Gradient nodes whose forward part
exercises one feature of core/gradient.c. The expected gradients are worked
out in test_gradient.c; the numbers of gradient_mlp are also checked here
with numpy, so a slip in the hand arithmetic shows up when the models are made.
"""
import os

import numpy as np
from onnx import TensorProto, checker, helper

OUT = os.path.dirname(os.path.abspath(__file__))
F = TensorProto.FLOAT
TRAINING = "ai.onnx.preview.training"


def save(name, nodes, inputs, outputs, opset):
    graph = helper.make_graph(nodes, name, inputs, outputs)
    imports = [helper.make_opsetid("", opset), helper.make_opsetid(TRAINING, 1)]
    model = helper.make_model(graph, opset_imports=imports, producer_name="make_gradient_models")
    model.ir_version = 8
    with open(os.path.join(OUT, name + ".onnx"), "wb") as f:
        f.write(model.SerializeToString())


def vi(name, dims, t=F):
    return helper.make_tensor_value_info(name, t, dims)


def grad(name, xs, y, outs, zs=()):
    kw = {"xs": list(xs), "y": y}
    if zs:
        kw["zs"] = list(zs)
    return helper.make_node("Gradient", list(xs) + list(zs), outs, name=name, domain=TRAINING, **kw)


def mlp():
    """Y = Relu(X W + B); dY/dW, dY/dB, and dY/dU for an input U that Y does
    not depend on. X is fed to Gradient as a z. Opset 12 (ReduceSum axes as
    an attribute); B is broadcast along the rows."""
    nodes = [
        helper.make_node("MatMul", ["X", "W"], ["H"], name="mm"),
        helper.make_node("Add", ["H", "B"], ["Z"], name="bias"),
        helper.make_node("Relu", ["Z"], ["Y"], name="relu"),
        grad("grad", ["W", "B", "U"], "Y", ["dW", "dB", "dU"], zs=["X"]),
    ]
    save("gradient_mlp", nodes,
         [vi("X", [2, 2]), vi("W", [2, 2]), vi("B", [2]), vi("U", [3])],
         [vi("Y", [2, 2]), vi("dW", [2, 2]), vi("dB", [2]), vi("dU", [3])], 12)
    # The hand-worked numbers in test_gradient.c, checked.
    x = np.array([[1, 2], [3, -4]], np.float32)
    w = np.array([[1, -1], [0.5, 2]], np.float32)
    b = np.array([0.5, -1], np.float32)
    mask = (x @ w + b > 0).astype(np.float32)
    assert (x.T @ mask == np.array([[4, 1], [-2, 2]])).all()
    assert (mask.sum(axis=0) == np.array([2, 1])).all()


def unary():
    """One Gradient node per elementwise op, each of y_op = op(x) w.r.t. x.
    Log and Sqrt read Abs(x), so their path has two nodes."""
    nodes = [helper.make_node("Abs", ["x"], ["ax"], name="abs")]
    outs = [vi("d_abs", [4])]
    nodes.append(grad("grad_abs", ["x"], "ax", ["d_abs"]))
    for op in ["Identity", "Neg", "Relu", "Sigmoid", "Tanh", "Exp"]:
        low = op.lower()
        nodes.append(helper.make_node(op, ["x"], ["y_" + low], name=low))
        nodes.append(grad("grad_" + low, ["x"], "y_" + low, ["d_" + low]))
        outs.append(vi("d_" + low, [4]))
    for op in ["Log", "Sqrt"]:
        low = op.lower()
        nodes.append(helper.make_node(op, ["ax"], ["y_" + low], name=low))
        nodes.append(grad("grad_" + low, ["x"], "y_" + low, ["d_" + low]))
        outs.append(vi("d_" + low, [4]))
    save("gradient_unary", nodes, [vi("x", [4])], outs, 13)


def sub_div():
    """y = (a - b) / b with b[3] broadcast over a[2,3]; a reaches y twice
    (through t and directly in Mul), so its gradient is a sum."""
    nodes = [
        helper.make_node("Sub", ["a", "b"], ["t"], name="sub"),
        helper.make_node("Div", ["t", "b"], ["q"], name="div"),
        helper.make_node("Mul", ["q", "a"], ["y"], name="mul"),
        grad("grad", ["a", "b"], "y", ["da", "db"]),
    ]
    save("gradient_sub_div", nodes, [vi("a", [2, 3]), vi("b", [3])],
         [vi("y", [2, 3]), vi("da", [2, 3]), vi("db", [3])], 13)


def dynamic(opset):
    """y = a * s with a[N,3] and s[K,3]: whether s is broadcast along axis 0
    is only known at run time (K may be 1 or N)."""
    nodes = [
        helper.make_node("Mul", ["a", "s"], ["y"], name="mul"),
        grad("grad", ["a", "s"], "y", ["da", "ds"]),
    ]
    name = "gradient_dynamic" if opset >= 13 else "gradient_dynamic_opset12"
    save(name, nodes, [vi("a", ["N", 3]), vi("s", ["K", 3])],
         [vi("y", ["N", 3]), vi("da", ["N", 3]), vi("ds", ["K", 3])], opset)


def unsupported():
    """Softmax lies between x and y: no gradient rule for it."""
    nodes = [
        helper.make_node("Exp", ["x"], ["e"], name="exp"),
        helper.make_node("Softmax", ["e"], ["y"], name="soft"),
        grad("grad", ["x"], "y", ["dx"]),
    ]
    save("gradient_unsupported", nodes, [vi("x", [2, 3])], [vi("y", [2, 3]), vi("dx", [2, 3])], 13)


def bad_attrs():
    """Gradient without 'xs'."""
    nodes = [
        helper.make_node("Neg", ["x"], ["y"], name="neg"),
        helper.make_node("Gradient", ["x"], ["dx"], name="grad", domain=TRAINING, y="y"),
    ]
    save("gradient_bad_attrs", nodes, [vi("x", [2])], [vi("y", [2]), vi("dx", [2])], 13)


def malformed():
    """Gradient nodes that are wrong in other ways, one model each."""
    neg = helper.make_node("Neg", ["x"], ["y"], name="neg")
    ins, outs = [vi("x", [2]), vi("z", [2])], [vi("y", [2]), vi("dx", [2])]
    # input 0 is z, but xs says x
    node = helper.make_node("Gradient", ["z"], ["dx"], name="grad", domain=TRAINING, xs=["x"], y="y")
    save("gradient_bad_inputs", [neg, node], ins, outs, 13)
    # y names no value
    save("gradient_bad_y", [neg, grad("grad", ["x"], "nowhere", ["dx"])], ins, outs, 13)
    # more outputs than xs
    node = helper.make_node("Gradient", ["x"], ["dx", "extra"], name="grad", domain=TRAINING, xs=["x"], y="y")
    save("gradient_bad_outputs", [neg, node], ins, outs + [vi("extra", [2])], 13)


def second_order():
    """d1 = d(x^3)/dx, d2 = d(d1)/dx. The outer Gradient node is listed first,
    so the rewrite must pick the inner one first."""
    nodes = [
        grad("grad2", ["x"], "d1", ["d2"]),
        helper.make_node("Mul", ["x", "x"], ["sq"], name="sq"),
        helper.make_node("Mul", ["sq", "x"], ["cube"], name="cube"),
        grad("grad1", ["x"], "cube", ["d1"]),
    ]
    save("gradient_second_order", nodes, [vi("x", [3])], [vi("d1", [3]), vi("d2", [3])], 13)


def in_if():
    """A Gradient node inside an If branch, differentiating the branch's own
    nodes with respect to a value of the main graph."""
    then_g = helper.make_graph(
        [helper.make_node("Mul", ["x", "x"], ["t_sq"], name="then_sq"),
         grad("then_grad", ["x"], "t_sq", ["t_out"])],
        "then_branch", [], [vi("t_out", [3])])
    else_g = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["e_neg"], name="else_neg"),
         grad("else_grad", ["x"], "e_neg", ["e_out"])],
        "else_branch", [], [vi("e_out", [3])])
    nodes = [helper.make_node("If", ["cond"], ["dx"], name="if", then_branch=then_g, else_branch=else_g)]
    save("gradient_in_if", nodes, [vi("x", [3]), vi("cond", [], TensorProto.BOOL)], [vi("dx", [3])], 13)


def main():
    mlp()
    unary()
    sub_div()
    dynamic(13)
    dynamic(12)
    unsupported()
    bad_attrs()
    second_order()
    in_if()
    malformed()
    # The checker knows Gradient's schema, so this also checks the attributes
    # of every model but the one that is wrong on purpose.
    for name in ["gradient_mlp", "gradient_unary", "gradient_sub_div", "gradient_dynamic",
                 "gradient_dynamic_opset12", "gradient_unsupported", "gradient_second_order", "gradient_in_if"]:
        checker.check_model(os.path.join(OUT, name + ".onnx"))


if __name__ == "__main__":
    main()
