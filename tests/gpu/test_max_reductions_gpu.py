"""max/min reductions of float32 and float16 data are one ``max.NaN``/``min.NaN`` per element
(``sl_op_max``/``sl_op_min`` in ``stitchlab/codegen/preamble.py``): NumPy's values, a NaN
wherever NumPy has one (the canonical NaN, not the input's payload), and of +0.0 and -0.0 max
gives +0.0 and min -0.0. float64 keeps the selects (NumPy's bits where the result is not zero).
Every reduction schedule: rows held by a warp or a block, streamed rows, rows split over blocks,
columns, split columns and a full reduction.

Run on the GPU machine: ``PYTHONPATH=. python3 -m pytest -m gpu tests/gpu/test_max_reductions_gpu.py -q``.
"""

from __future__ import annotations

import numpy as np
import pytest
from floatbits import bits, nan_with_payload

import stitchlab as sl

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cupy_backend")]

CASES = [((300, 1000), -1), ((300, 4096), -1), ((200, 70_000), -1), ((8, 400_000), -1),
         ((1000, 300), 0), ((200_000, 64), 0), ((513, 517), None)]


def _data(shape: tuple[int, int], axis: int | None, dtype: str) -> np.ndarray:
    """Random rows (columns for axis 0) and special ones: a NaN with a payload, mixed signed
    zeros with negatives (max +-0) and with positives (min +-0), all -0.0, infinities."""
    rng = np.random.default_rng(shape[0] * 7 + shape[1])
    lines = shape[0] if axis != 0 else shape[1]
    length = shape[1] if axis != 0 else shape[0]
    x = (rng.standard_normal((lines, length)) * 3).astype(dtype)
    if axis is None:
        x.flat[length // 3] = nan_with_payload(dtype, 3)
    else:
        x[0, length // 2] = nan_with_payload(dtype, 3)
        x[1] = -np.abs(x[1])
        x[1, ::5] = 0.0
        x[1, 2::5] = -0.0
        x[2] = np.abs(x[2])
        x[2, ::5] = 0.0
        x[2, 2::5] = -0.0
        x[3] = -0.0
        x[4, ::3] = np.inf
        x[5, ::3] = -np.inf
        x[6] = -np.inf
    return np.ascontiguousarray(x.T) if axis == 0 else x


@pytest.mark.parametrize("shape, axis", CASES)
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_max_and_min_reductions_match_numpy(shape: tuple[int, int], axis: int | None, dtype: str) -> None:
    import cupy as cp

    x = _data(shape, axis, dtype)
    a = sl.asarray(cp.asarray(x))
    got = [cp.asnumpy(o) for o in sl.compute(a.max(axis), a.min(axis))]
    want = [np.max(x, axis), np.min(x, axis)]
    for name, g, w in zip(("max", "min"), got, want, strict=True):
        g, w = np.atleast_1d(g), np.atleast_1d(w)
        assert g.dtype == w.dtype and g.shape == w.shape
        nan = np.isnan(w)
        assert np.array_equal(np.isnan(g), nan), f"{name}: NaN positions differ"
        assert nan.any(), "the data has a NaN"
        zero = (w == 0) & ~nan
        same = ~nan & ~zero
        bad = np.flatnonzero(bits(g)[same] != bits(w)[same])
        assert bad.size == 0, f"{name} {shape} {dtype}: {bad.size} differ, e.g. {g[same][bad[:4]]} vs {w[same][bad[:4]]}"
        assert np.all(g[zero] == 0)
        if axis is not None and dtype != "float64":
            # rows 1 and 2 mix +0.0 and -0.0 at the top (max) and the bottom (min); row 3 is all -0.0
            want_sign = {"max": [False, True], "min": [True, True]}[name]
            row = 1 if name == "max" else 2
            assert [bool(np.signbit(g[row])), bool(np.signbit(g[3]))] == want_sign, (name, g[row], g[3])


def test_elementwise_maximum_keeps_numpys_operands() -> None:
    """The elementwise ops are not the reductions' max.NaN: NaN payloads and the operand order on
    ties stay NumPy's (float32)."""
    import cupy as cp

    s = np.array([0.0, -0.0, 1.0, np.inf, nan_with_payload("float32", 5)], np.float32)
    x, y = np.repeat(s, s.size), np.tile(s, s.size)
    got = [cp.asnumpy(o) for o in sl.compute(sl.maximum(sl.asarray(cp.asarray(x)), sl.asarray(cp.asarray(y))),
                                               sl.minimum(sl.asarray(cp.asarray(x)), sl.asarray(cp.asarray(y))))]
    for g, w in zip(got, [np.maximum(x, y), np.minimum(x, y)], strict=True):
        assert np.array_equal(bits(g), bits(w))
