"""A call's counters and temporaries (``stitchlab/runtime/scratch.py``) on the CPU stand-in: split
kernels' counters are per stream, and under CUDA graph capture a call's counters are its own and its
temporaries live as long as its outputs. The GPU side is ``tests/gpu/test_streams_and_graphs_gpu.py``."""

from __future__ import annotations

import gc
import weakref
from typing import Any

import pytest

import stitchlab as sl
from stitchlab.runtime import scratch

from .standin import StandIn, fake_cupy


def _total(x: Any) -> Any:
    return x.sum()  # 4M elements: one row split over many blocks (row_split), partials and counters


def _colnorm(x: Any) -> Any:
    return (x - x.mean(0)) / x.std(0)  # tall and narrow: two split column kernels, then a pointwise one


def _counters(launch: Any) -> Any:
    return launch.args[-1]  # a split kernel's last parameter


def _captured(ptr: int = 77) -> Any:
    stream = fake_cupy.Stream(ptr)
    stream.capturing = True
    return stream


def test_calls_on_one_stream_share_its_counters_and_each_stream_has_its_own(standin: StandIn) -> None:
    f = sl.jit(_total)
    x = standin.array((1 << 22,))
    f(x)
    f(x)
    with fake_cupy.Stream(5):
        f(x)
        f(x)
    with fake_cupy.Stream(6):
        f(x)
    assert [k.name.startswith("sl_row_split") for k in standin.launches] == [True] * 5
    c = [_counters(k) for k in standin.launches]
    assert c[0] is c[1] and c[2] is c[3]  # the kernel sets them back to zero: reused on a stream
    assert len({id(c[0]), id(c[2]), id(c[4])}) == 3  # concurrent streams never share them
    assert c[0].dtype.kind == "u" and c[0].size >= 1


def test_a_captured_call_keeps_its_counters_and_partials_while_its_output_lives(standin: StandIn) -> None:
    f = sl.jit(_total)
    x = standin.array((1 << 22,))
    f(x)  # traced; the default stream's counters exist from now on
    with _captured():
        out = f(x)
    launch = standin.launches[-1]
    ws, counters = launch.args[-2], _counters(launch)
    assert counters is not _counters(standin.launches[0])  # the graph's own: replays share no state
    refs = [weakref.ref(ws), weakref.ref(counters)]
    standin.launches.clear()
    del launch, ws, counters
    gc.collect()
    assert all(r() is not None for r in refs)  # a replay still writes them
    del out
    gc.collect()
    assert all(r() is None for r in refs)


def test_outside_capture_a_calls_partials_go_back_to_the_pool(standin: StandIn) -> None:
    f = sl.jit(_total)
    x = standin.array((1 << 22,))
    out = f(x)
    ref = weakref.ref(standin.launches[-1].args[-2])
    standin.launches.clear()
    gc.collect()
    assert ref() is None and out is not None


def test_a_captured_multi_kernel_call_keeps_the_buffers_between_its_kernels(standin: StandIn) -> None:
    f = sl.jit(_colnorm)
    x = standin.array((1 << 20, 64))
    f(x)
    standin.launches.clear()
    with _captured():
        out = f(x)
    assert len(standin.launches) == 3
    value = out._node.value
    inner = {id(a): a for k in standin.launches for a in k.args
             if isinstance(a, fake_cupy.ndarray) and a is not x and a.data is not value.data}
    assert len(inner) >= 4  # partials, counters and the statistics passed to the last kernel
    refs = [weakref.ref(a) for a in inner.values()]
    standin.launches.clear()
    del inner, value
    gc.collect()
    assert all(r() is not None for r in refs)
    del out
    gc.collect()
    assert all(r() is None for r in refs)


def test_a_captured_call_keeps_the_contiguous_copy_of_its_input(standin: StandIn) -> None:
    f = sl.jit(lambda a: sl.exp(a) + 1)
    t = standin.array((512, 64)).T
    f(t)
    with _captured():
        out = f(t)
    copy = standin.launches[-1].args[0]
    assert copy is not t and copy._c_contiguous
    ref = weakref.ref(copy)
    standin.launches.clear()
    del copy
    gc.collect()
    assert ref() is not None
    del out
    gc.collect()
    assert ref() is None


def test_a_stream_that_cannot_answer_counts_as_not_captured() -> None:
    class Legacy:
        def is_capturing(self) -> bool:
            raise RuntimeError("cudaErrorStreamCaptureImplicit")

    assert scratch.capturing(Legacy()) is False
    assert scratch.capturing(_captured()) is True


@pytest.mark.parametrize("n_outputs", [1, 2])
def test_temporaries_live_until_the_last_output_is_collected(n_outputs: int) -> None:
    outs = [fake_cupy.ndarray((4,)) for _ in range(n_outputs)]
    temp = fake_cupy.ndarray((8,))
    ref = weakref.ref(temp)
    scratch.keep_alive(outs, [temp])
    del temp
    while outs:
        gc.collect()
        assert ref() is not None
        outs.pop()
    gc.collect()
    assert ref() is None
