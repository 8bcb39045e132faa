"""``benchmarks/planner_host.py``: its programs plan, and its digest tells plans apart (it is how
two checkouts' plans are compared)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))

from benchmarks.planner_host import main, measure  # noqa: E402


def test_each_program_plans_with_a_digest_of_its_plan(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--build", "roll/3/16x16", "pad/3/16x16", "rnn/3", "ernn/3"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line["program"] for line in lines] == ["roll/3/16x16", "pad/3/16x16", "rnn/3", "ernn/3"]
    assert [line["kernels"] for line in lines] == [1, 1, 6, 1]
    assert all(line["build_plan_s"] >= 0 and line["search_s"] >= 0 for line in lines)
    assert measure("roll/3/16x16", True)["digest"] == lines[0]["digest"]  # (the same plan)
    assert measure("roll/4/16x16", True)["digest"] != lines[0]["digest"]


def test_an_unknown_program_is_named() -> None:
    with pytest.raises(SystemExit, match="unknown program 'heat/3'"):
        measure("heat/3", False)
