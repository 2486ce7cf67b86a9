"""The exact u8 x s8 GEMM (odn_igemm8.c) against numpy's int64 product.
Weights a quantizer writes (a bell-shaped spread, sparse extremes whose K
pairs would saturate vpmaddubsw's 16-bit sums: the residual path), pairs
exactly at the bound |d0| + |d1| = 128 and d = -128 against rows of 255,
reduce_range's [-64, 64], uint8 weights with zero point 128 and with one
per column, int8 A (shifted by 128 inside), tails of M, N and K short of
the 4-row tile, the 16-column panel, the 4-row quad and the 1024-row K
slice, M = 1, N = 1, K = 1, transposed B, rows wider than K, the deepest
K, 1 and 2 threads; and weights the kernel must refuse (a dense residual:
uint8 with zero point 0).
usage: igemm8_cases.py DRIVER WORKDIR (exit 77 when the driver skips)."""
import os
import subprocess
import sys

import numpy as np

TALLY = {"with residual": 0, "without residual": 0, "refused": 0}


def residual(d):
    """Entries of the residual odn_igemm8.h describes: in K pairs whose
    |d0| + |d1| passes 128 (or with a d past 127), the d outside [-64, 64]"""
    k, n = d.shape
    dp = np.zeros((k + k % 2, n), np.int64)
    dp[:k] = d
    d0, d1 = dp[0::2], dp[1::2]
    bad = (np.abs(d0) + np.abs(d1) > 128) | (d0 > 127) | (d1 > 127)
    return int((bad & (np.abs(d0) > 64)).sum() + (bad & (np.abs(d1) > 64)).sum())


def case(driver, work, name, a, b, za, zb, a_unsigned, b_unsigned, threads, trans_b=False, pad=0, refused=None):
    m, k = a.shape
    n = b.shape[1]
    entries = residual(b.astype(np.int64) - np.asarray(zb, np.int64).reshape(1, -1))
    if refused is None:  # the kernel's bound: K * N / 256 residual entries
        refused = entries > k * n // 256
    TALLY["refused" if refused else "with residual" if entries else "without residual"] += 1
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
    if name.startswith("u8s8_") and m * k * n > 10 ** 6:
        assert not refused, name  # the large quantizer-like cases must take the fast path
    if refused or r.returncode == 3:
        os.remove(inp)
        if refused == (r.returncode == 3):
            return True
        print(f"{name}: {'accepted' if refused else 'refused'}, expected the opposite (driver {r.returncode})")
        return False
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


def bell(rng, k, n, top=127):
    """int8 weights as a symmetric per-tensor quantizer writes them (a
    normal spread whose largest of a layer's many weights maps to `top`,
    about 4.5 sigma), with a few extremes (pairs past |d0| + |d1| = 128)
    sprinkled in, fewer than the kernel's bound of K * N / 256 entries"""
    q = np.clip(np.rint(rng.standard_normal((k, n)) * top / 4.5), -top, top).astype(np.int64)
    spots = rng.integers(0, k * n, k * n // 1000)
    q.reshape(-1)[spots] = rng.choice([-128, -127, 127, 120, -100], spots.size)
    return q


def main():
    driver, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(11)
    ok = True
    u8 = lambda *s: rng.integers(0, 256, s).astype(np.int64)
    s8 = lambda *s: rng.integers(-128, 128, s).astype(np.int64)
    for t in (1, 2):
        # rows of 255 against pairs exactly at vpmaddubsw's bound, and past it
        b = np.tile(np.array([[127], [1], [-64], [-64], [-128], [0], [100], [28]]), (600, 21))
        b[::97, 3] = 127
        b[1::89, 5] = -128
        ok &= case(driver, work, f"bound_t{t}", np.full((9, 4800), 255), b, 0, [0], 1, 0, t)
        ok &= case(driver, work, f"bound_s8a_t{t}", np.full((5, 4800), -128), b, 127, [0], 0, 0, t)
    kmax = (2 ** 31 - 1) // (255 * 255)
    deep = np.tile(np.array([[127], [1]]), (kmax // 2 + 1, 3))[:kmax]
    ok &= case(driver, work, "deepest", np.full((3, kmax), 255), deep, 0, [0], 1, 0, 1)
    shapes = [(1, 1, 1), (1, 5, 1), (1, 768, 1), (5, 3, 7), (4, 4, 16), (13, 511, 17), (7, 1023, 33),
              (3, 1025, 18), (241, 77, 15), (64, 2051, 40), (130, 768, 200), (1, 3072, 100)]
    for (m, k, n) in shapes:
        for t in (1, 2):
            ok &= case(driver, work, f"u8s8_{m}x{k}x{n}_t{t}", u8(m, k), bell(rng, k, n), int(rng.integers(0, 256)),
                       [0], 1, 0, t, pad=3)
            ok &= case(driver, work, f"s8s8_{m}x{k}x{n}_t{t}", s8(m, k), bell(rng, k, n), int(rng.integers(-128, 128)),
                       [0], 0, 0, t, trans_b=True)
            # uint8 weights with zero point 128, and one per column near it
            ok &= case(driver, work, f"u8u8_z128_{m}x{k}x{n}_t{t}", u8(m, k), bell(rng, k, n) + 128,
                       int(rng.integers(0, 256)), [128], 1, 1, t)
            zb = rng.integers(120, 137, n)
            ok &= case(driver, work, f"u8u8_zcol_{m}x{k}x{n}_t{t}", u8(m, k),
                       np.clip(bell(rng, k, n, 100) + zb.reshape(1, -1), 0, 255), int(rng.integers(0, 256)), zb, 1,
                       1, t)
            ok &= case(driver, work, f"reduce_range_{m}x{k}x{n}_t{t}", u8(m, k),
                       np.clip(bell(rng, k, n, 64), -64, 64), int(rng.integers(0, 256)), [0], 1, 0, t)
    # per-column int8 zero points
    ok &= case(driver, work, "s8_zcol", u8(37, 300), bell(rng, 300, 45, 100), 3, rng.integers(-9, 10, 45), 1, 0, 2)
    # a dense residual: refused, the int16 kernel takes these
    ok &= case(driver, work, "refused_u8_z0", u8(8, 256), u8(256, 32), 0, [0], 1, 1, 1, refused=True)
    ok &= case(driver, work, "refused_s8_uniform", u8(8, 256), s8(256, 32), 0, [0], 1, 0, 1, refused=True)
    print("igemm8 cases:", "ok" if ok else "FAILED", TALLY)
    ok &= TALLY["with residual"] >= 20 and TALLY["without residual"] >= 10
    sys.exit(0 if ok else 1)


main()
