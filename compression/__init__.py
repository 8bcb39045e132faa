"""stitchlab.compression: lossless gradient-communication schemes and their cost model.

* :mod:`.cost` — bytes, arithmetic and memory of all-reduce, SFB and sparse encoding (plain
  numbers; shared with the planner in ``stitchlab.topology``);
* :mod:`.placement` — the integer program that places SFB under a memory budget;
* :mod:`.sfb` — Sufficient Factor Broadcasting for ``nn.Linear`` (needs torch);
* :mod:`.sparse` — (index, value) encoding of embedding gradients (needs torch);
* :mod:`.hooks` — ``layer_input``, a layer call's input in a forward hook (needs torch).

Importing this package does not import torch; the torch modules are imported on use.
"""

from .cost import (
    SchemeCost,
    allgather_time,
    allreduce_cost,
    allreduce_time,
    gathering_pays,
    ring_allgather_bytes,
    ring_allreduce_bytes,
    sfb_break_even_tokens,
    sfb_cost,
    sfb_gather_bytes,
    sparse_break_even_density,
    sparse_cost,
    sparse_gather_bytes,
)
from .placement import place_sfb

__all__ = [
    "SchemeCost",
    "allgather_time",
    "allreduce_cost",
    "allreduce_time",
    "gathering_pays",
    "place_sfb",
    "ring_allgather_bytes",
    "ring_allreduce_bytes",
    "sfb_break_even_tokens",
    "sfb_cost",
    "sfb_gather_bytes",
    "sparse_break_even_density",
    "sparse_cost",
    "sparse_gather_bytes",
]
