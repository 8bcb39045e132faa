"""Random expression graphs on the GPU at sizes where the schedules differ (axes of 1 to 4096
elements), every value checked against NumPy's step on stitchlab's inputs (``tests/fuzzgraphs.py``
says how). 480 fixed programs, 120 more with bfloat16 leaves, 80 with many reductions in one
kernel, 80 of the wide family, 80 of the assign family, 80 of the at family, 80 of the rows family
(long rows), and 120 captured into CUDA graphs.

Run on the GPU machine: ``PYTHONPATH=. python3 -m pytest -m gpu tests/gpu/test_random_graphs_gpu.py -q``;
more seeds: ``python3 tests/fuzzgraphs.py FIRST COUNT`` with the cupy backend.
"""

from __future__ import annotations

import fuzzgraphs
import numpy as np
import pytest

import stitchlab as sl

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cupy_backend")]

CHUNK = 40


def _failures(first: int, dtypes: list[str] | None = None, family: str = "mixed") -> list[str]:
    out = []
    for seed in range(first, first + CHUNK):
        problems = fuzzgraphs.check(seed, dtypes, family=family)
        if problems:
            out.append(fuzzgraphs.build(seed, dtypes, family).describe() + "\n" + "\n".join(problems))
    return out


@pytest.mark.parametrize("first", range(0, 480, CHUNK))
def test_random_graphs_match_numpy_on_gpu(first: int) -> None:
    failures = _failures(first)
    assert not failures, "\n\n".join(failures)


@pytest.mark.parametrize("first", range(10_000, 10_120, CHUNK))
def test_random_graphs_bfloat16_on_gpu(first: int) -> None:
    pytest.importorskip("ml_dtypes")
    failures = _failures(first, ["bfloat16", "bfloat16", "float32", "int32", "bool"])
    assert not failures, "\n\n".join(failures)


@pytest.mark.parametrize("first", range(30_000, 30_080, CHUNK))
def test_many_reductions_in_one_kernel_on_gpu(first: int) -> None:
    """4 to 12 reductions of one array over the same axes (``--family reductions``): one kernel
    with as many accumulators, combined in shared memory within a block's 48 KB."""
    failures = _failures(first, family="reductions")
    assert not failures, "\n\n".join(failures)


@pytest.mark.parametrize("first", range(50_000, 50_080, CHUNK))
def test_assign_family_on_gpu(first: int) -> None:
    """Assignments into copies between the mixed family's steps (``--family assign``): fused
    wheres over positions and scatter steps (not run on a GPU yet when written)."""
    failures = _failures(first, family="assign")
    assert not failures, "\n\n".join(failures)


@pytest.mark.parametrize("first", range(70_000, 70_080, CHUNK))
def test_at_family_on_gpu(first: int) -> None:
    """``ufunc.at`` into copies between the mixed family's steps (``--family at``): the sorted
    pass, the atomic pass and fused masks (not run on a GPU yet when written)."""
    failures = _failures(first, family="at")
    assert not failures, "\n\n".join(failures)


@pytest.mark.parametrize("first", range(90_000, 90_080, CHUNK))
def test_rows_family_on_gpu(first: int) -> None:
    """Row steps over rows as long as a vocabulary, few and many, some special (``--family
    rows``): the walking, tiled, scanning and few-row kernels with NumPy's infinities and NaNs."""
    pytest.importorskip("ml_dtypes")
    failures = _failures(first, family="rows")
    assert not failures, "\n\n".join(failures)


@pytest.mark.parametrize("first", range(40_000, 40_080, CHUNK))
def test_wide_family_on_gpu(first: int) -> None:
    """Every other ufunc and reduction stitchlab provides and the newer NumPy functions
    (``--family wide``)."""
    failures = _failures(first, family="wide")
    assert not failures, "\n\n".join(failures)


@pytest.mark.parametrize("seed", [500776, 600989, 1000455, 2000373, 3200415, 3500191, 4300003, 5200284])
def test_wide_family_seeds_that_failed(seed: int) -> None:
    """The wide family's first GPU runs (NVRTC 13.0): NaNs with the sign bit set sorted first
    (500776), a division by a row value stored as a multiply by its reciprocal but read through a
    flip as a division (600989), ptxas dropping a float16 abs's mask (1000455), a float32 nanprod
    that the kernel's order of factors overflows and NumPy's does not (2000373: the checker's
    rule, not the kernel, was wrong), a float16 nanvar whose float16 sum of squares overflowed
    (3200415: it works in float32 now, as var does), NVVM computing on two int8 values at once
    and shifting the neighbour into the sign (3500191: ``floor_divide(x, 2)``, 4300003:
    ``right_shift(x - 2, x)``), C comparing int64 with uint64 as unsigned (5200284)."""
    problems = fuzzgraphs.check(seed, family="wide")
    assert not problems, fuzzgraphs.build(seed, family="wide").describe() + "\n" + "\n".join(problems)


@pytest.mark.parametrize("first", range(20_000, 20_120, CHUNK))
def test_random_programs_captured_into_cuda_graphs(first: int) -> None:
    """Each program as an ``sl.jit`` function captured into a CUDA graph and replayed on new
    contents of its inputs: an uncaptured call's bits, and no array allocated afterwards
    overwritten (``fuzzgraphs.capture_check``; a captured column argmax overwrote one before
    c045d57). Programs with a matrix product or a device gather are refused, as documented."""
    failures, refused = [], 0
    for seed in range(first, first + CHUNK):
        problems = fuzzgraphs.capture_check(seed)
        if problems is None:
            refused += 1
        elif problems:
            failures.append(fuzzgraphs.build(seed).describe() + "\n" + "\n".join(problems))
    assert not failures, "\n\n".join(failures)
    assert refused < CHUNK // 4, f"{refused} of {CHUNK} programs could not be captured"


ROW_CASES = [((8, 128, 100), 1, (1, 100)), ((8, 4096, 100), 1, (1, 100)), ((64, 8, 100), 0, (8, 1)),
             ((128, 8, 100), 0, (1, 100)), ((8, 100, 128), 2, (1, 100)), ((4, 8, 128, 100), 2, (8, 100)),
             ((8, 128, 100), 1, (8, 1)), ((8, 100, 4096), 2, (1, 100))]


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize(("shape", "axis", "wshape"), ROW_CASES)
def test_row_values_combine_with_arrays_broadcast_over_kept_axes(shape, axis, wshape, dtype) -> None:
    """``w / x.sum(axis)`` with ``w`` broadcast over some kept axes (seed 1075's pattern:
    tests/compiler/test_row_index_shapes.py)."""
    rng = np.random.default_rng(7)
    x_np = rng.uniform(0.5, 1.5, shape).astype(dtype)
    w_np = rng.uniform(-2, 2, wshape).astype(dtype)
    x, w = sl.asarray(x_np), sl.asarray(w_np)
    s = sl.sum(x, axis=axis)
    y, s_got = (np.asarray(v.get(), np.float64) for v in (w / s, s))
    s64 = x_np.astype(np.float64).sum(axis=axis)
    want = w_np.astype(np.float64) / s64
    tol = 2e-3 if dtype == "float16" else 1e-5
    np.testing.assert_allclose(s_got, s64, rtol=tol)
    np.testing.assert_allclose(y, want, rtol=tol, atol=tol * np.abs(want).max())


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "int64"])
def test_integer_reciprocal_of_zero_is_zero(dtype) -> None:
    """The documented difference (user guide): NumPy gives a platform-defined value."""
    x = np.array([0, 1, 2, 3, 0], dtype)
    np.testing.assert_array_equal(sl.reciprocal(sl.asarray(x)).get(), np.array([0, 1, 0, 0, 0], dtype))


@pytest.mark.parametrize("fn", ["argmax", "argmin"])
@pytest.mark.parametrize(("shape", "axis"), [((32, 64), 0), ((32, 64), 1), ((4, 33, 5), 1), ((300, 7), 0)])
def test_arg_reductions_give_the_first_nan_and_mix_with_int64(fn, shape, axis) -> None:
    """NumPy's position of a slice holding NaN is its first NaN (fuzz seed 184: CuPy's column
    argmax, which the plan calls, gave another); and the position, an int in the kernel, combines
    with int64 values (fuzz: ``argmax(x) // 3`` did not compile)."""
    rng = np.random.default_rng(3)
    x_np = rng.integers(-4, 4, shape).astype(np.float32)
    x_np[x_np < -2] = np.nan  # a NaN in most slices, several in many
    x = sl.asarray(x_np)
    got = getattr(sl, fn)(x, axis=axis)
    mixed = sl.maximum(got // 3, sl.asarray(np.int64(2))) - sl.minimum(got, 5)
    want = getattr(np, fn)(x_np, axis=axis)
    np.testing.assert_array_equal(got.get(), want)
    np.testing.assert_array_equal(mixed.get(), np.maximum(want // 3, 2) - np.minimum(want, 5))


@pytest.mark.parametrize("shape", [(32, 0, 256), (0, 8192), (2, 0, 4096)])
def test_empty_results_of_long_reductions(shape) -> None:
    """No rows, each long (fuzz seed 503434 divided by zero blocks while planning; CPU test in
    tests/compiler/test_fast_paths.py): the results are empty, and a reduction over the empty axis
    gives NumPy's identities next to them."""
    x_np = np.random.default_rng(5).standard_normal(shape).astype(np.float32)
    x = sl.asarray(x_np)
    axes = tuple(a for a, d in enumerate(shape) if d != 0)
    empty_axes = tuple(a for a, d in enumerate(shape) if d == 0)
    lo, s, z = sl.compute(x.min(axis=axes, keepdims=True), x.sum(axis=axes), x.sum(axis=empty_axes))
    assert lo.shape == x_np.min(axis=axes, keepdims=True).shape and s.shape == x_np.sum(axis=axes).shape
    np.testing.assert_array_equal(z.get(), x_np.sum(axis=empty_axes))
