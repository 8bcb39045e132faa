"""The scans' own GPU passes (``stitchlab/runtime/scan.py``): ``cumsum``/``cumprod`` along every
axis, one pass (a block a row, or a block a chunk of a long row with look-back) and three (chunks
of columns), each dtype, against NumPy; integers
bit for bit (wrapping around as NumPy's), floats against float64 at the tolerance of another order
of adds. CuPy's scans are not called.

Run on the GPU machine: ``PYTHONPATH=. python3 -m pytest -m gpu tests/gpu/test_scans_gpu.py -q``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from rowscans import assert_same_bits, extremes_data

import stitchlab as sl
from stitchlab.ir.dtypes import as_dtype

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cupy_backend")]

RNG = np.random.default_rng(2026)

#: shapes and axes: rows of a block each, rows cut into chunks, 1-d, columns in one pass and in
#: chunks, a middle axis, odd lengths at every tile edge
CASES = [((8192, 4096), 1), ((3, 100003), 1), ((2**22 + 5,), 0), ((4099, 2049), 1), ((513, 2048), -1),
         ((8192, 300), 0), ((8192, 4096), 0), ((3, 1000, 257), 1), ((100000, 3), 0), ((7, 301, 5), 1),
         ((6, 5, 4, 3), 2), ((1, 1), 0), ((17, 1), 1)]


@pytest.fixture(autouse=True)
def no_cupy_scans(monkeypatch: pytest.MonkeyPatch) -> None:
    """CuPy's scans refused, and a lone scan over many rows kept a step of these kernels, not the
    row kernel it is by default (``groups.lone_row_scan``; tested in ``test_row_scans_gpu.py``):
    the scan kernels still take float16 sums, few rows and other axes."""
    import cupy as cp

    from stitchlab.plan import groups

    monkeypatch.setitem(groups.OPTIONS, "lone_row_scans", False)

    def refused(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("CuPy's scan was called")

    monkeypatch.setattr(cp, "cumsum", refused)
    monkeypatch.setattr(cp, "cumprod", refused)


def _dev(a: np.ndarray) -> Any:
    import cupy as cp

    return sl.asarray(cp.asarray(a))


def _host(y: Any) -> np.ndarray:
    import cupy as cp

    return cp.asnumpy(cp.asarray(y))


def _replays(fn: Any, x: Any, inputs: list[np.ndarray]) -> Iterator[Any]:
    """``fn(x)`` captured into a CUDA graph on a stream of its own (after a warm-up call outside
    it), replayed once for each of ``inputs`` written into ``x`` first; yields the host copies of
    the captured outputs after each replay."""
    import cupy as cp

    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        fn(x)
        stream.synchronize()
        stream.begin_capture()
        try:
            outs = fn(x)
        finally:
            graph = stream.end_capture()
        for b in inputs:
            x[...] = cp.asarray(b)
            graph.launch(stream=stream)
            stream.synchronize()
            yield [_host(o) for o in outs] if isinstance(outs, tuple) else _host(outs)


@pytest.mark.parametrize("shape,axis", CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int32", "uint8", "bool"])
def test_running_maxima_and_minima_are_numpys_bit_for_bit(shape: tuple[int, ...], axis: int, dtype: str) -> None:
    """``maximum.accumulate``/``minimum.accumulate`` as a step of its own, every kernel: NumPy's
    bits, of equal values (-0.0, +0.0) the later one (float16: the earlier, as NumPy's float16
    loop), the first NaN kept, in the input's dtype."""
    for op, ufunc in (("cummax", np.maximum), ("cummin", np.minimum)):
        a = extremes_data(shape, as_dtype(dtype), op, RNG)
        y = getattr(sl, ufunc.__name__).accumulate(_dev(a), axis=axis)
        assert [k.schedule.family for k in sl.explain(y).kernels] == ["interpreted"]
        assert_same_bits(y.get(), ufunc.accumulate(a, axis=axis))


@pytest.mark.parametrize("shape,axis", CASES)
@pytest.mark.parametrize("dtype", ["int64", "int8", "uint8", "int32", "uint64", "bool"])
def test_integer_scans_are_numpys_bit_for_bit(shape: tuple[int, ...], axis: int, dtype: str) -> None:
    a = RNG.integers(0, 2, shape).astype(bool) if dtype == "bool" else RNG.integers(-100, 100, shape).astype(dtype)
    for fn in ("cumsum", "cumprod"):
        got, want = _host(getattr(sl, fn)(_dev(a), axis=axis)), getattr(np, fn)(a, axis=axis)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_integer_scans_wrap_around_as_numpys() -> None:
    """int64 sums and products past 2**63, and a dtype= narrower than NumPy's default (int8 sums
    wrap at 128)."""
    a = RNG.integers(2**60, 2**62, (40, 5000))
    np.testing.assert_array_equal(_host(sl.cumsum(_dev(a), axis=1)), np.cumsum(a, axis=1))
    b = RNG.integers(-9, 9, (40, 5000))
    np.testing.assert_array_equal(_host(sl.cumprod(_dev(b), axis=0)), np.cumprod(b, axis=0))
    c = RNG.integers(-128, 127, (3, 70000)).astype(np.int8)
    for axis in (1, 0, None):
        got, want = _host(sl.cumsum(_dev(c), axis=axis, dtype=np.int8)), np.cumsum(c, axis=axis, dtype=np.int8)
        assert got.dtype == np.int8
        np.testing.assert_array_equal(got, want)
    d = np.array([True, False, False, True, False] * 1000)
    for fn in ("cumsum", "cumprod"):
        np.testing.assert_array_equal(_host(getattr(sl, fn)(_dev(d), dtype=bool)), getattr(np, fn)(d, dtype=bool))


@pytest.mark.parametrize("shape,axis", CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_float_scans_are_numpys_to_the_order_of_adds(shape: tuple[int, ...], axis: int, dtype: str) -> None:
    a = RNG.standard_normal(shape).astype(dtype)
    got = _host(sl.cumsum(_dev(a), axis=axis))
    ref = np.cumsum(a.astype(np.float64), axis=axis)
    scale = np.cumsum(np.abs(a.astype(np.float64)), axis=axis)
    tol = 2e-6 if dtype == "float32" else 1e-14  # (a few roundings of the running sum; a lost chunk is 1e-1)
    assert got.dtype == a.dtype
    assert float(np.max(np.abs(got - ref) / (scale + 1e-300))) < tol
    p = (1 + RNG.standard_normal(shape) * 1e-3).astype(dtype)  # (products that stay near 1)
    got = _host(sl.cumprod(_dev(p), axis=axis))
    ref = np.cumprod(p.astype(np.float64), axis=axis)
    n = shape[axis] if shape else 1
    assert float(np.max(np.abs(got / ref - 1))) < (4e-7 if dtype == "float32" else 1e-15) * max(8, np.sqrt(n) * 8)


@pytest.mark.parametrize("shape,axis", CASES)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_16_bit_scans_are_float32_scans_rounded_once(shape: tuple[int, ...], axis: int, dtype: str) -> None:
    """Accumulated in float32 and rounded once to the dtype (a kernel of their own: no cast
    passes, no fix-up while the sums stay inside float16's range)."""
    dt = as_dtype(dtype)
    a = RNG.standard_normal(shape).astype(dt)
    a64 = a.astype(np.float64)
    step = 2.0 ** (-8 if dtype == "bfloat16" else -11)  # (half a unit in the last place, relative)
    for fn, b, b64 in (("cumsum", a, a64), ("cumprod", (1 + a64 * 2**-10).astype(dt), None)):
        if fn == "cumprod" and shape[axis] > 2**20:  # (its rounded factors drift it below float16's range)
            continue
        b64 = b.astype(np.float64) if b64 is None else b64
        got = _host(getattr(sl, fn)(_dev(b), axis=axis))
        assert got.dtype == dt
        ref = getattr(np, fn)(b64, axis=axis)
        slack = np.cumsum(np.abs(b64), axis=axis) * 4e-6 if fn == "cumsum" else np.abs(ref) * 4e-6 * max(8, np.sqrt(b.shape[axis]) * 8)
        assert np.all(np.abs(got.astype(np.float64) - ref) <= np.abs(ref) * step + slack), fn


def test_a_scan_reads_through_a_widening_cast(monkeypatch: pytest.MonkeyPatch) -> None:
    """int32 summed into int64, bool into int64, float16 into float32 (``dtype=``): the scan
    reads the narrow values and converts them itself, a pass less."""
    from stitchlab.runtime import scan

    read: list[str] = []
    real = scan.scan

    def spy(xp: Any, op: str, x: Any, *args: Any) -> Any:
        read.append(str(x.dtype))
        return real(xp, op, x, *args)

    monkeypatch.setattr(scan, "scan", spy)
    a = RNG.integers(-2**31, 2**31 - 1, (300, 5000), dtype=np.int64).astype(np.int32)
    np.testing.assert_array_equal(_host(sl.cumsum(_dev(a), axis=1)), np.cumsum(a, axis=1))
    m = a > 0
    np.testing.assert_array_equal(_host(sl.cumsum(_dev(m), axis=0)), np.cumsum(m, axis=0))
    h = RNG.standard_normal((64, 3000)).astype(np.float16)
    got = _host(sl.cumsum(_dev(h), axis=1, dtype=np.float32))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, np.cumsum(h.astype(np.float64), axis=1), atol=2e-6 * np.abs(h.astype(np.float64)).sum(1).max())
    assert read == ["int32", "bool", "float16"]


#: rows whose float16 scans leave float16's range (tests/gpu/test_library_steps_gpu.py has them
#: one by one): NumPy's sequential float16 results equal float32's rounded once until then
PRODUCT_ROWS = np.array([[300, 300, 0, 5, 1, 1], [-300, 300, 0.0, 1, 1, 1], [60000, 2, 0.5, 3, 1, 1],
                         [300, -300, 300, 0.5, -1, np.inf], [1e-3, 1e-3, 1e-3, 1e4, 1e4, 7],
                         [-1e-3, 1e-3, 1e-3, 1e4, np.inf, 1], [np.inf, 0, 2, 3, 1, 1]], np.float16)
SUM_ROWS = np.array([[40000, 40000, -50000, 1, 2, 2], [-60000, -10000, 30000, 5, 2, 2], [60000, 10000, -np.inf, 1, 2, 2],
                     [60000, 10000, np.inf, -5, 2, 2], [65504, 16, -16, 0, 2, 2], [1, 2, 3, 4, 5, 6]], np.float16)


def test_float16_scans_of_many_rows_leave_the_range_as_numpys_on_the_device(monkeypatch: pytest.MonkeyPatch) -> None:
    """4,000 rows or columns and more: the fix-up runs on the device (no flag read back: reading
    it would fail the test), along the rows and down the columns, and under CUDA-graph capture."""
    import cupy as cp

    from stitchlab.runtime import interpreter

    monkeypatch.setattr(interpreter, "_half_scan", lambda *a: pytest.fail("the host's fix-up ran"))
    with np.errstate(all="ignore"):
        for fn, rows in (("cumprod", PRODUCT_ROWS), ("cumsum", SUM_ROWS)):
            many = np.tile(rows, (700, 1))
            for a, axis in ((many, 1), (np.ascontiguousarray(many.T), 0)):
                want = getattr(np, fn)(a, axis=axis)
                got = _host(getattr(sl, fn)(_dev(a), axis=axis))
                np.testing.assert_array_equal(got, want)
                np.testing.assert_array_equal(np.signbit(got[want == 0]), np.signbit(want[want == 0]))
        b = np.tile(SUM_ROWS[::-1], (700, 1))
        for got in _replays(sl.jit(lambda u: sl.cumsum(u, axis=1)), cp.asarray(np.tile(SUM_ROWS, (700, 1))), [b]):
            np.testing.assert_array_equal(got, np.cumsum(b, axis=1))


def test_nan_and_inf_run_on_as_numpys() -> None:
    a = RNG.standard_normal((64, 5000)).astype(np.float32)
    a[3, 100], a[5, 4000], a[7, 0], a[7, 1] = np.nan, np.inf, np.inf, -np.inf
    with np.errstate(invalid="ignore"):
        got, want = _host(sl.cumsum(_dev(a), axis=1)), np.cumsum(a.astype(np.float64), axis=1)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isinf(got) & (got > 0), np.isinf(want) & (want > 0))


def test_scans_in_a_program_and_of_views() -> None:
    """A scan between fused kernels (a softmax's probabilities cumulated, as top-p sampling does)
    and scans of transposed and sliced views."""
    a = RNG.standard_normal((512, 32000)).astype(np.float32)
    x = _dev(a)
    p = sl.exp(x - x.max(axis=1, keepdims=True))
    p = p / p.sum(axis=1, keepdims=True)
    keep = sl.cumsum(p, axis=1) < 0.9
    e = np.exp(a.astype(np.float64) - a.max(1, keepdims=True))
    c = np.cumsum(e / e.sum(1, keepdims=True), axis=1)
    got = _host(keep)
    near = np.abs(c - 0.9) < 1e-5  # (an order of adds apart)
    np.testing.assert_array_equal(got[~near], (c < 0.9)[~near])
    v = a.T[::3, 5:].astype(np.float64)
    np.testing.assert_allclose(_host(sl.cumsum(x.T[::3, 5:], axis=1)), np.cumsum(v, axis=1),
                               atol=2e-6 * np.abs(v).sum(1).max())


def _sms() -> int:
    import cupy as cp

    return int(cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)["multiProcessorCount"])


def _chained_shapes(itemsize: int) -> list[tuple[int, int]]:
    """(rows, n) of the chained kernel (one pass with look-back) on this GPU: lengths one short of
    a whole number of full chunks (a block's registers), at it and one over, many blocks (2049 of
    16K), several rows (the look-back stops at a row's start), and lengths whose chunks are cut
    smaller (a tile, two) to fill the GPU, at their edges too."""
    from stitchlab.runtime import scan

    full, tile, sms = scan.chunk_tiles(itemsize) * scan.TILE, scan.TILE, _sms()
    shapes = [(1, 700 * full + d) for d in (-1, 0, 1)] + [(1, 2**25 + 1), (3, 300 * full + 7), (5, full + 1)]
    shapes += [(1, 3 * tile + d) for d in (-1, 0, 1)] + [(1, 4 * sms * tile + 1), (2, 2 * sms * tile * 2 - 1)]
    for rows, n in shapes:
        assert scan.chunk_length(sms, rows, n, 1, itemsize) < n, (rows, n)
    return shapes


@pytest.fixture
def launches(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The scan kernels launched, by name (``rows``, ``chained``, ``axis``, ``columns``); every
    dtype takes the columns kernel where the shape does (``scan.columns_pay``, which picks it by
    speed, patched), so that its tests cover each."""
    from stitchlab.runtime import scan

    monkeypatch.setattr(scan, "columns_pay", lambda read, acc: True)
    names, real = [], scan._kernels

    def kernels(*args: Any) -> tuple[Any, ...]:
        def counted(name: str, k: Any) -> Any:
            def launch(*a: Any) -> None:
                names.append(name)
                k(*a)
            return launch
        return tuple(counted(name, k) for name, k in zip(("rows", "chained", "axis", "columns"), real(*args),
                                                       strict=True))

    monkeypatch.setattr(scan, "_kernels", kernels)
    return names


@pytest.mark.parametrize("dtype,into", [("int32", None), ("int32", "int32"), ("uint8", "uint8"), ("int64", None)])
def test_long_rows_are_one_pass_with_look_back_bit_for_bit(launches: list[str], dtype: str, into: str | None) -> None:
    """Integer sums at the chained kernel's chunk edges and over many blocks, with the look-back's
    values apart from its states (int64) and packed into them (int32, uint8: wrapping around as
    NumPy's), three times each (the look-back meets other blocks at other moments)."""
    size = np.dtype(into or np.int64).itemsize
    for rows, n in _chained_shapes(size):
        a = RNG.integers(-100, 100, (rows, n)).astype(dtype)
        want, x = np.cumsum(a, axis=1, dtype=into), _dev(a)
        for _ in range(3):
            del launches[:]
            got = _host(sl.cumsum(x, axis=1, dtype=into))
            assert launches == ["chained"], (rows, n, launches)
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want, err_msg=f"{(rows, n)}")
    b = RNG.choice(np.array([-1, 1, 1, 3]).astype(dtype), 2**22 + 3)  # (odd products: wrapping around, never zero)
    np.testing.assert_array_equal(_host(sl.cumprod(_dev(b), dtype=into)), np.cumprod(b, dtype=into))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_long_float_rows_with_look_back_are_numpys_to_the_order_of_adds(launches: list[str], dtype: str) -> None:
    """float32 (packed), float64 (apart) and float16 (read as such, summed in float32, the range
    flag) at the chunk edges, against float64."""
    for rows, n in _chained_shapes(4 if dtype == "float16" else np.dtype(dtype).itemsize):
        a = RNG.standard_normal((rows, n)).astype(dtype)
        a64 = a.astype(np.float64)
        del launches[:]
        got = _host(sl.cumsum(_dev(a), axis=1)).astype(np.float64)
        assert launches == ["chained"], (rows, n, launches)
        ref, scale = np.cumsum(a64, axis=1), np.cumsum(np.abs(a64), axis=1)
        if dtype == "float16":  # (rounded once: half a unit of float16 of the sum, and float32's adds)
            assert np.all(np.abs(got - ref) <= np.abs(ref) * 2.0**-11 + scale * 4e-6), (rows, n)
        else:
            tol = 2e-6 if dtype == "float32" else 1e-14
            assert float(np.max(np.abs(got - ref) / scale)) < tol, (rows, n)


def test_long_float_rows_give_the_same_bits_in_every_call(launches: list[str]) -> None:
    """The chained kernel adds the chunks' totals in a fixed order whatever the blocks' timing:
    ten calls over one row of 2**25 + 1 float32 values (2,049 chunks) of magnitudes 1e-3 to 1e3,
    and over 3 rows of float64 (300 chunks each), give one set of bits each (a look-back that
    added the totals in a tree grouped them by the blocks' timing: the rows fuzz family's first GPU
    run found cumsums of a single row of 50,257 whose bits differed from call to call)."""
    for shape, dtype in [((1, 2**25 + 1), "float32"), ((3, 300 * 4 * 2048 + 7), "float64")]:
        a = (RNG.standard_normal(shape) * 10.0 ** RNG.integers(-3, 4, shape)).astype(dtype)
        x = _dev(a)
        del launches[:]
        first = _host(sl.cumsum(x, axis=1))
        assert launches == ["chained"], launches
        for _ in range(9):
            assert _host(sl.cumsum(x, axis=1)).tobytes() == first.tobytes(), shape


def _column_shapes(itemsize: int) -> list[tuple[int, int, int]]:
    """(outer, n, inner) of the columns kernel (one pass with look-back) on this GPU: lengths one
    short of a whole number of full chunks (8 segments of a thread's registers), at it and one
    over, a tall one (a long chain of chunks), a warp's positions and one more, a block's and one
    more, 4096 columns, several outer slices (the look-back stops at a slice's start), and lengths
    cut into chunks shorter than full, down to a row a segment."""
    from stitchlab.runtime import scan

    full, sms = scan.GROUPS * scan.column_chunk(itemsize), _sms()
    shapes = [(1, 16 * full + d, 4096) for d in (-1, 0, 1)] + [(1, 2**18 + 3, 96), (1, 10007, 32), (1, 3001, 33)]
    shapes += [(1, 2049, 256), (3, 999, 257), (5, 40 * full + 3, 100), (1, 40, 4096), (2, 17, 700)]
    for outer, n, inner in shapes:
        assert inner >= scan.COLUMNS and scan.chunk_length(sms, outer, n, inner, itemsize) < n, (outer, n, inner)
    return shapes


@pytest.mark.parametrize("dtype,into", [("int32", None), ("int32", "int32"), ("uint8", "uint8"), ("int64", None)])
def test_columns_are_one_pass_with_look_back_bit_for_bit(launches: list[str], dtype: str, into: str | None) -> None:
    """Integer sums down the columns (and a middle axis) at the columns kernel's chunk edges, with
    the look-back's values apart from its states (int64) and packed into them (int32, uint8:
    wrapping around as NumPy's), three times each."""
    for outer, n, inner in _column_shapes(np.dtype(into or np.int64).itemsize):
        a = RNG.integers(-100, 100, (outer, n, inner)).astype(dtype)
        want, x = np.cumsum(a, axis=1, dtype=into), _dev(a)
        for _ in range(3):
            del launches[:]
            got = _host(sl.cumsum(x, axis=1, dtype=into))
            assert launches == ["columns"], ((outer, n, inner), launches)
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want, err_msg=f"{(outer, n, inner)}")


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_float_columns_with_look_back_are_numpys_to_the_order_of_adds(launches: list[str], dtype: str) -> None:
    """float32 (packed), float64 (apart) and float16 (summed in float32, the range flag) down the
    columns at the chunk edges, against float64; then ten calls over 8192 x 4096 float32 and
    3 x 20000 x 100 float64 of magnitudes 1e-3 to 1e3 give one set of bits each."""
    for outer, n, inner in _column_shapes(4 if dtype == "float16" else np.dtype(dtype).itemsize):
        a = RNG.standard_normal((outer, n, inner)).astype(dtype)
        a64 = a.astype(np.float64)
        del launches[:]
        got = _host(sl.cumsum(_dev(a), axis=1)).astype(np.float64)
        assert launches == ["columns"], ((outer, n, inner), launches)
        ref, scale = np.cumsum(a64, axis=1), np.cumsum(np.abs(a64), axis=1)
        if dtype == "float16":
            assert np.all(np.abs(got - ref) <= np.abs(ref) * 2.0**-11 + scale * 4e-6), (outer, n, inner)
        else:
            assert float(np.max(np.abs(got - ref) / scale)) < (2e-6 if dtype == "float32" else 1e-14), (outer, n, inner)
    shape = (8192, 4096) if dtype == "float32" else (3, 20000, 100)
    if dtype != "float16":
        a = (RNG.standard_normal(shape) * 10.0 ** RNG.integers(-3, 4, shape)).astype(dtype)
        x = _dev(a)
        first = _host(sl.cumsum(x, axis=-2))
        for _ in range(9):
            assert _host(sl.cumsum(x, axis=-2)).tobytes() == first.tobytes(), shape


def test_float_sums_of_negative_zeros_are_negative_zeros() -> None:
    """A float ``cumsum`` starts from -0.0 (-0.0 + x is x for every x): sums of -0.0 stay -0.0,
    as NumPy's, in each kernel (a block a row, chained chunks, columns, a thread a position, three
    passes) and in a scan stitched into a row kernel."""
    for shape, axis in (((8, 300), 1), ((1, 2**20 + 3), 1), ((8192, 64), 0), ((10, 300000), 0), ((3000, 3), 0)):
        for dtype in ("float32", "float64", "float16"):
            a = np.full(shape, -0.0, dtype)
            a.flat[5] = 0.0  # (a +0.0 makes the rest of its row or column +0.0)
            got, want = _host(sl.cumsum(_dev(a), axis=axis)), np.cumsum(a, axis=axis)
            assert np.array_equal(np.signbit(got), np.signbit(want)), (shape, axis, dtype)
    x = RNG.standard_normal((64, 1000)).astype(np.float32)
    z = np.full((64, 1000), -0.0, np.float32)
    got = _host(sl.jit(lambda u, v: sl.cumsum(v * sl.softmax(u, axis=1), axis=1))(_dev(x), _dev(z)))
    assert np.signbit(got).all()


def test_a_graph_of_a_long_scan_zeroes_its_look_back_each_replay() -> None:
    """The tile states and the ticket are zeroed inside the graph (a memset of CuPy's pool): a
    second and third replay give the new input's sums, not the first's; along a long row and down
    columns."""
    import cupy as cp

    fn = sl.jit(lambda u: sl.cumsum(u, axis=0, dtype=np.int32))
    for shape in ((2**24 + 5,), (8192, 1000)):
        x = cp.asarray(RNG.integers(-9, 9, shape).astype(np.int32))
        bs = [RNG.integers(-9, 9, shape).astype(np.int32) for _ in range(3)]
        for b, got in zip(bs, _replays(fn, x, bs), strict=True):
            np.testing.assert_array_equal(got, np.cumsum(b, axis=0, dtype=np.int32))


@sl.jit
def _scans(x: Any) -> Any:
    return sl.cumsum(x, axis=1) * 2, sl.cumprod(x[:, :7], axis=0), sl.cumsum(x)


def test_scans_are_captured_and_replayed() -> None:
    import cupy as cp

    x = cp.asarray(RNG.integers(-5, 5, (300, 5000)).astype(np.int64))
    b = RNG.integers(-5, 5, (300, 5000)).astype(np.int64)
    (got,) = _replays(_scans, x, [b])
    np.testing.assert_array_equal(got[0], np.cumsum(b, axis=1) * 2)
    np.testing.assert_array_equal(got[1], np.cumprod(b[:, :7], axis=0))
    np.testing.assert_array_equal(got[2], np.cumsum(b))
