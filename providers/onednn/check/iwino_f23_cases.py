"""The exact integer Winograd F(2x2, 3x3) convolution (odn_iwino_f23.c)
against an int64 direct convolution in numpy, bit for bit. Heights and
widths short of the 2x2 tile and odd/even (1..9) and ResNet's (56, 28, 14,
7); every top/left/bottom/right padding in 0..2; C in {1, 3, 8, 16, 17, 64,
256, 512, 917} (odd C: a zero padding channel) and M in {1, 5, 8, 16, 24, 64,
512} (columns padded to 16, masked stores); uint8 and int8 x, uint8 and
int8 w, zx in {0, 128, 7} and their int8 counterparts, zw none, scalar and
per channel; extreme values at the largest C taken (x all 255 with zx 0
against w all -128, or all 127, and the reverse signs: |4y| just under
2^31, the bound the kernel relies on; and extreme values in a random
spatial pattern, the same in every channel: the Winograd-domain sums
and the output transform's partial sums near 2^31 too); N = 2; 1 and 2 threads; int32
elements after y that must stay untouched; and shapes to refuse (C = 918,
pads out of 0..2, sizes past int64).
usage: iwino_f23_cases.py DRIVER WORKDIR (exit 77 when the driver skips)."""
import os
import subprocess
import sys

import numpy as np

FILL = 0x5A5A5A5A
GUARD = -0x21524111
MAX_C = (2**31 - 1) // (4 * 9 * 255 * 255)


def conv_ref(x, wt, zx, zw, pads):
    """int64 direct 3x3 convolution: x NHWC, wt [M][C][3][3], zw per column"""
    pt, pl, pb, pr = pads
    n, h, w, c = x.shape
    d = x.astype(np.int64) - zx
    dp = np.zeros((n, h + pt + pb, w + pl + pr, c), np.int64)
    dp[:, pt:pt + h, pl:pl + w, :] = d
    g = wt.astype(np.int64) - zw.reshape(-1, 1, 1, 1)
    oh, ow = h + pt + pb - 2, w + pl + pr - 2
    y = np.zeros((n, oh, ow, wt.shape[0]), np.int64)
    for i in range(3):
        for j in range(3):
            y += np.einsum("nhwc,mc->nhwm", dp[:, i:i + oh, j:j + ow, :], g[:, :, i, j])
    return y


def operands(rng, n, c, h, w, m, xu, wu, extreme):
    if extreme == "pattern":
        # the same extreme values in every channel, spatially random: the
        # C-deep sums of the Winograd positions and the output transform's
        # partial sums of them reach 0.9996 * 2^31 (a numpy search over such
        # patterns found none past it; the kernel would be exact anyway, its
        # int32 additions wrap)
        xs = rng.choice([0, 255] if xu else [-128, 127], (n, h, w, 1))
        ws = rng.choice([0, 255] if wu else [-128, 127], (m, 1, 3, 3))
        x, wt = np.broadcast_to(xs, (n, h, w, c)), np.broadcast_to(ws, (m, c, 3, 3))
        return x.astype(np.uint8 if xu else np.int8), wt.astype(np.uint8 if wu else np.int8)
    if extreme is not None:
        xv, wv = extreme
        return np.full((n, h, w, c), xv, np.uint8 if xu else np.int8), np.full((m, c, 3, 3), wv, np.uint8 if wu else np.int8)
    x = rng.integers(0, 256, (n, h, w, c)) if xu else rng.integers(-128, 128, (n, h, w, c))
    wt = rng.integers(0, 256, (m, c, 3, 3)) if wu else rng.integers(-128, 128, (m, c, 3, 3))
    return x.astype(np.uint8 if xu else np.int8), wt.astype(np.uint8 if wu else np.int8)


def case(driver, work, name, rng, n, c, h, w, m, pads, xu=True, wu=False, zx=128, zw="chan", threads=1, guard=37,
         extreme=None):
    """zw: None (NULL), an int (scalar) or "chan" (random per channel)"""
    pt, pl, pb, pr = pads
    oh, ow = h + pt + pb - 2, w + pl + pr - 2
    x, wt = operands(rng, n, c, h, w, m, xu, wu, extreme)
    lo, hi = (0, 256) if wu else (-128, 128)
    if zw is None:
        zwv, zw_count = np.zeros(m, np.int64), 0
    elif zw == "chan":
        zwv, zw_count = rng.integers(lo, hi, m), m
    else:
        zwv, zw_count = np.full(m, zw, np.int64), 1
    hdr = np.array([n, c, h, w, m, oh, ow, pt, pl, xu, wu, zx, zw_count, threads, guard], np.int64)
    inp, out = os.path.join(work, name + ".in"), os.path.join(work, name + ".out")
    with open(inp, "wb") as f:
        f.write(hdr.tobytes() + x.tobytes() + wt.tobytes() + zwv[:zw_count].astype(np.int32).tobytes())
    r = subprocess.run([driver, "run", inp, out])
    if r.returncode == 77:
        sys.exit(77)
    if r.returncode != 0:
        print(f"{name}: driver failed ({r.returncode})")
        return False
    got = np.fromfile(out, np.int32)
    want = conv_ref(x, wt, zx, zwv, pads)
    assert np.abs(want).max() * 4 < 2**31, f"{name}: a case past the kernel's bound"
    yn = want.size
    if got.size != yn + guard or not np.all(got[yn:] == GUARD):
        print(f"{name}: wrote past y")
        return False
    bad = np.argwhere(got[:yn].reshape(want.shape).astype(np.int64) != want)
    if bad.size:
        i = tuple(bad[0])
        print(f"{name}: {len(bad)} outputs differ, first at {i}: {got[:yn].reshape(want.shape)[i]} != {want[i]}")
        return False
    os.remove(inp)
    os.remove(out)
    return True


def refused(driver, n, c, h, w, m, oh, ow, pt, pl):
    r = subprocess.run([driver, "supported", *map(str, (n, c, h, w, m, oh, ow, pt, pl))])
    if r.returncode != 3:
        print(f"supported {n} {c} {h}x{w} {m} -> {oh}x{ow} pads {pt},{pl}: taken, should be refused")
        return False
    return True


def main():
    driver, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(23)
    ok = True
    probe = subprocess.run([driver, "supported", "1", "8", "4", "4", "8", "4", "4", "1", "1"])
    if probe.returncode == 3:
        sys.exit(77)
    # every padding combination on small sizes 1..9, odd and even
    chans = [1, 3, 8, 16, 17]
    outs = [1, 5, 8, 16, 24]
    k = 0
    for pt in range(3):
        for pl in range(3):
            for pb in range(3):
                for pr in range(3):
                    h, w = 1 + (k * 5) % 9, 1 + (k * 7 + 3) % 9
                    oh, ow = h + pt + pb - 2, w + pl + pr - 2
                    if oh >= 1 and ow >= 1:
                        xu, wu = k % 2 == 0, k % 3 == 0
                        zx = [0, 128, 7][k % 3] if xu else [0, -128, 7][k % 3]
                        zw = [None, "chan", 3 if wu else -5][k % 3]
                        ok &= case(driver, work, f"pad{k}", rng, 1 + k % 2, chans[k % 5], h, w, outs[(k // 5) % 5],
                                   (pt, pl, pb, pr), xu=xu, wu=wu, zx=zx, zw=zw, threads=1 + k % 2)
                    k += 1
    # ResNet sizes and channel counts
    ok &= case(driver, work, "c64m64_56", rng, 1, 64, 56, 56, 64, (1, 1, 1, 1), threads=2)
    ok &= case(driver, work, "c128m128_28", rng, 1, 128, 28, 28, 128, (1, 1, 1, 1), xu=False, zx=-3, zw=0)
    ok &= case(driver, work, "c256m256_14", rng, 2, 256, 14, 14, 256, (1, 1, 1, 1), wu=True, zw="chan", threads=2)
    ok &= case(driver, work, "c512m512_7", rng, 1, 512, 7, 7, 512, (1, 1, 1, 1), zx=7, threads=2)
    ok &= case(driver, work, "c3m64_9", rng, 2, 3, 9, 8, 64, (0, 2, 2, 0), zx=0, zw=None, threads=2)
    ok &= case(driver, work, "c1m1_7", rng, 2, 1, 7, 7, 1, (1, 1, 1, 1))
    ok &= case(driver, work, "c17m24_14x9", rng, 2, 17, 14, 9, 24, (1, 0, 2, 1), xu=False, zx=0, wu=True, zw=128)
    ok &= case(driver, work, "c513m40_6", rng, 1, 513, 6, 6, 40, (1, 1, 1, 1), threads=2)
    ok &= case(driver, work, "c64m512_5", rng, 1, 64, 5, 5, 512, (1, 1, 1, 1), threads=2)
    # the worst case for overflow, at the deepest C the kernel takes: all
    # 255 x (zx 0) against all -128 or 127 w (zw 0), and the reverse signs
    ok &= case(driver, work, "max_neg", rng, 1, MAX_C, 4, 4, 8, (1, 1, 1, 1), zx=0, zw=None, extreme=(255, -128))
    ok &= case(driver, work, "max_pos", rng, 2, MAX_C, 3, 5, 16, (1, 1, 1, 1), zx=0, zw=0, extreme=(255, 127),
               threads=2)
    ok &= case(driver, work, "max_x0", rng, 1, MAX_C, 4, 3, 16, (1, 1, 1, 1), zx=255, zw=-128, extreme=(0, 127))
    ok &= case(driver, work, "max_u8w", rng, 1, MAX_C, 3, 3, 24, (1, 1, 1, 1), zx=0, wu=True, zw=255,
               extreme=(255, 0))
    ok &= case(driver, work, "max_u8_pos", rng, 1, MAX_C, 3, 4, 8, (1, 1, 1, 1), zx=0, wu=True, zw=0,
               extreme=(255, 255))
    for i, (xu, wu, zx, zw) in enumerate([(True, True, 0, 255), (True, False, 255, -128), (False, False, -128, 127),
                                          (False, True, 127, 0)]):
        ok &= case(driver, work, f"pattern{i}", rng, 2, MAX_C, 6, 5, 16, (1, 1, 1, 1), xu=xu, wu=wu, zx=zx, zw=zw,
                   extreme="pattern", threads=1 + i % 2)
    # shapes to refuse
    ok &= refused(driver, 1, MAX_C + 1, 8, 8, 8, 8, 8, 1, 1)  # |4y| could pass 2^31
    ok &= refused(driver, 1, 8, 8, 8, 8, 12, 8, 3, 1)  # top padding 3
    ok &= refused(driver, 1, 8, 8, 8, 8, 10, 8, 1, 1)  # bottom padding 3
    ok &= refused(driver, 1, 8, 8, 8, 8, 5, 8, 1, 1)  # bottom padding -1
    ok &= refused(driver, 1, 8, 8, 8, 8, 8, 8, -1, 1)
    ok &= refused(driver, 0, 8, 8, 8, 8, 8, 8, 1, 1)
    ok &= refused(driver, 1, 0, 8, 8, 8, 8, 8, 1, 1)
    ok &= refused(driver, 1, 8, 8, 8, 0, 8, 8, 1, 1)
    ok &= refused(driver, 1, 8, 1, 1, 8, 0, 1, 0, 1)  # nothing to compute
    ok &= refused(driver, 1 << 40, 8, 1 << 20, 1 << 20, 8, 1 << 20, 1 << 20, 1, 1)  # sizes past int64
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
