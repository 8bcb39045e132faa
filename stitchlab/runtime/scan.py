"""The scans' passes on the GPU (``interpreter.scan_step``'s ``cumsum``, ``cumprod``, ``cummax`` and
``cummin``, CuPy only): running sums, products, maxima or minima along one axis of a C-contiguous array, viewed as
``(outer, n, inner)`` with the scan along ``n``. Each element is read and written once, except
in the last case below.

* ``inner == 1`` (the last axis, a row each), enough rows to fill the GPU (a block each,
  ``sl_scan_rows``): a block of 8 warps walks its row in tiles of 8 x 32 x 8 elements; each warp
  loads its 256 consecutive elements coalesced, turns them through shared memory so that each
  thread holds 8 consecutive ones, scans those in registers, then the thread totals across the
  warp by shuffles and the warp totals across the block, and stores through shared memory again.
* ``inner == 1``, too few rows (a long 1-d array, a handful of long rows; ``sl_scan_chained``):
  each row is cut into chunks of up to 8 such tiles (16K elements; 4 tiles of 8-byte values), a
  block each, in one pass by decoupled look-back (Merrill & Garland, "Single-pass Parallel Prefix
  Scan with Decoupled Look-back", 2016) in a fixed order: a block takes its chunk from an atomic
  ticket (so chunks start in order, and a block only ever waits on blocks already running), loads
  all of it into registers and scans it as above, publishes its total in a status word, reads the
  states of the 32 chunks before it (a warp) until one has published its running value (inclusive
  prefix), adds the totals after that one to it one by one, oldest first, publishes its own, and
  writes its outputs from it. The status words and the ticket are zeroed per call (a memset of
  CuPy's pool: no host sync, capturable into a graph). Each running value is thus the previous
  one plus the chunk's total, whatever the blocks' timing, so a scan gives the same bits in every
  call (a look-back that also adds up totals past its window, in a tree, groups them by how far
  back each block had to look: float results differed in the last bits from call to call until
  the rows fuzz family's first GPU run found it).
* ``inner > 1`` (another axis): a thread per ``(outer, inner)`` position walks down ``n``, its
  loads coalesced across the positions of a warp, where there are enough positions to fill the
  GPU. Fewer, and :data:`COLUMNS` or more, 4-byte values in and out (``sl_scan_columns``,
  :func:`columns_pay`): ``n`` is cut into chunks of up
  to 512 elements (256 of 8-byte sums), a block for 32 positions of a chunk, its 8 warps a
  segment of the chunk each (a thread's registers), scanned in one pass by the same fixed-order
  look-back, a thread of warp 0's own down its position (reading the states of :data:`LOOK`
  chunks before its own at once, until one has published its running value). Fewer positions
  still: chunks scanned in three passes, the chunks' totals, their running totals (a scan of
  those, by this module again), then each chunk scanned from the running total before it (so
  the input is read twice).

The result's dtype is NumPy's (``cumsum`` of int8 is int64); integers wrap around as NumPy's do
(computed unsigned); float sums and products are combined in the order above, not NumPy's
sequential one, as any parallel scan (CuPy's too). Float sums start from -0.0 (-0.0 + x is x for
every x), so a ``cumsum`` of negative zeros is negative zeros, as NumPy's. CuPy's own scans took
1.17 ms for 8192 x 4096 float32 along the rows on an H100; see docs/performance.md, "Scans".
"""

from __future__ import annotations

import functools
import math
from types import ModuleType
from typing import Any

import numpy as np

from ..codegen.ctypes import SCAN_REDUCTIONS, scan_identity_literal, storage_type
from ..codegen.preamble import PREAMBLE
from ..ir.dtypes import is_low_float
from ..ir.ops import EXTREMA_SCANS, OPS, keeps_earlier_ties

_PLAIN = frozenset(np.dtype(t) for t in (bool, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
                                          np.uint64, np.float32, np.float64))


def scanned(dtype: np.dtype) -> bool:
    """Whether this module scans ``dtype`` (every dtype stitchlab has; float16 and bfloat16
    accumulated in float32)."""
    return dtype in _PLAIN or is_low_float(dtype)


_WARPS, _ITEMS = 8, 8
#: a block's tile along a row
TILE = _WARPS * 32 * _ITEMS
#: at least this many blocks (row scans) or threads (other axes) a pass, per SM, before the rows
#: or positions are cut into chunks
_BLOCKS_PER_SM, _THREADS_PER_SM = 4, 2048

#: the chunks before its own whose states a thread of ``sl_scan_columns`` reads at once, and
#: the warps of its block (each a segment of the chunk at the block's 32 positions)
LOOK, GROUPS = 16, 8
#: about this many blocks of ``sl_scan_columns`` a SM (two fit at once), before the positions are
#: cut into fewer, longer chunks
_COLUMN_BLOCKS_PER_SM = 8

#: a null pointer argument (no running totals before the chunks)
_NULL = np.uint64(0)

_SOURCE = r"""
typedef TIN tin;
typedef TACC T;
typedef TOUT tout;
#define WARPS %(warps)d
#define ITEMS %(items)d
#define TILES %(tiles)d
#define CITEMS %(citems)d
#define LOOK %(look)d
#define GROUPS %(groups)d
#define TILE (WARPS * 32 * ITEMS)
__device__ __forceinline__ T sl_op(T a, T b) { return OP; }
__device__ __forceinline__ int sl_pad(int k) { return k + k / 32; }
// a running value a float16 result cannot hold as NumPy's float16 scan would (interpreter._half_scan)
__device__ __forceinline__ bool sl_leaves(T v) { return LEAVES; }

// a warp's ITEMS x 32 elements from w0 (a[j]: element j * 32 + lane, coalesced; IDENT from stop on)
__device__ __forceinline__ void sl_load(T (&a)[ITEMS], const tin* __restrict__ x, long long w0, long long stop, int lane) {
  #pragma unroll
  for (int j = 0; j < ITEMS; ++j) {
    const long long i = w0 + j * 32 + lane;
    a[j] = i < stop ? (T)sl_from_storage(x[i]) : IDENT;
  }
}

// a (as loaded) to thread order through the warp's s (a[j]: element lane * ITEMS + j), scanned in
// the thread and across the warp; returns the warp's running value through this thread's last
// element, *before the previous lane's
__device__ __forceinline__ T sl_warp_scan(T (&a)[ITEMS], T* s, int lane, T& before) {
  __syncwarp();
  #pragma unroll
  for (int j = 0; j < ITEMS; ++j) s[sl_pad(j * 32 + lane)] = a[j];
  __syncwarp();
  #pragma unroll
  for (int j = 0; j < ITEMS; ++j) a[j] = s[sl_pad(lane * ITEMS + j)];
  #pragma unroll
  for (int j = 1; j < ITEMS; ++j) a[j] = sl_op(a[j - 1], a[j]);
  T incl = a[ITEMS - 1];
  #pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    const T y = __shfl_up_sync(0xffffffffu, incl, d);
    if (lane >= d) incl = sl_op(y, incl);
  }
  before = __shfl_up_sync(0xffffffffu, incl, 1);
  return incl;
}

// lead op a[j] (thread order) back through s to out[w0 + j * 32 + lane] short of stop; returns
// whether one sl_leaves
__device__ __forceinline__ bool sl_store_tile(const T (&a)[ITEMS], T lead, T* s, tout* __restrict__ out, long long w0,
                                              long long stop, int lane) {
  __syncwarp();
  #pragma unroll
  for (int j = 0; j < ITEMS; ++j) s[sl_pad(lane * ITEMS + j)] = sl_op(lead, a[j]);
  __syncwarp();
  bool left = false;
  #pragma unroll
  for (int j = 0; j < ITEMS; ++j) {
    const long long i = w0 + j * 32 + lane;
    if (i < stop) {
      const T v = s[sl_pad(j * 32 + lane)];
      left |= sl_leaves(v);
      sl_store(out + i, v);
    }
  }
  return left;
}

// rows of n elements, a block each (grid-stride): tiles of TILE in turn, each from the running
// value before it, into out; flag: set where a result sl_leaves
extern "C" __global__ void __launch_bounds__(WARPS * 32) sl_scan_rows(
    const tin* __restrict__ x, tout* __restrict__ out, unsigned int* __restrict__ flag, long long rows, long long n) {
  __shared__ T sm[WARPS][32 * ITEMS + ITEMS];
  __shared__ T wtot[WARPS];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  bool left = false;
  for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
    const tin* xr = x + r * n;
    tout* orow = out + r * n;
    T carry = IDENT;
    for (long long t0 = 0; t0 < n; t0 += TILE) {
      const long long w0 = t0 + (long long)warp * 32 * ITEMS;
      T a[ITEMS], before;
      sl_load(a, xr, w0, n, lane);
      const T incl = sl_warp_scan(a, sm[warp], lane, before);
      if (lane == 31) wtot[warp] = incl;
      __syncthreads();
      T lead = carry, block = IDENT;
      #pragma unroll
      for (int k = 0; k < WARPS; ++k) {
        const T u = wtot[k];
        if (k < warp) lead = sl_op(lead, u);
        block = sl_op(block, u);
      }
      if (lane > 0) lead = sl_op(lead, before);
      carry = sl_op(carry, block);
      left |= sl_store_tile(a, lead, sm[warp], orow, w0, n, lane);
      __syncthreads();  // (wtot is written again by the next tile)
    }
  }
  if (left) *flag = 1u;
}

// The chunks' states: word[t] (after the ticket, status[0]) is 0 (nothing yet), 1 (chunk t's
// total published) or 2 (its inclusive prefix, the running value through its end, published).
// Where T fits 4 bytes the value is packed into the word's low half (one 8-byte store: the value
// and its status at once); else it is in values (totals, then inclusive prefixes: a reader that
// saw 1 must not read a prefix written after), stored before the word with a fence between.
#define PACKED (sizeof(T) <= 4)
__device__ __forceinline__ void sl_publish(unsigned long long* words, T* values, long long tiles, long long t, unsigned int st, T v) {
  if (PACKED) {
    union { T v; unsigned int b; } u;
    u.b = 0u;
    u.v = v;
    *(volatile unsigned long long*)(words + t) = ((unsigned long long)st << 32) | u.b;
  } else {
    *(volatile T*)(values + (st == 2u ? tiles : 0) + t) = v;
    __threadfence();
    *(volatile unsigned long long*)(words + t) = st;
  }
}
__device__ __forceinline__ unsigned int sl_peek(const unsigned long long* words, const T* values, long long tiles, long long t, T& v) {
  const unsigned long long w = *(const volatile unsigned long long*)(words + t);
  const unsigned int st = PACKED ? (unsigned int)(w >> 32) : (unsigned int)w;
  if (PACKED) {
    union { T v; unsigned int b; } u;
    u.b = (unsigned int)w;
    v = u.v;
  } else if (st != 0u) {
    __threadfence();
    v = *(const volatile T*)(values + (st == 2u ? tiles : 0) + t);
  }
  return st;
}

// rows of n elements cut into chunks of `chunk` (a multiple of TILE, at most TILES of them), a
// block each (grid: rows * chunks), in one pass: the block takes its chunk from the ticket
// (status[0]; chunks start in order, so that a block only waits on blocks already running), loads
// it all into registers, scans it (TILES tiles of the row kernel's), publishes its total, adds the
// totals after the nearest published inclusive prefix among its 32 predecessors to it in order
// (warp 0: the same bits in every call), publishes its own and writes its outputs from it.
// status: zeroed, 1 + rows * chunks words; values: 2 * rows * chunks where T is wider than 4 bytes
extern "C" __global__ void __launch_bounds__(WARPS * 32, 2) sl_scan_chained(
    const tin* __restrict__ x, tout* __restrict__ out, unsigned long long* status, T* values,
    unsigned int* __restrict__ flag, long long rows, long long n, long long chunk) {
  __shared__ T sm[WARPS][32 * ITEMS + ITEMS];
  __shared__ T wtot[TILES][WARPS];
  __shared__ T prefix;
  __shared__ unsigned int ticket;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (threadIdx.x == 0) ticket = atomicAdd((unsigned int*)status, 1u);
  __syncthreads();
  unsigned long long* words = status + 1;
  const long long chunks = (n + chunk - 1) / chunk, tiles = rows * chunks, t = ticket;
  const long long r = t / chunks, c = t - r * chunks;
  const long long start = c * chunk, stop = min(n, start + chunk);
  const tin* xr = x + r * n;
  tout* orow = out + r * n;
  T a[TILES][ITEMS], lead[TILES];
  #pragma unroll
  for (int k = 0; k < TILES; ++k) sl_load(a[k], xr, start + k * TILE + warp * 32 * ITEMS, stop, lane);
  #pragma unroll
  for (int k = 0; k < TILES; ++k) {
    T incl = IDENT;
    lead[k] = IDENT;
    if (start + k * TILE < stop) incl = sl_warp_scan(a[k], sm[warp], lane, lead[k]);  // (the same for the block)
    if (lane == 31) wtot[k][warp] = incl;
  }
  __syncthreads();
  T total = IDENT;
  #pragma unroll
  for (int k = 0; k < TILES; ++k) {
    T mine = total;
    #pragma unroll
    for (int w = 0; w < WARPS; ++w) {
      if (w == warp) mine = total;
      total = sl_op(total, wtot[k][w]);
    }
    lead[k] = lane > 0 ? sl_op(mine, lead[k]) : mine;
  }
  // P(c - 1), the running value before chunk c, where P(k) = P(k - 1) op total(k): warp 0 reads
  // the 32 chunks before c (lane k: chunk c - 1 - k) until one holds its P (the nearest: j; the
  // ones after it hold their totals), then folds P(j) op total(j + 1) op ... op total(c - 1) in
  // turn: the same bits however far the other blocks had got
  if (c == 0) {
    if (threadIdx.x == 0) sl_publish(words, values, tiles, t, 2u, total);
  } else if (warp == 0) {
    if (lane == 0) sl_publish(words, values, tiles, t, 1u, total);
    const long long q = t - 1 - lane;
    T v = IDENT;
    int nearest;
    for (;;) {
      unsigned int st = 2u;  // (before the row's start: never the nearest, chunk 0 publishes its P)
      if (q >= t - c) {
        do st = sl_peek(words, values, tiles, q, v); while (st == 0u);
      }
      const unsigned int found = __ballot_sync(0xffffffffu, st == 2u);
      if (found) {
        nearest = __ffs(found) - 1;
        break;
      }
    }
    T before = __shfl_sync(0xffffffffu, v, nearest);
    for (int k = nearest - 1; k >= 0; --k) before = sl_op(before, __shfl_sync(0xffffffffu, v, k));
    if (lane == 0) {
      sl_publish(words, values, tiles, t, 2u, sl_op(before, total));
      prefix = before;
    }
  }
  __syncthreads();
  bool left = false;
  const T before = c == 0 ? IDENT : prefix;
  #pragma unroll
  for (int k = 0; k < TILES && start + k * TILE < stop; ++k) {
    const long long w0 = start + k * TILE + warp * 32 * ITEMS;
    left |= sl_store_tile(a[k], c == 0 ? lead[k] : sl_op(before, lead[k]), sm[warp], orow, w0, stop, lane);
  }
  if (left) *flag = 1u;
}

// (outer, n, inner) with n cut into chunks of `chunk` (GROUPS segments of chunk / GROUPS <=
// CITEMS), in one pass: the block of ticket t (status[0]: tickets in order, so a block only waits
// on blocks already running) takes 32 positions p of chunk c of outer o (t = (o * chunks + c) *
// pblocks + the 32 positions' block), warp g segment g of the chunk at its lane's position. Each
// thread loads its segment into registers and scans it; warp 0 folds the segments' totals into
// the chunk's, publishes it (word (o * chunks + c) * inner + p), reads the states of the LOOK
// chunks before c down its position at once until one has published its running value (the
// nearest: the ones after it hold their totals), folds those totals after it in turn (the same
// bits whatever the other blocks' timing) and publishes its own; each thread then writes its
// segment from that value op the totals of the segments before its own. status: zeroed, 1 +
// outer * chunks * inner words; values: twice that many where T is wider than 4 bytes
extern "C" __global__ void __launch_bounds__(32 * GROUPS) sl_scan_columns(
    const tin* __restrict__ x, tout* __restrict__ out, unsigned long long* status, T* values,
    unsigned int* __restrict__ flag, long long outer, long long n, long long inner, long long chunk) {
  __shared__ T seg[GROUPS][32];
  __shared__ T prefix[32];
  __shared__ unsigned int ticket;
  const int lane = threadIdx.x & 31, g = threadIdx.x >> 5;
  if (threadIdx.x == 0) ticket = atomicAdd((unsigned int*)status, 1u);
  __syncthreads();
  unsigned long long* words = status + 1;
  const long long chunks = (n + chunk - 1) / chunk, pblocks = (inner + 31) / 32;
  const long long tiles = outer * chunks * inner, t = ticket;
  const long long oc = t / pblocks, p = (t - oc * pblocks) * 32 + lane;
  const long long o = oc / chunks, c = oc - o * chunks, per = chunk / GROUPS, first = c * chunk + g * per;
  const long long rows = p < inner ? max(0LL, min(per, n - first)) : 0LL;  // (this thread's)
  const long long base = (o * n + first) * inner + p;
  T a[CITEMS];
  #pragma unroll
  for (int i = 0; i < CITEMS; ++i) a[i] = i < rows ? (T)sl_from_storage(x[base + i * inner]) : IDENT;
  #pragma unroll
  for (int i = 1; i < CITEMS; ++i) a[i] = sl_op(a[i - 1], a[i]);
  seg[g][lane] = a[CITEMS - 1];
  __syncthreads();
  if (g == 0) {
    T total = seg[0][lane], before = IDENT;
    #pragma unroll
    for (int k = 1; k < GROUPS; ++k) total = sl_op(total, seg[k][lane]);
    const long long me = oc * inner + p;
    if (p < inner && c == 0) {
      sl_publish(words, values, tiles, me, 2u, total);
    } else if (p < inner) {
      sl_publish(words, values, tiles, me, 1u, total);
      T v[LOOK];
      int nearest = -1;
      while (nearest < 0) {  // (k: chunk c - 1 - k; before the slice's start: never the nearest)
        unsigned int st[LOOK];
        #pragma unroll
        for (int k = 0; k < LOOK; ++k) st[k] = k < c ? sl_peek(words, values, tiles, me - (k + 1) * inner, v[k]) : 2u;
        #pragma unroll
        for (int k = 0; k < LOOK; ++k) {
          while (st[k] == 0u) st[k] = sl_peek(words, values, tiles, me - (k + 1) * inner, v[k]);
          if (nearest < 0 && st[k] == 2u) nearest = k;
        }
      }
      #pragma unroll
      for (int k = LOOK - 1; k >= 0; --k) {  // (its running value, then the totals after it in order)
        if (k == nearest) before = v[k];
        else if (k < nearest) before = sl_op(before, v[k]);
      }
      sl_publish(words, values, tiles, me, 2u, sl_op(before, total));
    }
    prefix[lane] = before;
  }
  __syncthreads();
  T lead = prefix[lane];
  for (int k = 0; k < g; ++k) lead = sl_op(lead, seg[k][lane]);
  tout* dst = out + base;
  bool left = false;
  #pragma unroll
  for (int i = 0; i < CITEMS; ++i) {
    if (i < rows) {
      const T y = sl_op(lead, a[i]);
      left |= sl_leaves(y);
      sl_store(dst + i * inner, y);
    }
  }
  if (left) *flag = 1u;
}

// (outer, n, inner): the thread of (o, c, p) scans chunk c of n at position p of outer o from the
// running total before it (offsets (outer, chunks, inner), for c > 0) into out; totals: it writes
// the chunk's total to sums[(o * chunks + c) * inner + p] instead; flag as above
extern "C" __global__ void __launch_bounds__(256) sl_scan_axis(
    const tin* __restrict__ x, tout* __restrict__ out, T* __restrict__ sums, const T* __restrict__ offsets,
    unsigned int* __restrict__ flag, long long outer, long long n, long long inner, long long chunk, int totals) {
  const long long chunks = (n + chunk - 1) / chunk;
  const long long all = outer * chunks * inner;
  bool left = false;
  for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < all; t += (long long)gridDim.x * blockDim.x) {
    const long long p = t %% inner, oc = t / inner, c = oc %% chunks, o = oc / chunks;
    const long long start = c * chunk, stop = min(n, start + chunk);
    const long long base = o * n * inner + p;
    T carry = (offsets != nullptr && c > 0) ? offsets[t - inner] : IDENT;
    long long i = start;
    for (; i + 8 <= stop; i += 8) {
      T v[8];
      #pragma unroll
      for (int u = 0; u < 8; ++u) v[u] = (T)sl_from_storage(x[base + (i + u) * inner]);
      #pragma unroll
      for (int u = 0; u < 8; ++u) {
        carry = sl_op(carry, v[u]);
        if (!totals) {
          left |= sl_leaves(carry);
          sl_store(out + base + (i + u) * inner, carry);
        }
      }
    }
    for (; i < stop; ++i) {
      carry = sl_op(carry, (T)sl_from_storage(x[base + i * inner]));
      if (!totals) {
        left |= sl_leaves(carry);
        sl_store(out + base + i * inner, carry);
      }
    }
    if (totals) sums[t] = carry;
  }
  if (left) *flag = 1u;
}
"""


def result_dtype(op: str, dtype: np.dtype) -> np.dtype:
    """NumPy's dtype of ``op`` (``"cumsum"``/``"cumprod"``/``"cummax"``/``"cummin"``) over ``dtype``."""
    return _result_dtype(op, np.dtype(dtype))


@functools.cache
def _result_dtype(op: str, dtype: np.dtype) -> np.dtype:
    return OPS[op].numpy(np.ones(1, dtype)).dtype


#: the float16 range test of a float32 running value (:func:`interpreter._outside_half`'s, in CUDA)
HALF_RANGE = """
__device__ __forceinline__ bool sl_leaves_half(float y, bool product) {
  const float s = fabsf(y);
  return (s >= 65520.0f && !isinf(s)) || (product && s <= 2.98023223876953125e-08f && s != 0.0f);
}
"""


def accumulator(dtype: np.dtype) -> np.dtype:
    """The dtype a scan into ``dtype`` runs in: float32 for float16 and bfloat16, else its own."""
    return np.dtype(np.float32) if is_low_float(dtype) else np.dtype(dtype)


def source(op: str, dtype: np.dtype, out: np.dtype) -> str:
    """The CUDA source of the scan kernels of ``op`` reading ``dtype`` and writing ``out`` (a
    running maximum or minimum ``op + "_first"``: of equal values the earlier, see :func:`scan`)."""
    acc = accumulator(out)
    first = op.endswith("_first")
    op = op.removesuffix("_first")
    if op in EXTREMA_SCANS:  # (the row kernels' functors: NumPy's first NaN, its choice of equal values)
        expr = f"sl_op_running_{'max' if op == 'cummax' else 'min'}{'_first' if first else ''}()(a, b)"
    elif acc.kind in "iub":  # (wrapping around as NumPy's: in unsigned arithmetic)
        u = storage_type(np.dtype(f"uint{8 * acc.itemsize}"))
        sign = "+" if op == "cumsum" else "*"
        expr = f"(T)(({u})a {sign} ({u})b)"
    else:
        expr = "a + b" if op == "cumsum" else "a * b"
    leaves = f"sl_leaves_half(v, {str(op == 'cumprod').lower()})" if out == np.float16 and op not in EXTREMA_SCANS else "false"
    head = (f"#define TIN {storage_type(dtype)}\n#define TACC {storage_type(acc)}\n#define TOUT {storage_type(out)}\n"
            f"#define OP {expr}\n#define IDENT (T){scan_identity_literal(SCAN_REDUCTIONS[op], acc)}\n#define LEAVES {leaves}\n")
    return PREAMBLE + HALF_RANGE + head + _SOURCE % {"warps": _WARPS, "items": _ITEMS, "tiles": chunk_tiles(acc.itemsize),
                                                  "citems": column_chunk(acc.itemsize), "look": LOOK,
                                                  "groups": GROUPS}


@functools.cache
def _kernels(cp: ModuleType, op: str, dtype: np.dtype, out: np.dtype) -> tuple[Any, Any, Any, Any]:
    module = cp.RawModule(code=source(op, dtype, out), options=("--std=c++17",))
    return tuple(module.get_function(f"sl_scan_{k}") for k in ("rows", "chained", "axis", "columns"))


@functools.cache
def _sm_count(cp: ModuleType, device: int) -> int:
    return int(cp.cuda.runtime.getDeviceProperties(device)["multiProcessorCount"])


def scan(cp: ModuleType, op: str, x: Any, axis: int, dtype: np.dtype | None = None, flag: Any = None) -> Any:
    """``getattr(cupy, op)(x, axis=axis, dtype=dtype)`` for ``op`` ``"cumsum"`` or ``"cumprod"``
    (or NumPy's ``maximum``/``minimum.accumulate``: ``"cummax"``/``"cummin"``) and ``x`` of a
    :func:`scanned` dtype (``dtype``: the result's, NumPy's by default; float16
    and bfloat16 results are accumulated in float32 and rounded once each). ``flag``: a CuPy
    uint32 array of one zero, set to 1 where a float16 result leaves float16's range
    (:data:`HALF_RANGE`; then :func:`half_fixup`, or the interpreter's fix-up)."""
    out_dtype = result_dtype(op, x.dtype) if dtype is None else np.dtype(dtype)
    if keeps_earlier_ties(op, out_dtype):  # (float16: of equal values the earlier; running values in float32)
        op += "_first"
    x = cp.ascontiguousarray(x)
    out = cp.empty(x.shape, out_dtype)
    if x.size == 0:
        return out
    axis = axis % x.ndim
    outer, n, inner = math.prod(x.shape[:axis]), x.shape[axis], math.prod(x.shape[axis + 1:])
    _run(cp, op, x, out, outer, n, inner, _NULL if flag is None else flag)
    return out


def _device_id(cp: ModuleType) -> int:
    return int(cp.cuda.Device().id)


def chunk_tiles(itemsize: int) -> int:
    """The tiles (:data:`TILE`) of a chunk of a row that one block of ``sl_scan_chained`` holds in
    its registers, for a running value of ``itemsize`` bytes: 64 values a thread (8 x 8, or 4 x 8
    of 8 bytes; two blocks fit a SM), 16K elements (8K of 8 bytes), so that its look-back, a few
    round trips to L2 of a microsecond or less, is short against the block's own traffic (128 KB in
    and out, about 10 us at its share of the memory bandwidth) and its chain of predecessors short
    (2048 chunks for 2**25 elements)."""
    return 8 if itemsize <= 4 else 4


def column_chunk(itemsize: int) -> int:
    """The most elements of a position's chunk segment one thread of ``sl_scan_columns`` holds in
    its registers, for a running value of ``itemsize`` bytes (as a block of ``sl_scan_chained``:
    64, or 32 of 8 bytes); a chunk is :data:`GROUPS` segments (512 elements, 256 of 8 bytes), so
    that its status word is 1/256 of its bytes in and out."""
    return 64 if itemsize <= 4 else 32


#: positions (``inner``) from which the scans down another axis that are too few to fill the GPU
#: are cut into chunks of ``sl_scan_columns`` (a warp's loads of a row 32 consecutive elements);
#: fewer: three passes
COLUMNS = 32


def _columns(sms: int, outer: int, inner: int) -> bool:
    """Whether a scan down another axis is ``sl_scan_columns``' (one pass with look-back), where
    its dtypes pay (:func:`columns_pay`)."""
    return inner >= COLUMNS and outer * inner < sms * _THREADS_PER_SM


def columns_pay(read: np.dtype, acc: np.dtype) -> bool:
    """Whether ``sl_scan_columns`` beats three passes reading ``read`` into running values of
    ``acc``: 4-byte values read and 4-byte running values (float32, 8192 x 4096 down the columns:
    119.8 against 167.4 us; 262144 x 128: 126.4 against 177.1; 64 x 1024 x 512 down the middle:
    109.8 against 165.0, H100, 2026-12-06). Running values of 8 bytes are slower in it (float64:
    367.8 against 300.0), and so are narrower reads (float16: 135.3 against 104.3), so those keep
    the three passes."""
    return np.dtype(read).itemsize == 4 and np.dtype(acc).itemsize == 4


def chunk_length(sms: int, outer: int, n: int, inner: int, itemsize: int, columns: bool = True) -> int:
    """The length of the chunks each of the ``outer * inner`` scans of ``n`` is cut into on a GPU of
    ``sms`` SMs: ``n`` (one pass) where there are enough rows (``inner == 1``: a block each, at
    least :data:`_BLOCKS_PER_SM` a SM) or positions (a thread each, :data:`_THREADS_PER_SM`) to fill
    it, else a multiple of the work a block's tile (a thread's loop) takes, so that about that many
    chunks run; a row's at most :func:`chunk_tiles` tiles (of a running value of ``itemsize``
    bytes), a block's. Down another axis of :data:`COLUMNS` positions or more, a multiple of
    :data:`GROUPS` (the segments of a block), about :data:`_COLUMN_BLOCKS_PER_SM` blocks a SM and at
    most :data:`GROUPS` times :func:`column_chunk` (one chunk, then, where that covers ``n``), unless
    not ``columns`` (dtypes that do not pay there: :func:`columns_pay`)."""
    if inner > 1 and columns and _columns(sms, outer, inner):
        blocks = outer * -(-inner // 32)
        chunks = min(-(-sms * _COLUMN_BLOCKS_PER_SM // blocks), -(-n // GROUPS))
        each = -(-n // chunks)
        return min(-(-each // GROUPS) * GROUPS, GROUPS * column_chunk(itemsize))
    want, have, unit = (sms * _BLOCKS_PER_SM, outer, TILE) if inner == 1 else (sms * _THREADS_PER_SM, outer * inner, 8)
    if have >= want:
        return n
    chunks = min(-(-want // have), -(-n // unit))
    if chunks <= 1:
        return n
    each = -(-n // chunks)
    each = -(-each // unit) * unit
    return min(each, chunk_tiles(itemsize) * TILE) if inner == 1 else each


def _run(cp: ModuleType, op: str, x: Any, out: Any, outer: int, n: int, inner: int, flag: Any) -> None:
    """Scan ``x`` (contiguous, viewed as ``(outer, n, inner)``) into ``out`` (contiguous, the
    result's dtype): rows in one pass (a block a row, or a block a chunk with look-back), other
    axes in one pass (a thread a position, or a thread a chunk with look-back) or three (module
    docstring)."""
    rows_kernel, chained_kernel, axis_kernel, columns_kernel = _kernels(cp, op, x.dtype, out.dtype)
    sms = _sm_count(cp, _device_id(cp))
    acc = accumulator(out.dtype)
    pays = columns_pay(x.dtype, acc)
    chunk = chunk_length(sms, outer, n, inner, acc.itemsize, pays)
    chunks, step = -(-n // chunk), 256
    if inner == 1 and chunks == 1:
        rows_kernel((min(outer, sms * 32),), (_WARPS * 32,), (x, out, flag, np.int64(outer), np.int64(n)))
        return
    if inner == 1:
        blocks = outer * chunks
        status = cp.zeros(1 + blocks, np.uint64)  # (the ticket, then each chunk's state: a memset, no host sync)
        values = _NULL if acc.itemsize <= 4 else cp.empty(2 * blocks, acc)
        chained_kernel((blocks,), (_WARPS * 32,), (x, out, status, values, flag, np.int64(outer), np.int64(n),
                                                   np.int64(chunk)))
        return
    if pays and _columns(sms, outer, inner):
        words = outer * chunks * inner
        status = cp.zeros(1 + words, np.uint64)
        values = _NULL if acc.itemsize <= 4 else cp.empty(2 * words, acc)
        columns_kernel((outer * chunks * -(-inner // 32),), (32 * GROUPS,),
                       (x, out, status, values, flag, np.int64(outer), np.int64(n), np.int64(inner), np.int64(chunk)))
        return

    def launch(sums: Any, offsets: Any, totals: bool) -> None:
        grid = min(-(-outer * chunks * inner // step), sms * 32)
        axis_kernel((grid,), (step,), (x, out, sums, offsets, flag, np.int64(outer), np.int64(n), np.int64(inner),
                                      np.int64(chunk), np.int32(totals)))

    if chunks == 1:
        launch(_NULL, _NULL, False)
        return
    sums = cp.empty(outer * chunks * inner, acc)  # (outer, chunks, inner)
    launch(sums, _NULL, True)
    running = cp.empty_like(sums)
    _run(cp, op, sums, running, outer, chunks, inner, _NULL)
    launch(_NULL, running, False)


#: float16 scans of at least this many positions (rows, or columns of another axis) get
#: :func:`half_fixup` on the device; fewer: one thread would walk a long row, and the interpreter
#: reads the flag back instead
FIXUP_POSITIONS = 4096

#: NumPy's float16 scan once it leaves float16's range (``interpreter._half_scan``'s fix-up, one
#: thread walking each position along the axis, only where the scan set ``flag``). From ``x``
#: (float16) and ``h`` (the scan, rounded from float32 running values y) alone: y overflowed at
#: the first h that is inf where no x so far is (else y is inf or NaN from the input), and for a
#: product underflowed at the first h that is zero where no x so far is zero (y reaches 0 only
#: through a zero factor before it passes 2**-25).
_FIXUP = r"""
extern "C" __global__ void __launch_bounds__(256) sl_half_fixup(
    const sl_half* __restrict__ x, sl_half* __restrict__ h, const unsigned int* __restrict__ flag,
    long long outer, long long n, long long inner, int product) {
  if (*flag == 0u) return;
  for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < outer * inner; t += (long long)gridDim.x * blockDim.x) {
    const long long base = (t / inner) * n * inner + t % inner;
    bool seen = false, overflowed = false, negative = false, parity = false, spoiled = false, inf_x = false, zero_x = false;
    for (long long i = 0; i < n; ++i) {
      const float xv = sl_h2f(x[base + i * inner]), hv = sl_h2f(h[base + i * inner]);
      inf_x |= isinf(xv);
      zero_x |= xv == 0.0f;
      parity ^= (bool)signbit(xv);
      const bool over = isinf(hv) && !inf_x;
      const bool first = !seen && (over || (product && hv == 0.0f && !zero_x));
      if (!seen && !first) continue;
      if (first) {
        seen = true;
        overflowed = over;
        negative = signbit(hv);
      } else {
        const bool spoiler = product ? (overflowed ? xv == 0.0f : isinf(xv)) : (isinf(xv) && (bool)signbit(xv) != negative);
        spoiled |= isnan(xv) || spoiler;
      }
      const float held = (product && !overflowed) ? 0.0f : __int_as_float(0x7f800000);
      const bool minus = product ? parity : negative;
      h[base + i * inner] = sl_f2h(spoiled ? __int_as_float(0x7fc00000) : (minus ? -held : held));
    }
  }
}
"""


@functools.cache
def _fixup_kernel(cp: ModuleType) -> Any:
    return cp.RawModule(code=PREAMBLE + _FIXUP, options=("--std=c++17",)).get_function("sl_half_fixup")


def half_fixup(cp: ModuleType, op: str, x: Any, h: Any, axis: int, flag: Any) -> None:
    """Rewrite ``h``, the float16 scan of ``x`` (both contiguous) along ``axis`` that set ``flag``
    (:func:`scan`), as NumPy's float16 scan stays once it leaves float16's range: on the device,
    nothing read back (:data:`_FIXUP`); a launch that returns at once where the flag is clear."""
    axis = axis % x.ndim
    outer, n, inner = math.prod(x.shape[:axis]), x.shape[axis], math.prod(x.shape[axis + 1:])
    grid = min(-(-outer * inner // 256), _sm_count(cp, _device_id(cp)) * 32)
    _fixup_kernel(cp)((max(grid, 1),), (256,), (x, h, flag, np.int64(outer), np.int64(n), np.int64(inner),
                                                np.int32(op == "cumprod")))
