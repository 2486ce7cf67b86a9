"""tessera.backend: the ONNX backend API (onnx.backend.base.Backend) over
tessera.InferenceSession, so onnx's own test harness can drive Tessera:

    import onnx.backend.test
    import tessera.backend
    globals().update(onnx.backend.test.BackendTest(tessera.backend, __name__).test_cases)

prepare() takes a ModelProto (or its bytes, or a path) and keyword
arguments for InferenceSession (providers, provider_options, sess_options);
the device is 'CPU' (the providers decide where pieces run).
"""
import numpy as np
import onnx
from onnx import helper
from onnx.backend.base import Backend, BackendRep, Device, DeviceType, namedtupledict

from ._session import InferenceSession, SessionOptions


class TesseraRep(BackendRep):
    """A prepared model: run(inputs) with a list (in graph input order) or a dict."""

    def __init__(self, session):
        self.session = session
        self._input_names = [i.name for i in session.get_inputs()]
        self._output_names = [o.name for o in session.get_outputs()]

    def run(self, inputs, **kwargs):
        if isinstance(inputs, dict):
            feed = dict(inputs)
        elif isinstance(inputs, (list, tuple)):
            if len(inputs) > len(self._input_names):
                raise ValueError("%d inputs given; the model has %d" % (len(inputs), len(self._input_names)))
            feed = dict(zip(self._input_names, inputs))
        else:  # one array
            feed = {self._input_names[0]: inputs}
        outputs = self.session.run(None, feed)
        return namedtupledict("Outputs", self._output_names)(*outputs)


class TesseraBackend(Backend):
    @classmethod
    def supports_device(cls, device):
        return Device(device).type == DeviceType.CPU

    @classmethod
    def is_compatible(cls, model, device="CPU", **kwargs):
        return cls.supports_device(device)

    @classmethod
    def prepare(cls, model, device="CPU", **kwargs):
        if not cls.supports_device(device):
            raise RuntimeError("tessera.backend runs on CPU only, not %s" % device)
        if isinstance(model, onnx.ModelProto):
            model = model.SerializeToString()
        options = kwargs.pop("sess_options", None)
        if options is None:
            options = SessionOptions()
            options.log_severity_level = 3  # errors only: the harness reads results, not warnings
        return TesseraRep(InferenceSession(model, sess_options=options, **kwargs))

    @classmethod
    def run_model(cls, model, inputs, device="CPU", **kwargs):
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(cls, node, inputs, device="CPU", outputs_info=None, **kwargs):
        """Runs one NodeProto on inputs (a list in node.input order, or a dict
        by name): a one-node model is built around it, at
        kwargs['opset_version'] when given, else onnx's current opset."""
        opset = kwargs.pop("opset_version", None)
        if isinstance(inputs, dict):
            arrays = [inputs[n] for n in node.input if n]
        else:
            arrays = list(inputs)
        names = [n for n in node.input if n]
        graph_inputs = []
        for name, value in zip(names, arrays):
            value = np.asarray(value)
            elem = helper.np_dtype_to_tensor_dtype(value.dtype) if hasattr(helper, "np_dtype_to_tensor_dtype") \
                else onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[value.dtype]
            graph_inputs.append(helper.make_tensor_value_info(name, elem, value.shape))
        graph_outputs = []
        for i, name in enumerate(node.output):
            if not name:
                continue
            if outputs_info is not None and i < len(outputs_info):
                dtype, shape = outputs_info[i]
                elem = onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(dtype)]
                graph_outputs.append(helper.make_tensor_value_info(name, elem, shape))
            else:
                graph_outputs.append(helper.make_empty_tensor_value_info(name))
        graph = helper.make_graph([node], "run_node_%s" % node.op_type, graph_inputs, graph_outputs)
        domain = node.domain or ""
        opsets = [helper.make_opsetid("", opset if opset is not None and not domain
                                      else onnx.defs.onnx_opset_version())]
        if domain and domain != "ai.onnx":
            opsets.append(helper.make_opsetid(domain, opset if opset is not None else 1))
        model = helper.make_model(graph, opset_imports=opsets, producer_name="tessera.backend")
        rep = cls.prepare(model, device, **kwargs)
        outputs = rep.session.run(None, dict(zip(names, arrays)))
        return namedtupledict("Outputs", [n for n in node.output if n])(*outputs)


prepare = TesseraBackend.prepare
run_model = TesseraBackend.run_model
run_node = TesseraBackend.run_node
supports_device = TesseraBackend.supports_device
is_compatible = TesseraBackend.is_compatible
