"""Simulated against measured: a real 2-process data-parallel run on this CPU machine."""

import pytest
from stitchlab.topology._launch import horovodrun
from stitchlab.topology.validation import validate

pytest.importorskip("torch")

# CI machines are small and shared: the bound here only catches a broken model (the accuracy we
# measured is in docs/topology.md), and a run disturbed by other jobs gets one more try.
BOUND = 0.6


def _check(**kwargs):
    for _attempt in range(2):
        res = validate(np=2, width=1024, depth=3, batch=32, steps=4, warmup=1, **kwargs)
        print(res)
        assert res["measured_ms"] > 0 and res["simulated_ms"] > 0
        if abs(res["error"]) < BOUND or abs(res["paired_error"]) < BOUND:
            return
    pytest.fail(f"simulated step off by {res['error']:+.0%} (paired {res['paired_error']:+.0%}): {res}")


@pytest.mark.slow
def test_ddp_gloo_step_time_is_predicted():
    _check()


@pytest.mark.slow
@pytest.mark.skipif(horovodrun() is None, reason="horovodrun is not installed")
def test_horovod_gloo_step_time_is_predicted():
    _check(horovod=True)
