"""Traffic and extra compute of the lossless compression schemes, per rank, for the simulator.

The simulator asks :func:`scheme_traffic` (through :func:`current`) what a layer under scheme
``"sfb"`` or ``"sparse"`` sends and computes. The byte counts are ``stitchlab.compression``'s
cost model (:func:`~stitchlab.compression.cost.sfb_gather_bytes`,
:func:`~stitchlab.compression.cost.sparse_gather_bytes`), the one the SFB integer program and the
Horovod integration use; this module maps a layer profile onto it. Another model can be tried
with one call::

    from stitchlab.topology import compression_costs
    compression_costs.register(my_scheme_traffic)   # same signature as scheme_traffic

and :func:`reset` restores the default.

Formulas (layer with weight n×m, ``b_r`` input rows on rank ``r``, itemsize ``w`` bytes):

* ``sfb``: rank r all-gathers its factors X (b_r×m) and δ (b_r×n): ``b_r·(m+n)·w`` bytes instead of
  all-reducing the m×n gradient; afterwards every rank forms the full gradient
  Σ_r X_rᵀ·δ_r: ``2·(Σ_r b_r)·m·n`` extra FLOPs on every rank (the bias gradient Σ δ is free).
* ``sparse``: rank r all-gathers the (index, value) pairs of the embedding rows its batch touches:
  ``rows_r·(8 + d·w)`` bytes with ``rows_r = V·(1 - (1 - ρ)^(b_r/B))`` — density ρ measured at
  the profile batch B over a table of V rows, assuming rows drawn independently — and scatter-adds
  them (memory bound, not counted).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..compression import cost
from .errors import ProfileError
from .profile import LayerProfile

INDEX_BYTES = cost.INDEX_ITEMSIZE


@dataclass(frozen=True)
class SchemeTraffic:
    """What one layer's gradient exchange costs under a compression scheme.

    Attributes:
        gather_bytes: bytes each rank contributes to one all-gather (rank order).
        extra_flops: FLOPs each rank computes after the gather to rebuild the gradient.
        buffer_bytes: bytes each rank holds for the gathered data.
    """

    gather_bytes: list[float]
    extra_flops: list[float]
    buffer_bytes: float


def scheme_traffic(layer: LayerProfile, scheme: str, rank_batches: Sequence[float],
                   profile_batch: int) -> SchemeTraffic:
    """Default traffic model for ``scheme`` in ``("sfb", "sparse")`` (see module docstring).

    Args:
        layer: the layer's profile.
        scheme: ``"sfb"`` or ``"sparse"``.
        rank_batches: samples per rank.
        profile_batch: the batch size ``layer``'s numbers were measured at.
    """
    w = layer.itemsize
    if scheme == "sfb":
        if not (layer.in_features and layer.out_features and layer.tokens):
            raise ProfileError(
                f"layer {layer.name!r} ({layer.kind}) has no linear dimensions/tokens in the "
                "profile; SFB applies to linear layers only — use scheme 'allreduce' for it"
            )
        m, n = layer.in_features, layer.out_features
        rows = [layer.tokens * b / profile_batch for b in rank_batches]
        sizes = cost.sfb_gather_bytes(rows, m, n, w)
        flops = 2.0 * sum(rows) * m * n
        return SchemeTraffic(sizes, [flops] * len(rows), sum(sizes))
    if scheme == "sparse":
        if layer.grad_density is None or not layer.num_embeddings or not layer.embedding_dim:
            raise ProfileError(
                f"layer {layer.name!r} ({layer.kind}) has no embedding gradient density in the "
                "profile; scheme 'sparse' applies to embeddings only — use 'allreduce' for it"
            )
        v, d, rho = layer.num_embeddings, layer.embedding_dim, layer.grad_density
        rows = [v * (1 - (1 - rho) ** (b / profile_batch)) for b in rank_batches]
        sizes = cost.sparse_gather_bytes(rows, d, w, INDEX_BYTES)
        return SchemeTraffic(sizes, [0.0] * len(sizes), sum(sizes))
    raise ProfileError(f"scheme {scheme!r} has no traffic model; expected 'sfb' or 'sparse'")


TrafficFn = Callable[[LayerProfile, str, Sequence[float], int], SchemeTraffic]
_current: TrafficFn = scheme_traffic


def register(fn: TrafficFn) -> None:
    """Make the simulator use ``fn`` (same signature as :func:`scheme_traffic`)."""
    global _current
    _current = fn


def reset() -> None:
    """Go back to the default formulas of this module."""
    register(scheme_traffic)


def current() -> TrafficFn:
    """The traffic function the simulator uses now."""
    return _current
