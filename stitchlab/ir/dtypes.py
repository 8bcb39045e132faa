"""Dtypes the compiler supports and NumPy 2 type promotion (NEP 50: Python scalars are weak).

Promotion is NumPy's own: the front end asks NumPy's ufunc type resolution
(``ufunc.resolve_dtypes``) which loop a call would use, so results match NumPy exactly.

bfloat16 is ``ml_dtypes.bfloat16``, the NumPy dtype CuPy (v14 on) and JAX use; ml_dtypes is
imported the first time a bfloat16 is asked for, so ``import stitchlab`` stays light. Its
elementwise ops compute in float32 and round once to bfloat16, as ml_dtypes' NumPy loops do; its
sums and means accumulate in float32 (as NumPy's float16 sums do; ml_dtypes' own reductions
would round every partial sum to bfloat16) and round the result once.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: Dtypes an array may have, by name (bfloat16 comes from ml_dtypes: :func:`bfloat16`).
SUPPORTED: dict[str, np.dtype] = {
    name: np.dtype(name)
    for name in (
        "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
        "float16", "float32", "float64",
    )
}
_SUPPORTED_SET = frozenset(SUPPORTED.values())

#: Python scalar types that take part in promotion as "weak" values.
WEAK_TYPES = (bool, int, float)


def bfloat16() -> np.dtype:
    """The bfloat16 dtype (``ml_dtypes.bfloat16``); a TypeError naming the fix without ml_dtypes."""
    try:
        import ml_dtypes
    except ImportError:
        raise TypeError(
            "bfloat16 needs the ml_dtypes package (NumPy's bfloat16 dtype, as CuPy and JAX use): "
            "pip install ml-dtypes"
        ) from None
    return np.dtype(ml_dtypes.bfloat16)


def is_bfloat16(dt: np.dtype) -> bool:
    # the kind first: NumPy computes ``dtype.name`` in Python (about 3 µs), ``kind`` is a field
    return dt.kind == "V" and dt.name == "bfloat16"


def is_supported(dt: np.dtype) -> bool:
    """True for a dtype arrays may have (little-endian or native)."""
    return dt in _SUPPORTED_SET or is_bfloat16(dt)


def as_dtype(dtype: Any) -> np.dtype:
    """Return ``dtype`` as a supported ``numpy.dtype`` or raise a TypeError naming it."""
    if isinstance(dtype, str) and dtype == "bfloat16":
        return bfloat16()
    try:
        dt = np.dtype(dtype)
    except TypeError as exc:
        raise TypeError(f"data type {dtype!r} not understood") from exc
    if not is_supported(dt) or dt.byteorder == ">":
        raise TypeError(
            f"stitchlab does not support dtype {dt}; supported dtypes are "
            f"{', '.join(SUPPORTED)}, bfloat16"
        )
    return dt


def is_float(dt: np.dtype) -> bool:
    """A floating dtype: float16/32/64 or bfloat16 (whose NumPy kind is "V")."""
    return dt.kind == "f" or is_bfloat16(dt)


def is_low_float(dt: np.dtype) -> bool:
    """float16 or bfloat16: stored in 16 bits, computed and accumulated in float32."""
    return dt.itemsize == 2 and is_float(dt)


def finfo(dt: np.dtype) -> Any:
    """``numpy.finfo`` of a floating dtype (``ml_dtypes.finfo`` for bfloat16)."""
    if is_bfloat16(dt):
        import ml_dtypes

        return ml_dtypes.finfo(dt)
    return np.finfo(dt)


def is_weak(value: Any) -> bool:
    """True for a Python scalar (not a NumPy scalar), which promotes weakly."""
    return type(value) in WEAK_TYPES


def weak_type(value: Any) -> type:
    """The Python type NumPy's resolution uses for a weak scalar (``bool``, ``int`` or ``float``)."""
    return type(value)


def default_dtype(value: Any) -> np.dtype:
    """The dtype NumPy gives a Python scalar on its own (``np.asarray(value).dtype``)."""
    return np.asarray(value).dtype


def cast(x: Any, dtype: np.dtype, xp: Any = np) -> Any:
    """``x.astype(dtype)``, except that a cast to bfloat16 rounds once (to nearest, ties to even)
    from every dtype, whatever ml_dtypes' version: ml_dtypes 0.6 casts float64 through float32
    (two roundings), 0.7 float64 directly but int64 through float32. Values exact in float32 go
    through it; the others are first rounded to odd in float32 (which keeps 16 more bits than
    bfloat16, so the final rounding is the correct one), as the kernels' ``sl_d2bf`` does.
    A Python int beyond int64 and uint64 (an object array) cast to an integer dtype raises
    ``OverflowError`` naming the value and the dtype (:func:`check_python_ints`); an object
    array is cast to bfloat16 by ml_dtypes, element by element."""
    if x.dtype == object:
        check_python_ints(x, dtype)
    if not is_bfloat16(dtype) or is_bfloat16(x.dtype) or x.dtype == object:  # (an object array: ml_dtypes'
        # conversion of each element, its TypeError for None; a Python int past float64's range is inf)
        return x.astype(dtype)
    if x.dtype.itemsize <= 2 or x.dtype == np.float32:
        return x.astype(np.float32).astype(dtype)
    d = _int64_to_odd_double(x, xp) if x.dtype.kind in "iu" and x.dtype.itemsize == 8 else x.astype(np.float64)
    return _to_odd_float(d, xp).astype(dtype)


def check_python_ints(values: Any, dtype: Any) -> None:
    """``OverflowError`` naming the first Python int of ``values`` (a number, a list, an object
    array) that neither int64 nor uint64 holds, where ``dtype`` is an integer dtype: NumPy's own
    error for it, "Python int too large to convert to C long", names neither value nor dtype."""
    if np.dtype(dtype).kind not in "iu":
        return
    flat = np.ravel(np.asarray(values, dtype=object)) if not isinstance(values, int) else [values]
    big = next((v for v in flat if type(v) is int and not -2**63 <= v < 2**64), None)
    if big is not None:
        raise OverflowError(f"Python integer {big} out of bounds for {np.dtype(dtype)}; give a value within its "
                            f"range, or a float (a float array holds it, rounded)")


def check_copied_int(value: Any, dtype: Any) -> None:
    """NumPy 2's ``OverflowError`` for a Python int that ``copyto`` (and so ``full``) cannot write
    into ``dtype``, whatever the casting rule: one outside an integer dtype's range, or for bool
    one outside int64's (NumPy reads it as a C long before it takes its truth; ``x[...] = v``
    and ``x.fill(v)`` take the truth of any int). Named with its dtype and the fix."""
    if type(value) is not int:
        return
    dt = np.dtype(dtype)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        if not info.min <= value <= info.max:
            raise OverflowError(f"Python integer {value} out of bounds for {dt} (its range is {info.min} to "
                                f"{info.max}: give a value in it, or a wider dtype)")
    elif dt.kind == "b" and not -2**63 <= value < 2**63:
        raise OverflowError(f"Python integer {value} out of bounds for bool here: NumPy's full and copyto read it as "
                            f"an int64 first (-2**63 to 2**63 - 1); give True or False, or bool({value})")


def _to_odd_float(d: Any, xp: Any) -> Any:
    """float64 ``d`` rounded to float32 toward zero, its lowest bit set where that was inexact."""
    with np.errstate(over="ignore", invalid="ignore"):
        f = d.astype(np.float32)
        up = xp.abs(f.astype(np.float64)) > xp.abs(d)  # rounded away from zero (inf included)
        f = xp.where(up, xp.nextafter(f, xp.zeros_like(f)), f)
        inexact = (f.astype(np.float64) != d) & ~xp.isnan(d)
        return (f.view(np.uint32) | inexact.astype(np.uint32)).view(np.float32)


def _int64_to_odd_double(x: Any, xp: Any) -> Any:
    """int64/uint64 ``x`` rounded to float64 toward zero, its lowest bit set where inexact."""
    hi = (x >> 32).astype(np.float64) * 4294967296.0  # exact
    lo = (x & 0xFFFFFFFF).astype(np.float64)  # exact
    s = hi + lo
    b = s - hi
    err = (hi - (s - b)) + (lo - b)  # exactly x - s (TwoSum)
    s = xp.where((err < 0) & (s > 0) | (err > 0) & (s < 0), xp.nextafter(s, xp.zeros_like(s)), s)
    return (s.view(np.uint64) | (err != 0).astype(np.uint64)).view(np.float64)
