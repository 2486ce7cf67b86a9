"""A streaming RNN acoustic model (DeepSpeech2-like CTC head) with a scripted branch, as
torch.onnx writes a torch.jit.script'ed module at opset 13.

Imitates exporting a scripted `forward(features, h0, c0, use_gru: bool)` whose body is
`if use_gru: ... nn.GRU(bidirectional=True) ... else: ... nn.LSTM(num_layers=2) ...`:
- inputs features [batch, time, 80] float (symbolic time), the streaming state h0 and c0
  [2, batch, H] (layers*dirs = 2 on both paths), and use_gru, a 0-d bool;
- shared front end (outer graph): input projection MatMul+Add + Relu, Transpose to
  [time, batch, P] (torch writes batch_first RNNs as Transpose + RNN op);
- If(use_gru) with both branches capturing outer-scope values:
  then: one bidirectional GRU (linear_before_reset=1, the torch layout W [2, 3H, P],
  R [2, 3H, H], B [2, 6H], gates z r h), Y [T, 2, B, H] -> Transpose(0, 2, 1, 3) ->
  Reshape [0, 0, -1]; its weights are outer-graph initializers; c0 passes through (Identity);
  else: a 2-layer unidirectional LSTM (W [1, 4H, I], R [1, 4H, H], B [1, 8H], gates i o f c),
  each layer's initial state sliced from h0/c0 (Slice), Y -> Squeeze(axis 1), final states
  Concat on axis 0; its weights are Constant nodes inside the branch;
  each branch ends in its own classifier MatMul+Add -> logits [T, B, K];
- after the If: Transpose to [batch, time, K] and LogSoftmax over the last axis.
Outputs log_probs [batch, time, K], hn and cn [2, batch, H] (the state for the next chunk).
META fills use_gru = 1, so the test runs the GRU branch; use_gru = 0 runs the LSTM branch.
Full: P 256, H 256, K 29, time 300. Small: P 24, H 16, K 12, time 10.
"""
import numpy as np
from onnx import TensorProto, helper

import zoolib as Z

META = {
    "about": "streaming GRU/LSTM speech model, opset 13, If on a bool input (fill use_gru=1: GRU branch; 0: LSTM)",
    "dims_small": {"batch": 2, "time": 10},
    "dims_full": {"batch": 1, "time": 300},
    "fill": {"use_gru": 1},
    "rtol": 1e-3, "atol": 1e-5,
}

FEAT = 80
CFG = {"small": dict(P=24, H=16, K=12), "full": dict(P=256, H=256, K=29)}


def rnn_weights(g, dirs, gates, H, I, as_constant, name):
    s = 1.0 / np.sqrt(H)
    r = g.rng
    W = (r.uniform(-s, s, (dirs, gates * H, I))).astype(np.float32)
    R = (r.uniform(-s, s, (dirs, gates * H, H))).astype(np.float32)
    B = (r.uniform(-s, s, (dirs, 2 * gates * H))).astype(np.float32)
    return [g.const(a, "%s.%s" % (name, n), as_constant=as_constant) for n, a in (("W", W), ("R", R), ("B", B))]


def sub_graph(g, name):
    s = Z.Graph(name, g.opset)
    s.rng, s.counts = g.rng, g.counts  # one name space and one random stream with the parent
    return s


def build(size):
    c = CFG[size]
    P, H, K = c["P"], c["H"], c["K"]
    g = Z.Graph("torch_jit", opset=13, seed=5)
    feats = g.input("features", ["batch", "time", FEAT])
    h0 = g.input("h0", [2, "batch", H])
    c0 = g.input("c0", [2, "batch", H])
    use_gru = g.input("use_gru", [], TensorProto.BOOL)

    x = Z.dense(g, feats, FEAT, P, "/input_proj", gain=np.sqrt(2.0))
    x = g.node("Relu", [x], name="/Relu")
    x = g.node("Transpose", [x], name="/Transpose", perm=[1, 0, 2])

    # then: bidirectional GRU, weights in the outer graph
    t = sub_graph(g, "then_branch")
    W, R, B = rnn_weights(g, 2, 3, H, P, False, "gru")
    y, hn = t.node("GRU", [x, W, R, B, "", h0], n_out=2, name="/gru/GRU", hidden_size=H,
                   direction="bidirectional", linear_before_reset=1)
    y = t.node("Transpose", [y], name="/gru/Transpose", perm=[0, 2, 1, 3])
    y = t.node("Reshape", [y, Z.sconst(t, [0, 0, -1], "/gru")], name="/gru/Reshape")
    lt = Z.dense(t, y, 2 * H, K, "/gru_classifier", gain=3.0)
    cn_t = t.node("Identity", [c0], name="/gru/Identity")
    then_g = helper.make_graph(t.nodes, "then_branch", [], [
        helper.make_tensor_value_info(lt, TensorProto.FLOAT, [None, None, K]),
        helper.make_tensor_value_info(hn, TensorProto.FLOAT, [2, None, H]),
        helper.make_tensor_value_info(cn_t, TensorProto.FLOAT, [2, None, H])], t.inits)

    # else: 2-layer LSTM, weights as Constant nodes inside the branch
    e = sub_graph(g, "else_branch")
    y, hs, cs = x, [], []
    for layer in range(2):
        n = "/lstm/l%d" % layer
        W, R, B = rnn_weights(e, 1, 4, H, P if layer == 0 else H, True, "lstm.l%d" % layer)
        ih = Z.slice_(e, h0, [layer], [layer + 1], [0], name=n)
        ic = Z.slice_(e, c0, [layer], [layer + 1], [0], name=n)
        y, yh, yc = e.node("LSTM", [y, W, R, B, "", ih, ic], n_out=3, name=n + "/LSTM", hidden_size=H,
                           direction="forward")
        y = Z.squeeze(e, y, [1], n)
        hs.append(yh)
        cs.append(yc)
    hn_e = e.node("Concat", hs, name="/lstm/Concat", axis=0)
    cn_e = e.node("Concat", cs, name="/lstm/Concat", axis=0)
    le = Z.dense(e, y, H, K, "/lstm_classifier", gain=3.0)
    else_g = helper.make_graph(e.nodes, "else_branch", [], [
        helper.make_tensor_value_info(le, TensorProto.FLOAT, [None, None, K]),
        helper.make_tensor_value_info(hn_e, TensorProto.FLOAT, [2, None, H]),
        helper.make_tensor_value_info(cn_e, TensorProto.FLOAT, [2, None, H])], e.inits)

    logits, hn, cn = g.node("If", [use_gru], n_out=3, name="/If", then_branch=then_g, else_branch=else_g)
    logits = g.node("Transpose", [logits], name="/Transpose", perm=[1, 0, 2])
    lp = g.node("LogSoftmax", [logits], name="/LogSoftmax", axis=-1)
    for src, dst, shape in ((lp, "log_probs", ["batch", "time", K]), (hn, "hn", [2, "batch", H]),
                            (cn, "cn", [2, "batch", H])):
        g.nodes.append(helper.make_node("Identity", [src], [dst], name=g.unique("/Identity")))
        g.output(dst, shape)
    return g.model(producer="pytorch", producer_version="1.13.1")
