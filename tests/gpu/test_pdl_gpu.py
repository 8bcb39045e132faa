"""Programmatic dependent launch on the GPU (``stitchlab/runtime/pdl.py``): on sm_90 and newer the
kernels are launched with it, and a kernel that reads what the kernel before it wrote sees all of
it. The chain below makes the dependency as tight as it gets: a row reduction over 8192 rows, then
a kernel whose one block reads every one of those 8192 results (the last of them written by the
first kernel's last blocks), then a kernel over a fresh input that reuses the pool's freed blocks;
back to back, from four threads on their own streams, and captured into a CUDA graph.

What this cannot show is that the wait is needed: with it compiled out, the same chain gave 0 of 36
wrong results in float32 and in float16, in each of two runs (``benchmarks/results/2026-11-30-h200-pdl-control-and-tests.log``).
The generated kernels do not trigger their dependents early, so the next kernel starts only once
every block of the previous one has exited, and the window the wait closes is the flush of the
last writes. The wait is what the programming model requires; these tests check the results.

Run on the GPU machine: ``PYTHONPATH=. python3 -m pytest -m gpu tests/gpu/test_pdl_gpu.py -q``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from gpu_threads import on_own_streams

import stitchlab as sl
from stitchlab.runtime import pdl

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cupy_backend")]

ROWS, COLS = 8192, 4096


@sl.jit
def _row_lse(x: Any) -> Any:
    return sl.logsumexp(x, axis=1)


@sl.jit
def _softmax_of_all(y: Any) -> Any:
    y = sl.asarray(y).reshape(1, -1)
    e = sl.exp(y - y.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def chain(xs: list[Any]) -> list[Any]:
    """Per input: the softmax (over all rows at once) of its rows' logsumexp; no synchronization."""
    return [_softmax_of_all(_row_lse(x)) for x in xs]


def _reference(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    m = x.max(axis=1, keepdims=True)
    y = (np.log(np.exp(x - m).sum(axis=1, keepdims=True)) + m).reshape(1, -1)
    e = np.exp(y - y.max())
    return e / e.sum()


def inputs(n: int, dtype: Any, seed: int = 0) -> tuple[list[Any], list[np.ndarray]]:
    import cupy as cp

    rng = np.random.default_rng(seed)
    host = [(rng.standard_normal((ROWS, COLS)) * (1 + k % 5)).astype(dtype) for k in range(n)]
    xs = [cp.asarray(h) for h in host]
    cp.cuda.Device().synchronize()  # copied on the legacy stream; the tests read them on others too
    return xs, host


def _check(outs: list[Any], host: list[np.ndarray], dtype: Any) -> None:
    rtol = 4e-2 if dtype == np.float16 else 1e-4  # float16: the row results round to 2^-7 at 16-32
    for k, (o, h) in enumerate(zip(outs, host, strict=True)):
        got = np.asarray(o.get()).astype(np.float64)
        np.testing.assert_allclose(got, _reference(h), rtol=rtol, atol=1e-7, err_msg=f"input {k}")


def test_kernels_are_launched_with_pdl_on_sm_90_and_newer(monkeypatch: pytest.MonkeyPatch) -> None:
    import cupy as cp

    if int(cp.cuda.Device().compute_capability) < pdl.MIN_COMPUTE_CAPABILITY:
        pytest.skip("PDL needs sm_90: CuPy's launch is used on this GPU")
    assert pdl.enabled()
    seen = []
    call = pdl.Launcher.__call__
    monkeypatch.setattr(pdl.Launcher, "__call__", lambda self, args: (seen.append(self.name), call(self, args))[1])
    f = sl.jit(lambda x: sl.exp(x) + 1)  # a new function: its executable is assembled here
    x = cp.arange(1000, dtype=cp.float32) / 1000
    np.testing.assert_allclose(f(x).get(), np.exp(np.arange(1000, dtype=np.float32) / 1000) + 1, rtol=1e-6)
    assert seen and all(name.startswith("sl_") for name in seen)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_a_kernel_sees_all_of_the_previous_kernels_writes(dtype: Any) -> None:
    xs, host = inputs(12, dtype)
    chain(xs[:1])  # traced and compiled before the checked chain
    outs = []
    for _ in range(3):  # back to back, no synchronization in between
        outs += chain(xs)
    _check(outs, host * 3, dtype)


def test_threads_on_their_own_streams_get_their_own_results() -> None:
    xs, host = inputs(8, np.float32, seed=1)
    chain(xs[:1])
    results = on_own_streams(4, lambda t: [o for _ in range(5) for o in chain(xs[t::4])])
    for t in range(4):
        _check(results[t], host[t::4] * 5, np.float32)


def test_a_captured_cuda_graph_replays_the_chain() -> None:
    """Stream capture of PDL launches (programmatic edges in the graph), replayed twice."""
    import cupy as cp

    xs, host = inputs(3, np.float32, seed=2)
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        for _ in range(2):
            chain(xs)  # traced, compiled, and the pool holds blocks for this stream
        stream.synchronize()
        stream.begin_capture()
        outs = chain(xs)
        graph = stream.end_capture()
    for replay in range(2):
        graph.launch(stream=stream)
        stream.synchronize()
        try:
            _check(outs, host, np.float32)
        except AssertionError as exc:
            raise AssertionError(f"replay {replay}: {str(exc)[:300]}") from None
