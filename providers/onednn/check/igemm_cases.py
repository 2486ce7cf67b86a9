"""The exact int8 GEMM (odn_igemm.c) against numpy's int64 product: the
extreme sums (every a = 255 with za = 0 against every w = -128, K = 4608,
and the deepest K the kernel takes), random uint8/int8 operands with
zero points, tails of M, N and K short of the 6-row tile, the 16-column
panel, the even pair and the 512-row K slice, per-column zero points of B,
transposed B, rows wider than K, and 1 and 2 threads.
usage: igemm_cases.py DRIVER WORKDIR (exit 77 when the driver skips)."""
import os
import subprocess
import sys

import numpy as np


def case(driver, work, name, a, b, za, zb, a_unsigned, b_unsigned, threads, trans_b=False, pad=0):
    m, k = a.shape
    n = b.shape[1]
    lda = k + pad
    abuf = np.zeros((m, lda), np.uint8)
    abuf[:, :k] = a.astype(np.int64) & 0xFF
    bst = (b.T if trans_b else b).astype(np.int64) & 0xFF
    zb = np.asarray(zb, np.int32).reshape(-1)
    hdr = np.array([m, n, k, lda, a_unsigned, b_unsigned, za, len(zb), threads, trans_b], np.int64)
    inp, out = os.path.join(work, name + ".in"), os.path.join(work, name + ".out")
    with open(inp, "wb") as f:
        f.write(hdr.tobytes() + abuf.tobytes() + np.ascontiguousarray(bst, np.uint8).tobytes() + zb.tobytes())
    r = subprocess.run([driver, "run", inp, out])
    if r.returncode == 77:
        sys.exit(77)
    if r.returncode != 0:
        print(f"{name}: driver failed ({r.returncode})")
        return False
    got = np.fromfile(out, np.int32).reshape(m, n)
    want = (a.astype(np.int64) - za) @ (b.astype(np.int64) - zb.astype(np.int64).reshape(1, -1))
    assert np.abs(want).max() < 2 ** 31
    if not np.array_equal(got.astype(np.int64), want):
        bad = np.argwhere(got != want)[0]
        print(f"{name}: mismatch at {tuple(bad)}: {got[tuple(bad)]} vs {want[tuple(bad)]}")
        return False
    os.remove(inp)
    os.remove(out)
    return True


def main():
    driver, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(7)
    ok = True
    u8 = lambda *s: rng.integers(0, 256, s).astype(np.int64)
    s8 = lambda *s: rng.integers(-128, 128, s).astype(np.int64)
    for t in (1, 2):
        ok &= case(driver, work, f"extreme_t{t}", np.full((7, 4608), 255), np.full((4608, 19), -128), 0, [0],
                   1, 0, t)
        ok &= case(driver, work, f"extreme_neg_t{t}", np.full((5, 4608), -128), np.full((4608, 17), -128), 127,
                   [0], 0, 0, t)
    kmax = (2 ** 31 - 1) // (255 * 255)
    ok &= case(driver, work, "deepest", np.full((3, kmax), 255), np.full((kmax, 3), 255), 0, [0], 1, 1, 1)
    for (m, k, n) in [(1, 1, 1), (5, 3, 7), (6, 2, 16), (13, 511, 17), (7, 513, 33), (241, 77, 15),
                      (64, 1025, 40), (3136 // 8, 576, 64), (49, 4608, 50)]:
        for t in (1, 2):
            ok &= case(driver, work, f"u8s8_{m}x{k}x{n}_t{t}", u8(m, k), s8(k, n), int(rng.integers(0, 256)), [0],
                       1, 0, t, pad=3)
            ok &= case(driver, work, f"s8u8_zb_{m}x{k}x{n}_t{t}", s8(m, k), u8(k, n), int(rng.integers(-128, 128)),
                       rng.integers(0, 256, n), 0, 1, t, trans_b=True)
    ok &= case(driver, work, "s8s8_zb1", s8(30, 100), s8(100, 21), -5, [9], 0, 0, 2)
    print("igemm cases:", "ok" if ok else "FAILED")
    sys.exit(0 if ok else 1)


main()
