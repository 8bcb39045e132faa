"""The GPU scans' passes (``stitchlab/runtime/scan.py``) on the CPU: their CUDA sources compile for
every dtype (NVRTC), and the one-or-three-pass driver, its chunk lengths and the running totals
it hands each chunk are NumPy's scan when its two kernels are replaced by NumPy models of what
each block (row kernel) or thread (axis kernel) computes. The kernels themselves run against
NumPy in tests/gpu/test_scans_gpu.py."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from stitchlab.runtime import scan

RNG = np.random.default_rng(5)


def _model(op: str, fn: str) -> Any:
    """What the kernel ``fn`` computes, block by block (rows) or thread by thread (axis)."""
    step = np.cumsum if op == "cumsum" else np.cumprod
    ident = 0 if op == "cumsum" else 1

    def kernel(grid: tuple[int], block: tuple[int], args: tuple[Any, ...]) -> None:
        if fn == "sl_scan_rows":
            x, out, sums, offsets, flag, rows, n, chunk, totals = args
            inner = 1
        else:
            x, out, sums, offsets, flag, rows, n, inner, chunk, totals = args
        rows, n, inner, chunk = int(rows), int(n), int(inner), int(chunk)
        chunks = -(-n // chunk)
        xs, outs = x.reshape(rows, n, inner), sums.reshape(rows, chunks, inner) if totals else out.reshape(rows, n, inner)
        have = isinstance(offsets, np.ndarray)
        for r in range(rows):
            for c in range(chunks):
                part = xs[r, c * chunk:min(n, (c + 1) * chunk)].astype(outs.dtype)
                carry = offsets.reshape(rows, chunks, inner)[r, c - 1] if have and c > 0 else np.full(inner, ident, outs.dtype)
                run = step(np.concatenate([carry[None], part]), axis=0)[1:]
                if totals:
                    outs[r, c] = run[-1]
                else:
                    outs[r, c * chunk:c * chunk + len(part)] = run
    return kernel


class _FakeCupy:
    """The parts of CuPy :func:`scan.scan` uses, over NumPy, with the kernels modelled."""
    ascontiguousarray = staticmethod(np.ascontiguousarray)
    empty = staticmethod(np.empty)
    empty_like = staticmethod(np.empty_like)

    def __init__(self, sms: int) -> None:
        self.sms = sms


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Any:
    def kernels(cp: Any, op: str, dtype: np.dtype, acc: np.dtype) -> tuple[Any, Any]:
        return _model(op, "sl_scan_rows"), _model(op, "sl_scan_axis")

    monkeypatch.setattr(scan, "_kernels", kernels)
    monkeypatch.setattr(scan, "_sm_count", lambda cp, device: cp.sms)
    monkeypatch.setattr(scan, "_device_id", lambda cp: 0)
    return _FakeCupy(sms=2)


@pytest.mark.parametrize("shape,axis", [((3, 20000), 1), ((50000,), 0), ((9, 5), 1), ((4000, 3), 0), ((2, 700, 3), 1),
                                        ((5, 3, 1), 1), ((1, 1), 0), ((300, 2), 0), ((3, 0), 1)])
@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
def test_the_passes_are_numpys_scan(fake: Any, shape: tuple[int, ...], axis: int, op: str) -> None:
    a = RNG.integers(-3, 4, shape).astype(np.int64)
    got = scan.scan(fake, op, a, axis)
    np.testing.assert_array_equal(got, getattr(np, op)(a, axis=axis))
    assert got.dtype == np.int64


def test_long_scans_take_three_passes_and_chunks_cover_them(fake: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Too few rows or positions for the GPU: chunks of whole tiles (rows) or loops (positions),
    about as many as fill it; enough: one pass."""
    assert scan.chunk_length(132, 8192, 4096, 1) == 4096  # (8192 rows: a block each)
    for outer, n, inner in [(1, 2**24, 1), (3, 100003, 1), (1, 8192, 4096), (2, 999, 7)]:
        chunk = scan.chunk_length(132, outer, n, inner)
        unit = scan.TILE if inner == 1 else 8
        assert chunk % unit == 0 and chunk < n
        work = outer * math.ceil(n / chunk) * (1 if inner == 1 else inner)
        assert work >= (132 * 4 if inner == 1 else 132 * 2048) // 2 or chunk == unit
    a = RNG.integers(0, 9, 3 * 2 * scan.TILE + 17)
    calls: list[int] = []
    rows = scan._kernels
    model = _model("cumsum", "sl_scan_rows")

    def counted(cp: Any, op: str, dtype: np.dtype, acc: np.dtype) -> tuple[Any, Any]:
        def k(*args: Any) -> None:
            calls.append(int(args[2][-1]))  # (totals)
            model(*args)
        return k, rows(cp, op, dtype, acc)[1]

    monkeypatch.setattr(scan, "_kernels", counted)
    np.testing.assert_array_equal(scan.scan(fake, "cumsum", a, 0), np.cumsum(a))
    assert calls == [1, 0, 0]  # totals, their running totals (one pass), the chunks


def test_the_kernels_compile_for_every_dtype() -> None:
    """Each dtype into NumPy's result and into itself (a ``dtype=``), and the widening casts a
    scan reads through (``interpreter.scan_source``)."""
    pytest.importorskip("cuda.bindings.nvrtc", reason="NVRTC (pip cuda-bindings) is not installed")
    from stitchlab.ir.dtypes import SUPPORTED
    from stitchlab.runtime.nvrtc import compile_cubin

    pairs = set()
    for op in ("cumsum", "cumprod"):
        for dt in SUPPORTED.values():
            assert scan.scanned(dt), dt
            pairs |= {(op, dt, scan.result_dtype(op, dt)), (op, dt, dt)}
    pairs |= {("cumsum", np.dtype(np.float16), np.dtype(np.float64)), ("cumsum", np.dtype(np.uint32), np.dtype(np.float64))}
    for op, dt, out in sorted(pairs, key=str):
        compile_cubin(scan.source(op, dt, out), f"scan_{op}_{dt}_{out}", "sm_90")


def _walk(product: bool, x: np.ndarray, h: np.ndarray) -> np.ndarray:
    """``scan._FIXUP``'s walk along one row, in Python (what the CUDA kernel does per position)."""
    out = h.copy()
    seen = overflowed = negative = parity = spoiled = inf_x = zero_x = False
    for i, (xv, hv) in enumerate(zip(x.astype(np.float32), h.astype(np.float32), strict=True)):
        inf_x |= bool(np.isinf(xv))
        zero_x |= bool(xv == 0)
        parity ^= bool(np.signbit(xv))
        over = bool(np.isinf(hv)) and not inf_x
        first = not seen and (over or (product and hv == 0 and not zero_x))
        if not seen and not first:
            continue
        if first:
            seen, overflowed, negative = True, over, bool(np.signbit(hv))
        else:
            spoiler = (xv == 0 if overflowed else np.isinf(xv)) if product else (np.isinf(xv) and bool(np.signbit(xv)) != negative)
            spoiled |= bool(np.isnan(xv) or spoiler)
        held = np.float32(0) if product and not overflowed else np.float32(np.inf)
        out[i] = np.float16(np.nan) if spoiled else np.float16(-held if (parity if product else negative) else held)
    return out


@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
def test_the_float16_fixup_walk_is_the_interpreters_fixup(op: str) -> None:
    """The device fix-up of float16 scans that leave float16's range (one walk per row, from the
    input and the rounded scan alone) gives what ``interpreter._half_scan`` gives from the float32
    running values: 3,000 random rows of overflows, underflows, infs, NaNs and zeros."""
    from stitchlab.runtime.interpreter import _half_scan

    rng = np.random.default_rng(11)
    pool = np.array([300, -300, 60000, -60000, 2, -2, 0.5, 1e-3, -1e-3, 1e4, 0, -0.0, np.inf, -np.inf, np.nan, 1, -1, 7])
    x = rng.choice(pool, (3000, 9), p=np.r_[[0.09] * 8, [0.03] * 7, [0.05] * 3] / np.r_[[0.09] * 8, [0.03] * 7, [0.05] * 3].sum())
    x = x.astype(np.float16)
    with np.errstate(all="ignore"):
        y = getattr(np, op)(x.astype(np.float32), axis=1)
        want = _half_scan(op, x, y, 1, np)
        h = y.astype(np.float16)
        got = np.stack([_walk(op == "cumprod", xr, hr) for xr, hr in zip(x, h, strict=True)])
    assert int((want != h).sum() - np.isnan(want).sum()) > 100  # (the fix-up acts on many rows)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
