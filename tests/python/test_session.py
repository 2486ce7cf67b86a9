"""tessera.InferenceSession: ONNX Runtime's API shape, values in and out,
errors. Every expected value is computed here with numpy."""
import gc
import json
import os

import numpy as np
import pytest
from onnx import TensorProto, helper

import tessera
import tessera as ort  # the way users will write it

import models

RNG = np.random.default_rng(7)
W = RNG.standard_normal((4, 3)).astype(np.float32)
B = RNG.standard_normal(3).astype(np.float32)


def expected_mlp(x):
    mm = x.astype(np.float32) @ W
    return np.maximum(mm + B, 0), mm


@pytest.fixture(scope="module")
def mlp_bytes():
    return models.mlp(W, B)


@pytest.fixture(scope="module")
def sess(mlp_bytes):
    return ort.InferenceSession(mlp_bytes, providers=["reference"])


def test_inputs_and_outputs(sess):
    (x,) = sess.get_inputs()
    assert (x.name, x.type, x.shape) == ("x", "tensor(float)", ["batch", 4])
    y, mm = sess.get_outputs()
    assert (y.name, y.type, y.shape) == ("y", "tensor(float)", ["batch", 3])
    assert mm.name == "mm"
    assert isinstance(x, ort.NodeArg)


def test_run_all_outputs(sess):
    x = RNG.standard_normal((5, 4)).astype(np.float32)
    y, mm = sess.run(None, {"x": x})
    ey, emm = expected_mlp(x)
    np.testing.assert_allclose(y, ey, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(mm, emm, rtol=1e-5, atol=1e-6)
    assert y.dtype == np.float32 and y.shape == (5, 3)
    # [] is every output too, as in ONNX Runtime
    y2, _ = sess.run([], {"x": x})
    np.testing.assert_array_equal(y, y2)


def test_run_named_outputs(sess):
    x = RNG.standard_normal((2, 4)).astype(np.float32)
    (mm,) = sess.run(["mm"], {"x": x})
    np.testing.assert_allclose(mm, expected_mlp(x)[1], rtol=1e-5, atol=1e-6)
    mm2, y = sess.run(("mm", "y"), {"x": x})
    np.testing.assert_allclose(y, expected_mlp(x)[0], rtol=1e-5, atol=1e-6)


def test_outputs_are_numpy_over_runtime_buffers(sess):
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    y, _ = sess.run(None, {"x": x})
    # adopted, not copied: the array does not own its data; its base holds the value
    assert not y.flags.owndata
    assert type(y.base).__name__ == "_Value"
    assert y.flags.c_contiguous and y.flags.writeable
    y += 1  # the caller owns it
    np.testing.assert_allclose(y, expected_mlp(x)[0] + 1, rtol=1e-5, atol=1e-6)


def test_outputs_outlive_the_session(mlp_bytes):
    s = ort.InferenceSession(mlp_bytes, providers=["reference"])
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    y, _ = s.run(None, {"x": x})
    del s
    gc.collect()
    np.testing.assert_allclose(y, expected_mlp(x)[0], rtol=1e-5, atol=1e-6)


def test_inputs_not_contiguous_or_not_arrays(sess):
    big = RNG.standard_normal((6, 8)).astype(np.float32)
    x = big[::2, ::2]  # strided view: copied for the run
    assert not x.flags.c_contiguous
    np.testing.assert_allclose(sess.run(["y"], {"x": x})[0], expected_mlp(x)[0], rtol=1e-5, atol=1e-6)
    f = np.asfortranarray(RNG.standard_normal((3, 4)).astype(np.float32))
    np.testing.assert_allclose(sess.run(["y"], {"x": f})[0], expected_mlp(f)[0], rtol=1e-5, atol=1e-6)
    swapped = RNG.standard_normal((2, 4)).astype(">f4")  # big-endian
    np.testing.assert_allclose(sess.run(["y"], {"x": swapped})[0], expected_mlp(swapped)[0], rtol=1e-5, atol=1e-6)
    nested = [[1.0, -2.0, 3.0, 0.5]]  # a list takes the declared type
    np.testing.assert_allclose(sess.run(["y"], {"x": nested})[0],
                               expected_mlp(np.array(nested, np.float32))[0], rtol=1e-5, atol=1e-6)
    # the caller's arrays are not written
    before = big.copy()
    sess.run(None, {"x": big[:, :4].copy()})
    np.testing.assert_array_equal(big, before)


def test_inputs_read_in_place():
    # numpy's allocations are traced by tracemalloc: a C-contiguous float32
    # input costs no copy (peak far below its 4 MiB), a Fortran-order one a
    # whole copy, made for the run
    import tracemalloc
    s = ort.InferenceSession(models.unary("Relu", TensorProto.FLOAT, shape=(1024, 1024)), providers=["reference"])
    x = RNG.standard_normal((1024, 1024)).astype(np.float32)
    f = np.asfortranarray(x)
    s.run(None, {"x": x})
    peaks = []
    for a in (x, f):
        tracemalloc.start()
        try:
            (y,) = s.run(None, {"x": a})
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
        np.testing.assert_array_equal(y, np.maximum(x, 0))
        del y
    assert peaks[0] < 64 * 1024, peaks
    assert peaks[1] >= x.nbytes, peaks


def test_input_read_in_place_is_unchanged(sess):
    x = RNG.standard_normal((4, 4)).astype(np.float32)
    keep = x.copy()
    sess.run(None, {"x": x})
    np.testing.assert_array_equal(x, keep)


def test_model_as_path_bytes_and_modelproto(tmp_path, mlp_bytes):
    import onnx
    p = tmp_path / "mlp.onnx"
    p.write_bytes(mlp_bytes)
    x = RNG.standard_normal((2, 4)).astype(np.float32)
    want = expected_mlp(x)[0]
    for model in (str(p), p, mlp_bytes, bytearray(mlp_bytes), onnx.load_from_string(mlp_bytes)):
        s = ort.InferenceSession(model, providers=["reference"])
        np.testing.assert_allclose(s.run(["y"], {"x": x})[0], want, rtol=1e-5, atol=1e-6)


def test_errors_carry_tessera_code_and_message(sess, tmp_path):
    x64 = np.zeros((2, 4), np.float64)
    with pytest.raises(ort.InvalidArgument) as e:
        sess.run(None, {"x": x64})
    assert e.value.code == 1 and e.value.code_name == "INVALID_ARGUMENT"
    assert "input 'x' must be float, got double" in str(e.value)
    assert e.value.message == str(e.value)
    assert isinstance(e.value, ort.TesseraError) and isinstance(e.value, ValueError)
    assert isinstance(e.value, RuntimeError)
    with pytest.raises(ort.InvalidArgument, match="not given"):
        sess.run(None, {})
    with pytest.raises(ort.InvalidArgument, match="no input 'nope'"):
        sess.run(None, {"x": np.zeros((1, 4), np.float32), "nope": np.zeros(1, np.float32)})
    with pytest.raises(ort.InvalidArgument, match="no input 'other'"):
        sess.run(None, {"x": np.zeros((1, 4), np.float32), "other": None})
    with pytest.raises(ort.InvalidArgument, match="rank"):
        sess.run(None, {"x": np.zeros(4, np.float32)})
    with pytest.raises(ort.InvalidArgument, match="no output 'zz'"):
        sess.run(["zz"], {"x": np.zeros((1, 4), np.float32)})
    with pytest.raises(ort.InvalidModel) as e:
        ort.InferenceSession(b"this is not a model")
    assert e.value.code == 2
    with pytest.raises(ort.TesseraError) as e:
        ort.InferenceSession(str(tmp_path / "missing.onnx"))
    assert e.value.code in (1, 5) and "missing.onnx" in str(e.value)
    with pytest.raises(TypeError):
        sess.run(None, [np.zeros((1, 4), np.float32)])
    with pytest.raises(TypeError):
        sess.run("y", {"x": np.zeros((1, 4), np.float32)})


def test_unknown_provider(mlp_bytes):
    with pytest.raises(ort.TesseraError) as e:
        ort.InferenceSession(mlp_bytes, providers=["no_such_provider"])
    assert "no_such_provider" in str(e.value)


def test_providers(sess, mlp_bytes):
    assert sess.get_providers() == ["reference", "core"]
    avail = ort.get_available_providers()
    assert "reference" in avail
    # ONNX Runtime's names are not Tessera's: dropped, the default list is used
    s = ort.InferenceSession(mlp_bytes, providers=["CPUExecutionProvider"])
    assert set(s.get_providers()) <= set(avail) | {"core"}
    s = ort.InferenceSession(mlp_bytes, providers=[("reference", {})])
    assert s.get_providers()[0] == "reference"


def test_provider_options_reach_the_provider(mlp_bytes):
    with pytest.raises(ort.TesseraError) as e:
        ort.InferenceSession(mlp_bytes, providers=["reference"], provider_options=[{"no_such_key": "1"}])
    assert "no_such_key" in str(e.value)


def test_session_options(mlp_bytes):
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.log_severity_level = 3
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL  # accepted
    so.add_free_dimension_override_by_name("batch", 2)
    s = ort.InferenceSession(mlp_bytes, sess_options=so, providers=["reference"])
    assert s.get_session_options() is so
    x = RNG.standard_normal((2, 4)).astype(np.float32)
    np.testing.assert_allclose(s.run(["y"], {"x": x})[0], expected_mlp(x)[0], rtol=1e-5, atol=1e-6)
    with pytest.raises(ort.InvalidArgument):  # batch is fixed to 2 now
        s.run(["y"], {"x": np.zeros((3, 4), np.float32)})
    off = ort.SessionOptions()
    off.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    assert ("fold_bytes", 1) in off._to_dict()["limits"]
    assert all(k != "fold_bytes" for k, _ in so._to_dict()["limits"])
    s = ort.InferenceSession(mlp_bytes, sess_options=off, providers=["reference"])
    np.testing.assert_allclose(s.run(["y"], {"x": x})[0], expected_mlp(x)[0], rtol=1e-5, atol=1e-6)
    bad = ort.SessionOptions()
    bad.policy = "fastest"
    with pytest.raises(ort.InvalidArgument, match="policy"):
        ort.InferenceSession(mlp_bytes, sess_options=bad)
    with pytest.raises(AttributeError):
        so.no_such_option = 1


def test_observe_all_and_assignments(mlp_bytes):
    so = ort.SessionOptions()
    so.observe_all = True
    so.assignments = {"Relu": "reference"}
    so.policy = "first"
    s = ort.InferenceSession(mlp_bytes, sess_options=so, providers=["reference"])
    x = RNG.standard_normal((2, 4)).astype(np.float32)
    (pre,) = s.run(["pre"], {"x": x})  # an intermediate value
    np.testing.assert_allclose(pre, expected_mlp(x)[1] + B, rtol=1e-5, atol=1e-6)
    so.assignments = {"NoSuchNode": "reference"}
    with pytest.raises(ort.TesseraError):
        ort.InferenceSession(mlp_bytes, sess_options=so, providers=["reference"])


def test_limits(mlp_bytes):
    so = ort.SessionOptions()
    so.limits = {"tensor_bytes": 16}
    s = ort.InferenceSession(mlp_bytes, sess_options=so, providers=["reference"])
    with pytest.raises(ort.NoMemory) as e:
        s.run(None, {"x": np.zeros((64, 4), np.float32)})
    assert "tensor_bytes" in str(e.value) and isinstance(e.value, MemoryError)


def test_modelmeta(sess):
    m = sess.get_modelmeta()
    assert m.producer_name == "tessera-tests"
    assert m.graph_name == "mlp_graph"
    assert m.description == "a small MLP"
    assert m.version == 7
    assert m.custom_metadata_map == {}
    assert m.opsets[""] == 17


def test_profiling(mlp_bytes, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    so = ort.SessionOptions()
    so.enable_profiling = True
    so.profile_file_prefix = "prof"
    s = ort.InferenceSession(mlp_bytes, sess_options=so, providers=["reference"])
    for _ in range(3):
        s.run(None, {"x": np.ones((2, 4), np.float32)})
    path = s.end_profiling()
    assert os.path.basename(path).startswith("prof_") and path.endswith(".json")
    with open(path) as f:
        events = json.load(f)
    pieces = [e for e in events if e.get("ph") == "X"]
    assert len(pieces) >= 3  # at least one piece per run
    assert all("dur" in e for e in pieces)
    plain = ort.InferenceSession(mlp_bytes, providers=["reference"])
    assert plain.end_profiling() == ""


def test_assignment(sess):
    a = sess.assignment()
    nodes = sorted(n for p in a["pieces"] for n in p["nodes"])
    assert nodes == ["add", "matmul", "relu"]
    assert {p["provider"] for p in a["pieces"]} == {"reference"}
    assert "matmul" in sess.assignment_text()
    assert sess.assignment_dot().lstrip().startswith("digraph")
    info = sess.nodes()
    assert [n["name"] for n in info] == ["matmul", "add", "relu"]
    assert all(n["provider"] == "reference" for n in info)


def test_element_types():
    cases = [
        (TensorProto.DOUBLE, np.float64), (TensorProto.FLOAT16, np.float16), (TensorProto.INT8, np.int8),
        (TensorProto.UINT8, np.uint8), (TensorProto.INT16, np.int16), (TensorProto.UINT16, np.uint16),
        (TensorProto.INT32, np.int32), (TensorProto.INT64, np.int64), (TensorProto.UINT32, np.uint32),
        (TensorProto.UINT64, np.uint64),
    ]
    for elem, dt in cases:
        s = ort.InferenceSession(models.binary("Add", elem), providers=["reference"])
        a = (np.arange(6).reshape(2, 3) % 5).astype(dt)
        b = (np.arange(6).reshape(2, 3)[::-1] % 3).astype(dt)
        (y,) = s.run(None, {"a": a, "b": b})
        assert y.dtype == dt, (elem, y.dtype)
        np.testing.assert_array_equal(y, a + b)
    s = ort.InferenceSession(models.binary("And", TensorProto.BOOL), providers=["reference"])
    a = np.array([[True, False, True], [False, True, True]])
    b = np.array([[True, True, False], [False, True, True]])
    (y,) = s.run(None, {"a": a, "b": b})
    assert y.dtype == np.bool_
    np.testing.assert_array_equal(y, a & b)


def test_bfloat16_as_float32():
    # float -> bfloat16 -> back as float32 (exact widening), as onnx's
    # numpy_helper gives bfloat16; rounding to nearest even done here by hand
    s = ort.InferenceSession(models.unary("Cast", TensorProto.FLOAT, TensorProto.BFLOAT16, to=TensorProto.BFLOAT16),
                             providers=["reference"])
    x = np.array([[1.0, -2.5, 3.14159], [1e-3, 65504.0, -0.0]], np.float32)
    (y,) = s.run(None, {"x": x})
    assert y.dtype == np.float32
    u = x.view(np.uint32).astype(np.uint64)
    bits = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    expect = (bits.astype(np.uint32) << 16).view(np.float32)
    np.testing.assert_array_equal(y, expect)
    # bfloat16 inputs: float32 values (rounded) or uint16 bits
    back = ort.InferenceSession(models.unary("Cast", TensorProto.BFLOAT16, TensorProto.FLOAT, to=TensorProto.FLOAT),
                                providers=["reference"])
    np.testing.assert_array_equal(back.run(None, {"x": x})[0], expect)
    np.testing.assert_array_equal(back.run(None, {"x": bits})[0], expect)


def test_strings():
    s = ort.InferenceSession(models.string_model(), providers=["reference"])
    x = np.array(["abc", "Mixed Case", "x y"], dtype=object)
    (y,) = s.run(None, {"x": x})
    assert y.dtype == object
    assert list(y) == [v.upper() for v in x]
    ident = ort.InferenceSession(models.unary("Identity", TensorProto.STRING, shape=(2, 2)), providers=["reference"])
    u = np.array([["Grüße", ""], ["日本", "a\x00b"]], dtype=object)  # UTF-8 and an embedded NUL
    (v,) = ident.run(None, {"x": u})
    assert v.shape == (2, 2) and v.tolist() == u.tolist()
    (y2,) = s.run(None, {"x": np.array(["a", "b", "c"])})  # numpy unicode arrays too
    assert list(y2) == ["A", "B", "C"]
    assert s.get_inputs()[0].type == "tensor(string)"


def test_sequences():
    s = ort.InferenceSession(models.sequence_model(), providers=["reference"])
    types = {o.name: o.type for o in s.get_outputs()}
    assert types["seq"] == "seq(tensor(float))"
    assert s.get_inputs()[2].type == "seq(tensor(float))"
    a = np.array([1, 2], np.float32)
    b = np.array([3, 4, 5], np.float32)
    items = [np.full((2, 2), 7, np.float32), np.zeros(3, np.float32), np.ones(1, np.float32)]
    seq, n, first = s.run(None, {"a": a, "b": b, "s_in": items})
    assert isinstance(seq, list) and len(seq) == 2
    np.testing.assert_array_equal(seq[0], a)
    np.testing.assert_array_equal(seq[1], b)
    assert int(n) == len(items)
    np.testing.assert_array_equal(first, items[0])


def test_optionals():
    s = ort.InferenceSession(models.optional_model(), providers=["reference"])
    assert s.get_inputs()[0].type == "optional(tensor(float))"
    x = np.array([1.5, -2], np.float32)
    has, wrapped = s.run(None, {"o": None, "x": x})
    assert bool(has) is False
    np.testing.assert_array_equal(wrapped, x)
    has, _ = s.run(None, {"o": np.array([0, 0], np.float32), "x": x})
    assert bool(has) is True


def test_tensor_onnx_round_trip():
    from onnx import numpy_helper
    import onnx
    a = RNG.standard_normal((2, 3)).astype(np.float32)
    raw = tessera._tessera.tensor_to_onnx(a, "w")
    t = onnx.TensorProto()
    t.ParseFromString(raw)
    assert t.name == "w"
    np.testing.assert_array_equal(numpy_helper.to_array(t), a)
    name, back = tessera._tessera.tensor_from_onnx(numpy_helper.from_array(a, "v").SerializeToString())
    assert name == "v"
    np.testing.assert_array_equal(back, a)


def test_version():
    assert tessera.__version__.count(".") == 2
    assert ort.get_device() in ("CPU", "CPU-GPU")


def test_read_only_empty_and_scalar_inputs(sess):
    ro = np.frombuffer(RNG.standard_normal(8).astype(np.float32).tobytes(), np.float32).reshape(2, 4)
    assert not ro.flags.writeable  # read in place all the same
    np.testing.assert_allclose(sess.run(["y"], {"x": ro})[0], expected_mlp(ro)[0], rtol=1e-5, atol=1e-6)
    y, mm = sess.run(None, {"x": np.zeros((0, 4), np.float32)})
    assert y.shape == (0, 3) and mm.shape == (0, 3) and y.dtype == np.float32
    neg = ort.InferenceSession(models.unary("Neg", TensorProto.FLOAT, shape=()), providers=["reference"])
    for x in (np.float32(3), 2.5, np.array(1.5, np.float32)):
        (y,) = neg.run(None, {"x": x})
        assert y.shape == () and y.dtype == np.float32 and y == -np.float32(x)


def slow_pool_model():
    """A MaxPool whose 512x512 window (padded) covers the whole input for
    each of 1023x1023 outputs: minutes on the reference provider."""
    g = helper.make_graph(
        [helper.make_node("MaxPool", ["x"], ["y"], name="bigpool", kernel_shape=[512, 512],
                          pads=[511, 511, 511, 511])],
        "slow", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 512, 512])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 1023, 1023])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString()


def test_run_options_deadline_and_terminate(sess):
    slow = ort.InferenceSession(slow_pool_model(), providers=["reference"])
    x = np.zeros((1, 1, 512, 512), np.float32)
    ro = ort.RunOptions()
    ro.timeout_ms = 100
    with pytest.raises(tessera.Cancelled) as e:
        slow.run(None, {"x": x}, run_options=ro)
    assert e.value.code_name == "CANCELLED" and "bigpool" in str(e.value)
    # terminate from another thread while the run holds no GIL
    import threading
    ro2 = ort.RunOptions()
    ro2.run_tag = "job 7"
    assert ro2.run_tag == "job 7"
    timer = threading.Timer(0.1, lambda: setattr(ro2, "terminate", True))
    timer.start()
    with pytest.raises(tessera.Cancelled):
        slow.run(None, {"x": x}, ro2)
    timer.join()
    assert ro2.terminate
    # the flag stays until cleared; then runs complete, values unchanged
    xs = RNG.standard_normal((2, 4)).astype(np.float32)
    with pytest.raises(tessera.Cancelled):
        sess.run(None, {"x": xs}, ro2)
    ro2.terminate = False
    y, mm = sess.run(None, {"x": xs}, ro2)
    want_y, want_mm = expected_mlp(xs)
    np.testing.assert_allclose(y, want_y, rtol=1e-5, atol=1e-6)
    with pytest.raises(tessera.InvalidArgument):
        ro.timeout_ms = -5


def _attention_model(qs, ks, vs, attrs, past=None):
    f = TensorProto.FLOAT
    ins = [helper.make_tensor_value_info(n, f, s) for n, s in (("q", qs), ("k", ks), ("v", vs))]
    names = ["q", "k", "v"]
    if past:
        ins += [helper.make_tensor_value_info("pk", f, past[0]), helper.make_tensor_value_info("pv", f, past[1])]
        names += ["", "pk", "pv"]
    outs = ["y", "present_k", "present_v", "qk"]
    g = helper.make_graph([helper.make_node("Attention", names, outs, **attrs)], "attention", ins,
                          [helper.make_tensor_value_info(o, f, None) for o in outs])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 23)]).SerializeToString()


# expected by the ONNX spec: Y in Q's layout with V's head size;
# present_* [B, kv_heads, past + S_kv, head]; qk [B, q_heads, S_q, past + S_kv]
@pytest.mark.parametrize("qs,ks,vs,attrs,past,want", [
    ([2, 3, 4, 8], [2, 3, 6, 8], [2, 3, 6, 10], {}, None,
     [[2, 3, 4, 10], [2, 3, 6, 8], [2, 3, 6, 10], [2, 3, 4, 6]]),
    ([2, 4, 32], [2, 6, 16], [2, 6, 20], {"q_num_heads": 4, "kv_num_heads": 2}, None,
     [[2, 4, 40], [2, 2, 6, 8], [2, 2, 6, 10], [2, 4, 4, 6]]),
    ([2, 3, 4, 8], [2, 3, 6, 8], [2, 3, 6, 10], {}, ([2, 3, 5, 8], [2, 3, 5, 10]),
     [[2, 3, 4, 10], [2, 3, 11, 8], [2, 3, 11, 10], [2, 3, 4, 11]]),
])
def test_attention_shapes_inferred(qs, ks, vs, attrs, past, want):
    """Attention's outputs declared without shapes: the session infers them
    (core/shape_ops_rnn.c), and a run gives exactly those shapes."""
    s = ort.InferenceSession(_attention_model(qs, ks, vs, attrs, past), providers=["reference"])
    feed = {"q": RNG.random(qs, dtype=np.float32), "k": RNG.random(ks, dtype=np.float32),
            "v": RNG.random(vs, dtype=np.float32)}
    if past:
        feed.update({"pk": RNG.random(past[0], dtype=np.float32), "pv": RNG.random(past[1], dtype=np.float32)})
    assert [o.shape for o in s.get_outputs()] == want
    assert [list(r.shape) for r in s.run(None, feed)] == want


def test_bitcast_type_and_shape_inferred():
    """BitCast's output declared without type or shape: int32 [2, 3] from
    float32 [2, 3] (same width, so the same shape), and the bits kept."""
    g = helper.make_graph([helper.make_node("BitCast", ["x"], ["y"], to=TensorProto.INT32)], "bitcast",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                          [helper.make_tensor_value_info("y", TensorProto.UNDEFINED, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 26)]).SerializeToString()
    s = ort.InferenceSession(m, providers=["reference"])
    (y,) = s.get_outputs()
    assert (y.type, y.shape) == ("tensor(int32)", [2, 3])
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    (got,) = s.run(None, {"x": x})
    np.testing.assert_array_equal(got, x.view(np.int32))
