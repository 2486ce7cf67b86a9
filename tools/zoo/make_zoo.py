#!/usr/bin/python3
"""make_zoo.py --out DIR [--size small|full] [--list] [NAME...]

Writes the zoo's models as DIR/NAME.onnx (plus DIR/NAME.json: the --dim and
--fill arguments its inputs need, and its GFLOP when known). Each model is a
module in tools/zoo/models/ defining build(size) -> onnx.ModelProto (or
(model, extra_files) for external data) and META, a dict with optional keys
"dims" {symbol: value}, "fill" {input: number}, "rtol", "atol", "about".
"small" is for CI (each runs in well under a second on the reference
provider); "full" is the realistic size for benchmarks.
"""
import argparse
import glob
import importlib.util
import json
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.realpath(__file__))
sys.path.insert(0, HERE)


def load_modules():
    mods = {}
    for path in sorted(glob.glob(os.path.join(HERE, "models", "*.py"))):
        name = os.path.splitext(os.path.basename(path))[0]
        if name.startswith("_"):
            continue
        spec = importlib.util.spec_from_file_location("zoo_" + name, path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        mods[name] = mod
    return mods


def main():
    ap = argparse.ArgumentParser(usage=__doc__.splitlines()[0])
    ap.add_argument("--out", required=False)
    ap.add_argument("--size", choices=("small", "full"), default="small")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    mods = load_modules()
    if a.list:
        for n, m in mods.items():
            print("%-16s %s" % (n, m.META.get("about", "")))
        return 0
    if not a.out:
        ap.error("--out DIR is required")
    names = a.names or list(mods)
    for n in names:
        if n not in mods:
            print("make_zoo.py: no model %r (have: %s)" % (n, " ".join(mods)), file=sys.stderr)
            return 2
    os.makedirs(a.out, exist_ok=True)
    for n in names:
        mod = mods[n]
        path = os.path.join(a.out, n + ".onnx")
        built = mod.build(a.size)
        if isinstance(built, tuple):  # (model, save function) for external data
            model, save = built
            save(model, path)
        else:
            import onnx
            onnx.save(built, path)
        meta = {k: mod.META[k] for k in ("dims", "fill", "rtol", "atol") if k in mod.META}
        sized = mod.META.get("dims_" + a.size)
        if sized:
            meta["dims"] = dict(meta.get("dims", {}), **sized)
        import onnx
        from flops import model_flops
        try:
            gflop = model_flops(onnx.load(path, load_external_data=False), meta.get("dims", {})) / 1e9
            if gflop > 0:  # 0: shape inference could not follow the dynamic shapes
                meta["gflop"] = round(gflop, 6)
        except Exception as e:  # shapes the inference cannot follow: no figure, said so
            print("make_zoo.py: no FLOP count for %s: %s" % (n, e), file=sys.stderr)
        with open(os.path.join(a.out, n + ".json"), "w") as f:
            json.dump(meta, f, sort_keys=True)
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
