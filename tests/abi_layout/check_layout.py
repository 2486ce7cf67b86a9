#!/usr/bin/env python3
"""Compares the layout the probe prints (stdin) with the frozen one: every
member of layout_v1.txt must be at the same offset with the same size, and
every struct at least as large. New members (appended) are fine; they are
listed so the baseline can be extended when a version is released.
usage: PROBE | check_layout.py layout_v1.txt"""
import sys


def parse(lines):
    members, sizes = {}, {}
    for line in lines:
        f = line.split()
        if not f:
            continue
        if f[0] == "sizeof":
            sizes[f[1]] = int(f[2])
        else:
            members[f[0]] = (int(f[1]), int(f[2]))
    return members, sizes


def main(golden_path):
    with open(golden_path) as f:
        want_m, want_s = parse(f)
    got_m, got_s = parse(sys.stdin)
    bad = []
    for name, (off, size) in want_m.items():
        if name not in got_m:
            bad.append("%s: removed (was at offset %d, %d bytes)" % (name, off, size))
        elif got_m[name] != (off, size):
            bad.append("%s: now at offset %d, %d bytes; v1 has %d, %d" % ((name,) + got_m[name] + (off, size)))
    for name, size in want_s.items():
        if name not in got_s:
            bad.append("struct %s: removed" % name)
        elif got_s[name] < size:
            bad.append("struct %s: %d bytes, smaller than v1's %d" % (name, got_s[name], size))
    added = sorted(set(got_m) - set(want_m))
    for line in bad:
        print("ABI BREAK: " + line)
    print("%d members and %d structs of v1 checked; %d members appended since%s" %
          (len(want_m), len(want_s), len(added), (": " + ", ".join(added)) if added else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
