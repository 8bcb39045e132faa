"""Plan search: candidate patterns per node, assembled by beam search.

Real nodes are visited consumers first (reverse topological order). For a node the *candidate
patterns* are: a group of its own; joining the group of one of its consumers; joining all of its
consumers' groups at once (which also merges them). A pattern is kept when the merged group is
legal (:func:`stitchlab.plan.groups.analyze`) and the group graph stays acyclic. Each partial plan
is scored with the delta evaluator (:func:`stitchlab.plan.cost.delta_cost`, summed over groups);
the ``top_k`` best patterns per partial plan are expanded and the ``beam`` best partial plans
survive each step. Finished plans are then weighed counting recompute (a stencil fused over
several steps evaluates its earlier steps at several offsets: :func:`_split_recomputed`, which
splits such groups where that is cheaper), and get horizontal fusion: groups that read a common
buffer merge where that is legal and cheaper (sibling reductions of one array, say). The greedy
plan (beam 1, top-1) is always a candidate, and so is a connected program as one group where that
is legal and every other plan has several kernels (the beam can prune every way to it); the plan
returned never has more kernels or a higher estimate than greedy.
"""

from __future__ import annotations

import hashlib
import heapq
import itertools
from dataclasses import dataclass, replace

from ..ir.node import Node
from .cost import delta_cost
from .device import DeviceProfile
from .groups import (
    GraphView,
    GroupInfo,
    GroupIO,
    PositionMemo,
    analyze,
    group_io,
    recomputed,
    recomputed_within,
    shifted_members,
)

Partition = tuple[frozenset[int], ...]


@dataclass
class Candidate:
    """One complete plan the search produced.

    Attributes:
        groups: the groups, each a frozenset of ``id()`` of real nodes.
        cost: the delta evaluator's estimate in seconds (sum over groups).
        label: "greedy" or "beam #i".
    """

    groups: Partition
    cost: float
    label: str

    @property
    def kernels(self) -> int:
        return len(self.groups)


class _Evaluator:
    """Memoized legality and cost of groups. Once :meth:`count_recompute` is called, a group's
    info and cost count the positions its kernel evaluates each member at
    (:func:`stitchlab.plan.groups.recomputed`); the search itself does not (see
    :func:`_split_recomputed`)."""

    def __init__(self, view: GraphView, dev: DeviceProfile) -> None:
        self.view = view
        self.dev = dev
        self._info: dict[frozenset[int], GroupInfo | None] = {}
        self._io: dict[frozenset[int], GroupIO] = {}
        self._cost: dict[frozenset[int], float] = {}
        self._counting = False
        self._counted: set[frozenset[int]] = set()
        #: id of the last member (graph order) -> the counted groups of that last member
        self._by_last: dict[int, list[tuple[frozenset[int], GroupInfo]]] = {}
        #: the sets of positions of the groups counted (a stencil's parts share them)
        self._positions = PositionMemo()

    def info(self, members: frozenset[int], parts: tuple[frozenset[int], ...] = ()) -> GroupInfo | None:
        """The analysis of ``members``; ``parts``: groups weighed before that it is the union of
        (with other members), whose :func:`group_io` its own is derived from."""
        if members not in self._info:
            io = group_io(self.view, members, tuple(self._io[p] for p in parts if p in self._io))
            info = self._info[members] = analyze(self.view, members, io, self.dev.sms)
            if info is not None:  # (only a legal group is ever a part)
                self._io[members] = io
        info = self._info[members]
        if self._counting and info is not None and members not in self._counted:
            self._counted.add(members)
            info.evaluated = self._recomputed(members, info)
        return info

    def _recomputed(self, members: frozenset[int], info: GroupInfo) -> dict[int, int]:
        """:func:`recomputed` of a group, from a group counted before that holds it and no
        reader of its members but them (:func:`recomputed_within`), looked up among those with
        the same last member (graph order): the part after a cut that :func:`_split` weighs
        ends where the group it cuts ends, and a part before a cut where the same cut of
        another plan's group does (the beam's plans differ in a few first nodes). Each was
        counted again: a 40-step stencil on 256 x 256 made 366 counts, 10 s of planning."""
        last = id(info.members[-1])
        known = self._by_last.setdefault(last, [])
        producers = self.view.producers
        for whole_ids, whole in known:  # (few: the counted groups that end at this member)
            if members <= whole_ids and not any(id(p) in members for w in whole_ids - members for p in producers[w]):
                return recomputed_within(self.view, info, whole)
        counts = recomputed(self.view, info, self._positions)
        if counts:  # (only groups that count recompute are looked through)
            known.append((members, info))
        return counts

    def count_recompute(self) -> None:
        """Count recomputed positions from now on (estimates made before are dropped)."""
        self._counting = True
        self._cost.clear()

    def cost(self, members: frozenset[int]) -> float:
        c = self._cost.get(members)
        if c is None:
            info = self.info(members)
            c = self._cost[members] = float("inf") if info is None else delta_cost(info, self.dev)
        return c


def _acyclic(view: GraphView, groups: Partition) -> bool:
    """True if contracting each group to one vertex leaves the graph acyclic."""
    where: dict[int, int] = {}
    for g, members in enumerate(groups):
        for m in members:
            where[m] = g
    succ: dict[int, set[int]] = {g: set() for g in range(len(groups))}
    for g, members in enumerate(groups):
        for m in members:
            for c in view.consumers[m]:
                h = where.get(id(c))
                if h is not None and h != g:
                    succ[g].add(h)
    state = [0] * len(groups)  # 0 new, 1 on stack, 2 done
    for start in range(len(groups)):
        if state[start]:
            continue
        stack = [(start, iter(succ[start]))]
        state[start] = 1
        while stack:
            g, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                state[g] = 2
                stack.pop()
            elif state[nxt] == 1:
                return False
            elif state[nxt] == 0:
                state[nxt] = 1
                stack.append((nxt, iter(succ[nxt])))
    return True


class _Plan:
    """A partial plan of the beam search, persistent: its last group, the plan before it (shared
    with every plan made from it) and the running sums. A plan that places a node keeps the
    groups before the first one it merges and makes cells only for the groups after: copying
    each option's groups into a new tuple (and a frozenset of them, to drop duplicates) was O(G)
    per option, most of planning a 1,000-step RNN-like loop.

    Attributes:
        group: the last group.
        prev: the plan of the groups before it (None: none).
        total: the sum of the groups' estimates in plan order (the plan's estimate).
        size: the number of groups.
        key: the sum of the groups' hashes (mod 2**64): equal for plans of the same groups.
    """

    __slots__ = ("group", "prev", "total", "size", "key")

    def __init__(self, group: frozenset[int], prev: _Plan | None, cost: float) -> None:
        self.group, self.prev = group, prev
        self.total: float = cost if prev is None else prev.total + cost
        self.size: int = 1 if prev is None else prev.size + 1
        self.key: int = (hash(group) + (0 if prev is None else prev.key)) & 0xFFFFFFFFFFFFFFFF

    def groups(self) -> Partition:
        """The groups in plan order."""
        out: list[frozenset[int]] = []
        cell: _Plan | None = self
        while cell is not None:
            out.append(cell.group)
            cell = cell.prev
        return tuple(reversed(out))


class _Same:
    """A :class:`_Plan` as the key of the plans of its groups, in any order (the search keeps one
    plan per set of groups): hashed by :attr:`_Plan.key`, compared down to the cells the two
    plans share."""

    __slots__ = ("plan",)

    def __init__(self, plan: _Plan | None) -> None:
        self.plan = plan

    def __hash__(self) -> int:
        return 0 if self.plan is None else self.plan.key

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _Same):
            return NotImplemented
        a, b = self.plan, other.plan
        if a is None or b is None:
            return a is b
        if a.size != b.size or a.key != b.key:
            return False
        seen_a: set[frozenset[int]] = set()
        seen_b: set[frozenset[int]] = set()
        while a is not b and a is not None and b is not None:  # (the same size: in step)
            seen_a.add(a.group)
            seen_b.add(b.group)
            a, b = a.prev, b.prev
        return seen_a == seen_b


#: a partial plan: its estimate and its groups (None: no group yet)
State = tuple[float, "_Plan | None"]


def _options(view: GraphView, ev: _Evaluator, state: State, node_id: int) -> list[State]:
    """Partial plans that place ``node_id`` into the partial plan ``state``, each with its cost.

    A plan's estimate is the sum of its groups' in plan order, and an option keeps the groups
    before the first one it merges: it adds from that group's running sum on, the same sum in
    the same order without adding up the whole plan (which made planning a program of G groups
    O(G) per node), and shares those groups' cells (:class:`_Plan`)."""
    _, plan = state
    size = 0 if plan is None else plan.size
    cells: list[_Plan] = []  # the last groups, newest first, as far back as looked
    consumer_groups: list[int] = []  # (positions in plan order)
    for c in view.consumers[node_id]:
        k, cell = 0, plan
        while cell is not None:  # (placed, and most often in a recent group)
            if k == len(cells):
                cells.append(cell)
            if id(c) in cell.group:
                g = size - 1 - k
                if g not in consumer_groups:
                    consumer_groups.append(g)
                break
            k, cell = k + 1, cell.prev

    def group(g: int) -> frozenset[int]:
        return cells[size - 1 - g].group

    choices: list[tuple[int, ...]] = [()]
    choices += [(g,) for g in consumer_groups]
    if len(consumer_groups) > 1:
        choices.append(tuple(consumer_groups))
    out: list[State] = []
    for merge in choices:
        merged = frozenset({node_id}).union(*(group(g) for g in merge))
        if ev.info(merged, tuple(group(g) for g in merge)) is None:
            continue
        first = min(merge, default=size)
        kept = [group(g) for g in range(first + 1, size) if g not in merge] + [merged]
        base = cells[size - 1 - first].prev if first < size else plan  # (the groups before the first merged)
        # the node's producers are not placed yet (consumers first), so a new cycle needs an edge
        # out of the node into another group, or two merged groups: joining the group that holds
        # every consumer of the node cannot make one (a chain is never checked)
        sole = len(merge) == 1 and len(consumer_groups) == 1
        if merge and not sole and not _acyclic(view, (base.groups() if base is not None else ()) + tuple(kept)):
            continue
        new = base
        for m in kept:
            new = _Plan(m, new, ev.cost(m))
        assert new is not None
        out.append((new.total, new))
    out.sort(key=_rank)
    return out


def _rank(t: tuple[float, _Plan | None] | tuple[float, Partition]) -> tuple[float, int]:
    """Order of partial plans: estimate, then fewer groups. Estimates equal to the picosecond are
    ties, kept in the order the options were made (the same for every extent): otherwise the
    last bits of two equal sums, which move with the extents, would pick between equal plans, and
    a new batch size could get a new kernel for nothing."""
    groups = t[1]
    return round(t[0], 12), (len(groups) if isinstance(groups, tuple) else 0 if groups is None else groups.size)


def _run(view: GraphView, ev: _Evaluator, beam: int, top_k: int) -> list[tuple[float, Partition]]:
    """The ``beam`` best plans (estimate, groups) of the search."""
    states: list[State] = [(0.0, None)]
    for node in reversed(view.real):
        pool: dict[_Same, State] = {}
        for state in states:
            for option in _options(view, ev, state, id(node))[:top_k]:
                key = _Same(option[1])
                if key not in pool or option[0] < pool[key][0]:
                    pool[key] = option
        if not pool:  # cannot happen: a group of one node is always legal
            raise RuntimeError(f"no legal group for node {node!r}")
        states = sorted(pool.values(), key=_rank)[:beam]
    return [(total, plan.groups() if plan is not None else ()) for total, plan in states]


#: in sibling fusion a group weighs merging with at most this many other groups that read the
#: same buffer, the last made ones: ``sl.compute`` of 1,000 values of one array weighed 10**6
#: pairs (79 s to plan). A buffer read by at most ``SIBLING_PARTNERS + 1`` groups has every pair
#: weighed, as before (every program of the plan dump: at most 5 groups read one buffer).
SIBLING_PARTNERS = 8


def _merge_siblings(view: GraphView, ev: _Evaluator, groups: Partition) -> tuple[float, Partition]:
    """Horizontal fusion: merge groups that read a common buffer when the merged group is legal,
    the group graph stays acyclic and the estimate drops (the shared input is read once; one
    launch instead of two). Applied to every finished plan, the greedy one included.

    Each step merges the pair that lowers the estimate most (gains equal to the picosecond are
    ties, as in :func:`_rank`: the pair met first in plan order wins, a merged group last). A pair's gain does not change while both of its
    groups stand, so each pair is weighed once and waits in a heap; a pair whose merge would
    make a cycle makes one as long as both stand (other merges keep every path), and is
    dropped. A group weighs the last ``SIBLING_PARTNERS`` standing readers of each buffer it
    reads (all of them in programs of ordinary width), so a plan of G groups that all read one
    buffer (``sl.compute`` of many values of ``x``) weighs O(G) pairs, not O(G²). The cycle
    check of a merge walks the groups downstream of the pair, not the whole plan."""
    if not _acyclic(view, groups):  # (cannot happen: the search keeps its plans acyclic)
        return sum(ev.cost(g) for g in groups), groups
    alive: dict[int, frozenset[int]] = {}  # the standing groups in plan order: a merged group last
    where: dict[int, int] = {}  # id of a real node -> its standing group
    reads: dict[int, set[int]] = {}
    readers: dict[int, dict[int, None]] = {}  # id of a buffer -> the standing groups that read it, in order
    heap: list[tuple[float, int, int]] = []
    numbers = itertools.count()

    def add(group: frozenset[int]) -> None:
        k = next(numbers)
        alive[k] = group
        for m in group:
            where[m] = k
        info = ev.info(group)
        reads[k] = {id(n) for n in info.inputs} if info is not None else set()
        partners: set[int] = set()
        for r in reads[k]:
            partners.update(itertools.islice(reversed(readers.get(r, {})), SIBLING_PARTNERS))
        for j in sorted(partners):
            merged = alive[j] | group
            if ev.info(merged, (alive[j], group)) is not None:
                gain = ev.cost(merged) - ev.cost(alive[j]) - ev.cost(group)
                if gain < 0:
                    heapq.heappush(heap, (round(gain, 12), j, k))
        for r in reads[k]:
            readers.setdefault(r, {})[k] = None

    def downstream(k: int) -> set[int]:
        return {h for m in alive[k] for c in view.consumers[m] if (h := where.get(id(c), k)) != k}

    def reaches(a: int, b: int) -> bool:
        """Whether a path through another group leads from group ``a`` to group ``b``."""
        stack = [h for h in downstream(a) if h != b]
        seen = set(stack)
        while stack:
            g = stack.pop()
            if g == b:
                return True
            for h in downstream(g) - seen:
                seen.add(h)
                stack.append(h)
        return False

    for g in groups:
        add(g)
    while heap:
        _, a, b = heapq.heappop(heap)
        if a not in alive or b not in alive:
            continue
        if reaches(a, b) or reaches(b, a):  # merged, the pair would be a cycle
            continue
        merged = alive[a] | alive[b]
        for k in (a, b):
            del alive[k]
            for r in reads.pop(k):
                del readers[r][k]
        add(merged)
    out = tuple(alive.values())
    return sum(ev.cost(g) for g in out), out


def _split_recomputed(view: GraphView, ev: _Evaluator, groups: Partition) -> Partition:
    """The groups of a finished plan, each whose kernel evaluates members at several positions
    split where that lowers the estimate (counting recompute: :meth:`_Evaluator.count_recompute`).

    A time-stepping stencil fused over ``k`` steps evaluates its earlier steps at every offset
    their reach spans, work that grows as ``k³`` in 2-d. The search places one node at a time
    (a node alone is a whole pass over memory) and does not count that work: counting it there
    analyzed every weighed union's positions, and chains of assignments of rows and elements
    took minutes to plan. Here only the final groups are weighed, and only those in which a
    member reads another through a slice or a pad. A group splits in two at such a member ``m``:
    ``m`` with what it depends on in the group (closed under producers, so the group graph stays
    acyclic: a path out of the group and back in would have been a cycle before), which stores
    ``m``, and the rest, which reads it. The best such cut is taken if it lowers the estimate,
    and the parts are weighed again. Masks of positions alone that both parts read (a constant
    pad's, a slice assignment's: one node for every step) would make the first part store
    values of several shapes, which no kernel does: such cuts move them to kernels of their
    own (:func:`_shared_masks`), where the parts that come of it cost less in the end than those
    of cuts that keep them (the cut taken first is the cheapest, not always the best start)."""
    out: list[frozenset[int]] = []
    for group in groups:
        parts = _split(view, ev, group, False)
        if view.positional():  # (cuts that move shared masks out too, where those are cheaper in the end)
            masked = _split(view, ev, group, True)
            if round(sum(map(ev.cost, masked)), 12) < round(sum(map(ev.cost, parts)), 12):
                parts = masked
        out += parts
    return tuple(out)


def _split(view: GraphView, ev: _Evaluator, group: frozenset[int], masks_out: bool) -> list[frozenset[int]]:
    info = ev.info(group)
    # (only where the recompute raises the estimate: the search weighed the group without it)
    if info is None or not info.evaluated or round(ev.cost(group), 12) <= round(delta_cost(replace(info, evaluated={}), ev.dev), 12):
        return [group]
    best = _cheapest_cut(view, ev, group, masks_out)
    if best is None or round(best[0], 12) >= round(ev.cost(group), 12):
        return [group]
    return best[1] + _split(view, ev, best[2], masks_out) + _split(view, ev, best[3], masks_out)


def _cheapest_cut(view: GraphView, ev: _Evaluator, group: frozenset[int], masks_out: bool
                  ) -> tuple[float, list[frozenset[int]], frozenset[int], frozenset[int]] | None:
    """The cut of ``group`` at a member another reads through a slice or a pad that costs least:
    (cost, the masks moved out (``masks_out``), the part before, the part after), or None."""
    best: tuple[float, list[frozenset[int]], frozenset[int], frozenset[int]] | None = None
    for m in shifted_members(view, group):
        first, stack = {m}, [m]
        while stack:
            for p in view.producers[stack.pop()]:
                if id(p) in group and id(p) not in first:
                    first.add(id(p))
                    stack.append(id(p))
        a, b = frozenset(first), group - first
        if not b:
            continue
        masks = _shared_masks(view, a, b) if masks_out else []
        a -= frozenset().union(*masks)
        if not a or (masks and not _acyclic(view, (*masks, a, b))):
            continue
        cost = sum(ev.cost(p) for p in (*masks, a, b))
        if cost < float("inf") and (best is None or round(cost, 12) < round(best[0], 12)):
            best = (cost, masks, a, b)
    return best


def cut_in_two(view: GraphView, dev: DeviceProfile, group: frozenset[int]) -> list[frozenset[int]] | None:
    """The parts of ``group``'s cheapest cut (recompute counted, shared masks moved out where that
    is cheaper), in the order they run, whether or not they cost less than the group: the code
    generator found the group's kernel too long to write (``codegen.program.build_plan``: a
    stencil's steps through reflecting pads, whose positions near the edges multiply with each
    step). None where no member reads another through a slice or a pad."""
    ev = _Evaluator(view, dev)
    ev.count_recompute()
    cuts = [c for c in (_cheapest_cut(view, ev, group, False), _cheapest_cut(view, ev, group, True)) if c is not None]
    if not cuts:
        return None
    _, masks, a, b = min(cuts, key=lambda c: round(c[0], 12))
    return [*masks, a, b]


def _shared_masks(view: GraphView, a: frozenset[int], b: frozenset[int]) -> list[frozenset[int]]:
    """The nodes of positions alone (:meth:`GraphView.positional`) that both parts of a cut read,
    with what they are made of in ``a``, as groups of one shape each: the masks of a constant pad
    or a slice assignment that every step of a stencil shares (one node each, graph nodes being
    shared), which the part before the cut would otherwise store beside its full-shape values,
    a pointwise kernel of several shapes. Kernels of their own, small (a column of bools), and the
    cut is legal."""
    positional = view.positional()
    stack = [id(p) for n in b for p in view.producers[n] if id(p) in a and id(p) in positional]
    found: set[int] = set()
    while stack:
        n = stack.pop()
        if n not in found:
            found.add(n)
            stack.extend(id(p) for p in view.producers[n] if id(p) in a)
    shapes: dict[tuple[int, ...], set[int]] = {}
    for n in sorted(found, key=view.pos.__getitem__):
        shapes.setdefault(view.real_by_id[n].shape, set()).add(n)
    return [frozenset(ns) for ns in shapes.values()]


def _connected(view: GraphView) -> bool:
    """Whether the real nodes are one piece through their producer and consumer edges (the
    search's own candidates and sibling fusion decide how independent parts share launches)."""
    seen, stack = {id(view.real[0])}, [id(view.real[0])]
    while stack:
        m = stack.pop()
        for n in (*view.producers[m], *view.consumers[m]):
            if id(n) not in seen:
                seen.add(id(n))
                stack.append(id(n))
    return len(seen) == len(view.real)


def search(view: GraphView, dev: DeviceProfile, beam: int = 4, top_k: int = 3) -> tuple[Candidate, list[Candidate]]:
    """Plan the groups of ``view``: (the chosen candidate, every candidate considered)."""
    ev = _Evaluator(view, dev)
    if not view.real:
        empty = Candidate((), 0.0, "greedy")
        return empty, [empty]
    ((_, ggroups),) = _run(view, ev, 1, 1)
    beamed = _run(view, ev, beam, top_k)
    ev.count_recompute()  # (finished plans: their groups' recompute is counted from here on)
    gcost, ggroups = _merge_siblings(view, ev, _split_recomputed(view, ev, ggroups))
    greedy = Candidate(ggroups, gcost, "greedy")
    cands = [greedy]
    finished = [_merge_siblings(view, ev, _split_recomputed(view, ev, groups)) for _, groups in beamed]
    for i, (cost, groups) in enumerate(sorted(finished, key=_rank)):
        if frozenset(groups) != frozenset(ggroups):
            cands.append(Candidate(groups, cost, f"beam #{i}"))
    whole = frozenset(id(n) for n in view.real)
    if all(len(c.groups) > 1 for c in cands) and _connected(view) and ev.info(whole) is not None:
        cands.append(Candidate((whole,), ev.cost(whole), "one kernel"))
    ok = [c for c in cands if c.kernels <= greedy.kernels and c.cost <= greedy.cost * (1 + 1e-12)]
    best = min(ok, key=lambda c: (round(c.cost, 12), c.kernels))
    return best, cands


def _input_key(n: Node) -> tuple[int, str]:
    """The structure key (``codegen.elemental.structure_key``) of a group's input ``n``: its type
    and shape less the outermost extent, not what computed it, so that the kernels of the steps of
    a loop, which differ only in what came before, order their operands and write their source
    alike (one source, one compile: 57 heat steps on 256 x 256 are 8 kernels of 7 steps)."""
    text = repr(("input", n.dtype.str, n.shape[1:], len(n.shape), (), []))  # (a graph input's own key)
    return (0, hashlib.sha256(text.encode()).hexdigest()[:16])


def group_infos(view: GraphView, dev: DeviceProfile, cand: Candidate) -> list[GroupInfo]:
    """The groups of ``cand`` as :class:`GroupInfo`, in an order that respects dependencies."""
    ev = _Evaluator(view, dev)
    ev.count_recompute()  # (as the search's finished plans were estimated)
    infos = [ev.info(g) for g in cand.groups]
    assert all(i is not None for i in infos)
    for info in infos:  # (its inputs are leaves: groups of one shape of structure write one source)
        info.structure_keys = {id(n): _input_key(n) for n in info.inputs}  # type: ignore[union-attr]
    pos = {id(n): k for k, n in enumerate(view.real)}
    where = {m: k for k, g in enumerate(cand.groups) for m in g}
    # topological order of groups (Kahn), ties by the first member's position (distinct: the
    # groups are disjoint), the ready groups in a heap: scanning every group for the next ready
    # one was quadratic (about 15 % of planning a 1,000-step RNN-like loop)
    succs: list[set[int]] = [set() for _ in infos]
    waiting = [0] * len(infos)
    for k, g in enumerate(cand.groups):
        for h in {where[id(p)] for m in g for p in view.producers[m]} - {k}:
            succs[h].add(k)
            waiting[k] += 1
    first = [min(pos[m] for m in g) for g in cand.groups]
    ready = [(first[k], k) for k in range(len(infos)) if not waiting[k]]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        _, k = heapq.heappop(ready)
        order.append(k)
        for s in succs[k]:
            waiting[s] -= 1
            if not waiting[s]:
                heapq.heappush(ready, (first[s], s))
    return [infos[k] for k in order]  # type: ignore[misc]
