"""The host-cost scripts run end to end on the stand-in for CuPy (no GPU): what they print is
what docs/performance.md quotes from the GPU machine."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str) -> str:
    res = subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    return res.stdout


def test_eager_breakdown_times_each_part_of_an_eager_evaluation() -> None:
    out = _run("benchmarks/eager_breakdown.py", "--stand-in", "--evaluations", "5", "--workloads", "softmax,adam")
    rows = [line.split() for line in out.splitlines()[1:]]
    assert [r[0] for r in rows] == ["softmax", "adam"]
    for r in rows:
        parts = dict(zip(r[1::2], map(float, r[2::2]), strict=True))
        assert set(parts) == {"nodes", "build_graph", "executable", "run", "sl.compute"}
        assert all(v > 0 for v in parts.values())


def test_eager_mode_of_the_host_overhead_script_times_eager_and_jit_calls() -> None:
    out = _run("benchmarks/jit_host_overhead.py", "--mode", "eager", "--reps", "3", "--workloads", "softmax,l2norm")
    rows = {r[0]: (float(r[1]), float(r[2])) for r in (line.split() for line in out.splitlines()[1:])}
    assert set(rows) == {"softmax", "l2norm"}
    assert all(eager > 0 and jit > 0 for eager, jit in rows.values())
