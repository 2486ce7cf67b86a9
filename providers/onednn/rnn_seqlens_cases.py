#!/usr/bin/python3
"""Cases for the oneDNN provider's LSTM, GRU and RNN with per-batch
sequence_lens (odn_rnn_seqlens.c, odn_rnn_cell.c): forward, reverse and
bidirectional; lengths all equal to the sequence, mixed, 1, T and 0, all
short of T; batch 1, 4, 5 and 64; hidden sizes that leave partial 8-lane
blocks; LSTM peepholes; RNN Tanh, Relu and Sigmoid; more than one chunk of
input projections; with and without initial states; Y, Y_h, Y_c and some
omitted; layout 0 and 1;
sequence_lens an int32 graph input (as PyTorch's packed-sequence exports feed
it, through a Cast), an int64 graph input, or a constant; or no
sequence_lens at all (nolens_*: every row runs T steps, the same loop where
odn_rnn_route.c prefers it to oneDNN's primitive). Each case has two or three
data sets with other lengths (and other X), run in one session.
Expected values: the ONNX formulas in float64 numpy (rnn_cases.run_dir) run
per batch row over that row's first len_b steps only; Y rows past len_b are
zero, Y_h/Y_c the state after the row's last step (the initial state when
len_b = 0, as the reference provider gives).
usage: rnn_seqlens_cases.py OUT_DIR (prints the case dirs)
       rnn_seqlens_cases.py --hostile TESSERA OUT_DIR (lengths past T,
         negative, or too few/many at run time must fail the run naming
         sequence_lens)
"""
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rnn_cases import run_dir  # noqa: E402

rng = np.random.default_rng(20261207)


def ref(cell, x, w, r, b, h0, c0, lens, direction, layout, lbr, p=None, act="Tanh"):
    """Y [T, D, N, H], Y_h, Y_c [D, N, H] (layout 0; transposed for 1)."""
    x = x.astype(np.float64)
    if layout:
        x = x.transpose(1, 0, 2)
        h0 = None if h0 is None else h0.transpose(1, 0, 2)
        c0 = None if c0 is None else c0.transpose(1, 0, 2)
    steps, n, _ = x.shape
    dirs, gh, _ = w.shape
    hs = r.shape[2]
    y = np.zeros((steps, dirs, n, hs))
    yh = np.zeros((dirs, n, hs))
    yc = np.zeros((dirs, n, hs))
    for d in range(dirs):
        rev = direction == "reverse" or d == 1
        bd = np.zeros(2 * gh) if b is None else b[d].astype(np.float64)
        for i in range(n):
            h = np.zeros((1, hs)) if h0 is None else h0[d, i:i + 1].astype(np.float64)
            c = np.zeros((1, hs)) if c0 is None else c0[d, i:i + 1].astype(np.float64)
            L = int(lens[i])
            if L > 0:
                pd = None if p is None else p[d].astype(np.float64)
                yd, h, c = run_dir(cell, x[:L, i:i + 1], w[d].astype(np.float64), r[d].astype(np.float64), bd, h, c,
                                   pd, rev, lbr, act)
                y[:L, d, i] = yd[:, 0]
            yh[d, i], yc[d, i] = h[0], c[0]
    if layout:
        y, yh, yc = y.transpose(2, 0, 1, 3), yh.transpose(1, 0, 2), yc.transpose(1, 0, 2)
    return y, yh, yc


def tensor(name, a):
    return numpy_helper.from_array(a, name).SerializeToString()


def case(out_dir, name, cell, steps, batch, inp, hidden, direction, len_sets, layout=0, init=("h", "c"),
         outs=(0, 1, 2), seq="int32", lbr=0, peep=False, act="Tanh"):
    """seq: 'int32' / 'int64' graph input, 'const' (len_sets[0] as an
    initializer, one data set) or 'none' (no sequence_lens: len_sets must
    be all `steps`); peep: LSTM peepholes P; act: RNN's activation."""
    gates = {"LSTM": 4, "GRU": 3, "RNN": 1}[cell]
    dirs = 2 if direction == "bidirectional" else 1
    s = 1.0 / np.sqrt(hidden)
    u = lambda *shape: rng.uniform(-s * 2, s * 2, shape).astype(np.float32)
    w, r, b = u(dirs, gates * hidden, inp), u(dirs, gates * hidden, hidden), u(dirs, 2 * gates * hidden)
    state = (batch, dirs, hidden) if layout else (dirs, batch, hidden)
    lstm = cell == "LSTM"
    out_names = [("Y", "Y_h", "Y_c")[k] if k in outs else "" for k in range(3 if lstm else 2)]
    while not out_names[-1]:
        out_names.pop()
    p = u(dirs, 3 * hidden) if peep else None
    names = ["X", "W", "R", "B", "" if seq == "none" else "sequence_lens", "initial_h" if "h" in init else "",
             "initial_c" if "c" in init and lstm else "", "P" if peep else ""]
    while not names[-1]:
        names.pop()
    attrs = dict(hidden_size=hidden, direction=direction)
    if layout:
        attrs["layout"] = 1
    if cell == "GRU":
        attrs["linear_before_reset"] = lbr
    if cell == "RNN":
        attrs["activations"] = [act] * dirs
    inits = [numpy_helper.from_array(a, n) for n, a in (("W", w), ("R", r), ("B", b), ("P", p)) if a is not None]
    vi = lambda n, t, shape: helper.make_tensor_value_info(n, t, shape)
    f = onnx.TensorProto.FLOAT
    xshape = [batch, steps, inp] if layout else [steps, batch, inp]
    inputs = [vi("X", f, xshape)]
    if seq == "none":
        assert all(L == steps for lens in len_sets for L in lens)
    elif seq == "const":
        inits.append(numpy_helper.from_array(np.array(len_sets[0], np.int32), "sequence_lens"))
        len_sets = len_sets[:1]
    else:
        inputs.append(vi("sequence_lens", onnx.TensorProto.INT32 if seq == "int32" else onnx.TensorProto.INT64,
                         [batch]))
    inputs += [vi(n, f, list(state)) for n in names[5:7] if n]
    yshape = [batch, steps, dirs, hidden] if layout else [steps, dirs, batch, hidden]
    shapes = {"Y": yshape, "Y_h": list(state), "Y_c": list(state)}
    outputs = [vi(n, f, shapes[n]) for n in out_names if n]
    g = helper.make_graph([helper.make_node(cell, names, out_names, **attrs)], name, inputs, outputs, inits)
    d = os.path.join(out_dir, name)
    os.makedirs(d, exist_ok=True)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)]), os.path.join(d, "model.onnx"))
    for k, lens in enumerate(len_sets):
        sd = os.path.join(d, "test_data_set_%d" % k)
        os.makedirs(sd, exist_ok=True)
        x = rng.standard_normal(xshape).astype(np.float32)
        h0 = (rng.standard_normal(state) * 0.5).astype(np.float32) if "h" in init else None
        c0 = (rng.standard_normal(state) * 0.5).astype(np.float32) if "c" in init and lstm else None
        y, yh, yc = ref(cell, x, w, r, b, h0, c0, lens, direction, layout, lbr, p, act)
        ins = [("X", x)]
        if seq not in ("const", "none"):
            ins.append(("sequence_lens", np.array(lens, np.int32 if seq == "int32" else np.int64)))
        ins += [(n, a) for n, a in (("initial_h", h0), ("initial_c", c0)) if a is not None and n in names]
        for i, (n, a) in enumerate(ins):
            with open(os.path.join(sd, "input_%d.pb" % i), "wb") as fh:
                fh.write(tensor(n, a))
        res = {"Y": y, "Y_h": yh, "Y_c": yc}
        for i, n in enumerate([n for n in out_names if n]):
            with open(os.path.join(sd, "output_%d.pb" % i), "wb") as fh:
                fh.write(tensor(n, res[n].astype(np.float32)))
    print(d)


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    T = 6
    mixed = [[6, 3, 1, 6, 4], [2, 6, 6, 1, 5], [6, 6, 6, 6, 6]]
    case(out_dir, "seqlens_lstm_forward_b5", "LSTM", T, 5, 4, 5, "forward", mixed)
    case(out_dir, "seqlens_lstm_reverse_b5", "LSTM", T, 5, 4, 5, "reverse", mixed)
    case(out_dir, "seqlens_lstm_bidir_b5", "LSTM", T, 5, 4, 5, "bidirectional", mixed)
    case(out_dir, "seqlens_lstm_bidir_noinit_b5", "LSTM", T, 5, 3, 4, "bidirectional", mixed, init=())
    case(out_dir, "seqlens_lstm_bidir_h_only_yh", "LSTM", T, 5, 3, 4, "bidirectional", mixed, init=("h",),
         outs=(1,))
    case(out_dir, "seqlens_lstm_reverse_yc_only", "LSTM", T, 5, 3, 4, "reverse", mixed, outs=(2,))
    case(out_dir, "seqlens_lstm_bidir_b1", "LSTM", T, 1, 4, 5, "bidirectional", [[3], [6], [1]])
    case(out_dir, "seqlens_lstm_bidir_zero_len", "LSTM", 4, 3, 3, 4, "bidirectional", [[0, 4, 2], [1, 0, 0]])
    case(out_dir, "seqlens_lstm_bidir_layout1", "LSTM", T, 5, 4, 5, "bidirectional", mixed, layout=1)
    case(out_dir, "seqlens_lstm_bidir_int64", "LSTM", T, 5, 4, 5, "bidirectional", mixed, seq="int64")
    case(out_dir, "seqlens_lstm_bidir_const", "LSTM", T, 5, 4, 5, "bidirectional", mixed, seq="const")
    case(out_dir, "seqlens_gru_bidir", "GRU", T, 5, 4, 5, "bidirectional", mixed)
    case(out_dir, "seqlens_gru_bidir_lbr", "GRU", T, 5, 4, 5, "bidirectional", mixed, lbr=1)
    case(out_dir, "seqlens_gru_reverse_lbr_layout1", "GRU", T, 5, 4, 5, "reverse", mixed, layout=1, lbr=1,
         init=())
    case(out_dir, "seqlens_rnn_bidir", "RNN", T, 5, 4, 5, "bidirectional", mixed, outs=(0,))
    # the step loop's own cases (a projection GEMM per chunk of steps, a
    # product per step, the gate math on 8 lanes with masked tails): sizes
    # past one 8-lane block, peepholes, every RNN activation, lengths all
    # short of T (steps stop at the longest), all T, rows longest last
    short = [[3, 1, 2, 3, 0], [2, 2, 2, 2, 2], [1, 4, 2, 5, 3]]
    case(out_dir, "seqlens_lstm_bidir_peep_h13", "LSTM", 9, 5, 7, 13, "bidirectional",
         [[9, 4, 1, 7, 9], [2, 9, 9, 0, 5]], peep=True)
    case(out_dir, "seqlens_lstm_bidir_short", "LSTM", T, 5, 4, 11, "bidirectional", short)
    case(out_dir, "seqlens_lstm_forward_all_T", "LSTM", T, 5, 4, 16, "forward", [[T] * 5, [T, T, T, T, 1]],
         init=("h",))
    case(out_dir, "seqlens_gru_reverse_h13", "GRU", 8, 5, 6, 13, "reverse", [[8, 2, 5, 1, 8], [3, 3, 8, 0, 1]])
    case(out_dir, "seqlens_gru_bidir_lbr_layout1_h17", "GRU", 7, 4, 5, 17, "bidirectional",
         [[7, 1, 4, 6], [2, 7, 0, 3]], layout=1, lbr=1)
    case(out_dir, "seqlens_rnn_forward_relu", "RNN", T, 5, 4, 9, "forward", mixed, act="Relu")
    case(out_dir, "seqlens_rnn_reverse_sigmoid_layout1", "RNN", T, 5, 4, 9, "reverse", short, act="Sigmoid",
         layout=1)
    case(out_dir, "seqlens_lstm_bidir_b1_short", "LSTM", 7, 1, 4, 10, "bidirectional", [[3], [7], [0]])
    # more than one chunk of projections (4 MiB: B * 4H * steps floats)
    case(out_dir, "seqlens_lstm_bidir_chunks", "LSTM", 40, 64, 5, 104, "bidirectional",
         [[7 * i % 41 for i in range(64)]], outs=(0, 2))
    # no sequence_lens (or constant ones all T): the same loop where it beats
    # oneDNN's full-sequence primitive (odn_rnn_route.c)
    for name, cell, direction, kw in (
            ("nolens_lstm_bidir", "LSTM", "bidirectional", {}),
            ("nolens_lstm_forward_peep_noinit", "LSTM", "forward", dict(peep=True, init=())),
            ("nolens_lstm_reverse_layout1_yc", "LSTM", "reverse", dict(layout=1, outs=(2,))),
            ("nolens_lstm_bidir_const_all_T", "LSTM", "bidirectional", dict(seq="const", outs=(1,))),
            ("nolens_gru_bidir", "GRU", "bidirectional", {}),
            ("nolens_gru_forward_lbr_layout1", "GRU", "forward", dict(lbr=1, layout=1)),
            ("nolens_gru_bidir_lbr_yh", "GRU", "bidirectional", dict(lbr=1, outs=(1,), init=())),
            ("nolens_rnn_bidir_tanh", "RNN", "bidirectional", {}),
            ("nolens_rnn_reverse_relu", "RNN", "reverse", dict(act="Relu", outs=(0,))),
            ("nolens_rnn_forward_sigmoid_layout1", "RNN", "forward", dict(act="Sigmoid", layout=1))):
        case(out_dir, name, cell, 7, 5, 6, 19, direction, [[7] * 5, [7] * 5],
             **dict(dict(seq="none"), **kw))
    return 0


def hostile(tessera, out_dir):
    """Lengths past the sequence (T + 1) or negative, or fewer or more of
    them than batch rows, fed at run time: the run must fail naming
    sequence_lens, never read outside X or the lengths (exit 0 when it
    does, 1 otherwise)."""
    import contextlib
    import io
    import subprocess
    bad = 0
    for name, lens in (("seqlens_hostile_long", [6, 7, 2]), ("seqlens_hostile_negative", [3, -1, 2]),
                       ("seqlens_hostile_too_few", [6, 3]), ("seqlens_hostile_too_many", [6, 3, 2, 5])):
        with contextlib.redirect_stdout(io.StringIO()):
            case(out_dir, name, "LSTM", 6, 3, 3, 4, "bidirectional", [[6, 3, 2]])
        d = os.path.join(out_dir, name)
        with open(os.path.join(d, "test_data_set_0", "input_1.pb"), "wb") as fh:
            fh.write(tensor("sequence_lens", np.array(lens, np.int32)))
        r = subprocess.run([tessera, "test", "-p", "onednn,reference", d], capture_output=True, text=True)
        text = r.stdout + r.stderr
        if r.returncode != 1 or "sequence_lens" not in text:
            print("%s: expected a failed run naming sequence_lens, got exit %d:\n%s" % (name, r.returncode, text))
            bad += 1
        else:
            print("ok: %s fails cleanly" % name)
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--hostile":
        sys.exit(hostile(sys.argv[2], sys.argv[3]))
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
