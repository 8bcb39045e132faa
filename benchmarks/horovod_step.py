"""Step time: plain Horovod against stitchlab's planned optimizer (plan="auto").

Two models:

* ``wide``: wide linear layers and a small batch — SFB pays (all-gathering a few rows of
  activations and output gradients is far cheaper than all-reducing 2048×2048 weights);
* ``narrow``: narrow linear layers and many tokens — SFB would send more than the all-reduce; the
  planner must leave it off, and the planned optimizer must then cost what plain Horovod costs.

Run (2 Gloo processes on the CPU; the script relaunches itself under horovodrun)::

    .venv/bin/python benchmarks/horovod_step.py --np 2

or directly ``horovodrun --gloo -np 2 -H localhost:2 .venv/bin/python benchmarks/horovod_step.py``.
For GPUs with NCCL pass ``--device cuda`` under a horovodrun of your own. Rank 0 prints a
Markdown table: median step time over ``--steps`` steps after ``--warmup`` steps, plain and
planned steps alternating so both see the same machine load (the planned optimizer profiles its
first 3 steps and re-plans inside the warm-up).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--np", type=int, default=2, help="processes when relaunching (default 2)")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=6)
    parser.add_argument("--threads", type=int, default=1, help="torch threads per process")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--models", default="wide,narrow")
    args = parser.parse_args()
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

    def wide_model() -> tuple[nn.Module, tuple[int, ...]]:
        layers = []
        for _ in range(3):
            layers += [nn.Linear(2048, 2048), nn.ReLU()]
        return nn.Sequential(*layers, nn.Linear(2048, 10)), (4, 2048)  # 4 samples per rank

    def narrow_model() -> tuple[nn.Module, tuple[int, ...]]:
        layers = []
        for _ in range(3):
            layers += [nn.Linear(256, 256), nn.ReLU()]
        return nn.Sequential(*layers, nn.Linear(256, 10)), (64, 16, 256)  # 1024 tokens per rank

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

    def compare(make) -> tuple[float, float, dict[str, str]]:
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
        return float(medians[0]), float(medians[1]), planned[1].strategy.schemes

    makers = {"wide": wide_model, "narrow": narrow_model}
    rows = []
    for name in args.models.split(","):
        plain, planned, schemes = compare(makers[name])
        sfb = sorted(n for n, s in schemes.items() if s == "sfb")
        rows.append((name, plain, planned, sfb))
    if hvd.rank() == 0:
        print(
            f"\n{hvd.size()} ranks, device {args.device}, {args.threads} thread(s) per rank, "
            f"median of {args.steps} alternating steps after {args.warmup} warm-up"
        )
        print("| model | plain Horovod (ms) | stitchlab plan='auto' (ms) | speed-up | SFB layers |")
        print("|---|---|---|---|---|")
        for name, plain, planned, sfb in rows:
            print(
                f"| {name} | {plain * 1e3:.1f} | {planned * 1e3:.1f} | {plain / planned:.2f}x | "
                f"{', '.join(sfb) or 'none'} |"
            )


if __name__ == "__main__":
    main()
