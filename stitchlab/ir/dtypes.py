"""Dtypes the compiler supports and NumPy 2 type promotion (NEP 50: Python scalars are weak).

Promotion is NumPy's own: the front end asks NumPy's ufunc type resolution
(``ufunc.resolve_dtypes``) which loop a call would use, so results match NumPy exactly.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: Dtypes an array may have, by name. bfloat16 is not among them: NumPy has no bfloat16.
SUPPORTED: dict[str, np.dtype] = {
    name: np.dtype(name)
    for name in (
        "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
        "float16", "float32", "float64",
    )
}

#: Python scalar types that take part in promotion as "weak" values.
WEAK_TYPES = (bool, int, float)


def as_dtype(dtype: Any) -> np.dtype:
    """Return ``dtype`` as a supported ``numpy.dtype`` or raise a TypeError naming it."""
    try:
        dt = np.dtype(dtype)
    except TypeError as exc:
        raise TypeError(f"data type {dtype!r} not understood") from exc
    if dt.name not in SUPPORTED or dt.byteorder == ">":
        raise TypeError(
            f"stitchlab does not support dtype {dt}; supported dtypes are {', '.join(SUPPORTED)}"
        )
    return dt


def is_float(dt: np.dtype) -> bool:
    return dt.kind == "f"


def is_weak(value: Any) -> bool:
    """True for a Python scalar (not a NumPy scalar), which promotes weakly."""
    return type(value) in WEAK_TYPES


def weak_type(value: Any) -> type:
    """The Python type NumPy's resolution uses for a weak scalar (``bool``, ``int`` or ``float``)."""
    return type(value)


def default_dtype(value: Any) -> np.dtype:
    """The dtype NumPy gives a Python scalar on its own (``np.asarray(value).dtype``)."""
    return np.asarray(value).dtype
