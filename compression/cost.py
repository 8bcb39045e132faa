"""Cost model of the lossless gradient-communication schemes, shared with the planner.

Plain functions over numbers (no torch, no numpy): bytes each rank sends, extra arithmetic and
extra memory of

* ``allreduce``: ring all-reduce of the dense gradient (the baseline);
* ``sfb``: Sufficient Factor Broadcasting for a linear layer ``Y = X·Wᵀ + b`` with ``X`` of
  ``tokens × in_features``: the replicas all-gather the layer input ``X`` and the output gradient
  ``δ = ∂L/∂Y`` and each rebuilds the full-batch gradient ``δᵀ·X`` (and ``Σ δ`` for the bias);
* ``sparse``: (index, value) all-gather of the embedding rows a step touched, summed per row.

Ring collectives over ``p`` ranks: an all-reduce of ``n`` bytes sends ``2(p-1)/p·n`` bytes per
rank in ``2(p-1)`` messages; an all-gather whose result has ``n`` bytes sends ``(p-1)/p·n`` in
``p-1`` messages. SFB therefore sends fewer bytes when ``T·(m+k) < 2·(m·k + k)`` with ``T`` the
tokens of the whole step (all ranks), ``m`` the in- and ``k`` the out-features — DESIGN §1's
``b·(m+n) < 2·m·n / p`` with ``T = p·b``.

Fewer bytes is not yet less time: :meth:`SchemeCost.time_saved` also charges the rebuild
arithmetic and a fixed cost per layer. For the schemes that all-gather (SFB and sparse) that fixed
cost is best measured (``gather_overhead_s``: what one more such layer adds to a step, the
Horovod profiler's probe); a step that all-gathers at all also pays ``gather_step_s`` once, which
:func:`gathering_pays` weighs against the chosen layers' summed savings.

Example:
    >>> c = sfb_cost(in_features=4096, out_features=4096, tokens=64, world_size=2)
    >>> c.pays
    True
    >>> round(c.saved_bytes / c.baseline_bytes, 3)
    0.984
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable
from dataclasses import dataclass

#: bytes of one gathered row index (torch.int64)
INDEX_ITEMSIZE = 8


@dataclass(frozen=True)
class SchemeCost:
    """What one scheme costs for one layer and one optimizer step, per rank.

    Attributes:
        scheme: ``"allreduce"``, ``"sfb"`` or ``"sparse"``.
        traffic_bytes: bytes each rank sends with this scheme.
        baseline_bytes: bytes each rank sends with a ring all-reduce of the dense gradient.
        messages: sequential ring messages of this scheme (latency terms).
        baseline_messages: the same for the dense all-reduce.
        extra_flops: arithmetic this scheme adds over the baseline (rebuilding gradients).
        extra_memory_bytes: memory this scheme holds over the baseline (held activations,
            gathered factors or rows).
        collectives: collective operations this scheme issues (each has a fixed overhead:
            negotiation, launch); the dense all-reduce issues one.
        gathers: whether the scheme all-gathers per layer (SFB: ``X`` and ``δ``; sparse: indices
            and rows), so that a measured per-layer all-gather cost applies to it.
    """

    scheme: str
    traffic_bytes: float
    baseline_bytes: float
    messages: int
    baseline_messages: int
    extra_flops: float
    extra_memory_bytes: float
    collectives: int = 1
    gathers: bool = False

    @property
    def saved_bytes(self) -> float:
        """Traffic saved against the dense all-reduce (negative when the scheme sends more)."""
        return self.baseline_bytes - self.traffic_bytes

    @property
    def pays(self) -> bool:
        """True when the scheme sends fewer bytes than the dense all-reduce."""
        return self.saved_bytes > 0

    def fixed_cost_s(
        self, op_overhead_s: float = 0.0, gather_overhead_s: float | None = None
    ) -> float:
        """Fixed seconds per step this scheme adds for one layer over the dense all-reduce.

        A scheme that all-gathers costs the measured ``gather_overhead_s`` when it is given (it
        already holds every collective the layer issues); otherwise, and for the other schemes,
        each collective beyond the one all-reduce costs ``op_overhead_s``.

        Example:
            >>> c = sfb_cost(2048, 2048, tokens=8, world_size=2)
            >>> c.fixed_cost_s(op_overhead_s=50e-6), c.fixed_cost_s(50e-6, gather_overhead_s=3e-4)
            (5e-05, 0.0003)
        """
        if gather_overhead_s is not None and self.gathers:
            _non_negative("gather_overhead_s", gather_overhead_s)
            return float(gather_overhead_s)
        return (self.collectives - 1) * op_overhead_s

    def time_saved(
        self,
        bandwidth_bytes_per_s: float,
        flops_per_s: float,
        latency_s: float = 0.0,
        op_overhead_s: float = 0.0,
        gather_overhead_s: float | None = None,
    ) -> float:
        """Seconds per step saved by the scheme (negative: it costs time).

        ``saved bytes / bandwidth + saved messages · latency - fixed cost - extra FLOPs / rate``,
        with the fixed cost of :meth:`fixed_cost_s`.

        Args:
            bandwidth_bytes_per_s: link bandwidth each rank sends at.
            flops_per_s: arithmetic rate for rebuilding gradients.
            latency_s: latency of one message.
            op_overhead_s: fixed cost of one more collective operation.
            gather_overhead_s: measured fixed cost one all-gathering layer (SFB, sparse) adds to
                a step; replaces the ``op_overhead_s`` estimate for those schemes. ``None``: not
                measured.
        """
        _positive("bandwidth_bytes_per_s", bandwidth_bytes_per_s)
        _positive("flops_per_s", flops_per_s)
        comm = self.saved_bytes / bandwidth_bytes_per_s
        comm += (self.baseline_messages - self.messages) * latency_s
        comm -= self.fixed_cost_s(op_overhead_s, gather_overhead_s)
        return comm - self.extra_flops / flops_per_s


def gathering_pays(saved_s: Iterable[float], gather_step_s: float) -> bool:
    """Whether layers that all-gather, saving ``saved_s`` seconds each (from
    :meth:`SchemeCost.time_saved`), together beat ``gather_step_s``: the fixed cost a step pays
    once when any layer all-gathers (Horovod fuses the all-gathers issued together into one
    operation, so only the first layer pays it).

    Choosing the layers with a positive saving (under the memory budget) and then keeping them
    only when this holds is exact: any other non-empty choice saves less and pays the same.

    Example:
        >>> gathering_pays([40e-6, 30e-6], gather_step_s=100e-6)
        False
    """
    _non_negative("gather_step_s", gather_step_s)
    return sum(saved_s) > gather_step_s


def _positive(name: str, value: float) -> None:
    if not value > 0:
        raise ValueError(f"{name} must be positive, got {value!r}")


def _non_negative(name: str, value: float) -> None:
    if not value >= 0:
        raise ValueError(f"{name} must be non-negative, got {value!r}")


def _count(name: str, value: int) -> int:
    """``value`` as an int, refusing anything but a positive whole number (layer sizes, bytes)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not value >= 1 or int(value) != value:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def _world(world_size: int) -> int:
    return _count("world_size", world_size)


def ring_allreduce_bytes(nbytes: float, world_size: int) -> float:
    """Bytes each rank sends in a ring all-reduce of ``nbytes``."""
    p = _world(world_size)
    _non_negative("nbytes", nbytes)
    return 2.0 * (p - 1) / p * nbytes


def ring_allgather_bytes(total_nbytes: float, world_size: int) -> float:
    """Bytes each rank sends in a ring all-gather whose gathered result has ``total_nbytes``."""
    p = _world(world_size)
    _non_negative("total_nbytes", total_nbytes)
    return (p - 1) / p * total_nbytes


def allreduce_time(
    nbytes: float, world_size: int, bandwidth_bytes_per_s: float, latency_s: float = 0.0
) -> float:
    """α-β time of a ring all-reduce of ``nbytes``: ``2(p-1)·α + 2(p-1)/p·n/β``."""
    _positive("bandwidth_bytes_per_s", bandwidth_bytes_per_s)
    _non_negative("latency_s", latency_s)
    p = _world(world_size)
    return 2 * (p - 1) * latency_s + ring_allreduce_bytes(nbytes, p) / bandwidth_bytes_per_s


def allgather_time(
    total_nbytes: float, world_size: int, bandwidth_bytes_per_s: float, latency_s: float = 0.0
) -> float:
    """α-β time of a ring all-gather with a result of ``total_nbytes``: ``(p-1)·α + (p-1)/p·n/β``."""
    _positive("bandwidth_bytes_per_s", bandwidth_bytes_per_s)
    _non_negative("latency_s", latency_s)
    p = _world(world_size)
    return (p - 1) * latency_s + ring_allgather_bytes(total_nbytes, p) / bandwidth_bytes_per_s


def allreduce_cost(numel: int, world_size: int, itemsize: int = 4) -> SchemeCost:
    """The baseline: ring all-reduce of a dense gradient of ``numel`` elements."""
    p = _world(world_size)
    _non_negative("numel", numel)
    dense = ring_allreduce_bytes(numel * _count("itemsize", itemsize), p)
    return SchemeCost("allreduce", dense, dense, 2 * (p - 1), 2 * (p - 1), 0.0, 0.0)


def sfb_cost(
    in_features: int,
    out_features: int,
    tokens: int,
    world_size: int,
    bias: bool = True,
    itemsize: int = 4,
) -> SchemeCost:
    """Cost of SFB for one linear layer against the all-reduce of its weight (and bias) gradient.

    Args:
        in_features: ``m``, columns of the layer input ``X``.
        out_features: ``k``, columns of the output gradient ``δ``.
        tokens: rows of ``X`` in the whole step, summed over ranks (and over accumulated
            backward passes): batch × sequence positions for a transformer layer.
        world_size: ranks taking part.
        bias: whether the layer has a bias (its gradient ``Σ δ`` comes from ``δ`` for free).
        itemsize: bytes per element of ``X`` and ``δ``.

    Returns:
        The :class:`SchemeCost`. ``extra_flops`` is the full-batch rebuild ``2·T·m·k`` (+ ``T·k``
        for the bias); ``extra_memory_bytes`` holds the gathered ``X`` and ``δ`` (``T·(m+k)``).
    """
    p = _world(world_size)
    m, k = _count("in_features", in_features), _count("out_features", out_features)
    itemsize = _count("itemsize", itemsize)
    _non_negative("tokens", tokens)
    t = float(tokens)
    dense = ring_allreduce_bytes((m * k + (k if bias else 0)) * itemsize, p)
    gathered = t * (m + k) * itemsize
    flops = 2.0 * t * m * k + (t * k if bias else 0.0)
    return SchemeCost(
        "sfb",
        traffic_bytes=ring_allgather_bytes(gathered, p),
        baseline_bytes=dense,
        messages=2 * (p - 1),  # two all-gathers: X and δ
        baseline_messages=2 * (p - 1),
        extra_flops=flops,
        extra_memory_bytes=gathered,
        collectives=2,
        gathers=True,
    )


def sfb_break_even_tokens(
    in_features: int, out_features: int, world_size: int, bias: bool = True
) -> float:
    """Tokens per step (all ranks) below which SFB sends fewer bytes than the all-reduce."""
    p = _world(world_size)
    m, k = _count("in_features", in_features), _count("out_features", out_features)
    if p == 1:
        return 0.0
    return 2.0 * (m * k + (k if bias else 0)) / (m + k)


def sparse_cost(
    num_embeddings: int,
    embedding_dim: int,
    rows: int,
    world_size: int,
    itemsize: int = 4,
    index_itemsize: int = INDEX_ITEMSIZE,
) -> SchemeCost:
    """Cost of the (index, value) all-gather of embedding-gradient rows against the dense all-reduce.

    Args:
        num_embeddings: rows of the embedding table.
        embedding_dim: columns of the table.
        rows: distinct rows touched, summed over ranks (each rank sends its own distinct rows).
        world_size: ranks taking part.
        itemsize: bytes per gradient element.
        index_itemsize: bytes per row index.
    """
    p = _world(world_size)
    _non_negative("rows", rows)
    num_embeddings = _count("num_embeddings", num_embeddings)
    gathered = rows * _row_bytes(embedding_dim, itemsize, index_itemsize)
    return SchemeCost(
        "sparse",
        traffic_bytes=ring_allgather_bytes(gathered, p),
        baseline_bytes=ring_allreduce_bytes(num_embeddings * embedding_dim * itemsize, p),
        messages=2 * (p - 1),  # indices and values
        baseline_messages=2 * (p - 1),
        extra_flops=float(rows * embedding_dim),  # the scatter-add of gathered rows
        extra_memory_bytes=float(gathered),
        collectives=2,
        gathers=True,
    )


def sparse_break_even_density(
    embedding_dim: int, world_size: int, itemsize: int = 4, index_itemsize: int = INDEX_ITEMSIZE
) -> float:
    """Fraction of table rows touched per rank below which sparse encoding sends fewer bytes.

    With ``p`` ranks each touching a fraction ``ρ`` of the ``V`` rows, sparse sends
    ``(p-1)·ρ·V·(d·s + i)`` bytes against ``2(p-1)/p·V·d·s``: it pays when
    ``ρ < 2·d·s / (p·(d·s + i))``.
    """
    p = _world(world_size)
    row = _count("embedding_dim", embedding_dim) * _count("itemsize", itemsize)
    return 2.0 * row / (p * _row_bytes(embedding_dim, itemsize, index_itemsize))


def sfb_gather_bytes(
    rows_per_rank: list[float], in_features: int, out_features: int, itemsize: int = 4
) -> list[float]:
    """Bytes each rank contributes to SFB's all-gathers: ``b_r·(m+k)·s`` (uneven ranks allowed).

    The per-rank view of :func:`sfb_cost` that a simulator needs
    (``stitchlab.topology.compression_costs``); the rebuild is ``2·Σb_r·m·k`` FLOPs on every rank.
    """
    row = (_count("in_features", in_features) + _count("out_features", out_features)) * _count(
        "itemsize", itemsize
    )
    return [_rows(b) * row for b in rows_per_rank]


def sparse_gather_bytes(
    rows_per_rank: list[float],
    embedding_dim: int,
    itemsize: int = 4,
    index_itemsize: int = INDEX_ITEMSIZE,
) -> list[float]:
    """Bytes each rank contributes to the sparse (index, value) all-gathers:
    ``rows_r·(d·s + i)``."""
    row = _row_bytes(embedding_dim, itemsize, index_itemsize)
    return [_rows(r) * row for r in rows_per_rank]


def _row_bytes(embedding_dim: int, itemsize: int, index_itemsize: int) -> int:
    """Bytes of one gathered embedding row and its index."""
    return _count("embedding_dim", embedding_dim) * _count("itemsize", itemsize) + _count(
        "index_itemsize", index_itemsize
    )


def _rows(value: float) -> float:
    _non_negative("rows per rank", value)
    return float(value)
