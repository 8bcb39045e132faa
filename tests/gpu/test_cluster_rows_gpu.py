"""Row kernels split over a thread-block cluster (``Schedule.cluster`` = 2: each block of the
cluster caches half of the row in registers, the block results combine through distributed
shared memory) against NumPy, on the GPU: the schedule forced onto softmax, layernorm,
logsumexp, add + layernorm, GroupNorm's strided rows and a NaN in one half of a row, in three
dtypes; and the planner's choice for rows too long for one block's register cache.

Run on the GPU machine: ``PYTHONPATH=. python3 -m pytest -m gpu tests/gpu -q``.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import pathlib

import numpy as np
import pytest

import stitchlab as sl
from stitchlab import runtime
from stitchlab.codegen import emit
from stitchlab.ir.graph import build_graph
from stitchlab.plan.cost import Launch, Schedule
from stitchlab.runtime.launch import build_executable

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cupy_backend")]

_spec = importlib.util.spec_from_file_location(
    "stitchlab_test_workloads_rows", pathlib.Path(__file__).resolve().parents[1] / "compiler" / "workloads.py")
_wl = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_wl)

RTOL = {"float16": 2e-2, "float32": 2e-5, "float64": 1e-11}


def _reference(build, args: list[np.ndarray]) -> list[np.ndarray]:
    sl.set_backend("numpy")
    try:
        with np.errstate(all="ignore"):
            return [o.get() for o in build(*[a.astype(np.float64) for a in args])]
    finally:
        sl.set_backend("cupy")


def _check(got: np.ndarray, want: np.ndarray, rtol: float, what: str) -> None:
    assert got.shape == want.shape, what
    finite = np.isfinite(want)
    scale = max(1.0, float(np.abs(want[finite]).max())) if finite.any() else 1.0
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=rtol, atol=rtol * scale, equal_nan=True, err_msg=what)


def _forced(outs: list[sl.LazyArray], block: int) -> list[np.ndarray]:
    """The outputs with the first (only) kernel's schedule replaced by a 2-block row cluster."""
    graph, sources = build_graph([o._node for o in outs])
    bufs = [s.value for s in sources]
    plan = runtime._instance("cupy").plan(graph).plan
    assert len(plan.kernels) == 1, plan.summary()
    k0 = plan.kernels[0]
    vec = 16 // max(o.dtype.itemsize for o, _ in k0.info.outputs)
    sched = Schedule("row_block", block=block, vec=vec, cache="registers", index=k0.schedule.index, cluster=2)
    ks = emit(k0.info, sched)
    assert ks.schedule.cluster == 2 and "__cluster_dims__(2, 1, 1)" in ks.source
    launch = Launch((2 * k0.info.rows, 1, 1), (block, 1, 1))
    k = dataclasses.replace(k0, name=ks.name, source=ks.source, params=ks.params, schedule=ks.schedule, launch=launch)
    exe = build_executable(dataclasses.replace(plan, kernels=[k]))
    return [o.get() for o in exe(bufs)]


#: (rows, columns): a few rows, rows of 20 000 (10 000 per block), many short rows
SHAPES = [(3, 4096), (300, 20000), (257, 1024), (64, 512)]


@pytest.mark.parametrize("block", [512, 1024])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("name", ["softmax", "layernorm", "logsumexp", "add_layernorm"])
@pytest.mark.parametrize("shape", SHAPES, ids=[f"{r}x{c}" for r, c in SHAPES])
def test_forced_row_cluster_matches_numpy(shape: tuple[int, int], name: str, dtype: str, block: int) -> None:
    import cupy as cp

    build, _, kinds = _wl.WORKLOADS[name]
    host = _wl.make_args(kinds, *shape, np.dtype(dtype), seed=shape[1])
    got = _forced(build(*[cp.asarray(a) for a in host]), block)
    want = _reference(build, host)
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        _check(g, w, RTOL[dtype], f"{name} {shape} {dtype} block={block} output {k}")


def test_forced_row_cluster_groupnorm_strided_rows_and_nan_in_one_half() -> None:
    import cupy as cp

    host = _wl.make_args("mvv", 1024, 4096, np.float32, seed=3)
    got = _forced(_wl.WORKLOADS["groupnorm"][0](*[cp.asarray(a) for a in host]), 512)
    _check(got[0], _reference(_wl.WORKLOADS["groupnorm"][0], host)[0], 2e-5, "groupnorm")
    x = np.random.default_rng(4).standard_normal((6, 8192)).astype(np.float32)
    x[2, 6000] = np.nan  # in the second block's half
    x[4, 100] = np.inf  # in the first block's half
    xs = sl.asarray(cp.asarray(x))
    (z, m) = _forced(_wl.WORKLOADS["softmax"][0](xs) + [xs.max(axis=1)], 1024)
    np.testing.assert_array_equal(m, x.max(axis=1))
    assert np.isnan(z[2]).all() and np.isnan(z[4]).all()
    ok = [0, 1, 3, 5]
    _check(z[ok], _reference(_wl.WORKLOADS["softmax"][0], [x[ok]])[0], 2e-5, "softmax rows without NaN")


@pytest.mark.parametrize(("name", "shape", "dtype"), [
    ("softmax", (128, 65536), "float16"), ("rmsnorm", (128, 65536), "float32"), ("add_layernorm", (1024, 32768), "float16"),
    ("logsumexp", (256, 32768), "float64"),
])
def test_planned_row_clusters_match_numpy(name: str, shape: tuple[int, int], dtype: str) -> None:
    """Rows too long for one block's register cache: the planner splits them over a cluster."""
    import cupy as cp

    build, _, kinds = _wl.WORKLOADS[name]
    host = _wl.make_args(kinds, *shape, np.dtype(dtype), seed=7)
    outs = build(*[cp.asarray(a) for a in host])
    plan = sl.explain(*outs)
    assert [k.schedule.cluster for k in plan.kernels] == [2], plan.summary()
    got = [o.get() for o in sl.compute(*outs)]
    for k, (g, w) in enumerate(zip(got, _reference(build, host), strict=True)):
        _check(g, w, RTOL[dtype], f"{name} {shape} {dtype} output {k}")
