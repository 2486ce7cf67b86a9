"""ONNX Runtime's IOBinding and OrtValue over Tessera's tsr_io_binding
(docs/iobinding.md): inputs bound once, outputs left in the memory of the
provider that made them, so a state fed back run after run is not copied.

    b = sess.io_binding()
    b.bind_cpu_input("state_in", np.zeros((1, 16), np.float32))
    b.bind_output("y")                          # read back every run
    b.bind_output("state_out", "opencl")        # any device_type but "cpu": left where made
    for x in xs:
        b.bind_cpu_input("x", x)
        sess.run_with_iobinding(b)
        y, state = b.get_outputs()              # OrtValues
        b.bind_ortvalue_input("state_in", state)
    print(y.numpy())
"""
from . import _tessera


class OrtValue:
    """A run's output: left where it was made (a Tessera device value) or
    read back (a numpy array). numpy() copies a device value to the host,
    waiting for the device."""

    def __init__(self, value):
        self._value = value  # _tessera.DeviceValue or numpy array (or list/dict for non-tensors)

    def numpy(self):
        if isinstance(self._value, _tessera.DeviceValue):
            return self._value.numpy()
        return self._value

    def _info(self):
        if isinstance(self._value, _tessera.DeviceValue):
            return self._value.info()
        return None

    def shape(self):
        info = self._info()
        return list(info[1]) if info else list(getattr(self._value, "shape", ()))

    def device_name(self):
        """'cpu' for host memory, else the provider holding the value."""
        info = self._info()
        return "cpu" if not info or info[4] == "host" else info[4]

    def is_tensor(self):
        info = self._info()
        return info[0] != 0 if info else hasattr(self._value, "shape")

    def __repr__(self):
        return "OrtValue(shape=%r, device=%r)" % (self.shape(), self.device_name())


class IOBinding:
    """Made by InferenceSession.io_binding(). Not for two runs at once."""

    def __init__(self, session):
        self._session = session
        self._b = _tessera.IoBinding(session._sess)
        self._inputs = {}   # name -> array or DeviceValue, as bound
        self._outputs = {}  # name -> on device; insertion order is get_outputs' order
        self._results = []

    def bind_cpu_input(self, name, arr_on_cpu):
        """The array is held, not copied: every later run reads it."""
        self._bind(name, arr_on_cpu)

    def _bind(self, name, value):
        if isinstance(value, OrtValue):
            value = value._value
        self._b.bind_input(name, value)
        self._inputs[name] = value

    def bind_input(self, name, value, *args):
        """bind_input(name, numpy array or OrtValue). ONNX Runtime's raw
        (device_type, device_id, element_type, shape, buffer_ptr) form has
        no Tessera counterpart: memory belongs to the providers."""
        if args:
            raise _tessera.NotSupported("bind_input with a raw buffer pointer is not supported; "
                                        "bind a numpy array or an OrtValue")
        self._bind(name, value)

    def bind_ortvalue_input(self, name, ortvalue):
        self._bind(name, ortvalue)

    def bind_output(self, name, device_type="cpu", device_id=0, element_type=None, shape=None,
                    buffer_ptr=None):
        """device_type "cpu": read back each run; anything else: left in the
        memory of the provider whose piece makes it (the device is that
        provider's, not chosen here)."""
        if buffer_ptr is not None:
            raise _tessera.NotSupported("bind_output into a caller's buffer is not supported")
        on_device = str(device_type).lower() != "cpu"
        self._b.bind_output(name, on_device)
        self._outputs.pop(name, None)
        self._outputs[name] = on_device

    def clear_binding_inputs(self):
        # Tessera's binding clears inputs and outputs at once: bind the
        # outputs again
        self._inputs.clear()
        self._b.clear()
        for name, on_device in self._outputs.items():
            self._b.bind_output(name, on_device)

    def clear_binding_outputs(self):
        self._outputs.clear()
        self._results = []
        self._b.clear()
        for name, value in self._inputs.items():
            self._b.bind_input(name, value)

    def synchronize_inputs(self):
        pass  # inputs are read in order by the run's pieces

    def synchronize_outputs(self):
        pass  # OrtValue.numpy() is the sync point

    def get_outputs(self):
        """The last run's outputs as OrtValues, in the order bound."""
        return list(self._results)

    def copy_outputs_to_cpu(self):
        return [v.numpy() for v in self._results]

    def _run(self, run_options=None):
        self._results = []
        self._b.run(run_options)
        self._results = [OrtValue(self._b.take(name, on_device)) for name, on_device in self._outputs.items()]

