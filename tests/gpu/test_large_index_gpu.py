"""Arrays past 2**30 elements and at the int32 limit: no index arithmetic may wrap around.

A pointwise kernel's grid covers its domain in one step per thread, so a counter that stepped by
the grid stride once more reached twice the domain; with ``int`` indices and more than 2**30
elements that wrapped to a negative offset (an illegal address on the H200 at 2**31 - 4096
elements). The loop now counts vector chunks and never steps past the last one, and extents
within 2**24 of the int32 limit get ``long long`` indices (``stitchlab.plan.cost.INT_INDEX_LIMIT``).

Each case needs up to 44 GB of free device memory and is skipped, with the reason, where there
is less. Run on the GPU machine:
``PYTHONPATH=. python3 -m pytest -m gpu tests/gpu/test_large_index_gpu.py -q``.
"""

from __future__ import annotations

import pytest

import stitchlab as sl

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cupy_backend")]

COLS = 4096
#: rows of 4096: 1.6G elements (int indices, past 2**30), 2**31 - 4096 (within the headroom:
#: long long) and 2**31 (long long)
ROWS = {400_000: "int", 524_287: "long long", 524_288: "long long"}


def _room(nbytes: int) -> None:
    import cupy as cp

    cp.get_default_memory_pool().free_all_blocks()
    free, _ = cp.cuda.runtime.memGetInfo()
    if free < nbytes:
        pytest.skip(f"needs {nbytes / 1e9:.0f} GB of free device memory, {free / 1e9:.0f} GB free")


def _index_types(*arrays: sl.LazyArray) -> list[str]:
    return [k.schedule.index for k in sl.explain(*arrays).kernels]


@pytest.mark.parametrize("rows", list(ROWS))
def test_elementwise_with_a_broadcast_bias(rows: int) -> None:
    import cupy as cp

    _room(4 * rows * COLS * 4 + (1 << 30))
    rng = cp.random.default_rng(rows)
    x = rng.standard_normal((rows, COLS), dtype=cp.float32)
    b = rng.standard_normal(COLS, dtype=cp.float32)
    y = sl.asarray(x) * 2.0 + sl.asarray(b)
    assert _index_types(y) == [ROWS[rows]]
    got = cp.asarray(y)
    want = x * cp.float32(2.0) + b
    assert bool(cp.array_equal(got, want))  # same float32 operations in the same order


@pytest.mark.parametrize("rows", [400_000, 524_287])
def test_column_normalization(rows: int) -> None:
    import cupy as cp

    _room(5 * rows * COLS * 4 + (1 << 30))
    rng = cp.random.default_rng(rows + 1)
    x = rng.standard_normal((rows, COLS), dtype=cp.float32) * cp.float32(1.5) + cp.float32(0.25)
    a = sl.asarray(x)
    y = (a - a.mean(0)) / a.std(0)
    assert set(_index_types(y)) == {ROWS[rows]}
    got = cp.asarray(y)
    cols = slice(0, COLS, 97)  # the float64 reference on a sample of columns, every row
    xs = x[:, cols].astype(cp.float64)
    want = (xs - xs.mean(0)) / xs.std(0)
    err = float(cp.linalg.norm(got[:, cols] - want) / cp.linalg.norm(want))
    assert err < 1e-5, err  # the benchmark's float32 tolerance
    assert bool(cp.isfinite(got).all())
