"""The scatter step with a ufunc (``interpreter._scatter``; NumPy's ``ufunc.at``): each position's
values applied to it one after another, in their order, each result cast to the array's dtype.

On the GPU the entries are sorted by (position, order) (a stable sort; host positions come
sorted from the front end) and one thread walks each position's run (for every element of the
slices the axis' positions select), so a position given r times costs r dependent steps and the
result is NumPy's bit for bit wherever the op's CUDA expression is (``+``, ``-``, ``*``, ``/``,
minimum, maximum, bitwise and logical ops). Integer ops whose result no order changes take one
atomic per value instead, without the sort. Positions out of bounds are left out and flagged. The
kernels are generated from the op table's expression and the preamble, and compiled once through
the registry. Measured on the H200 in docs/performance.md, "ufunc.at".
"""

from __future__ import annotations

import functools
import math
from types import ModuleType
from typing import Any

import numpy as np

from ..codegen import ctypes as ct
from ..codegen.preamble import PREAMBLE
from ..ir.dtypes import cast, is_bfloat16
from ..ir.ops import OPS

#: the sorted pass: the thread of a run's first entry (of each block before the axis, and each
#: element of the slice after it) finds the run's end (doubling steps, then a binary search) and
#: applies the run's values in order to a register, read once and stored once. Slices of one
#: element: a thread per entry; longer ones: a block per entry (a run's later entries' blocks
#: leave at once), its threads along the slice. No count of the runs is read back, so host positions can be
#: captured. ``order`` null: the values come sorted already.
_SORTED = r"""
extern "C" __global__ void sl_scatter_at(X* out, const V* values, const long long* pos, const long long* order,
                                         int* bad, long long n, long long k, long long post, long long entries) {
  const long long r = post == 1 ? blockIdx.x * (long long)blockDim.x + threadIdx.x : (long long)blockIdx.x;
  const long long j = post == 1 ? 0 : blockIdx.y * (long long)blockDim.x + threadIdx.x;
  if (r >= entries || j >= post) return;
  const long long e = r % k, p = r / k, at_pos = pos[e];
  if (e > 0 && pos[e - 1] == at_pos) return;  // (a run's later entry)
  if (at_pos < 0 || at_pos >= n) { *bad = 1; return; }
  long long lo = e + 1, hi = k, step = 1;  // the run's end: the first later entry of another position,
  for (;; step <<= 1) {                      // bracketed by doubling steps (a short run: one or two reads)
    const long long probe = e + step;
    if (probe >= k) break;
    if (pos[probe] != at_pos) { hi = probe; break; }
    lo = probe + 1;
  }
  while (lo < hi) {
    const long long mid = (lo + hi) >> 1;
    if (pos[mid] == at_pos) lo = mid + 1; else hi = mid;
  }
  X* at = out + (p * n + at_pos) * post + j;
  X acc = *at;
#pragma unroll 4
  for (long long i = e; i < lo; ++i) {
    const L a = sl_cast<L>(sl_from_storage(acc));
    const L b = sl_load(values + (p * k + (order ? order[i] : i)) * post + j);
    acc = STORE(ROUND(STEP));
  }
  *at = acc;
}
"""

#: the same for an integer op whose result does not depend on the order (``+``, ``-``, bitwise,
#: min/max of 32- and 64-bit integers of the array's own dtype): one atomic per entry, no sort
_ATOMIC = r"""
extern "C" __global__ void sl_scatter_at(X* out, const X* values, const long long* idx, int* bad, long long n,
                                         long long k, long long post, long long total) {
  for (long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x; t < total;
       t += (long long)gridDim.x * blockDim.x) {
    const long long j = t % post, e = (t / post) % k, p = t / (post * k), at_pos = idx[e];
    if (at_pos < 0 || at_pos >= n) *bad = 1;
    else ATOMIC((A*)(out + (p * n + at_pos) * post + j), (A)(VALUE));
  }
}
"""

#: op -> the CUDA atomic of :data:`_ATOMIC` (``subtract`` adds the negated value)
_ATOMICS = {"add": "atomicAdd", "subtract": "atomicAdd", "bitwise_and": "atomicAnd", "bitwise_or": "atomicOr",
            "bitwise_xor": "atomicXor", "maximum": "atomicMax", "minimum": "atomicMin", "fmax": "atomicMax",
            "fmin": "atomicMin"}
#: dtype -> the type its atomics take (signed 64-bit +, -, and, or, xor through the unsigned ones)
_ATOMIC_TYPES = {"int32": "int", "uint32": "unsigned int", "uint64": "unsigned long long", "int64": "long long"}


def _atomic(name: str, x: np.dtype, loop: np.dtype) -> bool:
    """Whether the atomic pass gives ``name``'s sequential result for ``x`` and ``loop``."""
    return loop == x and x.name in _ATOMIC_TYPES and name in _ATOMICS


def _source(name: str, x: np.dtype, loop: np.dtype) -> str:
    """The kernel for ``out[p] = x.dtype(name(out[p], v))`` over values of the ``loop`` dtype (the
    op's inputs; its result of the dtype NumPy's loop gives, rounded to it, then cast)."""
    if _atomic(name, x, loop):
        fn = _ATOMICS[name]
        signed_max_min = x.name == "int64" and fn in ("atomicMax", "atomicMin")
        atomic_type = "unsigned long long" if x.name == "int64" and not signed_max_min else _ATOMIC_TYPES[x.name]
        body = _ATOMIC.replace("ATOMIC", fn).replace("VALUE", "-values[t]" if name == "subtract" else "values[t]")
        return f"typedef {ct.storage_type(x)} X;\ntypedef {atomic_type} A;\n{body}"
    result = OPS[name].ufunc.resolve_dtypes((loop, loop, None))[2]
    reg = ct.register_type(result)
    step = OPS[name].cuda_expr(ct.kind(loop)).format("a", "b")
    rounding = {"float16": "sl_round_half", "bfloat16": "sl_round_bf16"}.get(result.name, f"({reg})")
    from_double = reg == "double"  # (to float16 or bfloat16 from a double in one rounding)
    store = {"float16": "sl_d2h" if from_double else "sl_f2h", "bfloat16": "sl_d2bf" if from_double else "sl_f2bf"}.get(
        x.name, f"sl_cast<{ct.storage_type(x)}>")
    body = _SORTED.replace("STORE(ROUND(STEP))", f"{store}({rounding}({step}))")
    return (f"{PREAMBLE}\ntypedef {ct.storage_type(x)} X;\ntypedef {ct.storage_type(loop)} V;\n"
            f"typedef {ct.register_type(loop)} L;\n{body}")


@functools.cache
def _kernel(name: str, x: np.dtype, loop: np.dtype, arch: str) -> Any:
    from . import kernels  # (the registry: not imported with stitchlab)

    return kernels.fetch_source(_source(name, x, loop), "sl_scatter_at", arch, kernels.op_ptxas_options(name, loop))


def sorted_entries(xp: ModuleType, idx: Any, n: int) -> tuple[Any, Any]:
    """The entries of ``idx`` (positions in ``0 .. n-1``) sorted by (position, order): their
    positions and their places in ``idx`` (each position's run in the order the entries came;
    a stable sort of 32-bit keys where the positions fit)."""
    order = xp.argsort(idx.astype(np.int32) if n < 2**31 else idx, kind="stable")
    return xp.take(idx, order), order


def scatter_at(xp: ModuleType, name: str, out: Any, idx: Any, values: Any, axis: int, presorted: bool = False) -> Any:
    """Apply op ``name`` to ``out`` (a C-contiguous copy, written in place) at the positions
    ``idx`` along ``axis`` (negative ones already wrapped) with ``values`` (``out``'s shape with
    ``len(idx)`` along ``axis``, of the op's loop dtype), as NumPy's ``ufunc.at`` (``presorted``:
    ``idx`` is sorted, each position's values in their order). Positions out of bounds are left
    out; returns whether there were any (on the GPU a 0-d array, not read back: the caller reads
    it once the pass is queued)."""
    n = out.shape[axis]
    if idx.shape[0] == 0 or out.size == 0:
        return bool(idx.shape[0]) and bool(((idx < 0) | (idx >= n)).any())
    if xp is np:
        return _numpy_at(name, out, idx, values, axis)
    import cupy

    fn = _kernel(name, out.dtype, values.dtype, "sm_" + cupy.cuda.Device().compute_capability)
    k = idx.shape[0]
    pre, post = math.prod(out.shape[:axis]), math.prod(out.shape[axis + 1:])
    values = xp.ascontiguousarray(values)
    bad = xp.zeros((), np.int32)
    if _atomic(name, out.dtype, values.dtype):
        total = pre * k * post
        fn((min(-(-total // 256), 2**31 - 1),), (256,), (out, values, idx, bad) + tuple(np.int64(a) for a in (n, k, post, total)))
        return bad
    pos, order = (idx, None) if presorted else sorted_entries(xp, idx, n)
    if post == 1 and order is not None:  # (one element a position: the values gathered in sorted order)
        values, order = xp.ascontiguousarray(xp.take(values, order, axis=axis)), None
    order = np.uint64(0) if order is None else order  # (a null pointer: the values come in sorted order)
    if post == 1:
        grid: tuple[int, ...] = (-(-(pre * k) // 256),)
    else:
        grid = (pre * k, -(-post // 128))
    fn(grid, (256 if post == 1 else 128,), (out, values, pos, order, bad) + tuple(np.int64(a) for a in (n, k, post, pre * k)))
    return bad


def _numpy_at(name: str, out: np.ndarray, idx: np.ndarray, values: np.ndarray, axis: int) -> bool:
    """NumPy's ``ufunc.at``; for a bfloat16 ``out`` of another loop dtype, each result rounded
    once as stitchlab casts (ml_dtypes rounds a double through float), one round per repeat."""
    ufunc = OPS[name].ufunc
    lead = (slice(None),) * axis
    if bool(((idx < 0) | (idx >= out.shape[axis])).any()):
        return True
    with np.errstate(all="ignore"):
        if not is_bfloat16(out.dtype) or values.dtype == out.dtype:
            ufunc.at(out, lead + (idx,), values)
            return False
        pos, order = sorted_entries(np, idx, out.shape[axis])
        starts = np.flatnonzero(np.concatenate([[True], pos[1:] != pos[:-1], [True]]))
        rank = np.arange(idx.shape[0]) - np.repeat(starts[:-1], np.diff(starts))
        for r in range(int(rank.max()) + 1):
            entries = order[rank == r]  # (each position at most once)
            at = lead + (idx[entries],)
            result = ufunc(out[at].astype(values.dtype), np.take(values, entries, axis))
            out[at] = cast(result, out.dtype)
    return False
