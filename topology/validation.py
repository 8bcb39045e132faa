"""Simulated against measured: one data-parallel training step on this machine.

``python -m stitchlab.topology.validation`` (options: ``--np``, ``--width``, ``--depth``,
``--batch``, ``--steps``, ``--horovod``, ``--backend``, ``--repeat``, ``--json FILE``, ``--raw``)
starts ``np`` processes that each

1. time all-reduces of 4 KiB–32 MiB (→ α and β, :mod:`.calibrate`);
2. alternate a *profile* step of a private replica of an MLP (``depth`` linear layers of
   ``width``², ReLU; :meth:`ModelProfile.from_module`, no communication) with a real training
   step: DistributedDataParallel (gloo on CPU, one thread per process; or NCCL on one GPU per
   process with ``--backend nccl``), or Horovod's DistributedOptimizer under ``horovodrun --gloo``
   with ``--horovod`` (its GPU tensors go through NCCL with ``--backend nccl``, which needs a
   Horovod built with NCCL);

then simulates the step (CPU: a topology from the fit; NCCL: the ``--topology`` preset, default
``h200-2gpu``, with its links set to the fit) with DDP's buckets (:func:`ddp_buckets`) or
Horovod's fusion buffer, and prints measured and simulated times and the error.
:func:`summarize` does the simulation part alone, from the workers' raw output (``--raw`` keeps
it in the JSON), so a model change can be checked against old measurements without new runs.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from typing import Any

from .profile import ModelProfile


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
    import os

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

    points = calibrate._time_allreduce(calibrate.DEFAULT_SIZES, 8, horovod, device)
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
        with open(out, "w") as fh:
            json.dump({"step_times": times[warmup:], "points": points, "profiles": profiles,
                       "per_step_profiles": per_step}, fh)
    if not horovod:
        dist.barrier()
        dist.destroy_process_group()


def median_profile(profiles: list[ModelProfile]) -> ModelProfile:
    """Per-layer median of the times of several profiles of one model."""
    first = ModelProfile.from_dict(profiles[0].to_dict())
    for i, layer in enumerate(first.layers):
        layer.forward_time = statistics.median(p.layers[i].forward_time for p in profiles)
        layer.backward_time = statistics.median(p.layers[i].backward_time for p in profiles)
    first.optimizer_time = statistics.median(p.optimizer_time for p in profiles)
    return first


def simulate_step(profiles: list[ModelProfile], base: Any, batch: int, horovod: bool,
                  overlap: bool | str = "auto") -> Any:
    """Simulate the validation step on ``base`` (a calibrated topology with one device per rank):
    each rank as fast as its own profile says relative to rank 0 (processes share the machine
    with whatever else runs), rank 0's per-layer profile, DDP's buckets (or Horovod's 128 MiB
    fusion buffer)."""
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
        return simulate(topo, profile, strategy, overlap=overlap, bucket_bytes=128 * 2**20)
    strategy = Strategy(ids, [batch] * len(profiles), buckets=ddp_buckets(profile))
    return simulate(topo, profile, strategy, overlap=overlap)


def _calibrated(backend: str, np: int, ab: Any, topology: str) -> Any:
    """The topology to simulate on: CPU processes from the fit, or a GPU preset whose links carry
    the fit (a ring step between GPUs crosses two links: latency α/2 each, bandwidth 1/β)."""
    from . import calibrate, presets

    if backend != "nccl":
        return calibrate.cpu_topology_from_fit(ab, np, 1e10)
    topo = presets.get(topology)
    if len(topo.devices) < np:
        raise ValueError(f"preset {topology!r} has {len(topo.devices)} devices, need {np}")
    return topo.with_link_params(bandwidth=1.0 / ab.beta if ab.beta > 0 else 1e15,
                                 latency=ab.alpha / 2)


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
    """Fit α and β to the workers' all-reduce times, simulate the step from their profiles and
    compare with their measured step times (the second half of :func:`validate`).

    ``real`` is what rank 0 wrote: ``step_times``, ``points``, ``profiles`` (per rank, medians)
    and ``per_step_profiles`` (per rank, per measured step).
    """
    from . import calibrate

    measured = statistics.median(real["step_times"])
    ab = calibrate.fit_ring_allreduce([tuple(p) for p in real["points"]], np)
    base = _calibrated(backend, np, ab, topology)
    profiles = [ModelProfile.from_dict(p) for p in real["profiles"]]
    sim = simulate_step(profiles, base, batch, horovod, overlap)
    overlapped = simulate_step(profiles, base, batch, horovod, overlap=True)
    paired = []
    for i, step in enumerate(real["step_times"]):
        here = [ModelProfile.from_dict(per_rank[i]) for per_rank in real["per_step_profiles"]]
        paired.append((simulate_step(here, base, batch, horovod, overlap).step_time - step) / step)
    return {
        "backend": ("horovod-" if horovod else "torch-ddp-") + backend,
        "processes": np, "model": profiles[0].name, "batch_per_rank": batch,
        "param_mib": profiles[0].param_bytes / 2**20,
        "alpha_us": ab.alpha * 1e6, "bandwidth_gbs": ab.bandwidth / 1e9,
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
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        from ._launch import exit_worker

        _worker(args.out, args.width, args.depth, args.batch, args.steps, args.warmup,
                args.horovod, args.backend, args.device_flops)
        exit_worker()
    results = []
    for i in range(args.repeat):
        result = validate(args.np, args.width, args.depth, args.batch, args.steps, args.warmup,
                          args.horovod,
                          overlap={"auto": "auto", "yes": True, "no": False}[args.overlap],
                          keep_raw=args.raw, backend=args.backend, topology=args.topology)
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
