"""Split reductions' results against NumPy on the CPU stand-in, with the workspaces kept per stream
(``stitchlab/runtime/scratch.py``).

The stand-in records launches and computes nothing, so :class:`_Device` runs the recorded launches
in NumPy: its memory is one NumPy array per device address, and a launch evaluates its kernel's
nodes (from the executable's recipe) over its input buffers and writes its output buffers. A split
kernel goes through its workspace the way the generated code does: every block writes its partial
results there, then each row's last block reads them back and writes the row's result. Here a
launch writes a token naming its own results into each workspace and its outputs are the results
the token read back names, so a launch whose workspace another launch wrote in between returns the
other's results. Launches queued on streams that run at once are interleaved at that point: every
running kernel writes its partials before any of them reads.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import stitchlab as sl
from stitchlab import runtime
from stitchlab.ir.node import Node
from stitchlab.runtime.interpreter import eval_node

from .standin import Launch, StandIn, fake_cupy


class _Device:
    """The stand-in's memory by device address, and its launches run in NumPy (module docstring)."""

    def __init__(self) -> None:
        self.memory: dict[int, np.ndarray] = {}
        self._tokens = itertools.count(1)  # exact in a float32 workspace up to 2**24
        self._results: dict[int, dict[int, np.ndarray]] = {}

    def put(self, buffer: Any, values: np.ndarray) -> None:
        self.memory[buffer.data.ptr] = np.ascontiguousarray(values, buffer.dtype).ravel()

    def get(self, out: Any) -> np.ndarray:
        value = out._node.value
        assert value.shape == out.shape, (value.shape, out.shape)
        return self.memory[value.data.ptr].reshape(value.shape)

    def run(self, *streams: list[Launch]) -> None:
        """Run each stream's launches in order, the streams at the same time."""
        queues = [list(q) for q in streams]
        while any(queues):
            running = [self._launch(q.pop(0)) for q in queues if q]
            for kernel in running:
                next(kernel)  # every block has written its partial results
            for kernel in running:
                next(kernel, None)  # each row's last block has read them and written the row

    def _launch(self, launch: Launch) -> Iterator[None]:
        nodes, params = _kernel(launch.name)
        known: dict[int, np.ndarray] = {}
        outs, workspaces = [], []
        for (role, at, _), arg in zip(params, launch.args, strict=True):
            if role == "in":
                known[id(nodes[at])] = self.memory[arg.data.ptr].reshape(nodes[at].shape)
            elif role == "out":
                outs.append((nodes[at], arg))
            elif role == "ws":
                workspaces.append(arg)
        token = next(self._tokens)
        self._results[token] = {id(n): _evaluate(n, known) for n, _ in outs}
        for ws in workspaces:
            self.memory[ws.data.ptr] = np.full(ws.size, token, ws.dtype)
        yield
        if workspaces:
            token = int(self.memory[workspaces[0].data.ptr][0])
        for n, buffer in outs:
            assert buffer.size == n.size and buffer.dtype == n.dtype, (buffer.shape, n.shape)
            self.memory[buffer.data.ptr] = self._results[token][id(n)].ravel()


def _kernel(name: str) -> tuple[list[Node], list[list[Any]]]:
    """The graph nodes and recipe parameters of the kernel ``name`` (one executable per test)."""
    for exe in runtime._instances["cupy"]._executables.values():
        for kern in exe.recipe["kernels"]:
            if kern["name"] == name:
                return exe.graph.nodes, kern["params"]
    raise AssertionError(f"no executable launches {name}")


def _evaluate(node: Node, known: dict[int, np.ndarray]) -> np.ndarray:
    """``node`` over the kernel's input buffers ``known`` (by node id; filled on the way)."""
    if id(node) not in known:
        assert node.op != "input", f"the kernel reads {node} without an argument"
        with np.errstate(all="ignore"):
            value = np.asarray(eval_node(node, [_evaluate(i, known) for i in node.inputs], np))
        known[id(node)] = value.astype(node.dtype, copy=False)
    return known[id(node)]


def _total(x: Any) -> Any:
    return x.sum()


def _column_total(x: Any) -> Any:
    return x.sum(0)


def _kept_total(x: Any) -> Any:
    return x.sum(1, keepdims=True)


def _colnorm(x: Any) -> Any:
    return (x - x.mean(0)) / x.std(0)


CASES = [  # (body, input shape, the plan's schedules)
    (_total, (1 << 20,), ["row_split"]),
    (_kept_total, (4, 1 << 18), ["row_split"]),
    (_column_total, (50_000, 48), ["column_split"]),
    (_colnorm, (50_000, 64), ["column_split", "pointwise"]),
]


def _setup(standin: StandIn, body: Callable[[Any], Any], shape: tuple[int, ...], schedules: list[str],
           n_inputs: int) -> tuple[_Device, Any, list[Any], list[np.ndarray]]:
    rng = np.random.default_rng(len(shape) + shape[0])
    device = _Device()
    f = sl.jit(body)
    xs = [standin.array(shape) for _ in range(n_inputs)]
    values = [rng.standard_normal(shape).astype(np.float32) + k for k in range(n_inputs)]
    for x, v in zip(xs, values, strict=True):
        device.put(x, v)
    f(xs[0])  # traced and planned
    lazy = body(sl.asarray(xs[0]))
    assert [k.schedule.family for k in sl.explain(*(lazy if isinstance(lazy, tuple) else (lazy,))).kernels] == schedules
    standin.launches.clear()
    return device, f, xs, values


def _check(device: _Device, out: Any, body: Callable[[Any], Any], value: np.ndarray) -> None:
    want = body(value)
    assert out.shape == want.shape
    np.testing.assert_allclose(device.get(out), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(("body", "shape", "schedules"), CASES, ids=[c[0].__name__ for c in CASES])
def test_split_calls_one_after_another_on_a_stream_match_numpy(
        standin: StandIn, body: Callable[[Any], Any], shape: tuple[int, ...], schedules: list[str]) -> None:
    device, f, xs, values = _setup(standin, body, shape, schedules, 3)
    outs = [f(x) for x in xs]
    n = len(schedules)
    assert len(standin.launches) == 3 * n
    assert standin.launches[0].args[-2] is standin.launches[n].args[-2]  # one workspace, reused
    device.run(standin.launches)
    for out, v in zip(outs, values, strict=True):
        _check(device, out, body, v)


@pytest.mark.parametrize(("body", "shape", "schedules"), CASES, ids=[c[0].__name__ for c in CASES])
def test_split_calls_on_two_streams_at_once_match_numpy(
        standin: StandIn, body: Callable[[Any], Any], shape: tuple[int, ...], schedules: list[str]) -> None:
    device, f, xs, values = _setup(standin, body, shape, schedules, 2)
    with fake_cupy.Stream(5):
        first = f(xs[0])
    n = len(standin.launches)
    with fake_cupy.Stream(6):
        second = f(xs[1])
    device.run(standin.launches[:n], standin.launches[n:])
    _check(device, first, body, values[0])
    _check(device, second, body, values[1])


@pytest.mark.parametrize(("body", "shape", "schedules"), CASES, ids=[c[0].__name__ for c in CASES])
def test_a_captured_split_call_replayed_while_eager_calls_run_matches_numpy(
        standin: StandIn, body: Callable[[Any], Any], shape: tuple[int, ...], schedules: list[str]) -> None:
    device, f, xs, values = _setup(standin, body, shape, schedules, 2)
    stream = fake_cupy.Stream(9)
    stream.capturing = True
    with stream:
        graph_out = f(xs[0])
    graph = list(standin.launches)
    stream.capturing = False
    standin.launches.clear()
    with stream:  # the stream the graph was captured on, now running eagerly
        eager = f(xs[1])
    device.run(graph, standin.launches)  # the graph replayed on another stream meanwhile
    _check(device, graph_out, body, values[0])
    _check(device, eager, body, values[1])
    device.put(xs[0], values[0] * 2)  # a replay reads its input buffers anew
    device.run(graph)
    _check(device, graph_out, body, values[0] * 2)


def _kept_and_read(x: Any) -> Any:
    return x.sum(0), x - x.sum(0)  # the sums' (1, 48) buffer is returned as (48,) and read by the next kernel


def _returned_twice(x: Any) -> Any:
    return x.sum(0), x.sum(0).reshape(6, 8)  # one buffer returned in two shapes


def _two_reductions(x: Any) -> Any:
    return x.sum(0), x.max(1)


def _row_totals(x: Any) -> Any:
    return x.sum(1)


RETURNED = [  # (body, input shape, the plan's schedules, whether each output is its kernel's buffer as allocated)
    (_total, (1 << 20,), ["row_split"], [True]),
    (_column_total, (50_000, 48), ["column_split"], [True]),
    (_row_totals, (64, 512), ["row_block"], [True]),
    (_two_reductions, (50_000, 48), ["column_split", "row_warp"], [True, True]),
    (_kept_and_read, (50_000, 48), ["column_split", "pointwise"], [False, True]),
    (_returned_twice, (50_000, 48), ["column_split"], [False, False]),
]


@pytest.mark.parametrize(("body", "shape", "schedules", "as_allocated"), RETURNED, ids=[c[0].__name__ for c in RETURNED])
def test_a_reduction_is_allocated_in_the_shape_it_is_returned_in(
        standin: StandIn, body: Callable[[Any], Any], shape: tuple[int, ...], schedules: list[str],
        as_allocated: list[bool]) -> None:
    device, f, xs, values = _setup(standin, body, shape, schedules, 1)
    outs = f(xs[0])
    outs = outs if isinstance(outs, tuple) else (outs,)
    written = [a for k in standin.launches for a in k.args if isinstance(a, fake_cupy.ndarray)]
    # as allocated: the very buffer a kernel wrote, no view made per call; else a view of it
    assert [any(o._node.value is a for a in written) for o in outs] == as_allocated
    device.run(standin.launches)
    want = body(values[0])
    for out, w in zip(outs, want if isinstance(want, tuple) else (want,), strict=True):
        assert out.shape == w.shape
        np.testing.assert_allclose(device.get(out), w, rtol=1e-4, atol=1e-4)
