"""The data-parallel strategy: what the simulator simulates, the planner chooses and the Horovod
integration applies.

A strategy names, for one training step:

* ``devices``: the device ids that take part, in rank order (rank ``i`` runs on ``devices[i]``);
* ``batch_shares``: samples of the global batch each rank processes (uneven for heterogeneous
  devices); gradients are weighted by ``share / sum(shares)`` so the result equals the gradient of
  the global batch;
* ``groups``: the device grouping as lists of ranks that reduce together first (a hierarchy:
  reduce inside each group, then across groups); ``[]`` means one flat group of all ranks;
* ``buckets``: tensor grouping, lists of parameter names all-reduced together (Horovod ``groups``);
* ``schemes``: per layer (module name) its communication scheme, one of ``SCHEMES``; layers not
  named use ``"allreduce"``.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

SCHEMES = ("allreduce", "hierarchical", "sparse", "sfb")


@dataclass
class Strategy:
    devices: list[str]
    batch_shares: list[int]
    groups: list[list[int]] = field(default_factory=list)
    buckets: list[list[str]] = field(default_factory=list)
    schemes: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.devices:
            raise ValueError("Strategy.devices is empty: name at least one device")
        if len(self.batch_shares) != len(self.devices):
            raise ValueError(
                f"Strategy has {len(self.devices)} devices but {len(self.batch_shares)} batch "
                f"shares {self.batch_shares}: give one share per device"
            )
        for share in self.batch_shares:
            if int(share) != share or share < 0:
                raise ValueError(f"batch share {share!r} must be a non-negative integer")
        if sum(self.batch_shares) <= 0:
            raise ValueError(f"batch shares {self.batch_shares} sum to zero: no device has work")
        ranks = sorted(r for g in self.groups for r in g)
        if self.groups and ranks != list(range(len(self.devices))):
            raise ValueError(
                f"Strategy.groups {self.groups} must partition the ranks 0..{len(self.devices) - 1}"
            )
        for layer, scheme in self.schemes.items():
            if scheme not in SCHEMES:
                raise ValueError(
                    f"unknown scheme {scheme!r} for layer {layer!r}; expected one of {SCHEMES}"
                )

    @property
    def world_size(self) -> int:
        return len(self.devices)

    def weight(self, rank: int) -> float:
        """The factor rank ``rank``'s mean gradient is multiplied by before summing over ranks."""
        return self.batch_shares[rank] / sum(self.batch_shares)

    def scheme(self, layer: str) -> str:
        return self.schemes.get(layer, "allreduce")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Strategy:
        known = {"devices", "batch_shares", "groups", "buckets", "schemes"}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown Strategy fields {sorted(unknown)}; expected {sorted(known)}")
        return cls(**data)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Strategy:
        return cls.from_dict(json.loads(text))
