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
