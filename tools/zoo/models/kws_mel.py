"""A keyword-spotting CNN with its log-mel front end in the graph, as torch.onnx (opset 13)
writes a model that computes features itself (an STFT written as framing + DFT matmuls,
the way torchaudio-style front ends are exported before the STFT op of opset 17).

- inputs audio [batch, samples] float (symbolic samples; 1 s = 16000 at 16 kHz) and
  sample_rate, a 0-d int64;
- frame count from the dynamic length: Shape -> Gather -> Sub(win) -> Div(hop) -> Add(1);
  framing (x.unfold(-1, 400, 160)) as a Gather with a 2-D index built in-graph:
  Range(frames) * hop -> Unsqueeze -> Add of the constant [1, 400] offsets;
- DC removal (ReduceMean/Sub per frame), Hann window Mul, DFT as two MatMuls with constant
  cos / -sin matrices [400, 201], power spectrum Mul/Mul/Add, mel filterbank MatMul
  (torchaudio melscale_fbanks, HTK), Log(x + 1e-6), mean normalisation over time;
- sample_rate scales the time axis: frame_times = (Range(frames) * hop + win / 2) /
  Cast(sample_rate), the centre of each frame in seconds (a second output);
- CNN: Unsqueeze to [N, 1, frames, mels], 3 x (Conv 3x3 stride 2 with BN folded + Relu),
  GlobalAveragePool, Flatten, Gemm(transB=1) to 12 keywords, Softmax.
Outputs probs [batch, 12] and frame_times [frames].
META fills sample_rate = 16000 (bench tools that cannot fill get a tiny rate: frame_times
then grows large, nothing else changes).
Full: 16000 samples (98 frames), 40 mels, channels 32/64/128. Small: 1600 samples (8
frames), 16 mels, channels 4/8/8.
"""
import numpy as np
from onnx import TensorProto

import zoolib as Z

META = {
    "about": "keyword spotter: in-graph log-mel (Gather framing, DFT MatMuls, mel MatMul) + CNN, opset 13",
    "dims_small": {"batch": 2, "samples": 1600},
    "dims_full": {"batch": 1, "samples": 16000},
    "fill": {"sample_rate": 16000},
    "rtol": 1e-3, "atol": 1e-5,
}

SR, WIN, HOP, KEYWORDS = 16000, 400, 160, 12
CFG = {"small": dict(mels=16, ch=[4, 8, 8], fc_gain=10.0),
       "full": dict(mels=40, ch=[32, 64, 128], fc_gain=3.0)}


def mel_fbanks(n_freqs, f_min, f_max, n_mels, sr):
    """torchaudio.functional.melscale_fbanks(..., norm=None, mel_scale="htk")."""
    all_freqs = np.linspace(0, sr // 2, n_freqs)
    m_min, m_max = 2595.0 * np.log10(1.0 + f_min / 700.0), 2595.0 * np.log10(1.0 + f_max / 700.0)
    f_pts = 700.0 * (10 ** (np.linspace(m_min, m_max, n_mels + 2) / 2595.0) - 1.0)
    f_diff = f_pts[1:] - f_pts[:-1]
    slopes = f_pts[None, :] - all_freqs[:, None]
    down = -slopes[:, :-2] / f_diff[:-1]
    up = slopes[:, 2:] / f_diff[1:]
    return np.maximum(0.0, np.minimum(down, up)).astype(np.float32)


def build(size):
    c = CFG[size]
    M = c["mels"]
    bins = WIN // 2 + 1
    g = Z.Graph("torch_jit", opset=13, seed=13)
    audio = g.input("audio", ["batch", "samples"])
    sr = g.input("sample_rate", [], TensorProto.INT64)

    f = "/frontend"
    n = Z.dim_of(g, audio, 1, f)
    frames = g.node("Sub", [n, Z.sconst(g, WIN, f)], name=f + "/Sub")
    frames = g.node("Div", [frames, Z.sconst(g, HOP, f)], name=f + "/Div")
    frames = g.node("Add", [frames, Z.sconst(g, 1, f)], name=f + "/Add")
    fr = g.node("Range", [Z.sconst(g, 0, f), frames, Z.sconst(g, 1, f)], name=f + "/Range")
    start = g.node("Mul", [fr, Z.sconst(g, HOP, f)], name=f + "/Mul")
    idx = g.node("Add", [Z.unsqueeze(g, start, [1], f), Z.sconst(g, np.arange(WIN)[None, :], f)], name=f + "/Add")
    x = g.node("Gather", [audio, idx], name=f + "/Gather", axis=1)  # [N, F, WIN]

    x = g.node("Sub", [x, Z.reduce_mean(g, x, [-1], 1, f)], name=f + "/Sub")
    hann = (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(WIN) / WIN)).astype(np.float32)
    x = g.node("Mul", [x, g.const(hann, "frontend.window")], name=f + "/Mul")
    k = np.arange(bins)[None, :] * np.arange(WIN)[:, None] * (2 * np.pi / WIN)
    re = g.node("MatMul", [x, g.const(np.cos(k).astype(np.float32), "frontend.dft_real")], name=f + "/MatMul")
    im = g.node("MatMul", [x, g.const((-np.sin(k)).astype(np.float32), "frontend.dft_imag")], name=f + "/MatMul")
    p = g.node("Add", [g.node("Mul", [re, re], name=f + "/Mul"), g.node("Mul", [im, im], name=f + "/Mul")],
               name=f + "/Add")
    mel = g.node("MatMul", [p, g.const(mel_fbanks(bins, 20.0, SR / 2, M, SR), "frontend.mel_fb")], name=f + "/MatMul")
    lm = g.node("Log", [g.node("Add", [mel, Z.fscalar(g, 1e-6, f)], name=f + "/Add")], name=f + "/Log")
    lm = g.node("Sub", [lm, Z.reduce_mean(g, lm, [1], 1, f)], name=f + "/Sub")

    t = g.node("Add", [start, Z.sconst(g, WIN // 2, f)], name=f + "/Add")
    t = g.node("Cast", [t], name=f + "/Cast", to=TensorProto.FLOAT)
    srf = g.node("Cast", [sr], name=f + "/Cast", to=TensorProto.FLOAT)
    times = g.node("Div", [t, srf], name=f + "/Div")

    y = Z.unsqueeze(g, lm, [1], "/model")
    cin = 1
    for i, ch in enumerate(c["ch"]):
        y = Z.conv_bn_act(g, y, cin, ch, 3, 2, act_kind="relu", bn_mode="fold", name="/model/conv%d" % (i + 1))
        cin = ch
    y = g.node("GlobalAveragePool", [y], name="/model/pool/GlobalAveragePool")
    y = g.node("Flatten", [y], name="/model/Flatten", axis=1)
    w = g.rng.standard_normal((KEYWORDS, cin)) * (c["fc_gain"] / np.sqrt(cin))
    w = g.const(w.astype(np.float32), "model.fc.weight")
    b = g.const((0.05 * g.rng.standard_normal(KEYWORDS)).astype(np.float32), "model.fc.bias")
    y = g.node("Gemm", [y, w, b], name="/model/fc/Gemm", alpha=1.0, beta=1.0, transB=1)
    y = g.node("Softmax", [y], name="/model/Softmax", axis=1)
    for src, dst, shape in ((y, "probs", ["batch", KEYWORDS]), (times, "frame_times", ["frames"])):
        g.nodes.append(Z.helper.make_node("Identity", [src], [dst], name=g.unique("/Identity")))
        g.output(dst, shape)
    return g.model(producer="pytorch", producer_version="1.13.1")
