"""Fitting α and β of the cost models to measured collectives.

``measure_allreduce`` times ``all_reduce`` of float32 tensors of several sizes across local
processes (torch.distributed with gloo, or Horovod with Gloo when ``horovodrun`` exists);
``fit_ring_allreduce`` fits ``t = 2(p-1)·α + 2(p-1)/p·n·β`` by least squares weighted by 1/t
(between absolute and relative error, so neither the largest nor the noisy smallest sizes rule);
``cpu_topology_from_fit`` turns the fit into a CPU topology whose ring has exactly that α and β.
``fit_horovod_cycle`` reads the same kind of measurements taken through Horovod, whose lone
all-reduce waits for the background loop's next tick: the fitted intercept is the cycle (paid per
negotiation round, :class:`~stitchlab.topology.simulator.HorovodCycle`), not a per-message α.

Command line: ``python -m stitchlab.topology.calibrate [--np 2] [--horovod]`` prints the fit.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .collectives import AlphaBeta
from .devices import DeviceTopology
from .simulator import HOROVOD_DEFAULTS, HorovodCycle

DEFAULT_SIZES = (4 * 2**10, 64 * 2**10, 2**20, 4 * 2**20, 16 * 2**20, 32 * 2**20)


def fit_ring_allreduce(measurements: Sequence[tuple[float, float]], world_size: int) -> AlphaBeta:
    """α, β such that ``ring_allreduce(n, world_size, alpha, beta)`` best matches
    ``[(n_bytes, seconds), ...]`` (least squares weighted by 1/t; both clamped to >= 0).

    Example:
        >>> pts = [(n, 2 * 1e-5 + n * 1e-9) for n in (1e3, 1e6, 1e7)]
        >>> ab = fit_ring_allreduce(pts, 2)
        >>> round(ab.alpha * 1e6, 3), round(ab.beta * 1e9, 3)
        (10.0, 1.0)
    """
    _check_measurements(measurements, world_size)
    p = world_size
    ka, kb = 2 * (p - 1), 2 * (p - 1) / p
    # minimize sum (ka·α + kb·n·β - t)^2 / t: weighted normal equations in (α, β)
    s11 = s12 = s22 = r1 = r2 = 0.0
    for n, t in measurements:
        w = 1.0 / t
        x1, x2 = ka, kb * n
        s11 += w * x1 * x1
        s12 += w * x1 * x2
        s22 += w * x2 * x2
        r1 += w * x1 * t
        r2 += w * x2 * t
    det = s11 * s22 - s12 * s12
    if det <= 0:
        raise ValueError(f"need measurements at two or more sizes, got {list(measurements)}")
    alpha = (r1 * s22 - r2 * s12) / det
    beta = (s11 * r2 - s12 * r1) / det
    if alpha < 0:  # refit beta alone
        alpha, beta = 0.0, r2 / s22
    if beta < 0:
        alpha, beta = r1 / s11, 0.0
    return AlphaBeta(alpha, beta)


def _check_measurements(measurements: Any, world_size: Any) -> None:
    """``[(n_bytes, seconds), ...]`` with sizes >= 0 and positive finite times, over >= 2 ranks."""
    if isinstance(world_size, bool) or not isinstance(world_size, int) or world_size < 2:
        raise ValueError(f"world_size={world_size!r}: a ring all-reduce fit needs an integer "
                         "number of ranks >= 2 (one rank sends nothing)")
    if not isinstance(measurements, Sequence) or isinstance(measurements, str):
        raise ValueError(f"measurements must be a list of (n_bytes, seconds) pairs, got "
                         f"{type(measurements).__name__}")
    for item in measurements:
        ok = isinstance(item, Sequence) and len(item) == 2 and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
            for v in item)
        if not ok or item[0] < 0 or item[1] <= 0:
            raise ValueError(f"measurement {item!r} must be (n_bytes >= 0, seconds > 0), both "
                             "finite numbers")


@dataclass(frozen=True)
class HorovodFit:
    """Horovod's loop and links as its calibration all-reduces show them (:func:`fit_horovod_cycle`).

    Attributes:
        cycle: seconds per negotiation round: ``HOROVOD_CYCLE_TIME`` when it is known, else the
            flat time of a lone small all-reduce (the fitted intercept).
        overhead: seconds a round costs beyond a known ``cycle`` (intercept minus cycle, >= 0);
            0 when the cycle is the intercept.
        beta: seconds per byte of a ring all-reduce's transfer: the slope of time over size,
            the cycle removed (``2(p-1)/p · n · beta``).
        intercept: the fitted time of a lone all-reduce of zero bytes.
        missed_ticks: probe sizes (bytes) left out because they took about a cycle or more
            longer than the fit: their negotiation missed a tick and waited for the next.
        residual: root-mean-square difference between the kept probes and the fit (seconds), the
            noise against which a transfer time is resolved.
        largest: the largest probe kept (bytes).
    """

    cycle: float
    overhead: float
    beta: float
    intercept: float
    missed_ticks: tuple[int, ...]
    residual: float
    largest: float

    @property
    def bandwidth(self) -> float:
        return float("inf") if self.beta == 0 else 1.0 / self.beta

    def transfer(self, nbytes: float, world_size: int) -> float:
        """The fitted transfer time of an all-reduce of ``nbytes``, cycle excluded."""
        return 2 * (world_size - 1) / world_size * nbytes * self.beta

    def cycle_model(self, fusion_bytes: float | None = None) -> HorovodCycle:
        """The loop to simulate (``simulate(..., horovod=...)``, the planner's ``horovod=``):
        this fit's cycle and round overhead, and ``fusion_bytes``
        (``HOROVOD_FUSION_THRESHOLD`` when the run set it; default Horovod's 128 MiB). The
        bandwidth is not in it: it belongs on the topology's links
        (``topo.with_link_params(...)``)."""
        fusion = HOROVOD_DEFAULTS.fusion_bytes if fusion_bytes is None else fusion_bytes
        return HorovodCycle(self.cycle, fusion, self.overhead)


def fit_horovod_cycle(measurements: Sequence[tuple[float, float]], world_size: int,
                      cycle_time: float | None = None) -> HorovodFit:
    """Cycle and bandwidth from all-reduces timed through Horovod, one at a time.

    A lone Horovod all-reduce waits for the background loop's next tick, is negotiated and then
    sent, so its time is ``intercept + 2(p-1)/p · n · β``. The intercept and β come from the same
    least-squares fit as :func:`fit_ring_allreduce` (weighted by 1/t); the intercept is the
    per-round cost, not a per-message latency. A probe that missed a tick (its negotiation came a
    cycle later) took about a cycle more than the fit: one that is late by more than half a cycle
    *and* by more than half its fitted time is left out (the worst first) and the fit repeated,
    while two or more sizes remain. The second condition keeps large probes whose transfer
    dominates (Gloo on CPUs): their ordinary noise can exceed half a cycle.

    Args:
        measurements: ``[(n_bytes, seconds), ...]``, each the median of lone all-reduces.
        world_size: ranks taking part.
        cycle_time: ``HOROVOD_CYCLE_TIME`` in seconds, when the run recorded it; the rest of the
            intercept becomes the round's ``overhead``.

    Example:
        >>> pts = [(n, 1e-3 + n / 300e9) for n in (4096, 2**20, 32 * 2**20)] + [(16 * 2**20, 2.1e-3)]
        >>> fit = fit_horovod_cycle(pts, 2)
        >>> round(fit.cycle * 1e6, 1), round(fit.bandwidth / 1e9), fit.missed_ticks
        (1000.0, 300, (16777216,))
    """
    _check_measurements(measurements, world_size)
    p = world_size
    k = 2 * (p - 1) / p
    kept = [(float(n), float(t)) for n, t in measurements]
    missed: list[int] = []
    while True:
        ab = fit_ring_allreduce(kept, p)
        intercept = 2 * (p - 1) * ab.alpha
        cycle = cycle_time if cycle_time is not None else intercept
        late = [(t - intercept - k * n * ab.beta, n, t) for n, t in kept]
        missing = [x for x in late if x[0] > cycle / 2 and x[0] > (x[2] - x[0]) / 2]
        if cycle <= 0 or not missing:
            break
        worst = max(missing)
        rest = [(n, t) for n, t in kept if (n, t) != (worst[1], worst[2])]
        if len({n for n, _ in rest}) < 2:
            break
        missed.append(int(worst[1]))
        kept = rest
    residual = (sum(r * r for r, _, _ in late) / len(late)) ** 0.5
    return HorovodFit(
        cycle=cycle,
        overhead=max(0.0, intercept - cycle) if cycle_time is not None else 0.0,
        beta=ab.beta, intercept=intercept, missed_ticks=tuple(sorted(missed)),
        residual=residual, largest=max(n for n, _ in kept))


def measure_allreduce(world_size: int = 2, sizes: Sequence[int] = DEFAULT_SIZES, reps: int = 8,
                      horovod: bool = False, timeout: float = 300) -> list[tuple[float, float]]:
    """Seconds per all-reduce of each size (bytes) across ``world_size`` local processes."""
    from ._launch import run_workers

    args = ["--sizes", ",".join(str(s) for s in sizes), "--reps", str(reps)]
    got = run_workers("stitchlab.topology.calibrate", args, world_size, horovod=horovod, timeout=timeout)
    return [(float(n), float(t)) for n, t in got["points"]]


def cpu_topology_from_fit(ab: AlphaBeta, processes: int, flops: float,
                          memory: int | None = None) -> DeviceTopology:
    """A CPU topology of ``processes`` devices whose ring all-reduce has exactly α and β (each ring
    step crosses two links through the ``cpu`` switch: latency α/2 each, bandwidth 1/β)."""
    from .discovery import cpu_topology

    return cpu_topology(processes, flops=flops * processes, memory=memory,
                        bandwidth=1.0 / ab.beta if ab.beta > 0 else 1e15, latency=ab.alpha / 2)


def _time_allreduce(sizes: Sequence[int], reps: int, horovod: bool,
                    device: object = None) -> list[tuple[int, float]]:
    """Median seconds of one all-reduce per size, in an initialized process group (or Horovod),
    of tensors on ``device`` (default CPU; on CUDA each timing waits for the device)."""
    import torch

    device = torch.device(device or "cpu")
    sync = (lambda: torch.cuda.synchronize(device)) if device.type == "cuda" else (lambda: None)

    if horovod:
        import horovod.torch as hvd

        def allreduce(t):
            hvd.allreduce_(t, op=hvd.Sum)

        def barrier():
            hvd.allreduce(torch.zeros(1), op=hvd.Sum)
    else:
        import torch.distributed as dist

        def allreduce(t):
            dist.all_reduce(t)

        barrier = dist.barrier
    points = []
    for n in sizes:
        t = torch.ones(max(1, n // 4), dtype=torch.float32, device=device)
        for _ in range(2):
            allreduce(t)
        sync()
        samples = []
        for _ in range(reps * max(1, min(8, 2**20 // max(n, 1)))):  # more of the small ones
            barrier()
            sync()
            start = time.perf_counter()
            allreduce(t)
            sync()
            samples.append(time.perf_counter() - start)
        points.append((n, statistics.median(samples)))
    barrier()
    return points


def _worker(out: str, sizes: list[int], reps: int, horovod: bool) -> None:
    if horovod:
        import horovod.torch as hvd

        hvd.init()
        rank = hvd.rank()
    else:
        import torch.distributed as dist

        dist.init_process_group("gloo")
        rank = dist.get_rank()
    points = _time_allreduce(sizes, reps, horovod)
    if rank == 0:
        with open(out, "w") as fh:
            json.dump({"points": points}, fh)
    if not horovod:
        dist.destroy_process_group()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m stitchlab.topology.calibrate",
                                 description="Fit alpha/beta of all-reduce between local processes")
    ap.add_argument("--np", type=int, default=2, help="processes (default 2)")
    ap.add_argument("--horovod", action="store_true", help="use horovodrun --gloo")
    ap.add_argument("--sizes", default=",".join(map(str, DEFAULT_SIZES)))
    ap.add_argument("--reps", type=int, default=8)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.worker:
        from ._launch import exit_worker

        _worker(args.out, sizes, args.reps, args.horovod)
        exit_worker()
    points = measure_allreduce(args.np, sizes, args.reps, args.horovod)
    ab = fit_ring_allreduce(points, args.np)
    for n, t in points:
        model = 2 * (args.np - 1) * ab.alpha + 2 * (args.np - 1) / args.np * n * ab.beta
        print(f"{int(n):>12,d} B  measured {t * 1e3:9.3f} ms  model {model * 1e3:9.3f} ms")
    print(f"alpha = {ab.alpha * 1e6:.1f} us, beta = {ab.beta * 1e9:.4f} ns/B "
          f"({ab.bandwidth / 1e9:.2f} GB/s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
