"""Checks a trace written by profile_report.c: valid JSON, a traceEvents
array of complete ("X") events carrying the fields docs/compare.md lists.

usage: check_trace.py TRACE.json [MIN_PIECES]
"""
import json
import sys

PIECE_ARGS = {"provider", "device", "nodes", "ops", "bytes_in", "bytes_out"}
COPY_ARGS = {"value", "from", "to", "bytes"}
EVENT_FIELDS = {"name", "cat", "ph", "ts", "dur", "pid", "tid", "args"}


def main(path, min_pieces):
    with open(path) as f:
        trace = json.load(f)
    events = trace["traceEvents"]
    assert isinstance(events, list), "traceEvents is not an array"
    pieces = 0
    for e in events:
        missing = EVENT_FIELDS - e.keys()
        assert not missing, f"event {e} lacks {missing}"
        assert e["ph"] == "X", f"event {e} is not a complete event"
        assert e["dur"] >= 0 and e["ts"] >= 0, f"event {e} has negative times"
        want = PIECE_ARGS if e["cat"] == "piece" else COPY_ARGS if e["cat"] == "copy" else None
        assert want is not None, f"event {e} has unknown cat"
        missing = want - e["args"].keys()
        assert not missing, f"event {e} lacks args {missing}"
        pieces += e["cat"] == "piece"
    assert pieces >= min_pieces, f"{pieces} piece events, expected at least {min_pieces}"
    print(f"{path}: {len(events)} events, {pieces} pieces: ok")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 1)
