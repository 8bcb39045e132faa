"""The planner's output: a :class:`Plan` (strategy, estimated times, and why each decision was
taken), with a JSON round trip, a text summary and notebook views.

Example:
    >>> from stitchlab.topology.planner import plan
    >>> from stitchlab.topology.planner.cases import mlp_profile
    >>> p = plan("hetero-4fast-4slow-eth", mlp_profile(2, 1024, 256), budget=24, prior="uniform")
    >>> p.speedup >= 1.0
    True
    >>> Plan.from_json(p.to_json()) == p
    True
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..devices import DeviceTopology
from ..profile import ModelProfile
from ..strategy import Strategy
from .space import PlanError, check_profile_matches

FORMAT = "stitchlab.plan/1"


def _num(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _unnum(x: float | None) -> float:
    return math.inf if x is None else float(x)


@dataclass
class DecisionRecord:
    """One decision of the plan and why it was taken.

    Attributes:
        decision: ``"devices"``, ``"shares"``, ``"reduction"``, ``"buckets"``, ``"sparse"``,
            ``"sfb"``, or ``"sfb layer"`` / ``"sparse layer"`` for one layer's scheme.
        choice: what the plan does (``"balanced"``, ``"fc1: sfb"``).
        alternative: what it was compared with (the plain data-parallel option, or the best other
            option when the plan keeps the plain one).
        time_with: estimated step seconds of the plan.
        time_without: estimated step seconds with ``alternative`` instead (``inf``: does not fit).
    """

    decision: str
    choice: str
    alternative: str
    time_with: float
    time_without: float

    @property
    def saving(self) -> float:
        """Seconds per step this decision saves. Negative when the search's budget ran out before
        the polish tried this alternative (the explanations simulate it on top of the budget and
        change nothing in the plan): a larger ``budget`` then finds the faster plan."""
        return self.time_without - self.time_with

    def reason(self) -> str:
        """One sentence: the choice and its estimated effect."""
        if not math.isfinite(self.time_without):
            return (f"{self.choice}: {self.time_with * 1e3:.3f} ms; with {self.alternative} the "
                    "model does not fit in memory")
        delta = self.time_without - self.time_with
        return (f"{self.choice}: {self.time_with * 1e3:.3f} ms per step; with {self.alternative} "
                f"{self.time_without * 1e3:.3f} ms ({'saves' if delta >= 0 else 'costs'} "
                f"{abs(delta) * 1e3:.3f} ms)")

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["time_with"], d["time_without"] = _num(self.time_with), _num(self.time_without)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> DecisionRecord:
        return cls(d["decision"], d["choice"], d["alternative"], _unnum(d["time_with"]),
                   _unnum(d["time_without"]))


@dataclass
class Plan:
    """A data-parallel training plan for one topology and model.

    Attributes:
        strategy: what to run (devices, batch shares, groups, buckets, per-layer schemes).
        step_time: estimated seconds per step under ``strategy`` (the simulator's).
        baseline_time: the same for plain data parallelism (all devices, even shares, ring
            all-reduce, no groups; ``inf`` when that does not fit in memory).
        decisions: per decision, its choice and the time with and without it.
        topology: the topology's name; ``model``: the profile's name.
        global_batch: samples per step over all ranks.
        search: how the plan was found (method, prior, budget, seed, simulator calls, seconds)
            and ``horovod``, the loop the strategies were simulated under (``HorovodCycle``
            fields; ``None``: fixed buckets).
        hosts: device id -> host, for the views and for checks.
    """

    strategy: Strategy
    step_time: float
    baseline_time: float
    decisions: list[DecisionRecord]
    topology: str
    model: str
    global_batch: int
    search: dict[str, Any] = field(default_factory=dict)
    hosts: dict[str, str] = field(default_factory=dict)

    @property
    def speedup(self) -> float:
        """Estimated speed-up over plain data parallelism (``inf`` when that does not fit)."""
        return self.baseline_time / self.step_time

    @property
    def world_size(self) -> int:
        return self.strategy.world_size

    # ----------------------------------------------------------------- checks
    def check(self, topo: DeviceTopology | None = None, profile: ModelProfile | None = None,
              world_size: int | None = None) -> None:
        """Raise :class:`PlanError` if the plan does not belong to ``topo``, ``profile`` or a job
        of ``world_size`` ranks (each argument optional)."""
        if world_size is not None and world_size != self.world_size:
            raise PlanError(
                f"the plan is for {self.world_size} ranks ({', '.join(self.strategy.devices)}) "
                f"but the job has {world_size}; re-plan for this job or launch "
                f"{self.world_size} ranks")
        if topo is not None:
            known = set(topo.ids)
            missing = [d for d in self.strategy.devices if d not in known]
            if missing:
                raise PlanError(f"the plan uses devices {missing} that topology {topo.name!r} "
                                f"lacks; it was made for topology {self.topology!r}: re-plan")
        if profile is not None:
            check_profile_matches(profile, self.strategy)

    # ----------------------------------------------------------------- serialization
    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "strategy": self.strategy.to_dict(),
            "step_time": _num(self.step_time),
            "baseline_time": _num(self.baseline_time),
            "speedup": _num(self.speedup),
            "decisions": [d.to_dict() for d in self.decisions],
            "topology": self.topology,
            "model": self.model,
            "global_batch": self.global_batch,
            "search": self.search,
            "hosts": self.hosts,
        }

    @classmethod
    def from_dict(cls, data: Any) -> Plan:
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            got = data.get("format") if isinstance(data, dict) else type(data).__name__
            raise PlanError(f"not a plan document: format is {got!r}, expected {FORMAT!r}")
        try:
            return cls(
                strategy=Strategy.from_dict(data["strategy"]),
                step_time=_unnum(data["step_time"]),
                baseline_time=_unnum(data["baseline_time"]),
                decisions=[DecisionRecord.from_dict(d) for d in data["decisions"]],
                topology=data["topology"], model=data["model"],
                global_batch=int(data["global_batch"]), search=dict(data.get("search", {})),
                hosts=dict(data.get("hosts", {})))
        except KeyError as exc:
            raise PlanError(f"plan document lacks field {exc.args[0]!r}") from None

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Plan:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise PlanError(f"plan JSON is malformed at line {exc.lineno} column {exc.colno}: "
                            f"{exc.msg}") from None
        return cls.from_dict(data)

    def save(self, path: str | Path) -> None:
        Path(path).write_text(self.to_json() + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> Plan:
        return cls.from_json(Path(path).read_text(encoding="utf-8"))

    # ----------------------------------------------------------------- display
    def summary(self) -> str:
        """The plan as text: times, speed-up, devices and shares, and each decision's reason."""
        s = self.strategy
        base = ("does not fit in memory" if not math.isfinite(self.baseline_time)
                else f"{self.baseline_time * 1e3:.3f} ms")
        lines = [
            f"plan for {self.model!r} on {self.topology!r} (global batch {self.global_batch})",
            f"  estimated step {self.step_time * 1e3:.3f} ms; plain data parallel {base}; "
            f"speed-up {self.speedup:.2f}x",
            f"  {s.world_size} ranks, samples per step on each:",
        ]
        by_host: dict[str, list[tuple[str, int]]] = {}
        for d, b in zip(s.devices, s.batch_shares, strict=True):
            by_host.setdefault(self.hosts.get(d, "?"), []).append((d, b))
        for host, ranks in by_host.items():
            if len(ranks) > 4 and len({b for _, b in ranks}) == 1:
                lines.append(f"    host {host}: {len(ranks)} devices x {ranks[0][1]} samples")
            else:
                lines.append(f"    host {host}: " + ", ".join(f"{d}={b}" for d, b in ranks))
        left = [d for d in self.hosts if d not in set(s.devices)]
        if left:
            lines.append(f"    left out: {len(left)} devices ({', '.join(left[:4])}"
                         f"{', ...' if len(left) > 4 else ''})")
        if s.groups:
            lines.append(f"  groups (reduce inside first): {s.groups}")
        lines.append(f"  {len(s.buckets)} all-reduce buckets" if s.buckets
                     else "  no explicit buckets")
        schemes: dict[str, list[str]] = {}
        for layer, scheme in s.schemes.items():
            schemes.setdefault(scheme, []).append(layer)
        for scheme, layers in sorted(schemes.items()):
            shown = ", ".join(layers[:6]) + (f", ... ({len(layers)})" if len(layers) > 6 else "")
            lines.append(f"  {scheme}: {shown}")
        lines.append("  decisions:")
        for d in self.decisions:
            lines.append(f"    [{d.decision}] {d.reason()}")
        if self.search:
            info = ", ".join(f"{k}={v}" for k, v in self.search.items() if k != "horovod")
            lines.append(f"  search: {info}")
        if "horovod" in self.search:
            h = self.search["horovod"]
            lines.append("  simulated with fixed buckets sent when ready (no Horovod loop)"
                         if h is None else
                         f"  simulated under Horovod's loop: cycle {h['cycle_time'] * 1e3:g} ms, "
                         f"fusion threshold {h['fusion_bytes'] / 2**20:g} MiB")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()

    def to_svg(self) -> str:
        """The plan drawn on the topology's hosts and devices (see :mod:`.view`)."""
        from .view import plan_svg

        return plan_svg(self)

    def _repr_html_(self) -> str:
        from .view import plan_html

        return plan_html(self)
