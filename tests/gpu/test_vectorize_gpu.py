"""``sl.vectorize`` and the file readers on CuPy-backed arrays: an elementwise Python function is one
generated kernel on the GPU, with NumPy's values; a function that is not runs on the host and comes
back on the device; ``sl.load`` reads onto the device.

Run on the GPU machine: ``PYTHONPATH=. python3 -m pytest -m gpu tests/gpu/test_vectorize_gpu.py -q``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import stitchlab as sl

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cupy_backend")]

A = np.random.default_rng(9).standard_normal((512, 2048)).astype(np.float32)


@sl.vectorize
def huber(r: Any, delta: float = 1.0) -> Any:
    a = sl.abs(r)
    return sl.where(a <= delta, 0.5 * r * r, delta * (a - 0.5 * delta))


def test_an_elementwise_function_is_one_kernel_on_the_gpu() -> None:
    import cupy as cp

    got = huber(sl.asarray(cp.asarray(A)))
    plan = sl.explain(got)
    assert len(plan.kernels) == 1
    before = sl.stats()["launches"]
    host = got.get()
    assert sl.stats()["launches"] == before + 1
    want = np.vectorize(lambda r: 0.5 * r * r if abs(r) <= 1.0 else abs(r) - 0.5)(A)
    np.testing.assert_allclose(host, want, rtol=1e-6, atol=1e-7)


def test_a_function_with_control_flow_comes_back_on_the_device() -> None:
    import cupy as cp

    f = sl.vectorize(lambda v: v if v > 0 else 0.0)
    with pytest.warns(UserWarning, match="element by element on the host"):
        got = f(sl.asarray(cp.asarray(A[:8, :8])))
    assert got.device.startswith("cuda")
    np.testing.assert_array_equal(got.get(), np.vectorize(lambda v: v if v > 0 else 0.0)(A[:8, :8]))


def test_load_reads_onto_the_device(tmp_path: Any) -> None:
    path = tmp_path / "a.npz"
    np.savez(path, a=A)
    with sl.load(path) as archive:
        x = archive["a"]
        assert x.device.startswith("cuda")
        np.testing.assert_array_equal((x * 2).get(), A * 2)
