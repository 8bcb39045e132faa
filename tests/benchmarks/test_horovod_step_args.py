"""benchmarks/horovod_step.py's command line (no Horovod needed: parsing happens before it is
imported)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))

from benchmarks.horovod_step import parse_args, parse_models  # noqa: E402


def test_models_take_an_optional_width():
    assert parse_models("wide,narrow,wide:8192") == [("wide", None), ("narrow", None),
                                                     ("wide", 8192)]


@pytest.mark.parametrize("spec, message", [("huge", "unknown model 'huge'"),
                                           ("wide:big", "bad width 'big'"),
                                           ("wide:0", "bad width '0'")])
def test_bad_models_are_named(spec, message):
    with pytest.raises(ValueError, match=message):
        parse_models(spec)


def test_gpu_run_arguments():
    args = parse_args(["--device", "cuda", "--threads", "4", "--models", "wide:4096,narrow",
                       "--json", "out.json"])
    assert args.device == "cuda" and args.threads == 4 and args.json == "out.json"
    assert args.model_list == [("wide", 4096), ("narrow", None)]


def test_defaults_are_the_documented_cpu_run():
    args = parse_args([])
    assert (args.device, args.np, args.steps, args.warmup) == ("cpu", 2, 20, 6)
    assert args.model_list == [("wide", None), ("narrow", None)] and args.json is None


def test_unknown_device_and_model_exit_with_usage(capsys):
    with pytest.raises(SystemExit):
        parse_args(["--device", "tpu"])
    with pytest.raises(SystemExit):
        parse_args(["--models", "wide:x"])
    assert "bad width 'x'" in capsys.readouterr().err
