"""The benchmarks' held device timing (``benchmarks/timing.py``) on the GPU: a loop queued behind
the hold kernel times only the kernels, however long the host takes per call, where the plain loop
times the host; a hold that is never released runs out and says so.

Run on the GPU machine: ``PYTHONPATH=. python3 -m pytest -m gpu tests/gpu/test_benchmark_timing_gpu.py -q``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))

from benchmarks import timing  # noqa: E402

pytestmark = pytest.mark.gpu


def _slow_host_call(clock_cls: type) -> tuple[object, object]:
    """A call that spends 300 µs on the host, then launches one short kernel on the clock's stream."""
    if clock_cls is timing.TorchClock:
        import torch

        t = torch.rand(1 << 16, device="cuda")
        launch = lambda: t.mul_(1.0)  # noqa: E731
    else:
        import cupy as cp

        x = cp.random.default_rng(0).random(1 << 16, dtype=cp.float32)
        out = cp.empty_like(x)
        launch = lambda: cp.multiply(x, 2.0, out=out)  # noqa: E731

    def call() -> None:
        end = time.perf_counter() + 300e-6
        while time.perf_counter() < end:
            pass
        launch()

    return call, clock_cls()


@pytest.mark.parametrize("clock_cls", [timing.CupyClock, timing.TorchClock], ids=["cupy", "torch"])
def test_the_held_loop_times_the_kernels_not_the_host(clock_cls: type) -> None:
    if clock_cls is timing.TorchClock:
        pytest.importorskip("torch")
    call, clock = _slow_host_call(clock_cls)
    plain = timing.device_time(call, clock, target_us=3000, samples=5)
    held = timing.device_time(call, clock, target_us=3000, samples=5, hold=True)
    assert plain["median_us"] >= 290, plain  # the GPU waits for the host between calls
    assert held["median_us"] < 30, held  # a 256 KB multiply: a few µs
    assert held["held_loops_timed_out"] == 0 and held["clock"].endswith(", held")
    assert "held_loops_timed_out" not in plain


def test_a_hold_not_released_runs_out_and_says_so() -> None:
    import cupy as cp

    hold = timing.Hold(timeout_s=0.05)
    t0 = time.perf_counter()
    hold.launch()
    cp.cuda.runtime.deviceSynchronize()
    assert time.perf_counter() - t0 >= 0.045 and hold.timed_out
    hold.launch()
    hold.release()
    cp.cuda.runtime.deviceSynchronize()
    assert not hold.timed_out


def test_a_call_that_waits_for_the_device_is_timed_in_plain_loops() -> None:
    import cupy as cp

    x = cp.random.default_rng(0).random(1 << 16, dtype=cp.float32)
    t0 = time.perf_counter()
    got = timing.device_time(lambda: float(x.sum()), timing.CupyClock(), target_us=1000, samples=3, hold=True)
    assert got["hold_refused"].startswith("a call waited for the device") and "held_loops_timed_out" not in got
    assert not got["clock"].endswith(", held") and got["median_us"] > 0
    assert time.perf_counter() - t0 < 5  # one hold ran out (1 s), no more
