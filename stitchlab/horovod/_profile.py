"""Planner hooks: profiling the first steps, the callback API and the notebook summary of a re-plan.

The profiler times each layer's forward pass (backward is taken as twice that), counts the
tokens every linear layer sees and the distinct rows every embedding touches, times how long a
step blocks in ``synchronize()``, and measures the all-reduce bandwidth, the marginal cost of one
more collective, what an all-gathering (SFB or sparse) layer adds to a step and the
matrix-multiply rate with probes. Everything is averaged (times) or summed (tokens, rows) over
ranks, so every rank holds the same :class:`Profile`.
"""

from __future__ import annotations

import html
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

import horovod.torch as hvd
import torch
from torch import nn

from stitchlab.compression.hooks import layer_input
from stitchlab.topology.strategy import Strategy

from ._layers import SFBReducer


@dataclass
class LayerProfile:
    """One layer's measurements, per optimizer step.

    Attributes:
        name: module name in the model.
        kind: ``"linear"``, ``"embedding"`` or the module's class name.
        forward_s: forward time per step (mean over ranks).
        tokens: input rows of a linear layer per step, all ranks.
        rows: distinct rows an embedding touched per step, summed over ranks.
        grad_bytes: bytes of the layer's own trainable parameters.
        allreduce_s: α-β estimate of all-reducing ``grad_bytes``.
    """

    name: str
    kind: str
    forward_s: float = 0.0
    tokens: int = 0
    rows: int = 0
    grad_bytes: int = 0
    allreduce_s: float = 0.0


@dataclass
class Profile:
    """What the first steps measured. Every rank holds the same values.

    Attributes:
        steps: profiled steps.
        world_size: ranks.
        step_s: wall time of one step (mean over steps and ranks).
        sync_s: time one step blocked in ``synchronize()``.
        bandwidth_bytes_per_s: per-rank all-reduce bandwidth (:func:`measure_collective`).
        latency_s: latency of one message (0: folded into the other terms).
        flops_per_s: rate of the SFB rebuild matmul (:func:`measure_matmul`).
        op_overhead_s: marginal cost of one more all-reduce issued with the others.
        gather_overhead_s: what one more all-gathering layer (SFB or sparse) adds to a step: its
            hooks, its two all-gathers issued and waited on as the optimizer does, the rebuild of
            a small layer (:func:`measure_gather`). The planner charges it to every SFB and
            sparse layer instead of ``op_overhead_s``. ``None``: not measured.
        gather_step_s: what a step pays once when any layer all-gathers (the first layer's cost
            beyond ``gather_overhead_s``: Horovod fuses the all-gathers issued together into one
            operation).
        layers: per-layer measurements by module name.
    """

    steps: int
    world_size: int
    step_s: float
    sync_s: float
    bandwidth_bytes_per_s: float
    latency_s: float
    flops_per_s: float
    op_overhead_s: float = 0.0
    layers: dict[str, LayerProfile] = field(default_factory=dict)
    gather_overhead_s: float | None = None
    gather_step_s: float = 0.0

    def rates(self) -> str:
        """The measured machine rates the planner used, in words."""
        text = (
            f"all-reduce bandwidth {self.bandwidth_bytes_per_s / 1e9:.3g} GB/s, "
            f"{self.op_overhead_s * 1e6:.1f} µs per extra collective, "
            f"rebuild matmul {self.flops_per_s / 1e9:.3g} GFLOP/s"
        )
        if self.gather_overhead_s is not None:
            text += (
                f", all-gathering layer (SFB, sparse) {self.gather_overhead_s * 1e6:.1f} µs each"
                f" + {self.gather_step_s * 1e6:.1f} µs once per step"
            )
        return text

    def _repr_html_(self) -> str:
        e = html.escape
        rows = "".join(
            f"<tr><td>{e(lp.name)}</td><td>{e(lp.kind)}</td><td>{lp.forward_s * 1e3:.3f}</td>"
            f"<td>{lp.tokens}</td><td>{lp.rows}</td><td>{lp.grad_bytes / 1e6:.3f}</td>"
            f"<td>{lp.allreduce_s * 1e3:.3f}</td></tr>"
            for lp in self.layers.values()
        )
        return (
            f"<div><b>Profile of {self.steps} step(s) on {self.world_size} rank(s)</b>: "
            f"step {self.step_s * 1e3:.2f} ms, blocked in synchronize {self.sync_s * 1e3:.2f} ms; "
            f"{html.escape(self.rates())}"
            "<table><tr><th>layer</th><th>kind</th><th>forward ms</th><th>tokens</th>"
            "<th>rows</th><th>grad MB</th><th>all-reduce ms (est.)</th></tr>"
            f"{rows}</table></div>"
        )


@dataclass
class PlanChange:
    """A re-plan: the strategy before and after, why each layer got its scheme, and the trigger.

    Shown as a table in a notebook (``_repr_html_``, every name HTML-escaped).
    """

    trigger: str
    old: Strategy
    new: Strategy
    reasons: dict[str, str] = field(default_factory=dict)
    profile: Profile | None = None

    def changed_layers(self) -> dict[str, tuple[str, str]]:
        """Layer -> (old scheme, new scheme) for the layers whose scheme changed."""
        names = set(self.old.schemes) | set(self.new.schemes)
        return {
            n: (self.old.scheme(n), self.new.scheme(n))
            for n in sorted(names)
            if self.old.scheme(n) != self.new.scheme(n)
        }

    def __str__(self) -> str:
        lines = [f"re-plan ({self.trigger}): world {self.old.world_size} -> {self.new.world_size}"]
        if self.profile is not None:
            lines.append(f"   measured: {self.profile.rates()}")
        changed = self.changed_layers()
        for name in sorted(set(self.reasons) | set(changed)):
            before, after = self.old.scheme(name), self.new.scheme(name)
            mark = "*" if name in changed else " "
            lines.append(f" {mark} {name}: {before} -> {after}  ({self.reasons.get(name, '')})")
        if self.old.batch_shares != self.new.batch_shares:
            lines.append(f"   batch shares {self.old.batch_shares} -> {self.new.batch_shares}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        e = html.escape
        changed = self.changed_layers()
        body = "".join(
            f"<tr{_BOLD if n in changed else ''}>"
            f"<td>{e(n)}</td><td>{e(self.old.scheme(n))}</td><td>{e(self.new.scheme(n))}</td>"
            f"<td>{e(self.reasons.get(n, ''))}</td></tr>"
            for n in sorted(set(self.reasons) | set(changed))
        )
        shares = ""
        if self.old.batch_shares != self.new.batch_shares:
            shares = (
                f"<p>batch shares {e(str(self.old.batch_shares))} → "
                f"{e(str(self.new.batch_shares))}</p>"
            )
        measured = f"<p>measured: {e(self.profile.rates())}</p>" if self.profile else ""
        return (
            f"<div><b>Re-plan</b> ({e(self.trigger)}): {len(changed)} layer(s) changed, world "
            f"{self.old.world_size} → {self.new.world_size}{shares}{measured}"
            "<table><tr><th>layer</th><th>before</th><th>after</th><th>why</th></tr>"
            f"{body}</table></div>"
        )


_BOLD = ' style="font-weight:bold"'


class PlannerCallback(Protocol):
    """The callback API. Implement any subset; missing methods are skipped.

    * ``on_profile(profile)`` after the profiled steps;
    * ``on_plan(change)`` when a new plan is chosen (before it is applied);
    * ``on_apply(optimizer, strategy)`` after the optimizer switched to it.
    """

    def on_profile(self, profile: Profile) -> None: ...

    def on_plan(self, change: PlanChange) -> None: ...

    def on_apply(self, optimizer: Any, strategy: Strategy) -> None: ...


def notify(callbacks: list[Any], event: str, *args: Any) -> None:
    for cb in callbacks:
        method = getattr(cb, event, None)
        if method is not None:
            method(*args)


class StepProfiler:
    """Forward hooks on every module with its own trainable parameters."""

    def __init__(self, model: nn.Module) -> None:
        self.model = model
        self.layers: dict[str, LayerProfile] = {}
        self._starts: dict[str, float] = {}
        self._step_rows: dict[str, list[torch.Tensor]] = {}
        self._hooks = []
        self.steps = 0
        self.step_seconds = 0.0
        self.sync_seconds = 0.0
        # the probes and timings run where the model runs: a CUDA model is timed with CUDA events
        # and its collective probe all-reduces CUDA tensors (NCCL), not host ones (Gloo)
        self.device = next((p.device for p in model.parameters()), torch.device("cpu"))
        self._cuda = self.device.type == "cuda"
        self._events: list[tuple[str, Any, Any]] = []
        self._step_start = time.perf_counter()
        for name, module in model.named_modules():
            own = [p for p in module.parameters(recurse=False) if p.requires_grad]
            if not own:
                continue
            kind = (
                "linear"
                if isinstance(module, nn.Linear)
                else "embedding"
                if isinstance(module, nn.Embedding)
                else type(module).__name__
            )
            self.layers[name] = LayerProfile(
                name, kind, grad_bytes=sum(p.numel() * p.element_size() for p in own)
            )
            self._hooks.append(module.register_forward_pre_hook(self._pre(name)))
            self._hooks.append(module.register_forward_hook(self._post(name), with_kwargs=True))

    def _pre(self, name: str):
        def hook(module: nn.Module, args: tuple) -> None:
            if self._cuda:
                start = torch.cuda.Event(enable_timing=True)
                start.record()
                self._starts[name] = start  # type: ignore[assignment]
            else:
                self._starts[name] = time.perf_counter()

        return hook

    def _post(self, name: str):
        def hook(module: nn.Module, args: tuple, kwargs: dict, output: Any) -> None:
            layer = self.layers[name]
            start = self._starts.pop(name, None)
            if self._cuda:
                if start is not None:
                    end = torch.cuda.Event(enable_timing=True)
                    end.record()
                    self._events.append((name, start, end))  # read at the end of the step
            else:
                layer.forward_s += time.perf_counter() - (start if start is not None else time.perf_counter())
            if not torch.is_grad_enabled():
                return
            if layer.kind == "linear":
                layer.tokens += layer_input(args, kwargs).numel() // module.in_features
            elif layer.kind == "embedding":
                rows = torch.unique(layer_input(args, kwargs).detach())
                self._step_rows.setdefault(name, []).append(rows)

        return hook

    def end_step(self, sync_seconds: float) -> None:
        if self._cuda:
            torch.cuda.synchronize(self.device)
            for name, start, end in self._events:
                self.layers[name].forward_s += start.elapsed_time(end) / 1e3
            self._events.clear()
        now = time.perf_counter()
        self.steps += 1
        self.step_seconds += now - self._step_start
        self.sync_seconds += sync_seconds
        self._step_start = now
        for name, pieces in self._step_rows.items():
            self.layers[name].rows += int(torch.unique(torch.cat(pieces)).numel())
        self._step_rows.clear()

    def remove(self) -> None:
        for h in self._hooks:
            h.remove()
        self._hooks.clear()

    def finish(self) -> Profile:
        """Combine the ranks' measurements (collective: every rank must call it)."""
        self.remove()
        names = sorted(self.layers)
        steps = max(self.steps, 1)
        size = hvd.size()
        times = torch.tensor(
            [self.step_seconds, self.sync_seconds] + [self.layers[n].forward_s for n in names],
            dtype=torch.float64,
        )
        times = hvd.allreduce(times, op=hvd.Average, name="stitchlab.profile.times") / steps
        counts = torch.tensor(
            [self.layers[n].tokens for n in names] + [self.layers[n].rows for n in names],
            dtype=torch.int64,
        )
        counts = hvd.allreduce(counts, op=hvd.Sum, name="stitchlab.profile.counts")
        bandwidth, overhead = measure_collective(device=self.device)
        modules = dict(self.model.named_modules())
        biggest = None
        for i, n in enumerate(names):
            layer = self.layers[n]
            layer.forward_s = float(times[2 + i])
            layer.tokens = int(counts[i]) // steps
            layer.rows = int(counts[len(names) + i]) // steps
            layer.allreduce_s = _ring_allreduce_s(layer.grad_bytes, size, bandwidth, overhead)
            if layer.kind == "linear":
                m = modules[n]
                shape = (m.out_features, max(layer.tokens, 1), m.in_features)
                if biggest is None or shape[0] * shape[2] > biggest[0] * biggest[2]:
                    biggest = shape
        flops = measure_matmul(biggest, device=self.device) if biggest is not None else 5e10
        gather_layer, gather_step = None, 0.0
        if any(self.layers[n].kind in ("linear", "embedding") for n in names):
            gather_layer, gather_step = measure_gather(device=self.device)
        return Profile(
            steps=self.steps,
            world_size=size,
            step_s=float(times[0]),
            sync_s=float(times[1]),
            bandwidth_bytes_per_s=bandwidth,
            latency_s=0.0,
            flops_per_s=flops,
            op_overhead_s=overhead,
            layers={n: self.layers[n] for n in names},
            gather_overhead_s=gather_layer,
            gather_step_s=gather_step,
        )


def _ring_allreduce_s(nbytes: float, p: int, bandwidth: float, overhead: float) -> float:
    if p == 1:
        return 0.0
    return overhead + 2 * (p - 1) / p * nbytes / bandwidth


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def measure_matmul(shape: tuple[int, int, int], repeats: int = 3, device: Any = None) -> float:
    """FLOP/s of the SFB rebuild ``δᵀ·X`` for ``(out, tokens, in)`` on ``device`` (the model's;
    default the CPU), the fastest of ``repeats``, averaged over ranks."""
    device = torch.device(device if device is not None else "cpu")
    k, t, m = shape
    gen = torch.Generator().manual_seed(0)  # not the global one: training's stream stays as is
    dy, x = (torch.randn(t, n, generator=gen).to(device) for n in (k, m))
    samples = []
    for _ in range(repeats + 1):
        _sync(device)
        start = time.perf_counter()
        dy.t().mm(x)
        _sync(device)
        samples.append(time.perf_counter() - start)
    best = min(samples[1:])
    rate = torch.tensor([2.0 * k * t * m / max(best, 1e-9)], dtype=torch.float64)
    return float(hvd.allreduce(rate, op=hvd.Average, name="stitchlab.probe.matmul"))


def measure_collective(repeats: int = 7, device: Any = None) -> tuple[float, float]:
    """Per-rank all-reduce bandwidth (bytes/s) and the marginal cost of one more collective
    operation (s), identical on every rank, for tensors on ``device`` (the model's, whose
    gradients the plan reduces: NCCL for CUDA tensors; default the CPU).

    The bandwidth is that of a 4 MiB all-reduce (its fixed cost included); the marginal cost is
    the time two small all-reduces issued together take over one (Horovod negotiates operations
    issued together in one cycle and fuses them into one, so this is far below a lone operation's
    latency, and near zero on GPUs). It is not what an SFB or sparse layer costs: their
    all-gathers are not fused with the all-reduce; :func:`measure_gather` measures that. Each
    time is the minimum of ``repeats`` after a warm-up: on a shared machine noise only adds time.
    """
    p = hvd.size()
    if p == 1:
        return 1e12, 0.0

    device = torch.device(device if device is not None else "cpu")

    def timed(sizes: tuple[int, ...], tag: str) -> float:
        tensors = [torch.zeros(n, device=device) for n in sizes]
        samples = []
        for _ in range(repeats + 1):
            _sync(device)
            hvd.barrier()
            start = time.perf_counter()
            handles = [
                # the same names every round, as in training (Horovod caches their negotiation)
                hvd.allreduce_async(t, name=f"stitchlab.probe.{tag}.{device.type}.{j}", op=hvd.Sum)
                for j, t in enumerate(tensors)
            ]
            for h in handles:
                hvd.synchronize(h)
            _sync(device)
            samples.append(time.perf_counter() - start)
        return min(samples[1:])

    small = 256  # float32 elements
    one = timed((small,), "one")
    two = timed((small, small), "two")
    if device.type == "cuda":
        # NCCL moves 4 MiB in tens of microseconds, far below Horovod's cycle (about 1 ms, paid
        # once per cycle, not per tensor): a 256 MiB probe, and the bandwidth from its time over
        # the small probe's, so the cycle cancels (measured on 2 H200s: 4 MiB alone gave 5 GB/s)
        large = 1 << 26
        big = timed((large,), "big")
        moving = big - one if big - one > 0.25 * big else big  # (noise: never an absurd slope)
        bandwidth = 2 * (p - 1) / p * 4 * (large - small) / max(moving, 1e-9)
    else:
        # host tensors (Gloo): the large probe alone; a slope between two noisy times is far
        # less stable there, and Gloo's own fixed cost is small against 4 MiB
        large = 1 << 20
        big = timed((large,), "big")
        bandwidth = 2 * (p - 1) / p * 4 * large / max(big, 1e-9)
    overhead = min(max(two - one, 0.0), one)  # never more than issuing it alone
    both = hvd.allreduce(
        torch.tensor([bandwidth, overhead], dtype=torch.float64),
        op=hvd.Average,
        name="stitchlab.probe.fit",
    )
    return float(both[0]), float(both[1])


#: float32 elements of the all-reduce standing in for the rest of the gradients in
#: :func:`measure_gather`: 1 MiB on the host (Gloo); 4 MiB on a GPU, tens of microseconds over
#: NVLink, a real NCCL operation that does not hide the all-gathering layers' host-side work
_GATHER_PROBE_ALLREDUCE = {"cpu": 1 << 18, "cuda": 1 << 20}
#: the probe's layers: small, so that their traffic and arithmetic are negligible (those are
#: charged by bytes over bandwidth and FLOPs over rate) and what remains is the fixed cost
_GATHER_PROBE_FEATURES, _GATHER_PROBE_ROWS = 16, 2


def measure_gather(repeats: int = 7, device: Any = None) -> tuple[float, float]:
    """What all-gathering layers (SFB, sparse) add to a step on ``device`` (the model's), as
    ``(per layer, once per step)`` seconds, identical on every rank.

    Times one step-like round: an all-reduce standing in for the rest of the gradients is
    issued, then the forward and backward pass of two small ``nn.Linear`` layers, then the
    all-reduce is waited on and the layers are finished, as ``DistributedOptimizer.synchronize``
    does. In the rounds with SFB the layers carry the optimizer's own :class:`SFBReducer`, so
    their hooks issue the two all-gathers and ``finish()`` waits on them and rebuilds the
    gradient, exactly as in training. With ``t0``, ``t1``, ``t2`` the rounds with 0, 1 and 2 SFB
    layers, the second layer's ``t2 - t1`` is the per-layer cost and the first layer's excess
    ``t1 - t0 - (t2 - t1)`` the once-per-step cost (Horovod fuses the all-gathers issued in one
    cycle into one operation; the first pays for that operation, the others only for their
    part of it). See :func:`_split_gather_cost` for the noise guards.

    Each time is the minimum over ``repeats`` rounds after a warm-up round, the three kinds of
    round interleaved so that all see the same machine load.
    """
    if hvd.size() == 1:
        return 0.0, 0.0
    device = torch.device(device if device is not None else "cpu")
    rest = torch.zeros(_GATHER_PROBE_ALLREDUCE.get(device.type, 1 << 18), device=device)
    f = _GATHER_PROBE_FEATURES
    with torch.random.fork_rng(devices=[]):  # leave the training's random stream alone
        layers = nn.Sequential(nn.Linear(f, f), nn.Linear(f, f)).to(device)
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(_GATHER_PROBE_ROWS, f, generator=gen).to(device)

    def timed(sfb_layers: int) -> float:
        reducers = [
            SFBReducer(f"stitchlab.probe.gather.{device.type}.{j}", layers[j], 1, 0.5)
            for j in range(sfb_layers)
        ]
        try:
            layers.zero_grad(set_to_none=True)
            _sync(device)
            hvd.barrier()
            start = time.perf_counter()
            handle = hvd.allreduce_async(
                rest, name=f"stitchlab.probe.gather.rest.{device.type}", op=hvd.Sum
            )
            with torch.enable_grad():
                layers(x).sum().backward()
            hvd.synchronize(handle)
            for r in reducers:
                r.finish()
            _sync(device)
            return time.perf_counter() - start
        finally:
            for r in reducers:
                r.remove()

    samples: list[list[float]] = [[], [], []]
    for _ in range(repeats + 1):
        for k in (0, 1, 2):
            samples[k].append(timed(k))
    t0, t1, t2 = (min(s[1:]) for s in samples)
    per_layer, per_step = _split_gather_cost(t0, t1, t2)
    both = hvd.allreduce(
        torch.tensor([per_layer, per_step], dtype=torch.float64),
        op=hvd.Average,
        name="stitchlab.probe.gather.fit",
    )
    return float(both[0]), float(both[1])


def _split_gather_cost(t0: float, t1: float, t2: float) -> tuple[float, float]:
    """``(per layer, once per step)`` from the round times with 0, 1 and 2 all-gathering layers.

    Never negative, and one layer costs ``max(t1 - t0, 0)``, two ``max(t2 - t0, 0)``, whenever
    the second layer costs no more than the first; when it seems to cost more (noise: the first
    cannot be cheaper, it pays for the fused operation), both cost their mean and nothing is
    paid once per step.
    """
    first = max(t1 - t0, 0.0)
    second = max(t2 - t1, 0.0)
    if second >= first:
        return max(t2 - t0, 0.0) / 2, 0.0
    return second, first - second
