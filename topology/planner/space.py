"""The strategy space the planner searches, and the one place strategies are built and simulated.

A point of the space is an *assignment*: one option index per :class:`Decision`, in the order of
:data:`DECISIONS`:

* ``devices`` — which devices take part: all of them, only the faster tiers (devices at or above
  a speed), or the strongest host / NVLink island;
* ``shares`` — each rank's part of the global batch: ``even``, ``balanced`` (proportional to the
  device's FLOP/s, so heterogeneous ranks finish backward together) or ``halfway`` between the two;
  always capped by what fits in each device's memory;
* ``reduction`` — device grouping: one flat ring over all ranks, or a hierarchy (reduce inside
  each host / NVLink island first, then across groups; dense layers get scheme ``hierarchical``);
* ``buckets`` — tensor grouping: no groups (plain Horovod), or parameters grouped in backward
  order into buckets of 1 to 256 MiB (Horovod ``groups``);
* ``sparse`` — (index, value) all-gather for embedding layers whose gathered rows are smaller
  than the dense gradient;
* ``sfb`` — Sufficient Factor Broadcasting for the linear layers the integer program of
  :mod:`stitchlab.compression.placement` picks (traffic saved against rebuild compute, under the
  memory left on the tightest device).

The global batch is fixed (default: the profile's batch on every device), so every strategy trains
the same model on the same samples per step and step times compare directly. The baseline is plain
data parallelism: all devices, even shares, flat ring all-reduce, no groups, no compression.

**Communication model.** A plan is applied through Horovod (:mod:`stitchlab.horovod`), so every
strategy is simulated the way Horovod sends gradients, by the simulator's own model of its loop
(``simulate(..., horovod=self.horovod)``, :class:`~stitchlab.topology.simulator.HorovodCycle`):
each gradient waits for the next tick of the background loop, one tick's gradients are fused up
to the fusion threshold, and a bucket is a Horovod group (its tensors submitted together when the
last is ready), not a fusion buffer. The loop's parameters are ``horovod=`` — a calibrated one
(:meth:`stitchlab.topology.calibrate.HorovodFit.cycle_model`), else Horovod's defaults
(:data:`~stitchlab.topology.simulator.HOROVOD_DEFAULTS`: 1 ms cycle, 128 MiB threshold); the
topology carries only links, so its calibrated bandwidth comes through them. ``horovod=None``
simulates fixed buckets sent as soon as they are ready (DDP, plain NCCL; 64 MiB by default), the
planner's model before Horovod's loop was modelled.

Example:
    >>> from stitchlab.topology import presets
    >>> from stitchlab.topology.planner.cases import transformer_profile
    >>> space = SearchSpace(presets.get("hetero-4fast-4slow-eth"), transformer_profile(layers=2))
    >>> [d.key for d in space.decisions]
    ['devices', 'shares', 'reduction', 'buckets', 'sparse', 'sfb']
    >>> space.time(space.baseline_assignment) > space.time(space.decode("balanced"))
    True
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import collectives, compression_costs
from ..devices import DeviceTopology
from ..errors import DoesNotFitError, ProfileError
from ..profile import LayerProfile, ModelProfile
from ..simulator import HOROVOD_DEFAULTS, HorovodCycle, SimResult, simulate
from ..strategy import Strategy

MiB = 2**20
#: bucket size of the fixed-bucket model (``horovod=None``): its default ``buckets`` option and the
#: fusion of parameters outside explicit buckets (Horovod's fusion threshold before 0.21)
BASELINE_BUCKET_BYTES = 64 * MiB
BUCKET_CHOICES_MIB = (1, 2, 4, 8, 16, 32, 64, 128, 256)
DECISIONS = ("devices", "shares", "reduction", "buckets", "sparse", "sfb")
SHARE_MODES = ("even", "halfway", "balanced")
REDUCTIONS = ("ring", "host", "island")
N_OPTION_FEATURES = 6
#: fraction of a device's memory the planner lets a plan use (allocator slack, CUDA context)
MEMORY_FRACTION = 0.95
MAX_DEVICE_SETS = 8


class PlanError(ValueError):
    """Bad planner input or a plan that does not match the topology/model it is used with."""


@dataclass(frozen=True)
class Option:
    """One choice of a decision: a label, its payload and numeric features for the GNN prior."""

    label: str
    value: Any
    features: tuple[float, ...]


@dataclass(frozen=True)
class Decision:
    """One decision of the strategy space; ``default`` is the plain data-parallel option."""

    key: str
    title: str
    options: tuple[Option, ...]
    default: int = 0

    def labels(self) -> list[str]:
        return [o.label for o in self.options]


@dataclass
class Evaluation:
    """A simulated strategy: its step time (``inf`` when it does not fit) and the simulator result."""

    strategy: Strategy
    step_time: float
    result: SimResult | None = field(default=None, repr=False)


def _log10(x: float) -> float:
    return math.log10(max(x, 1e-12))


def _clip(x: float, lo: float = -3.0, hi: float = 3.0) -> float:
    return max(lo, min(hi, x))


class SearchSpace:
    """Decisions, option features, strategy construction and a simulator cache for one problem.

    Args:
        topo: the devices and links.
        profile: the model profile.
        global_batch: samples per step over all ranks (default ``profile.batch_size`` times the
            number of devices: the plain data-parallel baseline with the profiled batch per device).
        all_devices: keep every device (a job whose world size is fixed); the ``devices``
            decision then has one option.
        horovod: the Horovod loop every strategy is simulated under (default Horovod's own
            settings, :data:`~stitchlab.topology.simulator.HOROVOD_DEFAULTS`; a calibrated one
            from :meth:`~stitchlab.topology.calibrate.HorovodFit.cycle_model`); ``None``: fixed
            buckets sent when ready (DDP, NCCL), and no ``no groups`` option.

    Raises:
        PlanError: an empty profile, a non-positive global batch, or one smaller than the
            fewest devices a strategy may use.
        DoesNotFitError: no device can hold a replica of the model (names the model and device).
    """

    def __init__(self, topo: DeviceTopology, profile: ModelProfile,
                 global_batch: int | None = None, all_devices: bool = False,
                 horovod: HorovodCycle | None = HOROVOD_DEFAULTS) -> None:
        if not isinstance(topo, DeviceTopology):
            raise PlanError(f"topology must be a DeviceTopology, got {type(topo).__name__}")
        if not isinstance(profile, ModelProfile):
            raise PlanError(f"profile must be a ModelProfile, got {type(profile).__name__}")
        if horovod is not None and not isinstance(horovod, HorovodCycle):
            raise PlanError(f"horovod must be a HorovodCycle or None, got {horovod!r}; a "
                            "calibration's HorovodFit gives one with .cycle_model()")
        if not profile.layers or profile.param_bytes == 0:
            raise PlanError(f"model profile {profile.name!r} has no layers with parameters; "
                            "there is no gradient to communicate and nothing to plan")
        self.topo = topo
        self.profile = profile
        self.horovod = horovod
        n = len(topo.devices)
        if global_batch is None:
            global_batch = profile.batch_size * n
        if int(global_batch) != global_batch or global_batch < 1:
            raise PlanError(f"global_batch={global_batch!r} must be a positive integer number of "
                            "samples per step")
        self.global_batch = int(global_batch)
        self.all_devices = all_devices
        hosts = topo.hosts()
        self.order: list[str] = [d for ids in hosts.values() for d in ids]
        self.static_bytes = profile.static_bytes  # (frozen weights: no gradients or optimizer state)
        self.act_per_sample = profile.activation_bytes / profile.batch_size
        self.fusion_reserve = min(float(profile.trainable_bytes), 256.0 * MiB)
        self._check_fits()
        self.compute_per_sample = (profile.forward_time + profile.backward_time) / \
            profile.batch_size * profile.device_flops  # FLOP-equivalents per sample
        self._cache: dict[str, Evaluation] = {}
        self._sfb_cache: dict[tuple, list[str]] = {}
        self.sims = 0
        self.decisions: list[Decision] = self._make_decisions()
        if min(len(o.value) for o in self.decisions[0].options) > self.global_batch:
            fewest = min((devs for _, devs in self._device_sets(check_fit=False)), key=len)
            raise PlanError(
                f"global_batch={self.global_batch} is smaller than the {len(fewest)} devices of "
                f"the smallest device set the planner considers ({', '.join(fewest)}); every "
                f"rank needs at least one sample: give global_batch >= {len(fewest)}"
            )

    # ----------------------------------------------------------------- memory
    def capacity(self, device: str) -> float:
        """Samples ``device`` can hold (weights, gradients, optimizer state, activations)."""
        free = self.topo.device(device).memory * MEMORY_FRACTION - self.static_bytes \
            - self.fusion_reserve
        if free < 0:
            return 0.0
        if self.act_per_sample <= 0:
            return math.inf
        return math.floor(free / self.act_per_sample)

    def _check_fits(self) -> None:
        caps = {d: self.capacity(d) for d in self.order}
        if max(caps.values()) < 1:
            big = max(self.topo.devices, key=lambda d: d.memory)
            need = self.static_bytes + self.fusion_reserve + self.act_per_sample
            raise DoesNotFitError(
                f"model {self.profile.name!r} needs {need / 2**30:.2f} GiB per replica (weights, "
                f"gradients, optimizer state, one sample's activations) but the largest device "
                f"{big.id!r} offers {big.memory * MEMORY_FRACTION / 2**30:.2f} GiB; data "
                "parallelism cannot run it: use a smaller model, fewer optimizer states or "
                "larger devices")
        if sum(min(c, self.global_batch) for c in caps.values()) < self.global_batch:
            raise DoesNotFitError(
                f"global batch {self.global_batch} of model {self.profile.name!r} does not fit: "
                f"all devices together hold {int(sum(caps.values()))} samples; use a smaller "
                "global_batch")

    def shares(self, devices: Sequence[str], mode: str) -> list[int] | None:
        """Integer batch shares summing to the global batch, capped by memory (``None``: the
        devices cannot hold the global batch)."""
        if mode not in SHARE_MODES:
            raise PlanError(f"unknown share mode {mode!r}; expected one of {SHARE_MODES}")
        flops = [self.topo.device(d).flops for d in devices]
        mean = sum(flops) / len(flops)
        if mode == "even":
            weights = [1.0] * len(devices)
        elif mode == "balanced":
            weights = [f / mean for f in flops]
        else:
            weights = [0.5 + 0.5 * f / mean for f in flops]
        caps = [min(self.capacity(d), float(self.global_batch)) for d in devices]
        if any(c < 1 for c in caps) or sum(caps) < self.global_batch:
            return None
        # water-filling: proportional to weights, devices at their cap drop out
        alloc = [0.0] * len(devices)
        free = set(range(len(devices)))
        left = float(self.global_batch)
        while free and left > 1e-9:
            wsum = sum(weights[i] for i in free)
            capped = [i for i in free if alloc[i] + left * weights[i] / wsum > caps[i]]
            if not capped:
                for i in free:
                    alloc[i] += left * weights[i] / wsum
                left = 0.0
                break
            for i in capped:
                left -= caps[i] - alloc[i]
                alloc[i] = caps[i]
                free.discard(i)
        out = [max(1, math.floor(a)) for a in alloc]
        diff = self.global_batch - sum(out)
        order = sorted(range(len(out)), key=lambda i: (-(alloc[i] - math.floor(alloc[i])), i))
        k = 0
        while diff != 0 and k < 4 * len(out) + 4:
            i = order[k % len(out)]
            if diff > 0 and out[i] + 1 <= caps[i]:
                out[i] += 1
                diff -= 1
            elif diff < 0 and out[i] > 1:
                out[i] -= 1
                diff += 1
            k += 1
        return out if diff == 0 else None

    # ----------------------------------------------------------------- groups
    def groups(self, devices: Sequence[str], how: str) -> list[list[int]]:
        """Rank groups for ``how`` in :data:`REDUCTIONS` (``[]``: flat, or no useful hierarchy:
        fewer than two groups, all groups of one device, or groups of unequal size)."""
        if how == "ring":
            return []
        if how == "host":
            key = {d: self.topo.device(d).host for d in devices}
        else:
            key = {}
            for i, island in enumerate(self.topo.islands()):
                for d in island:
                    key[d] = str(i)
        out: dict[str, list[int]] = {}
        for r, d in enumerate(devices):
            out.setdefault(key[d], []).append(r)
        gs = list(out.values())
        if len(gs) < 2 or max(len(g) for g in gs) < 2 or len({len(g) for g in gs}) != 1:
            return []
        return gs

    # ----------------------------------------------------------------- compression
    def sparse_layers(self, batches: Sequence[float]) -> list[str]:
        """Embedding layers (with a trained weight) whose gathered (index, value) rows are smaller
        than a ring all-reduce of the dense gradient sends."""
        traffic = compression_costs.current()
        p = len(batches)
        out = []
        for layer in self.profile.layers:
            if layer.grad_density is None or not layer.num_embeddings or p < 2 \
                    or not _trains_weight(layer):
                continue
            g = traffic(layer, "sparse", list(batches), self.profile.batch_size)
            if (p - 1) / p * sum(g.gather_bytes) < 2 * (p - 1) / p * layer.param_bytes:
                out.append(layer.name)
        return out

    def sfb_candidates(self) -> list[LayerProfile]:
        """Linear layers with their dimensions, tokens and a trained weight in the profile."""
        return [ln for ln in self.profile.layers
                if ln.kind == "linear" and ln.in_features and ln.out_features and ln.tokens
                and _trains_weight(ln)]

    def sfb_layers(self, devices: Sequence[str], shares: Sequence[int],
                   extra_buffers: float = 0.0) -> list[str]:
        """The integer program's SFB layers for these ranks (cached)."""
        key = (tuple(devices), tuple(shares), round(extra_buffers))
        hit = self._sfb_cache.get(key)
        if hit is None:
            from .sfb import place

            hit = place(self, devices, shares, extra_buffers)
            self._sfb_cache[key] = hit
        return hit

    # ----------------------------------------------------------------- build + simulate
    def build(self, assignment: Sequence[int], sfb_override: Sequence[str] | None = None,
              sparse_override: Sequence[str] | None = None) -> Strategy | None:
        """The strategy of ``assignment`` (``None`` when its devices cannot hold the batch).

        ``sfb_override`` replaces the integer program's SFB layers and ``sparse_override`` the
        sparse layers (used by the final pruning, the explanations and exhaustive search over SFB
        subsets).
        """
        if len(assignment) != len(self.decisions):
            raise PlanError(f"assignment {tuple(assignment)} has {len(assignment)} entries; the "
                            f"space has {len(self.decisions)} decisions {DECISIONS}")
        opt = {d.key: d.options[i].value for d, i in zip(self.decisions, assignment, strict=True)}
        devices: list[str] = opt["devices"]
        shares = self.shares(devices, opt["shares"])
        if shares is None:
            return None
        groups = self.groups(devices, opt["reduction"])
        dense = "hierarchical" if groups else "allreduce"
        schemes: dict[str, str] = {}
        if sparse_override is not None:
            sparse = list(sparse_override)
        else:
            sparse = self.sparse_layers(shares) if opt["sparse"] and len(devices) > 1 else []
        for name in sparse:
            schemes[name] = "sparse"
        if sfb_override is not None:
            sfb = list(sfb_override)
        elif opt["sfb"] and len(devices) > 1:
            sparse_buf = 0.0
            if sparse:
                traffic = compression_costs.current()
                sparse_buf = sum(traffic(self.profile.layer(n), "sparse", shares,
                                         self.profile.batch_size).buffer_bytes for n in sparse)
            sfb = self.sfb_layers(devices, shares, sparse_buf)
        else:
            sfb = []
        for name in sfb:
            schemes[name] = "sfb"
        if dense != "allreduce":
            for layer in self.profile.layers:
                if layer.name not in schemes and layer.trainable_bytes:
                    schemes[layer.name] = dense
        cap = opt["buckets"]
        buckets = self._buckets(cap, schemes) if cap is not None else []  # None: no groups
        return Strategy(devices=list(devices), batch_shares=shares, groups=groups,
                        buckets=buckets, schemes=schemes)

    def _buckets(self, cap: float, schemes: dict[str, str]) -> list[list[str]]:
        """Trained parameters in backward order, a bucket closed before it would exceed ``cap``
        bytes (layers under SFB or sparse travel by all-gather and are left out, as are frozen
        parameters: they have no gradient to all-reduce)."""
        buckets: list[list[str]] = []
        cur: list[str] = []
        size = 0.0
        for layer in reversed(self.profile.layers):
            if schemes.get(layer.name) in ("sfb", "sparse"):
                continue
            for p in layer.params:
                if not p.trainable:
                    continue
                if cur and size + p.nbytes > cap:
                    buckets.append(cur)
                    cur, size = [], 0.0
                cur.append(p.name)
                size += p.nbytes
        if cur:
            buckets.append(cur)
        return buckets

    def simulate(self, strategy: Strategy, timeline: bool = False) -> SimResult:
        """Run the simulator on ``strategy`` with this space's settings (not cached, not counted):
        under :attr:`horovod` (Horovod's loop), or with fixed buckets when it is ``None``."""
        return simulate(self.topo, self.profile, strategy, bucket_bytes=BASELINE_BUCKET_BYTES,
                        timeline=timeline, horovod=self.horovod)

    def evaluate_strategy(self, strategy: Strategy | None) -> Evaluation:
        """Simulate ``strategy`` once (cached on its JSON; each miss counts in ``self.sims``)."""
        if strategy is None:
            return Evaluation(Strategy(["-"], [1]), math.inf)
        key = json.dumps(strategy.to_dict(), sort_keys=True)
        hit = self._cache.get(key)
        if hit is None:
            self.sims += 1
            res = self.simulate(strategy)
            t = math.inf if res.oom else res.step_time
            hit = Evaluation(strategy, t, res)
            self._cache[key] = hit
        return hit

    def evaluate(self, assignment: Sequence[int], sfb_override: Sequence[str] | None = None,
                 sparse_override: Sequence[str] | None = None) -> Evaluation:
        """Build and simulate ``assignment`` (see :meth:`build` for the overrides)."""
        return self.evaluate_strategy(self.build(assignment, sfb_override, sparse_override))

    def time(self, assignment: Sequence[int]) -> float:
        """Simulated step time of ``assignment`` (``inf`` when it does not fit)."""
        return self.evaluate(assignment).step_time

    @property
    def baseline_assignment(self) -> tuple[int, ...]:
        return tuple(d.default for d in self.decisions)

    def baseline(self) -> Strategy:
        """Plain data parallelism: every device, even shares, ring all-reduce, no groups, no
        compression."""
        n = len(self.order)
        base, extra = divmod(self.global_batch, n)
        shares = [base + (1 if r < extra else 0) for r in range(n)]
        return Strategy(devices=list(self.order), batch_shares=shares)

    def baseline_time(self) -> float:
        """Step time of :meth:`baseline` (``inf`` if it runs out of memory)."""
        return self.evaluate_strategy(self.baseline()).step_time

    def size(self) -> int:
        """Number of assignments."""
        return math.prod(len(d.options) for d in self.decisions)

    def decode(self, *labels: str) -> tuple[int, ...]:
        """The baseline assignment with the options named by ``labels`` switched on."""
        out = list(self.baseline_assignment)
        for label in labels:
            for k, d in enumerate(self.decisions):
                if label in d.labels():
                    out[k] = d.labels().index(label)
                    break
            else:
                raise PlanError(f"no option {label!r}; options are "
                                f"{ {d.key: d.labels() for d in self.decisions} }")
        return tuple(out)

    # ----------------------------------------------------------------- decisions
    def _ring_time(self, nbytes: float, devices: Sequence[str]) -> float:
        return collectives.ring_allreduce(nbytes, self.topo, list(devices))

    def _compute_time(self, devices: Sequence[str]) -> float:
        """Compute seconds of one step when the batch is split in proportion to speed."""
        flops = sum(self.topo.device(d).flops for d in devices)
        return self.compute_per_sample * self.global_batch / flops

    def comm_ratio(self, devices: Sequence[str]) -> float:
        """log10 of (ring all-reduce of all gradients) / (balanced compute time)."""
        return _clip(_log10(self._ring_time(self.profile.param_bytes, devices)
                            / max(self._compute_time(devices), 1e-12)))

    def _device_sets(self, check_fit: bool = True) -> list[tuple[str, list[str]]]:
        """The device sets to choose from (with ``check_fit``: those that hold the global batch,
        and all devices)."""
        topo, order = self.topo, self.order
        sets: list[tuple[str, list[str]]] = [("all devices", list(order))]
        if self.all_devices:
            return sets
        tiers = sorted({topo.device(d).flops for d in order}, reverse=True)
        for t in tiers[:-1]:
            keep = [d for d in order if topo.device(d).flops >= t]
            sets.append((f"devices >= {t / 1e12:g} TFLOP/s", keep))
        hosts = self.topo.hosts()
        if len(hosts) > 1:
            # the k strongest hosts (by FLOP/s), k = 1 .. hosts - 1
            ranked = sorted(hosts, key=lambda h: -sum(topo.device(d).flops for d in hosts[h]))
            for k in range(1, len(ranked)):
                keep_hosts = set(ranked[:k])
                label = f"host {ranked[0]}" if k == 1 else f"{k} fastest hosts"
                sets.append((label, [d for d in order if topo.device(d).host in keep_hosts]))
        islands = [i for i in topo.islands() if len(i) > 1]
        if len(islands) > 1:
            best_i = max(islands, key=lambda i: sum(topo.device(d).flops for d in i))
            sets.append((f"NVLink island of {best_i[0]}", [d for d in order if d in best_i]))
        out, seen = [], set()
        for label, devs in sets:
            key = tuple(devs)
            if key in seen or not devs:
                continue
            if check_fit and label != "all devices" and self.shares(devs, "balanced") is None:
                continue  # cannot hold the global batch
            seen.add(key)
            out.append((label, devs))
        return out[:MAX_DEVICE_SETS]

    def _make_decisions(self) -> list[Decision]:
        topo, prof, order = self.topo, self.profile, self.order
        n_all = len(order)
        flops_all = sum(topo.device(d).flops for d in order)
        n_hosts = len(topo.hosts())
        ratio_all = self.comm_ratio(order)
        decisions = []

        opts = []
        for label, devs in self._device_sets():
            caps = sum(min(self.capacity(d), self.global_batch) for d in devs)
            feats = (len(devs) / n_all,
                     sum(topo.device(d).flops for d in devs) / flops_all,
                     self.comm_ratio(devs) / 3,
                     len({topo.device(d).host for d in devs}) / n_hosts,
                     1.0 if len(devs) == n_all else 0.0,
                     min(caps / self.global_batch, 4.0) / 4)
            opts.append(Option(label, devs, feats))
        decisions.append(Decision("devices", "devices taking part", tuple(opts), 0))

        flops = [topo.device(d).flops for d in order]
        mean = sum(flops) / n_all
        cv = math.sqrt(sum((f / mean - 1) ** 2 for f in flops) / n_all)  # no overflow at 1e308
        pressure = self.global_batch * self.act_per_sample / max(
            sum(topo.device(d).memory for d in order), 1)
        opts = [Option(m, m, (float(m == "even"), float(m == "halfway"), float(m == "balanced"),
                              cv, min(pressure, 1.0), 0.0)) for m in SHARE_MODES]
        decisions.append(Decision("shares", "batch share per device", tuple(opts), 0))

        ring = self._ring_time(prof.param_bytes, order)
        opts = [Option("flat ring", "ring", (1.0, 0.0, 0.0, 0.0, 1.0 / n_all, 0.0))]
        for how, label in (("host", "hierarchical by host"),
                           ("island", "hierarchical by NVLink island")):
            gs = self.groups(order, how)
            if not gs:
                continue
            if any(self.groups(order, o.value) == gs for o in opts):
                continue
            groups = [[order[r] for r in g] for g in gs]
            hier = collectives.hierarchical_allreduce(prof.param_bytes, topo, groups)
            opts.append(Option(label, how, (0.0, float(how == "host"), float(how == "island"),
                                            _clip(_log10(hier / max(ring, 1e-12))),
                                            len(gs) / n_all, 0.0)))
        decisions.append(Decision("reduction", "device grouping", tuple(opts), 0))

        opts = []
        if self.horovod is not None:
            # plain Horovod: each tensor on its own, the loop fuses a tick's up to the threshold
            fusion = max(self.horovod.fusion_bytes, 1.0)
            opts.append(Option(f"no groups ({fusion / MiB:g} MiB Horovod fusion)", None,
                               (math.log2(max(fusion / MiB, 1.0)) / 8,
                                _log10(prof.param_bytes / fusion) / 3, len(prof.layers) / 100,
                                ratio_all / 3, 1.0, 0.0)))
        for mib in BUCKET_CHOICES_MIB:
            opts.append(Option(f"{mib} MiB buckets", mib * MiB,
                               (math.log2(mib) / 8, _log10(prof.param_bytes / (mib * MiB)) / 3,
                                len(prof.layers) / 100, ratio_all / 3, 0.0, 0.0)))
        default = 0 if self.horovod is not None else \
            BUCKET_CHOICES_MIB.index(BASELINE_BUCKET_BYTES // MiB)
        decisions.append(Decision("buckets", "tensor grouping", tuple(opts), default))

        even = [self.global_batch / n_all] * n_all
        sparse = self.sparse_layers(even)
        frac = sum(prof.layer(n).param_bytes for n in sparse) / prof.param_bytes
        opts = [Option("no sparse", False, (0.0, 0.0, 0.0, ratio_all / 3, 0.0, 0.0))]
        opts.append(Option("sparse embeddings", True, (1.0, frac, float(bool(sparse)),
                                                        ratio_all / 3, 0.0, 0.0)))
        decisions.append(Decision("sparse", "sparse embedding gradients", tuple(opts), 0))

        cands = self.sfb_candidates()
        pays = []
        extra = 0.0
        for ln in cands:
            t = ln.tokens * self.global_batch / prof.batch_size
            m, k = ln.in_features or 0, ln.out_features or 0
            if n_all > 1 and t * (m + k) < 2 * m * k:
                pays.append(ln)
                extra += 2 * t * m * k
        frac = sum(ln.param_bytes for ln in pays) / prof.param_bytes
        opts = [Option("no SFB", False, (0.0, 0.0, 0.0, ratio_all / 3, 0.0, 0.0)),
                Option("SFB by integer program", True,
                       (1.0, frac, float(bool(pays)), ratio_all / 3,
                        _clip(_log10(extra / max(self.compute_per_sample * self.global_batch,
                                                 1e-12))) / 3, 0.0))]
        decisions.append(Decision("sfb", "sufficient factor broadcasting", tuple(opts), 0))
        return decisions


def _trains_weight(layer: LayerProfile) -> bool:
    """Whether the layer's weight matrix is trained: a frozen one has no gradient for SFB or
    sparse rows to carry (and ``stitchlab.horovod`` refuses those schemes on it)."""
    return any(p.trainable and len(p.shape) == 2 for p in layer.params)


def check_profile_matches(profile: ModelProfile, strategy: Strategy) -> None:
    """Raise :class:`PlanError` when ``strategy`` names layers or parameters ``profile`` lacks."""
    names = {ln.name for ln in profile.layers}
    for layer in strategy.schemes:
        if layer not in names:
            raise PlanError(f"the plan names layer {layer!r}, which model {profile.name!r} lacks; "
                            "the plan was made for another model: re-plan")
    for bucket in strategy.buckets:
        for p in bucket:
            try:
                profile.owner(p)
            except ProfileError:
                raise PlanError(f"the plan's bucket names parameter {p!r}, which model "
                                f"{profile.name!r} lacks; re-plan for this model") from None
