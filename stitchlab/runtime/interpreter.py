"""The reference interpreter: evaluates a canonical graph op by op with NumPy (or CuPy).

It is the numpy backend, the unfused fallback of the cupy backend, and the reference every test
compares against. No fusion, no cleverness: each node becomes one array-library call.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from types import ModuleType
from typing import Any

import numpy as np

from ..ir.dtypes import cast, is_bfloat16, is_float, is_low_float
from ..ir.graph import Graph
from ..ir.node import Node
from ..ir.ops import EXTREMA_SCANS, OPS, SCANS
from . import scan, scatter_at, scatter_rows


def _slices(node: Node) -> tuple[slice, ...]:
    out = []
    for start, step, n in zip(node.attr("starts"), node.attr("steps"), node.shape, strict=False):
        stop = start + step * n
        out.append(slice(start, None if stop < 0 else stop, step))
    return tuple(out)


_LIBRARY_STEPS = frozenset({"take", "take_along_axis", "scatter", "sort", "argsort", *SCANS})


def _checked_positions(node: Node, x: Any, idx: Any, xp: ModuleType) -> Any:
    """Positions computed on the device along the node's axis of ``x``, checked (NumPy's
    ``IndexError``, naming the node's ``named_axis`` where it has one; a host sync on the GPU) and
    made non-negative."""
    axis = node.attr("axis")
    n = x.shape[axis]
    bad = (idx < -n) | (idx >= n)
    if bool(bad.any()):
        merged = node.attr("merged")
        if merged:  # several index arrays, one gather along their axes merged
            raise IndexError(merged_position_error(idx, merged, node.attr("named_axis")))
        named = node.attr("named_axis", axis)
        raise IndexError(f"index {int(idx[bad].ravel()[0])} is out of bounds for axis {named} with size {n}")
    return xp.where(idx < 0, idx + n, idx)


def merged_position_error(positions: Any, sizes: Sequence[int], names: Sequence[int]) -> str:
    """NumPy's ``IndexError`` text for positions in the axes of ``sizes`` merged (several index
    arrays; ``names``: those axes as NumPy names them) where some are out of bounds.

    The positions come from :func:`stitchlab.frontend.library._flat_positions`: an entry in
    bounds of every array is its merged position (below ``total``, the product of ``sizes``); an
    entry out of bounds of array ``i`` (the first such of that entry) is ``total + i + len(sizes)
    * z``, where ``z`` tells the array's value ``v``: ``2 * (v - n)`` for ``v >= n``, ``2 * (-n -
    1 - v) + 1`` for ``v < -n``, with ``z // 2`` at most :func:`merged_offset_limit` (a value that
    far out is named by that bound). NumPy checks the arrays one after another: the error names
    the first array out of bounds anywhere, at its first entry out of bounds."""
    total, count = math.prod(sizes), len(sizes)
    flat = np.asarray(positions.get() if hasattr(positions, "get") else positions).ravel()
    codes = flat[flat >= total] - total
    first = int((codes % count).min())
    z = int(codes[codes % count == first][0]) // count
    n, named = sizes[first], names[first]
    v = n + z // 2 if z % 2 == 0 else -n - 1 - z // 2
    past = "an index at or past " if z // 2 >= merged_offset_limit(sizes) else "index "
    return f"{past}{v} is out of bounds for axis {named} with size {n}"


def merged_offset_limit(sizes: Sequence[int]) -> int:
    """The largest distance past its bounds that :func:`merged_position_error`'s codes tell for
    the axes of ``sizes`` (the codes stay within int64)."""
    return ((2**62 - math.prod(sizes)) // len(sizes) - 2) // 2


def _scatter(node: Node, x: Any, idx: Any, values: Any, xp: ModuleType, order: Any = None) -> Any:
    """A copy of ``x`` with the slices at ``idx`` along the node's axis replaced by ``values``'.
    Positions from the device may repeat: the last value of each is kept, as NumPy's sequential
    assignment leaves it (CuPy's scatter writes one of them, unspecified which)."""
    axis = node.attr("axis")
    if node.attr("ufunc"):
        return _scatter_at(node, x, idx, values, xp, order)
    if not node.attr("checked"):
        idx = _checked_positions(node, x, idx, xp)
    if is_bfloat16(x.dtype):  # (moved as its bits)
        x, values = x.view(np.uint16), values.view(np.uint16)
    if not node.attr("checked") and idx.shape[0] > 1:  # the last entry of each position's run wins
        pos, order = scatter_at.sorted_entries(xp, idx, x.shape[axis])
        last = xp.concatenate([pos[1:] != pos[:-1], xp.ones(1, dtype=bool)])
        idx, values = pos[last], xp.take(values, order[last], axis=axis)
    if xp is not np and idx.shape[0] and math.prod(x.shape[axis + 1:]) * x.itemsize >= scatter_rows.ROW_BYTES:
        out = scatter_rows.scatter_rows(xp, x, idx, values, axis)
    else:
        out = xp.empty(x.shape, x.dtype)  # (C order; CuPy's x.copy() took 162 us for 134 MB on the H200, copyto 66)
        xp.copyto(out, x)
        out[(slice(None),) * axis + (idx,)] = values
    return out.view(node.dtype) if out.dtype != node.dtype else out


def _scatter_at(node: Node, x: Any, idx: Any, values: Any, xp: ModuleType, order: Any = None) -> Any:
    """NumPy's ``ufunc.at`` into a copy of ``x`` (the node's ``ufunc``): repeated positions
    accumulate. Positions from the device are checked after the pass is queued (it leaves those
    out of bounds out and flags them), so the host waits on the device once, at the end."""
    out = xp.empty(x.shape, x.dtype)
    xp.copyto(out, x)
    bad = scatter_at.scatter_at(xp, node.attr("ufunc"), out, idx, values, node.attr("axis"), bool(node.attr("presorted")),
                                order)
    if not node.attr("checked") and bool(bad):  # (host positions were checked: nothing read back)
        _checked_positions(node, x, idx, xp)  # (raises NumPy's IndexError)
    return out


def _library_step(node: Node, args: list[Any], xp: ModuleType) -> Any:
    """A gather, scatter, scan or sort, run by the array library (CuPy's ``take`` wraps positions
    around instead of raising, so positions not checked when the node was built are checked here)."""
    op, axis, x = node.op, node.attr("axis"), args[0]
    if op == "scatter":
        return _scatter(node, x, args[1], args[2], xp, *args[3:])
    if op in ("take", "take_along_axis"):
        idx = args[1] if node.attr("checked") else _checked_positions(node, x, args[1], xp)
        return xp.take(x, idx, axis=axis) if op == "take" else xp.take_along_axis(x, idx, axis)
    if op in SCANS:
        return scan_step(node, x, xp)
    if is_bfloat16(x.dtype):  # (sorted in float32: exact)
        y = _library_step(node, [x.astype(np.float32)], xp)
        return y if op == "argsort" else cast(y, x.dtype, xp)
    x = nans_sort_last(x, xp)
    if op == "argsort":
        return xp.argsort(x, axis=axis, kind="stable") if xp is np else xp.argsort(x, axis=axis)
    return xp.sort(x, axis=axis)


def scan_step(node: Node, x: Any, xp: ModuleType) -> Any:
    """The scan ``node`` (``cumsum``/``cumprod``/``cummax``/``cummin`` along its axis) of ``x``: NumPy's on the host; on
    the GPU :func:`scan.scan` (CuPy's scans took 1.17 ms for 8192 x 4096 float32 along the rows on
    an H100), into the node's dtype (``x`` is its input, or that input's input where it is a
    widening cast: :func:`scan_source`). float16 and bfloat16 results are accumulated in float32
    and rounded once, more accurate than NumPy's, which round every partial result; float16 ones
    that leave float16's range then stay there as NumPy's: :func:`scan.half_fixup` on the device
    for many rows (or columns), else :func:`_half_scan`'s fix-up after one flag read back. A
    running maximum or minimum rounds nothing: NumPy's ``maximum.accumulate`` on the host."""
    op, axis = node.op, node.attr("axis")
    if xp is np:
        if not is_low_float(x.dtype) or op in EXTREMA_SCANS:
            return OPS[op].numpy(x, axis=axis)
        y = getattr(np, op)(x.astype(np.float32), axis=axis)
        return _half_scan(op, x, y, axis, np) if x.dtype == np.float16 else cast(y, x.dtype, np)
    if node.dtype != np.float16 or op in EXTREMA_SCANS:
        return scan.scan(xp, op, x, axis, node.dtype)
    from .scratch import capturing

    x, left = xp.ascontiguousarray(x), xp.zeros(1, np.uint32)
    if x.size >= scan.FIXUP_POSITIONS * x.shape[axis]:  # (the fix-up on the device: nothing read back)
        h = scan.scan(xp, op, x, axis, node.dtype, left)
        scan.half_fixup(xp, op, x, h, axis, left)
        return h
    if not capturing(xp.cuda.get_current_stream()):  # (else nothing can be read back: the fix-up runs)
        h = scan.scan(xp, op, x, axis, node.dtype, left)
        if not int(left[0]):
            return h
    return _half_scan(op, x, scan.scan(xp, op, x, axis, np.dtype(np.float32)), axis, xp)


def scan_source(node: Node) -> Node | None:
    """For a scan of a widening cast (:func:`~stitchlab.frontend.build.scan` casts int32 to int64
    before a ``cumsum``), the cast's input, which :func:`scan.scan` reads and converts itself on the
    GPU (a pass less: an int32 ``cumsum`` of 8192 x 4096 along the rows took 351 us on an H100 cast
    first, 142 read as int32); None for any other node."""
    if node.op not in SCANS or node.inputs[0].op != "astype" or is_low_float(node.dtype):
        return None
    src = node.inputs[0].inputs[0]
    return src if scan.scanned(src.dtype) and np.can_cast(src.dtype, node.dtype, "safe") else None


def _half_scan(op: str, x: Any, y: Any, axis: int, xp: ModuleType) -> Any:
    """The running sums or products ``y`` (float32) of the float16 ``x`` along ``axis``, rounded to
    float16, kept where NumPy's float16 scan is kept once it leaves float16's range: from the
    first result that rounds to inf (overflow; for ``cumprod`` also one that rounds to zero from a
    nonzero value, underflow), NumPy's stays there, inf or a signed zero, where float32's would
    come back. It is NaN from the first element after that which makes NaN of it (NaN; an inf of
    the other sign added to inf; 0 times inf, inf times zero), as NumPy's. The sign is the first
    overflow's for a sum, the factors' for a product."""
    def running(m: Any) -> Any:  # (counts, int64 on CuPy as on NumPy)
        return xp.cumsum(m, axis=axis, dtype=np.int64) if xp is np else scan.scan(xp, "cumsum", m, axis, np.dtype(np.int64))

    h = cast(y, x.dtype, xp)
    if not _may_leave_half(op, y, xp):  # (the common case, spared the scans below)
        return h
    over, left = _outside_half(op, y, xp)
    seen = running(left)
    first, stays = left & (seen == 1), seen > 0
    if op == "cumprod":
        overflowed = running(first & over) > 0
        held = xp.where(overflowed, np.float16(np.inf), np.float16(0))
        negative = running(xp.signbit(x)) % 2 == 1
        spoiler = xp.where(overflowed, x == 0, xp.isinf(x))
    else:
        held = np.float16(np.inf)
        negative = running(first & xp.signbit(h)) > 0
        spoiler = xp.isinf(x) & (xp.signbit(x) != negative)
    spoils = stays & ~first & (xp.isnan(x) | spoiler)
    rest = xp.where(running(spoils) > 0, np.float16(np.nan), xp.where(negative, -held, held))
    return xp.where(stays, rest, h)


def _outside_half(op: str, y: Any, xp: ModuleType) -> tuple[Any, Any]:
    """The elements of ``y`` (float32) that round to float16's inf (``over``; not float32's own
    inf), and those outside float16's range (``left``: for a product also those that round to
    zero from a nonzero value, 2**-25 and less)."""
    size = xp.abs(y)
    over = (size >= 65520) & (size != np.inf)
    return over, (over | ((size <= 2.0**-25) & (size != 0)) if op == "cumprod" else over)


_half_range_kernels: dict[bool, Any] = {}


def _may_leave_half(op: str, y: Any, xp: ModuleType) -> bool:
    """Whether a float32 running result ``y`` of a float16 scan has a value outside float16's range
    (:func:`_half_scan` then holds NumPy's inf, zero or NaN from there), read back as one flag: the
    fix-up's running counts made every float16 scan on the GPU 6.5-8x slower (H100, 8192 x 4096
    along the rows: cumsum 1,165 -> 7,538 us; with the flag 1,269 where no sum leaves the range).
    While a CUDA graph is being captured nothing can be read back, and the fix-up always runs."""
    if xp is np:
        return bool(_outside_half(op, y, np)[1].any())
    from .scratch import capturing

    if capturing(xp.cuda.get_current_stream()):
        return True
    product = op == "cumprod"
    kernel = _half_range_kernels.get(product)
    if kernel is None:
        kernel = _half_range_kernels[product] = xp.ReductionKernel(
            "float32 y", "bool r", f"sl_leaves_half(y, {str(product).lower()})", "a || b", "r = a", "false",
            f"sl_half_range_{op}", reduce_type="bool", preamble=scan.HALF_RANGE)
    return bool(kernel(y))


def nans_sort_last(x: Any, xp: ModuleType) -> Any:
    """``x`` as CuPy must sort it to put every NaN last, as NumPy does. CuPy sorts 1-d float32
    and float64 arrays by radix (thrust::less), in the order of the bits: a NaN with its sign bit
    set (``arccos`` on the GPU gives them) would come first. Each NaN's sign bit is cleared by a
    bit mask, which keeps its payload (CuPy's ``abs`` is no bit operation: it negated positive
    NaNs, found on the H200); other arrays and NumPy's are returned as they are."""
    if xp is np or x.dtype not in (np.float32, np.float64):
        return x
    bits = np.dtype(f"uint{8 * x.dtype.itemsize}")
    unsigned = xp.bitwise_and(x.view(bits), bits.type(np.iinfo(bits).max >> 1)).view(x.dtype)
    return xp.where(xp.isnan(x), unsigned, x)


def eval_node(node: Node, args: list[Any], xp: ModuleType) -> Any:
    """Evaluate one non-input node over its evaluated ``args``."""
    op = node.op
    if op == "const":
        return xp.asarray(node.attr("value"), dtype=node.dtype)
    if op == "iota":
        start, step = node.attr("start"), node.attr("step")
        if node.dtype == np.uint64:  # (in uint64, wrapping: starts past int64's range, negative steps)
            start, step, work = start % 2**64, step % 2**64, np.uint64
        else:
            work = np.float64 if is_float(node.dtype) else np.int64
        return cast(xp.arange(node.shape[0], dtype=work) * work(step) + work(start), node.dtype, xp)
    if op == "astype":
        return cast(args[0], node.dtype, xp)
    if op == "broadcast":
        return xp.broadcast_to(args[0], node.shape)
    if op == "reshape":
        return xp.reshape(args[0], node.shape)
    if op == "transpose":
        return xp.transpose(args[0], node.attr("perm"))
    if op == "slice":
        return args[0][_slices(node)]
    if op == "pad":
        widths = [(0, 0)] * len(node.shape)
        widths[node.attr("axis")] = (node.attr("before"), node.shape[node.attr("axis")] - node.attr("before") - node.attr("extent"))
        return xp.pad(args[0], widths, mode=node.attr("mode"))
    opdef = OPS[op]
    if op in ("argmax", "argmin"):
        (axis,) = node.attr("axes")
        x = args[0]
        out = opdef.numpy(x, axis=axis, keepdims=True)
        if xp is not np and is_float(x.dtype):
            # NumPy's position of a slice holding NaN is its first NaN's; CuPy's is another NaN's
            nan = xp.isnan(x)
            out = xp.where(nan.any(axis=axis, keepdims=True), xp.argmax(nan, axis=axis, keepdims=True), out)
        return out
    if opdef.kind.value == "reduce":
        x = args[0]
        if (op in ("sum", "prod") and is_bfloat16(x.dtype)) or (op == "sum" and x.dtype == np.float16):
            # accumulated in float32 and rounded once, as the kernels do; ml_dtypes' own reduction
            # rounds every partial sum to bfloat16, and NumPy's float16 sum does so along an axis
            # that is not the innermost (4096 values of exp(x) summed to 2048-ish where float16
            # spacing stalls it: random-program seed 7415358)
            return opdef.numpy(x.astype(np.float32), axis=node.attr("axes"), keepdims=True).astype(x.dtype)
        return opdef.numpy(x, axis=node.attr("axes"), keepdims=True)
    if op == "where":
        return xp.where(*args)
    if op == "concatenate":
        return xp.concatenate(args, axis=node.attr("axis"))
    if op == "einsum":
        return xp.einsum(node.attr("subscripts"), *args)
    if op == "searchsorted":
        a, v = (x.astype(np.float32) if is_bfloat16(x.dtype) else x for x in args)  # bfloat16 compares exactly in float32
        return xp.searchsorted(a, v, side=node.attr("side"))
    if op in _LIBRARY_STEPS:
        return _library_step(node, args, xp)
    return opdef.numpy(*args)  # NumPy ufuncs dispatch to CuPy arrays (NEP 13/18)


def interpret(graph: Graph, buffers: Sequence[Any], xp: ModuleType = np) -> list[Any]:
    """Evaluate ``graph`` with its input slots bound to ``buffers``; one array per output."""
    env: dict[int, Any] = {}
    for node, buf in zip(graph.inputs, buffers, strict=False):
        env[id(node)] = buf
    with np.errstate(all="ignore"):
        for node in graph.nodes:
            if node.op == "input":
                continue
            value = eval_node(node, [env[id(i)] for i in node.inputs], xp)
            value = xp.asarray(value)
            if value.dtype != node.dtype:
                value = cast(value, node.dtype, xp)
            env[id(node)] = value
    return [env[id(o)] for o in graph.outputs]
