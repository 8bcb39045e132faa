"""``sl.linalg.norm`` (``stitchlab/frontend/linalg.py``): NumPy's vector and matrix norms, dtypes,
``keepdims`` and errors, fused with the work around them, and ``np.linalg.norm`` on a stitchlab
array lazy too. GPU: ``tests/gpu/test_library_steps_gpu.py``."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from lazycheck import families

import stitchlab as sl

pytestmark = pytest.mark.usefixtures("numpy_backend")

RNG = np.random.default_rng(47)
ARRAYS = {
    "float64-2d": RNG.standard_normal((3, 4)), "float32-3d": RNG.standard_normal((2, 3, 4)).astype(np.float32),
    "int-2d": np.arange(12).reshape(3, 4) - 5, "float16-1d": RNG.standard_normal(7).astype(np.float16),
    "empty-rows": np.zeros((0, 3)), "empty-columns": np.zeros((3, 0)),
}


@pytest.mark.parametrize("name", list(ARRAYS))
@pytest.mark.parametrize("ord", [None, 2, 1, -1, math.inf, -math.inf, 0, 3, 0.5, "fro"])
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 1), (-1, 0)])
def test_norm_is_numpys(name: str, ord: Any, axis: Any) -> None:  # noqa: A002
    a = ARRAYS[name]
    singular = ord == 2 and a.ndim >= 2 and (isinstance(axis, tuple) or (axis is None and a.ndim == 2))
    for keepdims in (False, True):
        if singular:  # a matrix 2-norm: the largest singular value, not provided
            with pytest.raises(ValueError, match="needs singular values"):
                sl.linalg.norm(sl.asarray(a), ord, axis, keepdims)
            continue
        try:
            with np.errstate(all="ignore"):
                want = np.asarray(np.linalg.norm(a, ord, axis, keepdims))
        except (ValueError, TypeError) as exc:
            with pytest.raises(type(exc)):
                sl.linalg.norm(sl.asarray(a), ord, axis, keepdims).get()
            continue
        got = sl.linalg.norm(sl.asarray(a), ord, axis, keepdims)
        assert isinstance(got, sl.LazyArray)
        value = got.get()
        assert value.shape == want.shape and value.dtype == want.dtype
        rtol = 2e-3 if a.dtype == np.float16 else 1e-6  # sums of squares in another order than NumPy's dot
        np.testing.assert_allclose(value, want, rtol=rtol)
        np.testing.assert_allclose(np.linalg.norm(sl.asarray(a), ord, axis, keepdims).get(), want, rtol=rtol)


def test_norms_that_need_singular_values_raise_naming_the_way_round() -> None:
    for ord in (2, -2, "nuc"):  # noqa: A001
        with pytest.raises(ValueError, match=r"needs singular values.*np\.linalg\.norm\(x\.get\(\)"):
            sl.linalg.norm(sl.asarray(np.ones((3, 3))), ord)
    with pytest.raises(ValueError, match="Invalid norm order 'nuc' for vectors"):
        sl.linalg.norm(sl.asarray(np.ones(3)), "nuc")
    with pytest.raises(ValueError, match="Improper number of dimensions to norm"):
        sl.linalg.norm(sl.asarray(np.ones((2, 2, 2))), 1)
    with pytest.raises(ValueError, match="Duplicate axes given"):
        sl.linalg.norm(sl.asarray(np.ones((2, 2))), None, (1, -1))


def test_a_normalization_by_the_norm_is_one_kernel() -> None:
    x = sl.asarray(RNG.standard_normal((64, 128)).astype(np.float32))
    y = x / sl.linalg.norm(x, axis=-1, keepdims=True)
    assert len(families(y)) == 1
    np.testing.assert_allclose(y.get(), x.get() / np.linalg.norm(x.get(), axis=-1, keepdims=True), rtol=1e-6)
