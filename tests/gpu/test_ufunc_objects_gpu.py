"""stitchlab's ufuncs on CuPy-backed arrays (``stitchlab/frontend/ufunc.py``): ``out=`` stitchlab,
CuPy and NumPy arrays, ``where=`` and ``dtype=`` fused into the one kernel of the expression,
``reduce`` with ``initial``/``where`` as one reduction kernel, and the methods without a lazy
version (``fmax.accumulate``, ``reduceat``, ``subtract.reduce``) run by CuPy (NumPy on a host
copy where CuPy raises ``NotImplementedError``: ``fmax.accumulate``) and returned as stitchlab
arrays; each against NumPy on the same values.

Run on the GPU machine: ``PYTHONPATH=. python3 -m pytest -m gpu tests/gpu/test_ufunc_objects_gpu.py -q``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import stitchlab as sl

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cupy_backend")]

RNG = np.random.default_rng(11)
A = RNG.standard_normal((256, 1000)).astype(np.float32)
B = RNG.standard_normal(1000).astype(np.float32)
MASK = RNG.random((256, 1000)) > 0.3


def _host(x: Any) -> np.ndarray:
    import cupy as cp

    if isinstance(x, sl.ndarray):
        return x.get()
    return cp.asnumpy(x) if isinstance(x, cp.ndarray) else np.asarray(x)


def _close(got: Any, want: np.ndarray, rtol: float = 2e-6, atol: float = 1e-5) -> None:
    """(Sums of 1000 float32 values in another order: ``atol`` 1e-4 of values up to about 100.)"""
    got = _host(got)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype, got.shape, want.shape)
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol)


def test_out_where_and_dtype_are_one_kernel() -> None:
    import cupy as cp

    x, b = sl.asarray(cp.asarray(A)), sl.asarray(cp.asarray(B))
    out = sl.full(A.shape, -1.0, dtype=np.float64)
    sl.multiply(sl.exp(x), b, out=out, where=sl.asarray(cp.asarray(MASK)), dtype=np.float64)
    assert len(sl.explain(out).kernels) == 1
    want = np.full(A.shape, -1.0)
    np.multiply(np.exp(A), B, out=want, where=MASK, dtype=np.float64)
    _close(out, want, rtol=1e-6)


def test_out_cupy_and_numpy_arrays_are_written() -> None:
    import cupy as cp

    x = sl.asarray(cp.asarray(A))
    dev = cp.zeros(A.shape, np.float32)
    assert sl.tanh(x, out=dev) is dev
    _close(dev, np.tanh(A), rtol=1e-5)
    host = np.zeros(A.shape[0], np.float64)
    assert np.sum(x, axis=1, out=host) is host and sl.sum(x, axis=1, out=host) is host
    np.testing.assert_allclose(host, A.sum(1), rtol=1e-5, atol=1e-4)


def test_reduce_with_initial_and_where_is_one_reduction() -> None:
    import cupy as cp

    x = sl.asarray(cp.asarray(A))
    got = sl.maximum.reduce(x, axis=1, initial=0.5, where=sl.asarray(cp.asarray(MASK)))
    assert len(sl.explain(got).kernels) == 1
    _close(got, np.maximum.reduce(A, axis=1, initial=0.5, where=MASK))
    _close(x.sum(1, where=MASK, initial=1.0), A.sum(1, where=MASK, initial=1.0), rtol=1e-5, atol=1e-4)
    _close(sl.add.accumulate(x, axis=1), np.add.accumulate(A, axis=1), rtol=1e-5, atol=1e-4)
    _close(sl.subtract.outer(x[0], x[1, :7]), np.subtract.outer(A[0], A[1, :7]))


@pytest.mark.parametrize("method, args, kwargs", [
    ("fmax.accumulate", (A,), {"axis": 1}),
    ("add.reduceat", (A, [0, 10, 500]), {"axis": 1}),
    ("subtract.reduce", (A,), {"axis": 0}),
])
def test_methods_without_a_lazy_version_run_on_the_device(method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    import cupy as cp

    name, attr = method.split(".")
    got = getattr(getattr(sl, name), attr)(sl.asarray(cp.asarray(args[0])), *args[1:], **kwargs)
    assert isinstance(got, sl.ndarray)
    _close(got, getattr(getattr(np, name), attr)(*args, **kwargs), rtol=1e-5, atol=1e-4)


def test_keywords_under_jit_on_the_gpu() -> None:
    @sl.jit
    def f(x: Any, m: Any) -> Any:
        y = sl.zeros_like(x)
        sl.multiply(x, 2, out=y, where=m)
        return sl.add.reduce(y, axis=1, initial=1.0)

    import cupy as cp

    got = f(cp.asarray(A), cp.asarray(MASK))
    y = np.zeros_like(A)
    np.multiply(A, 2, out=y, where=MASK)
    _close(got, np.add.reduce(y, axis=1, initial=1.0), rtol=1e-5, atol=1e-4)
