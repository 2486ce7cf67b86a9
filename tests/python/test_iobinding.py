"""InferenceSession.io_binding(): ONNX Runtime's IOBinding over
tsr_io_binding. A recurrent step run 30 times with its state fed back,
checked against numpy; on opencl the profile must show no copy of the state
after the first run. Expected values are numpy's, in float64."""
import json

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import tessera as ort

import models

RNG = np.random.default_rng(5)
I, H, O, STEPS = 6, 8, 3, 30
W = (RNG.standard_normal((I, H)) / 3).astype(np.float32)
U = (RNG.standard_normal((H, H)) / 4).astype(np.float32)
V = (RNG.standard_normal((H, O)) / 3).astype(np.float32)
XS = RNG.standard_normal((STEPS, 1, I)).astype(np.float32)


def rnn_bytes():
    """state_out = tanh(x @ W + state_in @ U); y = state_out @ V."""
    f = TensorProto.FLOAT
    return models.model_bytes(
        [helper.make_node("MatMul", ["x", "W"], ["xw"]),
         helper.make_node("MatMul", ["state_in", "U"], ["su"]),
         helper.make_node("Add", ["xw", "su"], ["pre"]),
         helper.make_node("Tanh", ["pre"], ["state_out"]),
         helper.make_node("MatMul", ["state_out", "V"], ["y"])],
        [helper.make_tensor_value_info("x", f, [1, I]), helper.make_tensor_value_info("state_in", f, [1, H])],
        [helper.make_tensor_value_info("y", f, [1, O]), helper.make_tensor_value_info("state_out", f, [1, H])],
        [numpy_helper.from_array(W, "W"), numpy_helper.from_array(U, "U"), numpy_helper.from_array(V, "V")],
        opset=13)


def expected():
    state, ys = np.zeros((1, H)), []
    for t in range(STEPS):
        state = np.tanh(XS[t].astype(np.float64) @ W + state @ U)
        ys.append(state @ V)
    return ys, state


PROVIDER_SETS = [["reference"]] + ([["opencl", "reference"]] if "opencl" in ort.get_available_providers() else [])


def state_copies(events):
    return [e for e in events if e.get("cat") == "copy" and e["args"]["value"] in ("state_in", "state_out")]


@pytest.mark.parametrize("providers", PROVIDER_SETS, ids=",".join)
def test_state_stays_bound(providers):
    so = ort.SessionOptions()
    so.enable_profiling = True
    so.policy = "first"
    sess = ort.InferenceSession(rnn_bytes(), so, providers=providers)
    b = sess.io_binding()
    b.bind_cpu_input("state_in", np.zeros((1, H), np.float32))
    b.bind_output("y")
    b.bind_output("state_out", "device")
    want_ys, want_state = expected()
    on_device = providers[0] == "opencl"
    for t in range(STEPS):
        b.bind_cpu_input("x", XS[t])
        sess.run_with_iobinding(b)
        y, state = b.get_outputs()
        np.testing.assert_allclose(y.numpy(), want_ys[t], rtol=1e-4, atol=1e-4)
        b.bind_ortvalue_input("state_in", state)
        copies = state_copies(sess.profile())
        assert len(copies) == (1 if t == 0 and on_device else 0), copies
    assert state.device_name() == ("opencl" if on_device else "cpu")
    assert state.shape() == [1, H]
    np.testing.assert_allclose(state.numpy(), want_state, rtol=1e-4, atol=1e-4)
    y_host, state_host = b.copy_outputs_to_cpu()
    np.testing.assert_allclose(state_host, want_state, rtol=1e-4, atol=1e-4)


def test_misuse():
    sess = ort.InferenceSession(rnn_bytes(), providers=["reference"])
    other = ort.InferenceSession(rnn_bytes(), providers=["reference"])
    b, b2 = sess.io_binding(), other.io_binding()
    with pytest.raises(ort.InvalidArgument, match="no input 'nope'"):
        b.bind_cpu_input("nope", XS[0])
    with pytest.raises(ort.InvalidArgument, match="dimension 1 must be 6"):
        b.bind_cpu_input("x", np.zeros((1, 7), np.float32))
    with pytest.raises(ort.InvalidArgument, match="no output 'nope'"):
        b.bind_output("nope")
    b.bind_cpu_input("x", XS[0])
    with pytest.raises(ort.InvalidArgument, match="'state_in' is not bound"):
        sess.run_with_iobinding(b)
    for bb in (b, b2):
        bb.bind_cpu_input("x", XS[0])
        bb.bind_cpu_input("state_in", np.zeros((1, H), np.float32))
        bb.bind_output("state_out", "device")
    other.run_with_iobinding(b2)
    (foreign,) = b2.get_outputs()
    with pytest.raises(ort.InvalidArgument, match="another session"):
        b.bind_ortvalue_input("state_in", foreign)
    with pytest.raises(ort.NotSupported):
        b.bind_output("y", "cuda", 0, np.float32, [1, O], 12345)
    b.clear_binding_outputs()
    sess.run_with_iobinding(b)  # inputs still bound, no outputs
    assert b.get_outputs() == []
