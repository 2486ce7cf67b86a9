"""tessera.list_providers, tessera.compare (the `tessera compare --json`
command) and tessera.backend's Backend API outside the onnx harness."""
import os

import numpy as np
import pytest
from onnx import TensorProto, helper

import tessera
import tessera.backend as backend

import models

RNG = np.random.default_rng(11)
W = RNG.standard_normal((4, 3)).astype(np.float32)
B = RNG.standard_normal(3).astype(np.float32)


def test_list_providers():
    found = tessera.list_providers()
    names = [p["name"] for p in found]
    assert "reference" in names
    ref = found[names.index("reference")]
    assert ref["error"] is None and ref["abi_version"] >= 1
    assert os.path.exists(ref["path"])
    assert ref["devices"] and ref["devices"][0]["kind"] == "cpu" and ref["devices"][0]["memory"] == "host"
    assert set(tessera.get_available_providers()) <= set(tessera.get_all_providers())


def test_list_providers_extra_path_that_is_not_a_plugin(tmp_path):
    bogus = tmp_path / "libtessera_provider_bogus.so"
    bogus.write_bytes(b"not an ELF file")
    found = tessera.list_providers([str(bogus)])
    bad = [p for p in found if p["path"] and p["path"].endswith("libtessera_provider_bogus.so")]
    assert bad and bad[0]["error"]


@pytest.fixture(scope="module")
def cli():
    from tessera._tools import cli_path
    path = cli_path()
    if not path:
        pytest.skip("no tessera command found")
    return path


def test_compare_agree(cli, tmp_path):
    model = models.mlp(W, B)
    x = RNG.standard_normal((2, 4)).astype(np.float32)
    r = tessera.compare(model, providers=["reference", ["reference"]], inputs={"x": x}, dims={"batch": 2})
    assert r["baseline"] == "reference"
    (run,) = r["runs"]
    assert run["providers"] == "reference" and run["agree"] is True
    outs = {o["name"]: o for o in run["outputs"]}
    assert set(outs) == {"y", "mm"}
    assert outs["y"]["max_abs"] == 0 and outs["y"]["mismatches"] == 0 and outs["y"]["count"] == 6
    assert run["first_divergent_node"] is None


def test_compare_per_node_from_path(cli, tmp_path):
    p = tmp_path / "m.onnx"
    p.write_bytes(models.mlp(W, B))
    avail = tessera.get_available_providers()
    other = "onednn,reference" if "onednn" in avail else "reference"
    r = tessera.compare(str(p), providers=["reference", other], per_node=True, rtol=1e-3, atol=1e-4)
    assert r["rtol"] == pytest.approx(1e-3) and r["atol"] == pytest.approx(1e-4)
    (run,) = r["runs"]
    assert run["agree"] is True and run["first_divergent_node"] is None
    assert "differences_start" in run


def test_compare_usage_error(cli):
    with pytest.raises(tessera.InvalidArgument):
        tessera.compare(models.mlp(W, B), providers=["reference"])  # one set only


def test_backend_run_node():
    node = helper.make_node("Add", ["a", "b"], ["c"])
    a = RNG.standard_normal((2, 3)).astype(np.float32)
    b = RNG.standard_normal((2, 3)).astype(np.float32)
    (c,) = backend.run_node(node, [a, b])
    np.testing.assert_allclose(c, a + b, rtol=1e-6)
    out = backend.run_node(node, {"a": a, "b": b}, opset_version=13)
    np.testing.assert_allclose(out["c"], a + b, rtol=1e-6)
    node = helper.make_node("TopK", ["x", "k"], ["values", "indices"], axis=-1)
    x = np.array([[3, 1, 4, 1, 5]], np.float32)
    values, indices = backend.run_node(node, [x, np.array([2], np.int64)])
    np.testing.assert_array_equal(values, [[5, 4]])
    np.testing.assert_array_equal(indices, [[4, 2]])


def test_backend_prepare_and_run_model():
    import onnx
    model = onnx.load_from_string(models.mlp(W, B))
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    rep = backend.prepare(model, "CPU", providers=["reference"])
    y, mm = rep.run([x])
    np.testing.assert_allclose(y, np.maximum(x @ W + B, 0), rtol=1e-5, atol=1e-6)
    out = backend.run_model(model, {"x": x})
    np.testing.assert_allclose(out.mm, x @ W, rtol=1e-5, atol=1e-6)
    assert backend.supports_device("CPU") and not backend.supports_device("CUDA")
    with pytest.raises(RuntimeError):
        backend.prepare(model, "CUDA")
