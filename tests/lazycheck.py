"""Checks shared by the tests of NumPy-named functions on the numpy backend: a result is a lazy
array with NumPy's shape, dtype and values, and the kernel families of a plan.

Importable from every test module: pytest puts this folder on ``sys.path`` with the root
``conftest.py``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import stitchlab as sl


def same(got: Any, want: np.ndarray) -> None:
    """``got`` is a lazy array whose value has ``want``'s shape, dtype and values (NaN == NaN)."""
    assert isinstance(got, sl.LazyArray), type(got)
    value = got.get()
    assert value.shape == want.shape and value.dtype == want.dtype, (value.shape, value.dtype, want.shape, want.dtype)
    np.testing.assert_array_equal(value, want)


def families(*ys: sl.LazyArray) -> list[str]:
    """The schedule family of each kernel of the plan of ``ys`` (``"interpreted"``: a library step)."""
    return [k.schedule.family for k in sl.explain(*ys).kernels]


def log_softmax_f64(x: np.ndarray, axis: Any) -> np.ndarray:
    """SciPy's ``log_softmax`` formula in float64 (the reference of ``sl.log_softmax``; its
    ``exp`` is ``sl.softmax``'s): an infinite maximum shifts by 0, an all ``-inf`` slice is NaN."""
    x = x.astype(np.float64)
    m = np.amax(x, axis=axis, keepdims=True)
    d = x - np.where(np.isfinite(m), m, 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return d - np.log(np.exp(d).sum(axis=axis, keepdims=True))
