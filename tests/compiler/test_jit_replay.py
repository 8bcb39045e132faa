"""The cached ``sl.jit`` call on the cupy backend (CPU stand-in, see ``standin.py``): a call with the
same signature replays the bound executable, with the same launches, counters and results
structure as the general path."""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import pytest

import stitchlab as sl

from .standin import StandIn


def _silu_gate(a: Any, b: Any) -> Any:
    return a * sl.sigmoid(a) * b


def _delta(before: dict[str, int]) -> dict[str, int]:
    return {k: v - before[k] for k, v in sl.stats().items() if v != before[k]}


def test_a_cached_call_is_one_launch_and_one_evaluation(standin: StandIn) -> None:
    f = sl.jit(_silu_gate)
    a, b = standin.array((64, 512)), standin.array((64, 512))
    f(a, b)
    assert len(f._replays) == 1
    before = sl.stats()
    out = f(a, b)
    assert _delta(before) == {"evaluations": 1, "launches": 1}
    (launch,) = standin.launches[1:]
    (kernel,) = sl.explain(_silu_gate(sl.asarray(np.ones((64, 512), np.float32)),
                                      sl.asarray(np.ones((64, 512), np.float32)))).kernels
    assert launch.name == kernel.name and launch.grid == kernel.launch.grid and launch.block == kernel.launch.block
    buffers = [x for x in launch.args if hasattr(x, "_c_contiguous")]
    assert buffers[0] is a and buffers[1] is b and buffers[2] is out._node.value
    assert isinstance(out, sl.LazyArray) and out.shape == (64, 512) and out.dtype == np.float32
    assert out.device == "cuda:0" and out.is_materialized


def test_a_non_contiguous_argument_is_copied_before_the_launch(standin: StandIn) -> None:
    f = sl.jit(_silu_gate)
    a, b = standin.array((64, 512)), standin.array((64, 512))
    f(a, b)
    f(a, b)  # replayed from now on
    t = standin.array((512, 64)).T
    assert not t._c_contiguous and t.shape == (64, 512)
    before = sl.stats()
    f(t, b)
    assert _delta(before) == {"evaluations": 1, "launches": 1}  # same signature: no trace
    assert standin.copies == [t]
    first = standin.launches[-1].args[0]
    assert first is not t and first._c_contiguous


def test_scalars_that_change_are_read_at_run_time(standin: StandIn) -> None:
    """A float whose value changed is read at run time (one trace for all values): each call
    copies its numbers into the stream's block, 8 bytes each, which the launch reads through a 0-d
    view made once; an int is another kind of number (another trace), a bool stays a literal."""
    from benchmarks import fake_cupy

    f = sl.jit(lambda x, s: x * s + 1.0)
    x = standin.array((8, 16))
    f(x, 2.0)
    f(x, 2.0)
    before = sl.stats()
    f(x, 3.0)
    f(x, 3)
    f(x, True)
    assert _delta(before)["traces"] == 3
    assert len(f.traces) == 4 and len(f._replays) == 4
    before, fake_cupy.copies[:] = sl.stats(), []
    for value in (2.0, 0.1, -7.5):
        f(x, value)
        (launch,) = standin.launches[-1:]
        address, data, _, stream = fake_cupy.copies[-1]
        assert np.frombuffer(data, np.float32, count=1)[0] == np.float32(value) and len(data) == 8
        (number,) = [a for a in launch.args if isinstance(a, fake_cupy.ndarray) and a.shape == ()]
        assert number.data.ptr == address and number.dtype == np.float32
    assert len({c[0] for c in fake_cupy.copies}) == 1  # one block for every call on this stream
    assert _delta(before) == {"evaluations": 3, "launches": 3}
    with fake_cupy.Stream(7):  # another stream: a block of its own
        f(x, 0.5)
    assert fake_cupy.copies[-1][0] != address and fake_cupy.copies[-1][3] == 7
    captured = fake_cupy.Stream(9)
    captured.capturing = True
    copies = len(fake_cupy.copies)
    with captured:  # under capture: a buffer of the call's own, filled by a kernel, no copy
        f(x, 0.75)
    (number,) = [a for a in standin.launches[-1].args if isinstance(a, fake_cupy.ndarray) and a.shape == ()]
    assert len(fake_cupy.copies) == copies and number.data.ptr != address


def test_tuple_and_dict_outputs_keep_their_structure(standin: StandIn) -> None:
    @sl.jit
    def f(x: Any, y: Any) -> Any:
        return {"sum": x + y, "pair": (x * y, (x - y).sum(axis=-1))}

    x, y = standin.array((4, 32)), standin.array((4, 32))
    for _ in range(3):
        out = f(x, y)
        assert set(out) == {"sum", "pair"} and isinstance(out["pair"], tuple)
        assert out["sum"].shape == (4, 32) and out["pair"][0].shape == (4, 32) and out["pair"][1].shape == (4,)
    assert len(f._replays) == 1


def test_captured_arrays_are_bound_after_the_arguments(standin: StandIn) -> None:
    w = sl.asarray(standin.array((32,)))

    @sl.jit
    def f(x: Any) -> Any:
        return x * w + 1.0

    x = standin.array((4, 32))
    f(x)
    out = f(x)
    args = [v for v in standin.launches[-1].args if hasattr(v, "_c_contiguous")]
    assert w._node.value in args and x in args and out._node.value in args


def test_an_argument_returned_as_it_is_and_as_a_view(standin: StandIn) -> None:
    f = sl.jit(lambda x: (x, x * 2.0, x.reshape(-1)))
    x = standin.array((4, 8))
    for _ in range(3):
        same, doubled, flat = f(x)
        assert same._node.value is x and doubled.shape == (4, 8) and flat.shape == (32,)
    assert len(standin.launches) == 3


def test_an_argument_no_kernel_reads_is_still_made_contiguous(standin: StandIn) -> None:
    f = sl.jit(lambda x, y: (x + 1.0, y))
    x, t = standin.array((4, 8)), standin.array((8, 4)).T
    for _ in range(2):
        _, same = f(x, t)
        assert same._node.value is not t and same._node.value._c_contiguous
    assert standin.copies == [t, t]


def test_several_kernels_replay_through_the_general_bound_call(standin: StandIn) -> None:
    @sl.jit
    def f(x: Any) -> Any:
        return x - x.mean(axis=0)

    x = standin.array((3000, 300))
    plan = sl.explain(f.fn(sl.asarray(np.ones((3000, 300), np.float32))))
    assert len(plan.kernels) == 2
    f(x)
    before = sl.stats()
    f(x)
    assert _delta(before) == {"evaluations": 1, "launches": 2} and len(f._replays) == 1


def test_a_new_shape_traces_again_and_logs_why(standin: StandIn, caplog: pytest.LogCaptureFixture) -> None:
    f = sl.jit(_silu_gate)
    a, b = standin.array((64, 512)), standin.array((64, 512))
    f(a, b)
    with caplog.at_level(logging.INFO, logger="stitchlab"):
        f(standin.array((128, 512)), standin.array((128, 512)))
    assert "argument 0: shape (64, 512) -> (128, 512)" in caplog.text
    before = sl.stats()
    f(a, b)
    assert _delta(before) == {"evaluations": 1, "launches": 1}


def test_lazy_and_host_arguments_never_replay(standin: StandIn) -> None:
    f = sl.jit(lambda x: x + 1.0)
    x = sl.asarray(standin.array((4, 8)))
    f(x)
    f(x)
    assert f._replays == {} and len(f.traces) == 1


def test_a_dtype_the_compiler_lacks_is_converted_not_replayed(standin: StandIn) -> None:
    f = sl.jit(lambda x: x + 1)
    c = standin.array((4,), "complex64")
    with pytest.raises(Exception):  # noqa: B017 - whatever asarray says about complex input
        f(c)
    assert f._replays == {}


def test_a_random_draw_gets_a_new_stream_start_at_every_replay(standin: StandIn, monkeypatch: pytest.MonkeyPatch) -> None:
    """The draw's start is an input made for each call (``runtime.PerCall``): every replayed launch
    reads a new 0-d buffer and the generator moves past the numbers the call used."""
    from stitchlab import runtime

    monkeypatch.setattr(runtime, "_current", "cupy")  # draws go to the (stand-in) GPU
    rng = sl.random.default_rng(1)

    @sl.jit
    def dropout(x: Any) -> Any:
        return x * (rng.random(x.shape, np.float32) >= 0.5)

    x = standin.array((64, 512))
    dropout(x)
    assert len(dropout._replays) == 1
    before = sl.stats()
    for _ in range(3):
        dropout(x)
    assert _delta(before) == {"evaluations": 3, "launches": 3}
    starts = [next(a for a in launch.args if getattr(a, "shape", None) == ()) for launch in standin.launches[-3:]]
    assert len({id(s) for s in starts}) == 3 and all(s.dtype == np.uint64 for s in starts)
    assert rng._counter == 4 * 64 * 512


@pytest.mark.parametrize("returned", [lambda x, t: (x * t, sl.full((), t)), lambda x, t: sl.full((), t).reshape(1, 1)])
def test_a_number_returned_as_it_is_gets_a_buffer_per_call(standin: StandIn, returned: Any,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The block of numbers is rewritten by every call: a number returned as an output (as it is,
    or reshaped: the same buffer) is in a buffer of the call's own instead."""
    from benchmarks import fake_cupy
    from stitchlab import runtime

    monkeypatch.setattr(runtime, "_current", "cupy")  # (sl.full makes its array on the cupy backend)

    f = sl.jit(returned)
    x = standin.array((8, 16))
    f(x, 1.0)
    copies = len(fake_cupy.copies)
    outs = [f(x, t) for t in (2.0, 3.0, 4.0)]
    last = [o[-1] if isinstance(o, tuple) else o for o in outs]
    assert len({o._node.value.data.ptr for o in last}) == 3
    assert len(fake_cupy.copies) == copies  # no shared block


def test_a_numpy_scalar_is_copied_into_the_block_and_replays(standin: StandIn) -> None:
    from benchmarks import fake_cupy

    f = sl.jit(lambda x, s: x * s)
    x = standin.array((8, 16))
    f(x, np.float32(2.0))
    before, fake_cupy.copies[:] = sl.stats(), []
    for value in (0.5, -3.0, 7.25):
        out = f(x, np.float32(value))
        assert np.frombuffer(fake_cupy.copies[-1][1], np.float32, count=1)[0] == np.float32(value)
        assert out.dtype == np.float32
    assert _delta(before) == {"evaluations": 3, "launches": 3}  # no trace: replayed
    g = sl.jit(lambda x, s: (x * s, s))  # returned as it is: a buffer per call
    outs = [g(x, np.float64(v))[1] for v in (1.0, 2.0, 3.0)]
    assert len({o._node.value.data.ptr for o in outs}) == 3 and outs[0].dtype == np.float64


def test_a_call_with_keywords_replays(standin: StandIn) -> None:
    f = sl.jit(lambda a, b, scale=1.0: a * b * scale)
    a, b = standin.array((64, 512)), standin.array((64, 512))
    f(a, b=b, scale=2.0)
    f(a, b=b, scale=3.0)  # reads scale from now on
    before = sl.stats()
    for s in (4.0, 5.0):
        f(a, b=b, scale=s)
    assert _delta(before) == {"evaluations": 2, "launches": 2}
