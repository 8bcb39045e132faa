"""Split reductions on several streams at once, and calls with temporaries captured into a CUDA
graph (``stitchlab/runtime/scratch.py``), on the GPU.

* Split kernels (``row_split``: a sum over 32M elements; ``column_split``: column sums of a tall,
  narrow matrix) count their finished blocks in counters and keep partial results in workspaces.
  Four threads on their own streams (or each on CuPy's per-thread default stream) call the same
  functions back to back; every result must match NumPy's.
* A captured call's temporaries (partial results, the statistics passed between the kernels of a
  tall column normalization) must not go back to CuPy's pool: after the capture the test allocates
  and fills arrays of many sizes on the same stream, replays the graph, and checks both that the
  arrays still hold what was written to them and that the outputs are right. The same for the
  arrays CuPy allocates in an interpreted step (an argmax over columns); a matrix product under
  capture raises a clear error (CuPy does not call cuBLAS while capturing).

Run on the GPU machine: ``PYTHONPATH=. python3 -m pytest -m gpu tests/gpu/test_streams_and_graphs_gpu.py -q``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from gpu_threads import on_own_streams

import stitchlab as sl

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cupy_backend")]


@sl.jit
def _total(x: Any) -> Any:
    return x.sum()


@sl.jit
def _column_sums(x: Any) -> Any:
    return x.sum(axis=0)


@sl.jit
def _colnorm(x: Any) -> Any:
    return (x - x.mean(axis=0)) / x.std(axis=0)


def _plan_families(out: Any) -> list[str]:
    return [k.schedule.family for k in sl.explain(out).kernels]  # out: a lazy expression


def _host(shape: tuple[int, ...], seed: int) -> np.ndarray:
    return np.random.default_rng(seed).random(shape, dtype=np.float32) + 0.5  # positive: sums do not cancel


@pytest.mark.parametrize("per_thread_default", [False, True], ids=["own streams", "per-thread default stream"])
def test_split_reductions_on_four_streams_at_once_each_get_their_own_results(per_thread_default: bool) -> None:
    import cupy as cp

    hosts = {t: (_host((1 << 25,), t), _host((1 << 20, 48), 10 + t)) for t in range(4)}
    devs = {t: (cp.asarray(a), cp.asarray(b)) for t, (a, b) in hosts.items()}
    cp.cuda.Device().synchronize()
    assert _plan_families(sl.asarray(devs[0][0]).sum()) == ["row_split"]
    assert _plan_families(sl.asarray(devs[0][1]).sum(axis=0)) == ["column_split"]
    results = on_own_streams(4, lambda t: [(_total(devs[t][0]), _column_sums(devs[t][1])) for _ in range(40)],
                             per_thread_default)
    for t, (a, b) in hosts.items():
        want_total, want_cols = a.astype(np.float64).sum(), b.astype(np.float64).sum(axis=0)
        for k, (total, cols) in enumerate(results[t]):
            np.testing.assert_allclose(float(total.get()), want_total, rtol=1e-5, err_msg=f"thread {t} call {k}")
            np.testing.assert_allclose(cols.get(), want_cols, rtol=1e-5, err_msg=f"thread {t} call {k}")
    # and the counters are all back at zero: a later call on the default stream is right too
    np.testing.assert_allclose(float(_total(devs[0][0]).get()), hosts[0][0].astype(np.float64).sum(), rtol=1e-5)


def test_a_captured_graph_keeps_its_temporaries_out_of_the_pool() -> None:
    import cupy as cp

    a_host, b_host = _host((1 << 22,), 20), _host((1 << 18, 64), 21)
    b_host[:, 3] *= 1000.0  # columns of different scales
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        a, b = cp.asarray(a_host), cp.asarray(b_host)
        for _ in range(2):
            _total(a), _colnorm(b)  # traced and compiled
        lazy = sl.asarray(b)
        assert _plan_families((lazy - lazy.mean(axis=0)) / lazy.std(axis=0)) == ["column_split", "pointwise"]
        spare = [cp.empty(1 << 24, cp.uint8) for _ in range(8)]  # the pool has room: no cudaMalloc while capturing
        del spare
        stream.synchronize()
        stream.begin_capture()
        total, normed = _total(a), _colnorm(b)
        graph = stream.end_capture()
        # what a program does next on that stream: arrays of many sizes, filled
        sizes = [int(n) for n in np.geomspace(64, 1 << 18, 40)] * 3
        others = [cp.full(n, float(k), cp.float32) for k, n in enumerate(sizes)]
        stream.synchronize()
        for _ in range(2):
            graph.launch(stream=stream)
        stream.synchronize()
    for k, o in enumerate(others):
        assert bool((o == float(k)).all()), f"array {k} ({o.size} floats) was overwritten by a replay"
    np.testing.assert_allclose(float(total.get()), a_host.astype(np.float64).sum(), rtol=1e-5)
    b64 = b_host.astype(np.float64)
    np.testing.assert_allclose(normed.get(), (b64 - b64.mean(0)) / b64.std(0), rtol=2e-4, atol=2e-4)


@sl.jit
def _column_sort(x: Any) -> Any:
    return sl.sort(x * 2, axis=0) + 1  # a kernel, the sort down the columns (interpreted: CuPy), a kernel


def test_a_captured_graph_keeps_the_arrays_of_interpreted_steps_out_of_the_pool() -> None:
    # what CuPy allocates inside an interpreted step (the sort's result here, and its work
    # space: before c045d57 only the step's node values were kept) is kept alive with the call's
    # outputs, as the kernels' temporaries are
    import cupy as cp

    rng = np.random.default_rng(22)
    x_host = rng.standard_normal((4096, 512)).astype(np.float32)
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        x = cp.asarray(x_host)
        for _ in range(2):
            _column_sort(x)  # traced and compiled
        assert _plan_families(sl.sort(sl.asarray(x) * 2, axis=0) + 1) == ["pointwise", "interpreted", "pointwise"]
        spare = [cp.empty(1 << 24, cp.uint8) for _ in range(8)]
        del spare
        stream.synchronize()
        stream.begin_capture()
        try:
            out = _column_sort(x)
        finally:
            graph = stream.end_capture()
        sizes = [int(n) for n in np.geomspace(64, 1 << 18, 40)] * 3
        others = [cp.full(n, float(k), cp.float32) for k, n in enumerate(sizes)]
        stream.synchronize()
        x[...] = cp.asarray(x_host[::-1].copy())  # the replay reads x's current contents
        for _ in range(2):
            graph.launch(stream=stream)
        stream.synchronize()
    for k, o in enumerate(others):
        assert bool((o == float(k)).all()), f"array {k} ({o.size} floats) was overwritten by a replay"
    np.testing.assert_array_equal(cp.asnumpy(cp.asarray(out)), np.sort(x_host[::-1] * 2, axis=0) + 1)


@sl.jit
def _dense(x: Any, w: Any, b: Any) -> Any:
    return sl.tanh((x * 2) @ w + b)


def test_a_matmul_under_capture_raises_a_clear_error() -> None:
    import cupy as cp

    rng = np.random.default_rng(23)
    x = cp.asarray(rng.standard_normal((64, 32)).astype(np.float32))
    w = cp.asarray(rng.standard_normal((32, 16)).astype(np.float32))
    b = cp.asarray(rng.standard_normal(16).astype(np.float32))
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        _dense(x, w, b)
        stream.synchronize()
        stream.begin_capture()
        try:
            with pytest.raises(RuntimeError, match=r"a matrix product \(CuPy does not call cuBLAS.*\) cannot be captured into a CUDA graph"):
                _dense(x, w, b)
        finally:
            stream.end_capture()
        stream.synchronize()
        got = cp.asnumpy(cp.asarray(_dense(x, w, b)))  # and the stream works on
    want = np.tanh((cp.asnumpy(x) * 2) @ cp.asnumpy(w) + cp.asnumpy(b))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
