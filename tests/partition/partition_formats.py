#!/usr/bin/env python3
"""The `partition_formats` ctest: `tessera partition --format text|json|dot`.

Checks the JSON against docs/partition.schema.json (python3-jsonschema; the
test SKIPs, exit 77, when the module is missing and everything else passed)
and against facts computed here from the models themselves with python onnx:
node names and op types, every node in exactly one piece, pieces in an order
that runs, the copies between a host provider and a provider with its own
memory (tests/plugins/plugin_device.c), declines of a test provider, a
function op expanded. The DOT is read by a small parser of the DOT language
written here, and by `dot -Tsvg` when Graphviz is installed.

usage: partition_formats.py --tessera BIN --data DIR --schema FILE
                            --plugins DIR --devmem SO --work DIR
"""
import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL: " + what)
    return cond


def run(tessera, args):
    p = subprocess.run([tessera] + args, capture_output=True)
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


# --- the model, read independently ------------------------------------------

ELEM_BYTES = {TensorProto.FLOAT: 4, TensorProto.DOUBLE: 8, TensorProto.INT64: 8,
              TensorProto.INT32: 4, TensorProto.FLOAT16: 2, TensorProto.BOOL: 1,
              TensorProto.UINT8: 1, TensorProto.INT8: 1}


def static_bytes(model):
    """name -> bytes for every value whose shape onnx's inference fixes."""
    inferred = onnx.shape_inference.infer_shapes(model)
    out = {}
    g = inferred.graph
    for vi in list(g.input) + list(g.output) + list(g.value_info):
        t = vi.type.tensor_type
        if not t.HasField("shape") or t.elem_type not in ELEM_BYTES:
            continue
        dims = [d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim]
        if None in dims:
            continue
        out[vi.name] = int(np.prod(dims, dtype=np.int64)) * ELEM_BYTES[t.elem_type]
    for init in g.initializer:
        out[init.name] = numpy_helper.to_array(init).nbytes
    return out


# --- a reader for the DOT language (the subset Graphviz documents) ---------

TOKEN = re.compile(r'\s+|//[^\n]*|/\*.*?\*/|(->|--|[{}\[\];,=:])|("(?:\\"|\\(?!")|[^"\\])*")'
                   r'|([A-Za-z_\x80-\U0010ffff][A-Za-z_0-9\x80-\U0010ffff]*|-?(?:\.\d+|\d+(?:\.\d*)?))',
                   re.S)


def dot_tokens(text):
    pos, toks = 0, []
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise ValueError("DOT: cannot read at %r" % text[pos:pos + 30])
        pos = m.end()
        if m.group(1):
            toks.append(m.group(1))
        elif m.group(2):
            # Graphviz's lexer: \" is a quote, any other backslash stays.
            toks.append(("ID", m.group(2)[1:-1].replace('\\"', '"')))
        elif m.group(3):
            toks.append(("ID", m.group(3)))
    return toks


def dot_parse(text):
    """Returns nodes {id: attrs}, edges [(a, b, attrs)], clusters {name: (attrs, [node ids])}."""
    toks = dot_tokens(text)
    i = 0
    nodes, edges, clusters = {}, [], {}

    def peek():
        return toks[i] if i < len(toks) else None

    def take(want=None):
        nonlocal i
        t = peek()
        if t is None or (want is not None and t != want):
            raise ValueError("DOT: expected %r, got %r" % (want, t))
        i += 1
        return t

    def ident():
        t = take()
        if not isinstance(t, tuple):
            raise ValueError("DOT: expected an ID, got %r" % (t,))
        return t[1]

    def attrs():
        a = {}
        while peek() == "[":
            take("[")
            while peek() != "]":
                k = ident()
                take("=")
                a[k] = ident()
                if peek() in (",", ";"):
                    take()
            take("]")
        return a

    def stmts(members, cluster_attrs):
        while peek() != "}":
            t = peek()
            if t == ("ID", "subgraph") or t == "{":
                if t != "{":
                    take()
                name = ident() if isinstance(peek(), tuple) else None
                take("{")
                inner, inner_attrs = [], {}
                stmts(inner, inner_attrs)
                take("}")
                if name and name.startswith("cluster"):
                    check(name not in clusters, "DOT: cluster %s twice" % name)
                    clusters[name] = (inner_attrs, inner)
                members.extend(inner)
            elif t in (("ID", "node"), ("ID", "edge"), ("ID", "graph")):
                take()
                attrs()
            else:
                a = ident()
                if peek() == "=":
                    take("=")
                    cluster_attrs[a] = ident()
                elif peek() == "->":
                    chain = [a]
                    while peek() == "->":
                        take("->")
                        chain.append(ident())
                    ea = attrs()
                    for x, y in zip(chain, chain[1:]):
                        edges.append((x, y, ea))
                else:
                    na = attrs()
                    nodes.setdefault(a, {}).update(na)
                    members.append(a)
            if peek() == ";":
                take(";")

    if peek() == ("ID", "strict"):
        take()
    take(("ID", "digraph"))
    if isinstance(peek(), tuple):
        ident()
    take("{")
    stmts([], {})
    take("}")
    if i != len(toks):
        raise ValueError("DOT: text after the graph")
    return nodes, edges, clusters


def label_lines(label):
    """A label's lines as Graphviz renders them: \\n breaks, \\\\ a backslash."""
    out, cur, k = [], "", 0
    while k < len(label):
        c = label[k]
        if c == "\\" and k + 1 < len(label):
            n = label[k + 1]
            if n in "nlr":
                out.append(cur)
                cur = ""
            else:
                cur += n
            k += 2
            continue
        cur += c
        k += 1
    out.append(cur)
    return out


# --- checks on one model -----------------------------------------------------


def check_json(name, j, model, validator, expect_names=True):
    g = model.graph
    model_ops = {n.name: n.op_type for n in g.node}
    pieces = j["pieces"]
    check([p["id"] for p in pieces] == list(range(len(pieces))), name + ": piece ids are 0..n-1")
    seen = collections.Counter(n for p in pieces for n in p["nodes"])
    check(all(c == 1 for c in seen.values()), name + ": every node in exactly one piece")
    check(sum(seen.values()) == j["totals"]["nodes"], name + ": totals.nodes counts the pieces' nodes")
    folded = {f["node"]: f for f in j["folded"] if "body" not in f}
    check(not set(folded) & set(seen), name + ": a folded node is in no piece")
    check(j["totals"]["folded"] == len(j["folded"]), name + ": totals.folded")
    if expect_names:
        check(set(seen) | set(folded) == set(model_ops), "%s: piece nodes %s and folded %s are the model's %s"
              % (name, sorted(seen), sorted(folded), sorted(model_ops)))
    for p in pieces:
        check(len(p["ops"]) == len(p["nodes"]), name + ": ops side by side with nodes")
        for n, op in zip(p["nodes"], p["ops"]):
            if n in model_ops:
                check(model_ops[n] == op, "%s: node %s is a %s, JSON says %s" % (name, n, model_ops[n], op))
    # Pieces run in order: each input exists before its piece runs.
    avail = {i.name for i in g.input} | {i.name for i in g.initializer}
    avail |= {o for f in folded.values() for o in f["outputs"]}
    made = {t for p in pieces for t in p["outputs"]}
    for p in pieces:
        for t in p["inputs"]:
            # A Gradient's rewrite adds constants of its own (expect_names False).
            check(t in avail or (not expect_names and t not in made),
                  "%s: piece %d reads %s before any piece makes it" % (name, p["id"], t))
        avail |= set(p["outputs"])
    for o in g.output:
        check(o.name in avail, "%s: graph output %s is made" % (name, o.name))
    per = collections.Counter()
    for p in pieces:
        per[p["provider"]] += len(p["nodes"])
    check(all(per[k] == v for k, v in j["totals"]["nodes_per_provider"].items())
          and sum(j["totals"]["nodes_per_provider"].values()) == sum(per.values()),
          name + ": totals.nodes_per_provider")
    check(j["totals"]["pieces"] == len(pieces), name + ": totals.pieces")
    check(j["totals"]["copies"] == len(j["copies"]), name + ": totals.copies")
    check([p["name"] for p in j["providers"]][-1] == "core", name + ": core is the last provider")
    for p in j["providers"]:
        check(len(p["devices"]) >= 1, name + ": provider %s describes a device" % p["name"])
    if validator:
        errs = sorted(validator.iter_errors(j), key=lambda e: list(e.path))
        for e in errs[:5]:
            check(False, "%s: schema: %s at %s" % (name, e.message, list(e.path)))


def nested_pieces(pieces):
    """The pieces of every control-flow body under `pieces`, at any depth."""
    for p in pieces:
        for sg in p.get("subgraphs", []):
            for q in sg["pieces"]:
                yield q
            yield from nested_pieces(sg["pieces"])


def all_pieces(pieces):
    return list(pieces) + list(nested_pieces(pieces))


def check_dot(name, dot_text, j, dot_bin, work, model):
    try:
        nodes, edges, clusters = dot_parse(dot_text)
    except ValueError as e:
        check(False, "%s: %s" % (name, e))
        return None
    pieces = j["pieces"]
    domain = {n.name: n.domain for n in model.graph.node if n.domain not in ("", "ai.onnx")}
    piece_clusters = {k: v for k, v in clusters.items() if re.fullmatch(r"cluster_p\d+", k)}
    check(len(piece_clusters) == len(pieces), "%s: one cluster per piece (%d, %d)"
          % (name, len(piece_clusters), len(pieces)))
    # Control-flow bodies: a cluster per body and one per body piece, nested.
    body_pieces = list(nested_pieces(pieces))
    body_clusters = [k for k in clusters if re.fullmatch(r"cluster_b\d+_", k)]
    body_piece_clusters = [k for k in clusters if re.fullmatch(r"cluster_b\d+_p\d+", k)]
    check(len(body_clusters) == sum(len(p.get("subgraphs", [])) for p in all_pieces(pieces))
          and len(body_piece_clusters) == len(body_pieces),
          "%s: one cluster per body (%d) and per body piece (%d, %d)"
          % (name, len(body_clusters), len(body_piece_clusters), len(body_pieces)))
    colours = {}
    for p in pieces:
        c = piece_clusters.get("cluster_p%d" % p["id"])
        if not check(c is not None, "%s: cluster for piece %d" % (name, p["id"])):
            continue
        check(label_lines(c[0].get("label", "")) == ["piece %d: %s" % (p["id"], p["provider"])],
              "%s: cluster label of piece %d" % (name, p["id"]))
        # A label reads "name\nop"; a name ending in a backslash carries one
        # trailing space (see report_dot.c).
        got = sorted("\n".join(label_lines(nodes[n].get("label", ""))).replace("\\ \n", "\\\n")
                     for n in c[1])
        # Control bytes other than newlines are drawn as '?'.
        inside = [p] + list(nested_pieces([p]))
        want = sorted((re.sub(r"[\x00-\x09\x0b-\x1f\x7f]", "?", n) + "\n" if n else "") + (domain.get(n, "") + "." if domain.get(n) else "") + op
                      for q in inside for n, op in zip(q["nodes"], q["ops"]))
        check(got == want, "%s: piece %d's DOT nodes %s are its nodes %s" % (name, p["id"], got, want))
        for n in c[1]:
            if not re.match(r"b\d+_", n):  # a body's node has its own piece's colour
                colours.setdefault(p["provider"], set()).add(nodes[n].get("fillcolor"))
    check(all(len(v) == 1 for v in colours.values()), name + ": one colour per provider")
    check(len({next(iter(v)) for v in colours.values()}) == len(colours), name + ": providers differ in colour")
    legend = clusters.get("cluster_legend")
    if check(legend is not None, name + ": a legend"):
        legend_names = {label_lines(nodes[n].get("label", ""))[0]: nodes[n].get("fillcolor") for n in legend[1]}
        for prov, cs in colours.items():
            check(legend_names.get(prov) == next(iter(cs)), name + ": legend colour of " + prov)
    for a, b, _ in edges:
        check(a in nodes and b in nodes, "%s: edge %s -> %s joins declared nodes" % (name, a, b))
    copy_edges = [e for e in edges if e[2].get("style") == "dashed" and "label" in e[2]
                  and not e[0].startswith("legend")]
    check(len(copy_edges) == len(j["copies"]), "%s: one labelled copy edge per copy (%d, %d)"
          % (name, len(copy_edges), len(j["copies"])))
    for c in j["copies"]:
        check(any(label_lines(e[2]["label"])[0] == c["tensor"] for e in copy_edges),
              "%s: a copy edge names %s" % (name, c["tensor"]))
    if dot_bin:
        path = os.path.join(work, re.sub(r"[^A-Za-z0-9_.-]", "_", name) + ".dot")
        with open(path, "w", encoding="utf-8") as f:
            f.write(dot_text)
        p = subprocess.run([dot_bin, "-Tsvg", "-o", path + ".svg", path], capture_output=True)
        check(p.returncode == 0 and not p.stderr.strip(),
              "%s: dot -Tsvg accepts it: %s" % (name, p.stderr.decode("utf-8", "replace")))
    return nodes, edges


def partition_all(tessera, model_path, args, name, validator, dot_bin, work, expect_names=True):
    """Runs the three formats; returns the JSON (None when the session failed)."""
    model = onnx.load(model_path)
    rc_t, text, err_t = run(tessera, ["partition", model_path] + args)
    rc_j, js, err_j = run(tessera, ["partition", model_path, "--format", "json"] + args)
    rc_d, dot, _ = run(tessera, ["partition", model_path, "--format=dot"] + args)
    check(rc_t == rc_j == rc_d, "%s: same exit status in every format (%d %d %d)" % (name, rc_t, rc_j, rc_d))
    if rc_j != 0:
        check(js == b"" and dot == b"", name + ": nothing on stdout when the session fails")
        check(err_j.strip() != "", name + ": a failure says why")
        return None
    try:
        j = json.loads(js.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        check(False, "%s: JSON does not parse: %s" % (name, e))
        return None
    t = text.decode("utf-8", "replace")
    m = re.search(r"^total: (\d+) nodes in (\d+) pieces", t, re.M)
    check(m is not None, name + ": the text format still prints its total line")
    if m:
        check((int(m.group(1)), int(m.group(2))) == (j["totals"]["nodes"], j["totals"]["pieces"]),
              name + ": text and JSON agree on nodes and pieces")
    check_json(name, j, model, validator, expect_names)
    check_dot(name, dot.decode("utf-8"), j, dot_bin, work, model)
    return j


# --- models made here --------------------------------------------------------


def make_two_memory_model(path):
    """Relu runs on the device test provider (its own memory), Add on reference (host):
    r0 = Relu(x); r1 = Relu(w) (w an initializer); a = Add(r0, r1);
    y = Relu(a). Outputs y and a."""
    f = TensorProto.FLOAT
    w = numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3) - 2, "w")
    nodes = [helper.make_node("Relu", ["x"], ["r0"], name="r0"),
             helper.make_node("Relu", ["w"], ["r1"], name="r1"),
             helper.make_node("Add", ["r0", "r1"], ["a"], name="add"),
             helper.make_node("Relu", ["a"], ["y"], name="r2")]
    g = helper.make_graph(nodes, "two_memories", [helper.make_tensor_value_info("x", f, [2, 3])],
                          [helper.make_tensor_value_info("y", f, [2, 3]),
                           helper.make_tensor_value_info("a", f, [2, 3])], [w])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)


WEIRD = ['q"uote', "back\\slash", "trail\\", 'both\\"', "new\nline", "tab\there", "ünï cødé ✓", "{[;]}->"]


def make_weird_names_model(path):
    """A chain of Relus whose node and tensor names need escaping."""
    f = TensorProto.FLOAT
    names = ["x"] + ["t " + n for n in WEIRD]
    nodes = [helper.make_node("Relu", [names[k]], [names[k + 1]], name=WEIRD[k]) for k in range(len(WEIRD))]
    g = helper.make_graph(nodes, 'weird "graph"', [helper.make_tensor_value_info("x", f, [4])],
                          [helper.make_tensor_value_info(names[-1], f, [4])])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)


def expected_copies(model, j, device_provs):
    """The copies a run makes, derived from the model and the placement the
    JSON reports: a piece reads a value held in another memory (the memory of
    the provider whose piece produced it; host for inputs and initializers)
    and no earlier piece in its memory copied it this run; a graph output
    produced in device memory is read back unless a host piece already did."""
    g = model.graph
    piece_of = {n: p["id"] for p in j["pieces"] for n in p["nodes"]}
    mem = {p["id"]: (p["provider"] if p["provider"] in device_provs else "host") for p in j["pieces"]}
    made_by = {}
    for n in g.node:
        for o in n.output:
            made_by[o] = piece_of[n.name]
    inits = {i.name for i in g.initializer}
    sizes = static_bytes(model)
    want = []
    crossed = set()  # (tensor, memory) copied so far, in run order
    for p in sorted(j["pieces"], key=lambda q: q["id"]):
        reads = []
        for n in g.node:
            if piece_of[n.name] == p["id"]:
                reads += [t for t in n.input if t and made_by.get(t) != p["id"] and t not in reads]
        for t in reads:
            src = made_by.get(t)
            src_mem = mem[src] if src is not None else "host"
            if src_mem != mem[p["id"]] and (t, mem[p["id"]]) not in crossed:
                crossed.add((t, mem[p["id"]]))
                want.append((t, src, p["id"], sizes.get(t), t in inits and mem[p["id"]] != "host"))
    for o in g.output:
        src = made_by.get(o.name)
        if src is not None and mem[src] != "host" and (o.name, "host") not in crossed:
            want.append((o.name, src, None, sizes.get(o.name), False))
    return sorted(want, key=repr)


def main():
    ap = argparse.ArgumentParser()
    for a in ("tessera", "data", "schema", "plugins", "devmem", "work"):
        ap.add_argument("--" + a, required=True)
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    try:
        import jsonschema
        with open(a.schema, encoding="utf-8") as f:
            schema = json.load(f)
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
        validator = cls(schema)
    except ImportError:
        validator = None
        print("note: python3-jsonschema is not installed; the JSON is not checked against the schema")
    dot_bin = shutil.which("dot")
    if not dot_bin:
        print("note: Graphviz (dot) is not installed; DOT is checked by this script's own reader only")

    # 1. Every model in tests/data with the reference provider.
    ok = 0
    for fn in sorted(os.listdir(a.data)):
        if not fn.endswith(".onnx"):
            continue
        path = os.path.join(a.data, fn)
        model = onnx.load(path)
        # The session rewrites Gradient nodes into their own graphs.
        plain = not any(n.op_type == "Gradient" for n in model.graph.node)
        j = partition_all(a.tessera, path, ["-p", "reference"], fn, validator, dot_bin, a.work, plain)
        if j is not None:
            ok += 1
            check(j["copies"] == [], fn + ": no copies on host providers only")
            check([p["name"] for p in j["providers"]] == ["reference", "core"], fn + ": providers")
    check(ok >= 5, "at least five tests/data models partition (%d)" % ok)

    # 2. A function op expanded: the reference provider declines LayerNormalization.
    ln_path = os.path.join(a.data, "pin_layernorm.onnx")
    ln = onnx.load(ln_path)
    j = partition_all(a.tessera, ln_path, ["-p", "reference", "--provider-option",
                                           "reference:exclude_ops=LayerNormalization"],
                      "pin_layernorm expanded", validator, dot_bin, a.work, expect_names=False)
    if j and check(len(j["expanded"]) == 1, "LayerNormalization expanded once"):
        ln_node = next(n for n in ln.graph.node if n.op_type == "LayerNormalization")
        e = j["expanded"][0]
        check((e["node"], e["op"], e["domain"]) == (ln_node.name, "LayerNormalization", ""), "expansion record")
        check(len(e["body_nodes"]) > 1 and all(b.startswith(ln_node.name + "/") for b in e["body_nodes"]),
              "body nodes are named after their node")
        rest = {n.name for n in ln.graph.node} - {ln_node.name}
        got = {n for p in j["pieces"] for n in p["nodes"]}
        check(got == rest | set(e["body_nodes"]), "pieces hold the other nodes and the body nodes")
        check("LayerNormalization" not in {op for p in j["pieces"] for op in p["ops"]},
              "no LayerNormalization left")

    # 3. Declines: a test provider that runs only com.example.Mystery, before reference.
    custom = os.path.join(a.plugins, "plugin_custom_op.so")
    my_path = os.path.join(a.data, "abi_mystery.onnx")
    my = onnx.load(my_path)
    j = partition_all(a.tessera, my_path, ["-p", custom + ",reference"], "abi_mystery custom",
                      validator, dot_bin, a.work)
    if j:
        want = sorted((n.name, n.op_type) for n in my.graph.node if n.op_type != "Mystery")
        got = sorted((d["node"], d["op"]) for d in j["declined"] if d["provider"] == "custom")
        check(got == want, "custom declines %s (got %s)" % (want, got))
        check(all(d["reason"] for d in j["declined"]), "declines carry a reason")
        owner = {n: p["provider"] for p in j["pieces"] for n in p["nodes"]}
        for n in my.graph.node:
            check(owner.get(n.name) == ("custom" if n.op_type == "Mystery" else "reference"),
                  "node %s placed" % n.name)

    # 4. Two memories: the device test provider (its own memory) runs the Relus, reference the Adds.
    two = os.path.join(a.work, "two_memories.onnx")
    make_two_memory_model(two)
    for path, label in ((two, "two_memories"), (os.path.join(a.data, "exec_chain.onnx"), "exec_chain devmem")):
        model = onnx.load(path)
        j = partition_all(a.tessera, path, ["-p", a.devmem + ",reference", "--provider-option", "device:ops=Relu",
                           "--assign", "Relu=device"],
                          label, validator, dot_bin, a.work)
        if not j:
            continue
        owner = {n: p["provider"] for p in j["pieces"] for n in p["nodes"]}
        check(all(owner[n.name] == ("device" if n.op_type == "Relu" else "reference") for n in model.graph.node),
              label + ": Relu on device, the rest on reference")
        dev = [p for p in j["providers"] if p["name"] == "device"]
        check(dev and dev[0]["devices"][0]["memory"] == "device", label + ": device has device memory")
        want = expected_copies(model, j, {"device"})
        got = sorted(((c["tensor"], c["from_piece"], c["to_piece"], c["bytes"], c.get("once_per_session", False))
                      for c in j["copies"]), key=repr)
        check(len(want) > 0 and got == want, "%s: copies %s, expected %s" % (label, got, want))
        per_run = sum(w[3] for w in want if not w[4])
        check(j["totals"]["copy_bytes"] == per_run, "%s: copy_bytes %d, expected %d"
              % (label, j["totals"]["copy_bytes"], per_run))
        if path == two:
            check(any(w[4] for w in want), "two_memories: the initializer is copied once per session")

    # 5. Names that need escaping, in JSON and DOT.
    weird = os.path.join(a.work, "weird_names.onnx")
    make_weird_names_model(weird)
    j = partition_all(a.tessera, weird, ["-p", "reference"], "weird names", validator, dot_bin, a.work)
    if j:
        check(sorted(n for p in j["pieces"] for n in p["nodes"]) == sorted(WEIRD), "weird names round-trip in JSON")

    # 6. Control-flow bodies, nested two deep, in every format.
    # tests/data/make_abi_models.py, nested_cf(): Loop 'loop0' whose body
    # holds Add 'body_add' and If 'body_if' (Relu 'relu_then' / Neg 'neg_else');
    # its Identity 'body_cond' (cond_out = cond_in) is removed at load
    # (core/identity_elide.c), so the session's body has two nodes
    nested = os.path.join(a.data, "abi_nested_cf.onnx")
    j = partition_all(a.tessera, nested, ["-p", "reference"], "nested control flow", validator, dot_bin, a.work)
    if j:
        loop = [p for p in j["pieces"] if p["ops"] == ["Loop"]]
        if check(len(loop) == 1 and loop[0]["provider"] == "core", "the Loop is the core's"):
            sg = loop[0].get("subgraphs", [])
            check([(b["attribute"], b["path"], b["nodes"]) for b in sg] == [("body", "loop0/body", 2)],
                  "the Loop's body: %s" % [(b["attribute"], b["path"], b["nodes"]) for b in sg])
            inner = {n: p for b in sg for p in b["pieces"] for n in p["nodes"]}
            check(sorted(inner) == ["body_add", "body_if"], "body pieces hold the body's nodes once")
            if_piece = inner.get("body_if", {})
            got = [(b["attribute"], b["path"], [n for p in b["pieces"] for n in p["nodes"]],
                    {p["provider"] for p in b["pieces"]}) for b in if_piece.get("subgraphs", [])]
            check(got == [("then_branch", "loop0/body/body_if/then_branch", ["relu_then"], {"reference"}),
                          ("else_branch", "loop0/body/body_if/else_branch", ["neg_else"], {"reference"})],
                  "the If inside the body shows both branches: %s" % got)
        rc, out, err = run(a.tessera, ["partition", nested, "-p", "reference"])
        text = out.decode("utf-8", "replace")
        for want in ("loop0/body: 2 nodes", "loop0/body/body_if/then_branch: 1 node in 1 piece",
                     "loop0/body/body_if/else_branch/neg_else", "loop0/body/body_add"):
            check(want in text, "the text report shows '%s':\n%s" % (want, text))

        # Profiles name the bodies' pieces by path: 3 iterations, the then branch each time.
        trace = os.path.join(a.work, "nested_trace.json")
        rc, out, err = run(a.tessera, ["bench", nested, "-p", "reference", "--runs", "1", "--warmup", "0",
                                       "--fill", "n=3", "--fill", "c=1", "--profile", trace])
        if check(rc == 0, "bench --profile of the nested model: " + err):
            with open(trace, encoding="utf-8") as f:
                ev = json.load(f)
            ev = ev["traceEvents"] if isinstance(ev, dict) else ev
            names = collections.Counter(e["args"].get("nodes") for e in ev if e.get("cat") == "piece")
            check(names["loop0/body/body_add"] == 3 and names["loop0/body/body_if/then_branch/relu_then"] == 3
                  and names["loop0/body/body_if/else_branch/neg_else"] == 0 and names["loop0"] == 1,
                  "profile events inside bodies by path: %s" % dict(names))
            check(all(e["args"].get("path") == e["args"]["nodes"].rsplit("/", 1)[0] + "/" for e in ev
                      if e.get("cat") == "piece" and e["args"].get("nodes", "").startswith("loop0/")),
                  "body events carry their body's path")
            summary = out.decode("utf-8", "replace")
            # one Loop and the If of each of its 3 iterations
            check("control flow: 4 If/Loop/Scan/SequenceMap runs" in summary,
                  "the summary keeps control flow apart: " + summary)

    # 7. The option itself.
    rel = os.path.join(a.data, "abi_relu_add.onnx")
    rc, out, err = run(a.tessera, ["partition", rel, "-p", "reference", "--format", "xml"])
    check(rc == 2 and "--format" in err and out == b"", "--format xml is a usage error")
    rc, out, err = run(a.tessera, ["partition", rel, "-p", "reference", "--format"])
    check(rc == 2, "--format without a value is a usage error")
    rc, out, err = run(a.tessera, ["partition", rel, "-p", "reference", "--format", "text"])
    check(rc == 0 and out.startswith(b"piece"), "--format text is the table")
    rc, out, err = run(a.tessera, ["partition", "--help"])
    check(rc == 0 and b"--format" in out, "--help mentions --format")

    if FAILURES:
        print("%d check(s) failed" % len(FAILURES))
        return 1
    if validator is None:
        print("SKIP: every other check passed, but python3-jsonschema is missing "
              "(apt-get install python3-jsonschema) so the schema was not checked")
        return 77
    print("partition_formats: all checks passed%s" % ("" if dot_bin else " (dot -Tsvg skipped: no Graphviz)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
