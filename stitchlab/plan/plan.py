"""The plan: what ``sl.explain`` returns and what the cupy backend executes.

Plain dataclasses, meant to be read by people and by notebook views:

* :class:`Plan` — the kernels in launch order, the outputs that need no kernel (views), the
  candidate plans the search weighed, and every edge of the graph with its stitching scheme;
* :class:`KernelPlan` — one kernel: name, CUDA C source, schedule, launch dimensions, the nodes it
  covers (:class:`PlanNode`), its internal edges (:class:`PlanEdge`) and its estimated time.

Stitching schemes of an edge (DESIGN.md §2.2): ``"register"`` (same thread), ``"warp"`` (warp
shuffles), ``"shared"`` (shared memory within a block), ``"global"`` (global memory: between
kernels, or the partial results of a row split over blocks).
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import Any

from ..ir.graph import Graph
from ..ir.node import Node
from .cost import Launch, Schedule
from .device import DeviceProfile
from .groups import GroupInfo


@dataclass(frozen=True)
class PlanNode:
    """A graph node as a kernel sees it.

    Attributes:
        index: position in ``plan.graph.nodes``.
        op: op name.
        shape: static shape.
        dtype: dtype name.
        level: "full" (one value per domain element), "row" (one per kept index of a reduction),
            "other" (read through an index map), or "input" (a buffer the kernel loads).
    """

    index: int
    op: str
    shape: tuple[int, ...]
    dtype: str
    level: str


@dataclass(frozen=True)
class PlanEdge:
    """An edge ``src -> dst`` (graph node positions) and how the value travels along it."""

    src: int
    dst: int
    scheme: str
    kernel: str | None = None  # the kernel the edge lies in; None between kernels


@dataclass
class CandidatePlan:
    """A complete plan the search considered: each group as the list of IR nodes it computes."""

    label: str
    groups: list[list[Node]]
    estimated_time: float

    @property
    def kernels(self) -> int:
        return len(self.groups)


@dataclass
class KernelPlan:
    """One kernel of a plan.

    Attributes:
        name: the kernel's name in its source.
        source: CUDA C source (preamble included); empty for an "interpreted" step.
        schedule: the schedule family and its parameters.
        launch: grid, block and shared memory for this graph's sizes.
        nodes: the IR nodes the kernel computes (its group), in graph order.
        node_info: every node the kernel evaluates (members, index maps, inputs it loads) with
            its graph position and level.
        members: graph positions of ``nodes``.
        inputs: positions of the buffers it reads; outputs: positions of the nodes it stores.
        edges: edges inside the kernel with their stitching scheme.
        edge_schemes: the same as ``{(producer node, consumer node): scheme}``.
        estimated_time: the latency evaluator's estimate in seconds.
        key: the kernel's registry key once the runtime has compiled or found it.
        parts: for a "packed" kernel, the pointwise kernels it launches together (their
            ``info`` and ``launch`` say what each part computes and how many blocks it takes).
        params: the kernel's parameters (for the runtime).
        info: the planner's :class:`GroupInfo` (None for a packed kernel: see ``parts``).
        error: why code generation failed (the runtime then runs the group unfused).
    """

    name: str
    source: str
    schedule: Schedule
    launch: Launch
    nodes: list[Node]
    node_info: list[PlanNode]
    members: list[int]
    inputs: list[int]
    outputs: list[int]
    edges: list[PlanEdge]
    estimated_time: float
    edge_schemes: dict[tuple[Node, Node], str] = field(default_factory=dict, repr=False)
    params: tuple[Any, ...] = ()
    info: GroupInfo | None = field(default=None, repr=False)
    error: str | None = None
    key: str | None = None
    parts: list[KernelPlan] = field(default_factory=list, repr=False)

    def __repr__(self) -> str:
        return f"KernelPlan({self.name}, {self.schedule}, grid={self.launch.grid}, block={self.launch.block}, {len(self.members)} nodes, ~{self.estimated_time * 1e6:.1f} µs)"


@dataclass
class Plan:
    """A planned graph (see the module docstring).

    Attributes:
        graph: the canonical graph.
        device: the profile it was planned for.
        kernels: the kernels in launch order.
        views: graph output position -> position of the node whose buffer it reshapes (no kernel).
        candidates: the plans the search considered (the greedy one among them).
        edges: every edge of the graph with its scheme.
        estimated_time: sum of the kernels' estimates in seconds.
    """

    graph: Graph
    device: DeviceProfile
    kernels: list[KernelPlan]
    views: dict[int, int]
    candidates: list[CandidatePlan]
    edges: list[PlanEdge]

    @property
    def estimated_time(self) -> float:
        return sum(k.estimated_time for k in self.kernels)

    def summary(self) -> str:
        """A few lines of text: one per kernel."""
        lines = [f"Plan for {self.device.name}: {len(self.kernels)} kernel(s), ~{self.estimated_time * 1e6:.1f} µs"]
        for k in self.kernels:
            ops = ", ".join(n.op + (" (fast math)" if n.attr("fast_math") else "") for n in k.nodes)
            lines.append(f"  {k.name}: {k.schedule} grid={k.launch.grid} block={k.launch.block} [{ops}]")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.summary()

    def _repr_html_(self) -> str:
        """The plan picture, kernel table, sources and candidates (``stitchlab.notebook``)."""
        try:
            from ..notebook.html import plan_html
        except ImportError:
            return self._table_html()
        return plan_html(self)

    def _table_html(self) -> str:
        rows = "".join(
            f"<tr><td>{html.escape(k.name)}</td><td>{html.escape(str(k.schedule))}</td>"
            f"<td>{len(k.members)}</td><td>{k.estimated_time * 1e6:.1f} µs</td></tr>"
            for k in self.kernels
        )
        return (f"<table><tr><th>kernel</th><th>schedule</th><th>nodes</th><th>estimate</th></tr>{rows}</table>")
