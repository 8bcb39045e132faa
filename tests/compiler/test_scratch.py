"""A call's counters, workspaces and temporaries (``stitchlab/runtime/scratch.py``) on the CPU
stand-in: split kernels' counters and workspaces are per stream, and under CUDA graph capture a
call's counters and workspaces are its own and live, with its temporaries, as long as its outputs.
The GPU side is ``tests/gpu/test_streams_and_graphs_gpu.py``; ``test_split_results.py`` runs the
same calls' launches in NumPy."""

from __future__ import annotations

import gc
import weakref
from typing import Any

import numpy as np
import pytest

import stitchlab as sl
from stitchlab.runtime import scratch

from .standin import StandIn, fake_cupy


def _total(x: Any) -> Any:
    return x.sum()  # 4M elements: one row split over many blocks (row_split), partials and counters


def _colnorm(x: Any) -> Any:
    return (x - x.mean(0)) / x.std(0)  # tall and narrow: two split column kernels, then a pointwise one


def _column_total(x: Any) -> Any:
    return x.sum(0)  # tall and narrow: one column_split kernel


def _counters(launch: Any) -> Any:
    return launch.args[-1]  # a split kernel's last parameter


def _workspace(launch: Any) -> Any:
    return launch.args[-2]  # a split kernel of one reduction: its workspace comes before the counters


def _captured(ptr: int = 77) -> Any:
    stream = fake_cupy.Stream(ptr)
    stream.capturing = True
    return stream


@pytest.mark.parametrize(("body", "shape", "family"), [(_total, (1 << 22,), "row_split"),
                                                    (_column_total, (1 << 20, 48), "column_split")])
def test_calls_on_one_stream_share_its_counters_and_workspaces_and_each_stream_has_its_own(
        standin: StandIn, body: Any, shape: tuple[int, ...], family: str) -> None:
    f = sl.jit(body)
    x = standin.array(shape)
    f(x)
    f(x)
    with fake_cupy.Stream(5):
        f(x)
        f(x)
    with fake_cupy.Stream(6):
        f(x)
    f(x)
    assert [k.name.startswith(f"sl_{family}") for k in standin.launches] == [True] * 6
    c = [_counters(k) for k in standin.launches]
    ws = [_workspace(k) for k in standin.launches]
    assert c[0].dtype.kind == "u" and c[0].size >= 1
    assert ws[0].dtype == np.float32 and ws[0].size > 1 and ws[0] is not c[0]
    # the kernel sets its counters back to zero, a launch reads only the partials it wrote, and a
    # stream runs its launches in order: both are reused on a stream
    for b in (c, ws):
        assert b[0] is b[1] is b[5] and b[2] is b[3]
        assert len({id(b[0]), id(b[2]), id(b[4])}) == 3  # streams that run at once never share them


def test_a_cached_split_call_allocates_only_its_output(standin: StandIn, monkeypatch: pytest.MonkeyPatch) -> None:
    allocated: list[Any] = []

    def empty(shape: Any, dtype: Any = float, order: str = "C") -> Any:
        allocated.append(shape)
        return fake_cupy.empty(shape, dtype, order)

    monkeypatch.setattr(standin.cupy, "empty", empty)
    f = sl.jit(_total)
    x = standin.array((1 << 22,))
    f(x)  # traced, planned; the stream's workspaces allocated
    standin.launches.clear()
    allocated.clear()
    out = f(x)
    (launch,) = standin.launches
    assert len(allocated) == 1 and out._node.value.data is launch.args[1].data


def test_a_captured_call_keeps_its_counters_and_partials_while_its_output_lives(standin: StandIn) -> None:
    f = sl.jit(_total)
    x = standin.array((1 << 22,))
    f(x)  # traced; the default stream's counters and workspaces exist from now on
    with _captured(0):  # even on the handle of the stream eager calls use: a replay may run anywhere
        out = f(x)
        other = f(x)
    launch = standin.launches[1]
    ws, counters = _workspace(launch), _counters(launch)
    # the graph's own: replays share no state with eager calls, nor with another captured call
    assert counters is not _counters(standin.launches[0]) and ws is not _workspace(standin.launches[0])
    assert counters is not _counters(standin.launches[2]) and ws is not _workspace(standin.launches[2])
    f(x)
    assert _workspace(standin.launches[3]) is _workspace(standin.launches[0])  # the stream's own again
    del other
    refs = [weakref.ref(ws), weakref.ref(counters)]
    standin.launches.clear()
    del launch, ws, counters
    gc.collect()
    assert all(r() is not None for r in refs)  # a replay still writes them
    del out
    gc.collect()
    assert all(r() is None for r in refs)


def test_a_captured_multi_kernel_call_keeps_the_buffers_between_its_kernels(standin: StandIn) -> None:
    f = sl.jit(_colnorm)
    x = standin.array((1 << 20, 64))
    f(x)
    standin.launches.clear()
    with _captured():
        out = f(x)
    assert len(standin.launches) == 2
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


class _OneStream:
    """A ``cp`` whose current stream is always ``stream``, in every thread."""

    def __init__(self, stream: Any) -> None:
        self.zeros = self.empty = fake_cupy.zeros
        self.cuda = type("cuda", (), {"get_current_stream": staticmethod(lambda: stream)})


def _begin_in_threads(ptr: int) -> list[Any]:
    import threading

    s = scratch.Scratch(_OneStream(fake_cupy.Stream(ptr)), [(0, 4, np.uint32)], [(1, 8, np.float32)], [])
    got: list[Any] = []
    first = s.begin()[0]
    t = threading.Thread(target=lambda: got.append(s.begin()[0]))
    t.start()
    t.join()
    return [first, s.begin()[0], got[0]]


def test_the_per_thread_default_stream_gives_each_thread_its_own_counters_and_workspaces() -> None:
    # one handle (cudaStreamPerThread) names a different stream in each thread: they run at once
    main, again, other = _begin_in_threads(scratch.PER_THREAD_STREAM)
    assert main is again and all(a is not b for a, b in zip(main, other, strict=True))
    # the legacy default stream is one stream for every thread: its calls run in order
    main, again, other = _begin_in_threads(0)
    assert main is again is other
