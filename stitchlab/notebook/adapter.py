"""The one place that reads the compiler's objects for the notebook views.

Renderers (:mod:`.html`, :mod:`.svg`, :mod:`.widgets`) never touch a ``Plan`` or an IR node;
they draw a :class:`PlanView`, a plain description of what to show: the nodes, the edges with
their stitching scheme, the kernels (fusion groups) with their source and estimated time, and
the beam search's candidate plans. :func:`plan_view` builds one from a compiler plan and
:func:`graph_view` from lazy arrays that have no plan (nothing is evaluated in either case), so
when the compiler's ``Plan`` changes shape only this module changes.

What :func:`plan_view` reads from a plan (``stitchlab.plan.Plan``; attribute names are looked up
in the order given, so a stand-in with other names works too):

* ``plan.graph``: the canonical IR graph (node order, outputs, ``graph.key``);
* ``plan.kernels``: each kernel's ``name``, ``source``, ``schedule`` (its ``family`` decides
  inferred schemes), ``launch``, ``nodes`` (the IR nodes of its group), estimated time
  (``estimated_us`` in µs, or ``estimated_time`` in seconds), and where present ``measured_us``,
  ``key`` (registry key) and ``cached``. Index-map nodes (broadcast, reshape...) that no kernel
  lists belong to the kernel that reads them. Without a ``key``, the key is computed the way the
  runtime computes it, and "cached" says whether the default registry holds it;
* stitching schemes: ``plan.edges`` (graph positions ``src``/``dst`` and a ``scheme``) and
  ``edge_schemes`` (``{(producer node, consumer node): scheme}``, on the plan or a kernel).
  An edge between kernels is drawn as ``"memory"``, an edge from an input as ``"load"``; an edge
  inside a kernel that the plan does not describe is inferred from the schedule (leaving a
  reduction: ``"warp"`` for warp-per-row, ``"shared"`` for block-per-row and column schedules,
  ``"global"`` for rows split over blocks; otherwise ``"register"``);
* ``plan.candidates``: the beam search's plans, each with ``label``, an estimated time, and
  ``groups`` (lists of IR nodes or of their ids) or ``kernels``; the one the plan used is found
  by comparing groups (or ``plan.chosen``, an index, where a plan has it);
* the graph key for :mod:`.hooks` overrides: ``plan.key``, else ``plan.graph.key``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any

from ..ir.graph import postorder

#: Stitching schemes of an edge inside a kernel, from cheapest to dearest (DESIGN §2.2).
SCHEMES = ("register", "warp", "shared", "global")
#: The "scheme" of an edge between kernels: the value is written to and read from memory.
BETWEEN_KERNELS = "memory"
#: The scheme of an edge from an input array or a constant into a kernel.
LOAD = "load"
#: The scheme of an edge leaving a reduction inside a group that has no schedule yet (a
#: candidate plan the search weighed): stitched, by a mechanism the schedule would choose.
FUSED = "fused"


@dataclass(frozen=True)
class NodeView:
    """One node to draw.

    Attributes:
        id: position in the graph (inputs before users).
        op: the IR op name (``"exp"``, ``"sum"``, ``"input"``...).
        label: the text in the box (op name, plus reduction axes or a folded constant).
        shape: the node's shape.
        dtype: its dtype name.
        kernel: index of the kernel that computes it, or None (inputs, constants).
        kind: ``"input"``, ``"const"``, ``"reduce"``, ``"elementwise"``, ``"broadcast"``,
            ``"layout"`` or ``"source"``.
        output: True if the node is one of the requested results.
    """

    id: int
    op: str
    label: str
    shape: tuple[int, ...]
    dtype: str
    kernel: int | None
    kind: str
    output: bool = False


@dataclass(frozen=True)
class EdgeView:
    """An edge producer → consumer and how the value travels (see :data:`SCHEMES`)."""

    src: int
    dst: int
    scheme: str


@dataclass(frozen=True)
class KernelView:
    """One kernel (fusion group).

    Attributes:
        index: position in the plan (launch order).
        name: kernel name.
        schedule: schedule name (``"row_reduce_warp"``...), as text.
        launch: launch configuration as text (``"grid=(1024,) block=(256,)"``...).
        nodes: ids of the nodes it computes.
        source: its CUDA C source ("" if the plan has none).
        estimated_us: the cost model's estimate in microseconds, or None.
        measured_us: a measured time in microseconds, or None.
        key: its registry key, or None.
        cached: True/False if known whether the registry holds it, else None.
    """

    index: int
    name: str
    schedule: str
    launch: str
    nodes: tuple[int, ...]
    source: str = ""
    estimated_us: float | None = None
    measured_us: float | None = None
    key: str | None = None
    cached: bool | None = None


@dataclass(frozen=True)
class CandidateView:
    """One candidate plan of the beam search, summarised for side-by-side comparison."""

    index: int
    label: str
    kernels: int
    estimated_us: float | None
    measured_us: float | None
    chosen: bool
    plan: Any = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class PlanView:
    """Everything the notebook views draw for one plan (or one unplanned graph).

    Attributes:
        nodes, edges, kernels: the graph and its fusion groups.
        planned: False for a graph drawn without a planner (then ``kernels`` is empty).
        graph_key: the structural key of the graph (what plan overrides are keyed by).
        candidates: the beam search's candidates (empty if the plan has none).
        note: one line explaining a missing piece ("not planned: ..."), or "".
    """

    nodes: tuple[NodeView, ...]
    edges: tuple[EdgeView, ...]
    kernels: tuple[KernelView, ...]
    planned: bool
    graph_key: str = ""
    candidates: tuple[CandidateView, ...] = ()
    note: str = ""

    @property
    def op_count(self) -> int:
        """Number of operations (nodes that are not inputs or constants)."""
        return sum(n.kind not in ("input", "const", "source") for n in self.nodes)

    @property
    def estimated_us(self) -> float | None:
        """Sum of the kernels' estimates, or None if any is missing."""
        times = [k.estimated_us for k in self.kernels]
        return sum(times) if times and all(t is not None for t in times) else None  # type: ignore[misc]


# --- reading helpers -------------------------------------------------------------------------------
def _attr(obj: Any, names: Sequence[str], default: Any = None) -> Any:
    """The first of ``names`` that ``obj`` has (as an attribute or a mapping key) and is not None."""
    for name in names:
        if isinstance(obj, Mapping) and name in obj:
            return obj[name]
        value = getattr(obj, name, None)
        if value is not None:
            return value
    return default


def _text(value: Any) -> str:
    """A schedule / launch object as one line of text."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        return " ".join(f"{k}={_text(v) if not isinstance(v, (tuple, list)) else tuple(v)}" for k, v in value.items())
    if is_dataclass(value) and not isinstance(value, type) and type(value).__str__ is object.__str__:
        # e.g. a launch configuration: its fields, leaving out zeros ("grid=(64, 1, 1) block=(256, 1, 1)")
        shown = {f.name: getattr(value, f.name) for f in fields(value)}
        return " ".join(
            f"{k}={'×'.join(str(d) for d in v) if isinstance(v, tuple) else v}"
            for k, v in shown.items() if v not in (0, None, "", ())
        )
    name = getattr(value, "name", None)
    if isinstance(name, str):
        return name
    return str(value)


def _micros(obj: Any) -> float | None:
    us = _attr(obj, ("estimated_us", "est_us", "estimate_us", "time_us"))
    if us is not None:
        return float(us)
    seconds = _attr(obj, ("estimated_time", "est_time", "estimated_seconds", "seconds", "cost", "estimate"))
    if not isinstance(seconds, (int, float)):
        seconds = getattr(seconds, "seconds", None)  # an Estimate object
    return float(seconds) * 1e6 if isinstance(seconds, (int, float)) else None


def _measured(obj: Any) -> float | None:
    us = _attr(obj, ("measured_us",))
    if us is not None:
        return float(us)
    seconds = _attr(obj, ("measured_time", "measured_seconds"))
    return float(seconds) * 1e6 if isinstance(seconds, (int, float)) else None


def _kind(node: Any) -> str:
    if node.op in ("input", "const"):
        return node.op
    try:
        return str(node.kind.value)
    except AttributeError:
        return "elementwise"


def _fmt_const(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _label(node: Any, folded: list[Any]) -> str:
    op = node.op
    if op == "input":
        return "input"
    if op == "const":
        return _fmt_const(node.attr("value"))
    axes = node.attr("axes") if hasattr(node, "attr") else None
    label = op
    if axes is not None and _kind(node) == "reduce":
        label += f" axis={','.join(str(a) for a in axes)}" if isinstance(axes, tuple) else f" axis={axes}"
    elif op == "astype":
        label += f" {node.dtype}"
    elif hasattr(node, "attr") and node.attr("fast_math"):  # (built under sl.fast_math)
        label += " (fast math)"
    if folded:
        label += " (" + ", ".join(_fmt_const(_const_value(c)) for c in folded) + ")"
    return label


def _const_value(node: Any) -> Any:
    """The value of a constant, looking through the reshapes/broadcasts/casts applied to it."""
    while node.op != "const":
        node = node.inputs[0]
    return node.attr("value")


def _constant_nodes(ordered: Sequence[Any]) -> set[int]:
    """ids of constants and of layout/broadcast/cast nodes over nothing but constants.

    They are not drawn: their value is folded into the label of the node that uses them
    (``add (1e-05)``), which keeps the picture about the data flow.
    """
    folded: set[int] = set()
    for n in ordered:  # inputs first
        if n.op == "const":
            folded.add(id(n))
        elif (
            n.op in ("reshape", "broadcast", "astype", "transpose", "slice", "pad")
            and len(n.inputs) == 1
            and id(n.inputs[0]) in folded
        ):
            folded.add(id(n))
    return folded


def _nodes_and_edges(
    ordered: Sequence[Any],
    outputs: Sequence[Any],
    kernel_of: Mapping[int, int],
    scheme_of: Mapping[tuple[int, int], str],
) -> tuple[tuple[NodeView, ...], tuple[EdgeView, ...]]:
    """Views of ``ordered`` (inputs first). Constants are folded into their users' labels."""
    out_ids = {id(o) for o in outputs}
    constant = _constant_nodes(ordered) - out_ids
    keep = [n for n in ordered if id(n) not in constant]
    ids = {id(n): i for i, n in enumerate(keep)}
    nodes, edges = [], []
    for n in keep:
        folded = [i for i in getattr(n, "inputs", ()) if id(i) in constant]
        nodes.append(
            NodeView(
                id=ids[id(n)],
                op=n.op,
                label=_label(n, folded),
                shape=tuple(n.shape),
                dtype=str(n.dtype),
                kernel=kernel_of.get(id(n)),
                kind=_kind(n),
                output=id(n) in out_ids,
            )
        )
        seen_inputs: set[int] = set()
        for src in getattr(n, "inputs", ()):
            if id(src) not in ids or id(src) in seen_inputs:
                continue
            seen_inputs.add(id(src))
            k_src, k_dst = kernel_of.get(id(src)), kernel_of.get(id(n))
            if k_src is None:
                scheme = LOAD
            elif k_src != k_dst:
                scheme = BETWEEN_KERNELS
            else:
                scheme = scheme_of.get((id(src), id(n)), "register")
            edges.append(EdgeView(ids[id(src)], ids[id(n)], scheme))
    return tuple(nodes), tuple(edges)


# --- public builders ------------------------------------------------------------------------------
def graph_view(*arrays: Any, note: str = "") -> PlanView:
    """A view of the expression graph of lazy ``arrays`` without a plan (nothing is evaluated).

    Args:
        arrays: :class:`stitchlab.LazyArray` objects.
        note: the line to show where kernels would be (default: "not planned").
    """
    from ..ir.graph import build_graph

    built = build_graph([a._node for a in arrays])
    graph = built[0] if isinstance(built, tuple) else built  # (graph, sources) since the IR's 2nd version
    nodes, edges = _nodes_and_edges(graph.nodes, graph.outputs, {}, {})
    return PlanView(nodes, edges, (), planned=False, graph_key=graph.key,
                    note=note or "not planned (the stitching compiler is not available)")


def _inferred_scheme(src: Any, schedule: Any) -> str:
    """Scheme of an edge inside one kernel when the plan does not say (see module docstring)."""
    if _kind(src) != "reduce":
        return "register"
    if schedule is None or schedule == "":
        return FUSED
    family = getattr(schedule, "family", None)
    s = (family if isinstance(family, str) else _text(schedule)).lower()
    if any(word in s for word in ("split", "grid", "global", "barrier")):
        return "global"
    if "warp" in s:
        return "warp"
    if any(word in s for word in ("block", "shared", "col", "full")):
        return "shared"
    return "register"


def _schemes(obj: Any) -> Mapping[Any, Any]:
    value = _attr(obj, ("edge_schemes", "schemes"))
    return value if isinstance(value, Mapping) else {}


def _scheme_name(value: Any) -> str:
    name = _text(value).lower()
    for scheme in SCHEMES:
        if name.startswith(scheme[:4]):
            return scheme
    if name.startswith(("reg", "thread")):
        return "register"
    if name.startswith(("smem", "block")):
        return "shared"
    if name.startswith(("gmem", "grid")):
        return "global"
    return name or "register"


#: Index maps and casts: the planner puts no kernel boundary at them (a kernel evaluates them
#: through index arithmetic wherever a consumer needs them).
FREE_OPS = frozenset({"broadcast", "reshape", "transpose", "slice", "pad", "astype"})


def _assign_free_nodes(ordered: Sequence[Any], kernel_of: dict[int, int]) -> None:
    """Give each free node that no kernel lists the kernel of its first consumer that has one
    (of its producer if none has): that kernel evaluates it."""
    users: dict[int, list[Any]] = {}
    for n in ordered:
        for i in getattr(n, "inputs", ()):
            users.setdefault(id(i), []).append(n)
    for n in reversed(ordered):  # consumers first
        if id(n) in kernel_of or n.op not in FREE_OPS:
            continue
        ks = [kernel_of[id(u)] for u in users.get(id(n), ()) if id(u) in kernel_of]
        if ks:
            kernel_of[id(n)] = min(ks)
    for n in ordered:  # producers first: a free output whose consumers are in no kernel
        if id(n) in kernel_of or n.op not in FREE_OPS:
            continue
        ks = [kernel_of[id(i)] for i in getattr(n, "inputs", ()) if id(i) in kernel_of]
        if ks:
            kernel_of[id(n)] = min(ks)


def _given_schemes(plan: Any, kernels: Sequence[Any], ordered: Sequence[Any]) -> dict[tuple[int, int], str]:
    """Schemes the plan states: ``plan.edges`` (positions into the graph's nodes, with a scheme)
    and ``edge_schemes`` mappings (on the plan or on each kernel) keyed by node pairs."""
    found: dict[tuple[int, int], str] = {}
    for e in _attr(plan, ("edges",), ()) or ():
        src, dst, scheme = getattr(e, "src", None), getattr(e, "dst", None), getattr(e, "scheme", None)
        if isinstance(src, int) and isinstance(dst, int) and scheme is not None and max(src, dst) < len(ordered):
            found[(id(ordered[src]), id(ordered[dst]))] = _scheme_name(scheme)
    for owner in (plan, *kernels):
        for pair, scheme in _schemes(owner).items():
            if isinstance(pair, tuple) and len(pair) == 2:
                found[(id(pair[0]), id(pair[1]))] = _scheme_name(scheme)
    return found


def _kernel_nodes(kernel: Any) -> list[Any]:
    nodes = _attr(kernel, ("nodes", "ops", "members"), ())
    return list(nodes)


def plan_view(plan: Any, *, registry_keys: set[str] | None = None, _candidates: bool = True) -> PlanView:
    """A view of a compiler plan (``sl.explain(...)``'s result); reads only, evaluates nothing.

    Args:
        plan: the plan (see the module docstring for what is read).
        registry_keys: keys the registry holds, to say whether each kernel is cached when the
            plan does not say it itself (None: ask the default registry, if it is available).
    """
    kernels_in = list(_attr(plan, ("kernels",), ()))
    graph = _attr(plan, ("graph",))
    outputs = list(_attr(plan, ("outputs",), ()) or (getattr(graph, "outputs", ()) if graph is not None else ()))

    kernel_of: dict[int, int] = {}
    members: list[list[Any]] = []
    for k, kernel in enumerate(kernels_in):
        nodes = _kernel_nodes(kernel)
        members.append(nodes)
        for n in nodes:
            kernel_of.setdefault(id(n), k)

    if graph is not None and getattr(graph, "nodes", None):
        ordered = list(graph.nodes)
    else:
        ordered = postorder([n for group in members for n in group] + outputs)
    _assign_free_nodes(ordered, kernel_of)
    if not outputs:
        used = {id(i) for n in ordered for i in getattr(n, "inputs", ())}
        outputs = [n for n in ordered if id(n) not in used]

    scheme_of = _given_schemes(plan, kernels_in, ordered)
    schedules = [_attr(kernel, ("schedule",)) for kernel in kernels_in]
    for n in ordered:  # edges the plan says nothing about: inferred from the kernel's schedule
        k = kernel_of.get(id(n))
        if k is None:
            continue
        for src in getattr(n, "inputs", ()):
            if kernel_of.get(id(src)) == k and (id(src), id(n)) not in scheme_of:
                scheme_of[(id(src), id(n))] = _inferred_scheme(src, schedules[k])

    nodes, edges = _nodes_and_edges(ordered, outputs, kernel_of, scheme_of)
    constant = _constant_nodes(ordered) - {id(o) for o in outputs}
    ids = {id(n): i for i, n in enumerate(n for n in ordered if id(n) not in constant)}

    keys_held = registry_keys
    kernels = []
    for k, kernel in enumerate(kernels_in):
        key = _attr(kernel, ("key", "registry_key")) or _computed_key(kernel, plan)
        cached = _attr(kernel, ("cached", "is_cached"))
        if cached is None and key is not None:
            if keys_held is None:
                keys_held = _registry_keys()
            cached = (key in keys_held) if keys_held is not None else None
        kernels.append(
            KernelView(
                index=k,
                name=str(_attr(kernel, ("name",), f"kernel_{k}")),
                schedule=_text(_attr(kernel, ("schedule",))),
                launch=_text(_attr(kernel, ("launch",))),
                nodes=tuple(ids[id(n)] for n in ordered if kernel_of.get(id(n)) == k and id(n) in ids),
                source=str(_attr(kernel, ("source",), "") or ""),
                estimated_us=_micros(kernel),
                measured_us=_measured(kernel),
                key=str(key) if key is not None else None,
                cached=bool(cached) if cached is not None else None,
            )
        )

    graph_key = _attr(plan, ("key", "graph_key")) or (getattr(graph, "key", "") if graph is not None else "")
    candidates: tuple[CandidateView, ...] = ()
    if _candidates:
        candidates = tuple(_candidate_views(plan, kernels))
    return PlanView(nodes, edges, tuple(kernels), planned=True, graph_key=str(graph_key or ""),
                    candidates=candidates)


@dataclass
class _GroupKernel:
    name: str
    nodes: list[Any]


@dataclass
class _GroupsPlan:
    """A candidate given as groups of node ids, made drawable (kernels over the plan's graph)."""

    kernels: list[_GroupKernel]
    graph: Any
    key: str


def _drawable(cand: Any, graph: Any, key: str) -> Any:
    ks = _attr(cand, ("kernels",))
    if isinstance(ks, (list, tuple)):
        return cand
    groups = _attr(cand, ("groups",), ())
    by_id = {id(n): n for n in getattr(graph, "nodes", ())}
    kernels = []
    for i, g in enumerate(groups):
        nodes = [by_id[m] if isinstance(m, int) else m for m in g if not isinstance(m, int) or m in by_id]
        nodes.sort(key=lambda n: graph.nodes.index(n) if graph is not None and n in graph.nodes else 0)
        kernels.append(_GroupKernel(f"group {i}", nodes))
    return _GroupsPlan(kernels, graph, key)


def _group_sets(obj: Any) -> frozenset[frozenset[int]] | None:
    """The groups of a plan or candidate as sets of node ids (to find the candidate a plan used)."""
    ks = _attr(obj, ("kernels",))
    if isinstance(ks, (list, tuple)):  # a packed kernel (several groups in one launch) counts its parts
        groups = [_kernel_nodes(p) for k in ks for p in (getattr(k, "parts", None) or [k])]
    else:
        groups = list(_attr(obj, ("groups",), ()) or ())
    if not groups:
        return None
    return frozenset(frozenset(m if isinstance(m, int) else id(m) for m in g) for g in groups)


def _kernel_count(cand: Any) -> int:
    ks = _attr(cand, ("kernels",))
    if isinstance(ks, int) and not isinstance(ks, bool):
        return ks
    if isinstance(ks, (list, tuple)):
        return len(ks)
    return len(list(_attr(cand, ("groups",), ())))


def _candidate_views(plan: Any, kernels: Sequence[KernelView]) -> list[CandidateView]:
    found = list(_attr(plan, ("candidates",), ()) or ())
    graph = _attr(plan, ("graph",))
    key = str(_attr(plan, ("key", "graph_key")) or getattr(graph, "key", "") or "")
    chosen_obj = _attr(plan, ("chosen", "choice", "candidate"))
    used = _group_sets(plan) if chosen_obj is None else None
    views = []
    for i, cand in enumerate(found):
        est = _micros(cand)
        ks = _attr(cand, ("kernels",))
        if est is None and isinstance(ks, (list, tuple)) and ks and all(_micros(k) is not None for k in ks):
            est = sum(_micros(k) for k in ks)  # type: ignore[misc]
        if isinstance(chosen_obj, int) and not isinstance(chosen_obj, bool):
            chosen = i == chosen_obj
        else:
            chosen = cand is plan or (chosen_obj is not None and cand is chosen_obj) or (
                chosen_obj is None and used is not None and _group_sets(cand) == used
            )
        label = str(_attr(cand, ("label", "name"), "") or f"#{i}")
        views.append(CandidateView(i, label, _kernel_count(cand), est, _measured(cand), chosen,
                                   plan if chosen else _drawable(cand, graph, key)))
    if views and not any(v.chosen for v in views):
        # the plan is not itself in the list: mark the candidate with the same kernel count and estimate
        est = sum(k.estimated_us or 0.0 for k in kernels)
        for j, v in enumerate(views):
            if v.kernels == len(kernels) and (v.estimated_us is None or abs(v.estimated_us - est) <= 1e-6 * max(1.0, est)):
                views[j] = CandidateView(v.index, v.label, v.kernels, v.estimated_us, v.measured_us, True, plan)
                break
        else:  # estimates from another evaluator: the first candidate with as many kernels
            for j, v in enumerate(views):
                if v.kernels == len(kernels):
                    views[j] = CandidateView(v.index, v.label, v.kernels, v.estimated_us, v.measured_us, True, plan)
                    break
    return views


def _computed_key(kernel: Any, plan: Any) -> str | None:
    """The registry key the runtime would use for ``kernel`` (before it has compiled or found
    it), from the runtime's own key components; None where that is not possible."""
    arch = getattr(_attr(plan, ("device",)), "arch", None)
    if not arch or not _attr(kernel, ("source",)):
        return None
    try:
        from stitchlab.runtime.kernels import components, key_of

        return str(key_of(components(kernel, arch)))
    except Exception:  # no NVRTC to ask for its version, an interpreted step, ...
        return None


def _registry_keys() -> set[str] | None:
    try:
        from stitchlab.registry import default_registry

        return {e["key"] for e in default_registry().entries()}
    except Exception:  # a registry that cannot be read must not break a repr
        return None


def explain_or_graph(*arrays: Any) -> PlanView:
    """``plan_view(sl.explain(*arrays))`` where the compiler is available, else :func:`graph_view`.

    A planner error is shown as the view's note instead of raising (reprs must not raise).
    """
    import stitchlab

    explain = getattr(stitchlab, "explain", None)
    if explain is None:
        return graph_view(*arrays)
    try:
        plan = explain(*arrays)
    except Exception as error:  # shown, not raised: this runs inside reprs
        return graph_view(*arrays, note=f"not planned: {type(error).__name__}: {error}")
    return plan_view(plan)
