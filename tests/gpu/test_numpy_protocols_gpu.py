"""NumPy's dispatch protocols on CuPy-backed stitchlab arrays (``stitchlab/frontend/protocols.py``):
NumPy-written code runs as stitchlab kernels on the GPU (one launch for a softmax written with
``np.*``), CuPy operands keep results lazy on either side of an operator, ``out=`` CuPy and NumPy
arrays are written, what stitchlab lacks runs in CuPy on the device (NumPy on a host copy where
CuPy lacks it too), and ``x @ w`` is a cuBLAS step of the plan with the work around it fused.

Run on the GPU machine: ``PYTHONPATH=. python3 -m pytest -m gpu tests/gpu/test_numpy_protocols_gpu.py -q``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import stitchlab as sl
from stitchlab.ir.dtypes import as_dtype

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cupy_backend")]


def _softmax(x: Any) -> Any:
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_numpy_written_softmax_is_one_stitchlab_launch(dtype: str) -> None:
    import cupy as cp

    a = np.random.default_rng(1).standard_normal((512, 4096)).astype(dtype)
    x = sl.asarray(cp.asarray(a))
    y = _softmax(x)
    assert isinstance(y, sl.LazyArray)
    assert len(sl.explain(y).kernels) == 1
    before = sl.stats()["launches"]
    got = cp.asnumpy(cp.asarray(y)).astype(np.float64)
    assert sl.stats()["launches"] == before + 1
    want = _softmax(a.astype(np.float64))
    np.testing.assert_allclose(got, want, rtol=2e-6 if dtype == "float32" else 2e-3, atol=1e-6 if dtype == "float32" else 1e-4)


def test_cupy_operands_keep_results_lazy() -> None:
    import cupy as cp

    a = np.random.default_rng(2).standard_normal((64, 256)).astype(np.float32)
    c = cp.asarray(a)
    x = sl.asarray(cp.asarray(a * 2))
    for got, want in [(c + x, a + a * 2), (x + c, a * 2 + a), (c * x, a * a * 2), (c / x, 0.5 + 0 * a),
                      (c > x, a > a * 2), (np.maximum(x, c), np.maximum(a * 2, a))]:
        assert isinstance(got, sl.LazyArray), type(got)
        np.testing.assert_allclose(cp.asnumpy(cp.asarray(got)), want, rtol=1e-6)
    # a CuPy array first in an explicit ufunc call: NumPy asks CuPy first, which takes x as a
    # CuPy array (evaluated); the value is the same
    np.testing.assert_allclose(cp.asnumpy(cp.asarray(np.maximum(c, x))), np.maximum(a, a * 2), rtol=1e-6)


def test_out_cupy_and_numpy_arrays_are_written() -> None:
    import cupy as cp

    a = np.random.default_rng(3).standard_normal((128, 512)).astype(np.float32)
    x = sl.asarray(cp.asarray(a))
    dev = cp.zeros((128, 512), cp.float32)
    assert np.exp(x, out=dev) is dev
    np.testing.assert_allclose(cp.asnumpy(dev), np.exp(a), rtol=1e-6)
    host = np.zeros(512, np.float32)
    assert np.sum(x, axis=0, out=host) is host
    np.testing.assert_allclose(host, a.sum(0), rtol=1e-5, atol=1e-5)


def test_what_stitchlab_lacks_runs_in_cupy_on_the_device() -> None:
    import cupy as cp

    a = np.random.default_rng(4).standard_normal((16, 32)).astype(np.float32)
    x = sl.asarray(cp.asarray(a))
    got = np.apply_along_axis(cp.sort, 1, np.exp(x))
    assert isinstance(got, cp.ndarray)  # as for CuPy arrays: CuPy ran it
    np.testing.assert_allclose(cp.asnumpy(got), np.sort(np.exp(a), axis=1), rtol=1e-6)


def test_apply_along_axis_and_over_axes_on_the_device() -> None:
    """``sl.apply_along_axis``: CuPy's loop over the slices (``func1d`` gets CuPy arrays), the result
    a stitchlab array on the GPU; ``apply_over_axes`` and ``asarray_chkfinite`` lazily."""
    import cupy as cp

    host = np.random.default_rng(5).standard_normal((6, 7, 5))
    x = sl.asarray(cp.asarray(host))
    kinds: list[str] = []
    got = sl.apply_along_axis(lambda r: kinds.append(type(r).__module__.split(".")[0]) or r[::-1] * r.sum(), 1, x)
    assert isinstance(got, sl.LazyArray) and str(got.device).startswith("cuda") and set(kinds) == {"cupy"}
    np.testing.assert_allclose(got.get(), np.apply_along_axis(lambda r: r[::-1] * r.sum(), 1, host), rtol=1e-12)
    np.testing.assert_allclose(sl.apply_over_axes(np.sum, x, [0, 2]).get(), np.apply_over_axes(np.sum, host, [0, 2]), rtol=1e-12)
    with pytest.raises(ValueError, match="infs or NaNs"):
        sl.asarray_chkfinite(x / 0)


def test_what_cupy_lacks_runs_in_numpy_on_a_host_copy(tmp_path: Any) -> None:
    import cupy as cp

    a = np.random.default_rng(5).standard_normal((4, 3)).astype(np.float32)
    path = tmp_path / "x.txt"
    np.savetxt(path, sl.asarray(cp.asarray(a)))  # CuPy has no savetxt
    np.testing.assert_allclose(np.loadtxt(path), a, rtol=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_matmul_is_a_cublas_step_with_the_work_around_it_fused(dtype: str) -> None:
    import cupy as cp

    rng = np.random.default_rng(6)
    a = rng.standard_normal((256, 512)).astype(np.float32)
    w = (rng.standard_normal((512, 384)) / 16).astype(np.float32)
    b = rng.standard_normal(384).astype(np.float32)
    dt = as_dtype(dtype)
    x = sl.asarray(cp.asarray(a.astype(dt)))
    y = sl.tanh((x * 2) @ cp.asarray(w.astype(dt)) + cp.asarray(b.astype(dt)))
    families = [k.schedule.family for k in sl.explain(y).kernels]
    assert families.count("interpreted") == 1 and len(families) == 3, families
    want = np.tanh((a.astype(dt).astype(np.float64) * 2) @ w.astype(dt).astype(np.float64) + b.astype(dt).astype(np.float64))
    got = cp.asnumpy(cp.asarray(y)).astype(np.float64)
    assert y.dtype == np.matmul(a[:1, :1].astype(dt), w[:1, :1].astype(dt)).dtype  # bfloat16 @ bfloat16: float32
    np.testing.assert_allclose(got, want, rtol=0, atol={"float32": 1e-4, "float16": 2e-2, "bfloat16": 2e-2}[dtype])


def test_jit_replays_matmul_on_the_gpu() -> None:
    import cupy as cp

    @sl.jit
    def dense(x: Any, w: Any, b: Any) -> Any:
        return sl.maximum(x @ w + b, 0.0)

    rng = np.random.default_rng(7)
    w, b = cp.asarray(rng.standard_normal((64, 32)).astype(np.float32)), cp.asarray(rng.standard_normal(32).astype(np.float32))
    sl.reset_stats()
    for _ in range(3):
        a = rng.standard_normal((128, 64)).astype(np.float32)
        got = cp.asnumpy(cp.asarray(dense(cp.asarray(a), w, b)))
        np.testing.assert_allclose(got, np.maximum(a @ cp.asnumpy(w) + cp.asnumpy(b), 0.0), rtol=1e-4, atol=1e-4)
    assert sl.stats()["traces"] == 1


def test_concatenate_and_stack_fuse_or_are_cupy_steps() -> None:
    """Up to four arrays: one kernel with the work around the join; five: a ``cupy.concatenate``
    step between two kernels."""
    import cupy as cp

    a = np.random.default_rng(8).standard_normal((256, 384)).astype(np.float32)
    x = sl.asarray(cp.asarray(a))
    a64 = a.astype(np.float64)
    y = sl.tanh(sl.concatenate([x * 2, x + 1], axis=-1)).sum(axis=-1)
    assert len(sl.explain(y).kernels) == 1
    want = np.tanh(np.concatenate([a64 * 2, a64 + 1], axis=-1)).sum(-1)
    np.testing.assert_allclose(cp.asnumpy(cp.asarray(y)), want, rtol=1e-5, atol=1e-4)
    rope = x * sl.cos(x) + sl.concatenate([-x[:, 192:], x[:, :192]], axis=-1) * sl.sin(x)
    assert len(sl.explain(rope).kernels) == 1
    want = a64 * np.cos(a64) + np.concatenate([-a64[:, 192:], a64[:, :192]], -1) * np.sin(a64)
    np.testing.assert_allclose(cp.asnumpy(cp.asarray(rope)), want, rtol=1e-5, atol=1e-5)
    for axis in (0, 1):
        parts = [x * 2, x[:0] if axis == 0 else x[:, :0], x[:5] if axis == 0 else x[:, :5], -x, x.astype(np.float16)]
        j = sl.concatenate(parts, axis=axis)
        np.testing.assert_array_equal(cp.asnumpy(cp.asarray(j)), np.concatenate([cp.asnumpy(cp.asarray(p)) for p in parts], axis))
    y = sl.tanh(sl.concatenate([x * k for k in range(5)], axis=-1)).sum(axis=-1)
    families = [k.schedule.family for k in sl.explain(y).kernels]
    assert families.count("interpreted") == 1 and len(families) == 3, families
    want = np.tanh(np.concatenate([a64 * k for k in range(5)], axis=-1)).sum(-1)
    np.testing.assert_allclose(cp.asnumpy(cp.asarray(y)), want, rtol=1e-5, atol=1e-4)
    s = np.stack([x, x * 3], axis=1)
    assert isinstance(s, sl.LazyArray)
    np.testing.assert_array_equal(cp.asnumpy(cp.asarray(s)), np.stack([a, a * 3], axis=1))
