"""Simulated against measured: a real 2-process data-parallel run on this CPU machine."""

import pytest
from stitchlab.topology._launch import horovodrun
from stitchlab.topology.validation import validate

pytest.importorskip("torch")

# CI machines are small and shared: the bound here only catches a broken model; the accuracy we
# measured on a quiet machine is in docs/topology.md.
BOUND = 0.6


@pytest.mark.slow
def test_ddp_gloo_step_time_is_predicted():
    res = validate(np=2, width=1024, depth=3, batch=32, steps=5, warmup=2)
    print(res)
    assert res["measured_ms"] > 0 and res["simulated_ms"] > 0
    assert abs(res["error"]) < BOUND, res


@pytest.mark.slow
@pytest.mark.skipif(horovodrun() is None, reason="horovodrun is not installed")
def test_horovod_gloo_step_time_is_predicted():
    res = validate(np=2, width=1024, depth=3, batch=32, steps=5, warmup=2, horovod=True)
    print(res)
    assert abs(res["error"]) < BOUND, res
