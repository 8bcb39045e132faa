"""The GPU scans' passes (``stitchlab/runtime/scan.py``) on the CPU: their CUDA sources compile for
every dtype (NVRTC), and the driver, its chunk lengths, the look-back's tile states (zeroed,
packed or apart) and the running totals it hands each chunk are NumPy's scan when its three
kernels are replaced by NumPy models of what each row (row kernel), block (chained kernel: its
look-back in a random interleaving of the blocks) or thread (axis kernel) computes. The kernels
themselves run against NumPy in tests/gpu/test_scans_gpu.py."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import scanfake

from stitchlab.runtime import scan

_COLUMNS_PAY = scan.columns_pay  # (the real choice; the fake GPU's fixture patches it)

RNG = np.random.default_rng(5)


def _combine(op: str, dtype: np.dtype, *values: Any) -> Any:
    """``op`` over ``values`` in ``dtype``, left to right (integers wrapping around)."""
    return (np.cumsum if op == "cumsum" else np.cumprod)(np.array(values, dtype), dtype=dtype)[-1]


def _states(status: np.ndarray, values: Any, tiles: int, acc: np.dtype) -> tuple[Any, Any]:
    """``sl_publish`` and ``sl_peek`` over the chunks' states (the value packed into the word
    where it fits 4 bytes, else in ``values``: totals, then running values)."""
    packed = acc.itemsize <= 4
    assert status.dtype == np.uint64 and status.shape == (1 + tiles,) and not status.any()  # (zeroed each call)
    if packed:
        assert not isinstance(values, np.ndarray)
    else:
        assert values.dtype == acc and values.shape == (2 * tiles,)

    def publish(t: int, st: int, v: Any) -> None:
        if packed:
            status[1 + t] = st << 32 | int.from_bytes(np.asarray(v, acc).tobytes(), "little")
        else:
            values[(tiles if st == 2 else 0) + t] = v
            status[1 + t] = st

    def peek(t: int) -> tuple[int, Any]:
        w = int(status[1 + t])
        if packed:
            return w >> 32, np.frombuffer((w & 0xFFFFFFFF).to_bytes(4, "little")[:acc.itemsize], acc)[0]
        return w, values[(tiles if w == 2 else 0) + t] if w else None
    return publish, peek


def _interleave(block: Any, blocks: int, seed: int) -> None:
    """Run ``blocks`` generators of ``block()`` (each a block of a look-back kernel, yielding where
    another may run) in a random interleaving picked by ``seed``, blocks starting in order."""
    rng, running, started = np.random.default_rng(seed), [], 0
    while started < blocks or running:
        if started < blocks and (not running or rng.random() < 0.3):
            running.append(block())
            started += 1
        else:
            b = running[int(rng.integers(len(running)))]
            try:
                next(b)
            except StopIteration:
                running.remove(b)


def _look_back(peek: Any, slots: Any, op: str, acc: Any, seen: dict[str, int] | None) -> Any:
    """A look-back, as a step of a modelled block (a generator: it yields where the block waits):
    reads the states at ``slots`` (the chunks before, the nearest first; spinning on one not yet
    published) until one holds its running value, and returns that value with the totals after it
    folded in, the oldest first (the kernels' fixed order). Counts in ``seen`` the spins ("0") and
    whether the nearest held its running value ("2") or an older one, or none ("1")."""
    while True:
        window = []
        for q in slots:
            while (got := peek(q))[0] == 0:
                if seen is not None:
                    seen["0"] = seen.get("0", 0) + 1
                yield  # (spinning)
            window.append(got)
        nearest = next((j for j, (st, _) in enumerate(window) if st == 2), None)
        if seen is not None:
            met = "1" if nearest is None or nearest > 0 else "2"
            seen[met] = seen.get(met, 0) + 1
        if nearest is not None:
            before = window[nearest][1]
            for _, v in reversed(window[:nearest]):
                before = _combine(op, acc, before, v)
            return before
        yield  # (none holds its running value yet: read the window again)


def _model(op: str, fn: str, seen: dict[str, int] | None = None, order: int = 0) -> Any:
    """What the kernel ``fn`` computes, row by row (rows), block by block (chained and columns: in
    a random interleaving of the blocks, ``order`` picks it, through the chunk states the driver
    hands it) or thread by thread (axis). ``seen``: counts of the look-back's waits by the state
    met."""
    step = np.cumsum if op == "cumsum" else np.cumprod
    ident = -0.0 if op == "cumsum" else 1  # (the kernels' IDENT: float sums start from -0.0, integers from 0)

    def rows_kernel(grid: tuple[int], block: tuple[int], args: tuple[Any, ...]) -> None:
        x, out, flag, rows, n = args
        rows, n = int(rows), int(n)
        acc = scan.accumulator(out.dtype)
        out.reshape(rows, n)[:] = step(x.reshape(rows, n).astype(acc), axis=1, dtype=acc)

    def chained_kernel(grid: tuple[int], block: tuple[int], args: tuple[Any, ...]) -> None:
        x, out, status, values, flag, rows, n, chunk = args
        rows, n, chunk = int(rows), int(n), int(chunk)
        acc = scan.accumulator(out.dtype)
        chunks = -(-n // chunk)
        tiles = rows * chunks
        assert chunk % scan.TILE == 0 and chunk <= scan.chunk_tiles(acc.itemsize) * scan.TILE, chunk
        assert grid == (tiles,) and block == (scan._WARPS * 32,)
        publish, peek = _states(status, values, tiles, acc)
        xs, outs = x.reshape(rows, n), out.reshape(rows, n)

        def block_() -> Any:
            t = int(status[0])
            status[0] += 1
            r, c = divmod(t, chunks)
            part = slice(c * chunk, min(n, (c + 1) * chunk))
            run = step(xs[r, part].astype(acc), dtype=acc)
            yield
            total, before = run[-1], acc.type(ident)
            publish(t, 2 if c == 0 else 1, total)
            if c > 0:  # (the 32 chunks before this one, until one holds its running value)
                before = yield from _look_back(peek, range(t - 1, max(t - c, t - 32) - 1, -1), op, acc, seen)
                publish(t, 2, _combine(op, acc, before, total))
            yield
            outs[r, part] = run if c == 0 else (np.add if op == "cumsum" else np.multiply)(before, run, dtype=acc)

        _interleave(block_, tiles, int(n) + order)
        assert int(status[0]) == tiles and all(peek(t)[0] == 2 for t in range(tiles))

    def columns_kernel(grid: tuple[int], block: tuple[int], args: tuple[Any, ...]) -> None:
        x, out, status, values, flag, outer, n, inner, chunk = args
        outer, n, inner, chunk = int(outer), int(n), int(inner), int(chunk)
        acc = scan.accumulator(out.dtype)
        unit = acc.type(ident)
        chunks, pblocks, groups = -(-n // chunk), -(-inner // 32), scan.GROUPS
        words, per = outer * chunks * inner, chunk // groups
        assert inner >= scan.COLUMNS and chunk % groups == 0 and per <= scan.column_chunk(acc.itemsize), (inner, chunk)
        assert block == (32 * groups,) and grid == (outer * chunks * pblocks,)
        publish, peek = _states(status, values, words, acc)
        xs, outs = x.reshape(outer, n, inner), out.reshape(outer, n, inner)
        combine = np.add if op == "cumsum" else np.multiply

        def block_() -> Any:
            t = int(status[0])
            status[0] += 1
            oc, pb = divmod(t, pblocks)
            o, c = divmod(oc, chunks)
            ps = slice(pb * 32, min(inner, (pb + 1) * 32))
            width = ps.stop - ps.start
            segs = []  # (each warp's segment of the chunk: its rows, their running values, its total)
            for g in range(groups):
                rows = slice(min(n, c * chunk + g * per), min(n, c * chunk + (g + 1) * per))
                run = step(xs[o, rows, ps].astype(acc), axis=0, dtype=acc)
                segs.append((rows, run, run[-1] if len(run) else np.full(width, unit, acc)))
            total = segs[0][2]
            for _, _, tot in segs[1:]:
                total = combine(total, tot, dtype=acc)
            yield
            first, befores = oc * inner + ps.start, np.full(width, unit, acc)
            for k in range(width):  # (warp 0's threads: each its position's look-back in turn)
                me = first + k
                publish(me, 2 if c == 0 else 1, total[k])
                if c > 0:  # (the LOOK chunks before this one, until one holds its running value)
                    slots = [me - (c - q) * inner for q in range(c - 1, max(c - 1 - scan.LOOK, -1), -1)]
                    befores[k] = yield from _look_back(peek, slots, op, acc, seen)
                    publish(me, 2, _combine(op, acc, befores[k], total[k]))
            yield
            lead = befores
            for rows, run, tot in segs:  # (each warp: the running value before its segment)
                if len(run):
                    outs[o, rows, ps] = combine(lead, run, dtype=acc)
                lead = combine(lead, tot, dtype=acc)

        _interleave(block_, outer * chunks * pblocks, n + inner + order)
        assert int(status[0]) == outer * chunks * pblocks and all(peek(t)[0] == 2 for t in range(words))

    def axis_kernel(grid: tuple[int], block: tuple[int], args: tuple[Any, ...]) -> None:
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
    return {"sl_scan_rows": rows_kernel, "sl_scan_chained": chained_kernel, "sl_scan_axis": axis_kernel,
            "sl_scan_columns": columns_kernel}[fn]


_NAMES = ("sl_scan_rows", "sl_scan_chained", "sl_scan_axis", "sl_scan_columns")


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Any:
    def kernels(cp: Any, op: str, dtype: np.dtype, acc: np.dtype) -> tuple[Any, ...]:
        return tuple(_model(op, name) for name in _NAMES)

    return scanfake.install(monkeypatch, kernels)  # (the kernels modelled)


@pytest.mark.parametrize("shape,axis", [((3, 20000), 1), ((50000,), 0), ((9, 5), 1), ((4000, 3), 0), ((2, 700, 3), 1),
                                        ((5, 3, 1), 1), ((1, 1), 0), ((300, 2), 0), ((3, 0), 1), ((2, 2**17 + 1), 1),
                                        ((300, 40), 0), ((3, 50, 70), 1), ((500, 300), 0)])
@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", [None, "int32", "int8"])
def test_the_passes_are_numpys_scan(fake: Any, shape: tuple[int, ...], axis: int, op: str, dtype: str | None) -> None:
    """int64 (the look-back's values apart from its states), and int32 and int8 results (packed
    into them), wrapping around as NumPy's."""
    a = RNG.integers(-3, 4, shape).astype(np.int64)
    got = scan.scan(fake, op, a, axis, dtype)
    np.testing.assert_array_equal(got, getattr(np, op)(a, axis=axis, dtype=dtype))
    assert got.dtype == (dtype or np.int64)


def _counted(monkeypatch: pytest.MonkeyPatch, seen: dict[str, int] | None = None) -> list[str]:
    """The kernels launched (the axis kernel's with its ``totals``), in order."""
    calls: list[str] = []

    def kernels(cp: Any, op: str, dtype: np.dtype, acc: np.dtype) -> tuple[Any, ...]:
        def counted(name: str) -> Any:
            model = _model(op, name, seen)

            def k(grid: tuple[int], block: tuple[int], args: tuple[Any, ...]) -> None:
                calls.append(name[8:] + (str(int(args[-1])) if name == "sl_scan_axis" else ""))
                model(grid, block, args)
            return k
        return tuple(counted(name) for name in _NAMES)

    monkeypatch.setattr(scan, "_kernels", kernels)
    return calls


def test_long_rows_take_one_pass_with_look_back(fake: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Too few rows for the GPU: chunks of whole tiles, about as many as fill it and at most a
    block's registers (16K elements of 4 bytes, 8K of 8), scanned in one launch whose blocks
    look back over their predecessors (in the model's interleaving, through totals and spins);
    enough rows: a block each."""
    assert scan.chunk_length(132, 8192, 4096, 1, 4) == 4096  # (8192 rows: a block each)
    assert scan.chunk_length(132, 1, 2**25, 1, 4) == 8 * scan.TILE == 16384
    assert scan.chunk_length(132, 1, 2**25, 1, 8) == 4 * scan.TILE
    for outer, n, itemsize in [(1, 2**24, 4), (3, 100003, 8), (1, 2**20, 4), (100, 30000, 1)]:
        chunk = scan.chunk_length(132, outer, n, 1, itemsize)
        assert chunk % scan.TILE == 0 and chunk < n and chunk <= scan.chunk_tiles(itemsize) * scan.TILE
        assert outer * math.ceil(n / chunk) >= 132 * 4 // 2 or chunk == scan.TILE
    seen: dict[str, int] = {}
    calls = _counted(monkeypatch, seen)
    for dtype, tiles in ((np.int64, 40), (np.int32, 400)):  # (400 tiles: 50 chunks, more than a window)
        a = RNG.integers(-9, 9, tiles * scan.TILE + 17).astype(dtype)
        np.testing.assert_array_equal(scan.scan(fake, "cumsum", a, 0, dtype), np.cumsum(a))
    b = RNG.integers(-9, 9, (3, 10 * scan.TILE + 5))
    np.testing.assert_array_equal(scan.scan(fake, "cumsum", b, 1), np.cumsum(b, axis=1))
    c = RNG.integers(-9, 9, (2000, 3))
    np.testing.assert_array_equal(scan.scan(fake, "cumsum", c, 1), np.cumsum(c, axis=1))
    assert calls == ["chained", "chained", "chained", "rows"]
    assert seen["0"] > 0 and seen["1"] > 0 and seen["2"] > 0  # (spins, totals and running values all met)


def _same_bits_in_every_interleaving(fake: Any, monkeypatch: pytest.MonkeyPatch, a: np.ndarray, axis: int) -> None:
    """The float32 ``cumsum`` of ``a`` along ``axis`` in six interleavings of the look-back's blocks:
    the same bits, NumPy's to the order of adds."""
    outs = []
    for order in range(6):
        def kernels(cp: Any, op: str, dtype: np.dtype, acc: np.dtype, order: int = order) -> tuple[Any, ...]:
            return tuple(_model(op, name, order=order) for name in _NAMES)

        monkeypatch.setattr(scan, "_kernels", kernels)
        outs.append(scan.scan(fake, "cumsum", a, axis))
    assert all(o.tobytes() == outs[0].tobytes() for o in outs[1:])
    ref = np.cumsum(a.astype(np.float64), axis=axis)
    assert float(np.max(np.abs(outs[0] - ref) / np.cumsum(np.abs(a.astype(np.float64)), axis=axis))) < 1e-6


def _spread(shape: tuple[int, ...]) -> np.ndarray:
    """float32 values of magnitudes 1e-3 to 1e3, whose sums' bits depend on the order of adds."""
    return (RNG.standard_normal(shape) * 10.0 ** RNG.integers(-3, 4, shape)).astype(np.float32)


def test_long_float_rows_give_the_same_bits_whatever_the_blocks_timing(fake: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each chunk's running value is the previous chunk's plus its total, whichever published
    running value a block's look-back found among its 32 predecessors, so float sums do not depend
    on the blocks' timing (a look-back that also added up totals past its window in a tree did:
    the rows fuzz family's first GPU run found cumsums of one long row whose bits differed between
    calls). Six interleavings of the blocks, rows of 4 to 300 chunks."""
    for shape in [(1, 300 * 8 * scan.TILE + 5), (3, 40 * scan.TILE + 7)]:  # (chunks of 8 tiles)
        _same_bits_in_every_interleaving(fake, monkeypatch, _spread(shape), 1)


def test_other_axes_take_one_pass_with_look_back_where_enough_positions(fake: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """32 positions or more, too few to fill the GPU: chunks of 8 segments of up to 64 elements
    (32 of 8 bytes), a thread's, scanned in one launch whose threads look back down their
    positions (through spins, totals and running values, in the model's interleaving of the
    blocks); float sums with the same bits whatever the blocks' timing, as the rows'."""
    assert scan.chunk_length(132, 1, 8192, 4096, 4) == scan.GROUPS * scan.column_chunk(4) == 512
    assert scan.chunk_length(132, 1, 8192, 4096, 8) == scan.GROUPS * scan.column_chunk(8) == 256
    assert scan.chunk_length(132, 64, 1024, 512, 4) == 512  # (1,024 blocks of 32 positions: two chunks)
    assert scan.chunk_length(132, 1, 2**18, 128, 4) == 512  # (tall: the longest chunks)
    assert scan.chunk_length(132, 1, 40, 4096, 4) == 8  # (short: as many chunks as a segment a row allows)
    seen: dict[str, int] = {}
    calls = _counted(monkeypatch, seen)
    for dtype, shape in ((np.int64, (700, 300)), (np.int32, (2, 900, 33)), (np.int8, (1000, 64))):
        a = RNG.integers(-9, 9, shape).astype(dtype)
        np.testing.assert_array_equal(scan.scan(fake, "cumsum", a, -2), np.cumsum(a, axis=-2))
    assert calls == ["columns"] * 3
    b = RNG.integers(-9, 9, (400, scan.COLUMNS - 1))
    np.testing.assert_array_equal(scan.scan(fake, "cumsum", b, 0), np.cumsum(b, axis=0))
    assert calls[3] == "axis1" and calls[-1] == "axis0"  # (fewer positions: three passes)
    assert seen["0"] > 0 and seen["1"] > 0 and seen["2"] > 0
    _same_bits_in_every_interleaving(fake, monkeypatch, _spread((2000, 40)), 0)
    _same_bits_in_every_interleaving(fake, monkeypatch, _spread((3, 500, 100)), 1)


def test_only_4_byte_scans_take_the_columns_kernel(fake: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """By default (``scan.columns_pay``, not the fixture's patch) the columns kernel scans 4-byte
    values into 4-byte running values (float32, int32 into int32), where it was faster than three
    passes on an H100; 8-byte running values (float64, int32 or uint32 into 64 bits) and narrower
    reads (float16 into float32, int8 into int32) take the three passes, with their chunks."""
    monkeypatch.setattr(scan, "columns_pay", _COLUMNS_PAY)
    assert scan.chunk_length(132, 1, 8192, 4096, 4, columns=False) == 128  # (three passes' chunks)
    calls = _counted(monkeypatch)
    for dtype, into, kernel in [(np.float32, None, "columns"), (np.int32, np.int32, "columns"), (np.float64, None, "axis1"),
                                (np.int32, None, "axis1"), (np.uint32, None, "axis1"), (np.float16, None, "axis1"),
                                (np.int8, np.int32, "axis1")]:
        a = RNG.integers(0, 9, (700, 300)).astype(dtype)
        del calls[:]
        got = scan.scan(fake, "cumsum", a, 0, into)
        assert calls[0] == kernel, (dtype, into, calls)
        wide = a.astype(np.float32) if dtype == np.float16 else a  # (float16 summed in float32, rounded once)
        np.testing.assert_array_equal(got, np.cumsum(wide, axis=0, dtype=into).astype(got.dtype))


def test_other_axes_take_three_passes_where_too_few_positions(fake: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fewer than :data:`scan.COLUMNS` positions, too few to fill the GPU."""
    for outer, n, inner in [(1, 8192, 31), (2, 999, 7)]:
        chunk = scan.chunk_length(132, outer, n, inner, 4)
        assert chunk % 8 == 0 and chunk < n
        assert outer * math.ceil(n / chunk) * inner >= 132 * 2048 // 2 or chunk == 8
    calls = _counted(monkeypatch)
    a = RNG.integers(0, 9, (300, 2))
    np.testing.assert_array_equal(scan.scan(fake, "cumsum", a, 0), np.cumsum(a, axis=0))
    assert calls[0] == "axis1" and calls[-1] == "axis0" and len(calls) >= 3  # (totals, their running totals, the chunks)


def test_the_kernels_compile_for_every_dtype() -> None:
    """Each dtype into NumPy's result and into itself (a ``dtype=``), and the widening casts a
    scan reads through (``interpreter.scan_source``); running maxima and minima (float16's
    keeping the earlier of equal values, ``"_first"``)."""
    pytest.importorskip("cuda.bindings.nvrtc", reason="NVRTC (pip cuda-bindings) is not installed")
    from stitchlab.ir.dtypes import SUPPORTED
    from stitchlab.runtime.nvrtc import compile_cubin

    pairs = set()
    for op in ("cumsum", "cumprod", "cummax", "cummin"):
        for dt in SUPPORTED.values():
            assert scan.scanned(dt), dt
            pairs |= {(op, dt, scan.result_dtype(op, dt)), (op, dt, dt)}
    pairs |= {("cumsum", np.dtype(np.float16), np.dtype(np.float64)), ("cumsum", np.dtype(np.uint32), np.dtype(np.float64))}
    pairs |= {(op + "_first", np.dtype(np.float16), np.dtype(np.float16)) for op in ("cummax", "cummin")}
    pairs |= {(op + "_first", np.dtype(np.float32), np.dtype(np.float32)) for op in ("cummax", "cummin")}  # (their totals)
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
