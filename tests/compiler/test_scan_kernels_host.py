"""The GPU scans' own CUDA source (``stitchlab/runtime/scan.py``) built as host C++ (threads as
fibers, ``tests/compiler/hostkernels.py``) and driven by :func:`scan.scan` over NumPy buffers, as
on the device: a block a row, chunks of long rows with look-back (``sl_scan_chained``), a thread a
position down another axis in one pass, chunks of 32 positions or more with look-back
(``sl_scan_columns``) and of fewer in three passes, against NumPy, with each block's warps in
either order. The blocks run one after another in launch order, so a look-back always finds its
predecessor's running value: waits and interleavings are the CPU models' part
(``tests/test_scan_passes.py``), the device's timing the GPU tests'
(``tests/gpu/test_scans_gpu.py``)."""

from __future__ import annotations

import ctypes
import re
from typing import Any

import numpy as np
import pytest
import scanfake
from rowscans import assert_same_bits, extremes_data

from stitchlab.ir.dtypes import as_dtype
from stitchlab.ir.ops import OPS
from stitchlab.runtime import scan

from .hostkernels import _FAILURES, build_kernel, unsupported

pytestmark = pytest.mark.skipif(unsupported() is not None, reason=str(unsupported()))

RNG = np.random.default_rng(64)
_KERNEL = re.compile(r'extern "C" __global__ void (?:__launch_bounds__\([^)]*\) )?(sl_scan_\w+)\(([^)]*)\)')


def _cell(arg: Any) -> Any:
    """A ctypes cell holding a kernel argument as the driver passes it."""
    if isinstance(arg, np.ndarray):
        return ctypes.c_void_p(arg.ctypes.data)
    if isinstance(arg, np.uint64):  # (scan._NULL: a null pointer)
        assert int(arg) == 0
        return ctypes.c_void_p(None)
    return {np.dtype(np.int64): ctypes.c_int64, np.dtype(np.int32): ctypes.c_int32}[np.asarray(arg).dtype](int(arg))


@pytest.fixture
def host(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A fake CuPy whose scan kernels are scan.py's source built for the host; ``host.order`` picks
    the order of each block's warps and ``host.launched`` lists the kernels run."""
    directory = tmp_path_factory.mktemp("scan_kernels")
    launched: list[str] = []

    def kernels(_: Any, op: str, dtype: np.dtype, out: np.dtype) -> tuple[Any, ...]:
        source = scan.source(op, dtype, out)
        params = {name: [p.strip().rsplit(" ", 1)[0] for p in ps.split(",")] for name, ps in _KERNEL.findall(source)}

        def launcher(name: str) -> Any:
            lib = build_kernel(source, name, params[name], directory)

            def launch(grid: tuple[int], block: tuple[int], args: tuple[Any, ...]) -> None:
                cells = [_cell(a) for a in args]
                argv = (ctypes.c_void_p * len(cells))(*[ctypes.cast(ctypes.pointer(c), ctypes.c_void_p) for c in cells])
                launched.append(name[8:])
                rc = lib.sl_host_launch(argv, grid[0], 1, 1, block[0], 1, 1, cp.order)
                assert rc == 0, f"{name}: {_FAILURES.get(rc, rc)}"
            return launch
        return tuple(launcher(f"sl_scan_{k}") for k in ("rows", "chained", "axis", "columns"))

    cp = scanfake.install(monkeypatch, kernels)
    cp.order, cp.launched = 0, launched
    return cp


def _both_orders(host: Any, op: str, a: np.ndarray, axis: int, dtype: str | None = None) -> np.ndarray:
    """The scan with each block's warps in increasing and in decreasing order: the same bits."""
    got = []
    for order in (0, 1):
        host.order = order
        got.append(scan.scan(host, op, a, axis, dtype))
    np.testing.assert_array_equal(got[0].view(np.uint8), got[1].view(np.uint8), err_msg="warps in another order")
    return got[0]


#: (shape, axis, the kernels launched on a GPU of 2 SMs): rows a block each (odd lengths, a
#: partial tile), a row cut into chunks with look-back, a thread a position (one pass), chunks of
#: 32 positions or more with look-back (several outer slices, a partial block of positions, the
#: last chunk partial), chunks of fewer positions in three passes (the running totals by a scan of
#: their own)
CASES = [((9, 3001), 1, ["rows"]), ((300, 7), 1, ["rows"]), ((1, 9 * scan.TILE + 5), 1, ["chained"]),
         ((5, 3001), -1, ["chained"]), ((2, 3 * scan.TILE + 1), -1, ["chained"]), ((3, 5, 1500), 1, ["axis"]),
         ((40, 70), 0, ["columns"]), ((3001, 33), 0, ["columns"]), ((3, 1000, 40), 1, ["columns"]),
         ((2, 37, 100), 1, ["columns"]), ((5000, 32), 0, ["columns"]), ((2000, 3), 0, ["axis", "axis", "axis"]),
         ((700, 2, 5), 0, ["axis", "axis", "axis"])]


@pytest.mark.parametrize(("shape", "axis", "kernels"), CASES)
@pytest.mark.parametrize(("op", "dtype", "into"), [("cumsum", "int64", None), ("cumsum", "int32", "int32"),
                                                   ("cumsum", "int8", None), ("cumprod", "int64", None)])
def test_integer_scans_are_numpys_bit_for_bit(host: Any, shape: tuple[int, ...], axis: int, kernels: list[str],
                                              op: str, dtype: str, into: str | None) -> None:
    """Integers (int64: the look-back's values apart from its states; int32: packed into them),
    wrapping around as NumPy's."""
    a = RNG.integers(-100, 100, shape).astype(dtype)
    got = _both_orders(host, op, a, axis, into)
    assert host.launched[:len(kernels)] == kernels, host.launched
    want = getattr(np, op)(a, axis=axis, dtype=into)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(("shape", "axis", "kernels"), CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_float_sums_are_numpys_to_the_order_of_adds(host: Any, shape: tuple[int, ...], axis: int, kernels: list[str],
                                                    dtype: str) -> None:
    """float32 and float64 within the rounding of a sum in another order; float16 summed in
    float32 and rounded once."""
    a = RNG.standard_normal(shape).astype(dtype)
    got = _both_orders(host, "cumsum", a, axis).astype(np.float64)
    assert host.launched[:len(kernels)] == kernels, host.launched
    a64 = a.astype(np.float64)
    want, scale = np.cumsum(a64, axis=axis), np.cumsum(np.abs(a64), axis=axis)
    if dtype == "float16":
        assert np.all(np.abs(got - want) <= np.abs(want) * 2.0**-11 + scale * 4e-6)
    else:
        assert float(np.max(np.abs(got - want) / scale)) < (2e-6 if dtype == "float32" else 1e-14)


@pytest.mark.parametrize(("shape", "axis", "kernels"), CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_float_sums_of_negative_zeros_are_negative_zeros(host: Any, shape: tuple[int, ...], axis: int,
                                                         kernels: list[str], dtype: str) -> None:
    """Every kernel starts a float sum from -0.0: sums of -0.0 stay -0.0, as NumPy's, and a +0.0
    makes the rest of its row or column +0.0."""
    a = np.full(shape, -0.0, dtype)
    a.flat[3] = 0.0
    got, want = _both_orders(host, "cumsum", a, axis), np.cumsum(a, axis=axis)
    assert host.launched[:len(kernels)] == kernels, host.launched
    assert np.signbit(want).any() and not np.signbit(want).all()
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    assert not got.any()


@pytest.mark.parametrize(("shape", "axis", "kernels"), CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int16", "uint8", "bool"])
def test_running_maxima_and_minima_are_numpys_bit_for_bit(host: Any, shape: tuple[int, ...], axis: int,
                                                          kernels: list[str], dtype: str) -> None:
    """``cummax``/``cummin`` (NumPy's ``maximum``/``minimum.accumulate``) in every kernel: of equal
    values NumPy's choice (the later one; float16's loop: the earlier one), the first NaN kept,
    in the input's dtype. The maxima run over values of at most 0 (the minima at least 0), so
    -0.0 against +0.0 decides many of them."""
    for op in ("cummax", "cummin"):
        a = extremes_data(shape, as_dtype(dtype), op, RNG)
        host.launched.clear()
        got = _both_orders(host, op, a, axis)
        assert host.launched[:len(kernels)] == kernels, host.launched
        assert_same_bits(got, OPS[op].numpy(a, axis=axis))
