"""Tessera's command-line tools from Python.

compare() runs `tessera compare --json`: the comparison lives in the CLI
(tools/compare*.c) and has no C API, so the package runs the command that
ships with it (tessera/bin/tessera in a pip install, the build tree's
bin/tessera from the build tree; TESSERA_CLI overrides both).
"""
import json
import os
import shutil
import subprocess
import tempfile

from . import _tessera


def cli_path():
    """The `tessera` command this package uses, or None when none is found."""
    env = os.environ.get("TESSERA_CLI")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    bundled = os.path.join(here, "bin", "tessera")
    if os.access(bundled, os.X_OK):
        return bundled
    try:
        from . import _build_config  # written by the CMake build
        if os.access(_build_config.CLI, os.X_OK):
            return _build_config.CLI
    except ImportError:
        pass
    return shutil.which("tessera")


def _set_string(providers):
    if isinstance(providers, str):
        return providers
    return ",".join(os.fspath(p) for p in providers)


def compare(model, providers, per_node=False, inputs=None, rtol=None, atol=None, dims=None,
            provider_options=None, oracle=False, threads=None):
    """Runs `model` with each provider set on the same inputs and returns
    what `tessera compare --json` prints, as a dict (docs/compare.md):
    baseline, rtol, atol, and per compared set its providers, agree, outputs
    (max_abs, max_rel, mismatches, ...), and with per_node=True the
    first_divergent_node and differences_start.

    model: a path, the model's bytes or an onnx.ModelProto. providers: a
    list of sets, each a comma-separated string or a list of names; the
    first is the baseline. inputs: {name: numpy array}; the others are made
    up as `tessera run` makes them. dims: {symbol: size}. provider_options:
    {provider: {key: value}}. A usage error or a set that fails raises
    tessera.InvalidArgument / TesseraError with the command's message.
    """
    cli = cli_path()
    if not cli:
        raise _tessera.NotSupported("tessera.compare needs the `tessera` command; set TESSERA_CLI")
    sets = [_set_string(p) for p in providers]
    with tempfile.TemporaryDirectory(prefix="tessera-compare-") as tmp:
        if hasattr(model, "SerializeToString"):
            model = model.SerializeToString()
        if isinstance(model, (bytes, bytearray, memoryview)):
            path = os.path.join(tmp, "model.onnx")
            with open(path, "wb") as f:
                f.write(model)
        else:
            path = os.fspath(model)
        args = [cli, "compare", path, "--json"]
        for s in sets:
            args += ["-p", s]
        if per_node:
            args.append("--per-node")
        if oracle:
            args.append("--oracle")
        if rtol is not None:
            args += ["--rtol", repr(float(rtol))]
        if atol is not None:
            args += ["--atol", repr(float(atol))]
        if threads is not None:
            args += ["--threads", str(int(threads))]
        for k, v in (dims or {}).items():
            args += ["--dim", "%s=%d" % (k, int(v))]
        for p, opts in (provider_options or {}).items():
            for k, v in opts.items():
                args += ["--provider-option", "%s:%s=%s" % (p, k, v)]
        for i, (name, value) in enumerate((inputs or {}).items()):
            f = os.path.join(tmp, "input_%d.pb" % i)
            with open(f, "wb") as fh:
                fh.write(_tessera.tensor_to_onnx(value, name))
            args += ["-i", "%s=%s" % (name, f)]
        proc = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = proc.stdout.decode("utf-8", "replace").strip()
    err = proc.stderr.decode("utf-8", "replace").strip()
    if proc.returncode in (0, 1) and out.startswith("{"):
        return json.loads(out)
    cls = _tessera.InvalidArgument if proc.returncode == 2 else _tessera.TesseraError
    e = cls(err or out or "tessera compare exited with status %d" % proc.returncode)
    e.message = e.args[0]
    raise e
