"""Rows too long to stay on chip stream in 16-byte chunks (``cache="none"`` with ``vec`` > 1,
``_row_body`` in ``stitchlab/codegen/schedules.py``; float16, bfloat16 and float32 elements): on the GPU, each kernel's outputs match the
same schedule element by element (``vec=1``) and the float64 reference, with the inputs aligned
to 16 bytes and not (views that start one element in: every vector load and store takes its
element-by-element path), and with weights broadcast along the rows.

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


def _view(a: np.ndarray, shift: int):
    """``a`` on the GPU, starting ``shift`` elements into a larger buffer."""
    import cupy as cp

    flat = cp.empty(a.size + shift, a.dtype)
    flat[shift:] = cp.asarray(a.ravel())
    return flat[shift:].reshape(a.shape)


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
    sl.set_backend("numpy")
    try:
        with np.errstate(all="ignore"):
            ref = [o.get() for o in build(*[a.astype(np.float64) for a in host])]
    finally:
        sl.set_backend("cupy")
    # float16 about 40 steps of the dtype, bfloat16 the same in its (8 times larger) steps: the
    # affine's cancellation (x * w + b near 0) keeps that many in absolute terms
    tol = {"float16": 2e-2, "bfloat16": 1.6e-1, "float32": 2e-5}[dtype]
    for got, elementwise, want in zip(outs[k0.schedule.vec], outs[1], ref, strict=True):
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        np.testing.assert_allclose(got, elementwise, rtol=tol, atol=tol)
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    # and through the planner's own kernel, as a user calls it
    lazy = build(*[sl.asarray(a) for a in args])
    np.testing.assert_allclose(lazy[0].get().astype(np.float64), ref[0], rtol=tol, atol=tol)
