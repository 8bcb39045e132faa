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
  combine through shared memory.

Outer extents are kernel arguments (``n``; ``R``; ``R`` and ``K`` for columns and split rows), so
a new batch size compiles nothing new.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..ir.node import Node
from ..plan.cost import Schedule
from ..plan.groups import FULL, ROW, GroupInfo
from . import ctypes as ct
from .elemental import CodegenError, Index, Writer, leaf_params
from .preamble import PREAMBLE

#: Bumped whenever generated code changes meaning: part of every registry key.
CODEGEN_VERSION = "1"

_OPS = {"sum": "sl_op_sum", "prod": "sl_op_prod", "max": "sl_op_max", "min": "sl_op_min", "any": "sl_op_any", "all": "sl_op_all"}


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
    return ct.register_type(red.dtype)


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
    kernel = head + text + "\n}\n"
    digest = hashlib.sha256(kernel.encode()).hexdigest()[:12]
    name = f"sl_{family}_{digest}"
    return KernelSource(name, PREAMBLE + "\n" + kernel.replace("NAME(", name + "(", 1), tuple(params), sched, digest)


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
        full = Index(D, lin="i", tag="full")
        for p in out_params:
            v = w.value(p.node, full)
            if vector:
                w.line(f"sl_store(&vo_{p.name}.v[u], {v});")
            else:
                w.line(f"sl_store({p.name} + i, {v});")

    # scalar pass first: it tells which buffers are read at the domain index (vectorizable)
    probe = Writer(info, idx_t, names)
    body(probe, False)
    vec_in = [p for p in params if p.role == "in" and id(p.node) in probe.full_loads]
    if vec > 1 and not (vec_in or out_params):
        vec = 1

    w = Writer(info, idx_t, names)
    if vec > 1:
        checks = [f"((unsigned long long){p.name} & {vec * p.node.dtype.itemsize - 1}ULL)" for p in vec_in + out_params]
        w.line(f"const bool aligned = ({' | '.join(checks)}) == 0ULL;")
    w.line(f"const {idx_t} stride = ({idx_t}){nblk} * {block};")
    w.open(f"for ({idx_t} e = ({idx_t}){bid} * {block} + threadIdx.x; e * {vec} < {n}; e += stride)")
    w.line(f"const {idx_t} base = e * {vec};")
    if vec > 1:
        w.open(f"if (aligned && base + {vec} <= {n})")
        for p in vec_in:
            st = ct.storage_type(p.node.dtype)
            w.line(f"const sl_vec<{st}, {vec}> vi_{p.name} = *reinterpret_cast<const sl_vec<{st}, {vec}>*>({p.name} + base);")
        for p in out_params:
            st = ct.storage_type(p.node.dtype)
            w.line(f"sl_vec<{st}, {vec}> vo_{p.name};")
        w.line("#pragma unroll")
        w.open(f"for (int u = 0; u < {vec}; ++u)")
        w.line(f"const {idx_t} i = base + u;")
        w.vector_src = {id(p.node): f"vi_{p.name}.v[u]" for p in vec_in}
        body(w, True)
        w.vector_src = {}
        w.close()
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
    if not big_kept or not big_red or max(big_kept) < min(big_red):  # rows are contiguous
        return Index(S, lin=f"({r} * ({w.idx_t}){K} + {c})", tag="full")
    if max(big_red) < min(big_kept):  # columns: the kept axes are the contiguous ones
        return Index(S, lin=f"({c} * ({w.idx_t}){R} + {r})", tag="full")
    dims = ["0"] * len(S)
    for axes, src in ((kept, r), (red, c)):
        sub = Index(tuple(S[i] for i in axes), lin=src)
        for a, e in zip(axes, w.dims(sub), strict=False):
            dims[a] = e
    return Index(S, dims=tuple(dims), tag="full")


def _row_nodes_ready(info: GroupInfo, done: int, emitted: set[int]) -> list[Node]:
    """Members at the row level whose reductions all finished by phase ``done``."""
    out = []
    for n in info.members:
        if id(n) in emitted or info.levels.get(id(n)) != ROW or n.op in _OPS:
            continue
        need = _max_depth(info, n)
        if need <= done:
            out.append(n)
    return out


def _max_depth(info: GroupInfo, n: Node) -> int:
    best = 0
    stack, seen = [n], set()
    members = {id(m) for m in info.members}
    while stack:
        m = stack.pop()
        if id(m) in seen:
            continue
        seen.add(id(m))
        if id(m) in info.depth:
            best = max(best, info.depth[id(m)])
            continue
        if id(m) in members or m.op in ("broadcast", "reshape", "transpose", "slice", "astype"):
            stack.extend(m.inputs)
    return best


def _emit_phases(w: Writer, info: GroupInfo, loop: str, combine: Callable[[Writer, list[tuple[Node, str]]], None]) -> None:
    """The phases of a reduction group: one loop per depth (its reductions accumulate, then
    ``combine`` reduces each accumulator over the team), then a loop storing the full outputs."""
    emitted: set[int] = set()
    row = w.row_index
    assert row is not None
    for n in _row_nodes_ready(info, 0, emitted):
        w.value(n, row)
        emitted.add(id(n))
    for d in range(1, info.phases + 1):
        reds = [r for r in info.reductions if info.depth[id(r)] == d]
        accs = []
        for r in reds:
            a = w.fresh("acc")
            accs.append((r, a))
            w.line(f"{_acc_type(r)} {a} = {ct.identity_literal(r.op, r.dtype)};")
        w.open(loop)
        full = w.make_full()
        for r, a in accs:
            v = w.value(r.inputs[0], full)
            w.line(f"{a} = {_OPS[r.op]}()({a}, {v});")
        w.close()
        w.filled |= w.filling
        combine(w, accs)
        for r, a in accs:
            if r.dtype == np.float16:
                w.line(f"{a} = sl_round_half({a});")
            w.scopes[0][(id(r), "row")] = a
            w.scopes[0][(id(r), "full")] = a
        for n in _row_nodes_ready(info, d, emitted):
            w.value(n, row)
            emitted.add(id(n))
    full_outs = [(k, o) for k, (o, lvl) in enumerate(info.outputs) if lvl == FULL]
    if full_outs:
        w.open(loop)
        full = w.make_full()
        for k, o in full_outs:
            v = w.value(o, full)
            w.line(f"sl_store(out{k} + {w.linear(full)}, {v});")
        w.close()


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
    return [p for p in params if p.role == "in" and p.node.shape == info.shape]


def emit_row(info: GroupInfo, sched: Schedule) -> KernelSource:
    """``row_warp`` and ``row_block``: a team of threads per row, phases stitched in registers."""
    idx_t = sched.index
    params, names = _buffer_params(info)
    params.append(Param("R", f"const {idx_t}", "R"))
    team = 32 if sched.family == "row_warp" else sched.block
    block = sched.block
    rows_per_block = block // team
    K = info.cols
    w = Writer(info, idx_t, names)
    if team > 32:
        for k, r in enumerate(info.reductions):
            w.line(f"__shared__ {_acc_type(r)} sred{k}[32];")
    w.line(f"const int lane = threadIdx.x % {team};")
    w.line(f"const {idx_t} r = ({idx_t})blockIdx.x * {rows_per_block} + threadIdx.x / {team};")
    w.line("if (r >= R) return;")
    nt = -(-K // team)
    if sched.cache == "registers":
        loop = f"for (int t = 0; t < {nt}; ++t) if (lane + t * {team} < {K})"
        w.pragma_for[loop] = "#pragma unroll"
    else:
        loop = f"for ({idx_t} c = lane; c < {K}; c += {team})"
    if sched.cache != "none":
        for p in _cached_leaves(info, params):
            reg = ct.register_type(p.node.dtype)
            cname = f"cache_{p.name}"
            if sched.cache == "registers":
                w.line(f"{reg} {cname}[{nt}];")
                w.cache_read[id(p.node)] = f"{cname}[t]"
                w.cache_fill[id(p.node)] = cname + "[t] = {}"
            else:
                w.line(f"__shared__ {reg} {cname}_s[{rows_per_block * K}];")
                w.line(f"{reg}* {cname} = {cname}_s + (threadIdx.x / {team}) * {K};")
                w.cache_read[id(p.node)] = f"{cname}[c]"
                w.cache_fill[id(p.node)] = cname + "[c] = {}"
    w.row_index = Index(info.keep_shape, lin="r", tag="row")

    def make_full() -> Index:
        c = w.tmp(f"lane + t * {team}") if sched.cache == "registers" else "c"
        return _full_index(w, info, "r", c, str(K), str(info.rows))

    w.make_full = make_full

    def combine(w: Writer, accs: list[tuple[Node, str]]) -> None:
        for r, a in accs:
            if team == 32:
                w.line(f"{a} = sl_warp_allreduce({a}, {_OPS[r.op]}());")
            else:
                k = info.reductions.index(r)
                ident = f"({_acc_type(r)}){ct.identity_literal(r.op, r.dtype)}"
                w.line(f"{a} = sl_block_allreduce({a}, {_OPS[r.op]}(), {ident}, sred{k});")

    _emit_phases(w, info, loop, combine)
    _row_outputs(w, info, "lane == 0", "r")
    return _finish(sched.family, info, sched, params, w.lines, block)


def emit_row_split(info: GroupInfo, sched: Schedule) -> KernelSource:
    """``row_split``: one-phase reductions of few long rows, each row over ``G`` blocks."""
    if info.phases != 1 or any(lvl == FULL for _, lvl in info.outputs):
        raise CodegenError("row_split needs one phase and no per-element outputs")
    idx_t = sched.index
    params, names = _buffer_params(info)
    params += [Param("R", f"const {idx_t}", "R"), Param("K", f"const {idx_t}", "K"), Param("G", "const int", "G")]
    for k, r in enumerate(info.reductions):
        params.append(Param("ws", f"{_acc_type(r)}* __restrict__", f"ws{k}", r))
    params.append(Param("counter", "unsigned int* __restrict__", "counters"))
    block = sched.block
    w = Writer(info, idx_t, names)
    for k, r in enumerate(info.reductions):
        w.line(f"__shared__ {_acc_type(r)} sred{k}[32];")
    w.line("__shared__ bool s_last;")
    w.line(f"const {idx_t} r = blockIdx.x / G;")
    w.line("const int g = blockIdx.x % G;")
    w.line(f"const {idx_t} chunk = ((K + G - 1) / G + {block - 1}) / {block} * {block};")
    w.line(f"const {idx_t} c0 = g * chunk;")
    w.line(f"const {idx_t} c1 = c0 + chunk < K ? c0 + chunk : K;")
    w.row_index = Index(info.keep_shape, lin="r", tag="row")
    w.make_full = lambda: _full_index(w, info, "r", "c", "K", str(info.rows))
    loop = f"for ({idx_t} c = c0 + threadIdx.x; c < c1; c += {block})"

    def combine(w: Writer, accs: list[tuple[Node, str]]) -> None:
        for r, a in accs:
            k = info.reductions.index(r)
            ident = f"({_acc_type(r)}){ct.identity_literal(r.op, r.dtype)}"
            w.line(f"{a} = sl_block_allreduce({a}, {_OPS[r.op]}(), {ident}, sred{k});")
            w.line(f"if (threadIdx.x == 0) ws{k}[r * G + g] = {a};")
        # the last block of the row to finish combines every block's partial results
        w.line("__threadfence();")
        w.line("__syncthreads();")
        w.line("if (threadIdx.x == 0) s_last = atomicAdd(counters + r, 1u) == (unsigned int)(G - 1);")
        w.line("__syncthreads();")
        w.line("if (!s_last) return;")
        w.line("__threadfence();")
        for r, a in accs:
            k = info.reductions.index(r)
            acc = _acc_type(r)
            ident = f"({acc}){ct.identity_literal(r.op, r.dtype)}"
            w.line(f"{a} = {ident};")
            w.line(f"for (int j = threadIdx.x; j < G; j += {block}) {a} = {_OPS[r.op]}()({a}, *(volatile {acc}*)(ws{k} + r * G + j));")
            w.line(f"{a} = sl_block_allreduce({a}, {_OPS[r.op]}(), {ident}, sred{k});")
        w.line("if (threadIdx.x == 0) counters[r] = 0u;")

    _emit_phases(w, info, loop, combine)
    _row_outputs(w, info, "threadIdx.x == 0", "r")
    return _finish("row_split", info, sched, params, w.lines, block)


def emit_column(info: GroupInfo, sched: Schedule) -> KernelSource:
    """``column``: reductions over outer axes; 32 kept indices per block, ``ty`` threads per column."""
    idx_t = sched.index
    params, names = _buffer_params(info)
    params += [Param("R", f"const {idx_t}", "R"), Param("K", f"const {idx_t}", "K")]
    ty = sched.ty
    w = Writer(info, idx_t, names)
    for k, r in enumerate(info.reductions):
        w.line(f"__shared__ {_acc_type(r)} scol{k}[{ty}][33];")
    w.line(f"const {idx_t} r0 = ({idx_t})blockIdx.x * 32 + threadIdx.x;")
    w.line("const bool valid = r0 < R;")
    w.line(f"const {idx_t} r = valid ? r0 : 0;")
    w.row_index = Index(info.keep_shape, lin="r", tag="row")
    w.make_full = lambda: _full_index(w, info, "r", "c", "K", str(info.rows))
    loop = f"if (valid) for ({idx_t} c = threadIdx.y; c < K; c += {ty})"

    def combine(w: Writer, accs: list[tuple[Node, str]]) -> None:
        for r, a in accs:
            k = info.reductions.index(r)
            op = _OPS[r.op]
            w.line(f"scol{k}[threadIdx.y][threadIdx.x] = {a};")
            w.line("__syncthreads();")
            w.line(f"if (threadIdx.y == 0) {{ for (int j = 1; j < {ty}; ++j) {a} = {op}()({a}, scol{k}[j][threadIdx.x]); scol{k}[0][threadIdx.x] = {a}; }}")
            w.line("__syncthreads();")
            w.line(f"{a} = scol{k}[0][threadIdx.x];")
            w.line("__syncthreads();")

    _emit_phases(w, info, loop, combine)
    _row_outputs(w, info, "valid && threadIdx.y == 0", "r")
    return _finish("column", info, sched, params, w.lines, 32 * ty)


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
    raise CodegenError(f"no emitter for schedule family {sched.family!r}")
