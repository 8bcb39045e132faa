"""Where to apply SFB: a 0-1 integer program over the layers (extra compute vs. traffic saved).

Each candidate layer ``i`` has a time saved per step ``s_i`` (traffic saved over the bandwidth,
minus the extra rebuild arithmetic over the compute rate, from :mod:`.cost`) and an extra memory
``m_i`` (the held and gathered factors). The program

    maximize  Σ s_i·x_i   subject to   Σ m_i·x_i ≤ budget,   x_i ∈ {0, 1}

is solved exactly with ``scipy.optimize.milp`` (HiGHS, asked for no optimality gap: a choice
may fall short of the best only by the solver's tolerance, 1e-6 of the largest ``s_i``). Layers
with ``s_i ≤ 0`` are never chosen.

Example:
    >>> from stitchlab.compression.cost import sfb_cost
    >>> c = {"fc1": sfb_cost(4096, 4096, 64, 2), "fc2": sfb_cost(64, 64, 4096, 2)}
    >>> place_sfb(c, memory_budget_bytes=1e9, bandwidth_bytes_per_s=1e9, flops_per_s=1e12)
    ['fc1']
"""

from __future__ import annotations

from collections.abc import Mapping

from .cost import SchemeCost


def place_sfb(
    candidates: Mapping[str, SchemeCost],
    memory_budget_bytes: float,
    bandwidth_bytes_per_s: float,
    flops_per_s: float,
    latency_s: float = 0.0,
    op_overhead_s: float = 0.0,
    gather_overhead_s: float | None = None,
) -> list[str]:
    """Choose the layers to apply SFB to under a memory budget.

    Each layer's saving is :meth:`.cost.SchemeCost.time_saved` with the same rates (the planner
    in ``stitchlab.horovod`` ranks layers by that very number). The fixed cost a step pays once
    for all-gathering at all is shared with sparse layers, so the caller weighs it against the
    chosen layers' total with :func:`.cost.gathering_pays`.

    Args:
        candidates: layer name -> its SFB :class:`SchemeCost` (from :func:`.cost.sfb_cost`).
        memory_budget_bytes: extra memory SFB may hold in total, per rank.
        bandwidth_bytes_per_s: per-rank link bandwidth.
        flops_per_s: arithmetic rate of the rebuild.
        latency_s: latency of one message.
        op_overhead_s: fixed cost of one more collective operation.
        gather_overhead_s: measured fixed cost one SFB layer adds to a step (replaces the
            ``op_overhead_s`` estimate; ``None``: not measured).

    Returns:
        The chosen layer names, sorted.
    """
    if not memory_budget_bytes >= 0:
        raise ValueError(f"memory_budget_bytes must be non-negative, got {memory_budget_bytes!r}")
    names, saved, memory = [], [], []
    for name, cost in candidates.items():
        if cost.scheme != "sfb":
            raise ValueError(f"candidate {name!r} has scheme {cost.scheme!r}; expected 'sfb'")
        s = cost.time_saved(
            bandwidth_bytes_per_s, flops_per_s, latency_s, op_overhead_s, gather_overhead_s
        )
        if s > 0:
            names.append(name)
            saved.append(s)
            memory.append(cost.extra_memory_bytes)
    if not names:
        return []
    if sum(memory) <= memory_budget_bytes:
        return sorted(names)

    import numpy as np
    from scipy.optimize import Bounds, LinearConstraint, milp

    # HiGHS stops at a relative gap of 1e-4 and an absolute one of 1e-6 by default: with savings
    # in seconds (often 1e-6 to 1e-4 per layer) any choice would pass as optimal. Scale the
    # largest saving to 1 and ask for no gap.
    result = milp(
        c=-np.asarray(saved) / max(saved),
        constraints=LinearConstraint(np.asarray([memory]), -np.inf, memory_budget_bytes),
        integrality=np.ones(len(names)),
        bounds=Bounds(0, 1),
        options={"mip_rel_gap": 0.0},
    )
    if not result.success:  # cannot happen for a feasible knapsack (x = 0 fits); be loud anyway
        raise RuntimeError(f"SFB placement integer program failed: {result.message}")
    return sorted(n for n, x in zip(names, result.x, strict=True) if x > 0.5)
