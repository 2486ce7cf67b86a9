#!/usr/bin/python3
"""Backend-style cases for the oneDNN provider's LSTM, GRU and RNN (odn_build_rnn.c):
forward, reverse and bidirectional, layout 0 and 1, batch > 1 (and a batch of
33-40, where oneDNN's brgemm LSTM kernels and packed weights are asked for), with and without initial
states (an LSTM with initial_h alone), with and without B, LSTM peepholes, a
constant sequence_lens equal to the sequence length, GRU linear_before_reset
0 and 1, RNN Tanh/Relu/Sigmoid, and each output omitted somewhere. W, R, B, P
and sequence_lens are initializers (the provider converts constant weights
once); X and the initial states are inputs. Expected values come from the
ONNX operator formulas, written out below in float64 numpy (each direction
run on its own; Y[t] is the state after step t in either direction).
usage: rnn_cases.py OUT_DIR (prints the case dirs)
"""
import os
import sys

import numpy as np
from onnx import helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from extra_cases import save_case  # noqa: E402

rng = np.random.default_rng(20260711)


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


ACT = {"Tanh": np.tanh, "Relu": lambda x: np.maximum(x, 0.0), "Sigmoid": sigmoid}


def run_dir(cell, x, w, r, b, h, c, p, reverse, lbr, act):
    """One direction of `cell` over x [T, N, I]; w [G*H, I], r [G*H, H],
    b [2*G*H], p [3H] or None. Returns Y [T, N, H], the last h and c."""
    hs = r.shape[1]
    wb, rb = b[:b.size // 2], b[b.size // 2:]
    ys = [None] * x.shape[0]
    order = range(x.shape[0] - 1, -1, -1) if reverse else range(x.shape[0])
    gate = lambda m, k: m[..., k * hs:(k + 1) * hs]
    for t in order:
        xw = x[t] @ w.T + wb
        if cell == "LSTM":  # gates i o f c; P i o f
            hr = h @ r.T + rb
            pi, po, pf = (p[:hs], p[hs:2 * hs], p[2 * hs:]) if p is not None else (0, 0, 0)
            i = sigmoid(gate(xw, 0) + gate(hr, 0) + pi * c)
            f = sigmoid(gate(xw, 2) + gate(hr, 2) + pf * c)
            g = np.tanh(gate(xw, 3) + gate(hr, 3))
            c = f * c + i * g
            o = sigmoid(gate(xw, 1) + gate(hr, 1) + po * c)
            h = o * np.tanh(c)
        elif cell == "GRU":  # gates z r h
            z = sigmoid(gate(xw, 0) + h @ gate(r.T, 0) + gate(rb, 0))
            rr = sigmoid(gate(xw, 1) + h @ gate(r.T, 1) + gate(rb, 1))
            if lbr:
                hh = np.tanh(gate(xw, 2) + rr * (h @ gate(r.T, 2) + gate(rb, 2)))
            else:
                hh = np.tanh(gate(xw, 2) + (rr * h) @ gate(r.T, 2) + gate(rb, 2))
            h = (1 - z) * hh + z * h
        else:
            h = ACT[act](xw + h @ r.T + rb)
        ys[t] = h
    return np.stack(ys), h, c


def rnn_ref(cell, x, w, r, b, h0, c0, p, direction, layout, lbr=0, act="Tanh"):
    """The node's Y, Y_h, Y_c (Y_c None but for LSTM) in float64."""
    x = x.astype(np.float64)
    if layout:
        x = x.transpose(1, 0, 2)
        h0 = None if h0 is None else h0.transpose(1, 0, 2)
        c0 = None if c0 is None else c0.transpose(1, 0, 2)
    dirs, gh, _ = w.shape
    hs = r.shape[2]
    n = x.shape[1]
    y, yh, yc = [], [], []
    for d in range(dirs):
        rev = direction == "reverse" or (direction == "bidirectional" and d == 1)
        h = np.zeros((n, hs)) if h0 is None else h0[d].astype(np.float64)
        c = np.zeros((n, hs)) if c0 is None else c0[d].astype(np.float64)
        bd = np.zeros(2 * gh) if b is None else b[d].astype(np.float64)
        pd = None if p is None else p[d].astype(np.float64)
        yd, hd, cd = run_dir(cell, x, w[d].astype(np.float64), r[d].astype(np.float64), bd, h, c, pd, rev, lbr, act)
        y.append(yd)
        yh.append(hd)
        yc.append(cd)
    y, yh, yc = np.stack(y, 1), np.stack(yh), np.stack(yc)  # [T, D, N, H], [D, N, H]
    if layout:
        y, yh, yc = y.transpose(2, 0, 1, 3), yh.transpose(1, 0, 2), yc.transpose(1, 0, 2)
    return y, yh, (yc if cell == "LSTM" else None)


def case(out_dir, name, cell, steps, batch, inp, hidden, direction="forward", layout=0, with_b=True, init=("h", "c"),
         outs=(0, 1, 2), peep=False, seq=False, lbr=0, act=None):
    gates = {"LSTM": 4, "GRU": 3, "RNN": 1}[cell]
    dirs = 2 if direction == "bidirectional" else 1
    s = 1.0 / np.sqrt(hidden)
    u = lambda *shape: rng.uniform(-s * 2, s * 2, shape).astype(np.float32)
    x = rng.standard_normal((batch, steps, inp) if layout else (steps, batch, inp)).astype(np.float32)
    w, r = u(dirs, gates * hidden, inp), u(dirs, gates * hidden, hidden)
    b = u(dirs, 2 * gates * hidden) if with_b else None
    p = u(dirs, 3 * hidden) if peep else None
    state = (batch, dirs, hidden) if layout else (dirs, batch, hidden)
    h0 = (rng.standard_normal(state) * 0.5).astype(np.float32) if "h" in init else None
    c0 = (rng.standard_normal(state) * 0.5).astype(np.float32) if "c" in init and cell == "LSTM" else None
    acts = [act] * dirs if act else None
    y, yh, yc = rnn_ref(cell, x, w, r, b, h0, c0, p, direction, layout, lbr, act or "Tanh")
    names = ["X", "W", "R", "B" if with_b else "", "sequence_lens" if seq else "", "initial_h" if h0 is not None else "",
             "initial_c" if c0 is not None else "", "P" if peep else ""]
    if cell != "LSTM":
        names = names[:6]
    while names and not names[-1]:
        names.pop()
    out_names = [("Y", "Y_h", "Y_c")[k] if k in outs else "" for k in range(3 if cell == "LSTM" else 2)]
    while not out_names[-1]:
        out_names.pop()
    attrs = dict(hidden_size=hidden, direction=direction)
    if layout:
        attrs["layout"] = 1
    if cell == "GRU":
        attrs["linear_before_reset"] = lbr
    if acts:
        attrs["activations"] = acts
    inits = [("W", w), ("R", r)] + ([("B", b)] if with_b else []) + ([("P", p)] if peep else [])
    if seq:
        inits.append(("sequence_lens", np.full(batch, steps, np.int32)))
    inputs = [("X", x)] + ([("initial_h", h0)] if h0 is not None else []) + ([("initial_c", c0)] if c0 is not None else [])
    outputs = [(nm, v) for nm, v in zip(("Y", "Y_h", "Y_c"), (y, yh, yc)) if nm in out_names]
    save_case(out_dir, name, [helper.make_node(cell, names, out_names, **attrs)], inputs, outputs, inits)


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    case(out_dir, "odn_lstm_forward_b3", "LSTM", 5, 3, 7, 8)
    case(out_dir, "odn_lstm_reverse_noinit_y", "LSTM", 6, 2, 5, 4, "reverse", with_b=False, init=(), outs=(0,))
    case(out_dir, "odn_lstm_bidir_peephole_h_only", "LSTM", 4, 3, 6, 5, "bidirectional", init=("h",), outs=(1, 2),
         peep=True)
    case(out_dir, "odn_lstm_bidir_layout1", "LSTM", 5, 2, 3, 6, "bidirectional", layout=1, outs=(0, 2))
    case(out_dir, "odn_lstm_seq_lens_peephole", "LSTM", 3, 2, 4, 3, peep=True, seq=True, outs=(0, 1))
    case(out_dir, "odn_lstm_batch40_bidir", "LSTM", 4, 40, 8, 16, "bidirectional")
    case(out_dir, "odn_lstm_batch33_layout1_peephole", "LSTM", 3, 33, 5, 8, layout=1, peep=True, outs=(0, 1))
    case(out_dir, "odn_gru_batch36_bidir_lbr", "GRU", 3, 36, 6, 8, "bidirectional", lbr=1)
    case(out_dir, "odn_gru_forward_b4", "GRU", 5, 4, 6, 7, outs=(0, 1))
    case(out_dir, "odn_gru_bidir_lbr_b2", "GRU", 6, 2, 5, 8, "bidirectional", lbr=1)
    case(out_dir, "odn_gru_reverse_lbr_yh", "GRU", 4, 3, 3, 5, "reverse", init=(), outs=(1,), lbr=1)
    case(out_dir, "odn_gru_bidir_y_nobias", "GRU", 5, 2, 4, 6, "bidirectional", with_b=False, outs=(0,))
    case(out_dir, "odn_gru_layout1_bidir_lbr", "GRU", 4, 3, 5, 4, "bidirectional", layout=1, lbr=1)
    case(out_dir, "odn_rnn_bidir_tanh", "RNN", 5, 2, 4, 6, "bidirectional")
    case(out_dir, "odn_rnn_reverse_relu", "RNN", 4, 3, 5, 4, "reverse", act="Relu", outs=(0,))
    case(out_dir, "odn_rnn_forward_sigmoid", "RNN", 3, 2, 3, 5, act="Sigmoid", init=(), outs=(1,))
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
