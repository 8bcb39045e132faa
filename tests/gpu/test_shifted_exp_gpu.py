"""bfloat16 ``sum(exp(a - max(a)))`` (logsumexp, cross-entropy) computes its exps with the
flushing ``ex2.approx.ftz`` (``GroupInfo.shifted_exps``): on rows whose exps reach far below
2**-126, where bfloat16 has subnormal values that the flush drops, the results are the bits of the
non-flushing kernel (``OPTIONS["shifted_exp_ftz"]`` off), and within bfloat16's step of float64.

Run on the GPU machine: ``PYTHONPATH=. python3 -m pytest -m gpu tests/gpu/test_shifted_exp_gpu.py -q``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest

import stitchlab as sl
from stitchlab.codegen import schedules as sched_mod
from stitchlab.ir.graph import build_graph

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cupy_backend")]

bfloat16 = pytest.importorskip("ml_dtypes").bfloat16


def _logsumexp(x: Any, t: Any) -> list[Any]:
    return [sl.logsumexp(x, axis=-1)]


def _cross_entropy(x: Any, t: Any) -> list[Any]:
    m = x.max(axis=-1, keepdims=True)
    lse = sl.log(sl.exp(x - m).sum(axis=-1)) + m[:, 0]
    onehot = t[:, None] == sl.arange(x.shape[1], dtype=np.int32)
    return [lse - sl.where(onehot, x, bfloat16(0)).sum(axis=-1)]


def _run(plan: Any, ftz: bool, bufs: list[Any]) -> list[np.ndarray]:
    from stitchlab.runtime.launch import build_executable

    k0 = plan.kernels[0]
    with sched_mod.switches(shifted_exp_ftz=ftz):
        ks = sched_mod.emit(k0.info, k0.schedule)
    body = ks.source.split('extern "C"')[-1]
    assert ("sl_exp_f16(" in body, "sl_exp_bf16(" in body) == (ftz, not ftz)
    k = dataclasses.replace(k0, name=ks.name, source=ks.source, params=ks.params)
    exe = build_executable(dataclasses.replace(plan, kernels=[k] + plan.kernels[1:]))
    return [o.get() for o in exe(bufs)]


@pytest.mark.parametrize("build", [_logsumexp, _cross_entropy], ids=["logsumexp", "cross_entropy"])
@pytest.mark.parametrize("cols", [1000, 4096, 40000])
def test_flushed_exps_give_the_bits_of_the_unflushed_kernel(build: Any, cols: int) -> None:
    import cupy as cp

    from stitchlab.runtime import _instance

    rng = np.random.default_rng(cols)
    rows = 257
    x = (rng.standard_normal((rows, cols)) * 40).astype(bfloat16)
    x[3] = bfloat16(-3.0)  # a constant row
    x[4, 17] = np.nan  # a NaN row
    x[5, ::2] = -np.inf  # exps of exactly 0
    x[6, :] = (np.arange(cols) % 64 - 95).astype(bfloat16)  # exps down to 2**-137: subnormal, and flushed past them
    t = rng.integers(0, cols, rows).astype(np.int32)
    d = (x.astype(np.float32) - x.astype(np.float32).max(axis=1, keepdims=True))
    tiny = np.exp(d.astype(np.float64))
    assert ((tiny > 0) & (tiny < 2.0 ** -126)).sum() > rows  # the flush has work to do
    graph, sources = build_graph([o._node for o in build(sl.asarray(cp.asarray(x)), sl.asarray(cp.asarray(t)))])
    bufs = [s.value for s in sources]
    plan = _instance("cupy").plan(graph).plan
    flushed, kept = _run(plan, True, bufs), _run(plan, False, bufs)
    for a, b in zip(flushed, kept, strict=True):
        assert a.tobytes() == b.tobytes()
    xf = x.astype(np.float64)
    m = xf.max(axis=1)
    want = np.log(np.exp(xf - m[:, None]).sum(axis=1)) + m
    if build is _cross_entropy:
        want = want - xf[np.arange(rows), t]
    got = flushed[0].astype(np.float64)
    ok = np.isfinite(want)
    assert np.isnan(got[4]) and np.isnan(want[4])
    np.testing.assert_allclose(got[ok], want[ok], rtol=2 ** -7, atol=2 ** -7 * np.abs(want[ok]).max())
