"""Simulated against measured: one data-parallel training step on this machine.

``python -m stitchlab.topology.validation`` (options: ``--np``, ``--width``, ``--depth``,
``--batch``, ``--steps``, ``--horovod``, ``--backend``, ``--repeat``, ``--json FILE``, ``--raw``;
``--resimulate FILE...`` measures nothing and re-simulates stored runs) starts ``np`` processes
that each

1. time all-reduces of 4 KiB–32 MiB (→ α and β, :mod:`.calibrate`; Horovod over NCCL also
   128 and 256 MiB, and the run keeps ``HOROVOD_CYCLE_TIME`` and ``HOROVOD_FUSION_THRESHOLD``);
2. alternate a *profile* step of a private replica of an MLP (``depth`` linear layers of
   ``width``², ReLU; :meth:`ModelProfile.from_module`, no communication) with a real training
   step: DistributedDataParallel (gloo on CPU, one thread per process; or NCCL on one GPU per
   process with ``--backend nccl``), or Horovod's DistributedOptimizer under ``horovodrun --gloo``
   with ``--horovod`` (its GPU tensors go through NCCL with ``--backend nccl``, which needs a
   Horovod built with NCCL);

then simulates the step (CPU: a topology from the fit; NCCL: the ``--topology`` preset, default
``h200-2gpu``, with its links set to the fit) with DDP's buckets (:func:`ddp_buckets`) or
Horovod's background loop (:class:`~stitchlab.topology.simulator.HorovodCycle`: the all-reduces
timed through Horovod give its cycle and the bandwidth, :func:`.calibrate.fit_horovod_cycle`),
and prints measured and simulated times and the error.
:func:`summarize` does the simulation part alone, from the workers' raw output (``--raw`` keeps
it in the JSON), so a model change can be checked against old measurements without new runs.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from typing import Any

from .profile import ModelProfile
from .simulator import HorovodCycle

HOROVOD_ENV = ("HOROVOD_CYCLE_TIME", "HOROVOD_FUSION_THRESHOLD")
HOROVOD_GPU_SIZES = (128 * 2**20, 256 * 2**20)  # added to the probes of Horovod over NCCL
# The fusion threshold is HOROVOD_FUSION_THRESHOLD when recorded, else Horovod's default
# (simulator.HOROVOD_DEFAULTS); the cycle comes from the calibration unless HOROVOD_CYCLE_TIME was set


def build_mlp(width: int, depth: int) -> Any:
    import torch

    torch.manual_seed(0)
    layers: list[Any] = []
    for i in range(depth):
        layers.append(torch.nn.Linear(width, width))
        if i < depth - 1:
            layers.append(torch.nn.ReLU())
    return torch.nn.Sequential(*layers)


def _batch(width: int, batch: int, seed: int, device: Any = "cpu") -> tuple[Any, Any]:
    import torch

    g = torch.Generator().manual_seed(seed)
    x, y = torch.randn(batch, width, generator=g), torch.randn(batch, width, generator=g)
    return x.to(device), y.to(device)


def _worker(out: str, width: int, depth: int, batch: int, steps: int, warmup: int,
            horovod: bool, backend: str = "gloo", device_flops: float = 1e10) -> None:
    """One rank: time all-reduces, profile the model (no communication), then train it."""
    import torch

    from . import calibrate

    cuda = backend == "nccl"
    if cuda:
        # torch.distributed's launcher sets LOCAL_RANK, horovodrun HOROVOD_LOCAL_RANK
        local = int(os.environ.get("HOROVOD_LOCAL_RANK", os.environ.get("LOCAL_RANK", "0")))
        torch.cuda.set_device(local)
        device = torch.device("cuda", local)

        def sync() -> None:
            torch.cuda.synchronize(device)
    else:
        torch.set_num_threads(1)
        device = torch.device("cpu")

        def sync() -> None:
            pass
    if horovod:
        import horovod.torch as hvd

        hvd.init()
        rank = hvd.rank()
        gather = hvd.allgather_object
    else:
        import torch.distributed as dist

        dist.init_process_group(backend)
        rank = dist.get_rank()

        def gather(obj: Any) -> list[Any]:
            got: list[Any] = [None] * dist.get_world_size()
            dist.all_gather_object(got, obj)
            return got

    sizes = calibrate.DEFAULT_SIZES
    if horovod and cuda:
        # through Horovod a lone all-reduce waits about a cycle (1 ms): NCCL moves 32 MiB in a
        # tenth of that, so only probes of the size of the gradients resolve the bandwidth
        sizes = sizes + HOROVOD_GPU_SIZES
    points = calibrate._time_allreduce(sizes, 8, horovod, device)
    model = build_mlp(width, depth).to(device)
    if horovod:
        opt = torch.optim.SGD(model.parameters(), lr=1e-4, momentum=0.9)
        opt = hvd.DistributedOptimizer(opt, named_parameters=model.named_parameters())
        hvd.broadcast_parameters(model.state_dict(), root_rank=0)
        net = model
    else:
        net = torch.nn.parallel.DistributedDataParallel(
            model, device_ids=[device.index] if cuda else None)
        opt = torch.optim.SGD(net.parameters(), lr=1e-4, momentum=0.9)
    x, y = _batch(width, batch, seed=rank, device=device)
    # Profile steps (a separate replica, no communication) alternate with training steps, so
    # both see the same share of the CPU while the other ranks and anything else run.
    twin = build_mlp(width, depth).to(device)
    twin_opt = torch.optim.SGD(twin.parameters(), lr=1e-4, momentum=0.9)
    times, profiles_here = [], []
    for i in range(warmup + steps):
        prof = ModelProfile.from_module(
            twin, x, steps=1, warmup=0, optimizer=twin_opt, name=f"mlp{depth}x{width}",
            device_flops=device_flops, loss_fn=lambda out: torch.nn.functional.mse_loss(out, y))
        sync()
        start = time.perf_counter()
        opt.zero_grad()  # Horovod's optimizer takes no set_to_none
        loss = torch.nn.functional.mse_loss(net(x), y)
        loss.backward()
        opt.step()
        sync()
        times.append(time.perf_counter() - start)
        if i >= warmup:
            profiles_here.append(prof)
    profile = median_profile(profiles_here).to_dict()
    profiles = gather(profile)
    per_step = gather([p.to_dict() for p in profiles_here])
    if rank == 0:
        result = {"step_times": times[warmup:], "points": points, "profiles": profiles,
                  "per_step_profiles": per_step}
        if horovod:  # what sets its loop; unset means Horovod's defaults
            result["horovod_env"] = {k: os.environ.get(k) for k in HOROVOD_ENV}
            result["horovod_version"] = _horovod_version()
        with open(out, "w") as fh:
            json.dump(result, fh)
    if not horovod:
        dist.barrier()
        dist.destroy_process_group()


def _horovod_version() -> str | None:
    from importlib import metadata

    try:
        return metadata.version("horovod")
    except metadata.PackageNotFoundError:
        return None


def median_profile(profiles: list[ModelProfile]) -> ModelProfile:
    """Per-layer median of the times of several profiles of one model."""
    first = ModelProfile.from_dict(profiles[0].to_dict())
    for i, layer in enumerate(first.layers):
        layer.forward_time = statistics.median(p.layers[i].forward_time for p in profiles)
        layer.backward_time = statistics.median(p.layers[i].backward_time for p in profiles)
    first.optimizer_time = statistics.median(p.optimizer_time for p in profiles)
    return first


def simulate_step(profiles: list[ModelProfile], base: Any, batch: int,
                  horovod: HorovodCycle | None, overlap: bool | str = "auto") -> Any:
    """Simulate the validation step on ``base`` (a calibrated topology with one device per rank):
    each rank as fast as its own profile says relative to rank 0 (processes share the machine
    with whatever else runs), rank 0's per-layer profile, DDP's buckets, or Horovod's loop
    (``horovod``: its cycle and fusion threshold)."""
    from .devices import Device, DeviceTopology
    from .simulator import ddp_buckets, simulate
    from .strategy import Strategy

    profile = profiles[0]
    total = [p.forward_time + p.backward_time for p in profiles]
    ref = base.devices[0].flops
    devices = [Device(d.id, d.kind, ref * total[0] / total[i], d.memory, d.host, d.name)
               if i < len(profiles) else d for i, d in enumerate(base.devices)]
    topo = DeviceTopology(devices, base.links, base.switches, base.name, base.description)
    ids = topo.ids[: len(profiles)]
    if horovod:
        strategy = Strategy(ids, [batch] * len(profiles))
        return simulate(topo, profile, strategy, overlap=overlap, horovod=horovod)
    strategy = Strategy(ids, [batch] * len(profiles), buckets=ddp_buckets(profile))
    return simulate(topo, profile, strategy, overlap=overlap)


def _calibrated(backend: str, np: int, ab: Any, topology: str, *,
                keep_latency: bool = False) -> Any:
    """The topology to simulate on: CPU processes from the fit, or a GPU preset whose links carry
    the fit (a ring step between GPUs crosses two links: latency α/2 each, bandwidth 1/β).

    A fitted bandwidth above the preset's own (nominal) ring bandwidth is physically impossible:
    it means the probes could not resolve the transfer time, and the preset's bandwidth is used.
    ``keep_latency`` keeps the preset's link latencies (Horovod: the fitted intercept is the
    loop's cycle, not a latency of the links).
    """
    from . import calibrate, presets

    if backend != "nccl":
        return calibrate.cpu_topology_from_fit(ab, np, 1e10)
    topo = presets.get(topology)
    if len(topo.devices) < np:
        raise ValueError(f"preset {topology!r} has {len(topo.devices)} devices, need {np}")
    bandwidth = min(1.0 / ab.beta if ab.beta > 0 else math.inf, _ring_bandwidth(topo, np))
    return topo.with_link_params(bandwidth=bandwidth,
                                 latency=None if keep_latency else ab.alpha / 2)


def _ring_bandwidth(topo: Any, np: int) -> float:
    """Bytes per second of the ring all-reduce's ``n·β`` term over the first ``np`` devices."""
    from . import collectives

    if np < 2:
        return math.inf
    ids = topo.ids[:np]
    n = 2.0**30
    k = 2 * (np - 1) / np
    return k * n / (collectives.ring_allreduce(n, topo, ids) - collectives.ring_allreduce(0, topo, ids))


def validate(np: int = 2, width: int = 2048, depth: int = 4, batch: int = 16, steps: int = 10,
             warmup: int = 3, horovod: bool = False, overlap: bool | str = "auto",
             keep_raw: bool = False, backend: str = "gloo",
             topology: str = "h200-2gpu") -> dict[str, Any]:
    """Run the comparison; returns measured and simulated step times and the relative error.

    ``error`` compares the median measured step with the step simulated from the median
    profiles; ``paired_error`` is the median over steps of each step against the step simulated
    from the profiles taken just before it (less sensitive to load that drifts during the run).
    ``backend="nccl"`` runs on one GPU per process and simulates on preset ``topology``.
    ``keep_raw`` adds the workers' raw output (step times, all-reduce points, per-step profiles).
    """
    from ._launch import run_workers

    if backend not in ("gloo", "nccl"):
        raise ValueError(f"backend={backend!r}; expected 'gloo' or 'nccl'")
    if horovod and backend == "nccl":
        import horovod.torch as hvd

        if not hvd.nccl_built():
            raise ValueError("the Horovod comparison over NCCL needs a Horovod built with NCCL: "
                             "STITCHLAB_HOROVOD_NCCL=1 bash scripts/install-horovod.sh "
                             "(docs/distributed.md)")
    flops = 1e10
    if backend == "nccl":
        from . import presets

        flops = presets.get(topology).devices[0].flops
    args = ["--width", str(width), "--depth", str(depth), "--batch", str(batch),
            "--steps", str(steps), "--warmup", str(warmup), "--backend", backend,
            "--device-flops", repr(flops)]
    real = run_workers("stitchlab.topology.validation", args, np, horovod=horovod)
    return summarize(real, np=np, batch=batch, horovod=horovod, overlap=overlap,
                     backend=backend, topology=topology, keep_raw=keep_raw)


def summarize(real: dict[str, Any], *, np: int, batch: int, horovod: bool = False,
              overlap: bool | str = "auto", backend: str = "gloo",
              topology: str = "h200-2gpu", keep_raw: bool = False) -> dict[str, Any]:
    """Fit the workers' all-reduce times, simulate the step from their profiles and compare with
    their measured step times (the second half of :func:`validate`).

    ``real`` is what rank 0 wrote: ``step_times``, ``points``, ``profiles`` (per rank, medians)
    and ``per_step_profiles`` (per rank, per measured step); with Horovod also ``horovod_env``
    (``HOROVOD_CYCLE_TIME``, ``HOROVOD_FUSION_THRESHOLD`` as the workers saw them; older
    outputs lack it and get Horovod's defaults).

    DDP: α and β of a ring fit, one α per bucket. Horovod: :func:`.calibrate.fit_horovod_cycle`
    — the flat time of a lone all-reduce is the loop's cycle, paid per negotiation round (or
    ``HOROVOD_CYCLE_TIME`` when recorded), the slope is the bandwidth; the transfers keep the
    links' own latency.
    """
    from . import calibrate, collectives
    from .collectives import AlphaBeta

    measured = statistics.median(real["step_times"])
    points = [tuple(p) for p in real["points"]]
    cycle = None
    extra: dict[str, Any] = {}
    if horovod:
        env = real.get("horovod_env") or {}
        recorded = env.get("HOROVOD_CYCLE_TIME")
        fusion = env.get("HOROVOD_FUSION_THRESHOLD")
        fit = calibrate.fit_horovod_cycle(
            points, np, float(recorded) * 1e-3 if recorded else None)
        base = _calibrated(backend, np, AlphaBeta(0.0, fit.beta), topology, keep_latency=True)
        cycle = fit.cycle_model(float(fusion) if fusion else None)
        extra = {
            "cycle_us": fit.cycle * 1e6,
            "cycle_from": "HOROVOD_CYCLE_TIME" if recorded else "flat all-reduce time",
            "round_overhead_us": fit.overhead * 1e6,
            "fusion_mib": cycle.fusion_bytes / 2**20,
            "missed_tick_sizes": list(fit.missed_ticks),
            "slope_bandwidth_gbs": fit.bandwidth / 1e9,
            "largest_probe_transfer_us": fit.transfer(fit.largest, np) * 1e6,
            "probe_residual_us": fit.residual * 1e6,
        }
    else:
        ab = calibrate.fit_ring_allreduce(points, np)
        base = _calibrated(backend, np, ab, topology)
    ids = base.ids[:np]
    alpha = collectives.ring_allreduce(0.0, base, ids) / (2 * (np - 1)) if np > 1 else 0.0
    bandwidth = _ring_bandwidth(base, np)
    if horovod:
        extra["bandwidth_capped"] = bandwidth < fit.bandwidth * (1 - 1e-9)
    profiles = [ModelProfile.from_dict(p) for p in real["profiles"]]
    sim = simulate_step(profiles, base, batch, cycle, overlap)
    overlapped = simulate_step(profiles, base, batch, cycle, overlap=True)
    paired = []
    for i, step in enumerate(real["step_times"]):
        here = [ModelProfile.from_dict(per_rank[i]) for per_rank in real["per_step_profiles"]]
        paired.append((simulate_step(here, base, batch, cycle, overlap).step_time - step) / step)
    return {
        "backend": ("horovod-" if horovod else "torch-ddp-") + backend,
        "processes": np, "model": profiles[0].name, "batch_per_rank": batch,
        "param_mib": profiles[0].param_bytes / 2**20,
        "alpha_us": alpha * 1e6, "bandwidth_gbs": bandwidth / 1e9,
        **extra,
        "profile_compute_ms": [(p.forward_time + p.backward_time + p.optimizer_time) * 1e3
                               for p in profiles],
        "measured_ms": measured * 1e3,
        "measured_spread_ms": [min(real["step_times"]) * 1e3, max(real["step_times"]) * 1e3],
        "simulated_ms": sim.step_time * 1e3,
        "simulated_comm_ms": sim.comm_time * 1e3,
        "simulated_exposed_comm_ms": sim.exposed_comm * 1e3,
        "error": (sim.step_time - measured) / measured,
        "paired_error": statistics.median(paired),
        "simulated_with_overlap_ms": overlapped.step_time * 1e3,
        "error_with_overlap": (overlapped.step_time - measured) / measured,
        "load_average": _load(),
        **({"raw": real} if keep_raw else {}),
    }


def resimulate(stored: dict[str, Any] | list[dict[str, Any]], *, overlap: bool | str = "auto",
               topology: str = "h200-2gpu") -> list[dict[str, Any]]:
    """:func:`summarize` again every run of a ``--json`` output kept with ``--raw`` (one result or
    a list), with the current model: the stored fields say the backend, processes and batch.
    Runs without raw output are skipped (an empty list when none has it)."""
    runs = stored if isinstance(stored, list) else [stored]
    out = []
    for run in runs:
        if "raw" not in run:
            continue
        horovod, _, backend = run["backend"].rpartition("-")
        out.append(summarize(run["raw"], np=run["processes"], batch=run["batch_per_rank"],
                             horovod=horovod == "horovod", overlap=overlap, backend=backend,
                             topology=topology))
    return out


def _load() -> float:
    import os

    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m stitchlab.topology.validation",
                                 description="simulated vs measured data-parallel step time")
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--width", type=int, default=2048)
    ap.add_argument("--depth", type=int, default=4)
    ap.add_argument("--batch", type=int, default=16, help="samples per rank")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--horovod", action="store_true")
    ap.add_argument("--backend", choices=["gloo", "nccl"], default="gloo",
                    help="nccl: one GPU per process")
    ap.add_argument("--topology", default="h200-2gpu", help="preset to simulate on with nccl")
    ap.add_argument("--device-flops", type=float, default=1e10, help=argparse.SUPPRESS)
    ap.add_argument("--overlap", choices=["auto", "yes", "no"], default="auto",
                    help="simulate with/without overlapping communication and backward "
                         "(auto: not on CPUs)")
    ap.add_argument("--repeat", type=int, default=1, help="run the whole comparison N times")
    ap.add_argument("--json", help="also write the result here")
    ap.add_argument("--raw", action="store_true",
                    help="keep the workers' raw output in the result (for summarize())")
    ap.add_argument("--resimulate", nargs="+", metavar="FILE",
                    help="measure nothing: simulate again the runs stored in FILEs (--json "
                         "outputs kept with --raw) and compare with their measured steps")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    overlap = {"auto": "auto", "yes": True, "no": False}[args.overlap]
    if args.worker:
        from ._launch import exit_worker

        _worker(args.out, args.width, args.depth, args.batch, args.steps, args.warmup,
                args.horovod, args.backend, args.device_flops)
        exit_worker()
    if args.resimulate:
        for path in args.resimulate:
            with open(path) as fh:
                stored = json.load(fh)
            runs = stored if isinstance(stored, list) else [stored]
            again = resimulate(stored, overlap=overlap, topology=args.topology)
            print(f"{path}: {len(again)} of {len(runs)} runs kept their raw output")
            old = [r for r in runs if "raw" in r]
            for i, (was, now) in enumerate(zip(old, again, strict=True)):
                print(f"  {now['backend']:16s} run {i + 1}: measured {now['measured_ms']:.2f} ms, "
                      f"simulated {was['simulated_ms']:.2f} ({was['error']:+.1%}) when stored, "
                      f"{now['simulated_ms']:.2f} ({now['error']:+.1%}) now; paired "
                      f"{now['paired_error']:+.1%}")
        return 0
    results = []
    for i in range(args.repeat):
        result = validate(args.np, args.width, args.depth, args.batch, args.steps, args.warmup,
                          args.horovod, overlap=overlap, keep_raw=args.raw, backend=args.backend, topology=args.topology)
        results.append(result)
        if args.repeat > 1:
            print(f"--- run {i + 1} of {args.repeat}")
        for key, value in result.items():
            if key == "raw":
                continue
            print(f"{key:28s} {value:.4g}" if isinstance(value, float) else f"{key:28s} {value}")
    if args.repeat > 1:
        for key in ("error", "paired_error", "error_with_overlap"):
            errors = [r[key] for r in results]
            print(f"{key}: {', '.join(f'{e:+.1%}' for e in errors)}; median "
                  f"{statistics.median(errors):+.1%}, mean |error| "
                  f"{statistics.mean(abs(e) for e in errors):.1%}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results if args.repeat > 1 else results[0], fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
