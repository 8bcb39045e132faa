"""From a canonical graph to a :class:`~stitchlab.plan.plan.Plan` with CUDA C for every kernel.

``build_plan`` runs the whole compiler front half: the search partitions the graph into groups,
the latency evaluator picks each group's schedule and launch, and the emitters write the kernels.
No GPU is needed: the device profile may be a preset.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import sys
from collections.abc import Iterator

from ..ir.graph import Graph
from ..plan.cost import Launch, Schedule, choose_schedule, schedules
from ..plan.device import DeviceProfile
from ..plan.groups import FREE_OPS, LEAF_OPS, GraphView, GroupInfo, all_free_nodes
from ..plan.plan import CandidatePlan, KernelPlan, Plan, PlanEdge, PlanNode
from ..plan.search import Candidate, cut_in_two, group_infos, search
from . import elemental
from .elemental import CodegenError, KernelTooLong
from .schedules import emit, emit_packed

#: Pack a pointwise kernel with its neighbours when its estimate is below this many launch
#: overheads (its time is mostly the launch), up to ``PACK_MAX`` kernels per launch.
PACK_BELOW = 2.5
PACK_MAX = 8
PACK_BLOCK = 256


def _team_scheme(sched: Schedule) -> str:
    return {"row_warp": "warp", "row_block": "shared", "column": "shared", "row_split": "global",
            "column_split": "global"}.get(sched.family, "register")


def _kernel(view: GraphView, info: GroupInfo, dev: DeviceProfile, cut: bool = False) -> KernelPlan:
    """The kernel of group ``info`` (``cut``: raise :class:`KernelTooLong` where its source would
    be too long, so the caller cuts the group; else such a group's kernel is written whole)."""
    pos = view.pos
    est = choose_schedule(info, dev)
    sched, launch = est.schedule, est.launch
    if info.kind == "reduce" and info.cols == 0 and sched.cache != "none":
        sched = dataclasses.replace(sched, cache="none")
    name, source, params, error = f"interpreted_{pos[id(info.members[0])]}", "", (), None
    if sched.family != "interpreted":
        try:
            ks = emit(info, sched)
            name, source, params, sched = ks.name, ks.source, ks.params, ks.schedule
        except KernelTooLong:
            if cut:
                raise
            with elemental.source_unlimited():  # (nothing to cut at: the long kernel, compiled once)
                ks = emit(info, sched)
            name, source, params, sched = ks.name, ks.source, ks.params, ks.schedule
        except CodegenError as exc:
            error = str(exc)
        except NotImplementedError as exc:
            error = str(exc)
    members = {id(n) for n in info.members}
    evaluated = all_free_nodes(view, info)
    node_info = []
    for n in evaluated:
        if id(n) in members or n.op in FREE_OPS or n.op in ("const", "iota"):
            level = info.levels.get(id(n), "full" if info.kind == "pointwise" else "other")
        else:
            level = "input"
        node_info.append(PlanNode(pos[id(n)], n.op, n.shape, n.dtype.name, level))
    scheme_red = _team_scheme(sched)
    edges = []
    edge_schemes = {}
    inside = {id(n) for n in evaluated}
    for n in evaluated:
        if not (id(n) in members or (n.op in FREE_OPS and not view.is_real(n)) or n.op in LEAF_OPS and n.op != "input"):
            continue
        for i in n.inputs:
            if id(i) not in inside:
                continue
            if n in info.reductions or i in info.reductions:
                scheme = scheme_red
            else:
                scheme = "register"
            edges.append(PlanEdge(pos[id(i)], pos[id(n)], scheme, name))
            edge_schemes[(i, n)] = scheme
    return KernelPlan(
        name=name,
        source=source,
        schedule=sched,
        launch=launch,
        nodes=list(info.members),
        node_info=node_info,
        members=[pos[id(n)] for n in info.members],
        inputs=[pos[id(n)] for n in info.inputs],
        outputs=[pos[id(n)] for n, _ in info.outputs],
        edges=edges,
        estimated_time=est.seconds,
        edge_schemes=edge_schemes,
        params=params,
        info=info,
        error=error,
    )


def _packable(k: KernelPlan, dev: DeviceProfile) -> bool:
    return (k.schedule.family == "pointwise" and k.error is None and k.info is not None
            and k.launch.grid[0] > 0 and k.estimated_time < PACK_BELOW * dev.launch_overhead)


def _pack(kernels: list[KernelPlan], view: GraphView, dev: DeviceProfile) -> list[KernelPlan]:
    """Kernel packing: consecutive, independent, launch-bound pointwise kernels share a launch
    (the cost model's saving: one launch overhead per kernel packed)."""
    out: list[KernelPlan] = []
    run: list[KernelPlan] = []

    def flush() -> None:
        out.extend(_packed(run, dev) if len(run) > 1 else run)
        run.clear()

    for k in kernels:
        if _packable(k, dev):
            produced = {o for r in run for o in r.outputs}
            if run and (produced & set(k.inputs) or len(run) == PACK_MAX):
                flush()
            run.append(k)
        else:
            flush()
            out.append(k)
    flush()
    return out


def _packed(run: list[KernelPlan], dev: DeviceProfile) -> list[KernelPlan]:
    """One packed kernel for ``run``, or ``run`` unchanged if it cannot be packed."""
    parts = []
    for k in run:
        assert k.info is not None
        est = next((e for e in schedules(k.info, dev) if e.schedule.block == PACK_BLOCK and e.schedule.vec == k.schedule.vec), None)
        if est is None:
            return list(run)
        try:
            ks = emit(k.info, est.schedule)
        except CodegenError:
            return list(run)
        parts.append(dataclasses.replace(k, name=ks.name, source=ks.source, params=ks.params, schedule=ks.schedule, launch=est.launch))
    try:
        ks = emit_packed([(p.info, p.schedule) for p in parts])  # type: ignore[misc]
    except CodegenError:
        return list(run)
    grid = sum(p.launch.grid[0] for p in parts)
    saved = (len(parts) - 1) * dev.launch_overhead
    edges = [e for p in parts for e in p.edges]
    return [KernelPlan(
        name=ks.name,
        source=ks.source,
        schedule=ks.schedule,
        launch=Launch((grid, 1, 1), (PACK_BLOCK, 1, 1)),
        nodes=[n for p in parts for n in p.nodes],
        node_info=[n for p in parts for n in p.node_info],
        members=[m for p in parts for m in p.members],
        inputs=sorted({i for p in parts for i in p.inputs}),
        outputs=[o for p in parts for o in p.outputs],
        edges=[dataclasses.replace(e, kernel=ks.name) for e in edges],
        estimated_time=sum(p.estimated_time for p in parts) - saved,
        edge_schemes={key: v for p in parts for key, v in p.edge_schemes.items()},
        params=ks.params,
        info=None,
        parts=parts,
    )]


def _override(key: str) -> int | None:
    """The candidate a user chose for this graph (``stitchlab.notebook.hooks``), or None."""
    try:
        from ..notebook.hooks import plan_override
    except ImportError:
        return None
    return plan_override(key)


@contextlib.contextmanager
def _deep_recursion(limit: int) -> Iterator[None]:
    """Raise Python's recursion limit to ``limit`` for the block (never lower it)."""
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(max(before, limit))
    try:
        yield
    finally:
        sys.setrecursionlimit(before)


def _kernels(view: GraphView, dev: DeviceProfile, best: Candidate) -> list[KernelPlan]:
    """The kernels of ``best``'s groups, in an order that respects dependencies. A group whose
    source would pass ``elemental.MAX_SOURCE`` (``MAX_RECOMPUTE_SOURCE`` for a stencil's fused
    steps, where NVRTC's time grows fastest; the cost model counts a stencil's positions by their
    offsets, the code generator writes one per distinct clamp or reflection near the edges) is
    cut in two at its cheapest cut (``search.cut_in_two``) and its parts written instead, cut
    again while too long; a part with nothing to cut at is written whole (compiled once: the
    registry keeps it)."""
    groups, done = list(best.groups), {}
    while True:
        cand = Candidate(tuple(groups), best.cost, best.label)
        out, too_long = [], None
        for info in group_infos(view, dev, cand):
            key = frozenset(id(n) for n in info.members)
            if key not in done:
                try:
                    done[key] = _kernel(view, info, dev, cut=True)
                except KernelTooLong:
                    parts = cut_in_two(view, dev, key)
                    if parts is not None:
                        too_long = (key, parts)
                        break
                    done[key] = _kernel(view, info, dev)
            out.append(done[key])
        if too_long is None:
            return out
        at = groups.index(too_long[0])
        groups[at:at + 1] = too_long[1]


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for the block (reference counting still frees what
    planning drops): its passes over the planner's many young objects were about a fifth of
    planning a 1,000-step loop (``benchmarks/planner_host.py ernn/1000``, docs/compiler.md §3)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def build_plan(graph: Graph, dev: DeviceProfile, beam: int = 4, top_k: int = 3) -> Plan:
    """Plan ``graph`` for ``dev`` and generate every kernel's source."""
    with _collector_paused():
        return _build_plan(graph, dev, beam, top_k)


def _build_plan(graph: Graph, dev: DeviceProfile, beam: int, top_k: int) -> Plan:
    view = GraphView(graph)
    best, cands = search(view, dev, beam=beam, top_k=top_k)
    choice = _override(graph.key)
    if choice is not None and choice < len(cands):  # the user picked a candidate in a notebook
        best = cands[choice]
    with _deep_recursion(4 * len(graph.nodes) + 1000):  # the emitters recurse along operand chains
        kernels = _pack(_kernels(view, dev, best), view, dev)
    pos = view.pos
    by_id = {id(n): n for n in graph.nodes}
    candidates = [
        CandidatePlan(c.label, [sorted((by_id[m] for m in g), key=lambda n: pos[id(n)]) for g in c.groups], c.cost)
        for c in cands
    ]
    # edges between kernels travel through global memory
    owner = {}
    for k in kernels:
        for m in k.members:
            owner[m] = k.name
    edges = [e for k in kernels for e in k.edges]
    for k in kernels:
        for m in k.members:
            node = graph.nodes[m]
            for p in view.producers[id(node)]:
                if owner.get(pos[id(p)]) != k.name:
                    edges.append(PlanEdge(pos[id(p)], m, "global", None))
    views = {k: pos[id(n)] for k, n in view.views.items()}
    return Plan(graph, dev, kernels, views, candidates, edges)
