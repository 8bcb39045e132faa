"""The cupy executable's plumbing without a GPU: kernels are compiled (NVRTC) and "launched" into a
recorder, buffers come from NumPy. Checks argument lists, output shapes and what is launched."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import stitchlab as sl
from stitchlab.codegen.program import build_plan
from stitchlab.ir.graph import build_graph
from stitchlab.plan import preset
from stitchlab.runtime import kernels, launch

from .standin import fake_cupy

cupy = pytest.importorskip("cupy")
pytest.importorskip("cuda.bindings.nvrtc", reason="NVRTC (pip cuda-bindings) is not installed")


class _Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[int, ...], tuple[int, ...], list[Any]]] = []

    def load(self, key: str, cubin: bytes, name: str) -> Any:
        assert cubin, f"empty cubin for {name}"

        def fn(grid: tuple[int, ...], block: tuple[int, ...], args: tuple[Any, ...], shared_mem: int = 0) -> None:
            self.calls.append((name, grid, block, list(args)))

        return fn


@pytest.fixture
def recorder(monkeypatch: pytest.MonkeyPatch) -> _Recorder:
    rec = _Recorder()
    monkeypatch.setattr(kernels, "load", rec.load)
    monkeypatch.setattr(cupy, "empty", np.empty)
    monkeypatch.setattr(cupy, "zeros", np.zeros)
    monkeypatch.setattr(cupy, "ascontiguousarray", np.ascontiguousarray)
    monkeypatch.setattr(cupy.cuda, "get_current_stream", lambda: fake_cupy.Stream())  # no device to ask
    return rec


def _run(outs: list[sl.LazyArray]) -> tuple[Any, list[Any]]:
    graph, sources = build_graph([o._node for o in outs])
    plan = build_plan(graph, preset("H200"))
    exe = launch.build_executable(plan)
    return plan, exe([s.value for s in sources])


def test_every_parameter_gets_an_argument_of_its_kind(recorder: _Recorder) -> None:
    x = sl.asarray(np.random.rand(64, 100).astype(np.float32))
    outs = [sl.logsumexp(x, axis=1), x.sum(), (x - x.mean(0)) / x.std(0), x.reshape(100, 64), x]
    plan, res = _run(outs)
    assert [r.shape for r in res] == [o.shape for o in outs]
    assert res[3].base is not None or res[3].shape == (100, 64)  # a view, no kernel
    assert len(recorder.calls) == len(plan.kernels)
    for (name, grid, block, args), k in zip(recorder.calls, plan.kernels, strict=True):
        assert name == k.name and grid == k.launch.grid and block == k.launch.block
        assert len(args) == len(k.params)
        for p, a in zip(k.params, args, strict=True):
            if p.role in ("in", "out", "ws", "counter"):
                assert isinstance(a, np.ndarray), (p, a)
            else:
                assert isinstance(a, (np.int32, np.int64)), (p, a)
            if p.role == "in" or (p.role == "out" and not any(a is r for r in res)):
                assert a.shape == p.node.shape and a.dtype == p.node.dtype
            elif p.role == "out":  # returned as allocated, in the output's shape: the kernel sees its address
                assert a.size == p.node.size and a.dtype == p.node.dtype


def test_packed_kernel_gets_each_groups_sizes_and_blocks(recorder: _Recorder) -> None:
    a = sl.asarray(np.random.rand(7, 33).astype(np.float32))
    b = sl.asarray(np.random.rand(100).astype(np.float64))
    plan, res = _run([sl.exp(a) * 2, sl.sin(b) + 1])
    ((name, grid, _, args),) = recorder.calls
    (k,) = plan.kernels
    sizes = [int(x) for p, x in zip(k.params, args, strict=True) if p.role == "n"]
    blocks = [int(x) for p, x in zip(k.params, args, strict=True) if p.role == "blocks"]
    assert sizes == [7 * 33, 100] and sum(blocks) == grid[0]
    assert [r.shape for r in res] == [(7, 33), (100,)]


def test_empty_domain_launches_nothing(recorder: _Recorder) -> None:
    x = sl.asarray(np.zeros((0, 16), np.float32))
    plan, res = _run([sl.exp(x) + 1])
    assert recorder.calls == [] and res[0].shape == (0, 16)


def test_split_column_kernel_gets_a_workspace_per_partial_and_zeroed_counters(recorder: _Recorder) -> None:
    x = sl.asarray(np.random.rand(50_000, 40).astype(np.float32))
    plan, res = _run([x.sum(0), x.max(0)])
    (k,) = plan.kernels
    assert k.schedule.family == "column_split" and k.launch.split > 1
    ((_, grid, block, args),) = recorder.calls
    G = k.launch.split
    by_role: dict[str, list[Any]] = {}
    for p, a in zip(k.params, args, strict=True):
        by_role.setdefault(p.role, []).append(a)
    # (40 float32 columns: two lanes a thread, blocks of 16 x 16 threads)
    assert [int(v) for v in by_role["G"]] == [G] and grid == (2 * G, 1, 1)
    assert tuple(block) == k.launch.block == (32 // k.schedule.vec, 8 * k.schedule.vec, 1) and k.schedule.vec == 2
    assert [int(v) for v in by_role["R"] + by_role["K"]] == [40, 50_000]
    assert [w.size for w in by_role["ws"]] == [40 * G, 40 * G]
    ((counters,),) = [by_role["counter"]]
    assert counters.dtype == np.uint32 and counters.size >= 2 and not counters.any()
    assert [r.shape for r in res] == [(40,), (40,)]
