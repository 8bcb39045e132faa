"""A deterministic simulator of one data-parallel training iteration.

Model of one step (all ranks run the same layers on their own batch share):

1. **Compute.** Rank r's layer times are the profile's, scaled by its batch share and speed:
   ``t · (b_r / B) · (profile.device_flops / device.flops)``. Forward runs all layers, then
   backward in reverse order on one compute queue per device.
2. **Gradient communication** runs on one communication queue (like Horovod's background thread
   or NCCL's stream), overlapping backward (not on CPU devices, by default: there the
   collectives run on the cores that compute). Parameters are grouped into buckets (the strategy's
   ``buckets``; the rest greedily in backward order up to ``bucket_bytes``). A bucket is sent when
   its last gradient is ready *on every rank* and the queue is free; it costs an all-reduce on the
   topology (ring, tree or hierarchical over ``strategy.groups``, bottleneck-link aware, see
   :mod:`stitchlab.topology.collectives`). Layers under ``"sfb"`` or ``"sparse"`` leave the buckets
   and each all-gathers what :mod:`stitchlab.topology.compression_costs` says.
   With ``horovod=HorovodCycle(...)`` gradients go the way Horovod's background thread sends them
   instead: negotiated at the loop's ticks, one every cycle, and the tensors of one tick fused into
   buffers of at most the fusion threshold (:class:`HorovodCycle`); ``strategy.buckets`` are then
   Horovod groups (their tensors submitted together), not fusion buffers.
3. **After the exchange**, each rank rebuilds the SFB gradients (extra compute on its queue, at
   the matmul efficiency the profile's linear layers achieved) and runs the optimizer. The step
   ends when the last rank is done.
4. **Memory** per rank: weights, gradients, optimizer state, activations of its batch share, the
   largest fusion bucket and the gather buffers. Over a device's memory: ``oom=True``.

Same inputs, same result (no randomness, no clocks); no torch.

Example:
    >>> from stitchlab.topology import presets, simulate, Strategy
    >>> from stitchlab.topology.profile import ModelProfile, LayerProfile, ParamInfo
    >>> prof = ModelProfile("mlp", batch_size=32, device="H200", device_flops=989e12, layers=[
    ...     LayerProfile("fc", "linear", [ParamInfo("fc.weight", (1024, 1024))], 1e-3, 2e-3)])
    >>> topo = presets.get("dgx-h200")
    >>> res = simulate(topo, prof, Strategy(topo.ids, [32] * 8))
    >>> round(res.step_time * 1e3, 3)   # 3 ms compute + ring all-reduce of 4 MiB
    3.044
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from . import collectives, compression_costs
from .devices import DeviceTopology
from .errors import DoesNotFitError, ProfileError
from .profile import ModelProfile, ParamInfo
from .strategy import Strategy

ALLREDUCE_ALGORITHMS = ("ring", "tree", "auto")


@dataclass(frozen=True)
class HorovodCycle:
    """Horovod's background loop, for ``simulate(..., horovod=HorovodCycle(...))``.

    Horovod does not send a gradient when it is ready. Its background thread wakes once per
    ``cycle_time`` (``HOROVOD_CYCLE_TIME``; 1 ms since Horovod 0.21), whether or not there is work
    (the loop sleeps until a cycle after the previous tick); at a tick the ranks negotiate the
    tensors all of them submitted since, and the tensors of that tick are fused, in the order they
    became ready, into buffers of at most ``fusion_bytes`` (``HOROVOD_FUSION_THRESHOLD``; 128 MiB
    since 0.21; a larger tensor goes alone). The transfers are queued on the communication stream,
    behind the previous ticks' transfers, so the cycle is paid once per round of negotiation, not
    once per buffer.

    Attributes:
        cycle_time: seconds between ticks.
        fusion_bytes: the fusion threshold in bytes.
        overhead: seconds a round spends after its tick before its first transfer can start
            (negotiation, launch), when ``cycle_time`` is known apart from it; 0 when the
            calibrated cycle includes it.
        first_tick: when the first tick after the first gradient comes, in cycles: 1.0 (default)
            a full cycle later, as for a lone all-reduce issued just after a tick (what the
            calibration measures: it starts each timing right after a barrier, itself an
            operation of the loop); 0.5 the mean wait of a loop whose phase is random. The
            later ticks follow every ``cycle_time``.

    Example:
        >>> HorovodCycle(1e-3).fusion_bytes == 128 * 2**20
        True
    """

    cycle_time: float
    fusion_bytes: float = 128 * 2**20
    overhead: float = 0.0
    first_tick: float = 1.0

    def __post_init__(self) -> None:
        if not 0 <= self.cycle_time < math.inf or not 0 <= self.overhead < math.inf:
            raise ValueError(f"HorovodCycle(cycle_time={self.cycle_time!r}, "
                             f"overhead={self.overhead!r}): both must be >= 0 seconds, and finite")
        if not 0 <= self.fusion_bytes < math.inf:
            raise ValueError(f"HorovodCycle(fusion_bytes={self.fusion_bytes!r}) must be >= 0 bytes, "
                             "and finite (0: no fusion, as HOROVOD_FUSION_THRESHOLD=0)")
        if not 0 < self.first_tick <= 1:
            raise ValueError(f"HorovodCycle(first_tick={self.first_tick!r}) must be in (0, 1] "
                             "cycles (1: a full cycle after the first gradient)")


#: Horovod 0.28.1's own settings (``HOROVOD_CYCLE_TIME`` 1 ms, ``HOROVOD_FUSION_THRESHOLD``
#: 128 MiB): the loop to simulate when no calibration says otherwise
#: (:meth:`stitchlab.topology.calibrate.HorovodFit.cycle_model` gives a measured one).
HOROVOD_DEFAULTS = HorovodCycle(1e-3)


@dataclass(frozen=True)
class CommRecord:
    """One collective of the step: a bucket all-reduce or a layer's all-gather.

    ``nbytes`` is the all-reduced message (bucket) or the total gathered bytes; ``ready`` is when
    its data was ready on every rank; ``start``/``end`` on the communication queue. Under
    :class:`HorovodCycle`, ``tick`` is the tick of Horovod's loop that negotiated it (``None``
    otherwise) and a record is one fusion buffer.
    """

    name: str
    scheme: str
    layers: tuple[str, ...]
    nbytes: float
    ready: float
    start: float
    end: float
    tick: float | None = None

    @property
    def duration(self) -> float:
        return self.end - self.start


@dataclass(frozen=True)
class Event:
    """A span on a resource (a device id or ``"comm"``) for the timeline view."""

    resource: str
    name: str
    kind: str
    start: float
    end: float


@dataclass
class SimResult:
    """What :func:`simulate` returns.

    Attributes:
        step_time: seconds from the start of forward to the end of the last optimizer step.
        compute: busy compute seconds per device id (forward + backward + rebuild + optimizer).
        comm: the collectives in the order they ran.
        comm_time: sum of their durations.
        exposed_comm: the part of the step during which the slowest device waits on
            communication (``step_time`` minus that device's busy time).
        memory_peak: peak bytes per device id; ``memory_limit`` its memory.
        oom: some device's peak exceeds its memory; ``oom_devices`` names them.
        timeline: spans for display (empty when ``simulate(..., timeline=False)``).
    """

    step_time: float
    compute: dict[str, float]
    comm: list[CommRecord]
    comm_time: float
    exposed_comm: float
    memory_peak: dict[str, float]
    memory_limit: dict[str, float]
    oom: bool
    oom_devices: list[str]
    timeline: list[Event] = field(default_factory=list)

    def comm_by_layer(self) -> dict[str, float]:
        """Communication seconds per layer (a bucket's time split evenly over its layers)."""
        out: dict[str, float] = {}
        for c in self.comm:
            for layer in c.layers:
                out[layer] = out.get(layer, 0.0) + c.duration / len(c.layers)
        return out

    def summary(self) -> str:
        slow = max(self.compute, key=self.compute.get)
        lines = [
            f"step {self.step_time * 1e3:.3f} ms; slowest device {slow!r} computes "
            f"{self.compute[slow] * 1e3:.3f} ms; {len(self.comm)} collectives, "
            f"{self.comm_time * 1e3:.3f} ms on the wire, {self.exposed_comm * 1e3:.3f} ms exposed",
        ]
        peak = max(self.memory_peak, key=self.memory_peak.get)
        lines.append(f"memory peak {self.memory_peak[peak] / 2**30:.2f} GiB on {peak!r} of "
                     f"{self.memory_limit[peak] / 2**30:.2f} GiB"
                     + (f"; OUT OF MEMORY on {', '.join(self.oom_devices)}" if self.oom else ""))
        return "\n".join(lines)


@dataclass
class _Unit:
    name: str
    scheme: str
    layers: list[str]
    nbytes: float
    ready_index: int  # position in backward order of the layer whose gradient completes it
    gather: compression_costs.SchemeTraffic | None = None


def _buckets(profile: ModelProfile, strategy: Strategy, bucket_bytes: float,
             first_bucket_bytes: float | None, tensors: bool = False) -> list[_Unit]:
    """The all-reduce units in backward order: one per bucket, or with ``tensors`` one per
    parameter (Horovod's tensors), a bucket's parameters all ready when its last one is (a
    Horovod group is submitted when all its gradients are; its tensors are then fused like any
    others, up to the threshold)."""
    backward = list(reversed(profile.layers))
    position = {layer.name: i for i, layer in enumerate(backward)}
    for name in strategy.schemes:
        profile.layer(name)  # unknown layer names fail here, naming the layer
    units: list[_Unit] = []
    placed: set[str] = set()
    for i, names in enumerate(strategy.buckets):
        layers: list[str] = []
        nbytes = 0.0
        schemes = set()
        members: list[tuple[str, float]] = []  # (layer, bytes) per parameter
        for pname in names:
            owner = profile.owner(pname)
            if strategy.scheme(owner) in ("sfb", "sparse"):
                continue  # travels by all-gather instead
            if not _param(profile, owner, pname).trainable:
                continue  # frozen: no gradient
            if pname in placed:
                raise ProfileError(f"parameter {pname!r} is in two buckets; list it once")
            placed.add(pname)
            schemes.add(strategy.scheme(owner))
            if owner not in layers:
                layers.append(owner)
            members.append((owner, _param(profile, owner, pname).nbytes))
            nbytes += members[-1][1]
        if len(schemes) > 1:
            raise ProfileError(
                f"bucket {i} mixes schemes {sorted(schemes)} (layers {layers}); a bucket is one "
                "collective: split it, or give its layers the same scheme"
            )
        if not layers:
            continue
        scheme, ready = schemes.pop(), max(position[ln] for ln in layers)
        if tensors:
            units += [_Unit(f"bucket{i}.{k}", scheme, [ln], b, ready)
                      for k, (ln, b) in enumerate(members)]
        else:
            units.append(_Unit(f"bucket{i}", scheme, layers, nbytes, ready))
    # the rest: greedy fusion in backward order, like DDP / Horovod's fusion buffer
    cur: _Unit | None = None
    cap = first_bucket_bytes if first_bucket_bytes is not None else bucket_bytes
    for j, layer in enumerate(backward):
        scheme = strategy.scheme(layer.name)
        if scheme in ("sfb", "sparse"):
            continue
        for p in layer.params:
            if p.name in placed or not p.trainable:
                continue
            if cur is not None and (cur.scheme != scheme or cur.nbytes + p.nbytes > cap):
                units.append(cur)
                cur = None
                cap = bucket_bytes
            if cur is None:
                cur = _Unit(f"bucket{len(units)}", scheme, [], 0.0, j)
            cur.nbytes += p.nbytes
            cur.ready_index = j
            if layer.name not in cur.layers:
                cur.layers.append(layer.name)
    if cur is not None:
        units.append(cur)
    return units


def ddp_buckets(profile: ModelProfile, bucket_bytes: float = 25 * 2**20,
                first_bucket_bytes: float = 2**20) -> list[list[str]]:
    """The buckets ``torch.nn.parallel.DistributedDataParallel`` forms: parameters in reverse
    order, a bucket closes once it reaches its cap (the first cap is ``first_bucket_bytes``), so a
    bucket may exceed its cap by its last tensor. Pass the result as ``Strategy.buckets`` to
    simulate DDP."""
    buckets: list[list[str]] = []
    cur: list[str] = []
    size, cap = 0.0, first_bucket_bytes
    for layer in reversed(profile.layers):
        for p in reversed(layer.params):
            if not p.trainable:
                continue
            cur.append(p.name)
            size += p.nbytes
            if size >= cap:
                buckets.append(cur)
                cur, size, cap = [], 0.0, bucket_bytes
    if cur:
        buckets.append(cur)
    return buckets


def _param(profile: ModelProfile, layer: str, pname: str) -> ParamInfo:
    for p in profile.layer(layer).params:
        if p.name == pname:
            return p
    raise ProfileError(f"parameter {pname!r} is not in layer {layer!r} of the profile")


def simulate(
    topo: DeviceTopology,
    profile: ModelProfile,
    strategy: Strategy,
    global_batch: float | None = None,
    *,
    allreduce: str = "ring",
    bucket_bytes: float = 25 * 2**20,
    first_bucket_bytes: float | None = None,
    overlap: bool | str = "auto",
    timeline: bool = True,
    on_oom: str = "flag",
    horovod: HorovodCycle | None = None,
) -> SimResult:
    """Simulate one training step of ``profile`` under ``strategy`` on ``topo``.

    Args:
        topo: the devices and links.
        profile: the model's per-layer profile.
        strategy: devices (rank order), batch shares, groups, buckets and per-layer schemes.
        global_batch: samples per step over all ranks; rank r gets
            ``global_batch · share_r / Σ shares``. Default: the shares are the sample counts.
        allreduce: flat all-reduce algorithm: ``"ring"``, ``"tree"`` or ``"auto"`` (the cheaper).
        bucket_bytes: fusion size for parameters not in ``strategy.buckets`` (DDP: 25 MiB).
        first_bucket_bytes: a smaller first bucket (DDP uses 1 MiB); default ``bucket_bytes``.
        overlap: overlap communication with backward; ``False``: communicate after backward;
            ``"auto"`` (default): overlap unless a device is a CPU, whose collectives run on the
            cores that compute (measured: docs/topology.md, section 6).
        timeline: record spans in ``SimResult.timeline`` (turn off in search loops).
        on_oom: ``"flag"`` (set ``oom``) or ``"raise"`` (:class:`DoesNotFitError`).
        horovod: simulate Horovod's background loop (:class:`HorovodCycle`): each parameter is
            its own tensor, negotiated at the first tick after it is ready on every rank (a
            parameter of a ``strategy.buckets`` entry, a Horovod group, when the group's last one
            is) and fused with that tick's other tensors up to the fusion threshold
            (``bucket_bytes`` and ``first_bucket_bytes`` are not used). One rank sends nothing
            (Horovod's optimizer registers no hooks at size 1). Default: no cycle; a bucket is
            sent as soon as it is ready (DDP, NCCL).

    Returns:
        A :class:`SimResult`.
    """
    for value, cls, name in ((topo, DeviceTopology, "topo"), (profile, ModelProfile, "profile"),
                             (strategy, Strategy, "strategy")):
        if not isinstance(value, cls):
            raise TypeError(f"simulate's {name} must be a {cls.__name__}, got "
                            f"{type(value).__name__}")
    if allreduce not in ALLREDUCE_ALGORITHMS:
        raise ValueError(f"allreduce={allreduce!r}; expected one of {ALLREDUCE_ALGORITHMS}")
    if on_oom not in ("flag", "raise"):
        raise ValueError(f"on_oom={on_oom!r}; expected 'flag' or 'raise'")
    if overlap not in (True, False, "auto"):
        raise ValueError(f"overlap={overlap!r}; expected True, False or 'auto'")
    devs = [topo.device(d) for d in strategy.devices]
    if overlap == "auto":
        overlap = all(d.kind != "cpu" for d in devs)
    ids = tuple(strategy.devices)
    if len(set(ids)) != len(ids):
        raise ProfileError(f"strategy names a device twice: {list(ids)}")
    shares = strategy.batch_shares
    total = float(sum(shares))
    if global_batch is not None and not 0 < global_batch < math.inf:
        raise ValueError(f"global_batch={global_batch!r} must be a positive finite number of "
                         "samples per step")
    batches = [s * (global_batch / total) if global_batch else float(s) for s in shares]
    pb = profile.batch_size
    speed = [profile.device_flops / d.flops for d in devs]
    scale = [b / pb * sp for b, sp in zip(batches, speed, strict=True)]

    # compute: forward, then backward in reverse layer order (prefix sums on the profile device)
    fwd = profile.forward_time
    bwd_done = []  # cumulative backward time after each layer in backward order
    acc = 0.0
    for layer in reversed(profile.layers):
        acc += layer.backward_time
        bwd_done.append(acc)
    bwd_total = acc
    s_max = max(scale)

    # communication units, in the order their data becomes ready
    if horovod is not None and len(ids) == 1:
        horovod = None  # Horovod's optimizer registers no hooks at size 1: nothing is sent
    if horovod is not None:  # one unit per tensor: fusion happens per tick, below
        units = _buckets(profile, strategy, 0.0, None, tensors=True)
    else:
        units = _buckets(profile, strategy, bucket_bytes, first_bucket_bytes)
    backward = list(reversed(profile.layers))
    traffic = compression_costs.current()
    for j, layer in enumerate(backward):
        scheme = strategy.scheme(layer.name)
        if scheme in ("sfb", "sparse"):
            g = traffic(layer, scheme, batches, pb)
            units.append(_Unit(layer.name, scheme, [layer.name], sum(g.gather_bytes), j, g))
    units.sort(key=lambda u: u.ready_index)

    groups = [tuple(ids[r] for r in g) for g in strategy.groups] if strategy.groups else None
    backward_end = s_max * (fwd + bwd_total)
    ready_at = [s_max * (fwd + bwd_done[u.ready_index]) if overlap else backward_end
                for u in units]
    sent: list[tuple[CommRecord, _Unit]] = []  # each collective and what it carries
    if horovod is not None:
        sent = _horovod_rounds(topo, ids, units, ready_at, horovod, allreduce, groups)
    else:
        free = 0.0
        for u, ready in zip(units, ready_at, strict=True):
            cost = _cost(topo, ids, u, allreduce, groups)
            start = max(ready, free)
            free = start + cost
            sent.append((CommRecord(u.name, u.scheme, tuple(u.layers), u.nbytes, ready, start,
                                    free), u))
    comm = [c for c, _ in sent]
    comm_end = max((c.end for c in comm), default=0.0)

    # per rank: rebuild SFB gradients, then the optimizer
    events: list[Event] = []
    busy: dict[str, float] = {}
    finish = 0.0
    gathers = [(c, u) for c, u in sent if u.gather is not None]
    efficiency = profile.matmul_efficiency() if gathers else 1.0
    for r, dev in enumerate(devs):
        f_end = scale[r] * fwd
        t = scale[r] * (fwd + bwd_total)
        work = t
        if timeline:
            events.append(Event(dev.id, "forward", "forward", 0.0, f_end))
            events.append(Event(dev.id, "backward", "backward", f_end, t))
        for c, u in gathers:
            extra = u.gather.extra_flops[r] / (dev.flops * efficiency)
            if extra > 0:
                start = max(t, c.end)
                t = start + extra
                work += extra
                if timeline:
                    events.append(Event(dev.id, f"rebuild {u.name}", "rebuild", start, t))
        start = max(t, comm_end)
        opt = profile.optimizer_time * speed[r]
        t = start + opt
        work += opt
        if timeline and opt > 0:
            events.append(Event(dev.id, "optimizer", "optimizer", start, t))
        busy[dev.id] = work
        finish = max(finish, t)
    if timeline:
        events += [Event("comm", c.name, c.scheme, c.start, c.end) for c in comm]

    # memory
    static = profile.static_bytes
    fusion = max((u.nbytes for _, u in sent if u.gather is None), default=0.0)
    gather_buf = sum(u.gather.buffer_bytes for _, u in sent if u.gather is not None)
    peaks: dict[str, float] = {}
    limits: dict[str, float] = {}
    oom_devices = []
    for b, dev in zip(batches, devs, strict=True):
        peak = static + profile.activation_bytes * b / pb + fusion + gather_buf
        peaks[dev.id] = peak
        limits[dev.id] = float(dev.memory)
        if peak > dev.memory:
            oom_devices.append(dev.id)
    if oom_devices and on_oom == "raise":
        d = oom_devices[0]
        raise DoesNotFitError(
            f"device {d!r} needs {peaks[d] / 2**30:.2f} GiB at batch share "
            f"{batches[ids.index(d)]:g} but has {limits[d] / 2**30:.2f} GiB; give it a smaller "
            "share or leave it out"
        )
    slowest = max(busy.values())
    return SimResult(
        step_time=finish,
        compute=busy,
        comm=comm,
        comm_time=sum(c.duration for c in comm),
        exposed_comm=max(0.0, finish - slowest),
        memory_peak=peaks,
        memory_limit=limits,
        oom=bool(oom_devices),
        oom_devices=oom_devices,
        timeline=events,
    )


def _tick_index(ready: float, first_tick: float, cycle: float) -> int:
    """Index of the first tick at or after ``ready`` (ticks at ``first_tick + k·cycle``)."""
    if ready <= first_tick or cycle <= 0:
        return 0
    return math.ceil((ready - first_tick) / cycle - 1e-9)


def _fuse(units: list[_Unit], threshold: float) -> list[list[int]]:
    """Horovod's tensor fusion of one tick's tensors (given in the order they became ready), as
    lists of positions: a buffer takes the first tensor left and then each later one (an
    all-reduce of the same scheme) that still fits under ``threshold``; those that do not fit
    wait for the next buffer. A tensor above the threshold goes alone; all-gathers are not
    fused."""
    left = list(range(len(units)))
    buffers: list[list[int]] = []
    while left:
        head = units[left[0]]
        buf, size, rest = [left[0]], head.nbytes, []
        for i in left[1:]:
            u = units[i]
            if (head.gather is None and u.gather is None and u.scheme == head.scheme
                    and size + u.nbytes <= threshold):
                buf.append(i)
                size += u.nbytes
            else:
                rest.append(i)
        buffers.append(buf)
        left = rest
    return buffers


def _horovod_rounds(topo: DeviceTopology, ids: tuple[str, ...], units: list[_Unit],
                    ready_at: list[float], cycle: HorovodCycle, algorithm: str,
                    groups: Sequence[tuple[str, ...]] | None) -> list[tuple[CommRecord, _Unit]]:
    """The collectives Horovod's loop issues: tensors grouped by the tick that negotiates them,
    fused per tick, each buffer queued on the one communication queue after its tick (plus the
    round's ``overhead``) and after the buffers before it."""
    if not units:
        return []
    first = min(ready_at) + cycle.first_tick * cycle.cycle_time
    rounds: dict[float, list[int]] = {}
    for i, ready in enumerate(ready_at):
        if cycle.cycle_time > 0:
            tick = first + _tick_index(ready, first, cycle.cycle_time) * cycle.cycle_time
        else:  # no loop to wait for: the tensors ready together go together
            tick = ready
        rounds.setdefault(tick, []).append(i)
    sent: list[tuple[CommRecord, _Unit]] = []
    free = 0.0
    for k, tick in enumerate(sorted(rounds)):
        members = sorted(rounds[tick], key=lambda i: (ready_at[i], i))
        for j, buf in enumerate(_fuse([units[i] for i in members], cycle.fusion_bytes)):
            parts = [units[members[b]] for b in buf]
            gather = parts[0].gather if len(parts) == 1 else None
            fused = _Unit(parts[0].name if gather is not None else f"round{k}.{j}",
                          parts[0].scheme, list(dict.fromkeys(ln for u in parts for ln in u.layers)),
                          sum(u.nbytes for u in parts), max(u.ready_index for u in parts), gather)
            start = max(tick + cycle.overhead, free)
            free = start + _cost(topo, ids, fused, algorithm, groups)
            ready = max(ready_at[members[b]] for b in buf)
            sent.append((CommRecord(fused.name, fused.scheme, tuple(fused.layers), fused.nbytes,
                                    ready, start, free, tick), fused))
    return sent


def _cost(topo: DeviceTopology, ids: tuple[str, ...], u: _Unit, algorithm: str,
          groups: Sequence[tuple[str, ...]] | None) -> float:
    if u.gather is not None:
        return collectives.allgather(u.gather.gather_bytes, topo, ids)
    if u.scheme == "hierarchical":
        return collectives.hierarchical_allreduce(u.nbytes, topo, groups or
                                                  collectives._groups_by_host(topo, ids))
    if algorithm == "ring":
        return collectives.ring_allreduce(u.nbytes, topo, ids)
    if algorithm == "tree":
        return collectives.tree_allreduce(u.nbytes, topo, ids)
    return min(collectives.ring_allreduce(u.nbytes, topo, ids),
               collectives.tree_allreduce(u.nbytes, topo, ids))
