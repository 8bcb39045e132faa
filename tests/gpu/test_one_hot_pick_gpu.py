"""A row's one-hot sum, ``sum(where(t[:, None] == arange(K), a, 0))``, read as the element it picks
(``stitchlab.plan.groups.GroupInfo.one_hot_picks``): NumPy's bits on the GPU, with targets out of
range, a picked -0.0, NaN and inf elsewhere in the row; rows held in registers by a warp or a
block, rows streamed from memory by a block (200 x 70000), and a few long rows split over blocks
(40 x 100000: ``row_split``, which still evaluates the mask per element).

Run on the GPU machine: ``PYTHONPATH=. python3 -m pytest -m gpu tests/gpu/test_one_hot_pick_gpu.py -q``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from floatbits import bits

import stitchlab as sl

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cupy_backend")]


def _picks(xp: Any, x: Any, t: Any) -> list[Any]:
    onehot = xp.reshape(t, (-1, 1)) == xp.arange(x.shape[1], dtype=t.dtype)
    m = xp.max(x, -1, keepdims=True)
    return [xp.sum(xp.where(onehot, x, 0.0), -1, keepdims=True),
            xp.sum(xp.where(onehot, x - m, 0.0), -1, keepdims=True) * 2.0]  # a value of the group, after a phase


def _inputs(shape: tuple[int, int], dtype: str, tdtype: str, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    rows, cols = shape
    x = (rng.standard_normal(shape) * 3).astype(dtype)
    t = rng.integers(0, cols, rows).astype(tdtype)
    t[::7] = -1
    t[1::7] = cols
    t[2::11] = cols + 5
    t[3::13] = 0
    t[4::13] = cols - 1
    x[5::9, :] = np.inf  # rows of inf and NaN: where() drops them unless picked
    x[6::9, ::3] = np.nan
    x[np.arange(rows)[8::9], np.clip(t[8::9], 0, cols - 1)] = -0.0  # a picked -0.0 sums to +0.0
    return x, t


@pytest.mark.parametrize("shape", [(300, 1000), (64, 4096), (1000, 40), (5, 33), (200, 70_000), (40, 100_000)])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("tdtype", ["int32", "int64"])
def test_one_hot_sums_match_numpy_bit_for_bit(shape: tuple[int, int], dtype: str, tdtype: str) -> None:
    import cupy as cp

    x, t = _inputs(shape, dtype, tdtype, seed=shape[0] + shape[1])
    with np.errstate(all="ignore"):
        want = _picks(np, x, t)
    outs = _picks(sl, sl.asarray(cp.asarray(x)), sl.asarray(cp.asarray(t)))
    got = [cp.asnumpy(o) for o in sl.compute(*outs)]
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        assert g.dtype == w.dtype and g.shape == w.shape
        nan = np.isnan(w)
        assert np.array_equal(np.isnan(g), nan), f"output {k}: NaN positions differ"
        bad = np.flatnonzero(bits(g)[~nan] != bits(w)[~nan])
        assert bad.size == 0, f"output {k} {shape} {dtype}: {bad.size} differ, e.g. {g[~nan][bad[:4]]} vs {w[~nan][bad[:4]]}"
