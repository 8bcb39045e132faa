"""Fusion groups: which nodes may share one kernel, and what that kernel has to do.

The planner works on the *real* nodes of a canonical graph: elementwise ops and reductions. Index
maps (``broadcast``, ``reshape``, ``transpose``, ``slice``) and casts are *free*: a kernel evaluates
them through index arithmetic wherever a consumer needs them, so they are never materialized unless
they are themselves requested (then they become real). Sources (``input``, ``const``, ``iota``) are
read or computed in place.

A group is legal (:func:`analyze` returns a :class:`GroupInfo`) when a schedule exists for it:

* *pointwise*: no reduction; every value the group stores has the same shape (the domain);
* *reduce*: every reduction reduces the same shape ``S`` over the same axes. Each value is then
  either *full* (one per element of ``S``), *row* (one per kept index: a reduction result and
  what is computed from such results) or a *side* value that depends on no reduction of the group
  (recomputed wherever it is read). A row value reaches full values only through a ``broadcast``
  over the reduced axes; a value that depends on a reduction of the group is never read through
  another index map. Reductions of depth ``d`` (``d - 1`` reductions of the group before them) run
  in phase ``d``; the row is read from memory once and held in registers or shared memory across
  phases where it fits.

A running sum or product along the rows (``cumsum``/``cumprod``: :func:`fusable_scan`) joins a
*reduce* group of those rows (or makes one) as a full value of a phase of its own, like a
reduction's: the row held in registers, its values are scanned across the team of threads and
read from registers by the passes after it (:func:`stitchlab.codegen.schedules.emit_row`). A scan
alone along the rows is such a group by itself where there are enough rows
(:func:`lone_row_scan`); any other is a library step (``Kind.CONTRACT``).

Acyclicity of the group graph and the resource budget are checked by the search
(:mod:`stitchlab.plan.search`) and the latency evaluator (:mod:`stitchlab.plan.cost`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..ir.dtypes import is_bfloat16, is_low_float
from ..ir.graph import Graph
from ..ir.node import Node
from ..ir.ops import ARG_REDUCTIONS, EXTREMA_SCANS, OPS, SCANS, Kind

FREE_OPS = frozenset({"broadcast", "reshape", "transpose", "slice", "pad", "astype"})
LEAF_OPS = frozenset({"input", "const", "iota"})
#: groups larger than this are not formed (kernels stay compilable in reasonable time)
MAX_GROUP_NODES = 400

FULL, ROW, OTHER = "full", "row", "other"


def squeeze(shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(d for d in shape if d != 1)


class GraphView:
    """The planner's view of a canonical :class:`Graph`.

    Attributes:
        graph: the graph.
        real: the real nodes in topological order.
        views: for each graph output position that is a reshape of an already computed buffer
            (an input or a real node), that base node; such outputs cost no kernel.
        producers: ``id(real node)`` -> the real nodes it reads (through free chains).
        consumers: ``id(real node)`` -> the real nodes that read it (through free chains).
        must_store: ids of real nodes that are requested (a graph output or the base of a view).
    """

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.pos = {id(n): i for i, n in enumerate(graph.nodes)}
        self.views: dict[int, Node] = {}
        promoted: set[int] = set()
        for k, out in enumerate(graph.outputs):
            if out.op in LEAF_OPS and out.op == "input":
                self.views[k] = out
            elif out.op == "reshape" and (out.inputs[0].op == "input" or not self._is_free(out.inputs[0])) and out.inputs[0].op not in ("const", "iota"):
                self.views[k] = out.inputs[0]
            elif self._is_free(out) or out.op in ("const", "iota"):
                promoted.add(id(out))
        self.promoted = promoted
        self._reads: dict[int, tuple[Node, ...]] = {}
        self._operand_reads: dict[int, tuple[Node, ...]] = {}
        self._shift_reads: dict[int, tuple[tuple[int, bool], ...]] = {}
        self._positional: frozenset[int] | None = None
        self.real = [n for n in graph.nodes if self.is_real(n)]
        self.real_by_id = {id(n): n for n in self.real}
        self.real_ids = self.real_by_id.keys()
        self.must_store = {id(n) for n in self.views.values() if id(n) in self.real_ids}
        self.must_store |= {id(o) for k, o in enumerate(graph.outputs) if k not in self.views}
        self.producers: dict[int, list[Node]] = {}
        self.consumers: dict[int, list[Node]] = {id(n): [] for n in self.real}
        for n in self.real:
            prods = self._real_inputs(n)
            self.producers[id(n)] = prods
            for p in prods:
                if n not in self.consumers[id(p)]:
                    self.consumers[id(p)].append(n)

    @staticmethod
    def _is_free(n: Node) -> bool:
        return n.op in FREE_OPS

    def is_real(self, n: Node) -> bool:
        if id(n) in getattr(self, "promoted", ()):
            return True
        if n.op in LEAF_OPS or n.op in FREE_OPS:
            return False
        return True

    def reads(self, n: Node) -> tuple[Node, ...]:
        """The graph inputs and real nodes a kernel that reads ``n`` reads: ``n`` itself when it
        is one, else those behind its free ops (layout maps), each once; constants read nothing.
        Memoized: the search asks for every group it weighs (:func:`group_io`)."""
        memo = self._reads
        stack: list[tuple[Node, bool]] = [(n, False)]
        while stack:
            m, expanded = stack.pop()
            if id(m) in memo:
                continue
            if m.op == "input" or self.is_real(m):
                memo[id(m)] = (m,)
            elif m.op not in FREE_OPS:
                memo[id(m)] = ()
            elif expanded:
                memo[id(m)] = tuple({id(r): r for i in m.inputs for r in memo[id(i)]}.values())
            else:
                stack.append((m, True))
                stack.extend((i, False) for i in m.inputs if id(i) not in memo)
        return memo[id(n)]

    def operand_reads(self, n: Node) -> tuple[Node, ...]:
        """:meth:`reads` of each of ``n``'s inputs, each node once (memoized)."""
        got = self._operand_reads.get(id(n))
        if got is None:
            memo = self._reads
            got = tuple({id(r): r for i in n.inputs for r in (memo.get(id(i)) or self.reads(i))}.values())
            self._operand_reads[id(n)] = got
        return got

    def shift_reads(self, m: int) -> tuple[tuple[int, bool], ...]:
        """``(id(x), shifted)`` for each real node ``x`` that the real node of id ``m`` reads
        through its free maps, ``shifted`` where a slice or a pad is among them (both where both
        paths are); memoized: :func:`shifted_members` asks for each member of each group the
        recompute cut search weighs."""
        got = self._shift_reads.get(m)
        if got is None:
            found: dict[tuple[int, bool], None] = {}
            seen: set[tuple[int, bool]] = set()
            stack = [(x, False) for x in self.real_by_id[m].inputs]
            while stack:
                x, shifted = stack.pop()
                if self.is_real(x):
                    found[(id(x), shifted)] = None
                elif x.op in FREE_OPS and (id(x), shifted) not in seen:
                    seen.add((id(x), shifted))
                    stack.extend((i, shifted or x.op in SHIFTS) for i in x.inputs)
            got = self._shift_reads[m] = tuple(found)
        return got

    def positional(self) -> frozenset[int]:
        """Ids of the real nodes whose values are made of positions and constants alone (no
        input array: the masks ``iota``'s comparisons make for a constant pad, a join or a
        slice assignment), not reductions; computed once."""
        if self._positional is None:
            found: set[int] = set()
            for n in self.graph.nodes:  # (in topological order)
                if n.op != "input" and (n.op in LEAF_OPS or OPS[n.op].kind not in (Kind.REDUCE, Kind.CONTRACT)
                                        and all(id(i) in found for i in n.inputs)):
                    found.add(id(n))
            self._positional = frozenset(found & self.real_ids)
        return self._positional

    def _real_inputs(self, n: Node) -> list[Node]:
        """The real nodes among :meth:`operand_reads` of ``n`` (its producers)."""
        return [m for m in self.operand_reads(n) if self.is_real(m)]


@dataclass
class GroupInfo:
    """What one legal group computes and how (see the module docstring).

    Attributes:
        members: the group's real nodes, in topological order.
        kind: "pointwise" or "reduce" (or "interpreted" for an op no schedule covers).
        shape: the domain: the stored shape (pointwise) or the reduced shape ``S`` (reduce).
        red_axes: the reduced axes of ``S`` (empty for pointwise).
        reductions: the reduction nodes, in topological order.
        depth: ``id(reduction or scan)`` -> its phase (1 = reads no other reduction or scan of
            the group).
        outputs: the members the group stores, each with its level ("full" or "row").
        inputs: the buffers the group reads (graph inputs and other groups' results).
        levels: ``id(node)`` -> "full"/"row"/"other" for every node the kernel evaluates.
        phases: number of passes over the domain (0 for pointwise: one pass, no reduction).
    """

    members: list[Node]
    kind: str
    shape: tuple[int, ...]
    red_axes: tuple[int, ...] = ()
    reductions: list[Node] = field(default_factory=list)
    depth: dict[int, int] = field(default_factory=dict)
    outputs: list[tuple[Node, str]] = field(default_factory=list)
    inputs: list[Node] = field(default_factory=list)
    levels: dict[int, str] = field(default_factory=dict)
    rowdep: set[int] = field(default_factory=set)
    #: ids of inputs of another shape read at the full index through reshapes (row-major order)
    full_reads: set[int] = field(default_factory=set)
    #: ``id(member)`` -> positions of it the kernel evaluates per element, where more than one
    #: (:func:`recomputed`: a stencil's earlier steps read through slices or pads at several
    #: offsets). Filled after the search (:mod:`stitchlab.plan.search`), never by :func:`analyze`
    evaluated: dict[int, int] = field(default_factory=dict)
    #: the code generator's memo of structure keys (:func:`stitchlab.codegen.elemental.structure_key`,
    #: a hash of a node and everything above it), shared by the groups of one plan
    #: (:func:`stitchlab.plan.search.group_infos`): each kernel of a long program hashed the
    #: program above it again
    structure_keys: dict[int, tuple[int, str]] = field(default_factory=dict, repr=False, compare=False)
    #: :func:`_op_cost` of the members when known (:func:`analyze` sets it from the group's
    #: :class:`GroupIO`, summed from its parts'), else None
    known_op_cost: float | None = field(default=None, repr=False, compare=False)
    #: :attr:`GroupIO.in_bytes` of the inputs when known (:func:`analyze`), else None
    known_in_bytes: dict[tuple[int, ...], int] | None = field(default=None, repr=False, compare=False)
    #: the scans along the rows (:func:`fusable_scan`), in topological order; each has a phase in
    #: ``depth`` as a reduction has
    scans: list[Node] = field(default_factory=list)

    @property
    def op_cost(self) -> float:
        """The members' ``OPS[op].cost`` summed, casts left out."""
        return _op_cost(self.members) if self.known_op_cost is None else self.known_op_cost

    @property
    def in_bytes(self) -> dict[tuple[int, ...], int]:
        """Shape -> the bytes of the inputs of that shape (:attr:`GroupIO.in_bytes`)."""
        return _bytes_by_shape(self.inputs) if self.known_in_bytes is None else self.known_in_bytes

    def is_full_leaf(self, n: Node) -> bool:
        """True when input ``n`` is read once per element of the domain, at its linear index."""
        return n.shape == self.shape or id(n) in self.full_reads

    @property
    def phases(self) -> int:
        return max(self.depth.values(), default=0)

    @property
    def stores_full(self) -> bool:
        """True when an output is stored at full size (a row kernel that writes its rows), not
        only reductions."""
        return any(lvl == FULL for _, lvl in self.outputs)

    def one_pass_variances(self) -> dict[int, tuple[Node, Node]]:
        """``id(r2)`` -> ``(r1, mean)`` for the second-phase reductions that a schedule whose
        passes re-read memory (column groups, rows too long to stay on chip) computes in the
        first pass, saving a pass over the domain; empty when that does not apply.

        It applies when the group has two phases and every second-phase reduction is
        ``sum((e - mean) * (e - mean))`` (or ``square``) with ``mean = r1 / count`` and ``r1 =
        sum(e)`` a first-phase reduction of the same ``e``, in float32, float16 or bfloat16: the variance
        pattern of ``var``/``std`` (any ddof; ``count`` does not matter). Each thread keeps
        Welford's running count, mean and sum of squared deviations of its elements in the first
        pass; the kernel turns them into the sum of squared deviations from ``mean`` once ``mean``
        is known (:func:`stitchlab.codegen.schedules._emit_phases`).

        Numerics: the float32 result differs from the two-pass sum by rounding only (the order
        of a reduction differs anyway). In float16 it is the sum of float deviations and squares,
        where NumPy rounds each ``e - mean`` and its square to float16 before summing in float;
        ``tests/gpu/test_one_pass_variance_gpu.py`` bounds the normalised output within four
        float16 steps of the same program run op by op (bfloat16 likewise, in bfloat16 steps).
        """
        if self.kind != "reduce" or self.phases != 2:
            return {}
        out: dict[int, tuple[Node, Node]] = {}
        for r2 in self.reductions:
            if self.depth[id(r2)] != 2:
                continue
            found = _variance_of(r2, self)
            if found is None:
                return {}
            out[id(r2)] = found
        return out

    def one_hot_picks(self) -> dict[int, tuple[Node, Node]]:
        """``id(r)`` -> ``(b, a)`` for the row reductions ``r = sum(where(b == arange(K), a, 0))``
        of a group whose rows are its last axis (``K`` long), ``b`` an integer row value (constant
        along the row, at the kept shape): cross-entropy's pick of the target logit written with a
        one-hot mask.

        At most one term of such a sum is not +0 (``arange`` takes each value once), so the sum
        is ``0 + a[row, b]`` where ``0 <= b < K`` and 0 elsewhere, bit for bit in any order
        (``+0 + -0`` is ``+0``, as NumPy's sum gives): row kernels read that one element instead
        of comparing, selecting and adding for every element of the row
        (:func:`stitchlab.codegen.schedules._emit_phases`), and the cost model does not count
        that work."""
        S, K = self.shape, self.cols
        if self.kind != "reduce" or not S or self.red_axes != (len(S) - 1,):
            return {}
        out: dict[int, tuple[Node, Node]] = {}
        members = {id(n) for n in self.members}
        for r in self.reductions:
            wh = r.inputs[0]
            if r.op != "sum" or wh.op != "where" or id(wh) not in members or wh.dtype != r.dtype:
                continue
            cond, a, zero = wh.inputs
            z = _layout_source(zero)
            if z.op != "const" or float(z.attr("value")) != 0.0 or math.copysign(1.0, float(z.attr("value"))) < 0:
                continue
            if cond.op != "equal" or id(cond) not in members:
                continue
            for b, i in (cond.inputs, cond.inputs[::-1]):
                it = _layout_source(i)
                if not (it.op == "iota" and it.attr("start") == 0 and it.attr("step") == 1 and it.shape == (K,)
                        and i.op == "broadcast" and i.inputs[0].shape[-1] == K and math.prod(i.inputs[0].shape) == K):
                    continue
                if b.op != "broadcast" or b.inputs[0].shape != self.keep_shape or b.dtype.kind not in "iu" or b.dtype != i.dtype:
                    continue
                out[id(r)] = (b.inputs[0], a)
                break
        return out

    def shifted_exps(self) -> set[int]:
        """Ids of the bfloat16 ``e = exp(a - max(a))`` members (the max one of the group's
        reductions of the same ``a``, broadcast back) read only by ``sum`` reductions of the group:
        logsumexp's and cross-entropy's sum of exponentials.

        Such an ``e`` may flush results below 2**-126 to zero (the MUFU's faster ``ex2.approx.ftz``
        instead of ``ex2.approx``; bfloat16, unlike float16, has values there). Each sum reduces
        the same axes as the max, so it holds its row's ``exp(0) = 1`` and accumulates in
        float32 (a unit in the last place of at least 2**-23): the flushed terms of a row add up
        to less than n * 2**-126 (below 2**-72 of that unit for n < 2**31), so the sum, and the
        bfloat16 result, are the same unless a partial sum falls that close to a rounding
        midpoint; a NaN row is NaN either way. The order of a sum's additions moves its result
        by far more. The shift may also be ``where(isfinite(max(a)), max(a), c)`` (``sl.logsumexp``'s):
        where the max is not finite the row's sum is inf or NaN, or its exps are all exactly 0."""
        if self.kind != "reduce":
            return set()
        members = {id(n) for n in self.members}
        reductions = {id(r) for r in self.reductions}
        stored = {id(o) for o, _ in self.outputs}
        out: set[int] = set()
        for e in self.members:
            if not is_bfloat16(e.dtype) or id(e) in stored or self._exp_shifted_by_max(e, members, reductions) is None:
                continue
            users = [n for n in self.members if any(i is e for i in n.inputs)]
            if users and all(u.op == "sum" and id(u) in reductions and u.dtype == e.dtype for u in users):
                out.add(id(e))
        return out

    def online_exp_sums(self) -> dict[int, tuple[Node, Node, Node]]:
        """``id(S)`` -> ``(a, shift, M)`` for the second-phase sums ``S = sum(exp(a - shift))`` of
        float32 or float64 whose ``shift`` is ``M = max(a)``, a first-phase reduction of the
        group, broadcast back (or ``where(isfinite(M), M, c)``, ``sl.logsumexp``'s): logsumexp,
        softmax and cross-entropy. A schedule whose passes re-read memory may compute such a sum
        in ``M``'s pass (``schedules.OPTIONS["online_exp_sum"]``): each thread keeps its running
        maximum ``m`` and ``s = sum(exp(a - m))``, rescaled when ``m`` grows, and once the row's
        ``shift`` is known its part is ``s * exp(m - shift)``. The exps of float16 and bfloat16
        are rounded to their dtype one by one, as NumPy's, so those keep the second pass. Two
        phases, or more in a group with scans (top-p's: the scan at a third depth)."""
        if self.kind != "reduce" or self.phases < 2 or (self.phases > 2 and not self.scans):
            return {}
        members = {id(n) for n in self.members}
        reductions = {id(r) for r in self.reductions}
        out: dict[int, tuple[Node, Node, Node]] = {}
        for r in self.reductions:
            e = r.inputs[0]
            if (r.op != "sum" or self.depth[id(r)] != 2 or id(e) not in members or r.dtype != e.dtype
                    or e.dtype not in (np.dtype(np.float32), np.dtype(np.float64))):
                continue
            found = self._exp_shifted_by_max(e, members, reductions)
            if found is not None and self.depth[id(found[2])] == 1:
                out[id(r)] = found
        return out

    @staticmethod
    def _exp_shifted_by_max(e: Node, members: set[int], reductions: set[int]) -> tuple[Node, Node, Node] | None:
        """``(a, shift, M)`` where member ``e`` is ``exp(a - shift)`` and ``shift`` is ``M =
        max(a)``, a reduction of the group, broadcast back (or ``where(isfinite(M), M, c)``)."""
        if e.op != "exp" or e.inputs[0].op != "subtract" or id(e.inputs[0]) not in members:
            return None
        a, shift = e.inputs[0].inputs
        top = _finite_or_constant(_layout_source(shift))
        return (a, shift, top) if top.op == "max" and id(top) in reductions and top.inputs[0] is a else None

    @property
    def rows(self) -> int:
        """Kept extent R (number of reduction results per reduction); the domain size for pointwise."""
        if self.kind != "reduce":
            return math.prod(self.shape)
        return math.prod(d for i, d in enumerate(self.shape) if i not in self.red_axes)

    @property
    def cols(self) -> int:
        """Reduced extent K (1 for pointwise)."""
        return math.prod(self.shape[i] for i in self.red_axes) if self.kind == "reduce" else 1

    @property
    def keep_shape(self) -> tuple[int, ...]:
        return tuple(1 if i in self.red_axes else d for i, d in enumerate(self.shape))

    @property
    def inner_reduced(self) -> bool:
        """True when the innermost axis of ``S`` with extent > 1 is reduced (rows are contiguous)."""
        for i in range(len(self.shape) - 1, -1, -1):
            if self.shape[i] != 1:
                return i in self.red_axes
        return True


def _through_maps(n: Node) -> Node:
    while n.op in ("broadcast", "reshape"):
        n = n.inputs[0]
    return n


def _widened(n: Node) -> Node:
    """``n`` without casts that widen float16 or bfloat16 to float32 (exact: the value is the same)."""
    while n.op == "astype" and n.dtype == np.float32 and is_low_float(n.inputs[0].dtype):
        n = n.inputs[0]
    return n


def _float32_computed(dt: np.dtype) -> bool:
    """float32, or float16/bfloat16 (computed in float32)."""
    return dt == np.float32 or is_low_float(dt)


def _variance_of(r2: Node, info: GroupInfo) -> tuple[Node, Node] | None:
    """The first-phase ``sum(e)`` and the ``mean`` that ``r2`` sums the squared deviations of
    ``e`` from, or None (the pattern of :meth:`GroupInfo.one_pass_variances`). Casts from float16
    (bfloat16) to float32 around the sums are looked through (NumPy's float16 means accumulate in
    float32, and so do bfloat16 means); ``mean`` is the value the deviations are taken from (after
    its rounding to float16 or bfloat16)."""
    if r2.op != "sum" or not _float32_computed(r2.dtype):
        return None
    sq = _widened(r2.inputs[0])
    if sq.op == "multiply" and sq.inputs[0] is sq.inputs[1]:
        dev = sq.inputs[0]
    elif sq.op == "square":
        dev = sq.inputs[0]
    else:
        return None
    if dev.op != "subtract" or not _float32_computed(dev.dtype):
        return None
    e, mean = dev.inputs[0], _through_maps(dev.inputs[1])
    div = _through_maps(mean.inputs[0]) if mean.op == "astype" else mean
    if div.op != "divide" or not _float32_computed(div.dtype) or _through_maps(div.inputs[1]).op != "const":
        return None
    r1 = _through_maps(div.inputs[0])
    if r1.op != "sum" or r1 not in info.reductions or info.depth[id(r1)] != 1 or _widened(r1.inputs[0]) is not _widened(e):
        return None
    return r1, mean


@dataclass
class GroupIO:
    """What a set of real nodes reads and stores, before any legality check (:func:`group_io`).

    Attributes:
        ids: the ids it was made of (those that are not real nodes are ignored).
        nodes: the members, in topological order.
        outs: the members it stores: requested ones and those read outside the group, in order.
        ins: the buffers it reads: graph inputs and real nodes outside the group, in order.
        reds: the reduction members, in order.
        contracts: whether a member is a library step (a matrix product, a gather…) that no
            kernel computes (a :func:`fusable_scan` is not one).
        op_cost: the members' ``OPS[op].cost`` summed, casts left out (integers: exact in any order).
        in_bytes: shape -> the :func:`nbytes` of the buffers it reads of that shape, summed (ints:
            exact in any order), for the cost model (:func:`stitchlab.plan.cost.delta_cost`).
    """

    ids: frozenset[int]
    nodes: list[Node]
    outs: list[Node]
    ins: list[Node]
    reds: list[Node]
    contracts: bool
    op_cost: float
    in_bytes: dict[tuple[int, ...], int]


def nbytes(n: Node) -> int:
    """The bytes of the buffer of ``n``."""
    return math.prod(n.shape) * n.dtype.itemsize


def _bytes_by_shape(nodes: Iterable[Node]) -> dict[tuple[int, ...], int]:
    """Shape -> the :func:`nbytes` of ``nodes`` of that shape, summed."""
    out: dict[tuple[int, ...], int] = {}
    for n in nodes:
        out[n.shape] = out.get(n.shape, 0) + nbytes(n)
    return out


def group_io(view: GraphView, members: frozenset[int] | set[int], parts: Sequence[GroupIO] = ()) -> GroupIO:
    """The :class:`GroupIO` of ``members`` (ids that are not real nodes are ignored).

    ``parts``: the :class:`GroupIO` of disjoint groups within ``members``, known already (the
    search merges groups it has weighed: a node joining its consumer's group, siblings). A
    member of a part is stored by the union only if the part stores it (its readers outside the
    union are outside the part), and the union reads only what a part reads, so only the parts'
    outs and ins and the members outside every part are looked at: a merge is not O(members)
    walks of Python code (1,000-step chains and diamonds spent most of their planning there,
    groups of up to ``MAX_GROUP_NODES`` weighed again for each node and option)."""
    by_id, pos = view.real_by_id, view.pos
    members = frozenset(members)

    def order(n: Node) -> int:
        return pos[id(n)]

    rest_ids = members.difference(*[p.ids for p in parts]) if parts else members
    if len(rest_ids) + sum([len(p.ids) for p in parts]) != len(members):
        raise ValueError("group_io: the parts must be disjoint groups within the members")
    if len(members) <= 4:  # (walked as fast as derived: an RNN-like loop's groups of one to three)
        parts, rest_ids = (), members
    rest = [by_id[m] for m in rest_ids if m in by_id]
    rest.sort(key=order)
    consumers, must_store = view.consumers, view.must_store
    outs = [n for n in rest if id(n) in must_store or any(id(c) not in members for c in consumers[id(n)])]
    rest_reads = [view.operand_reads(n) for n in rest]
    reds = [n for n in rest if OPS[n.op].kind is Kind.REDUCE]
    contracts = any(OPS[n.op].kind is Kind.CONTRACT and not fusable_scan(n) for n in rest)
    op_cost = _op_cost(rest)
    runs = len(parts) + bool(rest)
    nodes = rest
    for p in sorted([p for p in parts if p.nodes], key=lambda p: order(p.nodes[0])) if parts else ():
        if nodes and order(nodes[-1]) > order(p.nodes[0]):  # (the runs interleave)
            nodes += p.nodes
            nodes.sort(key=order)
        else:  # (the search's case: a node before its consumers' group)
            nodes += p.nodes
        outs += [n for n in p.outs if id(n) in must_store or any(id(c) not in members for c in consumers[id(n)])]
        reds += p.reds
        contracts = contracts or p.contracts
        op_cost += p.op_cost
    if runs > 1:
        outs.sort(key=order)
        reds.sort(key=order)
    # what the union reads, with its bytes: what the part that reads most reads, less what is a
    # member now, plus what the others read that it does not (each new read's bytes added once:
    # the cost model summed every input's for every union it weighed, a 1,000-step RNN-like
    # loop's groups of up to MAX_GROUP_NODES members reading hundreds of buffers)
    base = max(parts, key=lambda p: len(p.ins)) if parts else None
    ins: dict[int, Node] = {} if base is None else dict(zip(map(id, base.ins), base.ins, strict=True))
    in_bytes = {} if base is None else dict(base.in_bytes)
    for m in members - base.ids if base is not None else ():
        r = ins.pop(m, None)
        if r is not None:
            in_bytes[r.shape] -= nbytes(r)  # (a shape may be left at 0 bytes)
    added = False
    for reads in rest_reads + [p.ins for p in parts if p is not base]:
        for r in reads:
            if id(r) not in ins and id(r) not in members:
                ins[id(r)] = r
                in_bytes[r.shape] = in_bytes.get(r.shape, 0) + nbytes(r)
                added = True
    # (in graph order: the base part's reads already are, so only added ones need a sort)
    reads_in_order = list(ins.values()) if not added else [ins[i] for i in sorted(ins, key=pos.__getitem__)]
    return GroupIO(members, nodes, outs, reads_in_order, reds, contracts, op_cost, in_bytes)


def _op_cost(nodes: Iterable[Node]) -> float:
    """``OPS[op].cost`` of ``nodes`` summed, casts left out (the cost model's work per element)."""
    return sum([OPS[n.op].cost for n in nodes if n.op != "astype"])


def _finite_or_constant(n: Node) -> Node:
    """``M`` for ``n = where(isfinite(M), M, constant)`` (through broadcasts and reshapes), else ``n``."""
    if n.op == "where":
        cond, t, f = (_layout_source(i) for i in n.inputs)
        if cond.op == "isfinite" and _layout_source(cond.inputs[0]) is t and f.op == "const":
            return t
    return n


def _layout_source(n: Node) -> Node:
    """``n`` through its broadcasts and reshapes."""
    while n.op in ("broadcast", "reshape"):
        n = n.inputs[0]
    return n


#: argmax/argmin join a group when the reduced axis is at most this long: positions are ints
#: below the identity's 2**31 - 1 (preamble ``sl_arg``). Longer axes go to CuPy's own argmax. Measured
#: on the H200 (2026-12-01, ``benchmarks/results/2026-12-01-h200-argmax-step-v2-probe.log`` and
#: ``…-argmax-split-v3-probe.log``): a fused row beats CuPy's argmax at every length tried, and
#: with few long rows split over blocks one row of 2**24 float32 takes 21.6 us (CuPy 55.6, torch
#: 28.5).
ARG_MAX_COLS = (1 << 31) - 2


#: Planner switches, on by default; a benchmark turns one off to time what it is worth (the
#: recipe cache keys on them: ``runtime/plan_cache.components``): ``row_scans`` lets scans join
#: row kernels (:func:`fusable_scan`), ``lone_row_scans`` a lone scan be one (:func:`lone_row_scan`).
OPTIONS: dict[str, bool] = {"row_scans": True, "scan_tiles": True, "lone_row_scans": True}

#: result dtypes of a scan a row kernel computes (:func:`fusable_scan`), and bfloat16 (added in
#: float32, each result rounded once, as the library step; float16 ones keep the step, whose
#: results follow NumPy's out of float16's range)
SCAN_DTYPES = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.int64, np.uint64))


def fusable_scan(n: Node) -> bool:
    """Whether ``n`` is a scan a row kernel may compute: a running sum, product, maximum or minimum along the last
    axis (longer than 1) of its input, in a dtype of :data:`SCAN_DTYPES` or bfloat16 that its
    input has too; a running maximum or minimum in any dtype (its input's, exact in any register
    type; float16's ties: ``schedules._scan_functor``)."""
    return (OPTIONS["row_scans"] and n.op in SCANS and len(n.shape) >= 1 and n.attr("axis") == len(n.shape) - 1 and n.shape[-1] > 1
            and (n.dtype in SCAN_DTYPES or is_bfloat16(n.dtype) or n.op in EXTREMA_SCANS) and n.inputs[0].dtype == n.dtype)


def _args_fusable(reds: list[Node]) -> bool:
    """Whether a group with these reductions (argmax/argmin among them) can be a kernel: one
    reduced axis of extent > 1 (an element's position along it is the kernel's reduced index,
    in rows and in columns) of at most ``ARG_MAX_COLS``."""
    S, axes = reds[0].inputs[0].shape, reds[0].attr("axes")
    return len([a for a in axes if S[a] != 1]) <= 1 and math.prod(S[a] for a in axes) <= ARG_MAX_COLS


def lone_row_scan(n: Node, sms: int | None) -> bool:
    """Whether scan ``n``, alone in its group, is a row kernel of its own rather than a step of
    the scan kernels (``runtime/scan.py``): a :func:`fusable_scan` over at least ``sms`` rows (a
    row a block; fewer long rows leave SMs idle, where the step's chained look-back spreads a row
    over the GPU). On an H100 the row kernel was faster in every case timed with that many rows:
    float32 8192 x 4096 90.3 against 94.3 us, bfloat16 46.1 against 56.9, float64 179.4 against
    184.5, 262144 x 128 160.0 against 628.9, 2048 x 32000 177.5 against 193.4, 512 x 128256 (walked
    in tiles) 190.2 against 208.4 (``benchmarks/scans.py``, 2026-12-06). ``sms`` None (no device):
    a step, as before."""
    return OPTIONS["lone_row_scans"] and sms is not None and fusable_scan(n) and math.prod(n.shape[:-1]) >= sms


def analyze(view: GraphView, member_ids: frozenset[int] | set[int], io: GroupIO | None = None,
            sms: int | None = None) -> GroupInfo | None:
    """The :class:`GroupInfo` of the group of real nodes ``member_ids``, or None if it is illegal
    (``io``: its :func:`group_io`, when known; ``sms``: the device's SM count, which decides
    whether a lone scan is a row kernel, :func:`lone_row_scan`)."""
    members = frozenset(member_ids)  # (the same object when it is one)
    if not members or len(members) > MAX_GROUP_NODES:
        return None
    io = group_io(view, members) if io is None else io
    nodes, outs, ins, reds = io.nodes, io.outs, io.ins, io.reds
    if not nodes:
        return None
    scans = [n for n in nodes if n.op in SCANS]
    if io.contracts or (scans and len(nodes) == 1 and not lone_row_scan(nodes[0], sms)):
        # (a matrix product, a lone scan over few rows or another axis: a step of its own)
        if len(nodes) == 1:
            return GroupInfo(nodes, "interpreted", nodes[0].shape, outputs=[(nodes[0], ROW)], inputs=ins, known_in_bytes=io.in_bytes)
        return None
    if any(r.op in ARG_REDUCTIONS for r in reds) and not _args_fusable(reds):
        if len(nodes) == 1:
            return GroupInfo(nodes, "interpreted", nodes[0].shape, outputs=[(nodes[0], ROW)], inputs=ins, known_in_bytes=io.in_bytes)
        return None
    if not reds and not scans:
        shapes = {o.shape for o in outs}
        if len(shapes) != 1:
            return None
        shape = shapes.pop()
        return GroupInfo(nodes, "pointwise", shape, outputs=[(o, FULL) for o in outs], inputs=ins, known_op_cost=io.op_cost, known_in_bytes=io.in_bytes)
    S = reds[0].inputs[0].shape if reds else scans[0].shape
    axes = tuple(reds[0].attr("axes")) if reds else (len(S) - 1,)
    if any(r.inputs[0].shape != S or tuple(r.attr("axes")) != axes for r in reds):
        return None
    if scans and (axes != (len(S) - 1,) or any(not fusable_scan(n) or n.shape != S for n in scans)):
        return None  # (a scan along the rows of the group's domain, which it reduces)
    info = GroupInfo(nodes, "reduce", S, axes, reds, inputs=ins, known_op_cost=io.op_cost, known_in_bytes=io.in_bytes,
                     scans=scans)
    keep = info.keep_shape
    keep_sq = squeeze(keep)

    # which nodes depend on a reduction of the group, and the phase of each reduction (over the
    # members and the free nodes they read, not the whole graph: the search analyzes a group
    # per node and option, and a walk of the graph made that quadratic in its size)
    rowdep: set[int] = set()
    depth_of: dict[int, int] = {}
    for n in all_free_nodes(view, info):  # (the leaves it reaches depend on no reduction of it)
        d = max((depth_of.get(id(i), 0) for i in n.inputs), default=0)
        if id(n) in members and (OPS[n.op].kind is Kind.REDUCE or n.op in SCANS):
            rowdep.add(id(n))
            d += 1
            info.depth[id(n)] = d
        elif any(id(i) in rowdep for i in n.inputs):
            rowdep.add(id(n))
        depth_of[id(n)] = d
    info.rowdep = rowdep

    levels: dict[int, str] = {}
    seen: set[tuple[int, str]] = set()
    stack: list[tuple[Node, str]] = []
    size = math.prod(S)
    for o in outs:
        if o.shape == S or (math.prod(o.shape) == size and squeeze(o.shape) != keep_sq):
            # (a full value of another shape: a contiguous reshape of the domain, see below)
            stack.append((o, FULL))
            info.outputs.append((o, FULL))
        elif squeeze(o.shape) == keep_sq:
            stack.append((o, ROW))
            info.outputs.append((o, ROW))
        else:
            return None
    while stack:
        n, ctx = stack.pop()
        if (id(n), ctx) in seen:
            continue
        if n.op in LEAF_OPS or (view.is_real(n) and id(n) not in members):
            if ctx == FULL and n.shape != S and (n.op == "input" or view.is_real(n)):
                info.full_reads.add(id(n))
            continue
        seen.add((id(n), ctx))
        if ctx == OTHER and id(n) in rowdep:
            return None
        if ctx == FULL and math.prod(n.shape) != size:
            return None
        prev = levels.get(id(n))
        if prev is not None and prev != ctx and id(n) in rowdep and S != keep:
            return None
        levels[id(n)] = ctx
        if id(n) in members and OPS[n.op].kind is Kind.REDUCE:
            if ctx == FULL and S != keep:
                return None
            stack.append((n.inputs[0], FULL))
        elif id(n) in members and n.op in SCANS:
            if ctx != FULL:  # (read at a row's index, or through a slice: no element of it is held there)
                return None
            stack.append((n.inputs[0], FULL))
        elif n.op == "broadcast":
            src = n.inputs[0]
            if ctx == FULL and src.shape == keep and n.shape == S:
                stack.append((src, ROW))
            else:
                stack.append((src, OTHER))
        elif n.op == "reshape":
            src = n.inputs[0]
            if ctx == ROW and squeeze(src.shape) == keep_sq:
                stack.append((src, ROW))
            elif ctx == FULL and S != keep:
                # a reshape keeps the row-major order: the element at the domain's linear index
                # (GroupNorm's (B, HW, G, C/G) domain stored as (B, HW, C))
                stack.append((src, FULL))
            else:
                stack.append((src, OTHER))
        elif n.op in ("transpose", "slice", "pad"):
            stack.append((n.inputs[0], OTHER))
        else:  # elementwise or cast: same index for every input
            for i in n.inputs:
                stack.append((i, ctx))
    info.levels = levels
    if scans and not (scans_fit(info) or (OPTIONS["scan_tiles"] and tile_words(info) <= SCAN_REG_BUDGET)):
        return None
    return info


#: registers a thread of a scanning row kernel may give the values of its row it holds: with the
#: row kernels' 32 for the rest, a block of ``SCAN_TEAM`` threads fits an SM's 65,536
SCAN_REG_BUDGET = 32
#: the most threads a row's team has (a block)
SCAN_TEAM = 1024


def scan_words(info: GroupInfo) -> int:
    """Registers per element of a row a scanning kernel holds at once (2 for 8-byte values): its
    full inputs, and its scans' running values beside the inputs read after the first scan (an
    input read only up to then is dead once the scan has its values: top-p's logits)."""
    def words(nodes: Iterable[Node]) -> int:
        return sum(2 if n.dtype.itemsize == 8 else 1 for n in nodes)

    leaves = {id(i): i for i in info.inputs if info.is_full_leaf(i)}
    first = min(info.depth[id(s)] for s in info.scans)
    late = [o for o, lvl in info.outputs if lvl == FULL]
    late += [r.inputs[0] for r in info.reductions + info.scans if info.depth[id(r)] > first]
    members, ins = {id(m) for m in info.members}, {id(i) for i in info.inputs}
    scans, reds = {id(s) for s in info.scans}, {id(r) for r in info.reductions}
    read: dict[int, Node] = {}
    seen: set[int] = set()
    while late:
        n = late.pop()
        if id(n) in seen or id(n) in scans or id(n) in reds:
            continue
        seen.add(id(n))
        if id(n) in leaves:
            read[id(n)] = n
        elif id(n) in members or (n.op in FREE_OPS and id(n) not in ins):
            late.extend(n.inputs)
    return max(words(leaves.values()), words(read.values()) + words(info.scans))


def scans_fit(info: GroupInfo) -> bool:
    """Whether a team of :data:`SCAN_TEAM` threads holds a row of ``info`` (a group with scans)
    in :data:`SCAN_REG_BUDGET` registers a thread: else its kernel walks the row in tiles
    (:func:`tile_words`), or the scans are library steps."""
    return math.ceil(info.cols / SCAN_TEAM) * scan_words(info) <= SCAN_REG_BUDGET


def tile_words(info: GroupInfo) -> int:
    """Registers per element of a tile of a row that a scanning kernel walks (rows longer than
    :func:`scans_fit` allows: a Llama-3 vocabulary's 128,256 logits): each pass loads a tile of
    its full inputs into registers and scans it, carrying the running value from tile to tile,
    so a thread holds a tile's inputs and running values at once."""
    leaves = [i for i in info.inputs if info.is_full_leaf(i)]
    return sum(2 if n.dtype.itemsize == 8 else 1 for n in leaves + info.scans)


def scan_tile_chunks(words: int, vec: int) -> int:
    """Chunks of ``vec`` elements a thread holds of each tile (``words``: :func:`tile_words`)."""
    return max(1, SCAN_REG_BUDGET // (words * vec))


def all_free_nodes(view: GraphView, info: GroupInfo) -> list[Node]:
    """Every node a kernel of ``info`` evaluates: members and the free/leaf nodes they read."""
    seen: set[int] = set()
    out: list[Node] = []
    members = {id(n) for n in info.members}
    stack = list(info.members)
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        out.append(n)
        if id(n) in members or (n.op in FREE_OPS and not view.is_real(n)):
            stack.extend(n.inputs)
    out.sort(key=lambda n: view.pos[id(n)])
    return out


# --- recompute: values a kernel evaluates at several positions -------------------------------------
#: A position a kernel reads a node at, per axis ``(a, b)``: ``a * i + b`` of the element ``i``
#: being computed (``(0, 0)`` on axes of extent 1); or, past a map this does not follow (a
#: reshape that moves elements between axes, a gather), an opaque token that stays distinct.
Position = tuple
#: A map of positions from a node's to its input's that :func:`_affine` follows: per axis of the
#: input, ``(axis, t, c)``: ``(a * t, c + t * b)`` of the node's ``(a, b)`` on ``axis``; or
#: ``(None, 0, c)``: ``(0, c)``.
Affine = tuple[tuple[int | None, int, int], ...]

#: maps that read their input off the element computed (at an offset)
SHIFTS = frozenset({"slice", "pad"})


def shifted_members(view: GraphView, members: frozenset[int] | set[int]) -> list[int]:
    """Ids of the members that another member of the group reads through a slice or a pad
    (a stencil's earlier step), in graph order; empty for most groups. Walks the free maps
    between members only (:meth:`GraphView.shift_reads`, each member's walked once)."""
    found = {x for m in members for x, shifted in view.shift_reads(m) if shifted and x in members}
    return sorted(found, key=lambda m: view.pos[m])


def recomputed(view: GraphView, info: GroupInfo, memo: PositionMemo | None = None) -> dict[int, int]:
    """``id(member)`` -> how many positions of it a kernel of ``info`` evaluates for each
    element it computes, where more than one: a member read through slices or pads at several
    offsets (a time-stepping stencil fused over ``k`` steps evaluates step ``k - j`` at every
    offset its reach spans, ``2j² + 2j + 1`` positions for a 5-point stencil in 2-d, so the work
    grows as ``k³``). The code generator computes each position once (``Kernel.value`` keys
    values by position), so this counts work, not paths. Rows read at one constant index (an
    assignment's ``x[i - 1]``) are not counted: only those rows compute them. Empty (every member
    once) unless a member reads another through a slice or a pad (:func:`shifted_members`), so
    other groups cost one walk of the maps between members; for the others, each edge between
    members is composed into one :data:`Affine` map once and applied to each position (a
    stencil's moves as one addition to a packed position: :func:`_recomputed`). ``memo``: the
    sets of positions of groups counted before (:class:`PositionMemo`), shared where a member's
    readers in the group are read at the same sets, as the steps of a stencil are in each part
    of each cut of it."""
    if info.kind == "interpreted" or not shifted_members(view, {id(n) for n in info.members}):
        return {}
    try:
        if memo is not None:
            counts = memo.count(view, info)
            if counts is not None:
                return counts
        return _recomputed(view, info, packed=True)
    except _Overflow:  # (a scale or an offset past what a packed position holds)
        return _recomputed(view, info, packed=False)


def _recomputed(view: GraphView, info: GroupInfo, packed: bool) -> dict[int, int]:
    """:func:`recomputed`'s walk. ``packed``: each position of pairs is held as an int
    (:func:`_pack`), and a map that moves each axis by a constant (a stencil's slices and pads)
    adds one int to each (:func:`_translation`), where a new tuple of tuples was made for each
    (a count of the 280 members of 40 steps of a 5-point stencil: 0.52 s, packed 0.07, on one
    loaded 2-CPU machine). Raises :class:`_Overflow` where a position does not fit."""
    members = {id(n): n for n in info.members}
    big = {i: [j for j, m in enumerate(n.shape) if m > 1] for i, n in members.items()}

    def identity(n: Node) -> Position | int:
        return _pack(_identity(n.shape)) if packed else _identity(n.shape)

    at: dict[int, set[Position | int]] = {id(o): {identity(o)} for o, _ in info.outputs}
    reach: dict[int, int] = {}  # (packed) id -> a bound on the offsets of the member's positions
    tokened: set[int] = set()  # (packed) ids of members some of whose positions are tokens
    for n in reversed(info.members):  # (topological order: every reader of n comes later)
        here = at.get(id(n), {identity(n)})  # (empty: read at constant positions only)
        for k, x in enumerate(n.inputs):
            steps, amap = [(n, k)], _affine(n, k)
            while id(x) not in members and x.op in FREE_OPS and not view.is_real(x):
                steps.append((x, 0))  # (free maps have one input)
                amap = _composed(amap, _affine(x, 0))
                x = x.inputs[0]
            if id(x) not in members:
                continue
            got, axes = at.setdefault(id(x), set()), big[id(x)]
            if amap == tuple((j, 1, 0) for j in range(len(n.shape))):
                got |= here  # (an elementwise read at the same position, tokens too)
                reach[id(x)] = max(reach.get(id(x), 0), reach.get(id(n), 0))
                if id(n) in tokened:
                    tokened.add(id(x))
                continue
            # (whether the map takes a position of n at no constant index to one of x likewise)
            kept = amap is not None and all(amap[j][0] is not None and amap[j][1] and n.shape[amap[j][0]] > 1 for j in axes)
            moved = _translation(amap, len(n.shape)) if packed and kept else None
            rest: Iterable[Position | int] = here
            if moved is not None:
                delta, most = moved
                bound = reach.get(id(n), 0) + most
                if bound >= _BIAS:
                    raise _Overflow
                reach[id(x)] = max(reach.get(id(x), 0), bound)
                if id(n) not in tokened:
                    got.update([p + delta for p in here])  # type: ignore[operator]
                    continue
                got.update([p + delta for p in here if type(p) is int])
                rest = [p for p in here if type(p) is not int]
            for pos in rest:
                if type(pos) is int:
                    pos = _unpack(pos, len(n.shape))
                if amap is not None and (not pos or isinstance(pos[0], tuple)):
                    pos = tuple((0, c) if a is None else (pos[a][0] * t, c + t * pos[a][1]) for a, t, c in amap)
                    if kept:
                        got.add(_pack(pos) if packed else pos)
                        reach[id(x)] = max([reach.get(id(x), 0)] + [abs(b) for _, b in pos])
                        continue
                else:
                    for node, i in steps:
                        pos = _read_at(node, i, pos)
                # (a position at one index of an axis, and what it reads, is not counted)
                if not (pos and isinstance(pos[0], tuple) and any(pos[j][0] == 0 for j in axes)):
                    if packed and pos and not isinstance(pos[0], tuple):  # (a token)
                        got.add(pos)
                        tokened.add(id(x))
                    else:
                        got.add(_pack(pos) if packed else pos)
                        reach[id(x)] = max([reach.get(id(x), 0)] + [abs(b) for _, b in pos])
    return {i: len(ps) for i, ps in at.items() if len(ps) > 1}


class PositionMemo:
    """:func:`recomputed` through sets of packed positions shared by every group counted with
    this memo (one search's), for groups whose members read each other through maps that keep
    every axis (:data:`Affine` maps: a stencil's slices and pads, transposes, broadcasts of a
    row); None where one reads another at a constant index or through another map.

    There a member's positions are its identity if the group stores it, and its readers'
    positions (their identity where they have none), each mapped by the map it is read
    through: the union over its edges ``(map, the reader's set)``. A set is kept under that
    description (:meth:`count`), and a member whose readers' sets are described alike in another
    group, or in another part of the same group, takes the set made before. The cut search
    (:func:`stitchlab.plan.search._split`) counts the part before each cut of a ``k``-step
    stencil: step ``j`` of the part before the cut at step ``i`` is read at the sets step
    ``j + 1`` of the part before the cut at ``i + 1`` is. Counted one by one, the parts'
    positions add up to O(k⁴) (57 steps, 399 nodes: 12.7 million, 3.4 s); here each set is
    made once (about the group's own count, O(k³)) and each part costs a walk of its edges."""

    def __init__(self) -> None:
        #: id of a real node -> per real node it reads: (its id, its map, the largest move of an
        #: axis): the map an int (the move of a packed position: :func:`_translation`), an
        #: :data:`Affine` map that keeps every axis of the node read, or None (another map)
        self._edges: dict[int, list[tuple[int, int | Affine | None, int]]] = {}
        #: a set's description (the identity where stored, else None; its edges) -> its number
        self._keys: dict[tuple[int | None, frozenset[tuple[int, int]]], int] = {}
        #: (an Affine map, a set's number) -> (the number of the mapped set, its largest offset)
        self._mapped: dict[tuple[Affine, int], tuple[int, int]] = {}
        self._sets: list[set[int]] = []

    def _edges_of(self, view: GraphView, n: Node) -> list[tuple[int, int | Affine | None, int]]:
        got = self._edges.get(id(n))
        if got is None:  # (as _recomputed reads the real node behind each input)
            got = self._edges[id(n)] = []
            for k, x in enumerate(n.inputs):
                amap = _affine(n, k)
                while x.op in FREE_OPS and not view.is_real(x):  # (free maps have one input)
                    amap = _composed(amap, _affine(x, 0))
                    x = x.inputs[0]
                if not view.is_real(x):
                    continue
                if amap == tuple((j, 1, 0) for j in range(len(n.shape))):
                    got.append((id(x), 0, 0))
                    continue
                axes = [j for j, m in enumerate(x.shape) if m > 1]
                kept = amap is not None and all(amap[j][0] is not None and amap[j][1] and n.shape[amap[j][0]] > 1 for j in axes)
                moved = _translation(amap, len(n.shape)) if kept else None
                got.append((id(x), None if not kept else amap, 0) if moved is None else (id(x), moved[0], moved[1]))
        return got

    def _set(self, key: tuple[int | None, frozenset[tuple[int, int]]]) -> int:
        number = self._keys.get(key)
        if number is None:
            here: set[int] = set() if key[0] is None else {key[0]}
            for move, reader in key[1]:
                if move:
                    here.update([p + move for p in self._sets[reader]])
                else:
                    here |= self._sets[reader]
            number = self._keys[key] = len(self._sets)
            self._sets.append(here)
        return number

    def _map(self, amap: Affine, ndim: int, reader: int) -> tuple[int, int]:
        got = self._mapped.get((amap, reader))
        if got is None:
            mapped: set[int] = set()
            most = 0
            for p in self._sets[reader]:
                pos = _unpack(p, ndim)
                pos = tuple((0, c) if a is None else (pos[a][0] * t, c + t * pos[a][1]) for a, t, c in amap)
                mapped.add(_pack(pos))
                most = max([most] + [abs(b) for _, b in pos])
            got = self._mapped[(amap, reader)] = (len(self._sets), most)
            self._sets.append(mapped)
        return got

    def count(self, view: GraphView, info: GroupInfo) -> dict[int, int] | None:
        """:func:`recomputed` of ``info`` (packed: raises :class:`_Overflow` as
        :func:`_recomputed` does), or None (see the class)."""
        members = {id(n) for n in info.members}
        stores = {id(o) for o, _ in info.outputs}
        at = dict.fromkeys(id(o) for o, _ in info.outputs)  # (in the order of _recomputed's counts)
        read: dict[int, set[tuple[int, int]]] = {}  # id -> (move, set number) of each reader's edge
        reach: dict[int, int] = {}  # id -> a bound on the offsets of its positions (_recomputed's)
        sets: dict[int, int] = {}
        for n in reversed(info.members):  # (topological order: every reader of n comes later)
            edges = read.get(id(n))
            stored = _pack(_identity(n.shape)) if id(n) in stores or not edges else None
            sets[id(n)] = here = self._set((stored, frozenset(edges or ())))
            for x, amap, most in self._edges_of(view, n):
                if x not in members:
                    continue
                if amap is None:
                    return None
                if type(amap) is int:
                    bound = reach.get(id(n), 0) + most
                    if bound >= _BIAS:
                        raise _Overflow
                    edge = (amap, here)
                else:  # (mapped once per reader's set, as _recomputed maps each position)
                    mapped, bound = self._map(amap, len(n.shape), here)
                    edge = (0, mapped)
                reach[x] = max(reach.get(x, 0), bound)
                at.setdefault(x, None)
                read.setdefault(x, set()).add(edge)
        return {i: k for i in at if (k := len(self._sets[sets[i]])) > 1}


class _Overflow(Exception):
    """A position that :func:`_pack` cannot hold."""


#: a packed position (:func:`_pack`) holds each scale and offset in 32 bits, plus this bias
_BIAS = 1 << 30


def _pack(pos: Position) -> int:
    """A position of pairs ``(a, b)`` as one int: axis ``j``'s ``a`` and ``b`` (each biased by
    ``_BIAS``) in the 32 bits at ``64 j`` and ``64 j + 32``, so a move of each axis' offset by a
    constant is an addition (:func:`_translation`) while no offset leaves ``±_BIAS``."""
    key = 0
    for j, (a, b) in enumerate(pos):
        if not (-_BIAS <= a < _BIAS and -_BIAS <= b < _BIAS):
            raise _Overflow
        key |= (a + _BIAS) << (64 * j) | (b + _BIAS) << (64 * j + 32)
    return key


def _unpack(key: int, ndim: int) -> Position:
    """The position :func:`_pack` packed into ``key``."""
    mask = (1 << 32) - 1
    return tuple((((key >> (64 * j)) & mask) - _BIAS, ((key >> (64 * j + 32)) & mask) - _BIAS) for j in range(ndim))


def _translation(amap: Affine | None, ndim: int) -> tuple[int, int] | None:
    """For a map from a node of ``ndim`` axes that moves each axis' offset by a constant
    (``(j, 1, c)`` on axis ``j``): what it adds to a packed position, and its largest move;
    else None."""
    if amap is None or len(amap) != ndim or any(a != j or t != 1 for j, (a, t, _) in enumerate(amap)):
        return None
    return sum(c << (64 * j + 32) for j, (_, _, c) in enumerate(amap)), max((abs(c) for _, _, c in amap), default=0)


def recomputed_within(view: GraphView, info: GroupInfo, whole: GroupInfo) -> dict[int, int]:
    """:func:`recomputed` of ``info`` from that of ``whole`` (``whole.evaluated``), a group that
    holds every member of ``info`` and no reader of one but members of ``info`` (the part of a
    group after a cut; a group less some of what it depends on): each member is read by the
    same members at the same positions, and stored where ``whole`` stores it, so it is
    evaluated at the positions ``whole`` evaluates it at."""
    members = {id(n) for n in info.members}
    if info.kind == "interpreted" or not shifted_members(view, members):
        return {}
    return {i: k for i, k in whole.evaluated.items() if i in members}


def _identity(shape: tuple[int, ...]) -> Position:
    return tuple((0, 0) if n == 1 else (1, 0) for n in shape)


def _affine(n: Node, k: int) -> Affine | None:
    """The :data:`Affine` map of positions from ``n``'s to its input ``k``'s, or None where
    it is not one (a reshape that moves elements between axes, a reduction, a gather)."""
    x, op = n.inputs[k], n.op
    if op == "slice":
        return tuple((j, t, s) for j, (s, t) in enumerate(zip(n.attr("starts"), n.attr("steps"), strict=True)))
    if op == "pad":
        ax, before = n.attr("axis"), n.attr("before")
        return tuple((j, 1, -before if j == ax else 0) for j in range(len(x.shape)))
    if op == "transpose":
        inverse = {p: i for i, p in enumerate(n.attr("perm"))}
        return tuple((inverse[j], 1, 0) for j in range(len(x.shape)))
    if op == "reshape":
        if squeeze(n.shape) != squeeze(x.shape):
            return None
        moved = iter([j for j, m in enumerate(n.shape) if m != 1])  # (axes of extent 1 added or removed)
        return tuple((None, 0, 0) if m == 1 else (next(moved), 1, 0) for m in x.shape)
    if op in ("broadcast", "astype") or OPS[op].kind is Kind.ELEMENTWISE:
        # aligned at the last axis, extents of 1 read at 0
        lead = len(n.shape) - len(x.shape)
        return tuple((None, 0, 0) if m == 1 else (j + lead, 1, 0) for j, m in enumerate(x.shape))
    return None


def _composed(first: Affine | None, then: Affine | None) -> Affine | None:
    """The map ``then`` after ``first``."""
    if first is None or then is None:
        return None
    out = []
    for a, t, c in then:
        if a is None:
            out.append((None, 0, c))
        else:
            a1, t1, c1 = first[a]
            out.append((a1, t1 * t, c + t * c1))
    return tuple(out)


def _read_at(n: Node, k: int, pos: Position) -> Position:
    """The position at which ``n`` (evaluated at ``pos``) reads its input ``k``: through its
    :func:`_affine` map, else the input's identity where ``pos`` is ``n``'s (a reduction read
    at its own element), else a token."""
    amap = _affine(n, k)
    if amap is not None and (not pos or isinstance(pos[0], tuple)):
        return tuple((0, c) if a is None else (pos[a][0] * t, c + t * pos[a][1]) for a, t, c in amap)
    if amap is None and pos == _identity(n.shape):
        return _identity(n.inputs[k].shape)
    return (id(n), k, pos)
