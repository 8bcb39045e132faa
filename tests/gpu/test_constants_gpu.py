"""Python numbers are constants of the kernel, NumPy scalars inputs, on the GPU: a loop over values
of a Python float plans each value and warns once (``sl.ConstantsWarning``); the same loop over
NumPy scalars plans once; both give NumPy's values.

Run on the GPU machine: ``PYTHONPATH=. python3 -m pytest -m gpu tests/gpu/test_constants_gpu.py -q``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import stitchlab as sl
from stitchlab.runtime.backend import CONSTANT_VARIANTS_WARN

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cupy_backend")]

A = np.random.default_rng(11).standard_normal((256, 300)).astype(np.float32)


def test_python_numbers_replan_and_warn_numpy_scalars_do_not() -> None:
    import cupy as cp

    x = sl.asarray(cp.asarray(A))
    ts = [0.1 + 0.37 * k for k in range(CONSTANT_VARIANTS_WARN + 2)]
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        before = sl.stats()["plans"]
        for t in ts:
            np.testing.assert_allclose(sl.sin(x * t + 0.5).get(), np.sin(A * np.float32(t) + np.float32(0.5)),
                                       rtol=2e-6, atol=2e-6)
        assert sl.stats()["plans"] - before == len(ts)
        assert [w.category for w in seen] == [sl.ConstantsWarning]
        before = sl.stats()["plans"]
        for t in ts:
            got = sl.sin(x * np.float32(t) + 0.5)
            assert got.dtype == np.float32
            np.testing.assert_allclose(got.get(), np.sin(A * np.float32(t) + np.float32(0.5)), rtol=2e-6, atol=2e-6)
        assert sl.stats()["plans"] - before == 1
        assert len(seen) == 1
