"""Tessera from Python: ONNX Runtime's session API over Tessera's C API.

    import numpy as np
    import tessera as ort            # the common onnxruntime calls work as they are
    sess = ort.InferenceSession("model.onnx", providers=["onednn", "reference"])
    x = np.ones((1, 3, 224, 224), np.float32)
    (y,) = sess.run(None, {sess.get_inputs()[0].name: x})

Beyond ONNX Runtime's shape: ``session.assignment()`` (which provider runs
which node, as a dict), ``tessera.compare(...)`` (two provider sets, node by
node), ``tessera.list_providers()`` (the plugins found, with devices), and
``tessera.backend`` (onnx.backend.base.Backend), and chains of models
(``SessionOptions.add_stage``, ``.connect``, ``.set_stage_prefix``,
``tessera.compose_models``). See docs/python.md.
"""
from ._tessera import (  # noqa: F401  (the C extension)
    TesseraError,
    InvalidArgument,
    InvalidModel,
    NotSupported,
    NoMemory,
    IOFailure,
    ProviderError,
    RuntimeFailure,
    ABIError,
    Cancelled,
)
from . import _tessera
from ._session import (  # noqa: F401
    InferenceSession,
    SessionOptions,
    RunOptions,
    NodeArg,
    ModelMetadata,
    GraphOptimizationLevel,
    ExecutionMode,
    get_available_providers,
    get_all_providers,
    get_device,
    list_providers,
    compose_models,
)
from ._tools import compare  # noqa: F401
from ._iobinding import IOBinding, OrtValue  # noqa: F401

__version__ = _tessera.version()

# ONNX Runtime spells its base error `Fail` (onnxruntime.capi.onnxruntime_pybind11_state).
Fail = TesseraError

__all__ = [
    "InferenceSession", "SessionOptions", "RunOptions", "NodeArg", "ModelMetadata",
    "GraphOptimizationLevel", "ExecutionMode", "IOBinding", "OrtValue",
    "get_available_providers", "get_all_providers", "get_device", "list_providers", "compare",
    "compose_models",
    "TesseraError", "Fail", "InvalidArgument", "InvalidModel", "NotSupported", "NoMemory",
    "IOFailure", "ProviderError", "RuntimeFailure", "ABIError", "Cancelled", "__version__",
]
