"""Rows too long to stay on chip stream in 16-byte chunks (``cache="none"`` with ``vec`` > 1,
``_row_body`` in ``stitchlab/codegen/schedules.py``; float16, bfloat16 and float32 elements): on the GPU, each kernel's outputs match the
same schedule element by element (``vec=1``) and the float64 reference, with the inputs aligned
to 16 bytes and not (views that start one element in: every vector load and store takes its
element-by-element path), and with weights broadcast along the rows.

The same kernels with blocks that walk their rows (``Schedule.row_loop``, passes turning round):
the same bits whatever the grid, the row-a-block kernel's values up to the order of the sums, and
argmax's first positions where its passes keep going up.

Run on the GPU machine: ``PYTHONPATH=. python3 -m pytest -m gpu tests/gpu/test_streamed_vectors_gpu.py -q``.
"""

from __future__ import annotations

import dataclasses

import ml_dtypes  # noqa: F401  (registers the "bfloat16" dtype name with NumPy)
import numpy as np
import pytest
from compiler import workloads as _wl  # tests/ is on sys.path (tests/conftest.py)

import stitchlab as sl

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cupy_backend")]

#: against the float64 reference: float16 about 40 steps of the dtype, bfloat16 the same in its
#: (8 times larger) steps (the affine's cancellation, x * w + b near 0, keeps that many in
#: absolute terms)
TOL = {"float16": 2e-2, "bfloat16": 1.6e-1, "float32": 2e-5, "float64": 1e-12}


def _view(a: np.ndarray, shift: int):
    """``a`` on the GPU, starting ``shift`` elements into a larger buffer."""
    import cupy as cp

    flat = cp.empty(a.size + shift, a.dtype)
    flat[shift:] = cp.asarray(a.ravel())
    return flat[shift:].reshape(a.shape)


def _reference(build, host: list[np.ndarray]) -> list[np.ndarray]:
    """``build`` over ``host`` in float64 on the numpy backend."""
    sl.set_backend("numpy")
    try:
        with np.errstate(all="ignore"):
            return [o.get() for o in build(*[a.astype(np.float64) for a in host])]
    finally:
        sl.set_backend("cupy")


@pytest.mark.parametrize("shift", [0, 1])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
@pytest.mark.parametrize("name", ["softmax", "layernorm", "add_layernorm", "logsumexp", "rmsnorm"])
def test_streamed_chunks_match_elements_and_reference(name: str, dtype: str, shift: int) -> None:
    from stitchlab.codegen import emit
    from stitchlab.ir.graph import build_graph
    from stitchlab.runtime import _instance
    from stitchlab.runtime.launch import build_executable

    build, _, kinds = _wl.WORKLOADS[name]
    host = _wl.make_args(kinds, 272, 70_000, np.dtype(dtype), seed=5)  # rows enough not to split
    host[0][3, 11] = np.nan  # one row carries a NaN through its reductions
    args = [_view(a, shift) for a in host]
    graph, sources = build_graph([o._node for o in build(*args)])
    bufs = [s.value for s in sources]
    plan = _instance("cupy").plan(graph).plan
    (k0,) = plan.kernels
    assert k0.schedule.cache == "none" and k0.schedule.vec == 16 // np.dtype(dtype).itemsize, k0.schedule
    outs = {}
    for vec in (k0.schedule.vec, 1):
        ks = emit(k0.info, dataclasses.replace(k0.schedule, vec=vec))
        assert ("sl_load_vec<" in ks.source) == (vec > 1)
        k = dataclasses.replace(k0, name=ks.name, source=ks.source, params=ks.params, schedule=ks.schedule)
        outs[vec] = [o.get().astype(np.float64) for o in build_executable(dataclasses.replace(plan, kernels=[k]))(bufs)]
    ref = _reference(build, host)
    tol = TOL[dtype]
    for got, elementwise, want in zip(outs[k0.schedule.vec], outs[1], ref, strict=True):
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        np.testing.assert_allclose(got, elementwise, rtol=tol, atol=tol)
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    # and through the planner's own kernel, as a user calls it
    lazy = build(*[sl.asarray(a) for a in args])
    np.testing.assert_allclose(lazy[0].get().astype(np.float64), ref[0], rtol=tol, atol=tol)


def _walking(k0, launch_grid: int):
    """``k0`` with blocks that walk their rows, launched over ``launch_grid`` blocks."""
    from stitchlab.codegen import emit

    ks = emit(k0.info, dataclasses.replace(k0.schedule, row_loop=True))
    return dataclasses.replace(k0, name=ks.name, source=ks.source, params=ks.params, schedule=ks.schedule,
                               launch=dataclasses.replace(k0.launch, grid=(launch_grid, 1, 1)))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("name", ["softmax", "layernorm", "add_layernorm", "logsumexp", "rmsnorm"])
def test_blocks_walking_rows_match_a_row_a_block(name: str, dtype: str) -> None:
    from stitchlab.ir.graph import build_graph
    from stitchlab.runtime import _instance
    from stitchlab.runtime.launch import build_executable

    build, _, kinds = _wl.WORKLOADS[name]
    host = _wl.make_args(kinds, 272, 70_000, np.dtype(dtype), seed=7)
    host[0][3, 11] = np.nan
    args = [_view(a, int(dtype == "float32")) for a in host]  # (float32: unaligned, element-wise paths)
    graph, sources = build_graph([o._node for o in build(*args)])
    bufs = [s.value for s in sources]
    plan = _instance("cupy").plan(graph).plan
    (k0,) = plan.kernels
    assert k0.schedule.family == "row_block" and k0.schedule.cache == "none", k0.schedule
    plain = [o.get() for o in build_executable(plan)(bufs)]
    walked = {grid: [o.get() for o in build_executable(dataclasses.replace(plan, kernels=[_walking(k0, grid)]))(bufs)]
              for grid in (3, 132, k0.launch.grid[0])}
    for grid, outs in walked.items():  # which block takes a row changes no bit of it
        for got, first in zip(outs, walked[3], strict=True):
            np.testing.assert_array_equal(got.view(np.uint8), first.view(np.uint8), err_msg=f"grid {grid}")
    tol = TOL[dtype]
    for got, row_a_block, want in zip(walked[3], plain, _reference(build, host), strict=True):
        got = got.astype(np.float64)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        np.testing.assert_allclose(got, row_a_block.astype(np.float64), rtol=tol, atol=tol)
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_argmax_rows_walked_by_blocks_give_numpys_first_positions() -> None:
    """Values of 7 levels: every row has thousands of ties for its maximum; NumPy gives the first."""
    import cupy as cp

    from stitchlab.ir.graph import build_graph
    from stitchlab.runtime import _instance
    from stitchlab.runtime.launch import build_executable

    host = np.random.default_rng(3).integers(-3, 4, (272, 70_000)).astype(np.float32)
    host[5, 100:] = -4.0
    host[5, 69_999] = 9.0  # a row whose only maximum is its last element
    x = sl.asarray(cp.asarray(host))
    m = x.max(-1, keepdims=True)
    graph, sources = build_graph([(x - m).argmax(-1)._node, sl.exp(x - m).sum(-1)._node])
    bufs = [s.value for s in sources]
    plan = _instance("cupy").plan(graph).plan
    (k0,) = plan.kernels
    assert k0.schedule.family == "row_block" and k0.schedule.cache == "none", k0.schedule
    arg, total = (o.get() for o in build_executable(dataclasses.replace(plan, kernels=[_walking(k0, 3)]))(bufs))
    shifted = host - host.max(-1, keepdims=True)
    np.testing.assert_array_equal(arg, np.argmax(shifted, -1))
    np.testing.assert_allclose(total, np.exp(shifted.astype(np.float64)).sum(-1), rtol=2e-5)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["logsumexp", "softmax"])
def test_online_exp_sums_match_two_passes(name: str, dtype: str) -> None:
    """``OPTIONS["online_exp_sum"]`` and ``["online_exp_sum_streamed"]``: the sum of exps in the max's pass keeps the two-pass
    kernel's NaN and infinities (rows of -inf, +inf once and twice, NaN, -inf heads and tails) and
    its values up to rounding; with the rows walked by blocks too."""
    import cupy as cp

    from stitchlab.codegen import emit
    from stitchlab.codegen.schedules import switches
    from stitchlab.ir.graph import build_graph
    from stitchlab.runtime import _instance
    from stitchlab.runtime.launch import build_executable

    host = np.random.default_rng(4).standard_normal((272, 70_000)).astype(dtype) * 3
    host[0, :] = -np.inf
    host[1, 5] = host[2, 5] = host[2, -1] = np.inf
    host[3, 11] = np.nan
    host[4, :30_000] = host[5, 9_000:] = -np.inf

    def build(a):
        x = sl.asarray(a)
        return [sl.logsumexp(x, axis=-1)] if name == "logsumexp" else [sl.softmax(x, axis=-1)]

    graph, sources = build_graph([o._node for o in build(cp.asarray(host))])
    bufs = [s.value for s in sources]
    plan = _instance("cupy").plan(graph).plan
    (k0,) = plan.kernels
    assert k0.schedule.cache == "none" and k0.info.online_exp_sums(), k0.schedule
    row_a_block = dataclasses.replace(k0.schedule, row_loop=False)
    kernels = {}
    for label, on in (("two passes", False), ("one pass", True)):
        with switches(online_exp_sum_streamed=on):
            ks = emit(k0.info, row_a_block)
        kernels[label] = dataclasses.replace(k0, name=ks.name, source=ks.source, params=ks.params, schedule=ks.schedule,
                                             launch=dataclasses.replace(k0.launch, grid=(host.shape[0], 1, 1)))
    with switches(online_exp_sum=True):
        kernels["walked"] = _walking(k0, 132)
    got = {label: [o.get().astype(np.float64) for o in build_executable(dataclasses.replace(plan, kernels=[k]))(bufs)]
           for label, k in kernels.items()}
    want = _reference(build, [host])
    tol = TOL[dtype]
    for label, outs in got.items():
        for g, w in zip(outs, want, strict=True):
            for test in (np.isnan, np.isposinf, np.isneginf):
                np.testing.assert_array_equal(test(g), test(w), err_msg=f"{label}: {test.__name__}")
            np.testing.assert_allclose(g, w, rtol=tol, atol=tol, err_msg=label)


def test_few_rows_of_softmax_scale_their_sums_once_a_chunk() -> None:
    """A float32 softmax of no more rows than SMs is planned ``Schedule.few_rows`` (its sum of
    exps scaled once a 16-byte chunk, ``_group_maxima``): NumPy's NaNs and values over rows whose
    maximum rises at every chunk and at none after the first, +inf, chunks and a row of -inf, NaN
    (float64 rows stream element by element, a block a row, and are not walked)."""
    import cupy as cp
    from rowscans import with_special_rows

    host = with_special_rows(np.random.default_rng(61).standard_normal((64, 128256)).astype(np.float32))
    y = sl.softmax(sl.asarray(cp.asarray(host)), axis=-1)
    (k,) = sl.explain(y).kernels
    assert k.schedule.row_loop and k.schedule.few_rows and " = fmax(tm" in k.source
    got = y.get().astype(np.float64)
    x = host.astype(np.float64)
    with np.errstate(invalid="ignore"):
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        want = e / e.sum(axis=-1, keepdims=True)
    assert np.isnan(want[[3, 5, 6, 7]]).all() and not np.isnan(want[[0, 1, 2, 4]]).any() and not np.isnan(want[8:]).any()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    np.testing.assert_allclose(got[ok], want[ok], rtol=TOL["float32"], atol=1e-30)
