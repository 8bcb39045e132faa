"""``sl.mgrid``/``sl.ogrid``/``sl.r_``/``sl.c_`` on the GPU: a grid is computed from positions
inside the kernel that reads it (one launch, NumPy's values); ``r_``/``c_`` join CuPy and
stitchlab arrays on the device.

Run on the GPU machine: ``PYTHONPATH=. python3 -m pytest -m gpu tests/gpu/test_index_tricks_gpu.py -q``.
"""

from __future__ import annotations

import numpy as np
import pytest

import stitchlab as sl

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cupy_backend")]


@pytest.mark.parametrize("key", [np.s_[0:1024, 0:1:768j], np.s_[-2.0:2.0:0.01, 0:300]], ids=["count", "step"])
def test_a_grid_is_made_inside_the_kernel_that_reads_it(key) -> None:
    yy, xx = sl.mgrid[key]
    r = sl.hypot(yy - 3.5, xx * 2.0)
    assert len(sl.explain(r).kernels) == 1
    before = sl.stats()["launches"]
    got = r.get()
    assert sl.stats()["launches"] == before + 1
    want_y, want_x = np.mgrid[key]
    np.testing.assert_array_equal(sl.mgrid[key].get(), np.mgrid[key])
    np.testing.assert_allclose(got, np.hypot(want_y - 3.5, want_x * 2.0), rtol=1e-15)
    oy, ox = sl.ogrid[key]
    np.testing.assert_array_equal((oy + ox).get(), np.add(*np.ogrid[key]))


def test_joins_of_device_arrays_stay_on_the_device() -> None:
    import cupy as cp

    a = np.random.default_rng(3).standard_normal(1000).astype(np.float32)
    x = sl.asarray(cp.asarray(a))
    got = sl.c_[x, sl.exp(x), cp.asarray(a) * 2]
    assert isinstance(cp.asarray(got), cp.ndarray)
    np.testing.assert_allclose(got.get(), np.c_[a, np.exp(a), a * 2], rtol=1e-6)
    row = sl.r_[x, 0, 1:4, 0:1:3j]
    np.testing.assert_array_equal(row.get(), np.r_[a, 0, 1:4, 0:1:3j])


POSITIONS_THROUGH_A_PAD = {
    "r_ with a linspace": (lambda x, m: m.r_[x, 0, 1:4, 0:1:3j]),
    "a join with a linspace": (lambda x, m: m.concatenate([x, m.linspace(-1, 1, 9)])),
    "a padded triangle": (lambda x, m: m.pad(m.tri(37, 41), (2, 3)) * 3.0),
    "a padded identity": (lambda x, m: m.pad(m.eye(5), 1, mode="reflect") + 1.0),
    "odd reflections wider than the input": (lambda x, m: m.pad(x[:7], (20, 13), mode="reflect", reflect_type="odd")),
    "an odd symmetric pad": (lambda x, m: m.pad(x, 5, mode="symmetric", reflect_type="odd") * 2),
    "linear ramps": (lambda x, m: m.pad(x, (4, 9), mode="linear_ramp", end_values=(1.5, -2))),
    "2-d linear ramps": (lambda x, m: m.pad(x.reshape(15, 20), ((3, 2), (1, 4)), mode="linear_ramp") + 1),
}


@pytest.mark.parametrize("case", list(POSITIONS_THROUGH_A_PAD))
def test_positions_compared_through_a_pad_are_numpys(case: str) -> None:
    """NVRTC 13.0-13.3's ptxas folds ``clamp(i - k, 0, n - 1) == n - 1`` into the clamp's predicate,
    which is set below the bound too (``runtime.kernels._compares_clamped_positions``): such kernels
    compile unoptimized there."""
    import cupy as cp

    a = np.random.default_rng(4).standard_normal(300).astype(np.float32)
    build = POSITIONS_THROUGH_A_PAD[case]
    np.testing.assert_array_equal(build(sl.asarray(cp.asarray(a)), sl).get(), build(a, np))


def _mean3(p):
    n, k = p.shape[0] - 2, p.shape[1] - 2
    return sum(p[i:i + n, j:j + k] for i in range(3) for j in range(3)) / 9


POSITIONS_ACROSS_A_PAD = {
    "a 3 x 3 mean of a zero pad": (lambda x, m: _mean3(m.pad(x, 1))),
    "a 5-point stencil": (lambda x, m: (lambda z: z[1:-1, :-2] + z[1:-1, 2:] + z[:-2, 1:-1] + z[2:, 1:-1] - 4 * z[1:-1, 1:-1])(
        m.pad(x, 1, constant_values=-2.5))),
    "a constant pad of each width": (lambda x, m: m.pad(x, ((3, 0), (1, 4)), constant_values=((7, 8), (9, 10))) * 2),
    "a 3-d constant pad": (lambda x, m: m.pad(x.reshape(x.shape[0], 4, -1), ((1, 2), (0, 3), (2, 1)), constant_values=5) + 1),
    "a row mask, transposed, padded across": (lambda x, m: m.pad(m.where(m.arange(x.shape[0])[:, None] % 7 == 3, 1.0, x).T,
                                                                ((1, 2), (0, 0)), mode="wrap")),
}


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64", "int32"])
@pytest.mark.parametrize("shape", [(64, 300), (513, 1024)], ids=["64x300", "513x1024"])
@pytest.mark.parametrize("case", list(POSITIONS_ACROSS_A_PAD))
def test_positions_compared_across_a_pad_are_numpys_optimized(case: str, shape: tuple[int, int], dtype: str) -> None:
    """A constant pad's masks compare positions on each axis under the other axes' pads; no pad
    clamps the axis a mask compares, so those kernels compile with ptxas' optimization on every
    NVRTC (unless they select integers: a constant pad of int32 is a ``where`` of int32, which an
    NVRTC before 13.4 compiles unoptimized for another reason) and give NumPy's values."""
    import cupy as cp

    from stitchlab.runtime import kernels

    rng = np.random.default_rng(5)
    a = (rng.standard_normal(shape) * 20).astype(dtype)
    build = POSITIONS_ACROSS_A_PAD[case]
    got = build(sl.asarray(cp.asarray(a)), sl)
    want = build(a, np)
    assert not any(kernels._compares_clamped_positions(k) for k in sl.explain(got).kernels)
    if dtype.startswith("float"):
        assert {kernels.ptxas_options(k) for k in sl.explain(got).kernels} == {()}
    assert got.dtype == want.dtype
    if np.issubdtype(want.dtype, np.integer) or case == "a row mask, transposed, padded across":
        np.testing.assert_array_equal(got.get(), want)
    else:
        np.testing.assert_allclose(got.get(), want, rtol=2e-3 if dtype == "float16" else 1e-6, atol=1e-2 if dtype == "float16" else 1e-5)


def _masked_and_padded(seed: int, m, x):
    """A random program: ``x`` masked by a compare of one axis's positions, then 1-3 random
    swapaxes, trims and pads (every mode) on random axes."""
    rng = np.random.default_rng(seed)
    ax = int(rng.integers(0, x.ndim))
    n = x.shape[ax]
    pos = m.arange(n).reshape(tuple(n if d == ax else 1 for d in range(x.ndim)))
    k = int(rng.integers(0, n))
    mask = [pos == k, pos < k, pos >= k, (pos % 3) == 1][int(rng.integers(0, 4))]
    y = m.where(mask, x * 2.0, x + 1.0)
    for _ in range(int(rng.integers(1, 4))):
        step, d = int(rng.integers(0, 4)), int(rng.integers(0, y.ndim))
        if step == 0:
            y = m.swapaxes(y, 0, y.ndim - 1)
        elif step == 1 and y.shape[d] > 3:
            y = y[(slice(None),) * d + (slice(1, -1),)]
        elif step > 1:
            mode = ["constant", "edge", "reflect", "wrap", "symmetric"][int(rng.integers(0, 5))]
            width = (int(rng.integers(0, 3)), int(rng.integers(1, 3)))
            y = m.pad(y, [(0, 0)] * d + [width] + [(0, 0)] * (y.ndim - d - 1), mode=mode if y.shape[d] >= 3 else "edge")
    return y * 3.0


@pytest.mark.parametrize("first", range(0, 400, 50))
def test_random_position_compares_under_pads_are_numpys(first: int) -> None:
    """Kernels whose compared positions the pads do not clamp compile optimized on an NVRTC before
    13.4 (the others without ptxas optimization); both give NumPy's bits. 1,500 such programs on the
    H200 with NVRTC 13.0: 0 wrong (`benchmarks/results/2026-12-04-h200-d1b7590-pad-rule-random-gpu.log`).
    A check of values, not of the rule: with the workaround stubbed out these pass on NVRTC 13.0 too
    (the fold is rare), where ``test_positions_compared_through_a_pad_are_numpys`` fails
    (`…-pad-rule-stubbed-gpu-tests.log`)."""
    import cupy as cp

    for seed in range(first, first + 50):
        rng = np.random.default_rng(seed + 1)
        a = rng.standard_normal(tuple(int(s) for s in rng.integers(3, 40, int(rng.integers(2, 4))))).astype(np.float32)
        got = _masked_and_padded(seed, sl, sl.asarray(cp.asarray(a)))
        want = _masked_and_padded(seed, np, a)
        np.testing.assert_array_equal(got.get(), want, err_msg=f"seed {seed}")
