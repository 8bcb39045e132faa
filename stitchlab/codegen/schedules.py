"""One emitter per schedule family: a group plus its schedule become one CUDA C kernel.

* ``pointwise``: a grid-stride loop over the domain; each thread takes ``vec`` consecutive elements
  and moves them with one 16-byte access per buffer when every such buffer is aligned (checked in
  the kernel, so the same binary serves any pointers).
* ``row_warp`` / ``row_block``: a team (a warp, or the whole block) owns one row. Each phase is one
  loop over the row that accumulates the phase's reductions, then a team reduction (warp shuffles;
  plus shared memory across warps) gives every thread the result: the row value later phases and
  the stored outputs read from registers. The row's inputs are read from memory once and held in
  registers (or shared memory) between phases when the latency evaluator says they fit.
* ``row_split``: few long rows, one phase: each row is split over several blocks; each writes a
  partial result, and the last block of a row (an atomic counter) combines them and finishes the
  row's epilogue.
* ``column``: reductions over outer axes (the kept axis is the contiguous one): 32 consecutive
  kept indices per block row give coalesced loads; ``ty`` threads split the reduced axis and
  combine through shared memory. With ``vec`` > 1 each thread takes 8 bytes of consecutive kept
  indices (``_emit_column_lanes``), ``column_split`` too.
* ``column_split``: one-phase column reductions of few columns (tall, narrow inputs): each tile
  of 32 columns is split over several blocks along the reduced axis; the last block of a tile
  combines their partial results, as ``row_split`` does for rows.

Outer extents are kernel arguments (``n``; ``R``; ``R`` and ``K`` for columns and split rows), so
a new batch size compiles nothing new.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..ir.dtypes import is_bfloat16, is_low_float
from ..ir.node import Node
from ..ir.ops import ARG_REDUCTIONS, OPS, keeps_earlier_ties
from ..plan.cost import (
    CACHE_REG_BUDGET,
    COLUMN_CACHE,
    STREAM_VEC_UNROLL,
    Schedule,
    column_vector_width,
    stream_unroll,
)
from ..plan.cost import row_vector_width as cost_row_vector_width
from ..plan.groups import FREE_OPS, FULL, ROW, GroupInfo, scan_tile_chunks, tile_words
from . import ctypes as ct
from .elemental import CodegenError, Index, Writer, leaf_params
from .preamble import PREAMBLE

#: Bumped whenever generated code changes meaning: part of every registry key.
CODEGEN_VERSION = "14"  # 11: --fmad=false; 12: sl_rcp_ge1; 13: bf16x2 cvt; 14: one reciprocal of a row divisor wherever read

#: Emitter switches, all on by default; ``benchmarks/kernel_sweep.py`` turns each off in turn to
#: measure what it is worth: keep expensive full values in registers across phases, divide by a
#: row value as a multiply by its reciprocal, one barrier per block reduction, column passes in
#: alternating directions, variances in the mean's pass (Welford; columns and streamed rows; split
#: schedules, which have no second pass, keep it whatever the switch says), a
#: row's one-hot sum read as the one element it picks, the streaming cache hint on the row loads of
#: register-cached row kernels that store no full-size output (logsumexp, cross-entropy), the
#: flushing exp for bfloat16 sums of ``exp(a - max(a))`` (``GroupInfo.shifted_exps``), float32/float64
#: sums of ``exp(a - max(a))`` in the max's pass of rows walked by blocks (``Schedule.row_loop``,
#: ``GroupInfo.online_exp_sums``; 1024 x 128256 float32 on the H200: logsumexp 166.8 us against
#: 216.1, softmax 394.0 against 485.0, ``benchmarks/results/2026-12-05-h200-1352ee2-rowloop-sweep.log``)
#: and of rows walked in tiles (``cache="tiles"``: top-p over 512 x 128256 float32 on the H200,
#: 219.8 us against 252.4). Two are off (the sweep times them on): the same sums in every other
#: schedule whose passes re-read memory (rows a block, scalar columns), not measured; and the next
#: tile's inputs prefetched into L2 in rows walked in tiles, within 1 % on an H100 where it gained
#: (top-p over 512 and 2048 x 128256 float32: 204.3 against 206.4 us, 808.3 against 814.0) and 3 %
#: slower over 64 x 151936 (57.3 against 55.6; benchmarks/results/2026-12-06-h100-7cf04e8-sweep.log).
#: ``reverse_tiles``: the passes of rows walked in tiles that read no scan go last to first (not
#: with an argmax/argmin, as ``reverse_passes``), so the scanning pass starts on tiles still in
#: L2 (top-p over 64 and 512 x 128256 float32 on an H100: 38.8 against 42.3 us, 195.0 against
#: 201.5; benchmarks/results/2026-12-06-h100-a9d2461-*). ``group_maxima``: the online sums of rows
#: walked in tiles, and of streamed rows that store no full-size output or are few
#: (``Schedule.few_rows``), scaled once a tile or a 16-byte chunk, to its maximum found first
#: (``_group_maxima``), not at each element that raises the running maximum.
OPTIONS: dict[str, bool] = {"cache_values": True, "reciprocal": True, "single_sync": True, "reverse_passes": True,
                            "one_pass_variance": True, "one_hot_pick": True, "cache_hints": True,
                            "shifted_exp_ftz": True, "online_exp_sum": True, "online_exp_sum_streamed": False,
                            "tile_prefetch": False, "reverse_tiles": True, "group_maxima": True}


@contextlib.contextmanager
def switches(**values: bool) -> Iterator[None]:
    """``OPTIONS`` set to ``values`` inside the ``with`` block (restored after it), for sweeps and
    tests: ``with switches(reciprocal=False): emit(info, sched)``."""
    unknown = sorted(set(values) - set(OPTIONS))
    if unknown:
        raise KeyError(f"unknown emitter switches {unknown}; known: {sorted(OPTIONS)}")
    saved = dict(OPTIONS)
    OPTIONS.update(values)
    try:
        yield
    finally:
        OPTIONS.clear()
        OPTIONS.update(saved)


#: A full value that two or more phases compute is kept in registers when its op costs at least
#: this much (an add costs 1; exp, log, tanh 4-8) and the row cache budget has room.
CACHE_VALUE_COST = 3
#: Unroll factor of a column pass (rows in flight per thread).
COLUMN_UNROLL = 16
#: Rows whose vectors a thread of a column schedule with several kept indices a thread loads
#: before computing them (:func:`_emit_column_lanes`).
COLUMN_LANE_BATCH = 8
#: Unroll of a row pass that streams from memory (rows too long to stay on chip), when set; None:
#: :func:`stitchlab.plan.cost.stream_unroll`, which the latency evaluator assumes. The sweep
#: (``benchmarks/kernel_sweep.py``) also times 8 and 16.
ROW_STREAM_UNROLL: int | None = None
#: Rows ahead that a register-cached row kernel prefetches into L2 (``Schedule.prefetch``), when
#: set; and whether it does so after its first reduction (its loads have arrived: the default) or
#: right after issuing its loads. The sweep times both, 1, 2, 4 and 8 waves ahead.
ROW_PREFETCH: int | None = None
ROW_PREFETCH_LATE = True

_OPS = {"sum": "sl_op_sum", "prod": "sl_op_prod", "max": "sl_op_max", "min": "sl_op_min", "any": "sl_op_any", "all": "sl_op_all",
        "argmax": "sl_op_argmax", "argmin": "sl_op_argmin"}
#: the combining functor of each scan op in a row kernel (a running maximum keeps NumPy's
#: element semantics, not the max reduction's)
_SCAN_OPS = {"cumsum": "sl_op_sum", "cumprod": "sl_op_prod", "cummax": "sl_op_running_max", "cummin": "sl_op_running_min"}


def _scan_functor(s: Node) -> str:
    """The combining functor of scan ``s`` in a row kernel: :data:`_SCAN_OPS`'s; a float16 running
    maximum or minimum keeps the earlier of equal values, as NumPy's float16 loop (the library
    step's ``"_first"``, :func:`stitchlab.runtime.scan.source`)."""
    return _SCAN_OPS[s.op] + ("_first" if keeps_earlier_ties(s.op, s.dtype) else "")


@dataclass(frozen=True)
class Param:
    """One kernel parameter: ``role`` is "in", "out", "n", "R", "K", "G", "ws", "counter" or
    "blocks" (the blocks of one group of a packed kernel);
    ``node`` the buffer's node ("in"/"out"/"ws": the reduction), ``ctype`` its C declaration type."""

    role: str
    ctype: str
    name: str
    node: Node | None = None
    part: int = 0  # which group of a packed kernel the parameter belongs to


@dataclass(frozen=True)
class KernelSource:
    """A generated kernel: its name, full source (preamble included) and parameters in order."""

    name: str
    source: str
    params: tuple[Param, ...]
    schedule: Schedule
    body_digest: str


def _acc_type(red: Node) -> str:
    """The accumulator's C type: the result's register type; for argmax/argmin a (value,
    position) pair of the input's."""
    if red.op in ARG_REDUCTIONS:
        return f"sl_arg<{ct.register_type(red.inputs[0].dtype)}>"
    return ct.register_type(red.dtype)


def workspace_entry(red: Node) -> tuple[np.dtype, int]:
    """How a split reduction's workspace holds one partial result of ``red`` (its accumulator,
    :func:`_acc_type`): (element dtype, elements a partial). float16 and bfloat16 accumulate in float32;
    argmax/argmin pairs (``sl_arg``: a value and an int) are int64 words, one a pair, two where
    the value is 8 bytes."""
    if red.op in ARG_REDUCTIONS:
        return np.dtype(np.int64), 2 if red.inputs[0].dtype.itemsize == 8 else 1
    return (np.dtype(np.float32) if is_low_float(red.dtype) else red.dtype), 1


def _identity(red: Node, cast: bool = True) -> str:
    """The accumulator's starting value: the op's identity (``cast`` to the accumulator's type);
    for argmax/argmin the max/min identity at position 2**31 - 1, past every element (``step``
    never replaces it with an equal element; ``sl_arg_index`` reads it as position 0)."""
    if red.op in ARG_REDUCTIONS:
        ident = ct.identity_literal(red.op[3:], red.inputs[0].dtype)
        return f"{_acc_type(red)}{{{ident}, 0x7fffffff}}"
    literal = ct.identity_literal(red.op, red.dtype)
    return f"({_acc_type(red)}){literal}" if cast else literal


def _accumulate(w: Writer, red: Node, acc: str, v: str) -> None:
    """``acc`` combined with element value ``v`` (argmax/argmin: at its reduced position)."""
    if red.op in ARG_REDUCTIONS:
        assert w.reduced_pos is not None, "the schedule did not set the reduced index (Writer.reduced_pos)"
        w.line(f"{acc} = {_OPS[red.op]}().step({acc}, {v}, (int)({w.reduced_pos}));")
        return
    w.line(f"{acc} = {_OPS[red.op]}()({acc}, {v});")


def _reduction_writer(info: GroupInfo, idx_t: str, names: dict[int, str], reduced_count: str | None = None) -> Writer:
    """The writer of a reduction kernel (``reduced_count``: the runtime reduced extent, if any)."""
    w = Writer(info, idx_t, names)
    w.row_reciprocal = w.const_reciprocal = OPTIONS["reciprocal"]
    w.reduced_count = reduced_count
    if OPTIONS["shifted_exp_ftz"]:
        w.ftz_exps = info.shifted_exps()
    return w


def _buffer_params(info: GroupInfo, prefix: str = "", part: int = 0) -> tuple[list[Param], dict[int, str]]:
    params: list[Param] = []
    names: dict[int, str] = {}
    for k, n in enumerate(leaf_params(info)):
        name = f"{prefix}in{k}"
        params.append(Param("in", f"const {ct.storage_type(n.dtype)}* __restrict__", name, n, part))
        names[id(n)] = name
    for k, (n, _) in enumerate(info.outputs):
        params.append(Param("out", f"{ct.storage_type(n.dtype)}* __restrict__", f"{prefix}out{k}", n, part))
    return params, names


def _finish(family: str, info: GroupInfo, sched: Schedule, params: list[Param], body: list[str], launch_bounds: int) -> KernelSource:
    sig = ", ".join(f"{p.ctype} {p.name}" for p in params)
    text = "\n".join(body)
    head = f'extern "C" __global__ void __launch_bounds__({launch_bounds}) NAME({sig}) {{\n'
    head += "  sl_grid_dependency_wait();  // the previous kernel's writes (stitchlab/runtime/pdl.py)\n"
    kernel = head + text + "\n}\n"
    digest = hashlib.sha256(kernel.encode()).hexdigest()[:12]
    name = f"sl_{family}_{digest}"
    return KernelSource(name, PREAMBLE + "\n" + kernel.replace("NAME(", name + "(", 1), tuple(params), sched, digest)


def _reads_shifted(info: GroupInfo) -> bool:
    """Whether the group reads through a slice or a pad (index maps its members evaluate, not
    members themselves)."""
    seen: set[int] = set()
    stack = list(info.members)
    while stack:
        for x in stack.pop().inputs:
            if id(x) not in seen and x.op in FREE_OPS:
                if x.op in ("slice", "pad"):
                    return True
                seen.add(id(x))
                stack.append(x)
    return False


# --- pointwise ------------------------------------------------------------------------------------
def emit_pointwise(info: GroupInfo, sched: Schedule) -> KernelSource:
    params, lines, used = _pointwise_body(info, sched)
    return _finish("pointwise", info, used, params, lines, used.block)


def _pointwise_body(info: GroupInfo, sched: Schedule, prefix: str = "", part: int = 0,
                    bid: str = "blockIdx.x", nblk: str = "gridDim.x") -> tuple[list[Param], list[str], Schedule]:
    """Parameters and body lines of a pointwise kernel (``bid``/``nblk``: this group's block index
    and block count, which differ from CUDA's in a packed kernel)."""
    idx_t = sched.index
    params, names = _buffer_params(info, prefix, part)
    n = f"{prefix}n"
    params.append(Param("n", f"const {idx_t}", n, None, part))
    out_params = [p for p in params if p.role == "out"]
    D = info.shape
    block, vec = sched.block, sched.vec

    def body(w: Writer, vector: bool) -> None:
        full = Index(D, lin="i", tag="full", lane="base" if vector else None)
        for p in out_params:
            v = w.value(p.node, full)
            if vector:
                w.line(f"sl_store(&vo_{p.name}.v[u], {v});")
            else:
                w.line(f"sl_store({p.name} + i, {v});")

    def writer() -> Writer:
        w = Writer(info, idx_t, names)
        w.const_reciprocal = OPTIONS["reciprocal"]
        if D and math.prod(D[1:]):
            # a mean over the batch (the leading axis) that an earlier kernel summed divides by
            # the batch read from n, not by a constant: one kernel serves every batch size
            w.reduced_count, w.reduced_extent = f"({n} / ({idx_t}){math.prod(D[1:])})", D[0]
            w.count_reciprocal = OPTIONS["reciprocal"]
        return w

    # scalar pass first: it tells which buffers are read at the domain index (vectorizable)
    probe = writer()
    body(probe, False)
    vec_in = [p for p in params if p.role == "in" and id(p.node) in probe.full_loads]
    if vec > 1 and not (vec_in or out_params):
        vec = 1

    w = writer()

    def aligned(ps: list[Param]) -> str:
        checks = [f"((unsigned long long){p.name} & {vec * p.node.dtype.itemsize - 1}ULL)" for p in ps]
        return f"const bool aligned = ({' | '.join(checks)}) == 0ULL;"
    if vec > 1:
        aligned_at = len(w.lines)
        w.line(aligned(vec_in + out_params))
    w.line(f"const {idx_t} stride = ({idx_t}){nblk} * {block};")
    # the loop counts chunks of vec elements and never steps past the last one: with e * vec < n
    # and e += stride, a grid as large as the domain took e * vec past the index type's range
    # (1.07G to 2.1G elements with int indices), where it wrapped to a negative offset
    chunks = n
    if vec > 1:
        chunks = f"{prefix}chunks"
        w.line(f"const {idx_t} {chunks} = {n} / {vec} + ({n} % {vec} != 0);")
    w.open(f"for ({idx_t} e = ({idx_t}){bid} * {block} + threadIdx.x; e < {chunks}; e = e < {chunks} - stride ? e + stride : {chunks})")
    w.line(f"const {idx_t} base = e * {vec};")
    if vec > 1:
        branch_at = len(w.lines)
        w.open(f"if (aligned && base + {vec} <= {n})")
        for p in vec_in:
            st = ct.storage_type(p.node.dtype)
            w.line(f"const sl_vec<{st}, {vec}> vi_{p.name} = *reinterpret_cast<const sl_vec<{st}, {vec}>*>({p.name} + base);")
        for p in out_params:
            st = ct.storage_type(p.node.dtype)
            w.line(f"sl_vec<{st}, {vec}> vo_{p.name};")
        # buffers broadcast along leading axes (a bias) are loaded here, a vector per chunk
        w.vec_at, w.vec_depth, w.vec_width = len(w.lines), w.depth, vec
        # chunks the branch tests (rows of another extent): in shorter rows where there are
        # shifted reads to merge (docs/compiler.md §4)
        w.shifted_reads = _reads_shifted(info)
        w.aligned_buffers, w.interior_checks = {p.name for p in vec_in + out_params}, {}
        w.line("#pragma unroll")
        w.open(f"for (int u = 0; u < {vec}; ++u)")
        w.line(f"const {idx_t} i = base + u;")
        w.vector_src = {id(p.node): f"vi_{p.name}.v[u]" for p in vec_in}
        body(w, True)
        w.vector_src = {}
        w.close()
        # inputs read as whole vectors at shifted positions (Writer._lane_vector) are checked too
        lane_in = [p for p in params if p.role == "in" and p.name in w.aligned_buffers and p not in vec_in]
        assert "const bool aligned" in w.lines[aligned_at] and "if (aligned" in w.lines[branch_at]
        if lane_in:
            w.lines[aligned_at] = w.lines[aligned_at][:w.lines[aligned_at].index("const")] + aligned(vec_in + lane_in + out_params)
        # chunks whose pads reach past an input's edge take the element-by-element branch
        if w.interior_checks:
            w.lines[branch_at] = w.lines[branch_at].replace(") {", "".join(f" && ({c})" for c in w.interior_checks) + ") {")
        w.vec_at, w.aligned_buffers, w.interior_checks = None, None, None
        for p in out_params:
            st = ct.storage_type(p.node.dtype)
            w.line(f"*reinterpret_cast<sl_vec<{st}, {vec}>*>({p.name} + base) = vo_{p.name};")
        w.depth -= 1
        w.scopes.pop()
        w.tmps.pop()
        w.line("} else {")
        w.depth += 1
        w.scopes.append({})
        w.tmps.append({})
    w.open(f"for (int u = 0; u < {vec}; ++u)")
    w.line(f"const {idx_t} i = base + u;")
    w.line(f"if (i >= {n}) break;")
    body(w, False)
    w.close()
    if vec > 1:
        w.close()
    w.close()
    used = Schedule(sched.family, block=block, vec=vec, index=idx_t)
    return params, w.lines, used


def emit_packed(parts: list[tuple[GroupInfo, Schedule]]) -> KernelSource:
    """Independent pointwise groups in one launch: block ranges of the grid select the group
    (the blocks of each are kernel arguments, so any sizes share the kernel)."""
    block = parts[0][1].block
    if any(sched.block != block or sched.family != "pointwise" for _, sched in parts):
        raise CodegenError("packed kernels take pointwise groups of one block size")
    params: list[Param] = []
    lines: list[str] = []
    first = "0"
    index = "int"
    for j, (info, sched) in enumerate(parts):
        p, body, used = _pointwise_body(info, sched, prefix=f"p{j}_", part=j, bid="bid", nblk="nblk")
        params += p
        params.append(Param("blocks", "const int", f"p{j}_blocks", None, j))
        if used.index == "long long":
            index = "long long"
        end = f"p{j}_blocks" if first == "0" else f"{first} + p{j}_blocks"
        lines.append(f"  {'if' if j == 0 else 'else if'} (blockIdx.x < {end}) {{")
        lines.append(f"    const int bid = blockIdx.x - ({first});")
        lines.append(f"    const int nblk = p{j}_blocks;")
        lines += ["  " + line for line in body]
        lines.append("  }")
        first = end
    sched = Schedule("packed", block=block, index=index)
    return _finish("packed", parts[0][0], sched, params, lines, block)


# --- reductions -----------------------------------------------------------------------------------
def _full_index(w: Writer, info: GroupInfo, r: str, c: str, K: str, R: str) -> Index:
    """The domain index of element ``c`` of row ``r`` (``K``/``R``: C expressions of the extents)."""
    S, red = info.shape, info.red_axes
    kept = [i for i in range(len(S)) if i not in red]
    big_kept = [i for i in kept if S[i] != 1]
    big_red = [i for i in red if S[i] != 1]
    simple = len(big_kept) <= 1 and len(big_red) <= 1
    dims = ["0"] * len(S)
    if simple:  # per-axis indices are r and c themselves: no division to recover them
        for axes, src in ((big_kept, r), (big_red, c)):
            if axes:
                dims[axes[0]] = src
    if not big_kept or not big_red or max(big_kept) < min(big_red):  # rows are contiguous
        return Index(S, lin=f"({r} * ({w.idx_t}){K} + {c})", dims=tuple(dims) if simple else None, tag="full")
    if max(big_red) < min(big_kept):  # columns: the kept axes are the contiguous ones
        return Index(S, lin=f"({c} * ({w.idx_t}){R} + {r})", dims=tuple(dims) if simple else None, tag="full")
    for axes, src in ((kept, r), (red, c)):
        sub = Index(tuple(S[i] for i in axes), lin=src)
        for a, e in zip(axes, w.dims(sub), strict=False):
            dims[a] = e
    return Index(S, dims=tuple(dims), tag="full")


def _row_nodes_ready(info: GroupInfo, done: int, emitted: set[int]) -> list[Node]:
    """Members at the row level whose reductions all finished by phase ``done``."""
    need = _phases_needed(info)
    out = []
    for n in info.members:
        if id(n) in emitted or info.levels.get(id(n)) != ROW or n.op in _OPS:
            continue
        if need[id(n)] <= done:
            out.append(n)
    return out


def _phases_needed(info: GroupInfo) -> dict[int, int]:
    """For each member (by ``id``), the last phase among the group's reductions it reads through
    members and free nodes (a reduction: its own phase; 0 for none). One pass over the group
    (a walk per member and phase made a group of many reductions cubic to write)."""
    need: dict[int, int] = {}
    members = {id(m) for m in info.members}
    for root in info.members:
        stack = [root]
        while stack:
            m = stack[-1]
            if id(m) in need:
                stack.pop()
            elif id(m) in info.depth:
                need[id(m)] = info.depth[id(m)]
            elif id(m) not in members and m.op not in FREE_OPS:
                need[id(m)] = 0
            else:
                todo = [i for i in m.inputs if id(i) not in need]
                if todo:
                    stack.extend(todo)
                else:
                    need[id(m)] = max((need[id(i)] for i in m.inputs), default=0)
    return need


@dataclass
class _Loop:
    """How a pass over the reduced elements is written: ``open``/``close`` write the loop headers
    (``make_full`` of the writer then gives the element's index); ``store_open``/``store_close``/
    ``store`` replace them for the pass that stores the full outputs (vectorized stores)."""

    open: Callable[..., None]
    close: Callable[[Writer], None]
    store_open: Callable[[Writer, list[tuple[int, Node]]], None] | None = None
    store_close: Callable[[Writer, list[tuple[int, Node]]], None] | None = None
    store: Callable[[Writer, int, str, Index], None] | None = None
    cache_on: bool = True
    #: where the loop takes its elements in groups held at once (a tile of ``cache="tiles"``, a
    #: 16-byte chunk of streamed vectors): the loop over one group's elements, inside the loop;
    #: ``open(w, prologue)`` then writes ``prologue(w)`` between a group's loads and its elements
    group: _Loop | None = None


def _simple_loop(header: str, pragma: str | None = None, guard: str | None = None, body_first: str | None = None,
                 inner_guard: str | None = None, cache_on: bool = True) -> _Loop:
    def open_(w: Writer) -> None:
        if guard:
            w.open(guard)
        if pragma:
            w.line(pragma)
        w.open(header)
        if body_first:
            w.line(body_first)
        if inner_guard:
            w.open(inner_guard)

    def close(w: Writer) -> None:
        if inner_guard:
            w.close()
        w.close()
        if guard:
            w.close()

    return _Loop(open_, close, cache_on=cache_on)


@dataclass
class _Lane:
    """One of the kept indices a thread of a column schedule with ``Schedule.vec`` > 1 computes:
    its row index (``r0``, ``r1``…), where its full inputs come from in a pass (elements of the
    vectors the pass loaded), and its own memo of values (:func:`_active`), so that the emitters
    write the scalar code of each lane after the other inside shared loops."""

    row: Index
    vector_src: dict[int, str]
    scopes: list[dict[tuple[int, str], str]]
    tmps: list[dict[str, str]]
    depth: int
    accs: set[str] = dataclasses.field(default_factory=set)


@contextlib.contextmanager
def _active(w: Writer, lane: _Lane | None) -> Iterator[None]:
    """Write ``lane``'s code: its row index and memo of values in place of the writer's (a frame
    of its own inside a loop, dropped after), its vector elements as its full inputs there."""
    if lane is None:
        yield
        return
    saved = w.scopes, w.tmps, w.row_index, w.vector_src
    inner = w.depth > lane.depth
    if inner:
        lane.scopes.append({})
        lane.tmps.append({})
    w.scopes, w.tmps, w.row_index = lane.scopes, lane.tmps, lane.row
    w.vector_src = lane.vector_src if inner else {}
    try:
        yield
    finally:
        if inner:
            lane.scopes.pop()
            lane.tmps.pop()
        w.scopes, w.tmps, w.row_index, w.vector_src = saved


def _emit_phases(w: Writer, info: GroupInfo, loop: _Loop | Callable[[int], list[_Loop]],
                 combine: Callable[[Writer, list[tuple[Node, str]]], None], one_pass: bool = False,
                 picks: dict[int, Callable[[Writer], str]] | None = None, split: _Split | None = None,
                 lanes: list[_Lane] | None = None, online: bool = False,
                 scan: Callable[[Writer, list[Node], _Loop], int] | None = None, store_if: str | None = None) -> None:
    """The phases of a reduction group: one pass per depth (its reductions accumulate, then
    ``combine`` reduces each accumulator over the team), then a pass storing the full outputs.
    ``loop`` may depend on the pass number (0, 1, …) and give several loops that together cover
    the elements (a column's register-cached head and streamed rest, in alternating order).

    With ``one_pass`` (schedules whose passes re-read memory), the variances of
    :meth:`~stitchlab.plan.groups.GroupInfo.one_pass_variances` cost no pass of their own: in
    the mean's pass each thread keeps Welford's running count ``n``, mean ``m`` and sum of squared
    deviations ``q`` of ``e - k``, its elements less the first one ``k`` (so that ``m`` is of the
    order of the spread, not of the mean: a float32 running mean of 1e4 +- 0.5 drifts by its
    roundings, measured 4e-4 of the variance without the pivot). Once the team's mean ``mu`` is
    known, the thread's sum of squared deviations from it is ``q + n (k + m - mu)^2`` (both terms
    non-negative: no cancellation, unlike a sum of squares), and ``combine`` sums those like any
    other partial sums. The running mean's ``1/n`` is the approximate reciprocal: its error only
    moves the point ``q`` is taken about, which the correction term accounts for.

    ``picks`` (by reduction id) write a reduction's result without a pass
    (:meth:`~stitchlab.plan.groups.GroupInfo.one_hot_picks`),
    once the reductions of the phase before it are known.

    ``split`` (split schedules, whose blocks each reduce a chunk): the one-pass variances are
    combined across blocks with :func:`_split_variances` instead of ``combine``.

    ``lanes`` (a column schedule with several kept indices a thread): each lane's scalar code is
    written after the other's, in the same loops (:func:`_active`); ``combine`` gets the
    accumulators of every lane at once.

    ``online`` (with ``one_pass``, neither ``split`` nor ``lanes``): the sums of
    :meth:`~stitchlab.plan.groups.GroupInfo.online_exp_sums` in the max's pass.

    ``scan`` (row schedules that hold the row, or tiles of it, in registers): writes the scans of
    a phase, after its reductions, given the loop of a pass, and gives the passes it took
    (:func:`_row_scans`, :func:`_tile_scans`).

    ``store_if``: a condition on the pass that stores the full outputs (threads that work on a
    row only for their warp's shuffles store nothing)."""
    picks = picks or {}
    loops_of = loop if callable(loop) and not isinstance(loop, _Loop) else (lambda _k: [loop])
    merged = info.one_pass_variances() if one_pass and (OPTIONS["one_pass_variance"] or split is not None) else {}
    online_sums = info.online_exp_sums() if one_pass and online and split is None and not lanes else {}
    emitted: set[int] = set()
    each: list[_Lane | None] = list(lanes) if lanes else [None]

    def ready(done: int) -> None:
        nodes = _row_nodes_ready(info, done, emitted)
        for lane in each:
            with _active(w, lane):
                for n in nodes:
                    w.value(n, w.row_index)
        emitted.update(id(n) for n in nodes)

    def finish(accs: list[tuple[Node, str, _Lane | None]], combined: bool = False) -> None:
        if not combined:
            combine(w, [(r, a) for r, a, _ in accs])
        for r, a, lane in accs:
            if r.dtype == np.float16:
                w.line(f"{a} = sl_round_half({a});")
            elif is_bfloat16(r.dtype):
                w.line(f"{a} = sl_round_bf16({a});")
            # a position is an int in the kernel and an int64 value (NumPy's) to what reads it
            val = f"(({ct.register_type(r.dtype)})sl_arg_index({a}))" if r.op in ARG_REDUCTIONS else a
            with _active(w, lane):  # (the lane's memo of row values)
                w.scopes[0][(id(r), "row")] = val
                w.scopes[0][(id(r), "full")] = val

    ready(0)
    passes = 0
    for d in range(1, info.phases + 1):
        reds = [r for r in info.reductions
                if info.depth[id(r)] == d and id(r) not in merged and id(r) not in picks and id(r) not in online_sums]
        # (sum of exp(a - shift), a, shift, running max, running sum) of this pass's maxima
        ol = [(r2, a, shift, w.fresh("om"), w.fresh("os")) for r2 in info.reductions if id(r2) in online_sums
              for a, shift, top in [online_sums[id(r2)]] if any(top is r for r in reds)]
        for r2, _a, _shift, m, sm in ol:
            t = _acc_type(r2)
            w.line(f"{t} {m} = {ct.identity_literal('max', r2.dtype)}, {sm} = 0;")
        accs: list[tuple[Node, str, _Lane | None]] = []
        # (variance, its mean, count, running mean, sum of squared deviations, lane), by source reduction
        wf: dict[int, list[tuple[Node, Node, str, str, str, str, _Lane | None]]] = {}
        count = ""  # (lanes: the rows counted so far, shared by the lanes' running means)
        for lane in each:
            for r in reds:
                a = w.fresh("acc")
                accs.append((r, a, lane))
                if lane is not None:
                    lane.accs.add(a)
                w.line(f"{_acc_type(r)} {a} = {_identity(r, cast=False)};")
            for r2 in info.reductions:
                if id(r2) in merged and merged[id(r2)][0] in reds:
                    t = _acc_type(r2)
                    n, k, m, q = w.fresh("wn"), w.fresh("wk"), w.fresh("wm"), w.fresh("wq")
                    if lane is None:
                        w.line(f"{t} {n} = 0, {k} = 0, {m} = 0, {q} = 0;")
                    else:  # every lane visits the same rows: one count (and its reciprocal) for all
                        n = count = count or w.fresh("wn")
                        w.line(f"{t} {k} = 0, {m} = 0, {q} = 0;")
                    wf.setdefault(id(merged[id(r2)][0]), []).append((r2, merged[id(r2)][1], n, k, m, q, lane))
        if count:
            w.line(f"float {count} = 0;")
        if accs:
            w.loop_no += 1
            w.hoist_at, w.hoist_depth = len(w.lines), w.depth
            for lp in loops_of(passes):
                w.cache_on = lp.cache_on
                # a loop in groups (tiles, chunks): the group's maximum first, so that the running
                # sums are scaled once a group and each element adds one exp, with no branch
                group_max = bool(ol) and lp.group is not None and OPTIONS["group_maxima"]
                if group_max:
                    lp.open(w, functools.partial(_group_maxima, lp=lp, ol=ol))
                else:
                    lp.open(w)
                if count:
                    first, rn = w.fresh("wf"), w.fresh("wr")
                    w.line(f"const bool {first} = {count} == 0.0f; {count} += 1.0f; const float {rn} = sl_rcp_ge1({count});")
                for lane in each:
                    with _active(w, lane):
                        full = w.full_index = w.make_full()
                        for r, a, lane_of in accs:
                            if lane_of is not lane:
                                continue
                            v = w.value(r.inputs[0], full)
                            for _r2, _mean, n, k, m, q, _ln in (i for i in wf.get(id(r), []) if i[6] is lane):
                                x, dv = w.fresh("wx"), w.fresh("wd")
                                # per element the chain through m is one subtract and one fused multiply-add
                                if count:
                                    w.line(f"{k} = {first} ? {v} : {k}; const float {x} = {v} - {k}, {dv} = {x} - {m}; "
                                           f"{m} = fmaf({dv}, {rn}, {m}); {q} = fmaf({dv}, {x} - {m}, {q});")
                                else:
                                    w.line(f"{k} = {n} == 0.0f ? {v} : {k}; {n} += 1.0f; const float {x} = {v} - {k}, {dv} = {x} - {m}; "
                                           f"{m} = fmaf({dv}, sl_rcp_ge1({n}), {m}); {q} = fmaf({dv}, {x} - {m}, {q});")
                            _accumulate(w, r, a, v)
                        for r2, a_node, _shift, m, sm in ol:
                            # exp(v - m) with m the running maximum: each term at most 1; v == m
                            # counts 1 (two equal infinities: the rescale below gives the exact
                            # inf or NaN; -inf terms vanish once m is finite), NaN poisons s
                            v, t = w.value(a_node, full), _acc_type(r2)
                            if group_max:  # (m is the group's maximum already)
                                w.line(f"{sm} += {v} == {m} ? ({t})1 : exp({v} - {m});")
                            else:
                                w.line(f"if ({v} > {m}) {{ {sm} = {sm} * exp({m} - {v}) + ({t})1; {m} = {v}; }} "
                                       f"else {sm} += {v} == {m} ? ({t})1 : exp({v} - {m});")
                lp.close(w)
            passes += 1
            w.cache_on = True
            w.hoist_at = None
            w.filled |= w.filling
            if split is not None and wf:
                _split_variances(w, info, [(r, a) for r, a, _ in accs], [item[:6] for items in wf.values() for item in items],
                                 split, lambda done, combined=False: finish([(r, a, None) for r, a in done], combined))
                wf = {}
            else:
                finish(accs)
        parts: list[tuple[Node, str, _Lane | None]] = []
        for r2, mean, n, k, m, q, lane in (item for items in wf.values() for item in items):
            with _active(w, lane):
                mu, a, dl = w.as_float(w.value(mean, w.row_index)), w.fresh("acc"), w.fresh("wd")
                w.line(f"const float {dl} = ({k} - {mu}) + {m};")
                w.line(f"float {a} = fmaf({n} * {dl}, {dl}, {q});")
            if lane is not None:
                lane.accs.add(a)
            parts.append((r2, a, lane))
        for r2, _a, shift, m, sm in ol:
            part, t = w.fresh("acc"), _acc_type(r2)
            # (a thread that took no element adds 0 * exp(-inf - shift): 0, or NaN where the shift
            # is -inf, which the row's other threads give it anyway)
            w.line(f"{t} {part} = {sm} * exp({m} - ({t})({w.value(shift, w.row_index)}));")
            parts.append((r2, part, None))
        if parts:
            finish(parts)
        picked = [(r, picks[id(r)](w), None) for r in info.reductions if info.depth[id(r)] == d and id(r) in picks]
        if picked:
            finish(picked, combined=True)
        scans = [n for n in info.scans if info.depth[id(n)] == d]
        if scans:
            if scan is None:
                raise CodegenError(f"this schedule does not hold the row that the scan {scans[0].op} needs")
            (lp,) = loops_of(passes)
            passes += scan(w, scans, lp)
        ready(d)
    full_outs = [(k, o) for k, (o, lvl) in enumerate(info.outputs) if lvl == FULL]
    if full_outs:
        if store_if:
            w.open(f"if ({store_if})")
        w.loop_no += 1
        w.hoist_at, w.hoist_depth = len(w.lines), w.depth
        for lp in loops_of(passes):
            w.cache_on = lp.cache_on
            if lp.store_open is not None:
                lp.store_open(w, full_outs)
            else:
                lp.open(w)
            for lane in each:
                with _active(w, lane):
                    full = w.full_index = w.make_full()
                    for k, o in full_outs:
                        v = w.value(o, full)
                        if lp.store is not None:
                            lp.store(w, k, v, full)
                        else:
                            w.line(f"sl_store(out{k} + {w.linear(full)}, {v});")
            if lp.store_close is not None:
                lp.store_close(w, full_outs)
            else:
                lp.close(w)
        w.cache_on = True
        w.hoist_at = None
        if store_if:
            w.close()


def _group_maxima(w: Writer, lp: _Loop, ol: list[tuple[Node, Node, Node, str, str]]) -> None:
    """The running maxima ``m`` of the online sums ``ol`` (``_emit_phases``) raised to the largest
    value of a group (a tile, a chunk), over the group's elements (``lp.group``, before the pass's
    loop over them), and their sums ``s`` scaled to them: each element of the group then adds
    ``exp(v - m)`` without a branch, and the exps of a thread's group are independent (top-p over
    64 x 128256 float32 on an H100: 34.3 against 40.0 us). NaNs are passed over here (``fmax``)
    and poison ``s`` when added; an infinite maximum scales ``s`` to 0, as an element at a time did."""
    assert lp.group is not None
    top = [(w.fresh("tm"), r2, a_node, m, sm) for r2, a_node, _shift, m, sm in ol]
    for tm, r2, _a, m, _sm in top:
        w.line(f"{_acc_type(r2)} {tm} = {m};")
    lp.group.open(w)
    full = w.full_index = w.make_full()
    for tm, _r2, a_node, _m, _sm in top:
        w.line(f"{tm} = fmax({tm}, {w.value(a_node, full)});")
    lp.group.close(w)
    for tm, _r2, _a, m, sm in top:
        w.line(f"if ({tm} > {m}) {{ {sm} *= exp({m} - {tm}); {m} = {tm}; }}")


def _row_outputs(w: Writer, info: GroupInfo, guard: str, r: str) -> None:
    row = w.row_index
    assert row is not None
    vals = [(k, w.value(o, row)) for k, (o, lvl) in enumerate(info.outputs) if lvl == ROW]
    if vals:
        w.open(f"if ({guard})")
        for k, v in vals:
            w.line(f"sl_store(out{k} + {r}, {v});")
        w.close()


def _cached_leaves(info: GroupInfo, params: list[Param]) -> list[Param]:
    return [p for p in params if p.role == "in" and info.is_full_leaf(p.node)]


def row_vector_width(info: GroupInfo, vec: int) -> int:
    """The vector width a row schedule asking for ``vec`` gets: ``vec`` when it divides the width
    the latency evaluator allows for the group (:func:`stitchlab.plan.cost.row_vector_width`; the
    planner asks for that width or 1, ``benchmarks/kernel_sweep.py`` for narrower ones too), else 1."""
    full = cost_row_vector_width(info)
    return vec if 1 < vec <= full and full % vec == 0 and vec & (vec - 1) == 0 else 1


def emit_row(info: GroupInfo, sched: Schedule) -> KernelSource:
    """``row_warp`` and ``row_block``: a team of threads per row, phases stitched in registers.

    With ``cache=registers`` every row input is loaded into registers up front (all loads in
    flight before the first reduction; 16-byte vectors when ``sched.vec`` > 1 and the pointers are
    aligned, checked in the kernel), values that several phases compute and that are expensive
    (``exp`` in softmax) are kept in registers too, and the full outputs are stored as vectors.
    With ``cache=none`` and ``sched.vec`` > 1 each pass streams the row in 16-byte chunks
    (``STREAM_VEC_UNROLL`` in flight), loaded and stored as vectors where aligned.
    """
    idx_t = sched.index
    params, names = _buffer_params(info)
    params.append(Param("R", f"const {idx_t}", "R"))
    cache = sched.cache
    vec = row_vector_width(info, sched.vec) if cache in ("registers", "tiles", "none") else 1
    sched = dataclasses.replace(sched, vec=vec)
    leaves = _cached_leaves(info, params) if cache != "none" else []
    probe = _row_body(info, sched, params, names, leaves, [])
    values: list[Node] = []
    if cache in ("registers", "tiles"):
        leaves = [p for p in leaves if id(p.node) in probe.full_loads]
        if OPTIONS["cache_values"] and cache == "registers":
            team = sched.lanes if sched.family == "row_warp" else sched.block
            slots = -(-info.cols // (team * vec)) * vec
            words = sum(_reg_words(p.node) for p in leaves) * slots
            for n in info.members:
                if len(probe.full_evals.get(id(n), ())) >= 2 and OPS[n.op].cost >= CACHE_VALUE_COST:
                    if words + _reg_words(n) * slots <= CACHE_REG_BUDGET:
                        values.append(n)
                        words += _reg_words(n) * slots
    w = _row_body(info, sched, params, names, leaves, values)
    return _finish(sched.family, info, sched, params, w.lines, sched.block)


def _reg_words(n: Node) -> int:
    return 2 if n.dtype.itemsize == 8 else 1


def _row_body(info: GroupInfo, sched: Schedule, params: list[Param], names: dict[int, str],
              leaves: list[Param], values: list[Node]) -> Writer:
    idx_t = sched.index
    team = sched.lanes if sched.family == "row_warp" else sched.block
    block, vec, cache = sched.block, sched.vec, sched.cache
    if team < 32 and (team & (team - 1) or info.scans or sched.family != "row_warp"):
        raise CodegenError(f"rows of fewer lanes than a warp are row_warp's, a power of two, without scans: {sched}")
    rows_per_block = block // team
    K = info.cols
    w = _reduction_writer(info, idx_t, names)
    if team > 32:
        for k, r in enumerate(info.reductions):
            w.line(f"__shared__ {_acc_type(r)} sred{k}[32];")
    if info.scans and cache not in ("registers", "tiles"):
        raise CodegenError(f"a row kernel with a scan holds its row, or tiles of it, in registers, not cache={cache!r}")
    if cache == "tiles" and (not info.scans or sched.family != "row_block"):
        raise CodegenError(f"cache='tiles' is a row_block schedule of a group with scans, not {sched}")
    w.line(f"const int lane = threadIdx.x % {team};")
    # (Schedule.row_loop: a streamed row_block walks its rows, every pass after the first going
    # the other way; an argmax/argmin thread steps up its positions, so its passes do not turn)
    row_loop = sched.row_loop
    if row_loop and (sched.family != "row_block" or cache != "none"):
        raise CodegenError(f"row_loop is a schedule of row_block with cache='none', not {sched}")
    stepping = any(r.op in ARG_REDUCTIONS for r in info.reductions)
    turn = row_loop and not stepping
    if row_loop:
        w.open(f"for ({idx_t} r = ({idx_t})blockIdx.x; r < R; r += ({idx_t})gridDim.x)")
    else:
        if team < 32:
            # several rows a warp: a warp past the last row leaves; in the last warp, teams past it
            # work on the last row (their shuffles are the warp's) and store nothing
            w.line(f"const {idx_t} rw = ({idx_t})blockIdx.x * {rows_per_block} + threadIdx.x / 32 * {32 // team};")
            w.line("if (rw >= R) return;")
            w.line(f"const bool live = rw + (threadIdx.x % 32) / {team} < R;")
            w.line(f"const {idx_t} r = live ? rw + (threadIdx.x % 32) / {team} : R - 1;")
        else:
            w.line(f"const {idx_t} r = ({idx_t})blockIdx.x * {rows_per_block} + threadIdx.x / {team};")
            w.line("if (r >= R) return;")
    w.row_index = Index(info.keep_shape, lin="r", tag="row")
    out_full = [(k, o) for k, (o, lvl) in enumerate(info.outputs) if lvl == FULL]
    pending: list[Callable[[Writer], None]] = []  # emitted after the first combine
    tiles = cache == "tiles"
    if cache in ("registers", "tiles") or vec > 1:
        # the row in chunks of vec consecutive elements, chunk t of lane at (lane + t * team) * vec:
        # all nt chunks held in registers, or streamed (cache "none", 16-byte vectors) in a loop;
        # "tiles": the row walked in tiles of nt * team chunks, the tile from chunk tb held in
        # registers (_tile_scans)
        nt = scan_tile_chunks(tile_words(info), vec) if tiles else -(-K // (team * vec))
        slots = nt * vec
        w.slot = f"t * {vec} + u" if vec > 1 else "t"
        chunk = f"(tb + lane + t * {team})" if tiles else f"(lane + t * {team})"
        guard = f"if ({chunk} * {vec} < {K})" if vec > 1 else f"if ({chunk} < {K})"
        if cache in ("registers", "tiles"):
            header = ("#pragma unroll", f"for (int t = 0; t < {nt}; ++t) {guard}")
        else:
            header = (f"#pragma unroll {STREAM_VEC_UNROLL}", f"for (int t = 0; {chunk} * {vec} < {K}; ++t)")
        back = (header[0], f"for (int t = {nt - 1}; t >= 0; --t) {guard}")  # (row_loop's turned passes)

        def rowbase(row: str = "r") -> str:
            """The offset of the chunk's first element (rows strided over memory: by index)."""
            return w.linear(_full_index(w, info, row, f"{chunk} * {vec}", str(K), str(info.rows)))
        for p in leaves:
            w.line(f"{ct.register_type(p.node.dtype)} cache_{p.name}[{slots}];")
            w.cache_read[id(p.node)] = f"cache_{p.name}[{w.slot}]"
        for n in values:
            name = w.fresh("vc")
            w.line(f"{ct.register_type(n.dtype)} {name}[{slots}];")
            w.value_cache[id(n)] = name
        if vec > 1:
            w.vec_width = vec
            ptrs = [p.name for p in leaves] + [f"out{k}" for k, _ in out_full]
            if ptrs:
                checks = [f"(unsigned long long){p}" for p in ptrs]
                w.line(f"const bool aligned = (({' | '.join(checks)}) & {vec * max(_itemsize(info, ptrs, params)) - 1}ULL) == 0ULL;")
            else:
                w.line("const bool aligned = true;")

        def load_leaves(w: Writer) -> None:
            """Every cached input of the row (of the tile) loaded: all loads in flight at once."""
            if vec > 1:
                w.open("if (aligned)")
                w.line("#pragma unroll")
                w.open(f"for (int t = 0; t < {nt}; ++t) {guard}")
                base = w.tmp(rowbase())
                # Measured on the H200 (compiler.md §4): the streaming hint makes cross-entropy 4-5 %
                # faster; where full-size outputs are stored, it (and on the stores) was slower
                stream = OPTIONS["cache_hints"] and not out_full and not tiles  # (a tile is read again)
                for p in leaves:
                    st = ct.storage_type(p.node.dtype)
                    load = f"sl_load_stream<{st}, {vec}>" if stream else f"*reinterpret_cast<const sl_vec<{st}, {vec}>*>"
                    w.line(f"const sl_vec<{st}, {vec}> ld_{p.name} = {load}({p.name} + {base});")
                for p in leaves:
                    w.line("#pragma unroll")
                    w.line(f"for (int u = 0; u < {vec}; ++u) cache_{p.name}[t * {vec} + u] = sl_load(&ld_{p.name}.v[u]);")
                w.close()
                w.close()
                w.open("else")
                w.line("#pragma unroll")
                w.open(f"for (int t = 0; t < {nt}; ++t) {guard}")
                base = w.tmp(rowbase())
                for p in leaves:
                    w.line("#pragma unroll")
                    w.line(f"for (int u = 0; u < {vec}; ++u) cache_{p.name}[t * {vec} + u] = sl_load({p.name} + {base} + u);")
                w.close()
                w.close()
            else:
                w.line("#pragma unroll")
                w.open(f"for (int t = 0; t < {nt}; ++t) {guard}")
                full = _full_index(w, info, "r", f"{chunk}", str(K), str(info.rows))
                lin = w.linear(full)
                for p in leaves:
                    w.line(f"cache_{p.name}[t] = sl_load({p.name} + {lin});")
                w.close()

        w.filled |= {id(p.node) for p in leaves}  # (tiles: each pass loads its tiles, tile_open)
        if leaves and not tiles:
            load_leaves(w)
            ahead = sched.prefetch if ROW_PREFETCH is None else ROW_PREFETCH

            def prefetch(w: Writer) -> None:
                """The row a later block will load, into L2 while this block works on its own."""
                w.open("")
                w.line(f"const {idx_t} rp = r + {ahead};")
                w.open("if (rp < R)")
                w.line("#pragma unroll")
                w.open(f"for (int t = 0; t < {nt}; ++t) {guard}")
                base = w.tmp(rowbase("rp"))
                for p in leaves:
                    w.line(f"sl_prefetch_l2({p.name} + {base});")
                w.close()
                w.close()
                w.close()
            if ahead and not ROW_PREFETCH_LATE:
                prefetch(w)
            elif ahead:
                pending.append(prefetch)

        lane: list[str | None] = [None]

        def chunk_start(w: Writer) -> None:
            if vec > 1:
                lane[0] = w.tmp(rowbase())
                w.vec_at, w.vec_depth, w.side_loaded = len(w.lines), w.depth, {}

        # (tiles: the scans each pass computes again, tile by tile, by depth; _tile_scans)
        tile_scans: list[_TileScan] = []

        def tile_open(w: Writer) -> None:
            """A tiled pass's start: each scan's running value, the tile loop, the tile's cached
            inputs, and the scans known so far over the tile, from the running values before it."""
            w.open("")
            for sc in tile_scans:
                w.line(f"{sc.ctype} cy{sc.smem} = {sc.ident};")
            step = nt * team
            if OPTIONS["reverse_tiles"] and not tile_scans and not stepping:
                # a pass that reads no scan walks its tiles last to first, so that the scanning
                # pass after it (first to last) starts on the tiles it read last, still in L2
                # (not with an argmax/argmin, whose threads step up their positions)
                w.open(f"for (int tb = {(-(-K // vec) - 1) // step * step}; tb >= 0; tb -= {step})")
            else:
                w.open(f"for (int tb = 0; tb * {vec} < {K}; tb += {step})")
            load_leaves(w)
            if OPTIONS["tile_prefetch"] and leaves:  # the next tile's inputs into L2 behind this one's loads
                w.open(f"if ((tb + {step}) * {vec} < {K})")
                w.line("#pragma unroll")
                ahead = f"(tb + {step} + lane + t * {team})"
                w.open(f"for (int t = 0; t < {nt}; ++t) if ({ahead} * {vec} < {K})")
                base = w.tmp(w.linear(_full_index(w, info, "r", f"{ahead} * {vec}", str(K), str(info.rows))))
                for p in leaves:
                    w.line(f"sl_prefetch_l2({p.name} + {base});")
                w.close()
                w.close()
            if tile_scans and team > 32:
                w.line("__syncthreads();  // the scans' shared buffers, read by the last tile's")
            for d in sorted({info.depth[id(sc.node)] for sc in tile_scans}):
                level = [sc for sc in tile_scans if info.depth[id(sc.node)] == d]
                for sc in level:
                    w.line(f"{sc.ctype} {sc.array}[{slots}];")
                    w.line("#pragma unroll")
                    w.line(f"for (int i = 0; i < {slots}; ++i) {sc.array}[i] = {sc.ident};")
                open_(w, tiled=False)
                full = w.full_index = w.make_full()
                for sc in level:
                    w.line(f"{sc.array}[{w.slot}] = {w.as_float(w.value(sc.node.inputs[0], full))};")
                close(w, tiled=False)
                for sc in level:
                    w.line(f"cy{sc.smem} = sl_row_scan<{nt}, {vec}, {team}>({sc.array}, {sc.op}(), {sc.ident}, lane, "
                           f"{sc.smem}, cy{sc.smem});")
                    _round_scan(w, sc.node, sc.array, slots)
                    w.filled.add(id(sc.node))

        def open_(w: Writer, prologue: Callable[[Writer], None] | None = None, head: tuple[str, str] = header,
                  tiled: bool = tiles) -> None:
            if tiled:
                tile_open(w)
                if prologue is not None:  # (over the tile)
                    prologue(w)
            w.line(head[0])
            w.open(head[1])
            chunk_start(w)
            if vec > 1:
                if prologue is not None and not tiled:  # (over the chunk)
                    prologue(w)
                open_chunk(w)

        def open_chunk(w: Writer) -> None:
            w.line("#pragma unroll")
            w.open(f"for (int u = 0; u < {vec}; ++u)")

        def close(w: Writer, tiled: bool = tiles) -> None:
            w.close()
            if vec > 1:
                w.close()
            w.vec_at = None
            if tiled:
                w.close()
                w.close()

        def make_full() -> Index:
            c = w.reduced_pos = w.tmp(f"{chunk} * {vec} + u" if vec > 1 else chunk)
            full = _full_index(w, info, "r", c, str(K), str(info.rows))
            return dataclasses.replace(full, lane=lane[0]) if vec > 1 and w.vec_at is not None else full

        # the elements held at once, which the group maxima of online sums go over first
        # (_group_maxima): a tile; a streamed chunk where the kernel stores no full-size output,
        # or has few rows (with one, softmax's, the H100 took 1 % longer at 512 and 1,024 rows of
        # 128,256 or more, and 11 % less at 64: Schedule.few_rows)
        if tiles:
            group = _Loop(functools.partial(open_, tiled=False), functools.partial(close, tiled=False))
        elif cache == "none" and vec > 1 and (not out_full or sched.few_rows):
            group = _Loop(open_chunk, lambda w: w.close())
        else:
            group = None
        loop = _Loop(open_, close, group=group)
        loop_back = _Loop(functools.partial(open_, head=back), close, group=group)
        if vec > 1:
            def store_open(w: Writer, outs: list[tuple[int, Node]], head: tuple[str, str] = header) -> None:
                if tiles:
                    tile_open(w)
                w.line(head[0])
                w.open(head[1])
                for k, o in outs:
                    w.line(f"sl_vec<{ct.storage_type(o.dtype)}, {vec}> vo{k};")
                chunk_start(w)
                w.line("#pragma unroll")
                w.open(f"for (int u = 0; u < {vec}; ++u)")

            def store(w: Writer, k: int, v: str, full: Index) -> None:
                w.line(f"sl_store(&vo{k}.v[u], {v});")

            def store_close(w: Writer, outs: list[tuple[int, Node]]) -> None:
                w.close()
                base = w.tmp(rowbase())
                w.open("if (aligned)")
                for k, o in outs:
                    st = ct.storage_type(o.dtype)
                    w.line(f"*reinterpret_cast<sl_vec<{st}, {vec}>*>(out{k} + {base}) = vo{k};")
                w.close()
                w.open("else")
                for k, _ in outs:
                    w.line("#pragma unroll")
                    w.line(f"for (int u = 0; u < {vec}; ++u) out{k}[{base} + u] = vo{k}.v[u];")
                w.close()
                w.close()
                w.vec_at = None
                if tiles:
                    w.close()
                    w.close()

            loop = _Loop(open_, close, store_open, store_close, store, group=group)
            loop_back = _Loop(functools.partial(open_, head=back), close, functools.partial(store_open, head=back),
                              store_close, store, group=group)
    else:
        if cache == "shared":
            for p in leaves:
                reg = ct.register_type(p.node.dtype)
                cname = f"cache_{p.name}"
                w.line(f"__shared__ {reg} {cname}_s[{rows_per_block * K}];")
                w.line(f"{reg}* {cname} = {cname}_s + (threadIdx.x / {team}) * {K};")
                w.cache_read[id(p.node)] = f"{cname}[c]"
                w.cache_fill[id(p.node)] = cname + "[c] = {}"
        unroll = (ROW_STREAM_UNROLL or stream_unroll(info)) if cache == "none" else 4
        loop = _simple_loop(f"for ({idx_t} c = lane; c < {K}; c += {team})", f"#pragma unroll {unroll}")
        last = (K - 1) // team * team  # (row_loop's turned passes: the thread's last position first)
        loop_back = _simple_loop(f"for ({idx_t} c = lane + {last}; c >= 0; c -= {team})", f"#pragma unroll {unroll}",
                                 inner_guard=f"if (c < {K})")

        def make_full() -> Index:
            w.reduced_pos = "c"
            return _full_index(w, info, "r", "c", str(K), str(info.rows))

    w.make_full = make_full
    once = "_once" if OPTIONS["single_sync"] else ""

    def combine(w: Writer, accs: list[tuple[Node, str]]) -> None:
        for r, a in accs:
            if team <= 32:
                w.line(f"{a} = sl_warp_allreduce{f'<{team}>' if team < 32 else ''}({a}, {_OPS[r.op]}());")
            else:
                k = info.reductions.index(r)
                ident = _identity(r)
                # each buffer is used once per block (one row per block): no trailing barrier;
                # the second stage combines the block's warps in log2(warps) steps
                warps = f"<{1 << (-(-team // 32) - 1).bit_length()}>" if once else ""
                w.line(f"{a} = sl_block_allreduce{once}{warps}({a}, {_OPS[r.op]}(), {ident}, sred{k});")
        while pending:
            pending.pop()(w)

    found = info.one_hot_picks() if OPTIONS["one_hot_pick"] else {}

    def emit_pick(red: Node, w: Writer) -> str:
        """One-hot sum ``red``: its ``a`` read at column ``b`` (0 where ``b`` is outside the row)."""
        b_node, a_node = found[id(red)]
        b = w.value(b_node, w.row_index)
        acc, t = w.fresh("acc"), _acc_type(red)
        w.line(f"{t} {acc} = {ct.identity_literal('sum', red.dtype)};")
        w.open(f"if ({b} >= 0 && {b} < {K})")
        at = dataclasses.replace(_full_index(w, info, "r", f"({idx_t})({b})", str(K), str(info.rows)), tag=w.fresh("pick"))
        w.line(f"{acc} = {_OPS['sum']}()({acc}, ({t})({w.as_float(w.value(a_node, at))}));")
        w.close()
        return acc

    picks = {id(r): functools.partial(emit_pick, r) for r in info.reductions if id(r) in found}
    if cache == "tiles":
        scan = functools.partial(_tile_scans, found=tile_scans, team=team, nt=nt)
    else:
        scan = functools.partial(_row_scans, info=info, team=team, vec=vec) if cache == "registers" else None
    # a row held on chip costs nothing to read again; a streamed one (or its tiles) once per pass
    _emit_phases(w, info, (lambda k: [loop_back if k % 2 else loop]) if turn else loop, combine,
                 one_pass=cache in ("none", "tiles"), picks=picks,
                 online=OPTIONS["online_exp_sum_streamed"] or ((row_loop or cache == "tiles") and OPTIONS["online_exp_sum"]),
                 scan=scan, store_if="live" if team < 32 else None)
    _row_outputs(w, info, "lane == 0 && live" if team < 32 else "lane == 0", "r")
    if row_loop:
        w.line("__syncthreads();  // the next row's reductions reuse the block's buffers")
        w.close()
    return w


class _TileScan(NamedTuple):
    """A scan of a kernel that walks its rows in tiles: its node, the tile's array of its running
    values, its shared buffer (``sl_row_scan``'s), C type, combining functor and identity."""

    node: Node
    array: str
    smem: str
    ctype: str
    op: str
    ident: str


def _tile_scans(w: Writer, scans: list[Node], loop: _Loop, found: list[_TileScan], team: int, nt: int) -> int:
    """The scans of a phase in a row kernel that walks its row in tiles (``cache="tiles"``): no
    pass of their own; each later pass scans every tile again, from the running value the tiles
    before it left (``tile_open`` in :func:`_row_body`), and reads the running values from the
    tile's array as any value cached across phases. The same tiles in the same order give every
    pass the same values, bit for bit."""
    for s in scans:
        t, op = ct.register_type(s.dtype), ct.SCAN_REDUCTIONS[s.op]
        sc = _TileScan(s, w.fresh("sc"), w.fresh("sscan"), t, _scan_functor(s), f"({t}){ct.scan_identity_literal(op, s.dtype)}")
        w.line(f"__shared__ {t} {sc.smem}[{nt * (team // 32 + 1)}];" if team > 32 else f"{t}* const {sc.smem} = nullptr;")
        found.append(sc)
        w.value_cache[id(s)] = sc.array
    return 0


def _row_scans(w: Writer, scans: list[Node], loop: _Loop, info: GroupInfo, team: int, vec: int) -> int:
    """The scans of a phase in a row kernel that holds its row in registers (``w.slot`` is an
    element's place there): a pass puts each scan's input into an array of its own (the identity
    past the row's end), ``sl_row_scan`` turns each into its running values across the team, and
    the passes after read them from there as any value cached across phases."""
    slots = -(-info.cols // (team * vec)) * vec
    arrays = []
    for s in scans:
        t, op = ct.register_type(s.dtype), ct.SCAN_REDUCTIONS[s.op]
        a, ident = w.fresh("sc"), f"({t}){ct.scan_identity_literal(op, s.dtype)}"
        w.line(f"{t} {a}[{slots}];")
        w.line("#pragma unroll")
        w.line(f"for (int i = 0; i < {slots}; ++i) {a}[i] = {ident};")
        arrays.append((s, a, t, _scan_functor(s), ident))
    w.loop_no += 1
    w.hoist_at, w.hoist_depth = len(w.lines), w.depth
    w.cache_on = loop.cache_on
    loop.open(w)
    full = w.full_index = w.make_full()
    for s, a, *_ in arrays:
        w.line(f"{a}[{w.slot}] = {w.as_float(w.value(s.inputs[0], full))};")
    loop.close(w)
    w.cache_on = True
    w.hoist_at = None
    w.filled |= w.filling
    for s, a, t, op, ident in arrays:
        if team > 32:
            sm = w.fresh("sscan")
            w.line(f"__shared__ {t} {sm}[{(slots // vec) * (team // 32 + 1)}];")
        else:
            sm = f"({t}*)nullptr"
        w.line(f"sl_row_scan<{slots // vec}, {vec}, {team}>({a}, {op}(), {ident}, lane, {sm});")
        _round_scan(w, s, a, slots)
        w.value_cache[id(s)] = a
        w.filled.add(id(s))
    return 1


def _round_scan(w: Writer, s: Node, a: str, slots: int) -> None:
    """A bfloat16 scan's running values, added in float32, each rounded to bfloat16 once (the
    library step's results; a tile's carry stays float32)."""
    if is_bfloat16(s.dtype):
        w.line("#pragma unroll")
        w.line(f"for (int i = 0; i < {slots}; ++i) {a}[i] = sl_round_bf16({a}[i]);")




def _itemsize(info: GroupInfo, ptrs: list[str], params: list[Param]) -> list[int]:
    by_name = {p.name: p.node.dtype.itemsize for p in params if p.node is not None}
    return [by_name[p] for p in ptrs]


@dataclass
class _Split:
    """How the blocks of a split schedule (``row_split``, ``column_split``) share a row or column:
    ``team`` combines accumulators over the block's threads of it (each ends with the result);
    block ``g`` writes its partial result of reduction ``k`` to ``ws{k}[slot]`` where ``guard``
    holds; ``handshake`` lets only the last of the ``G`` blocks go on; that block's threads take
    the partials ``ws{k}[slot_j]`` of the blocks ``j`` that ``gather`` (a loop header) gives
    them, ``GATHER_UNROLL`` loads in flight; ``reset`` re-arms the counter for the next call.
    ``slot`` and ``slot_j`` name the accumulator's row ``{r}`` (:attr:`row_of`)."""

    team: Callable[[Writer, list[tuple[Node, str]]], None]
    guard: str
    slot: str
    handshake: Callable[[Writer], None]
    gather: str
    slot_j: str
    reset: str
    #: the row (kept index) of an accumulator, for ``{r}`` in ``slot`` and ``slot_j`` (a lane's)
    row_of: Callable[[str], str] = lambda _a: "r"


#: Partial results each thread of a split reduction's last block has in flight (``sl_load_cg``,
#: unrolled), instead of one volatile load at a time. (8 made ptxas spill the variance merge of
#: column_split kernels: 4 bytes at 40 registers.)
GATHER_UNROLL = 4


def _publish(w: Writer, info: GroupInfo, accs: list[tuple[Node, str]], sp: _Split) -> None:
    """Each block writes its partial results; then only the last block goes on."""
    for r, a in accs:
        w.line(f"if ({sp.guard}) ws{info.reductions.index(r)}[{sp.slot.format(r=sp.row_of(a))}] = {a};")
    sp.handshake(w)


def _gather(w: Writer, info: GroupInfo, accs: list[tuple[Node, str]], sp: _Split) -> None:
    """The last block: each accumulator combined over the ``G`` partial results, in block order."""
    for r, a in accs:
        k = info.reductions.index(r)
        w.line(f"{a} = {_identity(r)};")
        w.line(f"#pragma unroll {GATHER_UNROLL}")
        w.line(f"{sp.gather} {a} = {_OPS[r.op]}()({a}, sl_load_cg(ws{k} + {sp.slot_j.format(r=sp.row_of(a))}));")
    sp.team(w, accs)


def _split_combine(w: Writer, info: GroupInfo, accs: list[tuple[Node, str]], sp: _Split) -> None:
    """Combine each accumulator over the block, write the block's partial results, and (the last
    block) combine the ``G`` partials in block order."""
    sp.team(w, accs)
    _publish(w, info, accs, sp)
    _gather(w, info, accs, sp)
    w.line(sp.reset)


def _split_variances(w: Writer, info: GroupInfo, accs: list[tuple[Node, str]],
                     items: list[tuple[Node, Node, str, str, str, str]], sp: _Split,
                     finish: Callable[..., None]) -> None:
    """The one-pass variances of a split group (:func:`_emit_phases`), exact across blocks.

    Each block sums its chunk (the mean's reduction) and, about its own mean ``S_b / n_b``, its
    threads' squared deviations (Welford's ``q + n (k + m - mean_b)^2``), and writes both
    partials. The last block, once the mean ``mu`` is known, adds ``M2_b + n_b (S_b / n_b -
    mu)^2`` over the blocks in order (Chan's combination: every term non-negative, no
    cancellation). ``n_b`` is the block's share of the reduced extent, from ``chunk``."""
    sp.team(w, accs)
    nb = w.fresh("nb")
    w.line(f"const float {nb} = (float)(c1 > c0 ? c1 - c0 : 0);")
    parts = []
    for r2, _mean, n, k, m, q in items:
        mb, dl, a = w.fresh("wmb"), w.fresh("wd"), w.fresh("acc")
        total = next(a1 for r1, a1 in accs if r1 is _source_sum(info, r2))
        w.line(f"const float {mb} = {nb} > 0.0f ? (float){total} / {nb} : 0.0f;")
        w.line(f"const float {dl} = ({k} - {mb}) + {m};")
        w.line(f"float {a} = fmaf({n} * {dl}, {dl}, {q});")
        parts.append((r2, a))
    sp.team(w, parts)
    _publish(w, info, accs + parts, sp)
    _gather(w, info, accs, sp)
    finish(accs, combined=True)
    merged = []
    for (r2, mean, *_), (_, a) in zip(items, parts, strict=True):
        k1, k2 = info.reductions.index(_source_sum(info, r2)), info.reductions.index(r2)
        mu = w.as_float(w.value(mean, w.row_index))
        w.line(f"{a} = 0.0f;")
        w.line(f"#pragma unroll {GATHER_UNROLL}")
        w.open(sp.gather)
        w.line(f"const {w.idx_t} rest = K - ({w.idx_t})j * chunk;")
        w.line("const float nj = rest <= 0 ? 0.0f : (float)(rest < chunk ? rest : chunk);")
        # a block with no share wrote 0 and 0: its term is 0
        slot = sp.slot_j.format(r=sp.row_of(a))
        w.line(f"const float sj = sl_load_cg(ws{k1} + {slot}), qj = sl_load_cg(ws{k2} + {slot});")
        w.line(f"const float dj = nj > 0.0f ? sj / nj - {mu} : 0.0f;")
        w.line(f"{a} = fmaf(nj * dj, dj, {a} + qj);")
        w.close()
        merged.append((r2, a))
    sp.team(w, merged)
    finish(merged, combined=True)
    w.line(sp.reset)


def _source_sum(info: GroupInfo, r2: Node) -> Node:
    """The mean's reduction of one-pass variance ``r2``."""
    return info.one_pass_variances()[id(r2)][0]


def _split_params(info: GroupInfo, sched: Schedule) -> tuple[list[Param], dict[int, str]]:
    """Parameters of a split reduction (``row_split``, ``column_split``): the buffers, the extents
    ``R`` and ``K``, the split ``G``, a workspace of ``R * G`` partial results per reduction and
    the per-row (per-tile) counters of finished blocks."""
    merged = info.one_pass_variances()  # whatever OPTIONS says: a split schedule has one pass
    if info.phases - (1 if merged else 0) != 1 or info.stores_full:
        raise CodegenError(f"{sched.family} needs one phase (a variance may share its mean's) and no per-element outputs")
    idx_t = sched.index
    params, names = _buffer_params(info)
    params += [Param("R", f"const {idx_t}", "R"), Param("K", f"const {idx_t}", "K"), Param("G", "const int", "G")]
    for k, r in enumerate(info.reductions):
        params.append(Param("ws", f"{_acc_type(r)}* __restrict__", f"ws{k}", r))
    params.append(Param("counter", "unsigned int* __restrict__", "counters"))
    return params, names


def _split_chunk(w: Writer, idx_t: str, unit: int) -> None:
    """Block ``g``'s share ``[c0, c1)`` of the ``K`` reduced indices: ``K / G`` rounded up to a
    multiple of ``unit`` (the threads that step through it together)."""
    w.line(f"const {idx_t} chunk = ((K + G - 1) / G + {unit - 1}) / {unit} * {unit};")
    w.line(f"const {idx_t} c0 = g * chunk;")
    w.line(f"const {idx_t} c1 = c0 + chunk < K ? c0 + chunk : K;")


def _last_block(w: Writer, counter: str, first_thread: str) -> None:
    """The handshake of split reductions: after each block has written its partial results, only
    the last of the ``G`` blocks sharing ``counters[counter]`` goes on (the others return), and
    it sees every partial (fences around the atomic count)."""
    w.line("__threadfence();")
    w.line("__syncthreads();")
    w.line(f"if ({first_thread}) s_last = atomicAdd(counters + {counter}, 1u) == (unsigned int)(G - 1);")
    w.line("__syncthreads();")
    w.line("if (!s_last) return;")
    w.line("__threadfence();")


def emit_row_split(info: GroupInfo, sched: Schedule) -> KernelSource:
    """``row_split``: one-phase reductions of few long rows, each row over ``G`` blocks."""
    idx_t = sched.index
    params, names = _split_params(info, sched)
    block = sched.block
    w = _reduction_writer(info, idx_t, names, "K")
    for k, r in enumerate(info.reductions):
        w.line(f"__shared__ {_acc_type(r)} sred{k}[32];")
    w.line("__shared__ bool s_last;")
    w.line(f"const {idx_t} r = blockIdx.x / G;")
    w.line("const int g = blockIdx.x % G;")
    _split_chunk(w, idx_t, block)
    w.row_index = Index(info.keep_shape, lin="r", tag="row")
    w.reduced_pos = "c"
    w.make_full = lambda: _full_index(w, info, "r", "c", "K", str(info.rows))
    loop = _simple_loop(f"for ({idx_t} c = c0 + threadIdx.x; c < c1; c += {block})", "#pragma unroll 4")
    # barriers separate every use of a buffer (the atomic handshake has two): no trailing barrier
    once = "_once" if OPTIONS["single_sync"] else ""

    def team(w: Writer, accs: list[tuple[Node, str]]) -> None:
        for r, a in accs:
            k = info.reductions.index(r)
            ident = _identity(r)
            w.line(f"{a} = sl_block_allreduce{once}({a}, {_OPS[r.op]}(), {ident}, sred{k});")

    sp = _Split(team, "threadIdx.x == 0", "{r} * G + g", lambda w: _last_block(w, "r", "threadIdx.x == 0"),
                f"for (int j = threadIdx.x; j < G; j += {block})", "{r} * G + j", "if (threadIdx.x == 0) counters[r] = 0u;")
    _emit_phases(w, info, loop, lambda w, accs: _split_combine(w, info, accs, sp), one_pass=True, split=sp)
    _row_outputs(w, info, "threadIdx.x == 0", "r")
    return _finish("row_split", info, sched, params, w.lines, block)


def emit_column(info: GroupInfo, sched: Schedule) -> KernelSource:
    """``column``: reductions over outer axes; 32 kept indices per block, ``ty`` threads per column.

    Each pass is unrolled so that several rows' loads are in flight per thread, and passes
    alternate direction (down, up, down…): the rows a block read last are still in L2 when the
    next pass starts, so later passes re-read part of the tile from L2, not memory. With
    ``cache=registers`` the first ``COLUMN_CACHE`` rows of each thread stay in registers from the
    first pass on (read at the end of a pass going up and at the start of one going down).
    A group with argmax/argmin reads every pass in increasing positions (its threads step up).
    """
    if sched.vec > 1:
        return _emit_column_lanes(info, sched)
    idx_t = sched.index
    params, names = _buffer_params(info)
    params += [Param("R", f"const {idx_t}", "R"), Param("K", f"const {idx_t}", "K")]
    ty = sched.ty
    w = _reduction_writer(info, idx_t, names, "K")
    for k, r in enumerate(info.reductions):
        w.line(f"__shared__ {_acc_type(r)} scol{k}[{ty}][33];")
    w.line(f"const {idx_t} r0 = ({idx_t})blockIdx.x * 32 + threadIdx.x;")
    w.line("const bool valid = r0 < R;")
    w.line(f"const {idx_t} r = valid ? r0 : 0;")
    w.row_index = Index(info.keep_shape, lin="r", tag="row")
    w.reduced_pos = "c"
    w.make_full = lambda: _full_index(w, info, "r", "c", "K", str(info.rows))
    nc = COLUMN_CACHE if sched.cache == "registers" else 0
    head = None
    if nc:
        for p in _cached_leaves(info, params):
            w.line(f"{ct.register_type(p.node.dtype)} cache_{p.name}[{nc}];")
            w.cache_read[id(p.node)] = f"cache_{p.name}[j]"
            w.cache_fill[id(p.node)] = f"cache_{p.name}[j] = {{}}"
        head = _simple_loop(f"for (int j = 0; j < {nc}; ++j)", "#pragma unroll", "if (valid)",
                            f"const {idx_t} c = threadIdx.y + ({idx_t})j * {ty};", "if (c < K)")
    first = nc * ty
    header = f"for ({idx_t} cc = threadIdx.y + {first}; cc < K; cc += {ty})"
    # unrolled: COLUMN_UNROLL loads in flight per thread (one block of 32 x ty threads per SM)
    pragma = f"#pragma unroll {COLUMN_UNROLL}"
    forward = _simple_loop(header, pragma, "if (valid)", f"const {idx_t} c = cc;", cache_on=False)
    backward = _simple_loop(header, pragma, "if (valid)", f"const {idx_t} c = K - 1 + {first} - cc;", cache_on=False)

    # an argmax/argmin thread steps up its positions (preamble sl_arg): no pass is reversed
    reverse = OPTIONS["reverse_passes"] and not any(r.op in ARG_REDUCTIONS for r in info.reductions)

    def loops(k: int) -> list[_Loop]:
        if reverse and k % 2:
            return [backward, head] if head else [backward]
        return [head, forward] if head else [forward]

    def combine(w: Writer, accs: list[tuple[Node, str]]) -> None:
        _column_team_combine(w, info, accs, ty)

    _emit_phases(w, info, loops, combine, one_pass=True, online=OPTIONS["online_exp_sum_streamed"])
    _row_outputs(w, info, "valid && threadIdx.y == 0", "r")
    return _finish("column", info, sched, params, w.lines, 32 * ty)


def _emit_column_lanes(info: GroupInfo, sched: Schedule) -> KernelSource:
    """``column`` and ``column_split`` with ``vec`` kept indices a thread
    (:func:`stitchlab.plan.cost.column_vector_width`): a block of (32 / vec) x ``ty`` threads
    (1024; 256 split) takes 32 kept indices, and each warp reads ``vec`` rows of them with one
    8-byte access a thread (the full inputs as ``sl_vec``, scalar loads where a pointer is not
    aligned to the vector: checked in the kernel). Each lane (kept index) of a thread is written
    as the scalar schedule writes its one (:class:`_Lane`); the team combine is a warp shuffle
    over the warp's rows, then an ordered combine of the block's warp partials. Passes alternate
    direction as in :func:`emit_column`; a split block reduces its chunk of the rows and the last
    block of a tile combines their partials, as in :func:`emit_column_split`."""
    idx_t, vec, ty = sched.index, sched.vec, sched.ty
    split = sched.family == "column_split"
    tx, threads = 32 // vec, 256 if split else 1024
    if vec != column_vector_width(info) or tx * ty != threads or split and info.one_pass_variances():
        raise CodegenError(f"a {sched.family} schedule of {vec} kept indices a thread and {ty} rows does not fit this group")
    if split:
        params, names = _split_params(info, sched)
    else:
        params, names = _buffer_params(info)
        params += [Param("R", f"const {idx_t}", "R"), Param("K", f"const {idx_t}", "K")]
    w = _reduction_writer(info, idx_t, names, "K")
    warps = threads // 32
    for k, r in enumerate(info.reductions):
        w.line(f"__shared__ {_acc_type(r)} scol{k}[{warps}][33];")
    w.line(f"const int tid = threadIdx.y * {tx} + threadIdx.x, warp = tid >> 5, wlane = tid & 31;")
    if split:
        w.line("__shared__ bool s_last;")
        w.line(f"const {idx_t} tile = blockIdx.x / G;")
        w.line("const int g = blockIdx.x % G;")
        w.line(f"const {idx_t} rb0 = tile * 32 + threadIdx.x * {vec};")
    else:
        w.line(f"const {idx_t} rb0 = ({idx_t})blockIdx.x * 32 + threadIdx.x * {vec};")
    w.line("const bool valid = rb0 < R;")  # (R is a multiple of vec: a thread's lanes are all valid or none)
    w.line(f"const {idx_t} rb = valid ? rb0 : 0;")
    if split:
        _split_chunk(w, idx_t, ty)
    # (a split block's share of the rows: [c0, c1))
    step, start, hi = ("s0", "c0 + threadIdx.y", "c1") if split else ("c0", "threadIdx.y", "K")
    leaves = _cached_leaves(info, params)
    outs = [(k, o) for k, (o, lvl) in enumerate(info.outputs) if lvl == FULL]
    ptrs = [p.name for p in leaves] + [f"out{k}" for k, _ in outs]
    checks = " | ".join(f"(unsigned long long){p}" for p in ptrs)
    w.line(f"const bool aligned = (({checks}) & {vec * max(_itemsize(info, ptrs, params)) - 1}ULL) == 0ULL;")
    lanes = []
    for u in range(vec):
        w.line(f"const {idx_t} r{u} = rb + {u};")
        lanes.append(_Lane(Index(info.keep_shape, lin=f"r{u}", tag="row"),
                           {id(p.node): f"ld_{p.name}[j].v[{u}]" for p in leaves}, [dict(w.scopes[0])], [dict(w.tmps[0])], w.depth))
    lane_no = {lane.row.lin: u for u, lane in enumerate(lanes)}
    w.row_index = lanes[0].row

    def chunk_base(w: Writer) -> str:
        """The offset of the thread's first kept index in row ``c`` (its vectors' address)."""
        return w.tmp(w.linear(_full_index(w, info, "rb", "c", "K", str(info.rows))))

    w.reduced_pos = "c"
    assert w.row_index is not None
    w.make_full = lambda: _full_index(w, info, str(w.row_index.lin), "c", "K", str(info.rows))
    reverse = OPTIONS["reverse_passes"] and not split

    def open_(w: Writer, first: str, vector: bool) -> None:
        # a loop for aligned pointers and one for the others, so that no load branches on it:
        # exactly one of the two runs. Each step loads COLUMN_LANE_BATCH rows' vectors first,
        # then computes them (ptxas left the unrolled loads of a plain loop one or two ahead of
        # their use)
        batch = COLUMN_LANE_BATCH
        w.open(f"if (valid && {'' if vector else '!'}aligned)")
        w.open(f"for ({idx_t} {step} = {start}; {step} < {hi}; {step} += {ty * batch})")
        for p in leaves:
            w.line(f"sl_vec<{ct.storage_type(p.node.dtype)}, {vec}> ld_{p.name}[{batch}];")
        for stage in ("load", "compute"):
            w.line("#pragma unroll")
            w.open(f"for (int j = 0; j < {batch}; ++j)")
            w.line(f"const {idx_t} cc = {step} + j * {ty};")
            w.open(f"if (cc < {hi})")
            w.line(f"const {idx_t} c = {first};")
            if stage == "load":
                base = chunk_base(w)
                for p in leaves:
                    st = ct.storage_type(p.node.dtype)
                    load = f"sl_load_vec_ro<{st}, {vec}>({p.name} + {base})" if vector else f"sl_load_vec<{st}, {vec}>({p.name} + {base}, false)"
                    w.line(f"ld_{p.name}[j] = {load};")
                w.close()
                w.close()

    def close(w: Writer) -> None:
        for _ in range(4):
            w.close()

    def store_open(w: Writer, first: str, vector: bool, outs: list[tuple[int, Node]]) -> None:
        open_(w, first, vector)
        for k, o in outs:
            w.line(f"sl_vec<{ct.storage_type(o.dtype)}, {vec}> vo{k};")

    def store(w: Writer, k: int, v: str, full: Index) -> None:
        assert w.row_index is not None
        w.line(f"sl_store(&vo{k}.v[{lane_no[w.row_index.lin]}], {v});")

    def store_close(w: Writer, vector: bool, outs: list[tuple[int, Node]]) -> None:
        base = chunk_base(w)
        for k, o in outs:
            st = ct.storage_type(o.dtype)
            if vector:
                w.line(f"*reinterpret_cast<sl_vec<{st}, {vec}>*>(out{k} + {base}) = vo{k};")
            else:
                w.line(f"for (int u = 0; u < {vec}; ++u) out{k}[{base} + u] = vo{k}.v[u];")
        close(w)

    def loops(first: str) -> list[_Loop]:
        return [_Loop(lambda w, v=v: open_(w, first, v), close, lambda w, o, v=v: store_open(w, first, v, o),
                      lambda w, o, v=v: store_close(w, v, o), store, cache_on=False) for v in (True, False)]
    forward, backward = loops("cc"), loops("K - 1 - cc")

    def lane_of(a: str) -> int:
        return next(u for u, lane in enumerate(lanes) if a in lane.accs)

    def team(w: Writer, accs: list[tuple[Node, str]]) -> None:
        """Each accumulator over its column's threads: a shuffle over the warp's rows, the warp's
        partial into ``scol``, one barrier, 32 threads combine the block's warp partials in
        order, a barrier, every thread reads its lanes' results."""
        where = {a: lane_of(a) for _, a in accs}
        done = []
        for r, a in accs:
            k, op = info.reductions.index(r), _OPS[r.op]
            w.line(f"for (int o = {tx}; o < 32; o <<= 1) {a} = {op}()({a}, __shfl_xor_sync(0xffffffffu, {a}, o));")
            w.line(f"if (wlane < {tx}) scol{k}[warp][threadIdx.x * {vec} + {where[a]}] = {a};")
            if k not in done:
                done.append(k)
        w.line("__syncthreads();")
        for k in done:
            r = info.reductions[k]
            w.line(f"if (tid < 32) {{ {_acc_type(r)} t = scol{k}[0][tid]; for (int j = 1; j < {warps}; ++j) t = {_OPS[r.op]}()(t, scol{k}[j][tid]); "
                   f"scol{k}[0][tid] = t; }}")
        w.line("__syncthreads();")
        for r, a in accs:  # (a split block's two combines are apart by the handshake's barriers)
            w.line(f"{a} = scol{info.reductions.index(r)}[0][threadIdx.x * {vec} + {where[a]}];")

    if split:
        sp = _Split(team, "valid && threadIdx.y == 0", "{r} * G + g", lambda w: _last_block(w, "tile", "tid == 0"),
                    f"for (int j = valid ? (int)threadIdx.y : G; j < G; j += {ty})", "{r} * G + j",
                    "if (tid == 0) counters[tile] = 0u;", lambda a: f"r{lane_of(a)}")
        _emit_phases(w, info, lambda _k: forward, lambda w, accs: _split_combine(w, info, accs, sp), one_pass=True, split=sp, lanes=lanes)
    else:
        _emit_phases(w, info, lambda k: backward if reverse and k % 2 else forward, team, one_pass=True, lanes=lanes)
    for lane in lanes:
        with _active(w, lane):
            _row_outputs(w, info, "valid && threadIdx.y == 0", str(lane.row.lin))
    return _finish(sched.family, info, sched, params, w.lines, threads)


def _column_team_combine(w: Writer, info: GroupInfo, accs: list[tuple[Node, str]], ty: int) -> None:
    """Combine each accumulator over the ``ty`` threads of its column (in ``threadIdx.y`` order,
    through shared memory ``scol``); every thread of the column ends with the result."""
    for r, a in accs:
        k = info.reductions.index(r)
        op = _OPS[r.op]
        w.line(f"scol{k}[threadIdx.y][threadIdx.x] = {a};")
        w.line("__syncthreads();")
        w.line(f"if (threadIdx.y == 0) {{ for (int j = 1; j < {ty}; ++j) {a} = {op}()({a}, scol{k}[j][threadIdx.x]); scol{k}[0][threadIdx.x] = {a}; }}")
        w.line("__syncthreads();")
        w.line(f"{a} = scol{k}[0][threadIdx.x];")
        if not OPTIONS["single_sync"]:  # each buffer is used once: no barrier after the read
            w.line("__syncthreads();")


def emit_column_split(info: GroupInfo, sched: Schedule) -> KernelSource:
    """``column_split``: one-phase column reductions with few column tiles (a tall, narrow input:
    ``x.sum(0)`` of 1M x 64), each tile of 32 kept indices over ``G`` blocks that split the
    reduced axis. Each block combines its chunk over its ``ty`` threads per column and writes a
    partial result per column; the last block of a tile (an atomic counter, as ``row_split``)
    combines the ``G`` partials in order and finishes the epilogue."""
    if sched.vec > 1:
        return _emit_column_lanes(info, sched)
    idx_t = sched.index
    params, names = _split_params(info, sched)
    ty = sched.ty
    w = _reduction_writer(info, idx_t, names, "K")
    for k, r in enumerate(info.reductions):
        w.line(f"__shared__ {_acc_type(r)} scol{k}[{ty}][33];")
    w.line("__shared__ bool s_last;")
    w.line(f"const {idx_t} tile = blockIdx.x / G;")
    w.line("const int g = blockIdx.x % G;")
    w.line(f"const {idx_t} r0 = tile * 32 + threadIdx.x;")
    w.line("const bool valid = r0 < R;")
    w.line(f"const {idx_t} r = valid ? r0 : 0;")
    _split_chunk(w, idx_t, ty)
    w.row_index = Index(info.keep_shape, lin="r", tag="row")
    w.reduced_pos = "c"
    w.make_full = lambda: _full_index(w, info, "r", "c", "K", str(info.rows))
    loop = _simple_loop(f"for ({idx_t} c = c0 + threadIdx.y; c < c1; c += {ty})", f"#pragma unroll {COLUMN_UNROLL}", "if (valid)")
    sp = _Split(lambda w, accs: _column_team_combine(w, info, accs, ty), "valid && threadIdx.y == 0", "{r} * G + g",
                lambda w: _last_block(w, "tile", "threadIdx.x == 0 && threadIdx.y == 0"),
                f"for (int j = valid ? (int)threadIdx.y : G; j < G; j += {ty})", "{r} * G + j",
                "if (threadIdx.x == 0 && threadIdx.y == 0) counters[tile] = 0u;")
    _emit_phases(w, info, loop, lambda w, accs: _split_combine(w, info, accs, sp), one_pass=True, split=sp)
    _row_outputs(w, info, "valid && threadIdx.y == 0", "r")
    return _finish("column_split", info, sched, params, w.lines, 32 * ty)


def emit(info: GroupInfo, sched: Schedule) -> KernelSource:
    """The kernel of ``info`` under ``sched`` (CodegenError if it cannot be written)."""
    if sched.family == "pointwise":
        return emit_pointwise(info, sched)
    if sched.family in ("row_warp", "row_block"):
        return emit_row(info, sched)
    if sched.family == "row_split":
        return emit_row_split(info, sched)
    if sched.family == "column":
        return emit_column(info, sched)
    if sched.family == "column_split":
        return emit_column_split(info, sched)
    raise CodegenError(f"no emitter for schedule family {sched.family!r}")
