"""NumPy's ``ufunc.at`` on the GPU (``stitchlab/runtime/scatter_at.py``): the generated kernel that
applies each position's values in order, against NumPy bit for bit (tolerances only for the ops
CUDA's libm computes differently in the last place), for every dtype, loops of another dtype
than the array's, host and device positions, a batch before the axis and slices after it, heavy
repeats, and a CUDA graph capture that refuses it with a clear error.

Run on the GPU machine: ``PYTHONPATH=. python3 -m pytest -m gpu tests/gpu/test_ufunc_at_gpu.py -q``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from test_ufunc_at import EXACT, UNARY, _data, _operand  # tests/ is on sys.path (tests/conftest.py)

import stitchlab as sl
from stitchlab.ir.dtypes import as_dtype, cast

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cupy_backend")]

RNG = np.random.default_rng(5151)

#: CUDA's pow, atan2, hypot, log and exp may differ from the host libm's in the last place
LIBM = {"power", "arctan2", "hypot", "logaddexp"}


def _check(name: str, a: np.ndarray, key: Any, b: Any, device_key: bool) -> None:
    import cupy as cp

    want = a.copy()
    x = sl.asarray(cp.asarray(a))
    dk = (tuple(cp.asarray(k) if isinstance(k, np.ndarray) else k for k in key) if isinstance(key, tuple)
          else cp.asarray(key)) if device_key else key
    db = cp.asarray(b) if isinstance(b, np.ndarray) else b
    with np.errstate(all="ignore"):
        try:
            getattr(np, name).at(want, key, b)
        except TypeError as e:  # (no loop for these dtypes: the same error)
            with pytest.raises(type(e)):
                getattr(np, name).at(x, dk, db)
            return
    getattr(np, name).at(x, dk, db)
    got = x.get()
    assert got.dtype == want.dtype
    if name in LIBM and a.dtype.kind == "f":  # (compounded over about 7 repeats)
        # an ulp of the operands may be all that is left where repeats cancel (logaddexp float32 at
        # 2026-12-04: 8.5056e-05 against NumPy's 8.5026e-05, one ulp of 0.25 apart); subnormals:
        # 5e-324 against 0
        magnitudes = np.abs(np.concatenate([np.ravel(a), np.ravel(np.asarray(b))]).astype(np.float64))
        scale = float(np.max(magnitudes[np.isfinite(magnitudes)], initial=1.0))
        np.testing.assert_allclose(got, want, rtol=1e-2 if name == "power" or a.dtype == np.float16 else 1e-4,
                                   atol=max(np.finfo(a.dtype).tiny, 4 * np.finfo(a.dtype).eps * scale), equal_nan=True)
    elif name in LIBM and a.dtype.kind in "iu":  # (a float64 result one ulp apart may truncate to the next integer)
        np.testing.assert_allclose(got, want, rtol=0, atol=1)
    else:
        np.testing.assert_array_equal(got, want, err_msg=f"{name}.at {a.dtype}")


@pytest.mark.parametrize("name", EXACT)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int8", "uint16", "int32", "uint32", "int64", "uint64", "bool"])
def test_repeats_applied_in_order_as_numpy(name: str, dtype: str) -> None:
    dt = np.dtype(dtype)
    if name == "nextafter" and np.nextafter.resolve_dtypes((dt, dt, None))[0] == np.float16:
        pytest.skip("NumPy 2.4's float16 nextafter(-0.0, +0.0) is -0.0 where stitchlab's (and NumPy 2.5's) is +0.0 "
                    "(docs/user-guide.md), and a chain of steps from there parts")
    if name == "divide" and dt.kind in "iub":
        pytest.skip("0 / 0 of integers is NaN, whose cast back to an integer NumPy calls undefined")
    a = _data((300, 40), dt)
    rows = RNG.integers(-300, 300, size=2000)
    for device_key in (False, True):
        _check(name, a, rows, _operand(name, (2000, 40), dt), device_key)
    _check(name, a, (slice(None), RNG.integers(0, 40, size=90)), _operand(name, (300, 90), dt), True)
    _check(name, a.ravel(), RNG.integers(0, 64, size=5000), _operand(name, 5000, dt), False)


@pytest.mark.parametrize("name", UNARY)
def test_unary_ops_apply_once_per_repeat(name: str) -> None:
    """A unary ufunc at repeated positions, host and device positions (read back to count them)."""
    import cupy as cp

    for dtype in ("float32", "int16", "bool"):
        a = _data((300, 40), np.dtype(dtype))
        a = np.abs(a) if name == "sqrt" else a
        for key in (RNG.integers(-300, 300, size=2000), (slice(None), RNG.integers(0, 40, size=90))):
            for device_key in (False, True):
                want, x = a.copy(), sl.asarray(cp.asarray(a))
                dk = (tuple(cp.asarray(k) if isinstance(k, np.ndarray) else k for k in key) if isinstance(key, tuple)
                      else cp.asarray(key)) if device_key else key
                with np.errstate(all="ignore"):
                    try:
                        getattr(np, name).at(want, key)
                    except TypeError as e:  # (no loop for this dtype: the same error)
                        with pytest.raises(type(e)):
                            getattr(np, name).at(x, dk)
                        continue
                getattr(np, name).at(x, dk)
                np.testing.assert_array_equal(x.get(), want, err_msg=f"{name}.at {dtype} device key {device_key}")


def test_other_loop_dtypes_cast_back_each_step() -> None:
    """Integer arrays with float values stay in the integer range here: a float outside it (or
    NaN) casts to an integer as the device casts it (NumPy calls the cast undefined)."""
    idx = RNG.integers(0, 50, size=300)
    for dtype in ("int8", "uint8", "int32", "float16", "float32", "bool"):
        a = _data(50, np.dtype(dtype))
        for b in (1.5, 300, True, 2.0**-24 + 2.0**-50, np.float32(0.3), RNG.standard_normal(300),
                  RNG.integers(-9, 9, size=300).astype(np.int16)):
            for name in ("add", "multiply", "maximum", "subtract"):
                floats = np.asarray(b).dtype.kind == "f"
                if (dtype == "bool" and name == "subtract") or (name == "multiply" and floats and dtype in ("int8", "uint8", "int32")):
                    continue
                _check(name, a, idx, b, True)


def test_bfloat16_rounds_each_step_once() -> None:
    import cupy as cp

    bf16 = as_dtype("bfloat16")
    a = _data((64, 33), bf16)
    idx = RNG.integers(0, 64, size=700)
    for name in ("add", "multiply", "maximum"):
        _check(name, a, idx, _data((700, 33), bf16), True)
    w = RNG.standard_normal((700, 33)) * 0.01
    want = a.copy()
    for i, row in zip(idx, w, strict=True):
        want[i] = cast(want[i].astype(np.float64) + row, bf16)
    x = sl.asarray(cp.asarray(a))
    np.add.at(x, cp.asarray(idx), cp.asarray(w))
    np.testing.assert_array_equal(x.get().view(np.uint16), want.view(np.uint16))


def test_embedding_gradient_and_histogram_at_scale() -> None:
    """Rows of a table accumulated at token ids (a batch axis before them), and one float32
    histogram whose 64 bins each take about 16000 values in order."""
    import cupy as cp

    table = RNG.standard_normal((2, 5000, 256)).astype(np.float32)
    ids = RNG.integers(0, 5000, size=40000)
    grads = RNG.standard_normal((2, 40000, 256)).astype(np.float32)
    want = table.copy()
    np.add.at(want, (slice(None), ids), grads)
    x = sl.asarray(cp.asarray(table))
    np.add.at(x, (slice(None), cp.asarray(ids)), cp.asarray(grads))
    np.testing.assert_array_equal(x.get(), want)
    v = RNG.standard_normal(1 << 20).astype(np.float32)
    bins = np.clip(((v + 4) * 8).astype(np.int64), 0, 63)
    hist = np.zeros(64, np.float32)
    np.add.at(hist, bins, v)
    h = sl.zeros(64, dtype=np.float32)
    d = sl.asarray(cp.asarray(v))
    np.add.at(h, sl.clip(((d + 4) * 8).astype(np.int64), 0, 63), d)
    np.testing.assert_array_equal(h.get(), hist)


@pytest.mark.parametrize("k", [1, 7, 4096, 4097, 16384, 16385])
@pytest.mark.parametrize("n", [5, 32768, 2**31 + 3])
def test_sorted_entries_are_numpys_stable_sort(k: int, n: int) -> None:
    """The step's sort of (position, order), by ranks in one or two kernels up to 16384 entries
    (32-bit keys, or 64-bit ones where ``(n + 1) * k`` does not fit) and by CuPy's argsort past
    them: negative positions wrapped once, those out of bounds after the rest, each run in order."""
    import cupy as cp

    from stitchlab.runtime import scatter_at

    idx = RNG.integers(-n - 3, n + 3, size=k) if k > 7 else np.array([-n - 1, n, 0, -1, 3, n - 1, 0])[:k]
    if k > 7:
        idx[::3] = RNG.integers(0, min(n, 40), size=idx[::3].size)  # (repeats)
    wrapped = np.where(idx < 0, idx + n, idx)
    order = np.argsort(np.where((wrapped >= 0) & (wrapped < n), wrapped, n), kind="stable")
    pos, got = scatter_at.sorted_entries(cp, cp.asarray(idx), n)
    np.testing.assert_array_equal(cp.asnumpy(got), order)
    np.testing.assert_array_equal(cp.asnumpy(pos), wrapped[order])


def test_long_slices_and_host_positions_read_through_their_order() -> None:
    """Slices longer than one block's share of the sorted pass (1500 and 2100 elements), and host
    positions given in no order (sorted on the host; the values read through that order, not
    gathered), for the sorted pass and the atomic one."""
    import cupy as cp

    idx = RNG.integers(-40, 40, size=900)
    for dtype, name, shape in (("float32", "add", (40, 1500)), ("float16", "maximum", (40, 2100)),
                               ("int32", "add", (40, 1500)), ("float64", "multiply", (40, 3, 700))):
        dt = np.dtype(dtype)
        a = _data(shape, dt)
        b = _operand(name, (900,) + shape[1:], dt)
        for key in (idx, cp.asarray(idx)):
            want, x = a.copy(), sl.asarray(cp.asarray(a))
            getattr(np, name).at(want, idx, b)
            getattr(np, name).at(x, key, cp.asarray(b))
            np.testing.assert_array_equal(x.get(), want, err_msg=f"{name}.at {dtype} {shape}")


_HOST_IDS = np.array([5, 1, 5, 0, 5, 2, 1])  # (repeats in no order: sorted when traced, values read through that order)


@sl.jit
def _accumulate_at_host_positions(x: Any, w: Any) -> Any:
    y = x.copy()
    np.add.at(y, _HOST_IDS, w)
    np.maximum.at(y, _HOST_IDS[::-1], w * 0.5)
    return y


def test_host_positions_are_captured_into_a_cuda_graph() -> None:
    """Host positions are checked and sorted when traced: the step reads nothing back, so a
    CUDA graph captures the jitted call and its replay gives NumPy's result for new data."""
    import cupy as cp

    x = cp.asarray(RNG.standard_normal((8, 300)).astype(np.float32))
    w = cp.asarray(RNG.standard_normal((7, 300)).astype(np.float32))
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        _accumulate_at_host_positions(x, w)
        stream.synchronize()
        stream.begin_capture()
        try:
            out = _accumulate_at_host_positions(x, w)
        finally:
            graph = stream.end_capture()
        a, b = RNG.standard_normal((8, 300)).astype(np.float32), RNG.standard_normal((7, 300)).astype(np.float32)
        x[...], w[...] = cp.asarray(a), cp.asarray(b)
        graph.launch(stream=stream)
        stream.synchronize()
        got = cp.asnumpy(cp.asarray(out))
    want = a.copy()
    np.add.at(want, _HOST_IDS, b)
    np.maximum.at(want, _HOST_IDS[::-1], b * np.float32(0.5))
    np.testing.assert_array_equal(got, want)


def test_device_positions_are_checked_and_refused_under_capture() -> None:
    import cupy as cp

    x = sl.zeros(10, dtype=np.float32)
    np.add.at(x, cp.asarray([1, 10]), 1.0)
    with pytest.raises(IndexError, match="index 10 is out of bounds for axis 0 with size 10"):
        x.get()

    @sl.jit
    def counts(idx: Any) -> Any:
        h = sl.zeros(16, dtype=np.int32)
        np.add.at(h, idx, 1)
        return h

    idx = cp.asarray(RNG.integers(0, 16, size=1000))
    np.testing.assert_array_equal(cp.asnumpy(cp.asarray(counts(idx))), np.bincount(cp.asnumpy(idx), minlength=16))
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        stream.begin_capture()
        try:
            with pytest.raises(RuntimeError, match="cannot be captured"):
                counts(idx)
        finally:
            stream.end_capture()
