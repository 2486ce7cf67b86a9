#!/usr/bin/env python3
"""The `layers` ctest: the library's folders point one way.

    core/         IR, loader, shape inference, rewrites, graph views, the
                  host API's graph and run slots, logging, plugins,
                  estimates (cost.c), the report buffer (report_buf.c)
    partitioner/  claims (the claim sink), placement, ...; may use core/
    runtime/      sessions, the host API table, ...; may use partitioner/
                  and core/

A file may include headers of its own folder and of the folders it may
use, the public headers (abi/include: "tessera/...") and the generated
protobuf header; nothing else. CMake already compiles each folder with only
those include paths (tessera_layer_* in CMakeLists.txt), but a local
prototype would get past that, so with --archive the static library's
objects are checked too: no object of a lower folder may refer to a
function or variable defined by an object of a higher one. And the
structs behind the provider ABI's opaque handles are each defined in one
file of the folder that owns them (HANDLES), so the host API's pieces stay
where docs/architecture.md says.

usage: check_layers.py --root SOURCE_DIR [--archive libtessera_core.a]
Exits 1 naming every arrow that points up (or sideways into an unknown
header), 0 when there is none.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

# Lowest first. ALLOWED[x]: the folders x may use besides itself; written
# out, not derived from the order, so a new folder needs a decision here.
LAYERS = ["core", "partitioner", "runtime"]
ALLOWED = {
    "core": set(),
    "partitioner": {"core"},
    "runtime": {"core", "partitioner"},
}
# The concrete structs behind the ABI's opaque handles: the folder whose
# header defines each. The claim sink is the partitioner's (it is what a
# claim request collects into); the table that hands all of them to plugins
# is assembled in runtime/host_api.c.
HANDLES = {
    "tsr_graph": "core",
    "tsr_run_context": "core",
    "tsr_claim_sink": "partitioner",
}
# Headers from outside the three folders that any of them may include.
GENERATED = {"onnx.pb-c.h"}

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def sources(root):
    """{folder: [file names]} for the .c and .h files of each layer."""
    out = {}
    for layer in LAYERS:
        d = os.path.join(root, layer)
        out[layer] = sorted(f for f in os.listdir(d) if f.endswith((".c", ".h")))
    return out


def check_includes(root, files):
    errors = []
    owner = {}
    for layer, names in files.items():
        for n in names:
            if n in owner:
                # one name in two folders: which one an include means would
                # depend on the include path order
                errors.append("%s/%s and %s/%s: one file name in two layers" % (owner[n], n, layer, n))
            owner.setdefault(n, layer)
    for layer, names in files.items():
        for n in names:
            with open(os.path.join(root, layer, n), encoding="utf-8", errors="replace") as f:
                text = f.read()
            for inc in INCLUDE.findall(text):
                if inc.startswith("tessera/") or inc in GENERATED:
                    continue
                where = owner.get(inc)
                if where is None:
                    errors.append("%s/%s includes \"%s\", which is in none of %s" % (layer, n, inc, ", ".join(LAYERS)))
                elif where != layer and where not in ALLOWED[layer]:
                    errors.append("%s/%s includes %s/%s: %s may use only %s" %
                                  (layer, n, where, inc, layer, ", ".join(sorted(ALLOWED[layer])) or "itself"))
    return errors


def check_handles(root, files):
    errors = []
    for handle, layer in sorted(HANDLES.items()):
        define = re.compile(r"^\s*struct\s+%s\s*\{" % handle, re.M)
        where = []
        for folder, names in files.items():
            for n in names:
                with open(os.path.join(root, folder, n), encoding="utf-8", errors="replace") as f:
                    if define.search(f.read()):
                        where.append((folder, n))
        if len(where) != 1 or where[0][0] != layer:
            found = ", ".join("%s/%s" % w for w in where) or "nowhere"
            errors.append("struct %s must be defined once, in %s/; found in %s" % (handle, layer, found))
    return errors


def archive_symbols(archive):
    """{object name: (defined set, undefined set)} from nm on the archive."""
    res = subprocess.run(["nm", "-A", archive], capture_output=True, text=True, check=True)
    objs = {}
    for line in res.stdout.splitlines():
        # "lib.a:member.c.o:0000000000000000 T name" or "lib.a:member.c.o:  U name"
        head, _, rest = line.partition(".o:")
        member = head.rsplit(":", 1)[-1] + ".o"
        parts = rest.split()
        if len(parts) < 2:
            continue
        kind, name = parts[-2], parts[-1]
        d, u = objs.setdefault(member, (set(), set()))
        if kind == "U":
            u.add(name)
        elif kind.isupper():
            d.add(name)
    return objs


def check_symbols(archive, files):
    errors = []
    layer_of = {}
    for layer, names in files.items():
        for n in names:
            if n.endswith(".c"):
                layer_of[n + ".o"] = layer
    objs = archive_symbols(archive)
    definer = {}
    for member, (defined, _) in objs.items():
        if member in layer_of:
            for s in defined:
                definer[s] = member
    for member, (_, undefined) in sorted(objs.items()):
        layer = layer_of.get(member)
        if layer is None:
            continue  # generated code (protobuf, function texts)
        for s in sorted(undefined):
            other = definer.get(s)
            if not other:
                continue
            where = layer_of[other]
            if where != layer and where not in ALLOWED[layer]:
                errors.append("%s/%s calls %s, defined in %s/%s" % (layer, member[:-2], s, where, other[:-2]))
    return errors


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", required=True)
    ap.add_argument("--archive")
    a = ap.parse_args()
    files = sources(a.root)
    errors = check_includes(a.root, files) + check_handles(a.root, files)
    if a.archive:
        if shutil.which("nm"):
            errors += check_symbols(a.archive, files)
        else:
            print("note: no nm, objects not checked")
    for e in errors:
        print("FAIL: " + e)
    if errors:
        print("allowed: " + "; ".join("%s -> %s" % (k, ", ".join(sorted(v)) or "(nothing)") for k, v in ALLOWED.items()))
        return 1
    print("layers: %s, each using only the ones below it" % " < ".join(LAYERS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
