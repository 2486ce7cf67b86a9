"""run() releases the GIL, and two Python threads running one session get
correct results (the session serialises its runs; tessera.h, "Threads")."""
import threading
import time

import numpy as np
import pytest

import tessera as ort

import models


PROVIDER_SETS = [["reference"]] + ([["onednn", "reference"]] if "onednn" in ort.get_available_providers() else [])


@pytest.mark.parametrize("providers", PROVIDER_SETS, ids=",".join)
def test_two_threads_one_session(providers):
    rng = np.random.default_rng(3)
    w = rng.standard_normal((16, 8)).astype(np.float32)
    b = rng.standard_normal(8).astype(np.float32)
    sess = ort.InferenceSession(models.mlp(w, b), providers=providers)
    errors = []

    def worker(seed):
        r = np.random.default_rng(seed)
        try:
            for i in range(200):
                x = r.standard_normal((1 + (i + seed) % 5, 16)).astype(np.float32)  # shapes differ per run
                y, mm = sess.run(None, {"x": x})
                np.testing.assert_allclose(mm, x @ w, rtol=1e-4, atol=1e-5)
                np.testing.assert_allclose(y, np.maximum(x @ w + b, 0), rtol=1e-4, atol=1e-5)
        except Exception as e:  # noqa: BLE001  (reported below)
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(s,)) for s in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_gil_released_during_run():
    # one run long enough to watch (0.1 s or more on the reference provider)
    n = 256
    while True:
        sess = ort.InferenceSession(models.big_matmul(n), providers=["reference"])
        x = np.random.default_rng(0).standard_normal((n, n)).astype(np.float32)
        t0 = time.perf_counter()
        sess.run(None, {"x": x})
        if time.perf_counter() - t0 >= 0.1 or n >= 1024:
            break
        n *= 2

    result = []
    t = threading.Thread(target=lambda: result.append(sess.run(None, {"x": x})[0]))
    ticks = 0
    started = time.perf_counter()
    t.start()
    # With the GIL held for the whole run, this loop could not take a step
    # until the run ends; released, it keeps counting while the run goes.
    while t.is_alive():
        ticks += 1
        time.sleep(0.001)
    elapsed = time.perf_counter() - started
    t.join()
    np.testing.assert_allclose(result[0], x @ x, rtol=1e-3, atol=1e-3)
    # the run takes 0.1 s or more: about 100 naps of 1 ms if the GIL is free
    # (held, this thread gets no step in until the run is over)
    assert ticks >= 10, (ticks, elapsed, n)
