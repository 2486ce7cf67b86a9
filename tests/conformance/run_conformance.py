#!/usr/bin/python3
"""The conformance check: ONNX backend test cases through `tessera test`.

Runs `tessera test -p reference` over each suite folder, writes every case's
result to a TSV (input for tools/conformance_report.py), and fails when a
case listed in the expected-pass file did not PASS. Cases that pass but are
not listed are printed ("newly passing: add them") and do not fail the run,
so progress never breaks the build; tools/update_expected_pass.sh adds them.

Which suite: the shared data (../shared/onnx-tests: node, pytorch-converted,
pytorch-operator, simple) checked against expected_pass.txt; where that
folder does not exist (a clone outside this workplace), the older suite that
python3-onnx 1.12 can generate (tools/gen_onnx_suite.sh) checked against
expected_pass_onnx112.txt.
"""
import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FOLDERS = ("node", "pytorch-converted", "pytorch-operator", "simple")
SKIPPED = 77  # ctest's SKIP_RETURN_CODE in CMakeLists.txt
LINE = re.compile(r"^(PASS|FAIL|SKIP) (\S+?)(?:: (.*))?$")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tessera", required=True, help="the tessera executable")
    p.add_argument("--suite", default=os.path.join(ROOT, "..", "shared", "onnx-tests"),
                   help="folder holding node/, pytorch-converted/, ... (default: %(default)s)")
    p.add_argument("--work", default=os.getcwd(),
                   help="where results (and a generated suite) go (default: current folder)")
    p.add_argument("--onnx112", action="store_true",
                   help="use the generated onnx 1.12 suite even when --suite exists")
    p.add_argument("--expected", help="expected-pass list (default: by suite)")
    p.add_argument("--results", help="TSV of every result (default: WORK/conformance-results.tsv)")
    p.add_argument("--providers", default="reference", help="-p for tessera (default: %(default)s)")
    p.add_argument("-j", "--jobs", type=int, default=0, help="parallel cases (default: CPUs)")
    p.add_argument("--timeout", type=float, default=120, help="seconds per case")
    p.add_argument("--update", action="store_true",
                   help="rewrite the expected-pass list from this run instead of checking")
    return p.parse_args()


def suite_folders(args):
    """[(folder name, path)], the expected-pass file, and the suite's label."""
    if not args.onnx112 and os.path.isdir(args.suite):
        found = [(f, os.path.join(args.suite, f)) for f in FOLDERS
                 if os.path.isdir(os.path.join(args.suite, f))]
        if found:
            return found, os.path.join(HERE, "expected_pass.txt"), "shared onnx-tests"
    out = os.path.join(args.work, "onnx112-suite")
    stamp = os.path.join(out, ".generated")
    if not os.path.exists(stamp):
        print(f"conformance: {args.suite} not found; generating the onnx 1.12 suite into {out}",
              flush=True)
        gen = subprocess.run([os.path.join(ROOT, "tools", "gen_onnx_suite.sh"), out])
        if gen.returncode != 0:
            # No data and no way to make it (python3-onnx missing): nothing
            # to check. ctest shows this as "Skipped" (SKIP_RETURN_CODE),
            # which stays visible, unlike a silent pass.
            print("conformance: cannot generate the suite (is python3-onnx installed?); "
                  "skipping", flush=True)
            sys.exit(SKIPPED)
        open(stamp, "w").close()
    # real/ holds only download links (data.json), no model.onnx: left out.
    found = [(f, os.path.join(out, f)) for f in FOLDERS if os.path.isdir(os.path.join(out, f))]
    return found, os.path.join(HERE, "expected_pass_onnx112.txt"), "onnx 1.12 generated suite"


def run_folder(args, name, path):
    """{'folder/case': (status, reason)} for one folder."""
    cmd = [args.tessera, "test", "-p", args.providers, "--timeout", str(args.timeout)]
    if args.jobs > 0:
        cmd += ["-j", str(args.jobs)]
    cmd.append(path)
    print(f"conformance: {' '.join(cmd)}", flush=True)
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, errors="replace")
    results = {}
    summary = None
    for line in proc.stdout.splitlines():
        m = LINE.match(line)
        if m:
            results[f"{name}/{m.group(2)}"] = (m.group(1), m.group(3) or "")
        elif re.match(r"^\d+ passed, \d+ failed, \d+ skipped$", line):
            summary = line
    # 0: all passed, 1: some failed; anything else (2: usage, a signal) means
    # the tool itself did not run properly, and the numbers would lie.
    if proc.returncode not in (0, 1) or summary is None:
        sys.exit(f"conformance: `{' '.join(cmd)}` ended with status {proc.returncode}"
                 f"{'' if summary else ' and no summary line'}")
    print(f"conformance: {name}: {summary}", flush=True)
    return results


def read_list(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [l.strip() for l in f if l.strip() and not l.startswith("#")]


def write_list(path, label, names):
    with open(path, "w") as f:
        f.write(f"# Cases of the {label} that pass with `tessera test -p reference`.\n"
                "# The conformance ctest fails when one of them stops passing.\n"
                "# Regenerate with tools/update_expected_pass.sh; one FOLDER/CASE per line.\n")
        for n in sorted(names):
            f.write(n + "\n")


def main():
    args = parse_args()
    os.makedirs(args.work, exist_ok=True)
    folders, expected_path, label = suite_folders(args)
    if args.expected:
        expected_path = args.expected
    results = {}
    for name, path in folders:
        results.update(run_folder(args, name, path))

    results_path = args.results or os.path.join(args.work, "conformance-results.tsv")
    with open(results_path, "w") as f:
        f.write(f"# suite: {label}\ncase\tstatus\treason\n")
        for case in sorted(results):
            status, reason = results[case]
            f.write(f"{case}\t{status}\t{reason.replace(chr(9), ' ')}\n")
    print(f"conformance: results in {results_path}")

    passed = {c for c, (s, _) in results.items() if s == "PASS"}
    if args.update:
        write_list(expected_path, label, passed)
        print(f"conformance: wrote {len(passed)} cases to {expected_path}")
        return 0

    expected = read_list(expected_path)
    lost = [c for c in expected if c not in passed]
    new = sorted(passed - set(expected))
    if new:
        print(f"\nnewly passing: add them ({len(new)}; tools/update_expected_pass.sh does):")
        for c in new:
            print(f"  {c}")
    total = len(results)
    print(f"\nconformance: {len(passed)} of {total} cases pass; "
          f"{len(expected) - len(lost)} of {len(expected)} expected passes held ({label})")
    if lost:
        print(f"\nREGRESSIONS: {len(lost)} expected-pass cases did not pass:")
        for c in lost:
            status, reason = results.get(c, ("MISSING", "case not found in the suite"))
            print(f"  {status} {c}: {reason}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
