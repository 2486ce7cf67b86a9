#!/usr/bin/python3
"""MobileNet-style QDQ chains, as onnxruntime.quantization.quantize_static
(QDQ format, opset 13) writes them, for the integer depthwise path of CPUs
without VNNI (odn_qdq_i16_dw.c) between int16 pointwise layers
(odn_qdq_i16.c): full-range int8 weights, Conv -> Clip(0, 6) -> Q/DQ.

  qdq_dw_mbv1: per-tensor weights (per_channel=False), batch 2, a stem
      Conv 3x3 stride 2, then depthwise 3x3 / pointwise 1x1 blocks at
      stride 1 and 2, widths 21, 11 and 6 (8-pixel blocks, the last block
      recomputed, rows narrower than a block) and 24, 40, 44 channels
      (44: a tail of 4 lanes);
  qdq_dw_mbv2: per-channel weights, an inverted residual block (expand
      1x1, depthwise 3x3, linear projection) whose Add of two DQs is
      Q/DQ'd as the quantizer writes it, then a depthwise 5x5 at stride 2
      with asymmetric pads on int8 activations.
Expected outputs come from numpy following ONNX's float graph
(qdq_cases.py's helpers, float64 convolutions). The integer path sums
exactly and scales once, so an output may land one quantization step
away where the float graph lies within rounding of a boundary: checked
with --rtol 0 --atol ATOL (one step of the output scale), at 1 and 2
threads. Each case must also run every Conv on the integer path: with
ONEDNN_VERBOSE=1, no float convolution or eltwise (a Clip) may execute.

The input's standalone QuantizeLinear (odn_quantize_row.c, groups of 8
and a tail) must match numpy bit for bit, uint8 and int8, on exact ties
with an odd zero point, +-inf, +-1e30 and values past saturation.

Hostile: a depthwise layer with pads of 2^40 or negative pads must fail
the run with an error naming the node, never crash; one with a
horizontal dilation of 50,000 (the widened rows would pass the ring's
bound) must leave the integer path and still be right.

usage: qdq_dw_cases.py --check TESSERA OUT_DIR   (exit 77 without onnx or
the onednn provider)
"""
import os
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    import numpy as np
    from onnx import helper
    import qdq_cases as q
    from extra_cases import fails_naming, has_onednn, save_typed_case, test_cases
except ImportError:
    np = None

THREADS = (1, 2)


def relu6(g, x_name, x):
    """Clip(x, 0, 6) with min and max as inputs (opset >= 11)."""
    out = g.name("clip")
    lo, hi = g.init("min", np.array(0, np.float32)), g.init("max", np.array(6, np.float32))
    g.nodes.append(helper.make_node("Clip", [x_name, lo, hi], [out]))
    return out, np.clip(x, 0, 6).astype(np.float32)


def block(g, h, hv, s, cout, k, stride, per_channel, dtype=np.uint8, act=True, pads=None):
    """Conv (group = channels when cout is None: depthwise) [-> ReLU6] ->
    Q/DQ calibrated on its range; returns (name, value, scale)."""
    cin = hv.shape[1]
    group = cin if cout is None else 1
    p = pads if pads is not None else (k // 2,) * 4
    h, hv = g.conv(h, hv, s, cin if cout is None else cout, k, strides=(stride, stride), pads=p, group=group,
                   per_channel=per_channel)
    if act:
        h, hv = relu6(g, h, hv)
    s, z = q.calibrate(hv, dtype)
    h, hv = g.qdq(h, hv, s, z)
    return h, hv, s


def mbv1(out_dir):
    x = q.rng.uniform(-1, 1, (2, 3, 42, 42)).astype(np.float32)
    g = q.Graph()
    h, hv, s = q.input_qdq(g, x, zp=131)
    h, hv, s = block(g, h, hv, s, 24, 3, 2, False)  # 21 x 21
    h, hv, s = block(g, h, hv, s, None, 3, 1, False)
    h, hv, s = block(g, h, hv, s, 40, 1, 1, False)
    h, hv, s = block(g, h, hv, s, None, 3, 2, False)  # 11 x 11
    h, hv, s = block(g, h, hv, s, 44, 1, 1, False)
    h, hv, s = block(g, h, hv, s, None, 3, 2, False)  # 6 x 6
    h, hv = g.conv(h, hv, s, 16, 1, per_channel=False)
    g.save(out_dir, "qdq_dw_mbv1", [("x", x)], h, hv)


def mbv2(out_dir):
    x = q.rng.uniform(-1, 1, (1, 16, 19, 23)).astype(np.float32)
    g = q.Graph()
    h0, hv0, s0 = q.input_qdq(g, x)
    h, hv, s = block(g, h0, hv0, s0, 48, 1, 1, True)  # expand
    h, hv, s = block(g, h, hv, s, None, 3, 1, True)
    h, hv, s = block(g, h, hv, s, 16, 1, 1, True, act=False)  # linear projection
    a = g.name("add")
    g.nodes.append(helper.make_node("Add", [h0, h], [a]))
    av = (hv0 + hv).astype(np.float32)
    sa, za = q.calibrate(av, np.int8)
    h, hv = g.qdq(a, av, sa, za)
    h, hv, s = block(g, h, hv, sa, 40, 1, 1, True, dtype=np.int8)
    h, hv, s = block(g, h, hv, s, None, 5, 2, True, pads=(2, 1, 1, 2))
    h, hv = g.conv(h, hv, s, 12, 1)
    g.save(out_dir, "qdq_dw_mbv2", [("x", x)], h, hv)


def hostile(out_dir, name, pads):
    """Q/DQ -> depthwise Conv with these pads -> Q/DQ: the run must fail
    naming the node."""
    x = q.rng.uniform(-1, 1, (1, 8, 6, 6)).astype(np.float32)
    g = q.Graph()
    h, hv, s = q.input_qdq(g, x)
    wq = q.rng.integers(-127, 128, (8, 1, 3, 3)).astype(np.int8)
    wn, _ = g.weight(wq, np.float32(0.01), 0)
    c = "dw_hostile"
    g.nodes.append(helper.make_node("Conv", [h, wn], [c], kernel_shape=[3, 3], pads=list(pads), group=8, name=c))
    sn, zn = g.init("s", np.array(0.05, np.float32)), g.init("zp", np.array(128, np.uint8))
    g.nodes.append(helper.make_node("QuantizeLinear", [c, sn, zn], ["yq"]))
    g.nodes.append(helper.make_node("DequantizeLinear", ["yq", sn, zn], ["y"]))
    save_typed_case(out_dir, name, g.nodes, [("x", x)], [("y", np.zeros((1, 8, 6, 6), np.float32))], g.inits,
                    opset=q.OPSET)
    return os.path.join(out_dir, name)


def wide_dilation(out_dir):
    """A depthwise 3x3 of horizontal dilation 50,000 and pads 50,000 on a
    6-wide input: only the middle column of taps ever reads x, but the
    widened rows would span 100,006 pixels (past the ring's bound), so the
    layer must leave the integer path and still be right."""
    x = q.rng.uniform(-1, 1, (1, 8, 6, 6)).astype(np.float32)
    g = q.Graph()
    h, hv, s = q.input_qdq(g, x)
    wq = q.rng.integers(-127, 128, (8, 1, 3, 3)).astype(np.int8)
    wn, wf = g.weight(wq, np.float32(0.02), 0)
    c = g.name("dw")
    g.nodes.append(helper.make_node("Conv", [h, wn], [c], kernel_shape=[3, 3], pads=[0, 50000, 0, 50000],
                                    dilations=[1, 50000], group=8))
    y = q.conv_f(hv, wf[:, :, :, 1:2], (1, 1), (0, 0, 0, 0), 8).astype(np.float32)
    g.save(out_dir, "qdq_dw_wide_dilation", [("x", x)], c, y)
    return os.path.join(out_dir, "qdq_dw_wide_dilation")


def quantize_input(out_dir, name, dtype, zp):
    """x -> QuantizeLinear -> y (the graph's output: the standalone loop,
    groups of 8 on AVX2 and a tail of 7): exact ties with an odd zero
    point, +-inf, +-1e30, values just past the saturation bounds."""
    scale = np.float32(0.1)
    ties = (np.arange(-40, 40, dtype=np.float32) + np.float32(0.5)) * scale
    special = np.array([np.inf, -np.inf, 1e30, -1e30, 25.55, -25.65, 12.85, -12.75, 0.0, -0.0], np.float32)
    rest = q.rng.uniform(-30, 30, 231 - ties.size - special.size).astype(np.float32)
    x = np.concatenate([ties, special, rest]).reshape(1, 3, 7, 11)
    zpa = np.array(zp, dtype)
    node = helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["y"])
    save_typed_case(out_dir, name, [node], [("x", x)], [("y", q.quantize(x, scale, zpa))],
                    [("s", np.array(scale, np.float32)), ("zp", zpa)], opset=q.OPSET)
    return os.path.join(out_dir, name)


def float_steps(tessera, case, threads):
    """oneDNN's float convolutions and eltwise steps a run of case executes."""
    env = dict(os.environ, ONEDNN_VERBOSE="1")
    r = subprocess.run([tessera, "bench", case, "-p", "onednn,reference", "--threads", str(threads), "--runs", "1",
                        "--warmup", "0"], capture_output=True, text=True, env=env)
    return [line for line in (r.stdout + r.stderr).splitlines() if line.startswith("onednn_verbose,exec") and
            (",eltwise," in line or (",convolution," in line and "src_f32" in line))]


def check(tessera, out):
    if np is None:
        print("no numpy/onnx: skipped")
        return 77
    if not has_onednn(tessera):
        return 77
    os.makedirs(out, exist_ok=True)
    bad = 0
    for write in (mbv1, mbv2):
        write(out)
    cases = [os.path.join(out, n) for n in ("qdq_dw_mbv1", "qdq_dw_mbv2")]
    for t in THREADS:
        bad += not test_cases(tessera, cases, "-t", str(t), "--rtol", "0", "--atol", str(q.ATOL))
        for c in cases:
            steps = float_steps(tessera, c, t)
            if steps:
                print("%s: float steps ran (%d threads):\n%s" % (c, t, "\n".join(steps[:5])))
                bad += 1
            else:
                print("ok: %s runs on the integer path (%d threads)" % (os.path.basename(c), t))
    exact = [quantize_input(out, "qdq_dw_quantize_u8", np.uint8, 131),
             quantize_input(out, "qdq_dw_quantize_s8", np.int8, -3)]
    bad += not test_cases(tessera, exact, "--rtol", "0", "--atol", "0", providers="onednn")
    bad += not test_cases(tessera, [wide_dilation(out)], "--rtol", "0", "--atol", str(q.ATOL))
    for name, pads in (("qdq_dw_huge_pads", (1 << 40,) * 4), ("qdq_dw_negative_pads", (-5, 1, 1, 1))):
        bad += not fails_naming(tessera, hostile(out, name, pads), "dw_hostile")
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] != "--check":
        sys.stderr.write(__doc__)
        sys.exit(2)
    sys.exit(check(sys.argv[2], sys.argv[3]))
