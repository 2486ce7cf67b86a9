#!/usr/bin/env python3
"""Writes a C program that prints the layout of every struct the public
headers define: "STRUCT.MEMBER OFFSET SIZE" per member and "sizeof STRUCT
N" per struct. check_layout.py compares its output with layout_v1.txt, the
layout ABI v1 froze: a member may never move or change size, a struct may
only grow (members are appended).
usage: gen_layout_probe.py OUT.c HEADER..."""
import re
import sys


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def members(body):
    """Member names of a struct body, in order."""
    names, decl, depth = [], "", 0
    for ch in body:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == ";" and depth == 0:
            d = " ".join(decl.split())
            decl = ""
            fn = re.search(r"\(\s*\*\s*(\w+)\s*\)", d)
            if fn:
                names.append(fn.group(1))
                continue
            for part in d.split(","):
                m = re.search(r"(\w+)\s*(\[[^\]]*\])?\s*$", part.strip())
                if m:
                    names.append(m.group(1))
            continue
        decl += ch
    return names


def structs(text):
    for m in re.finditer(r"typedef\s+struct\s+(\w+)\s*\{(.*?)\}\s*(\w+)\s*;", text, flags=re.S):
        yield m.group(3), members(m.group(2))


def main(out, headers):
    found = []
    for h in headers:
        with open(h) as f:
            found += list(structs(strip_comments(f.read())))
    lines = ["#include <stddef.h>", "#include <stdio.h>", "#include <tessera/tessera.h>",
             "#include <tessera/provider.h>", "", "int main(void) {"]
    for name, mems in found:
        for m in mems:
            lines.append('    printf("%s.%s %%zu %%zu\\n", offsetof(%s, %s), sizeof(((%s *)0)->%s));'
                         % (name, m, name, m, name, m))
        lines.append('    printf("sizeof %s %%zu\\n", sizeof(%s));' % (name, name))
    lines += ["    return 0;", "}", ""]
    with open(out, "w") as f:
        f.write("\n".join(lines))


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.stderr.write(__doc__)
        sys.exit(2)
    main(sys.argv[1], sys.argv[2:])
