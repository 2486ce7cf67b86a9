"""Chains of models from Python: SessionOptions.add_stage, .connect,
.set_stage_prefix and tessera.compose_models (tsr_session_options_add_stage
and friends underneath).

A pre-processing model (Cast, NHWC -> NCHW, antialiased 2x linear Resize,
CenterCropPad, normalize) chained before a classifier (Conv, Relu,
GlobalAveragePool, Flatten, Gemm, Softmax) must give what numpy computes
for the two (the antialiased 2x downscale is the [1,3,3,1]/8 filter with
edges clamped) and what the session over onnx.compose.merge_models' model
gives, on the reference provider and, where the plugin is built, on
onednn,reference."""
import numpy as np
import pytest
import onnx
import onnx.compose
from onnx import TensorProto, helper, numpy_helper

import tessera

RNG = np.random.default_rng(19)
MEAN = np.array([0.485, 0.456, 0.406], np.float32) * 255
STD = np.array([0.229, 0.224, 0.225], np.float32) * 255
CLS = {"W": RNG.standard_normal((4, 3, 3, 3)).astype(np.float32) * 0.5,
       "B": RNG.standard_normal(4).astype(np.float32) * 0.1,
       "G": RNG.standard_normal((4, 5)).astype(np.float32),
       "GB": RNG.standard_normal(5).astype(np.float32) * 0.1}
IMAGE = RNG.integers(0, 256, (1, 16, 16, 3), dtype=np.uint8)

PROVIDER_SETS = [["reference"]]
if "onednn" in tessera.get_available_providers():
    PROVIDER_SETS.append(["onednn", "reference"])


# --- numpy ------------------------------------------------------------------

def downscale2(a, axis):
    n = a.shape[axis]
    i = np.arange(n // 2)
    take = lambda k: np.take(a, np.clip(k, 0, n - 1), axis=axis)
    return (take(2 * i - 1) + 3 * take(2 * i) + 3 * take(2 * i + 1) + take(2 * i + 2)) / 8.0


def pre_np(image):
    x = image.astype(np.float64).transpose(0, 3, 1, 2)
    x = downscale2(downscale2(x, 2), 3)[:, :, 1:7, 1:7]  # 16 -> 8, centre 6x6
    return (x - MEAN.reshape(1, 3, 1, 1)) / STD.reshape(1, 3, 1, 1)


def cls_np(x):
    n, c, h, w = x.shape
    xp = np.zeros((n, c, h + 2, w + 2))
    xp[:, :, 1:-1, 1:-1] = x
    y = sum(np.einsum("nchw,oc->nohw", xp[:, :, i:i + h, j:j + w], CLS["W"][:, :, i, j])
            for i in range(3) for j in range(3)) + CLS["B"].reshape(1, -1, 1, 1)
    logits = np.maximum(y, 0).mean(axis=(2, 3)) @ CLS["G"] + CLS["GB"]
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


# --- models -----------------------------------------------------------------

def merge(m1, m2, io_map, **kw):
    """onnx.compose.merge_models without its closing onnx.checker call:
    onnx 1.12's checker does not know opset 18's Resize antialias."""
    saved = onnx.compose.checker.check_model
    try:
        onnx.compose.checker.check_model = lambda *a, **k: None
        return onnx.compose.merge_models(m1, m2, io_map, **kw)
    finally:
        onnx.compose.checker.check_model = saved


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def model(nodes, name, inputs, outputs, inits):
    g = helper.make_graph(nodes, name, inputs, outputs,
                          [numpy_helper.from_array(v, k) for k, v in inits.items()])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)


def make_pre():
    """image -> (brightness, pixels): 'brightness' (the mean of the image)
    first, so feeding the classifier by position would pick it."""
    f = TensorProto.FLOAT
    return model(
        [helper.make_node("Cast", ["image"], ["image_f"], to=f),
         helper.make_node("ReduceMean", ["image_f"], ["brightness"], keepdims=0),
         helper.make_node("Transpose", ["image_f"], ["nchw"], perm=[0, 3, 1, 2]),
         helper.make_node("Resize", ["nchw", "", "scales"], ["small"], mode="linear", antialias=1),
         helper.make_node("CenterCropPad", ["small", "crop"], ["cropped"], axes=[2, 3]),
         helper.make_node("Sub", ["cropped", "mean"], ["centred"]),
         helper.make_node("Div", ["centred", "std"], ["pixels"])],
        "pre", [vi("image", TensorProto.UINT8, [1, 16, 16, 3])],
        [vi("brightness", f, []), vi("pixels", f, [1, 3, 6, 6])],
        {"scales": np.array([1, 1, 0.5, 0.5], np.float32), "crop": np.array([6, 6], np.int64),
         "mean": MEAN.reshape(1, 3, 1, 1), "std": STD.reshape(1, 3, 1, 1)})


def make_cls():
    f = TensorProto.FLOAT
    return model(
        [helper.make_node("Conv", ["x", "W", "B"], ["conv"], pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["conv"], ["act"]),
         helper.make_node("GlobalAveragePool", ["act"], ["pooled"]),
         helper.make_node("Flatten", ["pooled"], ["flat"]),
         helper.make_node("Gemm", ["flat", "G", "GB"], ["logits"]),
         helper.make_node("Softmax", ["logits"], ["probs"], axis=-1)],
        "cls", [vi("x", f, [1, 3, 6, 6])], [vi("probs", f, [1, 5])], CLS)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("compose")
    pre, cls = make_pre(), make_cls()
    onnx.save(pre, str(d / "pre.onnx"))
    onnx.save(cls, str(d / "cls.onnx"))
    return {"pre": str(d / "pre.onnx"), "cls": str(d / "cls.onnx"), "pre_model": pre, "cls_model": cls}


def chained(files, providers, prefixes=None, cls_as_bytes=False):
    opts = tessera.SessionOptions()
    stage = opts.add_stage(files["cls_model"] if cls_as_bytes else files["cls"])
    assert stage == 1
    opts.connect(stage, "pixels", "x")  # names as in their own files
    for k, p in (prefixes or {}).items():
        opts.set_stage_prefix(k, p)
    return tessera.InferenceSession(files["pre"], opts, providers=providers)


def run_all(sess, feed):
    return dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feed)))


# --- tests ------------------------------------------------------------------

@pytest.mark.parametrize("providers", PROVIDER_SETS, ids=",".join)
def test_chain_equals_numpy_and_merge_models(files, providers):
    sess = chained(files, providers)
    assert [i.name for i in sess.get_inputs()] == ["image"]
    # stage 0's unconnected output first, then the last stage's
    assert [o.name for o in sess.get_outputs()] == ["brightness", "probs"]
    got = run_all(sess, {"image": IMAGE})
    np.testing.assert_allclose(got["probs"], cls_np(pre_np(IMAGE)), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(got["brightness"], IMAGE.astype(np.float64).mean(), rtol=1e-5)

    merged = merge(files["pre_model"], files["cls_model"], io_map=[("pixels", "x")])
    ref = tessera.InferenceSession(merged.SerializeToString(), providers=providers)
    assert [o.name for o in ref.get_outputs()] == [o.name for o in sess.get_outputs()]
    want = run_all(ref, {"image": IMAGE})
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("providers", PROVIDER_SETS, ids=",".join)
def test_prefixes_as_onnx_compose(files, providers):
    sess = chained(files, providers, prefixes={0: "pre/", 1: "cls/"}, cls_as_bytes=True)
    merged = merge(files["pre_model"], files["cls_model"],
                                       io_map=[("pixels", "x")], prefix1="pre/", prefix2="cls/")
    ref = tessera.InferenceSession(merged.SerializeToString(), providers=providers)
    assert [i.name for i in sess.get_inputs()] == [i.name for i in ref.get_inputs()] == ["pre/image"]
    assert [o.name for o in sess.get_outputs()] == [o.name for o in ref.get_outputs()] == [
        "pre/brightness", "cls/probs"]
    got, want = run_all(sess, {"pre/image": IMAGE}), run_all(ref, {"pre/image": IMAGE})
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(got["cls/probs"], cls_np(pre_np(IMAGE)), rtol=1e-4, atol=1e-6)


def test_positional_feeding(files, tmp_path):
    """No connection: stage 1's inputs take stage 0's outputs in order."""
    only_pixels = merge(  # pre with 'pixels' its only output
        files["pre_model"], model([helper.make_node("Identity", ["p"], ["pixels_out"])], "id",
                                  [vi("p", TensorProto.FLOAT, [1, 3, 6, 6])],
                                  [vi("pixels_out", TensorProto.FLOAT, [1, 3, 6, 6])], {}),
        io_map=[("pixels", "p")], outputs=["pixels_out"])
    path = str(tmp_path / "pre_one.onnx")
    onnx.save(only_pixels, path)
    opts = tessera.SessionOptions()
    opts.add_stage(files["cls"])
    sess = tessera.InferenceSession(path, opts, providers=["reference"])
    (probs,) = sess.run(None, {"image": IMAGE})
    np.testing.assert_allclose(probs, cls_np(pre_np(IMAGE)), rtol=1e-4, atol=1e-6)


def test_compose_models_writes_the_merge(files):
    opts = tessera.SessionOptions()
    opts.add_stage(files["cls"])
    opts.connect(1, "pixels", "x")
    m = onnx.load_model_from_string(tessera.compose_models(files["pre"], opts))
    want = merge(files["pre_model"], files["cls_model"], io_map=[("pixels", "x")])
    assert [i.name for i in m.graph.input] == [i.name for i in want.graph.input]
    assert [o.name for o in m.graph.output] == [o.name for o in want.graph.output]
    assert sorted(n.op_type for n in m.graph.node) == sorted(n.op_type for n in want.graph.node)
    (probs,) = tessera.InferenceSession(m, providers=["reference"]).run(["probs"], {"image": IMAGE})
    np.testing.assert_allclose(probs, cls_np(pre_np(IMAGE)), rtol=1e-4, atol=1e-6)
    # the model given as bytes, the stage as a ModelProto: the same model
    opts2 = tessera.SessionOptions()
    opts2.add_stage(files["cls_model"])
    opts2.connect(1, "pixels", "x")
    m2 = onnx.load_model_from_string(
        tessera.compose_models(files["pre_model"].SerializeToString(), opts2))
    assert [o.name for o in m2.graph.output] == [o.name for o in m.graph.output]


def test_errors_carry_the_c_message(files):
    opts = tessera.SessionOptions()
    with pytest.raises(tessera.InvalidArgument, match="stage 1 is not one of the stages added"):
        opts.connect(1, "pixels", "x")  # no stage yet
    opts.add_stage(files["cls"])
    with pytest.raises(tessera.InvalidArgument, match="stage 3 is not one of the stages added"):
        opts.connect(3, "pixels", "x")
    with pytest.raises(tessera.InvalidArgument, match="prefix for stage 2"):
        opts.set_stage_prefix(2, "p/")
    with pytest.raises(tessera.InvalidArgument, match="stage path is empty"):
        opts.add_stage("")
    with pytest.raises(tessera.InvalidArgument, match="a stage index must be 0 or more"):
        opts.connect(-1, "pixels", "x")
    assert opts.stages == [files["cls"]] and opts._links == [] and opts._prefixes == {}
    opts.connect(1, "nope", "x")  # names are checked when the files are read
    with pytest.raises(tessera.InvalidArgument, match="no stage before stage 1 .* has a graph output 'nope'"):
        tessera.InferenceSession(files["pre"], opts, providers=["reference"])
    clash = tessera.SessionOptions()
    clash.add_stage(files["pre"])  # the same names twice
    with pytest.raises(tessera.TesseraError, match="image"):
        tessera.InferenceSession(files["pre"], clash, providers=["reference"])
