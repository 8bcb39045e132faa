"""α-β cost models of collectives, closed form or on a :class:`DeviceTopology`.

Each function takes the message size in bytes and either

* an ``int`` number of ranks ``p`` together with ``alpha`` (seconds per message) and ``beta``
  (seconds per byte) — the textbook closed forms below; or
* a :class:`DeviceTopology` (and optionally the ordered device ids taking part, default all): α
  and β of every step then come from the links each step's concurrent flows cross. Flows sharing
  a directed link split its bandwidth and the slowest flow sets the step (bottleneck-link aware).

Closed forms (n bytes, p ranks)::

    ring all-reduce       2(p-1)·α + 2(p-1)/p · n·β
    reduce-scatter        (p-1)·α + (p-1)/p · n·β
    all-gather (equal)    (p-1)·α + (p-1)/p · n·β        n = total gathered bytes
    all-gather (sizes s)  ring with step dependencies; equal sizes give (p-1)(α + s·β)
    tree all-reduce       2·⌈log2 p⌉·(α + n·β)           binomial reduce, then broadcast
    hierarchical          RS inside groups of k, all-reduce of n/k across the h = p/k groups
                          (k rings in parallel), all-gather inside:
                          2[(k-1)·α_in + (k-1)/k·n·β_in] + 2(h-1)·α_out + 2(h-1)/h·(n/k)·β_out

Reduction arithmetic (γ) is not modelled: it is small next to the link time on the systems we
target. Results for a topology are cached on it per device list, so repeated calls (the simulator,
the planner) cost a dict lookup and a few multiplications.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from .devices import DeviceTopology
from .errors import TopologyError


@dataclass(frozen=True)
class AlphaBeta:
    """Cost of one message of ``n`` bytes: ``alpha + n * beta`` seconds."""

    alpha: float
    beta: float

    def __post_init__(self) -> None:
        if self.alpha < 0 or self.beta < 0:
            raise TopologyError(f"alpha={self.alpha!r} and beta={self.beta!r} must be >= 0")

    @property
    def bandwidth(self) -> float:
        return math.inf if self.beta == 0 else 1.0 / self.beta


Where = int | DeviceTopology


def _closed(where: int, alpha: float | None, beta: float | None, fn: str) -> tuple[int, AlphaBeta]:
    if isinstance(where, bool) or not isinstance(where, int) or where < 1:
        raise TopologyError(f"{fn}: number of ranks {where!r} must be a positive int")
    if alpha is None or beta is None:
        raise TopologyError(
            f"{fn}({where} ranks) needs alpha= and beta= (or pass a DeviceTopology instead)"
        )
    return where, AlphaBeta(alpha, beta)


def _devices(topo: DeviceTopology, devices: Sequence[str] | None) -> tuple[str, ...]:
    devs = tuple(topo.ids if devices is None else devices)
    for d in devs:
        topo.device(d)
    if len(set(devs)) != len(devs):
        raise TopologyError(f"device list {list(devs)} names a device twice")
    return devs


def rings_step(topo: DeviceTopology, rings: tuple[tuple[str, ...], ...]) -> list[list[AlphaBeta]]:
    """Per-edge α-β of several rings whose steps run concurrently (edge ``i`` goes from
    ``ring[i]`` to ``ring[i+1]``); shared links split their bandwidth among the flows."""
    key = ("rings", rings)
    hit = topo.cache.get(key)
    if hit is not None:
        return hit
    flows = [(r[i], r[(i + 1) % len(r)]) for r in rings if len(r) > 1 for i in range(len(r))]
    rates = iter(topo.flow_rates(flows))
    out = []
    for r in rings:
        edges = []
        if len(r) > 1:
            for _ in r:
                lat, bw = next(rates)
                edges.append(AlphaBeta(lat, 1.0 / bw))
        out.append(edges)
    topo.cache[key] = out
    return out


def _worst(edges: list[AlphaBeta]) -> AlphaBeta:
    """α and β of a lock-step ring: its slowest edge (max latency, max seconds per byte)."""
    if not edges:
        return AlphaBeta(0.0, 0.0)
    return AlphaBeta(max(e.alpha for e in edges), max(e.beta for e in edges))


def ring_allreduce(
    nbytes: float, where: Where, devices: Sequence[str] | None = None, *,
    alpha: float | None = None, beta: float | None = None,
) -> float:
    """Seconds for a ring all-reduce of ``nbytes`` (reduce-scatter then all-gather).

    Example:
        >>> ring_allreduce(1e6, 4, alpha=1e-5, beta=1e-9)   # 6·1e-5 + 1.5e6·1e-9
        0.00156
    """
    if isinstance(where, DeviceTopology):
        devs = _devices(where, devices)
        p, ab = len(devs), _worst(rings_step(where, (devs,))[0])
    else:
        p, ab = _closed(where, alpha, beta, "ring_allreduce")
    if p == 1:
        return 0.0
    return 2 * (p - 1) * ab.alpha + 2 * (p - 1) / p * nbytes * ab.beta


def reduce_scatter(
    nbytes: float, where: Where, devices: Sequence[str] | None = None, *,
    alpha: float | None = None, beta: float | None = None,
) -> float:
    """Seconds for a ring reduce-scatter of ``nbytes`` (each rank ends with ``nbytes/p``)."""
    return ring_allreduce(nbytes, where, devices, alpha=alpha, beta=beta) / 2


def _tree_levels(devs: tuple[str, ...]) -> list[list[tuple[str, str]]]:
    """Binomial-tree levels (child, parent) pairs, leaves first."""
    p, levels, step = len(devs), [], 1
    while step < p:
        levels.append([(devs[i + step], devs[i]) for i in range(0, p - step, 2 * step)])
        step *= 2
    return levels


def tree_allreduce(
    nbytes: float, where: Where, devices: Sequence[str] | None = None, *,
    alpha: float | None = None, beta: float | None = None,
) -> float:
    """Seconds for a binomial-tree reduce to rank 0 followed by a broadcast (not pipelined).

    Example:
        >>> tree_allreduce(1e6, 4, alpha=1e-5, beta=1e-9)   # 2·2·(1e-5 + 1e-3)
        0.00404
    """
    if not isinstance(where, DeviceTopology):
        p, ab = _closed(where, alpha, beta, "tree_allreduce")
        return 2 * math.ceil(math.log2(p)) * (ab.alpha + nbytes * ab.beta) if p > 1 else 0.0
    devs = _devices(where, devices)
    key = ("tree", devs)
    levels = where.cache.get(key)
    if levels is None:
        levels = []
        for pairs in _tree_levels(devs):
            up = where.flow_rates(pairs)
            down = where.flow_rates([(b, a) for a, b in pairs])
            levels.append((up, down))
        where.cache[key] = levels
    total = 0.0
    for up, down in levels:
        total += max(lat + nbytes / bw for lat, bw in up)
        total += max(lat + nbytes / bw for lat, bw in down)
    return total


def allgather(
    sizes: Sequence[float], where: Where | None = None, devices: Sequence[str] | None = None, *,
    alpha: float | None = None, beta: float | None = None,
) -> float:
    """Seconds for a ring all-gather where rank ``i`` contributes ``sizes[i]`` bytes.

    Rank ``i`` forwards one block per step to rank ``i+1`` and can forward a block only after it
    has received it, so a step starts when both its own previous send and its predecessor's are
    done. With equal sizes ``s`` this is ``(p-1)(α + s·β)``; with uneven sizes a large block
    delays the steps it travels through, which Horovod's and Gloo's all-gather-v also suffer.

    Example:
        >>> allgather([1e6, 1e6, 1e6, 1e6], 4, alpha=1e-5, beta=1e-9)   # 3·(1e-5 + 1e-3)
        0.00303
    """
    sizes = [float(s) for s in sizes]
    p = len(sizes)
    if where is None:
        where = p
    if isinstance(where, DeviceTopology):
        devs = _devices(where, devices)
        if len(devs) != p:
            raise TopologyError(f"allgather got {p} sizes for {len(devs)} devices {list(devs)}")
        edges = rings_step(where, (devs,))[0]
    else:
        if where != p:
            raise TopologyError(f"allgather got {p} sizes {sizes} for {where} ranks")
        _, ab = _closed(where, alpha, beta, "allgather")
        edges = [ab] * p
    if p <= 1:
        return 0.0
    if min(sizes) == max(sizes):
        return (p - 1) * max(e.alpha + sizes[0] * e.beta for e in edges)
    return _ring_gather_uneven(sizes, edges)


_UNEVEN_CACHE: dict[tuple, float] = {}


def _ring_gather_uneven(sizes: list[float], edges: list[AlphaBeta]) -> float:
    """The step-dependency recursion of :func:`allgather`: a longest path through the
    (rank, step) grid, O(p²); vectorized with numpy for large p and memoized."""
    key = (tuple(sizes), tuple(edges))
    hit = _UNEVEN_CACHE.get(key)
    if hit is not None:
        return hit
    p = len(sizes)
    if p > 8:
        import numpy as np

        s = np.asarray(sizes)
        a = np.asarray([e.alpha for e in edges])
        b = np.asarray([e.beta for e in edges])
        ranks = np.arange(p)
        steps = np.arange(1, p)[:, None]
        cost = a + s[(ranks - steps + 1) % p] * b  # cost[k-1, i]: rank i's send at step k
        prev = np.roll(ranks, 1)
        end = cost[0].copy()
        for k in range(1, p - 1):
            end = np.maximum(end, end[prev]) + cost[k]
        result = float(end.max())
    else:
        end = [0.0] * p
        for k in range(1, p):
            last = end
            end = [
                (last[i] if k == 1 else max(last[i], last[i - 1]))
                + edges[i].alpha + sizes[(i - k + 1) % p] * edges[i].beta
                for i in range(p)
            ]
        result = max(end)
    if len(_UNEVEN_CACHE) > 4096:
        _UNEVEN_CACHE.clear()
    _UNEVEN_CACHE[key] = result
    return result


def _groups_by_host(topo: DeviceTopology, devs: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    groups: dict[str, list[str]] = {}
    for d in devs:
        groups.setdefault(topo.device(d).host, []).append(d)
    return tuple(tuple(g) for g in groups.values())


def hierarchical_allreduce(
    nbytes: float, where: Where, groups: Sequence[Sequence[str]] | None = None, *,
    local_size: int | None = None, intra: AlphaBeta | None = None,
    inter: AlphaBeta | None = None,
) -> float:
    """Seconds for a hierarchical all-reduce: reduce-scatter inside each group, all-reduce across
    groups, all-gather inside each group.

    On a topology, ``groups`` are lists of device ids (default: the devices of each host). With
    equal group sizes ``k`` the cross-group phase runs ``k`` rings in parallel, one per local
    rank, each on ``n/k`` bytes (they contend for shared network cards). With unequal groups the
    group leaders (first device of each group) all-reduce the whole message and the other members
    reach them by a reduce-scatter + gather (and back by scatter + all-gather).

    Closed form: ``where`` is the total number of ranks ``p`` and ``local_size`` the group size
    ``k`` (``p % k == 0``), with ``intra`` and ``inter`` the α-β of the two levels.

    Example:
        >>> intra, inter = AlphaBeta(1e-6, 1e-11), AlphaBeta(1e-5, 1e-9)
        >>> round(hierarchical_allreduce(8e6, 16, local_size=8, intra=intra, inter=inter), 6)
        0.001174
    """
    if not isinstance(where, DeviceTopology):
        if local_size is None or intra is None or inter is None:
            raise TopologyError(
                "hierarchical_allreduce(p ranks) needs local_size=, intra= and inter= "
                "(AlphaBeta); or pass a DeviceTopology"
            )
        if where % local_size:
            raise TopologyError(f"{where} ranks do not split into groups of {local_size}")
        k, h = local_size, where // local_size
        inside = 2 * ((k - 1) * intra.alpha + (k - 1) / k * nbytes * intra.beta)
        across = 2 * (h - 1) * inter.alpha + 2 * (h - 1) / h * (nbytes / k) * inter.beta
        return inside + across
    topo = where
    if groups is None:
        groups = _groups_by_host(topo, tuple(topo.ids))
    gs = tuple(tuple(g) for g in groups if len(g))
    _devices(topo, [d for g in gs for d in g])
    key = ("hier", gs)
    phases = topo.cache.get(key)
    if phases is None:
        phases = _hier_phases(topo, gs)
        topo.cache[key] = phases
    equal, inner, outer = phases
    total = 0.0
    if equal:
        k = len(gs[0])
        h = len(gs)
        if k > 1:
            total += 2 * (k - 1) * (inner.alpha + nbytes / k * inner.beta)
        if h > 1:
            total += 2 * (h - 1) * (outer.alpha + nbytes / k / h * outer.beta)
        return total
    # uneven groups: the slowest group sets the inside phases
    inside = max(
        (2 * (size - 1) * ab.alpha + 2 * (size - 1) / size * nbytes * ab.beta
         for size, ab in inner if size > 1),
        default=0.0,
    )
    h = len(gs)
    across = 2 * (h - 1) * outer.alpha + 2 * (h - 1) / h * nbytes * outer.beta if h > 1 else 0.0
    return 2 * inside + across


def _hier_phases(topo: DeviceTopology, gs: tuple[tuple[str, ...], ...]):
    inner_edges = rings_step(topo, gs)
    if len({len(g) for g in gs}) == 1:
        k = len(gs[0])
        inner = _worst([e for edges in inner_edges for e in edges])
        cross = tuple(tuple(g[j] for g in gs) for j in range(k))
        outer = _worst([e for edges in rings_step(topo, cross) for e in edges])
        return True, inner, outer
    inner_list = [(len(g), _worst(edges)) for g, edges in zip(gs, inner_edges, strict=True)]
    leaders = tuple(g[0] for g in gs)
    outer = _worst(rings_step(topo, (leaders,))[0])
    return False, inner_list, outer
