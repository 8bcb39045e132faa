"""The two-level cost model.

* :func:`delta_cost` — the *delta evaluator* the plan search uses: a group's time as launch
  overhead plus the bytes it moves over bandwidth, with penalties for re-reading a domain that does
  not stay on chip, for too little parallelism, and for recomputing values. The search compares
  plans by the sum over their groups, which ranks plans exactly as "bytes and launches saved minus
  penalties" against the unfused plan does.
* :func:`choose_schedule` — the *latency evaluator*: for one group, every schedule of its family
  with its launch dimensions, estimated as waves of blocks × the work of a block, where a block's
  share of bandwidth shrinks when an SM holds too few warps to hide memory latency (occupancy from
  threads, registers and shared memory). The cheapest estimate wins.

Both are closed-form and fast; they are documented in docs/compiler.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

from ..ir.dtypes import is_low_float
from ..ir.node import Node
from ..ir.ops import ARG_REDUCTIONS, OPS
from .device import DeviceProfile
from .groups import (
    FULL,
    SCAN_REG_BUDGET,
    GroupInfo,
    nbytes,
    scan_tile_chunks,
    scan_words,
    scans_fit,
    tile_words,
)

#: A row kernel walking its rows in tiles (``cache="tiles"``): the share of its time each tile of a
#: row adds (``_row``)
TILE_COST = 0.002

#: Registers a thread may use for a row cache before the schedule spills to shared memory.
CACHE_REG_BUDGET = 64
#: 16-byte loads' worth of row data a row-schedule thread should have in flight (measured).
LOADS_IN_FLIGHT = 8
#: The same for a register-cached row kernel that stores full rows of 4-byte elements, at least
#: :data:`STORED_ROWS_MIN` long, where each thread loads at least two vectors of each input: its
#: blocks' stores keep the memory busy while other blocks load, and fewer registers a thread keep
#: more rows resident. Measured on the H200 (held, one process,
#: ``benchmarks/results/2026-12-04-h200-b769f62-row-block-probe.log``): float32 8192 x 4096 with
#: 512 threads (2 loads each) against 128 (8): softmax 63.5 / 64.8 us, layernorm 64.6 / 66.3,
#: rmsnorm 64.4 / 65.5, l2norm 64.1 / 64.8; layernorm 16384 x 2048 65.1 with 256 threads against
#: 66.8 with 64, 4096 x 8192 65.4 with 512 against 66.1 with 256. Not for float16 (layernorm
#: 4096 x 8192 37.7 with 512 threads against 34.4 with 256), nor with one vector of an input a
#: thread (float16 layernorm 8192 x 4096 with 512: 43.9 against 33.8), nor for kernels that store
#: no row (float32 logsumexp 38.7 with 512 threads against 31.9 with 128).
LOADS_IN_FLIGHT_STORED = 2
#: The shortest rows :data:`LOADS_IN_FLIGHT_STORED` applies to (the measured range is 2048 to 8192
#: elements; rows of 1024 keep a warp each, not measured against 128-thread blocks).
STORED_ROWS_MIN = 2048
#: Iterations of a streamed row loop the emitter unrolls (its loads in flight per thread); half
#: that for 8-byte inputs (see :func:`stream_unroll`).
STREAM_UNROLL = 8
#: Chunks of 16 bytes (``Schedule.vec`` elements) a streamed row loop with vectors unrolls.
STREAM_VEC_UNROLL = 4
#: Streamed rows of 16-byte chunks are read by 1024-thread blocks that walk their rows
#: (``Schedule.row_loop``: every pass after the first turns round, so it starts on what the pass
#: before read last, still in L2) over at most this many blocks an SM. Measured on the H200 at
#: 1024 x 128256 (one process, ``benchmarks/results/2026-12-05-h200-1352ee2-rowloop-sweep.log``;
#: µs, the walking kernel against the 128-thread row-a-block kernel chosen before): float16
#: logsumexp 100.2 against 121.5, softmax 218.6 against 268.4; float32 logsumexp 166.8 against
#: 240.1, softmax 394.0 against 533.2 (both with the sum of exps in the max's pass, 216.1 and
#: 485.0 without), layernorm 391.0 against 445.7. Other grids of 1024-thread blocks: a row a
#: block within 0.5 % of 4 an SM (float16 logsumexp 100.0, softmax 219.0; layernorm 389.6); 1 an
#: SM faster for float16 softmax (199.7) and float32 without the sum in the max's pass
#: (logsumexp 204.3, softmax 462.0), slower with it (233.3, 485.4) and for layernorm (428.6).
#: 128- and 256-thread blocks walking rows are slower than a row a block.
ROW_LOOP_BLOCKS_PER_SM = 4
#: The walking kernel's time relative to the best row-a-block streamed estimate: the worst of the
#: measured ratios above without the exps' sum in the max's pass (float32 softmax 485.0 / 533.2).
ROW_LOOP_GAIN = 0.91
#: Rows per thread a column schedule with ``cache=registers`` keeps in registers across passes.
COLUMN_CACHE = 32
#: Per pass, the extra time of a column schedule whose register cache holds part of each column.
COLUMN_PARTIAL_CACHE_PENALTY = 0.1
#: Time of a column schedule with several kept indices a thread (``Schedule.vec``, 8-byte
#: accesses) relative to the scalar one, by element size. Measured on the H200 at 8192 x 4096
#: (``benchmarks/results/2026-12-04-h200-e259394-column-lanes-ab-3.log``, planned kernels against
#: the scalar 32 x 32 one): float16 column normalization 57.0 against 63.4 us, x.sum(0) 19.4
#: against 21.7, x - x.max(0) with x.sum(0) 52.8 against 60.0; float32 100.9 against 102.3,
#: 31.7 against 33.4, 102.0 against 102.3. (Hand-written float16 column normalization with 2
#: columns a thread took 56.2-56.5 us against 55.2-55.5 with 4: ``…-colnorm-vec-probe.log``.)
COLUMN_VEC_GAIN = {2: 0.90, 4: 0.98}
#: Base registers of a kernel thread (indices, pointers, accumulators).
BASE_REGS = 32
#: Elementwise work rate of the whole GPU in "add-equivalents" per second (a rough number:
#: H100/H200 issue ~6.7e13 fp32 lane-ops/s; transcendental ops are weighted by their op cost).
COMPUTE_RATE = 4.0e13


@dataclass(frozen=True)
class Schedule:
    """How a kernel maps its domain onto threads.

    Attributes:
        family: "pointwise", "row_warp", "row_block", "row_split", "column", "column_split" or
            "interpreted".
        block: threads per block (x); for "column" and "column_split" the block is (32, ty),
            (32 / vec, ty) with several kept indices a thread.
        vec: elements per thread per step in "pointwise" (16-byte accesses where aligned), in
            row schedules along the row; kept indices per thread in "column" and "column_split"
            (8 bytes of them: :func:`column_vector_width`).
        cache: where a row's inputs stay between phases: "registers", "shared" or "none"; or
            "tiles" (a row_block group with scans whose row the registers do not hold: each pass
            walks the row in tiles held in registers, scanning each again).
        ty: threads along the reduced axis per column ("column", "column_split").
        index: C type of index arithmetic, "int" or "long long".
        prefetch: "row_block" with ``cache="registers"``: after its first reduction each block
            prefetches into L2 the inputs of the row this many rows ahead (the block that will
            take this one's place); 0: none.
        row_loop: "row_block" with ``cache="none"``: each block walks rows ``blockIdx.x``,
            ``blockIdx.x + gridDim.x``, ... and its passes over a row alternate direction (the
            second starts where the first ended, in L2), so that a grid smaller than the row count
            bounds the rows read at once. The planner takes it, with 1024-thread blocks, for rows of
            16-byte chunks too long for a block's registers (docs/compiler.md §4, "Streamed rows a
            block walks").
        few_rows: a walking ``row_loop`` kernel planned for no more rows than SMs, a block a row:
            its SMs are bound by instructions rather than memory, so its sums of exps are scaled
            once a 16-byte chunk even where it stores full-size outputs (``_group_maxima``;
            softmax over 64 x 128256 float32 on an H100: 44.8 against 50.3 us, where at 512 and
            1,024 rows it took 1 % longer).
        lanes: "row_warp": the lanes that hold a row, a power of two; fewer than 32 put several
            rows in a warp (rows shorter than 32 vectors, two vectors a lane, three where only
            the row's reductions are stored: ``short_row_lanes``).
    """

    family: str
    block: int = 256
    vec: int = 1
    cache: str = "none"
    ty: int = 1
    index: str = "int"
    prefetch: int = 0
    row_loop: bool = False
    few_rows: bool = False
    lanes: int = 32

    def params(self) -> dict[str, Any]:
        out = {"family": self.family, "block": self.block, "vec": self.vec, "cache": self.cache, "ty": self.ty,
               "index": self.index, "prefetch": self.prefetch}
        # (each only when set: the registry keys of the other kernels stay as they were)
        out.update({k: True for k in ("row_loop", "few_rows") if getattr(self, k)})
        if self.lanes != 32:
            out["lanes"] = self.lanes
        return out

    def __str__(self) -> str:
        extra = {"vec": self.vec, "cache": self.cache, "ty": self.ty, "prefetch": self.prefetch}
        shown = ", ".join([f"{k}={v}" for k, v in extra.items() if v not in (0, 1, "none")]
                          + ["row_loop"] * self.row_loop + ["few_rows"] * self.few_rows
                          + [f"lanes={self.lanes}"] * (self.lanes != 32))
        return f"{self.family}(block={self.block}{', ' + shown if shown else ''}, index={self.index})"


@dataclass(frozen=True)
class Launch:
    """Launch dimensions: ``grid`` and ``block`` as 3-tuples, dynamic ``shared_mem`` bytes, and
    ``split``: blocks per row of a "row_split" schedule, per tile of 32 columns of a
    "column_split" one (0 otherwise)."""

    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared_mem: int = 0
    split: int = 0


@dataclass
class Estimate:
    """A schedule with its launch and estimated seconds, and the numbers behind the estimate."""

    schedule: Schedule
    launch: Launch
    seconds: float
    detail: dict[str, float] = field(default_factory=dict)


def _reg_words(n: Node) -> int:
    return 2 if n.dtype.itemsize == 8 else 1


def _full_leaves(info: GroupInfo) -> list[Node]:
    """Inputs read at the full index (same shape as the domain): the ones a row cache holds."""
    return [i for i in info.inputs if info.is_full_leaf(i)]


def _full_nodes(info: GroupInfo) -> list[Node]:
    """The full inputs and the full outputs: the buffers a column schedule's lanes move."""
    return _full_leaves(info) + [o for o, lvl in info.outputs if lvl == FULL]


def stream_unroll(info: GroupInfo) -> int:
    """The unroll of a row pass that streams from memory. Measured on the H200
    (``benchmarks/kernel_sweep.py``, 128 x 65536 float32): softmax 50.3 us unrolled 4, 39.4 at 8,
    36.6 at 16; rmsnorm 45.5, 33.0, 36.9. Streamed float64 rows already spill at 4 (softmax: 160
    bytes, 408 at 8), so 8-byte inputs keep 4."""
    wide = any(i.dtype.itemsize > 4 for i in _full_leaves(info))
    return STREAM_UNROLL // 2 if wide else STREAM_UNROLL


def _elem_work(info: GroupInfo) -> float:
    # a one-hot sum read as the element it picks costs no work per element (nor its mask)
    picks, picked = info.one_hot_picks(), {}
    for r in info.reductions:
        if id(r) in picks:
            picked |= {id(n): n for n in (r, r.inputs[0], r.inputs[0].inputs[0])}  # the sum, its where, its ==
    work = info.op_cost - sum(OPS[n.op].cost for n in picked.values())  # (integers: exact)
    if info.evaluated:  # (a member evaluated at several positions is computed at each)
        by_id = {id(n): n for n in info.members}
        work += sum(OPS[by_id[i].op].cost * (k - 1) for i, k in info.evaluated.items()
                    if by_id[i].op != "astype" and i not in picked)
    return work


#: The largest extent that gets ``int`` index arithmetic. A kernel's indices run past its largest
#: extent, and that overshoot must not wrap around: a thread's last vector or a loop counter one
#: ``blockDim`` past the end, and in split reductions the end of the last block's share,
#: ``G * chunk``, up to ``G * block`` past the row (1056 blocks of 256 threads on the H200: 270K).
#: 2**24 covers that on any GPU of up to 8192 SMs. (At 2**31 - 4096 elements a vectorized loop
#: condition overflowed and read out of bounds on the H200.)
INT_INDEX_LIMIT = 2**31 - 1 - 2**24


def _index_type(info: GroupInfo) -> str:
    biggest = max([math.prod(info.shape)] + [math.prod(n.shape) for n in info.inputs] + [math.prod(o.shape) for o, _ in info.outputs])
    return "long long" if biggest > INT_INDEX_LIMIT else "int"


def _passes(info: GroupInfo) -> int:
    """Passes of a reduction kernel that re-reads its domain: one per phase (variances share the
    mean's pass, :meth:`GroupInfo.one_pass_variances`; a scan, none: a kernel that walks its row in
    tiles scans each tile in the passes that read the scan), plus one storing full outputs."""
    phases = len({info.depth[id(r)] for r in info.reductions}) if info.scans else info.phases
    phases -= 1 if info.one_pass_variances() else 0
    return phases + (1 if info.stores_full else 0)


def _splittable(info: GroupInfo) -> bool:
    """Whether a split schedule ("row_split", "column_split") may serve ``info``: one pass over
    the domain (a variance shares its mean's) and no per-element outputs. (A split block steps
    up its chunk's positions, as argmax/argmin need.) Not a group with scans: its running values
    go through the row in order."""
    return _passes(info) <= 1 and not info.scans


def _reread_factor(info: GroupInfo, cached: bool) -> float:
    if info.kind != "reduce":
        return 1.0
    passes = _passes(info)
    return 1.0 if cached or passes <= 1 else float(passes)


def _row_splits(R: int, K: int, dev: DeviceProfile) -> bool:
    """Whether a one-pass row group of ``R`` rows of ``K`` may split each row over blocks
    ("row_split"): few rows, each long."""
    return 0 < R and R * 4 < dev.sms * 8 and K >= 4096


def _column_splits(R: int, K: int, dev: DeviceProfile) -> bool:
    """Whether a one-pass column group of ``R`` kept and ``K`` reduced indices may be split
    over blocks along the reduced axis ("column_split"): fewer tiles of 32 columns than SMs,
    and a reduced axis long enough to share."""
    return 0 < R and math.ceil(R / 32) < dev.sms and K >= 1024


def delta_cost(info: GroupInfo, dev: DeviceProfile) -> float:
    """Estimated seconds of one group for the plan search (the delta evaluator)."""
    # (the inputs' bytes by shape, summed as the group was made: ints, the same in any order)
    in_bytes = info.in_bytes
    if info.kind == "interpreted":
        return 4 * dev.launch_overhead + sum(in_bytes.values()) / dev.bandwidth * 2
    size = math.prod(info.shape)
    out_bytes = sum(nbytes(o) for o, _ in info.outputs)
    full_in = in_bytes.get(info.shape, 0)
    if info.full_reads:  # (inputs of another shape read at the full index: reduce groups)
        full_in += sum(nbytes(i) for i in info.inputs if i.shape != info.shape and info.is_full_leaf(i))
    other_in = sum(in_bytes.values()) - full_in
    rows, cols = info.rows, info.cols
    if info.kind == "reduce":
        # the row stays on chip if a block's share of registers/shared memory holds it
        per_row = sum(i.dtype.itemsize for i in _full_leaves(info)) * cols
        # (a column schedule's register cache holds COLUMN_CACHE rows for each of up to 32
        # threads along the reduced axis)
        cached = per_row <= 96 * 1024 if info.inner_reduced else cols <= COLUMN_CACHE * 32
        cached = cached or (bool(info.scans) and scans_fit(info))  # (else it walks the row in tiles)
        factor = _reread_factor(info, cached)
        if not cached and info.inner_reduced and factor > 1:
            factor = 1.0 + 0.35 * (factor - 1.0)  # re-reads of a row mostly hit L2
        multi = info.phases > 1 or info.stores_full
        one_pass = _splittable(info)
        threads = rows * min(cols, 1024) if multi and not (one_pass and _row_splits(rows, cols, dev)) else size
        if not info.inner_reduced:
            threads = rows * min(cols, 32)
            if one_pass and _column_splits(rows, cols, dev) and threads < dev.sms * 512:
                # too few columns to fill the GPU at 32 threads each (the SMs half empty):
                # "column_split" spreads the reduced axis, 16 or more rows per thread
                threads = max(threads, size // 16)
    else:
        factor = 1.0
        threads = size
    eff = min(1.0, max(threads, 1) / (dev.sms * 1024))
    eff = max(eff, 1e-3)
    moved = full_in * factor + other_in + out_bytes
    recompute = 1.5 if info.phases > 1 else 1.0  # later phases recompute part of the chain
    compute = size * _elem_work(info) * recompute / COMPUTE_RATE
    # memory traffic and arithmetic overlap; the slower one sets the time
    return dev.launch_overhead + max(moved / (dev.bandwidth * eff), compute)


# --- latency evaluator ---------------------------------------------------------------------------
def _occupancy(dev: DeviceProfile, threads: int, regs: int, smem: int) -> int:
    by_threads = dev.max_threads_per_sm // threads
    by_regs = dev.regs_per_sm // (max(regs, 16) * threads)
    by_smem = dev.smem_per_sm // smem if smem else dev.max_blocks_per_sm
    return max(0, min(by_threads, by_regs, by_smem, dev.max_blocks_per_sm))


def _timed(dev: DeviceProfile, blocks: int, threads: int, regs: int, smem: int, block_bytes: float,
           block_work: float) -> tuple[float, dict[str, float]]:
    occ = _occupancy(dev, threads, regs, smem)
    if occ == 0 or blocks == 0:
        return math.inf if occ == 0 else dev.launch_overhead, {"occupancy": occ}
    slots = dev.sms * occ
    waves = math.ceil(blocks / slots)
    resident = min(blocks, slots)
    per_sm_blocks = math.ceil(resident / dev.sms)
    warps = per_sm_blocks * threads / 32
    sm_bw = dev.bandwidth / dev.sms * min(1.0, warps / dev.warps_to_saturate)
    wave = max(per_sm_blocks * block_bytes / sm_bw, per_sm_blocks * block_work / (COMPUTE_RATE / dev.sms))
    seconds = dev.launch_overhead + waves * wave
    return seconds, {"occupancy": occ, "waves": waves, "warps_per_sm": warps}


def _pointwise(info: GroupInfo, dev: DeviceProfile, n_eval: int | None = None) -> list[Estimate]:
    n = n_eval if n_eval is not None else math.prod(info.shape)
    index = _index_type(info)
    item = max([o.dtype.itemsize for o, _ in info.outputs] + [i.dtype.itemsize for i in _full_leaves(info)])
    vec = max(1, 16 // item)
    scale = n / max(1, math.prod(info.shape))
    total = (sum(nbytes(i) for i in info.inputs) + sum(nbytes(o) for o, _ in info.outputs)) * scale
    work = n * _elem_work(info)
    out = []
    for block in (128, 256, 512):
        for v in (1, vec) if vec > 1 else (1,):
            per_block = block * v
            needed = max(1, math.ceil(n / per_block))
            # one step per thread, no grid-stride loop: measured on the H200 (8192x4096 float32)
            # bias+GELU 67.3 us against 76.8 with a grid of 4 blocks per resident slot, Adam
            # 231 against 251 (the scheduler keeps every SM's loads in flight across blocks)
            grid = needed
            # a thread holds v elements of every buffer: 2 registers per 4 bytes of a vector
            secs, detail = _timed(dev, grid, block, BASE_REGS + 2 * v * item, 0, total / grid, work / grid)
            if v == 1 and vec > 1:
                secs *= 1.05  # narrower accesses issue more instructions per byte
            sched = Schedule("pointwise", block=block, vec=v, index=index)
            out.append(Estimate(sched, Launch((grid if n else 0, 1, 1), (block, 1, 1)), secs, detail))
    return out


def _cache_choice(info: GroupInfo, team: int, block: int, dev: DeviceProfile) -> tuple[str, int, int]:
    """(cache kind, registers per thread, shared bytes per block) for a row schedule."""
    leaves = _full_leaves(info)
    multi = info.phases > 1 or info.stores_full
    if info.scans:  # (the row or a tile of it in registers: the scans' running values are held there)
        words = math.ceil(info.cols / team) * scan_words(info)
        if words <= SCAN_REG_BUDGET:
            return "registers", BASE_REGS + words, 0
        words, vec = tile_words(info), row_vector_width(info)
        return "tiles", BASE_REGS + scan_tile_chunks(words, vec) * vec * words, 0
    if not leaves:
        return "none", BASE_REGS, 0
    per_elem_words = sum(_reg_words(i) for i in leaves)
    nt = math.ceil(info.cols / team)
    regs = BASE_REGS + nt * per_elem_words
    if nt * per_elem_words <= CACHE_REG_BUDGET:
        # one phase too: loading the row into registers up front puts all its loads in flight
        return "registers", regs, 0
    if not multi:
        return "none", BASE_REGS, 0
    rows_per_block = block // team
    smem = rows_per_block * info.cols * sum(4 if is_low_float(i.dtype) else i.dtype.itemsize for i in leaves)
    if smem <= dev.smem_per_block:
        return "shared", BASE_REGS, smem
    return "none", BASE_REGS, 0


def rows_contiguous(info: GroupInfo) -> bool:
    """True when element ``c`` of row ``r`` is at ``r * K + c`` (the reduced axes are the
    innermost non-trivial ones)."""
    S, red = info.shape, info.red_axes
    big_kept = [i for i in range(len(S)) if i not in red and S[i] != 1]
    big_red = [i for i in red if S[i] != 1]
    return not big_kept or not big_red or max(big_kept) < min(big_red)


def row_vector_width(info: GroupInfo) -> int:
    """Elements per 16-byte access of a row schedule's cached inputs and full outputs: 16 over
    the widest of them, when that many consecutive elements of a row are consecutive in memory
    from an aligned offset; else 1. That holds when the rows are contiguous and the width divides
    the row length, and also for rows strided over memory whose innermost axis is reduced and a
    multiple of the width (GroupNorm's (HW, C/G) of channels-last (B, HW, G, C/G): runs of C/G
    elements). One-byte types (bool, int8, uint8) stay scalar, except beside wider ones in a
    group with scans (top-p's float32 probabilities and bool mask: 4 elements), whose threads
    then scan runs of that many elements and shuffle a quarter as often."""
    nodes = _full_nodes(info)
    if not nodes or (any(n.dtype.itemsize < 2 for n in nodes) and not (info.scans and max(n.dtype.itemsize for n in nodes) > 1)):
        return 1
    vec = max(1, 16 // max(n.dtype.itemsize for n in nodes))
    if rows_contiguous(info):
        return vec if info.cols % vec == 0 else 1
    big = [i for i, n in enumerate(info.shape) if n != 1]
    inner = big[-1] if big else -1
    return vec if inner in info.red_axes and info.shape[inner] % vec == 0 else 1


#: Accumulator types a column schedule with several kept indices a thread combines by warp shuffles.
_SHUFFLED = frozenset({"float32", "float64", "int32", "int64", "uint32", "uint64", "float16", "bfloat16"})


def column_vector_width(info: GroupInfo) -> int:
    """Kept indices per thread of a column schedule (``Schedule.vec``): 8 bytes of consecutive
    kept indices of its full inputs and outputs (4 float16 or bfloat16, 2 float32 or int32),
    when the kept axes are the contiguous ones and the kept extent is a multiple of the width
    (else half the width where that divides it: 2 float16); else 1. Not for argmax/argmin (their
    pairs are combined in order) nor for accumulators that warp shuffles do not move (bool, 8-
    and 16-bit integers), nor for 1- and 8-byte elements."""
    nodes = _full_nodes(info)
    if not nodes or any(n.dtype.itemsize not in (2, 4) for n in nodes):
        return 1
    if any(r.op in ARG_REDUCTIONS or r.dtype.name not in _SHUFFLED for r in info.reductions):
        return 1
    big_kept = [i for i, n in enumerate(info.shape) if n != 1 and i not in info.red_axes]
    big_red = [i for i, n in enumerate(info.shape) if n != 1 and i in info.red_axes]
    if not big_kept or not big_red or max(big_red) > min(big_kept):
        return 1
    vec = 8 // max(n.dtype.itemsize for n in nodes)
    if info.rows % vec:
        vec //= 2  # (float16 columns of an extent 2 mod 4: two a thread, 4-byte accesses)
    return vec if vec > 1 and info.rows % vec == 0 else 1


def _outer(info: GroupInfo, R_eval: int | None) -> tuple[int, int, float]:
    """(R, K, scale): the kept extent to estimate at (``R_eval``, else the group's own), the
    reduced extent, and the factor the group's byte counts scale by."""
    R, K = info.rows, info.cols
    if R_eval is None:
        return R, K, 1.0
    return R_eval, K, R_eval / max(R, 1)


def _row(info: GroupInfo, dev: DeviceProfile, R_eval: int | None = None) -> list[Estimate]:
    R, K, scale = _outer(info, R_eval)
    index = _index_type(info)
    full_leaves = _full_leaves(info)
    total_in = sum(nbytes(i) for i in info.inputs) * scale
    total_out = sum(nbytes(o) for o, _ in info.outputs) * scale
    work = R * K * _elem_work(info) * (1.5 if info.phases > 1 else 1.0)
    out = []
    row_vec = row_vector_width(info)
    # (rows the kernel stores: LOADS_IN_FLIGHT_STORED where a thread keeps two vectors of each input)
    stored_target = (info.stores_full and K >= STORED_ROWS_MIN and bool(full_leaves)
                     and all(n.dtype.itemsize == 4 for n in full_leaves))
    # (a row shorter than 32 vectors takes its group of lanes, not a warp: the warp, one element
    # a lane, was measured no faster, and a choice that turned on the batch size would compile a
    # kernel per band of batch sizes; a group of lanes holds its row in registers, so a row with
    # nothing to hold there, a diagonal's for instance, takes a warp)
    lanes = short_row_lanes(info)
    if lanes < 32 and _cache_choice(info, lanes, 128, dev)[0] != "registers":
        lanes = 32
    configs = [("row_warp", lanes, b) for b in (128, 256)] + [("row_block", b, b) for b in (128, 256, 512, 1024, 64)]
    for family, team, block in configs:
        cache, regs, smem = _cache_choice(info, team, block, dev)
        if team < 32 and cache != "registers":
            continue
        if info.scans and cache != "registers" and (cache != "tiles" or family != "row_block"):
            # (a scan's row in registers, or walked in tiles by a block: not by a warp, nor
            # walked otherwise; no split: _splittable)
            continue
        # streamed rows (cache "none") load 16-byte chunks of 2- and 4-byte elements (H200, rows of
        # 32000-128256: float16 logsumexp 177 -> 122 us, layernorm float32 502 -> 427); float64
        # ones measured slower so (softmax 272 x 70000: 403.7 us against 327.6 element by element;
        # benchmarks/results/2026-12-01-h200-1befc88-stream-vec-probe.log)
        vec = row_vec if cache in ("registers", "tiles") or (cache == "none" and row_vec >= 4) else 1
        holders = math.ceil(K / vec)  # (the threads that hold a row's elements, `vec` each)
        if family == "row_warp" and team == 32 and holders < team:
            # (a row shorter than 32 vectors that a warp holds, a scan's or one with nothing to
            # hold in registers: vectors would leave lanes idle, so each lane holds elements one
            # by one; float16 rows of 128 on the H100, 262,144 rows, before groups of lanes:
            # softmax 50.6 us against 56.5 with 16 lanes holding 8-element vectors, layernorm
            # 52.2 against 72.9; narrower vectors, 32 lanes busy, were no faster: 50.5-50.8 and
            # 55.1-57.0)
            vec, holders = 1, K
        tile_chunks = scan_tile_chunks(tile_words(info), vec) if cache == "tiles" else 0
        reread = 1.0 if cache not in ("none", "tiles") else _reread_factor(info, False)
        if cache != "registers" and reread > 1:
            reread = 1.0 + 0.35 * (reread - 1.0)
        full_bytes = sum(nbytes(i) for i in full_leaves) * scale
        moved = full_bytes * reread + (total_in - full_bytes) + total_out
        rows_per_block = block // team
        blocks = math.ceil(R / rows_per_block)
        secs, detail = _timed(dev, blocks, block, regs, smem + 32 * 8 * max(1, len(info.reductions)),
                              moved / max(blocks, 1), work / max(blocks, 1))
        if family == "row_warp" and K > 32 * 64:
            secs *= 1.5  # one warp walks a long row: latency bound
        # measured on the H200 (benchmarks/kernel_sweep.py, 8192x4096 float32, 16-byte row
        # loads): about LOADS_IN_FLIGHT 16-byte loads issued up front per thread are best (softmax
        # 69.6 us with 128-thread blocks, 76.1 with 256, 82.4 with 512, 98.9 with 1024;
        # logsumexp 37.4 / 49.1 / 59.5 / 83.3): each halving below costs ~15 %; more cost
        # registers, hence resident rows. Counted in bytes: 32 scalar float16 loads have what 4
        # vectors have in flight (GroupNorm float16: 68.6 us scalar, 63.5 vectors), and a
        # streamed loop has its unrolled iterations' loads in flight (GroupNorm streamed over
        # 128 threads: 118 us, 1.9x the cached row). (That sweep timed plain loops; held, kernels
        # that store float32 rows are fastest with 2 loads a thread: LOADS_IN_FLIGHT_STORED.)
        if full_leaves:
            stored = stored_target and cache == "registers" and math.ceil(K / team) >= 2 * row_vec
            target = LOADS_IN_FLIGHT_STORED if stored else LOADS_IN_FLIGHT
            row_bytes = sum(n.dtype.itemsize for n in full_leaves)
            if cache == "registers":
                # (below 1: a thread's share of one 16-byte load; an empty row: one)
                loads = max(1, math.ceil(K / team)) * row_bytes / 16
            elif cache == "tiles":
                loads = tile_chunks * vec * row_bytes / 16
            elif vec > 1:
                loads = STREAM_VEC_UNROLL * vec * row_bytes / 16
            else:
                loads = stream_unroll(info) * row_bytes / 16
            if loads < target:
                secs *= 1.0 + 0.15 * math.log2(target / loads)
            else:
                secs *= 1.0 + 0.03 * math.log2(loads / target)
        if block == 1024:
            secs *= 1.05  # block-wide barriers over 32 warps
        if cache == "tiles":
            # each tile a block walks costs its loads' latency and three barriers, once a pass:
            # top-p over 512 x 128256 float32 on the H200 took 220.5 us with 128-thread blocks
            # (63 tiles a row), 171.3 / 172.2 / 191.8 with 256 / 512 / 1024, which the model,
            # all blocks an SM holds counting alike, had level
            secs *= 1.0 + TILE_COST * math.ceil(K / (tile_chunks * team * vec))
        if holders < team:
            secs *= team / max(holders, 1)  # idle threads (lanes of a warp, threads of a block)
        # one resident block per SM holding its row in registers: its loads, reductions and
        # stores run in turn with no other block to fill the gaps, so it prefetches the row of
        # the block that will replace it into L2 (GroupNorm 8192x4096 on the H200: float16
        # 51.3 -> 45.5 us; float32 within the sweeps' noise, 79.2 -> 78.0)
        prefetch = dev.sms if family == "row_block" and cache == "registers" and detail.get("occupancy") == 1 else 0
        sched = Schedule(family, block=block, cache=cache, index=index, vec=vec, prefetch=prefetch,
                         lanes=team if family == "row_warp" else 32)
        out.append(Estimate(sched, Launch((blocks if R else 0, 1, 1), (block, 1, 1), 0), secs, detail))
    streamed = [e for e in out if e.schedule.family == "row_block" and e.schedule.cache == "none" and e.schedule.vec > 1]
    walker = next((e for e in streamed if e.schedule.block == 1024), None)
    if walker is not None and R and math.isfinite(walker.seconds):  # (inf: the block does not fit an SM)
        # (ROW_LOOP_BLOCKS_PER_SM: rows of 16-byte chunks walked by 1024-thread blocks, as measured)
        # (few_rows only where it changes the kernel, a sum of exps beside full-size outputs: the
        # others keep one registry key for every row count)
        few = R <= dev.sms and bool(info.online_exp_sums()) and info.stores_full
        sched = replace(walker.schedule, row_loop=True, few_rows=few)
        grid = min(walker.launch.grid[0], dev.sms * ROW_LOOP_BLOCKS_PER_SM)
        best = min(e.seconds for e in streamed)
        out.append(Estimate(sched, replace(walker.launch, grid=(grid, 1, 1)), best * ROW_LOOP_GAIN,
                            dict(walker.detail)))
    if _splittable(info) and _row_splits(R, K, dev):
        # few long rows: split each row over several blocks; the last block of a row finishes it
        # (a variance's second phase too, from each block's sum and squared deviations)
        for block in (256, 512, 1024):
            occ = max(1, _occupancy(dev, block, BASE_REGS, 32 * 8))
            split = max(1, min(math.ceil(K / (block * 4)), (dev.sms * occ) // max(R, 1)))
            blocks = R * split
            secs, detail = _timed(dev, blocks, block, BASE_REGS, 32 * 8, (total_in + total_out) / blocks, work / blocks)
            secs += dev.launch_overhead * 0.2  # the finishing pass
            sched = Schedule("row_split", block=block, index=index)
            out.append(Estimate(sched, Launch((blocks, 1, 1), (block, 1, 1), 0, split), secs, detail))
    return out


def short_row_lanes(info: GroupInfo) -> int:
    """The lanes a ``row_warp`` row takes: 32, or where a row is shorter than 32 vectors of the
    group's width (:func:`row_vector_width`), the power of two that holds it in two vectors a
    lane, so that a warp holds several rows (not for groups with scans, which run across all 32
    lanes). A row that is not stored (a logsumexp's, a norm's) takes three vectors a lane: fewer
    lanes, fewer shuffles. A stored row of two or three vectors takes one vector a lane (two or
    four lanes): then a warp's one load and one store cover whole rows, one after another, where
    with two vectors a lane each access moves a 16-byte piece of every row, parts of 32-byte
    sectors. A row of three vectors leaves one of its four lanes idle, so it keeps two vectors a
    lane where the kernel is bound by instructions (work an element over the bytes it moves
    above ``SHORT_ROW_WORK_PER_BYTE``: a float16 layernorm).

    Measured on the H100 (262,144 rows, ``kernel_sweep.py``): two vectors a lane against one,
    float16 rows of 64 logsumexp 10.2 against 14.4 us, layernorm 25.1 against 26.3; rows of 128
    24.8 against 27.3 and 47.7 against 49.6; float32 rows of 24 softmax 17.3 against 19.4 (four
    lanes, two of them with one vector); float32 rows of 64 level (47.0 against 46.9). Rows of
    17-31 vectors (sixteen lanes, two rows a warp) against a warp a row, one element a lane,
    held loops: logsumexp float32 rows of 80, 96 and 120 33.0 / 35.7 / 43.2 us against 41.6 /
    41.9 / 46.6, float16 rows of 192 39.0 against 46.4; rows that are stored level or faster
    (float16 rows of 192 layernorm 69.1 against 71.8, float32 rows of 80 softmax 57.4 against
    59.9; rows of 96 and 120 within 1 %: 68.7 against 68.1, 85.5 against 84.8). Three vectors a
    lane against two, logsumexp, held loops: float16 rows of 24 4.2 us against 5.6 (one lane),
    rows of 40 8.0 against 10.5, rows of 96 18.6 against 20.8 (67.1 against 73.7 at 1,048,576
    rows); float32 rows of 12 3.5 against 4.7, rows of 24 7.7 against 8.8, rows of 96 33.6
    against 34.0; float32 rows of 48 level (18.5 against 18.6); docs/performance.md, "Rows that
    are not stored". Stored rows of two and three vectors, a vector a lane against two (softmax,
    layernorm, rmsnorm, add + layernorm; H100, held loops): of the 21 cases this rule changes, 19
    faster or within 1 %, rmsnorm float16 rows of 24 6.1 against 8.9 us, float32 rows of 8 3.8
    against 7.2; softmax of float16 rows of 16 and float32 rows of 12 10 % and 5 % slower;
    docs/performance.md, "Stored rows of two or three vectors"."""
    if info.scans:
        return 32
    holders = math.ceil(info.cols / row_vector_width(info))
    if holders >= 32:
        return 32
    if not info.stores_full:
        per_lane = 3
    elif holders == 2 or (holders == 3 and not _bound_by_instructions(info)):
        per_lane = 1
    else:
        per_lane = 2
    return 1 << max(0, math.ceil(holders / per_lane) - 1).bit_length()


#: The work an element (:func:`_elem_work`) over the bytes it moves up to which a stored row of
#: three vectors takes a vector a lane (four lanes, one idle). Fitted to the H100's sweep: float16
#: and bfloat16 layernorm of rows of 24 (16 over 4 bytes) took 1-12 % longer in four lanes than
#: in two with the planned blocks (-1 to +8 % with the faster of 128 and 256 threads), its SMs
#: issuing an instruction in 84 % of their cycles (Nsight Compute); softmax, rmsnorm and
#: add + layernorm (at most 2.25) and float32 layernorm (1.9) were faster or level but for
#: float32 softmax (+5 %).
SHORT_ROW_WORK_PER_BYTE = 3.0


def _bound_by_instructions(info: GroupInfo) -> bool:
    """Whether the work an element exceeds ``SHORT_ROW_WORK_PER_BYTE`` times the bytes it moves
    (its full-size inputs and outputs)."""
    return _elem_work(info) > SHORT_ROW_WORK_PER_BYTE * sum(n.dtype.itemsize for n in _full_nodes(info))


def _acc_bytes(red: Node) -> int:
    """The size of a reduction's accumulator, at most (codegen ``_acc_type``): 4 or 8 bytes; an
    argmax/argmin pair 8, or 16 for 8-byte values."""
    wide = red.inputs[0].dtype.itemsize == 8 if red.op in ARG_REDUCTIONS else red.dtype.itemsize == 8
    return (2 if red.op in ARG_REDUCTIONS else 1) * (8 if wide else 4)


def _team_bytes(info: GroupInfo, threads: int) -> int:
    """Shared memory of a column kernel's combine over its threads, as the model counts it: 8
    bytes a thread and reduction (16 for an argmax/argmin pair of 8-byte values)."""
    return threads * max(8, sum(max(8, _acc_bytes(r)) for r in info.reductions))


def _team_fits(info: GroupInfo, ty: int, dev: DeviceProfile) -> bool:
    """Whether a column kernel's combine buffers (``scol``: ``ty`` x 33 accumulators a reduction,
    static shared memory) fit a block: seven float64 sums over columns at ``ty`` = 32 take 59 KB,
    and ptxas refuses more than 48."""
    return ty * 33 * sum(_acc_bytes(r) for r in info.reductions) + 16 <= dev.smem_per_block


def _column(info: GroupInfo, dev: DeviceProfile, R_eval: int | None = None) -> list[Estimate]:
    R, K, scale = _outer(info, R_eval)
    index = _index_type(info)
    passes = _passes(info)
    full_leaves = _full_leaves(info)
    full_bytes = sum(nbytes(i) for i in full_leaves) * scale
    other = (sum(nbytes(i) for i in info.inputs if i not in full_leaves) + sum(nbytes(o) for o, _ in info.outputs)) * scale
    work = R * K * _elem_work(info) * (1.5 if info.phases > 1 else 1.0)
    # passes alternate direction: a re-read pass starts with what the last one read, still in L2
    l2_share = min(1.0, 0.5 * dev.l2_bytes / max(full_bytes, 1.0))
    words = sum(_reg_words(i) for i in full_leaves)
    out = []
    for ty in (4, 8, 16, 32):
        if ty > 4 and not _team_fits(info, ty, dev):
            continue
        for cache in ("none", "registers") if passes > 1 and full_leaves else ("none",):
            cached = min(1.0, COLUMN_CACHE * ty / max(K, 1)) if cache == "registers" else 0.0
            reread = max(0.0, 1.0 - cached - l2_share)
            moved = full_bytes * (1 + (passes - 1) * reread) + other
            regs = BASE_REGS + (COLUMN_CACHE * words if cache == "registers" else 0)
            blocks = math.ceil(R / 32)
            threads = 32 * ty
            smem = _team_bytes(info, 32 * ty)
            secs, detail = _timed(dev, blocks, threads, regs, smem, moved / max(blocks, 1), work / max(blocks, 1))
            if cache == "registers" and cached < 1.0:
                # a cache that holds part of the column costs registers (resident blocks, loads in
                # flight) for little: measured on the H200 (colnorm 8192x4096; 32x32 threads cache
                # an eighth): 136 us cached against 127-131 streamed in float32, 93 against 74 in
                # float16; with 32x16 threads 181 against 136 and 147 against 89
                secs *= 1.0 + COLUMN_PARTIAL_CACHE_PENALTY * passes
            sched = Schedule("column", block=32, ty=ty, cache=cache, index=index)
            out.append(Estimate(sched, Launch((blocks if R else 0, 1, 1), (32, ty, 1), 0), secs, detail))
    vec = column_vector_width(info)
    # (their time against the scalar schedules', by element size)
    gain = COLUMN_VEC_GAIN[max(n.dtype.itemsize for n in _full_nodes(info))] if vec > 1 else 1.0
    if vec > 1 and _team_fits(info, 32, dev):
        # blocks of 1024 threads as (32 / vec) x (32 vec): a warp reads vec rows of the tile with
        # one 8-byte access a thread; the team combine is by warp shuffles, then 32 warp partials
        best = min((e for e in out if e.schedule.cache == "none"), key=lambda e: e.seconds)
        sched = Schedule("column", block=32, vec=vec, ty=32 * vec, index=index)
        launch = Launch(best.launch.grid, (32 // vec, 32 * vec, 1), 0)
        out.append(Estimate(sched, launch, best.seconds * gain, dict(best.detail)))
    tiles = math.ceil(R / 32)
    if _splittable(info) and _column_splits(R, K, dev) and _team_fits(info, 8, dev):
        # few column tiles over a long reduced axis (x.sum(0) of 1M x 64 has 2): split each tile
        # over blocks along the reduced axis, a chunk of at least 16 rows per thread; the last
        # block of a tile combines the partial results
        total = full_bytes + other
        # one shape of block only: the split and the grid follow the reduced extent, the kernel
        # does not, so a new batch size compiles nothing
        for ty in (8,):
            threads = 32 * ty
            smem = _team_bytes(info, threads)
            occ = max(1, _occupancy(dev, threads, BASE_REGS, smem))
            # half the resident blocks, at least 64 rows per thread, at most 32 partials for each
            # of the last block's threads to gather: measured on the H200 over G at runtime
            # (benchmarks/results/2026-12-01-h200-d923eeb-split-g-probe.log), one-pass mean and
            # variance of 1M x 64 float32 take 86 us at G = 256 against 124 at the full
            # occupancy's 528, 256K x 256 73 at G = 64 against 93 at 132, 100 003 x 7 14-15 at
            # G = 64-128 against 48 at 782
            split = max(1, min(math.ceil(K / (ty * 64)), (dev.sms * max(1, occ // 2)) // tiles, 32 * ty))
            blocks = tiles * split
            secs, detail = _timed(dev, blocks, threads, BASE_REGS, smem, total / blocks, work / blocks)
            secs += dev.launch_overhead * 0.2  # the finishing pass
            sched = Schedule("column_split", block=32, ty=ty, index=index)
            out.append(Estimate(sched, Launch((blocks, 1, 1), (32, ty, 1), 0, split), secs, detail))
            if vec > 1 and not info.one_pass_variances():
                # the same blocks as (32 / vec) x (8 vec) threads, vec kept indices a thread
                # (the lanes of "column" above; a variance merged into its mean's pass stays scalar)
                sched = Schedule("column_split", block=32, vec=vec, ty=ty * vec, index=index)
                out.append(Estimate(sched, Launch((blocks, 1, 1), (32 // vec, ty * vec, 1), 0, split), secs * gain, dict(detail)))
    return out


#: Outer extents from this many per SM on are planned as one shape class ("many rows"), so a new
#: batch size in that class gets the same schedule, hence the same kernel (no recompile).
MANY_PER_SM = 2
#: The outer extent the "many rows" class is evaluated at.
MANY = 1 << 22


def schedules(info: GroupInfo, dev: DeviceProfile, outer: int | None = None) -> list[Estimate]:
    """Every schedule the latency evaluator considers for ``info``, cheapest first
    (``outer``: evaluate at this outer extent instead of the group's own)."""
    if info.kind == "interpreted":
        est = [Estimate(Schedule("interpreted"), Launch((0, 1, 1), (0, 1, 1)), delta_cost(info, dev))]
    elif info.kind == "pointwise":
        est = _pointwise(info, dev, outer)
    elif info.inner_reduced:
        est = _row(info, dev, outer)
    else:
        est = _column(info, dev, outer)
    est.sort(key=lambda e: e.seconds)
    return est


def choose_schedule(info: GroupInfo, dev: DeviceProfile) -> Estimate:
    """The latency evaluator's choice for ``info``.

    Small outer extents are planned as they are; from ``MANY_PER_SM`` rows (or, pointwise,
    blocks of 1024 elements) per SM on, the schedule is the one that is best for a very large
    extent, so every batch size of that class shares one kernel. The estimate and launch
    returned are for the group's own size.
    """
    own = schedules(info, dev)
    if info.kind == "interpreted":
        return own[0]
    size = math.prod(info.shape) // 1024 if info.kind == "pointwise" else info.rows
    # a column split's kernel is generic in R, K and its split (all arguments): nothing to share
    if size < MANY_PER_SM * dev.sms or own[0].schedule.family == "column_split":
        return own[0]
    outer = MANY * 1024 if info.kind == "pointwise" else MANY
    best = schedules(info, dev, outer)[0].schedule
    for est in own:
        if est.schedule == best:
            return est
    return own[0]
