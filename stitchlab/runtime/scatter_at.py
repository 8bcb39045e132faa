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
#: leave at once), its threads along the slice, ``ELEMS`` elements each. No count of the runs is
#: read back, so host positions can be captured. ``order`` null: the values come sorted already.
_SORTED = r"""
extern "C" __global__ void sl_scatter_at(X* out, const V* values, const long long* pos, const long long* order,
                                         int* bad, long long n, long long k, long long post, long long entries) {
  const long long r = post == 1 ? blockIdx.x * (long long)blockDim.x + threadIdx.x : (long long)blockIdx.x;
  const long long j0 = post == 1 ? 0 : blockIdx.y * (long long)blockDim.x * ELEMS + threadIdx.x;
  if (r >= entries || j0 >= post) return;
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
  X* at = out + (p * n + at_pos) * post;
  X acc[ELEMS];  // (the thread's elements of the slice, ELEMS apart by the block's width: independent loads)
#pragma unroll
  for (int u = 0; u < ELEMS; ++u)
    if (j0 + u * blockDim.x < post) acc[u] = at[j0 + u * blockDim.x];
  for (long long i = e; i < lo; ++i) {
    const V* row = values + (p * k + (order ? order[i] : i)) * post;
#pragma unroll
    for (int u = 0; u < ELEMS; ++u) {
      const long long j = j0 + u * blockDim.x;
      if (j < post) {
        const L a = sl_cast<L>(sl_from_storage(acc[u]));
        const L b = sl_load(row + j);
        acc[u] = STORE(ROUND(STEP));
      }
    }
  }
#pragma unroll
  for (int u = 0; u < ELEMS; ++u)
    if (j0 + u * blockDim.x < post) at[j0 + u * blockDim.x] = acc[u];
}
"""

#: the same for an integer op whose result does not depend on the order (``+``, ``-``, bitwise,
#: min/max of 32- and 64-bit integers of the array's own dtype): one atomic per entry, no sort
_ATOMIC = r"""
extern "C" __global__ void sl_scatter_at(X* out, const X* values, const long long* idx, const long long* order,
                                         int* bad, long long n, long long k, long long post, long long total) {
  for (long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x; t < total;
       t += (long long)gridDim.x * blockDim.x) {
    const long long j = t % post, e = (t / post) % k, p = t / (post * k), at_pos = idx[e] < 0 ? idx[e] + n : idx[e];
    const X v = values[(p * k + (order ? order[e] : e)) * post + j];
    if (at_pos < 0 || at_pos >= n) *bad = 1;
    else ATOMIC((A*)(out + (p * n + at_pos) * post + j), (A)(VALUE));
  }
}
"""

#: the stable sort of at most :data:`RANK_ENTRIES` entries by (position, order), without CuPy's
#: argsort (about 80 us of host time a call on the H200, whatever the length): each entry's place
#: is the count of smaller keys ``position * k + order`` (a position wrapped once if negative,
#: one still out of bounds counted as ``n``: those come last, in order), compared from shared
#: memory, one thread per entry. Short lists: one kernel that places each entry (``rank`` null);
#: longer ones split the compared keys over ``blockIdx.y``, sum the counts into ``rank`` by
#: atomics and place in a second kernel (:data:`_PLACE`). ``K``: 32-bit keys where ``(n + 1) * k`` fits, else 64-bit.
_WRAPPED = r"""
__device__ __forceinline__ long long sl_wrapped(const long long* idx, long long n, long long e) {
  const long long p = idx[e];
  return p < 0 ? p + n : p;
}
"""
_RANK = _WRAPPED + r"""
__device__ __forceinline__ K sl_key(const long long* idx, long long n, int k, int e) {
  const long long p = sl_wrapped(idx, n, e);
  return (K)(p >= 0 && p < n ? p : n) * (K)k + (K)e;
}
extern "C" __global__ void __launch_bounds__(256) sl_rank_entries(const long long* idx, int* rank, long long* pos,
                                                                  long long* order, long long n, int k, int chunk) {
  __shared__ K tile[1024];
  const int e = blockIdx.x * blockDim.x + threadIdx.x;
  const K mine = e < k ? sl_key(idx, n, k, e) : (K)0;
  const int lo = blockIdx.y * chunk, hi = min(k, lo + chunk);
  int r0 = 0, r1 = 0, r2 = 0, r3 = 0;  // (four counts: independent adds)
  for (int base = lo; base < hi; base += 1024) {
    for (int j = threadIdx.x; j < 1024; j += blockDim.x) tile[j] = base + j < hi ? sl_key(idx, n, k, base + j) : ~(K)0;
    __syncthreads();
#pragma unroll 8
    for (int t = 0; t < 1024; t += 4) {
      r0 += tile[t] < mine; r1 += tile[t + 1] < mine; r2 += tile[t + 2] < mine; r3 += tile[t + 3] < mine;
    }
    __syncthreads();
  }
  if (e >= k) return;
  const int r = r0 + r1 + r2 + r3;
  if (rank) { atomicAdd(rank + e, r); return; }  // (a part of the keys: placed by sl_place_entries)
  pos[r] = sl_wrapped(idx, n, e);
  order[r] = e;
}
"""
_PLACE = _WRAPPED + r"""
extern "C" __global__ void sl_place_entries(const long long* idx, const int* rank, long long* pos, long long* order,
                                            long long n, int k) {
  const int e = blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= k) return;
  pos[rank[e]] = sl_wrapped(idx, n, e);
  order[rank[e]] = e;
}
"""
#: the keys CuPy's argsort sorts past :data:`RANK_ENTRIES` (``K``: int where ``n`` fits), and
#: the positions wrapped, in one pass
_KEYS = _WRAPPED + r"""
extern "C" __global__ void sl_sort_keys(const long long* idx, long long* wrapped, K* keys, long long n, long long k) {
  for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < k; e += (long long)gridDim.x * blockDim.x) {
    const long long p = sl_wrapped(idx, n, e);
    wrapped[e] = p;
    keys[e] = (K)(p >= 0 && p < n ? p : n);
  }
}
"""
#: the most entries :data:`_RANK` sorts (its work grows as their square: 16384 took 41 us on the
#: H200, against 89 for CuPy's argsort, 32768 took 142 against 101); up to ``_RANK_ONE``, one kernel
RANK_ENTRIES, _RANK_ONE = 16384, 4096
#: elements of a slice each thread of the sorted pass applies a run to
_ELEMS = 8

#: op -> the CUDA atomic of :data:`_ATOMIC` (``subtract`` adds the negated value)
_ATOMICS = {"add": "atomicAdd", "subtract": "atomicAdd", "bitwise_and": "atomicAnd", "bitwise_or": "atomicOr",
            "bitwise_xor": "atomicXor", "maximum": "atomicMax", "minimum": "atomicMin", "fmax": "atomicMax",
            "fmin": "atomicMin"}
#: dtype -> the type its atomics take (signed 64-bit +, -, and, or, xor through the unsigned ones)
_ATOMIC_TYPES = {"int32": "int", "uint32": "unsigned int", "uint64": "unsigned long long", "int64": "long long"}


def _atomic(name: str, x: np.dtype, loop: np.dtype) -> bool:
    """Whether the atomic pass gives ``name``'s sequential result for ``x`` and ``loop``."""
    return loop == x and x.name in _ATOMIC_TYPES and name in _ATOMICS


@functools.cache
def _source(name: str, x: np.dtype, loop: np.dtype, elems: int = _ELEMS) -> str:
    """The kernel for ``out[p] = x.dtype(name(out[p], v))`` over values of the ``loop`` dtype (the
    op's inputs; its result of the dtype NumPy's loop gives, rounded to it, then cast); the sorted
    pass applies ``elems`` elements of a slice a thread (1 for slices of one element)."""
    if _atomic(name, x, loop):
        fn = _ATOMICS[name]
        signed_max_min = x.name == "int64" and fn in ("atomicMax", "atomicMin")
        atomic_type = "unsigned long long" if x.name == "int64" and not signed_max_min else _ATOMIC_TYPES[x.name]
        body = _ATOMIC.replace("ATOMIC", fn).replace("VALUE", "-v" if name == "subtract" else "v")
        return f"typedef {ct.storage_type(x)} X;\ntypedef {atomic_type} A;\n{body}"
    result = OPS[name].ufunc.resolve_dtypes((loop, loop, None))[2]
    reg = ct.register_type(result)
    step = OPS[name].cuda_expr(ct.kind(loop)).format("a", "b")
    rounding = {"float16": "sl_round_half", "bfloat16": "sl_round_bf16"}.get(result.name, f"({reg})")
    from_double = reg == "double"  # (to float16 or bfloat16 from a double in one rounding)
    store = {"float16": "sl_d2h" if from_double else "sl_f2h", "bfloat16": "sl_d2bf" if from_double else "sl_f2bf"}.get(
        x.name, f"sl_cast<{ct.storage_type(x)}>")
    body = _SORTED.replace("STORE(ROUND(STEP))", f"{store}({rounding}({step}))").replace("ELEMS", str(elems))
    return (f"{PREAMBLE}\ntypedef {ct.storage_type(x)} X;\ntypedef {ct.storage_type(loop)} V;\n"
            f"typedef {ct.register_type(loop)} L;\n{body}")


def sorted_entries(xp: ModuleType, idx: Any, n: int) -> tuple[Any, Any]:
    """The entries of ``idx`` (positions along an axis of ``n``; negative ones wrapped once)
    sorted by (position, order): their positions and their places in ``idx`` (each position's run
    in the order the entries came). Positions out of bounds come after the others. On the GPU,
    up to :data:`RANK_ENTRIES` entries by :data:`_RANK`; more by CuPy's stable argsort (of 32-bit
    keys where the positions fit)."""
    k = idx.shape[0]
    if xp is np:
        idx = np.where(idx < 0, idx + n, idx)
        order = np.argsort(np.where((idx >= 0) & (idx < n), idx, n), kind="stable")
        return idx[order], order
    idx = xp.ascontiguousarray(idx)
    if 0 < k <= RANK_ENTRIES:
        return _rank_sorted(xp, idx, n)
    wide = n >= 2**31 - 1
    wrapped, keys = xp.empty(k, np.int64), xp.empty(k, np.int64 if wide else np.int32)
    _runtime_kernel(_keyed(_KEYS, "long long" if wide else "int"), "sl_sort_keys")(
        (min(-(-k // 256), 4096),), (256,), (idx, wrapped, keys, np.int64(n), np.int64(k)))
    order = xp.argsort(keys, kind="stable")
    return xp.take(wrapped, order), order


def _runtime_kernel(source: str, name: str, options: tuple[str, ...] = ()) -> Any:
    """Kernel ``name`` of ``source`` (one of this module's) on the current GPU, through the registry."""
    import cupy

    dev = cupy.cuda.Device()
    return _fetched(source, name, options, "sm_" + dev.compute_capability, dev.id)


@functools.cache
def _fetched(source: str, name: str, options: tuple[str, ...], arch: str, device: int) -> Any:
    from . import kernels  # (the registry: not imported with stitchlab)

    return kernels.fetch_source(source, name, arch, options)


def _keyed(source: str, key: str) -> str:
    """``source`` (:data:`_RANK`, :data:`_KEYS`) with keys of C type ``key``."""
    return f"typedef {key} K;\n{source}"


def _rank_sorted(xp: ModuleType, idx: Any, n: int) -> tuple[Any, Any]:
    """:func:`sorted_entries` by :data:`_RANK` (``0 < len(idx) <=`` :data:`RANK_ENTRIES`)."""
    k = idx.shape[0]
    rank_fn = _runtime_kernel(_keyed(_RANK, "unsigned long long" if (n + 1) * k >= 2**32 else "unsigned int"),
                              "sl_rank_entries")
    pos, order = xp.empty(k, np.int64), xp.empty(k, np.int64)
    blocks = -(-k // 256)
    if k <= _RANK_ONE:
        rank_fn((blocks,), (256,), (idx, np.uint64(0), pos, order, np.int64(n), np.int32(k), np.int32(k)))
        return pos, order
    splits = max(1, 4 * 132 // blocks)  # (about four blocks an SM of the H200)
    chunk = 1024 * -(-k // (1024 * splits))  # (whole tiles of compared keys)
    rank = xp.zeros(k, np.int32)
    rank_fn((blocks, -(-k // chunk)), (256,), (idx, rank, pos, order, np.int64(n), np.int32(k), np.int32(chunk)))
    _runtime_kernel(_PLACE, "sl_place_entries")((blocks,), (256,), (idx, rank, pos, order, np.int64(n), np.int32(k)))
    return pos, order


def scatter_at(xp: ModuleType, name: str, out: Any, idx: Any, values: Any, axis: int, presorted: bool = False,
               order: Any = None) -> Any:
    """Apply op ``name`` to ``out`` (a C-contiguous copy, written in place) at the positions
    ``idx`` along ``axis`` (negative ones wrapped once here) with ``values`` (``out``'s shape with
    ``len(idx)`` along ``axis``, of the op's loop dtype), as NumPy's ``ufunc.at`` (``presorted``:
    ``idx`` is sorted, each position's values in their order, or at ``order`` along ``axis``
    where given). Positions out of bounds are left
    out; returns whether there were any (on the GPU a 0-d array, not read back: the caller reads
    it once the pass is queued)."""
    n = out.shape[axis]
    if idx.shape[0] == 0 or out.size == 0:
        return bool(idx.shape[0]) and bool(((idx < -n) | (idx >= n)).any())
    if xp is np:
        values = values if order is None else np.take(values, order, axis)
        return _numpy_at(name, out, np.where(idx < 0, idx + n, idx), values, axis)
    from . import kernels

    k = idx.shape[0]
    pre, post = math.prod(out.shape[:axis]), math.prod(out.shape[axis + 1:])
    fn = _runtime_kernel(_source(name, out.dtype, values.dtype, 1 if post == 1 else _ELEMS), "sl_scatter_at",
                         kernels.op_ptxas_options(name, values.dtype))
    values, idx = xp.ascontiguousarray(values), xp.ascontiguousarray(idx)
    bad = xp.zeros((), np.int32)
    if _atomic(name, out.dtype, values.dtype):
        total = pre * k * post
        fn((min(-(-total // 256), 2**31 - 1),), (256,), (out, values, idx, _pointer(order), bad)
           + tuple(np.int64(a) for a in (n, k, post, total)))
        return bad
    pos, order = (idx, order) if presorted else sorted_entries(xp, idx, n)
    if post == 1 and order is not None:  # (one element a position: the values gathered in sorted order)
        values, order = xp.ascontiguousarray(xp.take(values, order, axis=axis)), None
    if post == 1:
        grid: tuple[int, ...] = (-(-(pre * k) // 256),)
    else:
        grid = (pre * k, -(-post // (128 * _ELEMS)))
    fn(grid, (256 if post == 1 else 128,), (out, values, pos, _pointer(order), bad)
       + tuple(np.int64(a) for a in (n, k, post, pre * k)))
    return bad


def _pointer(order: Any) -> Any:
    """``order`` as a kernel argument: a null pointer where the values come in the positions' order."""
    return np.uint64(0) if order is None else order


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
