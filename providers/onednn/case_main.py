"""The command line of this folder's *_cases.py scripts, in one place:

    NAME_cases.py OUT_DIR                  writes the cases, prints their dirs
    NAME_cases.py --check TESSERA OUT_DIR  writes and checks them (exit 0, 1,
                                           or 77 when skipped)

Imports nothing but sys, so a script can call it when numpy or onnx is
missing (then it prints the script's usage for a write)."""
import sys


def main(doc, write, check, have_libs):
    """Runs the script's `write(out)` or `check(tessera, out)` as its
    arguments ask; `doc` is its usage, `have_libs` whether numpy and onnx
    imported."""
    if len(sys.argv) == 4 and sys.argv[1] == "--check":
        sys.exit(check(sys.argv[2], sys.argv[3]))
    if len(sys.argv) != 2 or not have_libs:
        sys.stderr.write(doc)
        sys.exit(2)
    write(sys.argv[1])
