"""Step time: plain Horovod against stitchlab's planned optimizer (plan="auto").

Two models:

* ``wide``: wide linear layers and a small batch — SFB pays (all-gathering a few rows of
  activations and output gradients is far cheaper than all-reducing 2048×2048 weights);
* ``narrow``: narrow linear layers and many tokens — SFB would send more than the all-reduce; the
  planner must leave it off, and the planned optimizer must then cost what plain Horovod costs.

Run (2 Gloo processes on the CPU; the script relaunches itself under horovodrun)::

    .venv/bin/python benchmarks/horovod_step.py --np 2

or directly ``horovodrun --gloo -np 2 -H localhost:2 .venv/bin/python benchmarks/horovod_step.py``.
For GPUs pass ``--device cuda``: each rank takes GPU ``local_rank``, and a Horovod built with
NCCL (``STITCHLAB_HOROVOD_NCCL=1 scripts/install-horovod.sh``) moves the GPU tensors with NCCL
(Gloo still coordinates). ``--models wide:8192`` sets the wide model's width. Rank 0 prints a
Markdown table: median step time over ``--steps`` steps after ``--warmup`` steps, plain and
planned steps alternating so both see the same machine load (the planned optimizer profiles its
first 3 steps and re-plans inside the warm-up), then, per model, the rates the planner's probes
measured (bandwidth, rebuild rate, the fixed cost of an all-gathering layer); ``--json FILE``
also writes every step time, the plan, the planner's reasons and what it measured.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any


def _relaunch(args: argparse.Namespace) -> int:
    runner = Path(sys.executable).with_name("horovodrun")
    runner = str(runner) if runner.exists() else shutil.which("horovodrun")
    if runner is None:
        sys.exit(
            "horovodrun not found: build Horovod with `make install` (scripts/install-horovod.sh)"
        )
    cmd = [
        runner,
        "--gloo",
        "-np",
        str(args.np),
        "-H",
        f"localhost:{args.np}",
        sys.executable,
        *sys.argv,
    ]
    return subprocess.call(cmd, env=dict(os.environ, OMP_NUM_THREADS=str(args.threads)))


MODELS = ("wide", "narrow")


def parse_models(spec: str) -> list[tuple[str, int | None]]:
    """``"wide,narrow,wide:8192"`` -> ``[("wide", None), ("narrow", None), ("wide", 8192)]``."""
    models: list[tuple[str, int | None]] = []
    for item in spec.split(","):
        name, _, width = item.strip().partition(":")
        if name not in MODELS:
            raise ValueError(f"unknown model {name!r} in --models {spec!r}; expected one of {MODELS}")
        if width and not (width.isdigit() and int(width) > 0):
            raise ValueError(f"bad width {width!r} in --models {spec!r}; expected e.g. wide:8192")
        models.append((name, int(width) if width else None))
    return models


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--np", type=int, default=2, help="processes when relaunching (default 2)")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=6)
    parser.add_argument("--threads", type=int, default=1, help="torch threads per process")
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"],
                        help="cuda: one GPU per rank (local rank), NCCL if Horovod has it")
    parser.add_argument("--models", default="wide,narrow",
                        help="comma-separated: wide, narrow; wide:WIDTH for another width (2048)")
    parser.add_argument("--json", help="rank 0 also writes the results here")
    args = parser.parse_args(argv)
    try:
        args.model_list = parse_models(args.models)
    except ValueError as e:
        parser.error(str(e))
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if "HOROVOD_RANK" not in os.environ and "OMPI_COMM_WORLD_RANK" not in os.environ:
        sys.exit(_relaunch(args))

    import horovod.torch as hvd
    import torch
    from torch import nn

    from stitchlab.horovod import DistributedOptimizer

    hvd.init()
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    if device.type == "cuda":
        torch.cuda.set_device(hvd.local_rank())

    def wide_model(width: int = 2048) -> tuple[nn.Module, tuple[int, ...]]:
        layers = []
        for _ in range(3):
            layers += [nn.Linear(width, width), nn.ReLU()]
        return nn.Sequential(*layers, nn.Linear(width, 10)), (4, width)  # 4 samples per rank

    def narrow_model(width: int = 256) -> tuple[nn.Module, tuple[int, ...]]:
        layers = []
        for _ in range(3):
            layers += [nn.Linear(width, width), nn.ReLU()]
        return nn.Sequential(*layers, nn.Linear(width, 10)), (64, 16, width)  # 1024 tokens per rank

    def build(make, kind: str):
        torch.manual_seed(0)
        model, shape = make()
        model.to(device)
        sgd = torch.optim.SGD(model.parameters(), lr=1e-3)
        if kind == "horovod":
            opt = hvd.DistributedOptimizer(sgd, named_parameters=model.named_parameters())
        else:
            opt = DistributedOptimizer(sgd, model, plan="auto", profile_steps=3)
        hvd.broadcast_parameters(model.state_dict(), root_rank=0)
        gen = torch.Generator().manual_seed(hvd.rank())
        return model, opt, torch.randn(*shape, generator=gen).to(device)

    def step(model, opt, x) -> float:
        hvd.barrier()
        start = time.perf_counter()
        opt.zero_grad()
        model(x).square().mean().backward()
        opt.step()
        if device.type == "cuda":
            torch.cuda.synchronize()
        return time.perf_counter() - start

    def compare(make) -> tuple[float, float, Any, dict[str, list[float]]]:
        """Alternate plain and planned steps, so both see the same machine load."""
        plain, planned = build(make, "horovod"), build(make, "planned")
        times: dict[str, list[float]] = {"horovod": [], "planned": []}
        for i in range(args.warmup + args.steps):
            pair = [("horovod", plain), ("planned", planned)]
            for kind, setup in pair if i % 2 else pair[::-1]:  # which goes first alternates too
                t = step(*setup)
                if i >= args.warmup:
                    times[kind].append(t)
        # every rank's median, then the slowest rank's (a step is as slow as the slowest rank)
        medians = torch.tensor(
            [statistics.median(times["horovod"]), statistics.median(times["planned"])],
            dtype=torch.float64,
        )
        medians = hvd.allreduce(medians, op=hvd.Max, name="bench.medians")
        return float(medians[0]), float(medians[1]), planned[1], times

    makers = {"wide": wide_model, "narrow": narrow_model}
    rows: list[dict[str, Any]] = []
    for name, width in args.model_list:
        make = (lambda m=makers[name], w=width: m(w)) if width else makers[name]
        plain, planned, opt, times = compare(make)
        sfb = sorted(n for n, s in opt.strategy.schemes.items() if s == "sfb")
        change = opt.history[-1] if opt.history else None
        prof = change.profile if change is not None else None
        rows.append({
            "model": name + (f":{width}" if width else ""),
            "plain_ms": plain * 1e3, "planned_ms": planned * 1e3, "speedup": plain / planned,
            "sfb_layers": sfb,
            "reasons": dict(change.reasons) if change is not None else {},
            "planner_measured": None if prof is None else {
                "allreduce_bandwidth_gbs": prof.bandwidth_bytes_per_s / 1e9,
                "extra_collective_us": prof.op_overhead_s * 1e6,
                "rebuild_matmul_gflops": prof.flops_per_s / 1e9,
                "gather_layer_us": None if prof.gather_overhead_s is None
                else prof.gather_overhead_s * 1e6,
                "gather_step_us": prof.gather_step_s * 1e6,
            },
            "planner_rates": prof.rates() if prof is not None else "",
            "rank0_step_ms": {k: [t * 1e3 for t in v] for k, v in times.items()},
        })
    if hvd.rank() == 0:
        print(
            f"\n{hvd.size()} ranks, device {args.device}, {args.threads} thread(s) per rank, "
            f"median of {args.steps} alternating steps after {args.warmup} warm-up"
        )
        print("| model | plain Horovod (ms) | stitchlab plan='auto' (ms) | speed-up | SFB layers |")
        print("|---|---|---|---|---|")
        for r in rows:
            print(
                f"| {r['model']} | {r['plain_ms']:.2f} | {r['planned_ms']:.2f} | "
                f"{r['speedup']:.2f}x | {', '.join(r['sfb_layers']) or 'none'} |"
            )
        for r in rows:  # what the planner's probes measured: why SFB is on or off
            print(f"{r['model']}: {r['planner_rates']}")
        if args.json:
            with open(args.json, "w") as fh:
                json.dump({"benchmark": "horovod_step", "ranks": hvd.size(), "device": args.device,
                           "gpus": _gpu_names(torch) if device.type == "cuda" else [],
                           "threads": args.threads, "steps": args.steps, "warmup": args.warmup,
                           "commit": os.environ.get("STITCHLAB_COMMIT", "unknown"),
                           "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
                           "torch": torch.__version__,
                           "horovod": __import__("horovod").__version__,
                           "nccl_built": bool(hvd.nccl_built()),
                           "nccl_env": {k: os.environ.get(k) for k in _NCCL_ENV},
                           "rows": rows}, fh, indent=2)


_NCCL_ENV = ("NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST", "NVSHMEM_DISABLE_NVLS")


def _gpu_names(torch: Any) -> list[str]:
    return [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]


if __name__ == "__main__":
    main()
