"""The helpers the GPU probe scripts share (``benchmarks/timing.py``: ``measure``,
``probe_args``), on a clock that counts instead of timing (no GPU)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))

from benchmarks.timing import CupyClock, device_time, measure, probe_args  # noqa: E402


class CountingClock:
    """Each call "takes" 2 µs."""

    name = "counting"

    def __init__(self) -> None:
        self.calls = 0

    def sync(self) -> None:
        pass

    def time_loop_us(self, call: Any, n: int) -> float:
        for _ in range(n):
            call()
        self.calls += n
        return 2.0 * n


class HeldClock(CupyClock):
    """A CuPy clock without CuPy: a held loop of a call that waits for the device runs the hold out."""

    name = "fake"

    def __init__(self, call_waits: bool) -> None:
        self.call_waits, self.loops = call_waits, []

    def sync(self) -> None:
        pass

    def time_loop_us(self, call: Any, n: int, hold: bool = False) -> float:
        for _ in range(n):
            call()
        self.loops.append(hold)
        self.held_timed_out = hold and self.call_waits
        return 2.0 * n


def test_held_loops_and_a_call_that_cannot_be_held() -> None:
    clock = HeldClock(call_waits=False)
    got = device_time(lambda: None, clock, samples=3, hold=True)
    assert clock.loops == [True] * 4 and got["clock"] == "fake, held" and got["held_loops_timed_out"] == 0
    clock = HeldClock(call_waits=True)
    got = device_time(lambda: None, clock, samples=3, hold=True)
    assert clock.loops == [True, False, False, False, False]  # one held call, then plain loops
    assert got["clock"] == "fake" and got["hold_refused"].startswith("a call waited")
    assert "held_loops_timed_out" not in got and got["median_us"] == 2.0
    assert "hold_refused" not in device_time(lambda: None, HeldClock(call_waits=True), samples=2)


def test_measure_on_a_gpu_clock_records_the_held_and_the_plain_loops() -> None:
    clock = HeldClock(call_waits=False)
    row = measure({"impl": "x"}, lambda: 42, clock, 2, lambda out: (out == 42, "ok"))
    assert row["device"]["clock"] == "fake, held" and row["device_unheld"]["clock"] == "fake"
    assert clock.loops == [True] * 3 + [False] * 3


def test_measure_records_the_check_and_the_device_time() -> None:
    clock = CountingClock()
    row = measure({"impl": "x"}, lambda: 41 + 1, clock, 5, lambda out: (out == 42, f"got {out}"))
    assert row["ok"] is True and row["check"] == "got 42"
    assert row["device"]["median_us"] == 2.0 and row["device"]["samples"] == 5 and clock.calls > 5


def test_measure_records_a_failure_as_a_result() -> None:
    def broken() -> None:
        raise RuntimeError("no kernel image\nsecond line")

    row = measure({"impl": "y"}, broken, CountingClock(), 3, lambda out: (True, ""))
    assert row == {"impl": "y", "error": "RuntimeError: no kernel image"}
    row = measure({"impl": "z"}, lambda: 1, CountingClock(), 3, lambda out: (out[0], ""))  # the check raises
    assert row["error"].startswith("TypeError") and "device" not in row


def test_probe_args_defaults_and_help() -> None:
    args = probe_args("Probe of things.\n\nMore.", "probe-out", [])
    assert (args.out, args.samples, args.commit) == ("probe-out", 15, "")
    args = probe_args("Probe.", "o", ["--samples", "7", "--commit", "abc", "--out", "/tmp/x"])
    assert (args.out, args.samples, args.commit) == ("/tmp/x", 7, "abc")


@pytest.mark.usefixtures("numpy_backend")
def test_the_stencil_programs_are_one_kernel_each_and_numpys() -> None:
    """``benchmarks/stencil.py``'s programs, written once for stitchlab, CuPy and NumPy."""
    import numpy as np

    import stitchlab as sl
    from benchmarks.stencil import PROGRAMS, program

    xs = list(np.random.default_rng(1).standard_normal((3, 40, 24), dtype=np.float32))
    for name in PROGRAMS:
        args = xs if name == "rope" else xs[:1]
        got = program(name, sl, *[sl.asarray(a) for a in args])
        assert len(sl.explain(got).kernels) == 1, name
        np.testing.assert_allclose(got.get(), program(name, np, *args), rtol=1e-5, atol=1e-5)


@pytest.mark.usefixtures("numpy_backend")
def test_the_stencil_steps_are_the_same_program_in_every_library() -> None:
    """``benchmarks/stencil_steps.py``'s heat steps: stitchlab's and torch's equal NumPy's."""
    import numpy as np
    import torch

    import stitchlab as sl
    from benchmarks.stencil_steps import heat, heat_torch

    x = np.random.default_rng(2).standard_normal((40, 24), dtype=np.float32)
    for form in ("roll", "pad"):
        ref = heat(np, x.astype(np.float64), 3, form)
        assert (form == "pad") == (np.array_equal(ref[0], x[0]) and np.array_equal(ref[:, -1], x[:, -1])), "the boundary held"
        np.testing.assert_allclose(heat(sl, sl.asarray(x), 3, form).get(), ref, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(heat_torch(torch.as_tensor(x), 3, form).numpy(), ref, rtol=1e-5, atol=1e-5)


@pytest.mark.usefixtures("numpy_backend")
def test_the_scan_probes_programs_and_checks_agree_with_numpy() -> None:
    """``benchmarks/scans.py``: the top-p mask in stitchlab and torch is NumPy's, and each case's
    check passes a right result (bfloat16 through torch too) and fails a scan that lost a chunk."""
    import numpy as np
    import torch

    import stitchlab as sl
    from benchmarks import scans
    from benchmarks.impls import _torch_from_host

    x = scans._data((48, 700), "float32")
    check = scans._checker("top_p_float32", x, 1)
    assert check(scans.top_p(sl, sl.asarray(x)))[0] and check(scans.top_p_torch(torch.as_tensor(x)))[0]
    assert not check(~scans.top_p(np, x))[0]
    for dtype in ("float32", "float16", "bfloat16", "int32"):
        x = scans._data((48, 700), dtype)
        check = scans._checker(f"rows_{dtype}", x, 1)
        assert check(sl.cumsum(sl.asarray(x), axis=1))[0], dtype
        assert check(torch.cumsum(_torch_from_host(torch, x), dim=1))[0], dtype
        lost = np.cumsum(x.astype(np.float64), axis=1)
        lost[:, 300:] -= lost[:, 299:300]
        assert not check(lost)[0], dtype


@pytest.mark.usefixtures("numpy_backend")
def test_the_running_maximum_cases_agree_with_numpy() -> None:
    """``benchmarks/scans.py``'s running maxima and drawdown in stitchlab and torch pass their
    checks (bfloat16 through torch too); a maximum that lost a chunk fails."""
    import numpy as np
    import torch

    import stitchlab as sl
    from benchmarks import scans
    from benchmarks.impls import _torch_from_host

    for name, dtype, axis in (("cummax_rows_float32", "float32", 1), ("cummax_columns_float32", "float32", 0),
                              ("cummax_rows_bfloat16", "bfloat16", 1)):
        x = scans._data((48, 700), dtype)
        check = scans._checker(name, x, axis)
        assert check(scans.running_max(sl, sl.asarray(x), axis))[0], name
        assert check(scans.running_max_torch(_torch_from_host(torch, x), axis))[0], name
        lost = np.maximum.accumulate(x.astype(np.float64), axis=axis)
        lost[(slice(None),) * axis + (slice(30, None),)] = 0
        assert not check(lost)[0], name
    x = scans._data((48, 700), "float32")
    check = scans._checker("drawdown_float32", x, 1)
    assert check(scans.drawdown(sl, sl.asarray(x)))[0] and check(scans.drawdown_torch(torch.as_tensor(x)))[0]
    assert [k.schedule.family for k in sl.explain(scans.drawdown(sl, sl.asarray(x))).kernels] == ["row_block"]
    assert not check(scans.drawdown(np, x) + 1e-3)[0]


def test_to_host_takes_numpy_stitchlab_and_torch_results() -> None:
    import numpy as np
    import torch

    import stitchlab as sl
    from benchmarks.timing import to_host

    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    for out in (a, sl.asarray(a), torch.as_tensor(a), a.tolist()):
        got = to_host(out)
        assert isinstance(got, np.ndarray) and np.array_equal(got, a)
    assert to_host(torch.as_tensor(a).requires_grad_(), np.float64).dtype == np.float64
