"""The elemental emitter: C code for the value of a node at an index.

Every schedule asks the same question — "what is node ``n`` at index ``i``?" — and this module
answers it by walking the graph: elementwise ops pass the index to their inputs, ``broadcast``
zeroes the repeated axes, ``transpose`` permutes, ``slice`` scales and offsets, ``reshape`` keeps
the linear index; buffers are loaded, constants become literals. Values are memoized per scope
(a loop body is a scope), so a diamond in the graph is computed once per element, never
exponentially often.

Indices carry a *tag*: ``"full"`` is the domain index of the kernel, ``"row"`` the kept index of a
reduction group. Through a broadcast over exactly the reduced axes a full index becomes the row
index, and the value is the row variable the schedule computed after the reduction (register
stitching); a value that depends on a reduction is never read through any other index map (the
planner only forms groups where that holds).

float16 values have two forms: held in ``float`` (what the caches, accumulators and float ops
use) or as their 16 bits (``sl_half``: loads, stores, and the ops with a ``cuda_half`` template in
the op table, which give NumPy's bits with one half instruction). Each node is computed in the form
its op produces; a consumer that needs the other form converts it once (``as_float``/``as_bits``,
memoized like other temporaries). An op computed in float that yields float16 rounds once, with
one ``cvt`` to half bits (a float64 cast to float16 too: ``cvt.rn.f16.f64``, never through float);
a float16 output is stored as the bits it holds.

bfloat16 (``sl_bf16``) has the same two forms, with ml_dtypes' semantics: an op computed in float
rounds once to bfloat16 bits (``sl_f2bf``: to nearest, ties to even), as ml_dtypes' NumPy loops
compute in float32 and round; a cast from float64 or a 32/64-bit integer rounds once too
(``sl_d2bf``: through float rounded to odd; ``stitchlab.ir.dtypes.cast`` on the CPU); +, -
and * are one bfloat16 instruction (sm_90); bits to float is a shift and a float holding a
bfloat16 value back to bits a truncation (``sl_bf16_of``: exact).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..ir.dtypes import finfo, is_bfloat16, is_float
from ..ir.node import Node
from ..ir.ops import COMPARISONS, OPS, Kind
from ..plan.groups import FREE_OPS as _FREE
from ..plan.groups import GroupInfo, squeeze
from . import ctypes as ct


class CodegenError(Exception):
    """The group cannot be written as CUDA C (the runtime then runs it unfused)."""


class KernelTooLong(CodegenError):
    """The group's kernel would pass :data:`MAX_SOURCE` characters (:data:`MAX_RECOMPUTE_SOURCE`
    where it recomputes; ``build_plan`` then cuts the group in two where it can)."""


#: the longest kernel body the code generator writes, in characters (indentation aside): NVRTC's
#: time grows with the source (a kernel of 2.2 MB took 48.5 s to compile on the 2-CPU development
#: machine), and a group whose positions multiply with its steps (a stencil's through reflecting
#: pads: 8 steps on 256 x 256 wrote 193 MB in 107 s) is cut instead
#: (``stitchlab.codegen.program.build_plan``)
MAX_SOURCE = 1_000_000
#: the same for a group that evaluates members at several positions (a stencil's fused steps,
#: ``GroupInfo.evaluated``), where NVRTC's time grows fastest: one kernel of 4, 5, 6 and 7 heat
#: steps on 256 x 256 (74, 181, 298, 472 KB) took 0.2, 2.4, 4.7 and 9.7 s, and each step more
#: is recompute the estimate undercounts (docs/compiler.md §3, "Kernels too long to write")
MAX_RECOMPUTE_SOURCE = 150_000
_unlimited = [False]


@contextlib.contextmanager
def source_unlimited() -> Iterator[None]:
    """Write kernels of any length inside (a group with nothing to cut at)."""
    before, _unlimited[0] = _unlimited[0], True
    try:
        yield
    finally:
        _unlimited[0] = before


@dataclass(frozen=True)
class Index:
    """An index into a node of ``shape``: a linear expression or one expression per axis."""

    shape: tuple[int, ...]
    lin: str | None = None
    dims: tuple[str, ...] | None = None
    tag: str | None = None
    #: in a vector chunk (``Writer.vec_at`` set): a C expression ``b``, computable at the chunk's
    #: start, with this index's linear value ``b + u`` for lane ``u``, ``b`` a multiple of the
    #: vector width and the chunk's elements consecutive in memory (not part of the key)
    lane: str | None = None

    def key(self) -> str:
        """The position as a memo key: parentheses around a whole position dropped (``((i5))`` and
        ``i5`` are one position)."""
        if self.tag:
            return self.tag
        return _bare(self.lin) if self.lin is not None else "|".join(_bare(e) for e in self.dims or ())


#: a position plus a constant, as a slice writes it (``(i5 + 1)``)
_SHIFTED = re.compile(r"^\((\w+) \+ (\d+)\)$")


#: a C identifier in an index expression
_NAME = re.compile(r"\b[A-Za-z_]\w*")


def _offset_key(base: str, c: int) -> str:
    """The memo key of position ``base + c`` (``Index.key``'s text of ``(base + c)`` for ``c > 0``)."""
    return _bare(base) if c == 0 else f"{_bare(base)} + {c}" if c > 0 else f"{_bare(base)} - {-c}"


def _shifted(e: str) -> tuple[str, int]:
    """``(p, k)`` for a position ``(p + k)`` (a slice's constant added to ``p``), else ``(e, 0)``."""
    m = _SHIFTED.match(e)
    return (m.group(1), int(m.group(2))) if m else (e, 0)
#: a position along a vector chunk's last axis, ``(p + (u ± K))`` (``Writer.dims``)
_LANE_TERM = re.compile(r"^\((\w+) \+ \(u(?: ([+-]) (\d+))?\)\)$")

#: rows that a vector chunk's branch may test chunk by chunk must be at least this many warps'
#: chunks long: a warp that holds a chunk the test sends element by element runs both branches.
#: Rows of another extent than a multiple of the width: from 2 warps' chunks in a kernel with
#: shifted reads to merge (3 x 3 "valid" mean over 257-wide float32 rows: 160 -> 106 us; 2051-wide
#: float16 rows: 156 -> 79.5), from 16 in others (x * scale[:, None] + bias over 4097-wide
#: float16 rows: 39.1 -> 35.7 us; at 8, a tanh-GELU of x + bias over 2049-wide float16 rows took
#: 120.3 us against 111.8). A narrow pad's chunks at the edges cost more than its interior vectors
#: save below 16 (3 x 3 mean of pad(x, 1), 1024-wide float32 rows: 88.8 us without, 95.0 with;
#: 2048-wide: 89.2 and 82.2). docs/compiler.md §4
SHIFTED_ROW_WARPS = 2
PLAIN_ROW_WARPS = 16
PAD_ROW_WARPS = 16


def _lane_parts(e: str) -> tuple[str, int]:
    """``(p, K)`` of a lane position ``(p + (u ± K))``."""
    m = _LANE_TERM.match(e)
    assert m is not None, e
    return m.group(1), int(m.group(3)) * (1 if m.group(2) == "+" else -1) if m.group(2) else 0


def _lane_plus(e: str, k: int) -> str | None:
    """``e + k`` for a lane position ``e`` (``(p + (u ± K))``, else None), the constants summed
    inside the lane term: after unrolling, ``(p + 2) - 1`` and ``p + 1`` are different
    expressions to the C compiler (``p + 2`` becomes ``p | 2`` where ``p``'s low bits are known
    zero), ``p + (2 - 1)`` and ``p + (0 + 1)`` the same one, loaded once."""
    if _LANE_TERM.match(e) is None:
        return None
    p, K = _lane_parts(e)
    return f"({p} + {_lane_offset(K + k)})" if K + k else f"({p} + (u))"


def _lane_offset(K: int) -> str:
    """``u + K`` as C, for a lane ``u``."""
    return f"(u + {K})" if K > 0 else f"(u - {-K})" if K < 0 else "u"


#: an index expression of integer literals alone: digits, ``+ - *``, parentheses (its casts to
#: the index types dropped first)
_LITERAL_INDEX = re.compile(r"[\d\s()+\-*]*\d[\d\s()+\-*]*")
_INDEX_CAST = re.compile(r"\((?:int|long long)\)")


@functools.lru_cache(maxsize=1 << 14)
def constant_index(expr: str) -> int | None:
    """The value of an index expression made of literals alone (``(0 + 1)``, ``(3) * (int)64 +
    5``: a position a basic index or a slice fixed), else None. Positions are non-negative and
    below 2**63, where C's arithmetic on them is Python's."""
    if expr.isdigit():
        return int(expr)
    if expr.isidentifier():
        return None
    text = _INDEX_CAST.sub("", expr)
    if _LITERAL_INDEX.fullmatch(text) is None or "**" in text:
        return None
    try:
        return int(eval(text, {"__builtins__": {}}))  # noqa: S307 (digits, + - * and parentheses)
    except SyntaxError:
        return None


@functools.lru_cache(maxsize=1 << 14)
def _bare(e: str) -> str:
    """``e`` without parentheses that enclose all of it (``((i5))`` and ``i5`` are one position)."""
    while e.startswith("(") and e.endswith(")"):
        depth = 0
        for k, c in enumerate(e):
            depth += (c == "(") - (c == ")")
            if depth == 0 and k < len(e) - 1:
                return e  # the first parenthesis closes before the end: ``(a) + (b)``
        e = e[1:-1]
    return e


def _folded(e: str) -> str:
    """``e``, or its value where it is a position of literals alone (one text per position, so
    that the values read there are computed once)."""
    k = constant_index(e)
    return e if k is None else str(k)


#: ops of integer and bool literals computed while writing the kernel (the masks of basic-index
#: assignments compare positions with constants: where a position is a literal, so is the mask)
_FOLDED_OPS = frozenset(COMPARISONS) | {"bitwise_and", "bitwise_or", "bitwise_xor", "logical_and", "logical_or",
                                        "logical_xor", "logical_not", "invert"}
_ABSORBING = {"bitwise_and": False, "logical_and": False, "bitwise_or": True, "logical_or": True}


def strides(shape: tuple[int, ...]) -> list[int]:
    out, acc = [], 1
    for d in reversed(shape):
        out.append(acc)
        acc *= d
    return out[::-1]


class Writer:
    """Accumulates the lines of one kernel and evaluates nodes into C variables.

    Args:
        info: the group.
        idx_t: C type of index arithmetic.
        params: ``id(node)`` -> name of the buffer parameter that holds the node (group inputs).
        members: ids of the group's members (computed here, never loaded).
    """

    def __init__(self, info: GroupInfo, idx_t: str, params: dict[int, str]) -> None:
        self.info = info
        self.idx_t = idx_t
        self.params = params
        self.members = {id(n) for n in info.members}
        #: bfloat16 exps whose results below 2**-126 may be flushed (GroupInfo.shifted_exps)
        self.ftz_exps: set[int] = set()
        self.lines: list[str] = []
        self.size = 0  # (characters written: KernelTooLong past the limit)
        self.limit = MAX_RECOMPUTE_SOURCE if info.evaluated else MAX_SOURCE
        self.depth = 1
        self.scopes: list[dict[tuple[int, str], str]] = [{}]
        self.tmps: list[dict[str, str]] = [{}]
        self.counter = 0
        self.row_index: Index | None = None
        #: the current element's position along the reduced axis (row schedules' passes; argmax)
        self.reduced_pos: str | None = None
        self.full_loads: set[int] = set()
        #: leaf id -> callable(value_expr_of_global_load) -> expr, to route loads through a cache
        self.cache_read: dict[int, str] = {}
        self.cache_fill: dict[int, str] = {}
        self.filled: set[int] = set()
        #: False inside a loop over elements the caches do not hold (a column's streamed part)
        self.cache_on = True
        self.filling: set[int] = set()
        self.vector_src: dict[int, str] = {}
        #: the schedule's domain index of the current loop iteration, and the last one it made
        self.make_full: Callable[[], Index] = lambda: Index(info.shape, lin="i", tag="full")
        self.full_index: Index | None = None
        #: pragmas written right before a loop header
        self.pragma_for: dict[str, str] = {}
        self.skeys = info.structure_keys
        #: cross-phase register cache of computed full values: node id -> array name; ``slot`` is
        #: the array index of the current element (a compile-time constant in unrolled loops)
        self.value_cache: dict[int, str] = {}
        self.slot = "t"
        #: loop counter and, per member node, the loops it was evaluated in at the full index
        #: (a probe pass uses this to find values worth caching across phases)
        self.loop_no = 0
        self.full_evals: dict[int, set[int]] = {}
        #: divide by a row value as a multiply by its reciprocal, computed once per row
        self.row_reciprocal = False
        self.reciprocals: dict[str, str] = {}
        self._uniform: dict[int, bool] = {}
        #: divide by a constant as a multiply by its reciprocal
        self.const_reciprocal = False
        #: C expression of the group's reduced extent when it is a kernel argument (mean and
        #: variance divisors use it: ``_count_divide``), else None; the extent it stands for at
        #: this shape (None: the group's reduced extent), and whether to multiply by its
        #: reciprocal (as a constant divisor is) instead of dividing
        self.reduced_count: str | None = None
        self.reduced_extent: int | None = None
        self.count_reciprocal = False
        #: where lines computed once per row may be inserted while a loop is being written
        self.hoist_at: int | None = None
        self.hoist_depth = 1
        #: vectorized schedules: buffers broadcast along leading axes are loaded as one vector per
        #: chunk (``Index.lane``), written at ``vec_at`` (the start of the chunk's body)
        self.vec_at: int | None = None
        self.vec_depth = 1
        self.vec_width = 1
        #: in a pointwise kernel's vector chunk: the buffers its branch checks for alignment to
        #: the vector, which ``_lane_vector`` adds to (the schedule then checks them too)
        self.aligned_buffers: set[str] | None = None
        #: there too: conditions on the chunk's start under which its pads' positions are all
        #: inside their inputs (``_interior_pad``; the branch tests them), and each lane
        #: position's start ``p`` as an expression the branch can compute (``dims``)
        self.interior_checks: dict[str, None] | None = None
        self.lane_starts: dict[str, str] = {}
        #: a wrap pad's input position -> (r, k, n): it is (r + k) mod n, r another such position
        #: (``_rewrapped``)
        self.wraps: dict[str, tuple[str, int, int]] = {}
        #: an edge pad's input position -> (b, c, lo, hi): it is b + c clamped to [lo, hi], b a
        #: position that is no such clamp (``_reclamped``)
        self.clamps: dict[str, tuple[str, int, int, int]] = {}
        self.clamp_texts: dict[str, str] = {}
        self.clamp_keys: dict[tuple[str, ...], str] = {}
        #: a masked edge pad's input position -> (b, c): it is b + c, not clamped, so it may lie
        #: outside the input, where only unused values are computed (``_unclamped``); b a
        #: position that is no such one
        self.shifts: dict[str, tuple[str, int]] = {}
        #: those positions and the index temporaries computed from them (``tmp``): loads there
        #: clamp (``_kept_inside``)
        self.moved: set[str] = set()
        #: lane positions whose chunk start is no multiple of the width (rows of another extent),
        #: and whether the kernel has shifted reads to merge (``SHIFTED_ROW_WARPS``)
        self.unaligned_lanes: set[str] = set()
        self.shifted_reads = False
        self.side_loaded: dict[tuple[int, str], str] = {}
        #: the C expressions (variables, literals) holding float16 or bfloat16 values as their
        #: bits, with their C type (``ct.HALF``, ``ct.BF16``)
        self.bits: dict[str, str] = {}
        #: those of them whose bits came out of a conversion from float or a 16-bit arithmetic
        #: instruction (directly, or through sign and selection operations on such bits): an
        #: absolute value of one is taken in float (:meth:`_absolute_bits`)
        self.converted: set[str] = set()
        #: nodes the schedule accumulates in reductions: ``value`` gives them in float
        self.accumulated = {id(r.inputs[0]) for r in info.reductions}
        #: C literals of integer and bool values this kernel holds (constants, positions known
        #: here, ops of them) -> the value, as a NumPy scalar of its dtype
        self.literals: dict[str, Any] = {}

    # --- lines and scopes ------------------------------------------------------------------------
    def line(self, text: str) -> None:
        self.lines.append("  " * self.depth + text)
        self.size += len(text)
        if self.size > self.limit and not _unlimited[0]:
            raise KernelTooLong(f"the kernel's source passed {self.limit:,} characters")

    def open(self, header: str) -> None:
        if header in self.pragma_for:
            self.line(self.pragma_for[header])
        self.line(header + " {")
        self.depth += 1
        self.scopes.append({})
        self.tmps.append({})

    def close(self) -> None:
        self.depth -= 1
        self.scopes.pop()
        self.tmps.pop()
        self.line("}")

    def fresh(self, prefix: str = "v") -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def _lookup(self, key: tuple[int, str]) -> str | None:
        for scope in reversed(self.scopes):
            if key in scope:
                return scope[key]
        return None

    def tmp(self, expr: str, ctype: str | None = None) -> str:
        """A temporary holding ``expr`` (memoized by its text in the current scope chain)."""
        for scope in reversed(self.tmps):
            if expr in scope:
                return scope[expr]
        name = self.fresh("i")
        self.line(f"const {ctype or self.idx_t} {name} = {expr};")
        self.tmps[-1][expr] = name
        if self.moved and self._moved(expr):
            self.moved.add(name)
        return name

    # --- index arithmetic -------------------------------------------------------------------------
    def linear(self, idx: Index) -> str:
        if idx.lin is not None:
            return idx.lin
        assert idx.dims is not None
        terms = []
        for d, s, e in zip(idx.shape, strides(idx.shape), idx.dims, strict=False):
            if d == 1 or e == "0":
                continue
            terms.append(e if s == 1 else f"({e}) * ({self.idx_t}){s}")
        return "(" + " + ".join(terms) + ")" if terms else "0"

    def dims(self, idx: Index) -> tuple[str, ...]:
        if idx.dims is not None:
            return idx.dims
        lin = idx.lin
        assert lin is not None
        wide = [k for k, d in enumerate(idx.shape) if d != 1]
        whole = len(wide) <= 1 or idx.shape[wide[-1]] % self.vec_width == 0
        tested = self.interior_checks is not None and wide and self._long_rows(idx.shape[wide[-1]], SHIFTED_ROW_WARPS if self.shifted_reads else PLAIN_ROW_WARPS)
        if idx.lane is not None and self.vec_at is not None and wide and (whole or tested):
            # a vector chunk that does not cross the last axis (its extent is a multiple of the
            # width and the chunk starts at a multiple of it; else the chunk's branch tests it):
            # lane u's position is the chunk start's with u added along that axis. Every lane then
            # shares the other axes' positions, and reads of one buffer at neighbouring positions
            # (stencil taps) become the same expression in neighbouring lanes, which the C
            # compiler loads once (docs/compiler.md §4)
            out = list(self.dims(replace(idx, lin=idx.lane if idx.lane.isidentifier() else self.tmp(idx.lane), lane=None, tag=None)))
            start = idx.lane if len(wide) == 1 else f"({idx.lane}) % ({self.idx_t}){idx.shape[wide[-1]]}"
            self.lane_starts[out[wide[-1]]] = start
            if not whole:  # (a chunk start that is no multiple of the width: no aligned vectors)
                assert self.interior_checks is not None
                self.interior_checks.setdefault(f"{start} + ({self.idx_t}){self.vec_width} <= ({self.idx_t}){idx.shape[wide[-1]]}")
                self.unaligned_lanes.add(out[wide[-1]])
            out[wide[-1]] = f"({out[wide[-1]]} + (u))"
            return tuple(out)
        if len(wide) > 1 and not lin.isidentifier():
            lin = self.tmp(lin)
        out = []
        first = next((k for k, d in enumerate(idx.shape) if d != 1), None)
        for k, (d, s) in enumerate(zip(idx.shape, strides(idx.shape), strict=False)):
            if d == 1:
                out.append("0")
                continue
            e = lin if s == 1 else f"{lin} / ({self.idx_t}){s}"
            if k != first:
                e = f"({e}) % ({self.idx_t}){d}"
            out.append(self.tmp(e) if ("/" in e or "%" in e) else e)
        return tuple(out)

    # --- values ------------------------------------------------------------------------------------
    def load(self, node: Node, idx: Index) -> str:
        name = self.params.get(id(node))
        if name is None:
            raise CodegenError(f"node {node!r} is neither computed by the group nor one of its inputs")
        if self.moved and idx.tag is None:
            idx = self._kept_inside(node, idx)
        reg = ct.register_type(node.dtype)
        # float16 and bfloat16 are loaded as their bits, except into a cache (whose elements are floats)
        fill = idx.tag == "full" and id(node) in self.cache_fill and self.cache_on
        bits = ct.bits_type(node.dtype) if not fill else None
        if idx.tag == "full":
            self.full_loads.add(id(node))
            if id(node) in self.vector_src:
                if bits:
                    return self.assign_bits(self.vector_src[id(node)], bits)
                return self.assign(reg, f"sl_load(&{self.vector_src[id(node)]})")
            if id(node) in self.cache_read and id(node) in self.filled and self.cache_on:
                return self.assign(reg, self.cache_read[id(node)])
        if idx.lane is not None and self.vec_at is not None and node.dtype.itemsize >= 2:
            # a buffer broadcast along leading axes (layernorm's and GroupNorm's weight and bias,
            # a bias): one vector per chunk
            vname = self._side_vector(node, name, idx.lane)
            if bits:
                return self.assign_bits(f"{vname}.v[u]", bits)
            return self.assign(reg, f"sl_load(&{vname}.v[u])")
        lane = self._lane_vector(node, name, idx)
        if lane is not None:
            if bits:
                return self.assign_bits(lane, bits)
            return self.assign(reg, f"sl_load(&{lane})")
        if bits:
            return self.assign_bits(f"{name}[{self.linear(idx)}]", bits)
        var = self.assign(reg, f"sl_load({name} + {self.linear(idx)})")
        if fill:
            self.line(self.cache_fill[id(node)].format(var) + ";")
            self.filling.add(id(node))
        return var

    def _lane_vector(self, node: Node, name: str, idx: Index) -> str | None:
        """Lane ``u``'s element of ``name`` where a vector chunk's lanes read it at consecutive
        positions along its last axis (a stencil's or a convolution's taps), from the aligned
        vector that holds it; else None. After unrolling, the lanes' vectors are a few distinct
        addresses (``p + K .. p + K + W - 1`` lies in at most two), which the C compiler loads
        once each: a convolution's nine taps are three 16-byte loads a chunk instead of 36
        4-byte ones. The vector holding an element of a row lies in that row (the row's extent
        is a multiple of the width), so no load reaches outside the buffer. The chunk's branch
        is then taken only where ``name`` is aligned to the vector (``aligned_buffers``)."""
        wide = [k for k, d in enumerate(node.shape) if d != 1]
        if self.vec_at is None or idx.dims is None or self.aligned_buffers is None or not wide:
            return None
        lane = self._lane_term(idx.dims[wide[-1]], node.shape[wide[-1]])
        if lane is None or lane[0] in self.unaligned_lanes:
            return None
        p, K = lane
        dims = list(idx.dims)
        dims[wide[-1]] = self._lane_chunk(p, K) if K else p
        v = self._vector_of(node, name, dims)
        return f"{v}.v[{_lane_offset(K)} & {self.vec_width - 1}]" if K else f"{v}.v[u]"

    def _interior_pad(self, node: Node, e: str) -> str | None:
        """The input position of a ``pad`` read at a vector chunk's lane position ``e`` along its
        axis, for a chunk whose positions all fall inside the input (a padded stencil's or a
        ``"same"`` convolution's chunks away from the edges): ``e - before``, still a lane
        position (so its reads are ``_lane_vector``'s); the condition goes to
        ``interior_checks``, which the chunk's branch tests (the other chunks take the
        element-by-element branch, which computes every position). Else None."""
        before, n = node.attr("before"), node.attr("extent")
        s = _lane_plus(e, -before)
        # narrow pads only (a stencil's, a filter's): a wide one (a join's, a long roll's) would
        # send many chunks to the other branch
        padded = node.shape[node.attr("axis")]
        if self.interior_checks is None or s is None or 8 * (padded - n) > n or not self._long_rows(padded, PAD_ROW_WARPS):
            return None
        p, K = _lane_parts(s)
        start = self.lane_starts.get(p)
        if start is None:
            return None
        t = self.idx_t
        self.interior_checks.setdefault(f"({start}) + ({t})({K}) >= ({t})0 && ({start}) + ({t})({K + self.vec_width}) <= ({t}){n}")
        return s

    def _long_rows(self, extent: int, warps: int) -> bool:
        """Whether rows of ``extent`` are ``warps`` warps' chunks long (``SHIFTED_ROW_WARPS``...)."""
        return extent >= warps * 32 * self.vec_width

    def _lane_term(self, e: str, extent: int) -> tuple[str, int] | None:
        """``(p, K)`` of a lane position ``p + u + K`` along an axis of ``extent`` in a vector chunk
        whose width divides the extent (so the vectors of its elements lie in its row), else None."""
        W = self.vec_width
        if _LANE_TERM.match(e) is None or extent % W or W & (W - 1):
            return None
        return _lane_parts(e)

    def _lane_chunk(self, p: str, K: int) -> str:
        """The start of the aligned vector that holds lane ``u``'s position ``p + u + K``."""
        return f"({p} + ({_lane_offset(K)} >> {self.vec_width.bit_length() - 1}) * {self.vec_width})"

    def _vector_of(self, node: Node, name: str, dims: list[str]) -> str:
        """A variable holding the aligned vector of ``name`` that starts at ``dims`` (one read-only
        vector load, ``sl_load_vec_ro``); the chunk's branch then checks ``name``'s alignment."""
        assert self.aligned_buffers is not None
        self.aligned_buffers.add(name)
        st, W = ct.storage_type(node.dtype), self.vec_width
        v = self.fresh(f"lv_{name}_")
        self.line(f"const sl_vec<{st}, {W}> {v} = sl_load_vec_ro<{st}, {W}>({name} + {self.linear(Index(node.shape, dims=tuple(dims)))});")
        return v

    def _side_vector(self, node: Node, name: str, offset: str) -> str:
        """The variable holding the chunk's vector of ``name`` from ``offset``, loaded once per
        chunk at ``vec_at`` (element by element where ``name`` is not aligned to the vector)."""
        key = (id(node), offset)
        vname = self.side_loaded.get(key)
        if vname is None:
            vname = self.fresh(f"sv_{name}_")
            st = ct.storage_type(node.dtype)
            aligned = f"(((unsigned long long){name} & {self.vec_width * node.dtype.itemsize - 1}ULL) == 0ULL)"
            text = f"const sl_vec<{st}, {self.vec_width}> {vname} = sl_load_vec<{st}, {self.vec_width}>({name} + {offset}, {aligned});"
            self._insert(self.vec_at, self.vec_depth, text)
            self.vec_at += 1
            self.side_loaded[key] = vname
        return vname

    def assign(self, ctype: str, expr: str) -> str:
        name = self.fresh()
        self.line(f"const {ctype} {name} = {expr};")
        return name

    def assign_bits(self, expr: str, ctype: str) -> str:
        """A variable holding ``expr``, a float16 or bfloat16 value as its bits (C type ``ctype``)."""
        name = self.assign(ctype, expr)
        self.bits[name] = ctype
        return name

    def as_float(self, expr: str) -> str:
        """``expr`` in float: a value held as bits is converted (once per scope)."""
        ctype = self.bits.get(expr)
        if ctype is None:
            return expr
        to_float, _, exact = ct.BITS_CONVERSIONS[ctype]
        return self._convert(expr, to_float, "float", exact)

    def as_bits(self, expr: str, ctype: str) -> str:
        """``expr``, a float16 or bfloat16 value, as its bits (C type ``ctype``): one held in float
        is converted (exactly: it holds a value of the type; once per scope)."""
        if expr in self.bits:
            return expr
        to_float, _, exact = ct.BITS_CONVERSIONS[ctype]
        return self._convert(expr, exact, ctype, to_float)

    def _convert(self, expr: str, fn: str, ctype: str, inverse: str) -> str:
        """A variable holding ``fn(expr)``, memoized with the temporaries; the inverse conversion
        of the new variable is recorded as ``expr`` itself. A row value read in a loop is converted
        once per row, before the loop."""
        text = f"{fn}({expr})"
        for scope in reversed(self.tmps):
            if text in scope:
                return scope[text]
        if self.hoist_at is not None and expr in self.scopes[0].values():
            name, memo = self.hoist(ctype, text), self.tmps[0]
        else:
            name, memo = self.assign(ctype, text), self.tmps[-1]
        if ctype in ct.BITS_CONVERSIONS:
            self.bits[name] = ctype
            self.converted.add(name)
        memo[text] = name
        memo[f"{inverse}({name})"] = expr
        return name

    def _literal(self, value: Any, dtype: np.dtype) -> str:
        """The C literal of an integer or bool ``value`` of ``dtype``, remembered as one."""
        v = np.asarray(value).astype(dtype)[()]
        text = ct.literal(v, dtype)
        self.literals[text] = v
        return text

    def value(self, node: Node, idx: Index) -> str:
        """A C expression (usually a variable) for ``node`` at ``idx``, in the node's register
        type or, for float16, possibly as half bits (``sl_store`` takes both); the inputs of the
        group's reductions are always given in float, the accumulators' type."""
        v = self._value(node, idx)
        return self.as_float(v) if id(node) in self.accumulated else v

    def _value(self, node: Node, idx: Index) -> str:
        """``node`` at ``idx`` in the form its op computes it (memoized per scope)."""
        if idx.tag == "full" and node.shape != idx.shape:
            # a full value of another shape (a reshape of the domain): the same linear index
            full = self.full_index
            idx = full if full is not None and full.shape == node.shape else Index(node.shape, lin=self.linear(idx), tag="full", lane=idx.lane)
        elif idx.tag == "row" and node.shape != idx.shape:
            # a row value of another shape, the row index's with its 1s dropped or added (the sum
            # of ``keepdims=False``): the same linear index, whose axes are the node's own
            idx = Index(node.shape, lin=self.linear(idx), tag="row", lane=idx.lane)
        if idx.tag is None and idx.dims is not None and not all(e.isidentifier() or e.isdigit() for e in idx.dims):
            idx = replace(idx, dims=tuple(_folded(e) for e in idx.dims))
        key = (id(node), self._clamped_key(idx) if (self.clamps or self.shifts) and idx.tag is None and idx.dims is not None else idx.key())
        found = self._lookup(key)
        if found is not None:
            return found
        cached = self.value_cache.get(id(node)) if idx.tag == "full" else None
        if cached is not None and id(node) in self.filled:
            result = f"{cached}[{self.slot}]"
        else:
            result = self._compute(node, idx)
            if cached is not None:
                self.line(f"{cached}[{self.slot}] = {self.as_float(result)};")
                self.filling.add(id(node))
        self.scopes[-1][key] = result
        return result

    def _clamped_key(self, idx: Index) -> str:
        """``idx.key()`` with each edge pad's position, or one plus a constant (a slice's
        ``(p + 2)``), written as its clamp ``(b, c, lo, hi)`` (``_reclamped``), and each masked
        pad's as ``b + c`` (``_unclamped``): a value read at ``(p + 2)`` is the one read at
        another pad's position of that clamp or offset. Remembered per position (a clamp's or
        offset's name is in ``clamps`` or ``shifts`` before any position reads it)."""
        dims = idx.dims or ()
        key = self.clamp_keys.get(dims)
        if key is None:
            keys = []
            for e in dims:
                p, k = _shifted(e)
                clamp, shift = self.clamps.get(p), self.shifts.get(p)
                if clamp is not None:
                    keys.append(f"clamp({clamp[0]} + {clamp[1] + k}, {clamp[2] + k}, {clamp[3] + k})")
                elif shift is not None:
                    keys.append(_offset_key(shift[0], shift[1] + k))
                else:
                    keys.append(_bare(e))
            key = self.clamp_keys[dims] = "|".join(keys)
        return key

    def hoist(self, ctype: str, expr: str) -> str:
        """A variable holding ``expr`` (which reads only row values), written before the loop
        being emitted when there is one, so it is computed once per row."""
        name = self.fresh("h")
        text = f"const {ctype} {name} = {expr};"
        if self.hoist_at is None:
            self.line(text)
        else:
            self._insert(self.hoist_at, self.hoist_depth, text)
            self.hoist_at += 1
        return name

    def _insert(self, at: int, depth: int, text: str) -> None:
        """Insert a line at position ``at``, keeping the other insertion points in place."""
        self.lines.insert(at, "  " * depth + text)
        if self.hoist_at is not None and self.hoist_at > at:
            self.hoist_at += 1
        if self.vec_at is not None and self.vec_at > at:
            self.vec_at += 1

    def _pad_position(self, node: Node, e: str) -> str:
        """The input position a ``pad`` node reads for output position ``e`` along its axis:
        NumPy's ``pad`` of each mode, as arithmetic (``tests/compiler/test_pad_index_host.py``
        checks every mode against ``np.pad`` for extents 1 to 7 and widths to 3 periods). With
        ``s = e - before``: widths within one period reflect or wrap ``s`` once (compares and
        selects); wider ones take ``s`` modulo the period, which starts at the first input
        element: ``t = (e + (-before mod p)) mod p`` stays nonnegative."""
        before, n, mode = node.attr("before"), node.attr("extent"), node.attr("mode")
        after = node.shape[node.attr("axis")] - before - n
        t = self.idx_t
        if mode == "wrap" and before <= n and after <= n:
            again = self._rewrapped(e, before, n)
            if again is not None:
                return again
        if mode == "edge" and node.attr("masked"):
            return self._unclamped(e, before)
        if mode == "edge":
            again = self._reclamped(e, before, n)
            if again is not None:
                return again
        s = self.tmp(_lane_plus(e, -before) or f"({t})({e}) - ({t}){before}")
        last = f"({t}){n - 1}"
        if mode == "edge":
            p, k = _shifted(e)
            form = (p, k - before, 0, n - 1)
            return self._clamp(f"({s} < ({t})0 ? ({t})0 : {s} > {last} ? {last} : {s})", form)
        # (below 0, above n - 1) for one reflection or wrap, and how far the widths may reach
        once = {"wrap": (f"{s} + ({t}){n}", f"{s} - ({t}){n}", n),
                "symmetric": (f"({t})-1 - {s}", f"({t}){2 * n - 1} - {s}", n),
                "reflect": (f"-{s}", f"({t}){2 * n - 2} - {s}", n - 1)}[mode]
        if before <= once[2] and after <= once[2]:
            p = self.tmp(f"({s} < ({t})0 ? {once[0]} : {s} > {last} ? {once[1]} : {s})")
            if mode == "wrap":
                self.wraps.setdefault(p, (p, 0, n))
            return p
        period = {"wrap": n, "symmetric": 2 * n, "reflect": 2 * (n - 1)}[mode]
        if node.shape[node.attr("axis")] + period >= 2**31:
            t = "long long"
        k = self.tmp(f"(({t})({e}) + ({t}){-before % period}) % ({t}){period}", t)
        if mode == "wrap":
            return k
        mirror = f"({t}){period - 1} - {k}" if mode == "symmetric" else f"({t}){period} - {k}"
        return self.tmp(f"({k} < ({t}){n} ? {k} : {mirror})", t)

    def _rewrapped(self, e: str, before: int, n: int) -> str | None:
        """The input position of a wrap pad (of ``before``, extent ``n``) read at ``e``, where
        ``e`` is another wrap pad's position ``p`` or ``p`` plus a constant (a roll of a roll:
        ``(p + 1)``): ``(r + k) mod n`` with ``p = (r + k0) mod n``, written from ``r`` itself
        (``r`` where ``k`` is 0). Positions then have one text per offset, so the values read
        there are computed once: a time-stepping loop of rolls (``u + roll(u, 1) - 2 * u +
        roll(u, -1)``, 12 steps) wrote a kernel of 4 MB, twice as long at each step. Else None."""
        p, k = _shifted(e)
        found = self.wraps.get(p)
        if found is None or found[2] != n or not any(found[0] in scope.values() for scope in self.tmps):
            return None  # (none, or written in a scope closed since)
        r, k0, _ = found
        k = (k0 + k - before) % n
        if k == 0:
            return r
        t = self.idx_t
        s = self.tmp(f"{r} + ({t}){k}")
        q = self.tmp(f"({s} > ({t}){n - 1} ? {s} - ({t}){n} : {s})")  # r < n and k < n
        self.wraps.setdefault(q, (r, k, n))
        return q

    def _reclamped(self, e: str, before: int, n: int) -> str | None:
        """The input position of an edge pad (of ``before``, extent ``n``) read at ``e``, where
        ``e`` is another edge pad's position ``p`` or ``p`` plus a constant (a pad of a slice of
        a pad: a stencil's step reading the last step's values, ``(p + 2)``): a clamp of a clamp
        is a clamp, ``clamp(clamp(b + c, lo, hi) + k, 0, n - 1) = clamp(b + c + k, lo', hi')``
        with ``lo' = clamp(lo + k, 0, n - 1)``, ``hi'`` alike, written from ``b`` itself.
        Positions then have one text per ``(c, lo, hi)``, so the values read there are computed
        once (a constant-mode pad's masks compare the same positions): 8 steps of ``u + 0.1 *
        pad(u[:, 2:] - 2 * u[:, 1:-1] + u[:, :-2], 1)`` wrote a kernel of 3.9 MB, three times as
        long at each step. Else None."""
        p, k = _shifted(e)
        found = self.clamps.get(p)
        if found is None or not any(scope.get(self.clamp_texts[p]) == p for scope in self.tmps):
            return None  # (none, or written in a scope closed since: ``b`` is visible where ``p`` is)
        b, c, lo, hi = found
        k -= before
        c, lo, hi = c + k, min(max(lo + k, 0), n - 1), min(max(hi + k, 0), n - 1)
        if lo == hi:
            return str(lo)  # (a position known here)
        t = self.idx_t
        # (written as a first pad's position is where the clamp is one: one text, one variable)
        lane = _lane_plus(b, c)
        s = self.tmp(lane) if lane else b if c == 0 else self.tmp(self._plus(b, c))
        return self._clamp(f"({s} < ({t}){lo} ? ({t}){lo} : {s} > ({t}){hi} ? ({t}){hi} : {s})", (b, c, lo, hi))

    def _unclamped(self, e: str, before: int) -> str:
        """The input position of a masked edge pad (``build.pad``'s ``masked``: its values outside
        the input are never used) read at ``e``: ``e - before``, not clamped. Where ``e`` is
        such a position ``b + c`` or one plus a constant (a slice's ``(p + 2)``), written from
        ``b`` itself, so each offset has one text and the values read there are computed once:
        20 steps of ``u + 0.1 * pad(u[:, 2:] - 2 * u[:, 1:-1] + u[:, :-2], ((0, 0), (1, 1)))``
        evaluate each step at each of its offsets, about steps² values an element (with clamps,
        one clamp per path's bounds: a kernel of 12 MB at 25 steps). Out there the values are
        garbage that a ``where`` drops; the loads that read such positions clamp their
        addresses (``_kept_inside``)."""
        p, k = _shifted(e)
        base, c = self.shifts.get(p, (p, 0))
        c += k - before
        s = self.tmp(f"({self.idx_t})({base})" if c == 0 else self._plus(base, c))
        self.shifts.setdefault(s, (base, c))
        self.moved.add(s)
        return s

    def _plus(self, b: str, c: int) -> str:
        """The index expression ``b + c`` (``c`` a nonzero constant)."""
        t = self.idx_t
        return f"({t})({b}) {'-' if c < 0 else '+'} ({t}){abs(c)}"

    def _kept_inside(self, node: Node, idx: Index) -> Index:
        """``idx`` for a load of ``node``, each position that a masked pad moved (``_unclamped``,
        which may lie outside ``node``) clamped to ``node``'s extent: a value computed there is
        dropped, its load must still read inside the buffer."""
        if idx.lin is not None:
            return replace(idx, lin=self._inside(idx.lin, math.prod(node.shape))) if self._moved(idx.lin) else idx
        if idx.dims is None or not any(self._moved(e) for e in idx.dims):
            return idx
        dims = tuple(self._inside(e, n) if self._moved(e) else e for e, n in zip(idx.dims, node.shape, strict=True))
        return replace(idx, dims=dims, lane=None)

    def _inside(self, e: str, n: int) -> str:
        """A temporary holding position ``e`` clamped to ``[0, n)`` (no longer ``moved``)."""
        t, last = self.idx_t, max(n - 1, 0)
        name = self.tmp(f"({e} < ({t})0 ? ({t})0 : {e} > ({t}){last} ? ({t}){last} : {e})")
        self.moved.discard(name)
        return name

    def _moved(self, text: str) -> bool:
        """Whether the index expression ``text`` reads a masked pad's position (``moved``)."""
        return any(name in self.moved for name in _NAME.findall(text))

    def _clamp(self, text: str, form: tuple[str, int, int, int]) -> str:
        """A temporary holding ``text``, an edge pad's input position of clamp ``form`` (``clamps``)."""
        p = self.tmp(text)
        self.clamps.setdefault(p, form)
        self.clamp_texts.setdefault(p, text)
        return p

    def _count_divide(self, node: Node, idx: Index) -> str | None:
        """A mean's or variance's ``reduction / (count - ddof)`` (a count constant, see
        ``stitchlab.frontend.build.count``) where the schedule's reduced extent is the runtime
        argument ``reduced_count``: divide by that argument, so one kernel serves every extent
        (in a pointwise kernel, the leading extent of its domain: the mean of a batch that an
        earlier kernel summed).
        Only when the numerator is a reduction over as many elements as this group reduces: one
        of this group's, or a sum that an earlier kernel computed (the mean a split column
        kernel recomputes from the sum a first kernel stored); the plan is made per shape, so the
        extents agree wherever the kernel runs."""
        if self.reduced_count is None:
            return None
        a, d = node.inputs
        while d.op in ("broadcast", "reshape") and id(d) not in self.members:
            d = d.inputs[0]
        ddof = d.attr("count_ddof") if d.op == "const" else None
        if ddof is None or d.dtype != node.dtype or not is_float(node.dtype):
            return None
        r = a
        while r.op in ("broadcast", "reshape"):
            r = r.inputs[0]
        if r not in self.info.reductions and not (r.op == "sum" and id(r) in self.params):
            return None
        reduced = math.prod(r.inputs[0].shape) // max(1, math.prod(r.shape))
        extent = self.info.cols if self.reduced_extent is None else self.reduced_extent
        if reduced != extent or float(d.attr("value")) != float(max(reduced - ddof, 0)):
            return None
        reg = ct.register_type(node.dtype)
        count = f"({self.reduced_count} - {ddof})" if ddof else self.reduced_count
        if self.count_reciprocal:  # loop-invariant: the compiler computes it once
            return f"({self.as_float(self._value(a, idx))} * (({reg})1 / ({reg})({count})))"
        return f"({self.as_float(self._value(a, idx))} / ({reg})({count}))"

    def _reciprocal_divide(self, node: Node, idx: Index) -> str | None:
        """``a / d`` as ``a * (1 / d)`` when ``d`` is a row value, i.e. a variable computed once per
        row before the loop (the reciprocal too, hoisted before the loop): a multiply per element
        instead of an IEEE division, at most about 1 ulp apart."""
        a, d = node.inputs
        if not (is_float(node.dtype) and a.dtype == node.dtype and d.dtype == node.dtype):
            return None
        c = d
        while c.op in ("broadcast", "reshape") and id(c) not in self.members:
            c = c.inputs[0]
        if c.op == "const" and c.dtype == node.dtype and self.const_reciprocal:
            # a constant divisor: multiply by its reciprocal where that is a normal number of the
            # dtype (a power of two gives the same bits; others are at most about 1 ulp apart)
            value = float(c.attr("value"))
            fi = finfo(node.dtype)
            if value != 0 and math.isfinite(value) and float(fi.tiny) <= abs(1.0 / value) <= float(fi.max):
                return f"({self.as_float(self._value(a, idx))} * {ct.literal(1.0 / value, node.dtype)})"
            return None
        if not self.row_reciprocal or self._row_uniform(a) or not self._row_uniform(d):
            return None  # (a row value divided by a row value: NumPy's division, once per row)
        reg = ct.register_type(node.dtype)
        dv = self._value(d, idx)
        if idx.tag == "full" and dv in self.scopes[0].values() and dv.isidentifier():
            rcp = self.reciprocals.get(dv)
            if rcp is None:
                rcp = self.hoist(reg, f"({reg})1 / {self.as_float(dv)}")
                self.reciprocals[dv] = rcp
        else:
            # the same division read through a view (a flipped or sliced output of the kernel):
            # the same reciprocal, computed here, so that both give the same bits (fuzz seed
            # 600989 of the wide family stored x * (1 / d) and, flipped, x / d)
            rcp = f"(({reg})1 / {self.as_float(dv)})"
        return f"({self.as_float(self._value(a, idx))} * {rcp})"

    def _row_uniform(self, node: Node) -> bool:
        """Whether ``node`` holds one value per row of the group, made of constants and row values
        (the group's reductions, values broadcast from its kept shape) alone: a divisor whose
        reciprocal :meth:`_reciprocal_divide` takes wherever the division is read."""
        found = self._uniform.get(id(node))
        if found is None:
            info, op = self.info, node.op
            if op == "const" or OPS[op].kind is Kind.REDUCE:
                found = True
            elif op == "broadcast" and info.kind == "reduce" and node.inputs[0].shape == info.keep_shape and node.shape == info.shape:
                found = True
            elif id(node) not in self.members and (op == "input" or id(node) in self.params or op not in _FREE):
                found = False  # loaded
            else:
                found = bool(node.inputs) and all(self._row_uniform(i) for i in node.inputs)
            self._uniform[id(node)] = found
        return found

    def _broadcast_lane(self, src: Node, node: Node, idx: Index) -> str | None:
        """The lane base of ``src`` broadcast to ``node`` at ``idx``: where ``src`` is 1 along
        leading axes and whole along the rest (extent ``P``, a multiple of the vector width),
        element ``b + u`` of ``node`` reads element ``b % P + u`` of ``src``."""
        if idx.lane is None or len(src.shape) != len(node.shape):
            return None
        k = len(node.shape)
        while k > 0 and src.shape[k - 1] == node.shape[k - 1]:
            k -= 1
        if any(s != 1 for s in src.shape[:k]):
            return None
        P = math.prod(node.shape[k:])
        if P % self.vec_width:
            return None
        return idx.lane if k == 0 else f"({idx.lane}) % ({self.idx_t}){P}"

    def _compute(self, node: Node, idx: Index) -> str:
        info = self.info
        op = node.op
        if op == "const":
            lit = ct.literal(node.attr("value"), node.dtype)
            if node.dtype.kind in "biu":
                self.literals[lit] = np.asarray(node.attr("value")).astype(node.dtype)[()]
            bits = ct.bits_type(node.dtype)
            if bits is not None:  # the float literal and its bits are one value
                to_float, _, exact = ct.BITS_CONVERSIONS[bits]
                literal = ct.bits_literal(node.attr("value"), node.dtype)
                self.bits[literal] = bits
                self.tmps[0][f"{exact}({lit})"] = literal
                self.tmps[0][f"{to_float}({literal})"] = lit
            return lit
        if op == "iota":
            lin = self.linear(idx)
            work = "double" if is_float(node.dtype) else "long long"
            start, step = node.attr("start"), node.attr("step")
            k = constant_index(lin)
            if k is not None and node.dtype.kind in "iu" and isinstance(start, int) and isinstance(step, int):
                v = start + k * step  # a position known here: its value
                info_ = np.iinfo(node.dtype)
                if info_.min <= v <= info_.max:
                    return self._literal(v, node.dtype)
            if node.dtype == np.uint64:  # (in uint64, wrapping: starts past int64's range, negative steps)
                expr = f"{start % 2**64}ULL + (unsigned long long)({lin}) * {step % 2**64}ULL"
            else:
                expr = f"({work}){start!r} + ({work})({lin}) * ({work}){step!r}"
            if node.dtype == np.float16:  # from double in one rounding, as NumPy's astype
                return self.assign_bits(f"sl_d2h({expr})", ct.HALF)
            if is_bfloat16(node.dtype):  # from double in one rounding
                return self.assign_bits(f"sl_d2bf({expr})", ct.BF16)
            return self.assign(ct.register_type(node.dtype), f"sl_cast<{ct.register_type(node.dtype)}>({expr})")
        if id(node) not in self.members and (op == "input" or id(node) in self.params or op not in _FREE):
            return self.load(node, idx)
        kind = OPS[op].kind
        if kind is Kind.REDUCE:
            row = self._lookup((id(node), "row"))
            if row is None:
                raise CodegenError(f"reduction {node!r} read before its phase finished")
            return row
        if op == "broadcast":
            src = node.inputs[0]
            if idx.tag == "full" and info.kind == "reduce" and src.shape == info.keep_shape and node.shape == info.shape:
                assert self.row_index is not None
                return self._value(src, self.row_index)
            dims = self.dims(idx)
            sub = tuple("0" if s == 1 and d != 1 else e for s, d, e in zip(src.shape, node.shape, dims, strict=False))
            return self._value(src, Index(src.shape, dims=sub, lane=self._broadcast_lane(src, node, idx)))
        if op == "reshape":
            src = node.inputs[0]
            if idx.tag == "full":  # row-major order is kept: the element at the same linear index
                return self._value(src, idx)
            if idx.tag == "row" and squeeze(src.shape) == squeeze(node.shape):
                return self._value(src, Index(src.shape, lin=idx.lin, tag="row"))
            return self._value(src, Index(src.shape, lin=self.linear(idx), lane=idx.lane))
        if op == "transpose":
            src = node.inputs[0]
            perm = node.attr("perm")
            dims = self.dims(idx)
            sub = ["0"] * len(perm)
            for i, p in enumerate(perm):
                sub[p] = dims[i]
            return self._value(src, Index(src.shape, dims=tuple(sub)))
        if op == "slice":
            src = node.inputs[0]
            dims = self.dims(idx)
            sub = []
            for e, start, step in zip(dims, node.attr("starts"), node.attr("steps"), strict=False):
                if start == 0 and step == 1:
                    sub.append(e)
                elif step == 1:
                    sub.append(_lane_plus(e, start) or f"({e} + {start})")
                else:
                    sub.append(f"({start} + ({e}) * ({self.idx_t})({step}))")
            return self._value(src, Index(src.shape, dims=tuple(sub)))
        if op == "pad":
            src = node.inputs[0]
            dims = list(self.dims(idx))
            ax = node.attr("axis")
            k = constant_index(dims[ax])
            if k is not None and 0 <= k < node.shape[ax]:  # a position known here: the input position NumPy's pad reads for it
                before, n = node.attr("before"), node.attr("extent")
                after = node.shape[ax] - before - n
                dims[ax] = str(int(np.pad(np.arange(n), (before, after), node.attr("mode"))[k]))
                return self._value(src, Index(src.shape, dims=tuple(dims)))
            inner = self._interior_pad(node, dims[ax])
            dims[ax] = inner if inner is not None else self._pad_position(node, dims[ax])
            return self._value(src, Index(src.shape, dims=tuple(dims)))
        reg = ct.register_type(node.dtype)
        if idx.tag == "full":
            self.full_evals.setdefault(id(node), set()).add(self.loop_no)
        recip = None
        if op == "divide" and not node.attr("exact"):  # exact: an IEEE division (round's)
            recip = self._count_divide(node, idx)
            if recip is None:
                recip = self._reciprocal_divide(node, idx)
        if op == "astype" and node.dtype == np.float16 and node.inputs[0].dtype == np.float64:
            # one rounding, as NumPy; through float it can round twice (other sources are exact in
            # float, or, as integers beyond 2**24, overflow float16 either way)
            return self.assign_bits(f"sl_d2h({self._value(node.inputs[0], idx)})", ct.HALF)
        if op == "astype" and is_bfloat16(node.dtype) and node.inputs[0].dtype.itemsize >= 4 and node.inputs[0].dtype != np.float32:
            # one rounding from float64 and 32- and 64-bit integers (through float it can round
            # twice; narrower types and float32 are exact in float)
            arg = self._value(node.inputs[0], idx)
            calls = {"int64": f"sl_ll2bf({arg})", "uint64": f"sl_ull2bf({arg})"}
            return self.assign_bits(calls.get(node.inputs[0].dtype.name, f"sl_d2bf((double)({arg}))"), ct.BF16)
        if op == "astype":
            x = self.as_float(self._value(node.inputs[0], idx))
            expr = f"sl_cast<{reg}>({x})"
        elif recip is not None:
            expr = recip
        else:
            ins = canonical_inputs(node, self.skeys)
            if op == "where":  # a condition known here selects its operand
                cond = self.literals.get(self._value(ins[0], idx))
                if cond is not None and ins[1 if cond else 2].dtype == node.dtype:
                    return self._value(ins[1 if cond else 2], idx)
            elif op in _FOLDED_OPS and node.dtype.kind in "biu":
                # an and of bools with a literal false is false, an or with a literal true true
                absorbing = _ABSORBING.get(op) if all(i.dtype == np.bool_ for i in ins) else None
                values = []
                for i in ins:  # in the order the op reads them (an operand that is no literal ends it,
                    v = self.literals.get(self._value(i, idx))  # unless an absorbing one may follow)
                    if v is not None and absorbing is not None and bool(v) == absorbing:
                        return self._literal(absorbing, node.dtype)
                    if v is None and absorbing is None:
                        break
                    values.append(None if v is None else np.asarray(v).astype(i.dtype))
                else:
                    if all(v is not None for v in values):  # NumPy's op on the values, in the inputs' dtypes
                        return self._literal(OPS[op].numpy(*values), node.dtype)
            operands = node.inputs[1:] if op == "where" else node.inputs
            bits = ct.bits_type(node.dtype)
            half = OPS[op].cuda_half if bits is not None else None
            if half is not None and all(i.dtype == node.dtype for i in operands):
                # NumPy's (ml_dtypes') result with one 16-bit instruction (or a move of bits)
                vals = [self._value(i, idx) for i in ins]
                if op in _SELECTS and not any(v in self.bits for i, v in zip(ins, vals, strict=True) if i.dtype == node.dtype):
                    # a selection among values all held in float (a cache, a constant) picks a
                    # 16-bit value as it is: selecting the floats needs no conversion
                    return self.assign("float", OPS[op].cuda_expr("f").format(*vals))
                args = [self.as_bits(v, bits) if i.dtype == node.dtype else v for i, v in zip(ins, vals, strict=True)]
                if op == "absolute" and args[0] in self.converted:
                    return self._absolute_bits(args[0], bits)
                made = self.assign_bits(half.format(*args), bits)
                if op not in _SIGN_AND_SELECT_OPS or any(a in self.converted for a in args):
                    self.converted.add(made)
                return made
            args = [self.as_float(self._value(i, idx)) for i in ins]
            if op in COMPARISONS and {i.dtype for i in ins} == _MIXED_64:  # (NumPy's exact qQ->? loops)
                return self.assign(reg, f"({reg})(sl_compare_mixed({args[0]}, {args[1]}) {_RELATION[op]} 0)")
            shift = _power_of_two_divisor(node) if op in ("floor_divide", "remainder") else None
            if shift is not None:  # floor division by 2**k is an arithmetic shift, its remainder a mask
                mask = ct.literal((1 << shift) - 1, node.dtype)
                return self.assign(reg, f"({reg})({args[0]} >> {shift})" if op == "floor_divide" else f"({reg})({args[0]} & {mask})")
            ref = node.inputs[1] if op == "where" else node.inputs[0]
            fast = OPS[op].cuda_f16 if node.dtype == np.float16 or id(node) in self.ftz_exps else OPS[op].cuda_bf16 if bits is not None else None
            if fast is None and node.attrs and node.attr("fast_math"):  # built under sl.fast_math
                fast = OPS[op].cuda_fast  # (a 16-bit result's own approximation is as fast or faster)
            try:
                template = fast or OPS[op].cuda_expr(ct.kind(ref.dtype))
            except NotImplementedError as exc:
                raise CodegenError(str(exc)) from None
            expr = template.format(*args)
        bits = ct.bits_type(node.dtype)
        if bits is not None:  # computed in float: rounded once, to bits
            made = self.assign_bits(f"{ct.BITS_CONVERSIONS[bits][1]}((float)({expr}))", bits)
            self.converted.add(made)
            return made
        return self.assign(reg, f"({reg})({expr})")

    def _absolute_bits(self, v: str, bits: str) -> str:
        """The absolute value of ``v``, 16-bit float bits that came out of a conversion or a 16-bit
        arithmetic instruction, taken in float and converted back (exact: the value is one of the
        type's). The sign mask ``& 0x7fff`` on such bits is what the ptxas of NVRTC 13.0 to 13.3
        drops when it packs two conversions into one F2FP.PACK_AB (fuzz seed 1000455: ``fabs`` of
        int8 gave -1.0 for every other element); the float's ``|x|`` is an operand modifier it
        keeps, so the kernel compiles with full optimization. Bits read from memory keep the mask
        (no conversion comes before it; NumPy's result for every NaN payload)."""
        made = self.assign_bits(f"{ct.BITS_CONVERSIONS[bits][1]}(fabsf({self.as_float(v)}))", bits)
        self.converted.add(made)
        return made


def _power_of_two_divisor(node: Node) -> int | None:
    """``k`` for a signed integer ``floor_divide`` or ``remainder`` by the constant ``2**k``: NumPy's
    floor semantics make them ``x >> k`` and ``x & (2**k - 1)`` (C's ``/`` and ``%`` truncate, and
    the compiler keeps the correction: the int8 kernel of ``x // 2`` is 784 SASS instructions with
    ``sl_floordiv`` and 416 with the shift, NVRTC 13.5)."""
    if node.dtype.kind != "i" or node.inputs[0].dtype != node.dtype:
        return None
    divisor = node.inputs[1]
    while divisor.op in ("broadcast", "reshape"):
        divisor = divisor.inputs[0]
    if divisor.op != "const":
        return None
    d = int(divisor.attr("value"))
    return d.bit_length() - 1 if d > 0 and d & (d - 1) == 0 else None


#: a comparison of these NumPy computes exactly (C converts the signed operand to unsigned)
_MIXED_64 = {np.dtype(np.int64), np.dtype(np.uint64)}
_RELATION = {"equal": "==", "not_equal": "!=", "less": "<", "less_equal": "<=", "greater": ">", "greater_equal": ">="}

#: 16-bit float ops that pick one operand's value as it is (no rounding): computed in whichever form
#: their operands are held in
_SELECTS = frozenset({"where", "positive"})
#: 16-bit float ops whose bits come from their operands' bits without arithmetic (a sign bit
#: flipped or cleared, one operand picked)
_SIGN_AND_SELECT_OPS = frozenset({"negative", "absolute", "positive", "where", "maximum", "minimum"})


def leaf_params(info: GroupInfo) -> list[Node]:
    """The buffers a group's kernel takes, in the order a canonical walk from the outputs first
    reaches them (independent of the outer extent, so the same kernel text serves every batch)."""
    inputs = {id(n) for n in info.inputs}
    members = {id(n) for n in info.members}
    order: list[Node] = []
    seen: set[int] = set()
    keys = info.structure_keys
    stack = [o for o, _ in reversed(info.outputs)]
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        if id(n) in inputs:
            order.append(n)
            continue
        if id(n) in members or n.op in _FREE:
            stack.extend(reversed(canonical_inputs(n, keys)))
    return order


def structure_key(n: Node, memo: dict[int, tuple[int, str]]) -> tuple[int, str]:
    """A key of ``n``'s structure that ignores the outermost extent of every shape (constants sort
    last). Used to order the operands of commutative ops the same way for every batch size.
    Iterative (deep chains are fine); nodes already in ``memo`` are not visited again."""
    found = memo.get(id(n))
    if found is not None:
        return found
    stack: list[tuple[Node, bool]] = [(n, False)]
    while stack:
        m, ready = stack.pop()
        if id(m) in memo:
            continue
        if not ready:
            stack.append((m, True))
            stack.extend((i, False) for i in m.inputs if id(i) not in memo)
            continue
        if m.op == "const":  # a count constant's value follows the extents: keyed by its ddof
            ddof = m.attr("count_ddof")
            key = (1, repr((m.dtype.str, m.attr("value") if ddof is None else ("count", ddof))))
        else:
            attrs = tuple((k, v[1:] if k == "shape" else v) for k, v in m.attrs)
            ins = [memo[id(i)][1] for i in m.inputs]
            if OPS[m.op].commutative:
                ins.sort()
            text = repr((m.op, m.dtype.str, m.shape[1:], len(m.shape), attrs, ins))
            key = (0, hashlib.sha256(text.encode()).hexdigest()[:16])
        memo[id(m)] = key
    return memo[id(n)]


def canonical_inputs(n: Node, memo: dict[int, tuple[int, str]]) -> list[Node]:
    """``n``'s inputs, commutative operands in structure-key order (stable for ties)."""
    ins = list(n.inputs)
    if OPS[n.op].commutative and len(ins) > 1:
        ins.sort(key=lambda i: structure_key(i, memo))
    return ins


def numel(shape: tuple[int, ...]) -> int:
    return math.prod(shape)
