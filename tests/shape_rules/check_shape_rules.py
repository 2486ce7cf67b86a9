#!/usr/bin/env python3
"""Every op the reference provider implements (its op tables in
providers/reference/*.c) has a shape and type rule (the shape_op tables of
core/shape_ops_*.c), except those listed in NO_RULE_YET (issue 16; none
left): without a rule an op leaves its outputs' type and rank unknown, and
the next heavy op may be declined by the fast providers.
A new op without a rule fails this test; so does a stale entry below.
usage: check_shape_rules.py SOURCE_ROOT"""
import glob
import os
import re
import sys

# Empty since every op of the reference provider got a rule (sequences,
# optionals, LinearAttention, CausalConvWithState, DeformConv, SwiGLU,
# TfIdfVectorizer, ImageDecoder); the value_types ctest checks the types
# they give on the conformance cases and the zoo.
NO_RULE_YET = set()


def table_ops(pattern, regex, root):
    ops = set()
    for path in glob.glob(os.path.join(root, pattern)):
        with open(path) as f:
            for m in re.finditer(regex, f.read(), flags=re.M):
                ops.add(m.group(m.lastindex))
    return ops


def main(root):
    # {"", "Shape", 1, op_shape, NULL} and OP("Relu", k_relu, ...): the
    # ai.onnx rows of the reference tables
    ref = table_ops("providers/reference/*.c", r'\{\s*""\s*,\s*"([A-Za-z0-9_]+)"\s*,\s*\d+\s*,', root)
    ref |= table_ops("providers/reference/*.c", r'^\s+OP\("([A-Za-z0-9_]+)",', root)
    # {"Conv", 1, rule_conv}
    rules = table_ops("core/shape_ops_*.c", r'\{\s*"([A-Za-z0-9_]+)"\s*,\s*\d+\s*,\s*\w+\s*\}', root)
    if len(ref) < 100 or len(rules) < 100:
        print("FAIL: read %d reference ops and %d rules; the table formats changed?" % (len(ref), len(rules)))
        return 1
    missing = sorted(ref - rules - NO_RULE_YET)
    stale = sorted(NO_RULE_YET & rules)
    for op in missing:
        print("FAIL: the reference provider runs %s, which has no shape rule (core/shape_ops_*.c)" % op)
    for op in stale:
        print("FAIL: %s has a rule now: remove it from NO_RULE_YET" % op)
    print("%d reference ops, %d with a rule, %d listed as not yet" % (len(ref), len(ref & rules), len(ref & NO_RULE_YET)))
    return 1 if missing or stale else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
