"""A stand-in plan with the compiler's ``Plan`` shape, so the views are tested on their own."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

import stitchlab as sl
from stitchlab.ir.graph import build_graph


@dataclass
class FakeKernel:
    name: str
    nodes: list[Any]
    schedule: str = "row_reduce_warp"
    launch: dict[str, Any] = field(default_factory=lambda: {"grid": (4,), "block": (128,)})
    source: str = 'extern "C" __global__ void k(const float* x, float* y) { /* a < b && c > d */ }'
    estimated_us: float | None = 12.5
    key: str | None = None
    cached: bool | None = None


@dataclass
class FakePlan:
    kernels: list[FakeKernel]
    graph: Any
    key: str
    candidates: list[Any] = field(default_factory=list)
    label: str = ""

    def _repr_html_(self) -> str:
        from stitchlab.notebook import plan_html

        return plan_html(self)


def fake_plan(*arrays: Any, split_after_reduce: int | None = None, name: str = "fused") -> FakePlan:
    """All computing nodes in one kernel, or two: the nodes up to the ``split_after_reduce``-th
    reduction (in graph order) in the first, the rest in the second."""
    built = build_graph([a._node for a in arrays])
    graph = built[0] if isinstance(built, tuple) else built
    work = [n for n in graph.nodes if n.op not in ("input", "const")]
    if split_after_reduce is None:
        groups = [work]
    else:
        reduces = [i for i, n in enumerate(work) if n.kind.value == "reduce"]
        cut = reduces[split_after_reduce] + 1
        groups = [work[:cut], work[cut:]]
    kernels = [FakeKernel(f"{name}_{i}", g) for i, g in enumerate(groups) if g]
    return FakePlan(kernels, graph, graph.key)


def softmax(x: Any) -> Any:
    y = sl.exp(x - x.max(axis=-1, keepdims=True))
    return y / y.sum(axis=-1, keepdims=True)


@pytest.fixture
def x() -> Any:
    return sl.asarray(np.arange(32, dtype=np.float32).reshape(4, 8))


@pytest.fixture(autouse=True)
def _no_overrides() -> Any:
    from stitchlab.notebook import clear_plan_overrides

    clear_plan_overrides()
    yield
    clear_plan_overrides()
