"""Out-of-core on one machine: a numpy.memmap is trained on in place.

The rows are read through the memory map by the kernel, never copied: the
design holds the caller's array and Python allocations during fit stay at a
few vectors of one entry per row.
"""

import tracemalloc

import numpy as np
import pytest

import skforget._linear
from skforget import NoisyGDClassifier


@pytest.fixture
def design_spy(monkeypatch):
    seen = []
    make_design = skforget._linear.make_design

    def spy(*args, **kwargs):
        design = make_design(*args, **kwargs)
        seen.append(design)
        return design

    monkeypatch.setattr(skforget._linear, "make_design", spy)
    return seen


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_memmap_is_used_in_place(tmp_path, dtype, design_spy):
    n, d = 20000, 40
    rng = np.random.default_rng(0)
    X_mem = (rng.standard_normal((n, d)) / 4).astype(dtype)
    X_mem[7] *= 100  # over the norm bound: projected by a factor, not rewritten
    y = (X_mem[:, 0] > 0).astype(int)
    path = tmp_path / "rows.dat"
    writer = np.memmap(path, dtype=dtype, mode="w+", shape=(n, d))
    writer[:] = X_mem
    writer.flush()
    del writer
    X = np.memmap(path, dtype=dtype, mode="r", shape=(n, d))

    params = dict(classes=[0, 1], random_state=0, batch_size=None, max_iter=3)
    tracemalloc.start()
    try:
        on_disk = NoisyGDClassifier(**params).fit(X, y)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert np.shares_memory(design_spy[-1].X, X)
    # Per-row vectors (targets, scale factors, thresholds, norms) only: a copy
    # of X would be X.nbytes on its own.
    assert peak < 0.5 * X.nbytes, (peak, X.nbytes)
    in_memory = NoisyGDClassifier(**params).fit(X_mem, y)
    np.testing.assert_array_equal(on_disk.coef_, in_memory.coef_)
    np.testing.assert_array_equal(on_disk.intercept_, in_memory.intercept_)
