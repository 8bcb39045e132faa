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
import math
import numbers
from collections.abc import Mapping
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
        _check_list("devices", self.devices, (str,), "device ids (str)")
        _check_list("batch_shares", self.batch_shares, (numbers.Real,), "sample counts")
        if not isinstance(self.groups, (list, tuple)) or not all(
            isinstance(g, (list, tuple)) for g in self.groups
        ):
            raise ValueError(f"Strategy.groups {self.groups!r} must be a list of lists of ranks, "
                             "e.g. [[0, 1], [2, 3]], or [] for one flat group")
        for group in self.groups:
            _check_list("groups", group, (numbers.Integral,), "ranks (int)")
        if not isinstance(self.buckets, (list, tuple)):
            raise ValueError(f"Strategy.buckets {self.buckets!r} must be a list of lists of "
                             "parameter names, e.g. [['fc.weight', 'fc.bias']]")
        for bucket in self.buckets:
            _check_list("buckets", bucket, (str,), "parameter names (str)")
        if not isinstance(self.schemes, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in self.schemes.items()
        ):
            raise ValueError(f"Strategy.schemes {self.schemes!r} must map layer names to scheme "
                             f"names, e.g. {{'fc1': 'sfb'}}; schemes: {', '.join(SCHEMES)}")
        if not self.devices:
            raise ValueError("Strategy.devices is empty: name at least one device")
        if len(self.batch_shares) != len(self.devices):
            raise ValueError(
                f"Strategy has {len(self.devices)} devices but {len(self.batch_shares)} batch "
                f"shares {self.batch_shares}: give one share per device"
            )
        for share in self.batch_shares:
            if not math.isfinite(share) or int(share) != share or share < 0:
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
        if not isinstance(data, dict):
            raise ValueError(f"a Strategy is a JSON object with fields {sorted(known)}; got "
                             f"{type(data).__name__} {str(data)[:60]}")
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown Strategy fields {sorted(unknown)}; expected {sorted(known)}")
        missing = [name for name in ("devices", "batch_shares") if name not in data]
        if missing:
            raise ValueError(f"Strategy is missing the field(s) {missing}: give 'devices' (ids in "
                             "rank order) and 'batch_shares' (samples per rank)")
        return cls(**data)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Strategy:
        return cls.from_dict(json.loads(text))


def _check_list(name: str, value: Any, types: tuple[type, ...], what: str) -> None:
    """``value`` is a list (or tuple) of ``types`` (bool is not a number here)."""
    if not isinstance(value, (list, tuple)):
        raise ValueError(f"Strategy.{name} {value!r} must be a list of {what}")
    for item in value:
        if isinstance(item, bool) or not isinstance(item, types):
            raise ValueError(f"Strategy.{name} holds {item!r} ({type(item).__name__}); it must be "
                             f"a list of {what}")
