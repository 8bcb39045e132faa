"""Scans stitched into row kernels (``plan/groups.py``, ``fusable_scan``; ``sl_row_scan`` in the
preamble): programs whose ``cumsum``/``cumprod`` along the rows shares a kernel with the work
before and after it (top-p's mask, a scan of softmax, reductions of running sums, a scan of a
scan), planned as one row kernel that holds the row in registers, or walks rows too long for
that in tiles (``cache="tiles"``), against NumPy in float64 at the tolerance of another order of
adds (the running sums' magnitude). The same kernels run on the host in
``tests/compiler/test_row_scans_host.py``.

Run on the GPU machine: ``PYTHONPATH=. python3 -m pytest -m gpu tests/gpu/test_row_scans_gpu.py -q``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from rowscans import EXTREMA_DTYPES, assert_same_bits, extremes_data, scanning, with_special_rows
from rowscans import PROGRAMS as ALL_PROGRAMS
from rowscans import softmax as _softmax

import stitchlab as sl

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cupy_backend")]

RNG = np.random.default_rng(58)


#: the host tests' programs (tests/rowscans.py) of one float array and one scan, or a scan of a scan
PROGRAMS = {k: v for k, v in ALL_PROGRAMS.items() if k not in ("int32 cumsum", "3-d", "two scans")}
SHAPES = [(8192, 4096), (300, 24), (37, 3001), (5, 7), (300, 40001), (64, 128256)]


def _scans_in_kernels(*ys: Any) -> int:
    return len(scanning(sl.explain(*ys).kernels))


def _caches(*ys: Any) -> list[str]:
    return [k.schedule.cache for k in scanning(sl.explain(*ys).kernels)]


def _host(y: Any) -> np.ndarray:
    return np.asarray(y.get(), np.float64)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_scans_in_row_kernels_are_numpys_to_the_order_of_adds(name: str, dtype: str, shape: tuple[int, int]) -> None:
    import cupy as cp

    a = RNG.standard_normal(shape).astype(dtype)
    ys = PROGRAMS[name](sl, sl.asarray(cp.asarray(a)))
    assert _scans_in_kernels(*ys) >= 1
    if shape[1] > 32768:  # (rows no block holds in registers)
        assert set(_caches(*ys)) == {"tiles"}
    _assert_numpys(name, a, [_host(y) for y in ys])


def _assert_numpys(name: str, a: np.ndarray, got: list[np.ndarray]) -> None:
    """``got``, program ``name``'s results over ``a``, against NumPy's in float64 to the order of
    adds: the running sums' size bounds another order's error (a few roundings of each; the
    program of ``|a|`` bounds every running sum's size)."""
    scale = max([float(np.max(np.abs(w))) for w in PROGRAMS[name](np, np.abs(a.astype(np.float64)))] + [1.0])
    tol = 1e-5 if a.dtype == np.float32 else 1e-13
    for g, want in zip(got, PROGRAMS[name](np, a.astype(np.float64)), strict=True):
        assert g.shape == np.shape(want)
        assert float(np.max(np.abs(g - want))) <= tol * scale, (name, a.dtype, a.shape)


@pytest.mark.parametrize("shape", [(300, 40001), (64, 128256)])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_tiles_walked_first_to_last_in_every_pass_are_numpys_too(name: str, shape: tuple[int, int]) -> None:
    """With ``reverse_tiles`` off (the passes before a scan walking their tiles first to last,
    not last to first) the tiled kernels agree with NumPy as the default ones above."""
    import cupy as cp

    from stitchlab import runtime
    from stitchlab.codegen.schedules import switches

    a = RNG.standard_normal(shape).astype(np.float32)
    with switches(reverse_tiles=False):
        runtime.current().clear_cache()
        ys = PROGRAMS[name](sl, sl.asarray(cp.asarray(a)))
        ks = scanning(sl.explain(*ys).kernels)
        got = [_host(y) for y in ys]
    runtime.current().clear_cache()
    assert ks and all(k.schedule.cache == "tiles" and "tb >= 0;" not in k.source for k in ks)
    _assert_numpys(name, a, got)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sums_of_exps_in_tiles_keep_numpys_infinities_and_nans(dtype: str) -> None:
    """The max's pass of a softmax walked in tiles scales its running sum once a tile, to the
    tile's maximum (``_group_maxima``): rows whose maximum rises in every tile and in none after
    the first, infinities, tiles and rows of -inf and NaNs give NumPy's values and NaNs."""
    import cupy as cp

    a = with_special_rows(RNG.standard_normal((64, 128256)).astype(dtype))  # (64: planned a block a row)
    (y,) = PROGRAMS["cumsum of softmax"](sl, sl.asarray(cp.asarray(a)))
    (k,) = scanning(sl.explain(y).kernels)
    assert k.schedule.cache == "tiles" and " = fmax(tm" in k.source
    got = _host(y)
    with np.errstate(invalid="ignore"):
        (want,) = PROGRAMS["cumsum of softmax"](np, a.astype(np.float64))
    assert np.isnan(want[[3, 5, 6, 7]]).all() and not np.isnan(want[[0, 1, 2, 4]]).any() and not np.isnan(want[8:]).any()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    np.testing.assert_allclose(got[ok], want[ok], rtol=0, atol=1e-5 if dtype == "float32" else 1e-13)


@pytest.mark.parametrize("op", ["argmax", "argmin"])
def test_argmax_beside_a_scan_in_tiles_keeps_numpys_first_index(op: str) -> None:
    """Ties and NaNs in a row walked in tiles: the argmax/argmin pass goes first to last (its
    threads step up their positions), where other passes that read no scan go backwards."""
    import cupy as cp

    a = RNG.integers(0, 4, (64, 128256)).astype(np.float32)
    a[1, [9000, 70000, 120000]] = np.nan
    x = sl.asarray(cp.asarray(a))
    outs = [getattr(x, op)(axis=1), sl.cumsum(x, axis=1) - getattr(x, op)(axis=1, keepdims=True)]
    assert _caches(*outs) == ["tiles"]
    want = getattr(np, op)(a, axis=1)
    np.testing.assert_array_equal(outs[0].get(), want)
    np.testing.assert_array_equal(outs[1].get(), np.cumsum(a.astype(np.float64), axis=1).astype(np.float32) - want[:, None])


@pytest.mark.parametrize("shape", [(2048, 32000), (64, 512), (8192, 4096), (256, 128256), (64, 151936)])
def test_the_top_p_mask_is_one_kernel_and_numpys(shape: tuple[int, int]) -> None:
    """Vocabularies of 32,000 and less (rows in registers), Llama-3's 128,256 and Qwen's 151,936
    (rows walked in tiles)."""
    import cupy as cp

    a = (RNG.standard_normal(shape) * 3).astype(np.float32)
    mask = sl.cumsum(_softmax(sl, sl.asarray(cp.asarray(a))), axis=1) < 0.9
    assert len(sl.explain(mask).kernels) == 1 and _scans_in_kernels(mask) == 1
    assert _caches(mask) == ["tiles" if shape[1] > 32768 else "registers"]
    running = np.cumsum(_softmax(np, a.astype(np.float64)), axis=1)
    clear = np.abs(running - 0.9) > 1e-5  # (nearer 0.9 another order of adds may decide)
    got = mask.get()
    assert got.dtype == np.bool_ and clear.mean() > 0.99
    np.testing.assert_array_equal(got[clear], (running < 0.9)[clear])


@pytest.mark.parametrize("shape", [(2048, 32000), (300, 24), (256, 128256)])
def test_bfloat16_scans_in_row_kernels_are_the_steps_to_a_rounding(shape: tuple[int, int], monkeypatch: pytest.MonkeyPatch) -> None:
    """A bfloat16 scan of softmax in a row kernel (a warp's, a block's, tiles) against the library
    step (``row_scans`` off): both add in float32 and round each running value once; another
    order of adds moves one by a bfloat16 rounding at most."""
    from stitchlab.ir.dtypes import bfloat16
    from stitchlab.plan import groups

    x = sl.asarray((RNG.standard_normal(shape) * 3).astype(bfloat16()))
    y = sl.cumsum(_softmax(sl, x), axis=1)
    assert _caches(y) == ["tiles" if shape[1] > 32768 else "registers"]
    got = _host(y)
    monkeypatch.setitem(groups.OPTIONS, "row_scans", False)
    steps = sl.cumsum(_softmax(sl, x), axis=1)
    assert _scans_in_kernels(steps) == 0
    want = _host(steps)
    assert float(np.max(np.abs(got - want) - 2.0**-7 * np.abs(want))) <= 2.0**-24


def test_integer_running_sums_in_a_row_kernel_are_numpys_bit_for_bit() -> None:
    import cupy as cp

    a = RNG.integers(-1000, 1000, (513, 2048)).astype(np.int32)
    y = sl.cumsum(sl.asarray(cp.asarray(a)) * 3, axis=1) - 1
    assert _scans_in_kernels(y) == 1
    np.testing.assert_array_equal(y.get(), np.cumsum(a * 3, axis=1) - 1)


@pytest.mark.parametrize("shape", [(8192, 4096), (37, 3001), (5, 7), (64, 128256)])
@pytest.mark.parametrize("dtype", EXTREMA_DTYPES)
def test_running_maxima_and_minima_in_row_kernels_are_numpys_bits(dtype: str, shape: tuple[int, int]) -> None:
    """``maximum.accumulate``/``minimum.accumulate`` along the rows, in the row kernel of the work
    around it (in registers, or in tiles for the long rows): NumPy's bits, the later of equal
    values (-0.0, +0.0) and the first NaN kept."""
    import cupy as cp

    for op, ufunc in (("cummax", np.maximum), ("cummin", np.minimum)):
        a = extremes_data(shape, sl.bfloat16 if dtype == "bfloat16" else np.dtype(dtype), op, RNG)
        one = a.dtype.type(1)
        y = getattr(sl, ufunc.__name__).accumulate(sl.asarray(cp.asarray(a)) * one, axis=1) * one
        assert _scans_in_kernels(y) == 1
        assert_same_bits(y.get(), ufunc.accumulate(a * one, axis=1) * one)


@pytest.mark.parametrize("shape", [(8192, 4096), (262144, 128), (2048, 32000), (512, 128256), (300, 7)])
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "int32", "int64", "float16", "int8"])
def test_a_lone_scan_over_many_rows_is_a_row_kernel_and_numpys(dtype: str, shape: tuple[int, int]) -> None:
    """A scan alone along at least as many rows as SMs is a row kernel of its own
    (``groups.lone_row_scan``; in tiles past a block's registers): running maxima NumPy's bits,
    sums (not float16's: a step) to the order of adds against float64, integers exact."""
    import cupy as cp

    dt = np.dtype(sl.bfloat16 if dtype == "bfloat16" else dtype)
    a = extremes_data(shape, dt, "cummax", RNG)
    y = sl.maximum.accumulate(sl.asarray(cp.asarray(a)), axis=1)
    assert _scans_in_kernels(y) == 1
    assert_same_bits(y.get(), np.maximum.accumulate(a, axis=1))
    b = (RNG.integers(-100, 100, shape) if dt.kind in "iu" else RNG.standard_normal(shape)).astype(dt)
    y = sl.cumsum(sl.asarray(cp.asarray(b)), axis=1)
    assert _scans_in_kernels(y) == (dtype != "float16")
    want, scale = np.cumsum(b.astype(np.float64), axis=1), np.cumsum(np.abs(b.astype(np.float64)), axis=1)
    tol = {"float64": 1e-14, "float32": 2e-6, "bfloat16": 2.0**-8, "float16": 2.0**-10}.get(dtype, 0)
    got = y.get()
    assert got.dtype == np.cumsum(b[:1, :1], axis=1).dtype
    assert float(np.max(np.abs(got.astype(np.float64) - want) / (scale + 1e-30))) <= tol


@pytest.mark.parametrize(("rows", "cols"), [(1024, 4096), (128, 40000)])
def test_unaligned_rows_take_the_element_paths(rows: int, cols: int) -> None:
    """Rows that start 4 bytes past a 16-byte boundary: the kernel's vector loads and stores take
    their element branches, the scan the same slots (rows in registers, rows walked in tiles)."""
    import cupy as cp

    flat = cp.asarray(RNG.standard_normal(rows * cols + 1).astype(np.float32))
    x = sl.asarray(flat[1:].reshape(rows, cols))
    y = sl.cumsum(x * 2, axis=1) + x
    assert _caches(y) == ["tiles" if cols > 32768 else "registers"]
    h = cp.asnumpy(flat[1:].reshape(rows, cols)).astype(np.float64)
    scale = np.cumsum(np.abs(h), axis=1).max()
    assert float(np.max(np.abs(_host(y) - (np.cumsum(h * 2, axis=1) + h)))) <= 1e-5 * scale
