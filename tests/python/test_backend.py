"""onnx's own backend test harness (onnx.backend.test.BackendTest, onnx
1.12 from Debian) run against tessera.backend, the way other runtimes run
it: one unittest case per ONNX test case and device.

The cases come from the onnx 1.12 suite that tools/gen_onnx_suite.sh
generates (Debian's python3-onnx ships the generators, not the data):
TESSERA_ONNX112_SUITE names it (the python_backend ctest generates it into
the build tree). Its node and simple cases run; the real-model cases need a
download and are excluded. The CUDA variants skip (CPU only).

conftest.py compares the cases that pass with backend_expected_pass.txt:
the test session fails when one of those stops passing.
"""
import os
import warnings

import numpy

# onnx 1.12 still uses numpy aliases that numpy 1.24 removed (np.object in
# assert_similar_outputs, ...): put them back before onnx is imported.
for _alias, _t in (("float", float), ("int", int), ("bool", bool), ("object", object),
                   ("str", str), ("complex", complex)):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if not hasattr(numpy, _alias):
            setattr(numpy, _alias, _t)

import pytest  # noqa: E402

onnx = pytest.importorskip("onnx")
import onnx.backend.test  # noqa: E402
import onnx.backend.test.runner as _runner  # noqa: E402
from onnx.backend.test.loader import load_model_tests  # noqa: E402

import tessera.backend  # noqa: E402

SUITE = os.environ.get("TESSERA_ONNX112_SUITE")
if not SUITE or not os.path.isdir(os.path.join(SUITE, "node")):
    pytest.skip("TESSERA_ONNX112_SUITE does not name a generated onnx 1.12 suite "
                "(tools/ensure_onnx112_suite.sh DIR)", allow_module_level=True)

KINDS = ("node", "simple", "pytorch-converted", "pytorch-operator")  # 'real' needs a download


def _load_model_tests(data_dir=None, kind=None):
    # The runner reads onnx's own data directory, which Debian does not ship:
    # read the generated suite instead.
    if kind not in KINDS or not os.path.isdir(os.path.join(SUITE, kind)):
        return []
    return load_model_tests(SUITE, kind)


_runner.load_model_tests = _load_model_tests

# TESSERA_BACKEND_PROVIDERS (comma-separated) picks the providers; the ctest
# uses "reference", as the CLI's conformance test does, so the two counts
# compare. Unset: every plugin found, as InferenceSession's default.
_PROVIDERS = [p for p in os.environ.get("TESSERA_BACKEND_PROVIDERS", "").split(",") if p] or None


class Backend(tessera.backend.TesseraBackend):
    @classmethod
    def prepare(cls, model, device="CPU", **kwargs):
        kwargs.setdefault("providers", _PROVIDERS)
        return super().prepare(model, device, **kwargs)


backend_test = onnx.backend.test.BackendTest(Backend, __name__)
globals().update(backend_test.test_cases)
