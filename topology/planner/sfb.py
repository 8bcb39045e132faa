"""SFB placement for the planner: the compression engineer's 0-1 integer program
(:func:`stitchlab.compression.placement.place_sfb`, ``scipy.optimize.milp``) fed with numbers
taken from the topology.

For the chosen ranks the planner supplies

* each candidate linear layer's :func:`stitchlab.compression.cost.sfb_cost` at the step's total
  tokens (tokens per sample × global batch);
* the effective α (latency) and bandwidth of a ring over these ranks on this topology, fitted to
  :func:`stitchlab.topology.collectives.ring_allreduce` (bottleneck-link aware, contention
  included);
* the rebuild rate of the slowest rank (all ranks rebuild the full gradient);
* the memory budget: what the tightest rank has left after weights, gradients, optimizer state,
  its activations, the largest fusion bucket and the sparse buffers.

The program's answer uses a model in which all communication is on the critical path; the
planner's polish afterwards checks each chosen layer in the simulator, within the search budget,
and drops those that do not help there (:func:`stitchlab.topology.planner.search.without_layer`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .. import collectives

if TYPE_CHECKING:
    from .space import SearchSpace


def ring_alpha_bandwidth(space: SearchSpace, devices: Sequence[str]) -> tuple[float, float]:
    """(latency per message, bytes/s per rank) of a ring over ``devices`` on the topology."""
    p = len(devices)
    t0 = collectives.ring_allreduce(0.0, space.topo, list(devices))
    n = 1e9
    t1 = collectives.ring_allreduce(n, space.topo, list(devices))
    alpha = t0 / (2 * (p - 1))
    beta = (t1 - t0) / (2 * (p - 1) / p * n)
    return alpha, 1.0 / max(beta, 1e-30)


def memory_budget(space: SearchSpace, devices: Sequence[str], shares: Sequence[int],
                  extra_buffers: float = 0.0) -> float:
    """Bytes SFB may hold on every rank: the least any rank has left."""
    left = []
    for d, b in zip(devices, shares, strict=True):
        used = space.static_bytes + space.act_per_sample * b + space.fusion_reserve + extra_buffers
        left.append(space.topo.device(d).memory * 0.95 - used)
    return max(0.0, min(left))


def place(space: SearchSpace, devices: Sequence[str], shares: Sequence[int],
          extra_buffers: float = 0.0) -> list[str]:
    """Layers to put under SFB for these ranks and shares (sorted names; ``[]`` for one rank)."""
    from stitchlab.compression.cost import sfb_cost
    from stitchlab.compression.placement import place_sfb

    p = len(devices)
    if p < 2:
        return []
    prof = space.profile
    total = float(sum(shares))
    candidates = {}
    for ln in space.sfb_candidates():
        tokens = (ln.tokens or 0) * total / prof.batch_size
        bias = any(len(pp.shape) == 1 for pp in ln.params)
        candidates[ln.name] = sfb_cost(ln.in_features or 1, ln.out_features or 1, round(tokens),
                                       p, bias=bias, itemsize=ln.itemsize)
    if not candidates:
        return []
    alpha, bandwidth = ring_alpha_bandwidth(space, devices)
    flops = min(space.topo.device(d).flops for d in devices)
    budget = memory_budget(space, devices, shares, extra_buffers)
    return place_sfb(candidates, budget, bandwidth, flops, alpha)
