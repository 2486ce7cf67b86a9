"""InferenceSession and friends, shaped like onnxruntime's.

What is ONNX Runtime's: the constructor's arguments, get_inputs/get_outputs
(NodeArg with name, shape, type), run(output_names, input_feed),
get_providers, get_provider_options, get_session_options, get_modelmeta,
end_profiling, SessionOptions with the attributes scripts set.

What is Tessera's: provider names are Tessera's plugins ("onednn",
"reference", a .so path, or "auto"); SessionOptions also has policy,
fallback, assignments, dims, observe_all, limits and a chain of models
(add_stage, connect, set_stage_prefix; compose_models writes the merged
model); the session has assignment(), assignment_text(), assignment_dot()
and nodes().
"""
import contextlib
import datetime
import enum
import json
import os
import tempfile
import warnings

from . import _tessera

# ONNX element type numbers -> the names ONNX Runtime prints ("tensor(float)").
_ELEM_NAMES = (
    "undefined", "float", "uint8", "int8", "uint16", "int16", "int32", "int64", "string",
    "bool", "float16", "double", "uint32", "uint64", "complex64", "complex128", "bfloat16",
    "float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz", "uint4", "int4",
    "float4e2m1", "float8e8m0", "uint2", "int2",
)

_ORT_LOG_TO_TESSERA = {0: 3, 1: 2, 2: 1, 3: 0, 4: 0}  # verbose/info/warning/error/fatal
_POLICIES = {"order": 0, "cost": 1, "first": 2}


def _type_string(elem, kind):
    name = _ELEM_NAMES[elem] if 0 <= elem < len(_ELEM_NAMES) else "undefined"
    tensor = "tensor(%s)" % name
    if kind == _tessera.VALUE_SEQUENCE:
        return "seq(%s)" % tensor
    if kind == _tessera.VALUE_OPTIONAL:
        return "optional(%s)" % tensor
    if kind == _tessera.VALUE_MAP:
        return "map(%s)" % name
    return tensor


def _proto_type_string(tp):
    """ONNX Runtime's type string of an onnx TypeProto."""
    which = tp.WhichOneof("value")
    if which == "tensor_type":
        e = tp.tensor_type.elem_type
        return "tensor(%s)" % (_ELEM_NAMES[e] if 0 <= e < len(_ELEM_NAMES) else "undefined")
    if which == "sequence_type":
        return "seq(%s)" % _proto_type_string(tp.sequence_type.elem_type)
    if which == "optional_type":
        return "optional(%s)" % _proto_type_string(tp.optional_type.elem_type)
    if which == "map_type":
        k = tp.map_type.key_type
        return "map(%s,%s)" % (_ELEM_NAMES[k] if 0 <= k < len(_ELEM_NAMES) else "undefined",
                               _proto_type_string(tp.map_type.value_type))
    return None


def _declared_types(model):
    """{("in"|"out", name): type string} read with onnx, for sequences,
    optionals and maps: tsr_io_info gives their kind but not what they hold.
    {} when onnx is not installed."""
    try:
        import onnx
    except ImportError:
        return {}
    try:
        if isinstance(model, (bytes, bytearray, memoryview)):
            m = onnx.load_model_from_string(bytes(model))
        else:
            m = onnx.load(os.fspath(model), load_external_data=False)
    except Exception:  # the session read it; a type string is not worth failing for
        return {}
    out = {}
    for side, values in (("in", m.graph.input), ("out", m.graph.output)):
        for v in values:
            t = _proto_type_string(v.type)
            if t:
                out[(side, v.name)] = t
    return out


class NodeArg:
    """A graph input or output: name, shape (ints, symbol strings, None where
    unknown; None when even the rank is unknown) and type ('tensor(float)')."""

    __slots__ = ("name", "shape", "type")

    def __init__(self, name, type, shape):
        self.name = name
        self.type = type
        self.shape = shape

    def __repr__(self):
        return "NodeArg(name=%r, type=%r, shape=%r)" % (self.name, self.type, self.shape)

    def __eq__(self, other):
        return isinstance(other, NodeArg) and (self.name, self.type, self.shape) == (
            other.name, other.type, other.shape)

    __hash__ = None


class ModelMetadata:
    """What the model file says about itself (ONNX Runtime's ModelMetadata)."""

    def __init__(self, d):
        self.producer_name = d["producer_name"]
        self.producer_version = d["producer_version"]
        self.graph_name = d["graph_name"]
        self.domain = d["domain"]
        self.description = d["doc_string"]
        self.graph_description = ""  # not in Tessera's API
        self.version = d["model_version"]
        self.ir_version = d["ir_version"]
        self.custom_metadata_map = dict(d["properties"])
        self.opsets = dict(d["opsets"])

    def __repr__(self):
        return "ModelMetadata(producer_name=%r, graph_name=%r, version=%r)" % (
            self.producer_name, self.graph_name, self.version)


class GraphOptimizationLevel(enum.IntEnum):
    """Accepted for ONNX Runtime compatibility; Tessera's providers decide."""
    ORT_DISABLE_ALL = 0
    ORT_ENABLE_BASIC = 1
    ORT_ENABLE_EXTENDED = 2
    ORT_ENABLE_ALL = 99


class ExecutionMode(enum.IntEnum):
    """Accepted for ONNX Runtime compatibility; pieces run in order."""
    ORT_SEQUENTIAL = 0
    ORT_PARALLEL = 1


class SessionOptions:
    """Options for InferenceSession.

    ONNX Runtime's: intra_op_num_threads (0: each provider chooses),
    log_severity_level (0 verbose .. 3 error, 4 fatal), enable_profiling,
    profile_file_prefix, add_free_dimension_override_by_name(),
    graph_optimization_level (ORT_DISABLE_ALL: no constant folding at load,
    as the "fold_bytes" limit 1; the providers' own fusions stay); and,
    accepted but without effect, inter_op_num_threads, execution_mode,
    log_verbosity_level, enable_cpu_mem_arena, enable_mem_pattern,
    optimized_model_filepath, session config entries.

    Tessera's own: policy ('order', 'cost', 'first'), fallback (a provider
    that runs only what no other claims), assignments ({node or op type:
    provider}), dims ({symbol: size}), observe_all (every node output can be
    asked for by name in run), limits ({"tensor_bytes": n, ...}); and a
    chain of models (add_stage, connect, set_stage_prefix): the session runs
    its model, then each stage added, merged into one graph as
    onnx.compose.merge_models would merge them (docs/compose.md).
    """

    __slots__ = ("intra_op_num_threads", "inter_op_num_threads", "log_severity_level",
                 "log_verbosity_level", "enable_profiling", "profile_file_prefix",
                 "graph_optimization_level", "execution_mode", "enable_cpu_mem_arena",
                 "enable_mem_pattern", "enable_mem_reuse", "optimized_model_filepath", "logid",
                 "use_deterministic_compute",
                 "policy", "fallback", "assignments", "dims", "observe_all", "limits",
                 "_config", "_stages", "_links", "_prefixes")

    def __init__(self):
        self.intra_op_num_threads = 0
        self.inter_op_num_threads = 0
        self.log_severity_level = 2
        self.log_verbosity_level = 0
        self.enable_profiling = False
        self.profile_file_prefix = "tessera_profile"
        self.graph_optimization_level = GraphOptimizationLevel.ORT_ENABLE_ALL
        self.execution_mode = ExecutionMode.ORT_SEQUENTIAL
        self.enable_cpu_mem_arena = True
        self.enable_mem_pattern = True
        self.enable_mem_reuse = True
        self.optimized_model_filepath = ""
        self.logid = ""
        self.use_deterministic_compute = False
        self.policy = None
        self.fallback = None
        self.assignments = {}
        self.dims = {}
        self.observe_all = False
        self.limits = {}
        self._config = {}
        self._stages = []    # paths, or serialized models (bytes)
        self._links = []     # (stage, output, input)
        self._prefixes = {}  # stage: prefix

    def add_free_dimension_override_by_name(self, dim_name, dim_value):
        self.dims[dim_name] = int(dim_value)

    def add_session_config_entry(self, key, value):
        self._config[key] = value

    def get_session_config_entry(self, key):
        return self._config[key]

    # --- a chain of models (Tessera's; tsr_session_options_add_stage) ---
    def add_stage(self, model):
        """Appends a model that runs after the session's model and the
        stages added before it (a post-processing graph, or the classifier
        after a pre-processing model given to InferenceSession). model: a
        path (its external data is read beside it), the serialized model
        (bytes) or an onnx.ModelProto. Returns the stage's index: 1 for the
        first added (the session's own model is stage 0), 2, ...

        A stage's inputs are fed by the connections named for it (connect),
        or, when none is, by the previous stage's outputs in order (inputs
        with an initializer not counted). The session's inputs are stage
        0's, then later stages' unconnected ones; its outputs, stage after
        stage, those not connected, then the last stage's. A name two stages
        both use is an error at InferenceSession: give prefixes."""
        if hasattr(model, "SerializeToString"):  # an onnx.ModelProto
            model = model.SerializeToString()
        if isinstance(model, (bytes, bytearray, memoryview)):
            self._stages.append(bytes(model))
        else:
            path = os.fspath(model)
            self._check(stages=self._stages + [path])
            self._stages.append(path)
        return len(self._stages)

    def connect(self, stage, output, input):
        """Output `output` of an earlier stage (the nearest that has one so
        named) feeds input `input` of stage `stage` (1 .. stages added; 0:
        the one later stage that has an input so named), both named as in
        their own files, before prefixes. A stage with any connection is fed
        by its connections only. A stage index out of range raises
        tessera.InvalidArgument here; a name no stage has, at
        InferenceSession."""
        link = (int(stage), str(output), str(input))
        self._check(links=self._links + [link])
        self._links.append(link)

    def set_stage_prefix(self, stage, prefix):
        """Every name of stage `stage` (0: the session's model .. stages
        added) gets `prefix`, as onnx.compose.add_prefix: values, nodes,
        names inside subgraphs, model-local functions. None or '' removes
        it."""
        stage = int(stage)
        prefix = None if prefix is None else str(prefix)
        prefixes = dict(self._prefixes)
        prefixes[stage] = prefix
        self._check(prefixes=prefixes)
        self._prefixes[stage] = prefix

    @property
    def stages(self):
        """The stages added: paths (str) or serialized models (bytes)."""
        return list(self._stages)

    def _check(self, stages=None, links=None, prefixes=None):
        """Raises what the C API would for this chain (no file is read until
        a session is made; a stage given as bytes stands in as a name)."""
        stages = self._stages if stages is None else stages
        d = {"stages": [s if isinstance(s, str) else "<stage %d>" % (i + 1) for i, s in enumerate(stages)],
             "connect": self._links if links is None else links,
             "prefixes": [(int(k), v) for k, v in
                          (self._prefixes if prefixes is None else prefixes).items()]}
        _tessera.check_options(d)

    def _stage_dict(self, paths):
        """The chain's keys of the options dict, stages as `paths`."""
        return {"stages": list(paths), "connect": list(self._links),
                "prefixes": sorted(self._prefixes.items())}

    def _to_dict(self):
        d = {}
        if self.intra_op_num_threads:
            d["threads"] = int(self.intra_op_num_threads)
        level = int(self.log_severity_level)
        if level not in _ORT_LOG_TO_TESSERA:
            raise _tessera.InvalidArgument("log_severity_level must be 0..4, not %r" % level)
        if level != 2:
            d["log_level"] = _ORT_LOG_TO_TESSERA[level]
        if self.enable_profiling:
            d["profiling"] = 1
        if self.observe_all:
            d["observe_all"] = 1
        if self.policy is not None:
            if self.policy not in _POLICIES:
                raise _tessera.InvalidArgument(
                    "policy must be one of %s, not %r" % (", ".join(_POLICIES), self.policy))
            d["policy"] = _POLICIES[self.policy]
        if self.fallback:
            d["fallback"] = str(self.fallback)
        d["assign"] = [(str(k), str(v)) for k, v in self.assignments.items()]
        d["dims"] = [(str(k), int(v)) for k, v in self.dims.items()]
        limits = dict(self.limits)
        if int(self.graph_optimization_level) == GraphOptimizationLevel.ORT_DISABLE_ALL:
            limits.setdefault("fold_bytes", 1)  # ONNX Runtime folds from ORT_ENABLE_BASIC up
        d["limits"] = [(str(k), int(v)) for k, v in limits.items()]
        return d


class RunOptions(_tessera.RunOptions):
    """ONNX Runtime's RunOptions over tsr_run_options: run_tag (leads the
    run's log lines, tags its profile events), terminate (set True from
    another thread to stop a run: it raises tessera.Cancelled) and, Tessera's
    own, timeout_ms (a deadline). The other attributes are accepted for
    compatibility and unused."""

    def __init__(self):
        super().__init__()
        self.log_severity_level = 2
        self.log_verbosity_level = 0
        self.logid = ""
        self.only_execute_path_to_fetches = False


@contextlib.contextmanager
def _stage_files(sess_options):
    """The stages' paths, those given as bytes written to a temporary
    directory for as long as the session is being made (the C API reads
    stages from files; a stage given as bytes has no external data)."""
    stages = sess_options._stages
    if not any(isinstance(s, bytes) for s in stages):
        yield list(stages)
        return
    with tempfile.TemporaryDirectory(prefix="tessera-stages-") as tmp:
        paths = []
        for i, s in enumerate(stages):
            if isinstance(s, bytes):
                path = os.path.join(tmp, "stage%d.onnx" % (i + 1))
                with open(path, "wb") as f:
                    f.write(s)
                s = path
            paths.append(s)
        yield paths


def compose_models(model, sess_options=None):
    """The model (a path, bytes or onnx.ModelProto) and the stages of
    sess_options merged as InferenceSession(model, sess_options) would
    merge them, serialized as one ONNX model (bytes; weights inline). What
    `tessera compose` writes; no provider is loaded."""
    sess_options = sess_options if sess_options is not None else SessionOptions()
    if hasattr(model, "SerializeToString"):
        model = model.SerializeToString()
    opts = sess_options._to_dict()
    with contextlib.ExitStack() as stack:
        if isinstance(model, (bytes, bytearray, memoryview)):
            tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="tessera-compose-"))
            path = os.path.join(tmp, "model.onnx")
            with open(path, "wb") as f:
                f.write(model)
        else:
            path = os.fspath(model)
        opts.update(sess_options._stage_dict(stack.enter_context(_stage_files(sess_options))))
        return _tessera.compose(path, opts)


def list_providers(extra_paths=None):
    """The provider plugins found (beside libtessera.so, its
    tessera/providers subdirectory, TESSERA_PROVIDER_PATH, and extra_paths):
    a list of dicts with name, vendor, version, path, abi_version, error
    (None unless the plugin failed to load) and devices (name, vendor,
    details, kind, memory, memory_bytes)."""
    return _tessera.list_providers(list(extra_paths) if extra_paths else None)


def get_available_providers():
    """Names of the provider plugins that load, as ONNX Runtime's function."""
    return [p["name"] for p in _tessera.list_providers() if not p["error"]]


def get_all_providers():
    """Every provider plugin found, whether it loads or not."""
    return [p["name"] for p in _tessera.list_providers()]


def get_device():
    """'CPU', or 'CPU-GPU' when a provider found has a GPU (as ONNX Runtime's)."""
    kinds = {d["kind"] for p in _tessera.list_providers() if not p["error"] for d in p["devices"]}
    return "CPU-GPU" if "gpu" in kinds else "CPU"


def _provider_list(providers, provider_options):
    """(names, [(provider, (key, value))], policy or None) from ONNX Runtime's
    providers / provider_options arguments. ONNX Runtime's own names
    ('CPUExecutionProvider', ...) are not Tessera plugins: they are dropped
    (every plugin found is used when nothing else is named)."""
    if providers is None:
        return None, [], None
    if isinstance(providers, str):
        providers = [providers]
    names, opts = [], []
    if provider_options is not None and len(provider_options) != len(providers):
        raise _tessera.InvalidArgument("provider_options must have one entry per provider")
    for i, p in enumerate(providers):
        popts = {}
        if isinstance(p, (tuple, list)):
            p, popts = p
        if provider_options is not None:
            popts = dict(popts, **provider_options[i])
        p = os.fspath(p)
        if p.endswith("ExecutionProvider"):
            if p != "CPUExecutionProvider":
                warnings.warn("tessera: %s is ONNX Runtime's; using Tessera's providers instead" % p,
                              stacklevel=3)
            continue
        names.append(p)
        opts.extend((p, (str(k), str(v))) for k, v in popts.items())
    if names == ["auto"]:
        return None, opts, _POLICIES["cost"]
    return (names or None), opts, None


class InferenceSession:
    """InferenceSession(path_or_bytes, sess_options=None, providers=None,
    provider_options=None): a model loaded, partitioned and compiled.

    path_or_bytes: a path (str or os.PathLike) or the serialized model
    (bytes; an onnx.ModelProto is serialized first). providers: Tessera
    provider names or .so paths in priority order, or (name, {option:
    value}) tuples; "auto" places by estimated cost; None uses every plugin
    found. Errors raise tessera.TesseraError subclasses carrying Tessera's
    code and message.
    """

    def __init__(self, path_or_bytes, sess_options=None, providers=None, provider_options=None,
                 **kwargs):
        self._sess_options = sess_options if sess_options is not None else SessionOptions()
        opts = self._sess_options._to_dict()
        names, popts, policy = _provider_list(providers, provider_options)
        if names is not None:
            opts["providers"] = names
        if policy is not None and "policy" not in opts:
            opts["policy"] = policy
        opts["provider_options"] = popts
        self._provider_options = {}
        for p, (k, v) in popts:
            self._provider_options.setdefault(p, {})[k] = v
        base_dir = kwargs.pop("base_dir", None)  # Tessera's: external data of a model given as bytes
        for ignored in ("disabled_optimizers", "read_config_from_model"):  # ONNX Runtime's; no effect here
            kwargs.pop(ignored, None)
        if kwargs:
            raise TypeError("unexpected arguments: %s" % ", ".join(sorted(kwargs)))
        if hasattr(path_or_bytes, "SerializeToString"):  # an onnx.ModelProto
            path_or_bytes = path_or_bytes.SerializeToString()
        with _stage_files(self._sess_options) as stage_paths:
            opts.update(self._sess_options._stage_dict(stage_paths))
            if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
                self._model_path = None
                self._model_bytes = path_or_bytes
                self._sess = _tessera.Session(path_or_bytes, opts,
                                              os.fspath(base_dir) if base_dir is not None else None)
            else:
                self._model_path = os.fspath(path_or_bytes)
                self._model_bytes = None
                self._sess = _tessera.Session(self._model_path, opts)
        ins, outs = self._sess.inputs(), self._sess.outputs()
        declared = {}
        # (a chain's names may not be its first model's: the C API's kinds then)
        if not self._sess_options._stages and any(
                k not in (_tessera.VALUE_TENSOR, _tessera.VALUE_NONE) for _, _, _, k in ins + outs):
            declared = _declared_types(path_or_bytes)
        self._inputs = [NodeArg(n, declared.get(("in", n)) or _type_string(e, k), s) for n, e, s, k in ins]
        self._outputs = [NodeArg(n, declared.get(("out", n)) or _type_string(e, k), s) for n, e, s, k in outs]
        self._providers = None
        self._profiling = bool(self._sess_options.enable_profiling)
        # run() is the C method itself: no Python frame between the caller and the run
        self._run = self._sess.run
        if type(self).run is InferenceSession.run:
            self.run = self._run

    # --- ONNX Runtime's API ---
    def get_inputs(self):
        return list(self._inputs)

    def get_outputs(self):
        return list(self._outputs)

    def get_overridable_initializers(self):
        return []

    def io_binding(self):
        """An IOBinding for this session (docs/iobinding.md): inputs bound
        once, outputs read back or left where they are made."""
        from ._iobinding import IOBinding
        return IOBinding(self)

    def run_with_iobinding(self, iobinding, run_options=None):
        """Runs with the binding's inputs; its get_outputs() then holds the
        results."""
        iobinding._run(run_options)

    def run(self, output_names, input_feed, run_options=None):
        """Runs the model: output_names None (or []) for every output, else the
        names wanted; input_feed {name: numpy array}. Returns a list: numpy
        arrays for tensors, lists for sequences, None or the value for
        optionals, dicts for maps. Arrays that are C-contiguous and of the
        declared type are read in place; outputs are numpy arrays over the
        runtime's own buffers. The GIL is released while the model runs."""
        return self._run(output_names, input_feed, run_options)

    def get_providers(self):
        """The session's providers, in priority order (the last is 'core',
        the runtime's own, which runs If/Loop/Scan)."""
        if self._providers is None:
            self._providers = [p["name"] for p in self.assignment()["providers"]]
        return list(self._providers)

    def get_provider_options(self):
        return {p: dict(o) for p, o in self._provider_options.items()}

    def get_session_options(self):
        return self._sess_options

    def get_modelmeta(self):
        return ModelMetadata(self._sess.metadata())

    def end_profiling(self):
        """Writes the events recorded since the session began (or the last
        call) as a Chrome trace, PREFIX_DATE.json in the working directory,
        and returns its path; '' when profiling is off."""
        if not self._profiling:
            return ""
        events = self._sess.profile_take()
        stamp = datetime.datetime.now().strftime("%Y-%m-%d_%H-%M-%S-%f")
        path = "%s_%s.json" % (self._sess_options.profile_file_prefix, stamp)
        with open(path, "w", encoding="utf-8") as f:
            f.write(events)
        return path

    # --- Tessera's own ---
    def assignment(self):
        """Which provider runs which node, as a dict (docs/partition.schema.json):
        providers, pieces, copies, expanded, declined, totals."""
        return json.loads(self._sess.assignment_json())

    def assignment_text(self):
        """The assignment as the table `tessera run --explain` prints."""
        return self._sess.assignment_text()

    def assignment_dot(self):
        """The assignment as a Graphviz digraph."""
        return self._sess.assignment_dot()

    def nodes(self):
        """Every node in run order: name, op_type, domain, origin, provider, piece, outputs."""
        return self._sess.nodes()

    def profile(self):
        """The profile events recorded since the last call, as a list of dicts."""
        return json.loads(self._sess.profile_take())
