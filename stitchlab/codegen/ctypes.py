"""C types of the NumPy dtypes the compiler supports.

Every value lives in a *register type*: the dtype's own C type, except float16 and bfloat16
(``ml_dtypes.bfloat16``), which are stored as ``sl_half`` and ``sl_bf16`` (16 bits) and computed in
``float``, or held as their 16 bits (:func:`bits_type`) between the ops that compute them natively
(see :mod:`stitchlab.codegen.elemental`).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ..ir.dtypes import cast, is_float

_STORAGE = {
    "bool": "bool",
    "int8": "signed char",
    "int16": "short",
    "int32": "int",
    "int64": "long long",
    "uint8": "unsigned char",
    "uint16": "unsigned short",
    "uint32": "unsigned int",
    "uint64": "unsigned long long",
    "float16": "sl_half",
    "float32": "float",
    "float64": "double",
    "bfloat16": "sl_bf16",
}


#: C type of a float16 value held as its 16 bits (in memory and in registers)
HALF = "sl_half"
#: the same for bfloat16
BF16 = "sl_bf16"

#: bits type -> (its conversion to float, exact; float -> bits, rounding; float holding a value of
#: the type -> bits, exact)
BITS_CONVERSIONS = {HALF: ("sl_h2f", "sl_f2h", "sl_f2h"), BF16: ("sl_bf2f", "sl_f2bf", "sl_bf16_of")}


@functools.lru_cache(maxsize=256)
def _name(dtype: np.dtype) -> str:
    """``np.dtype(dtype).name``, remembered (the emitters ask for it of every value they write)."""
    return np.dtype(dtype).name


def bits_type(dtype: np.dtype) -> str | None:
    """The C type holding a float16 or bfloat16 value as its 16 bits; None for other dtypes."""
    name = _name(dtype)
    return HALF if name == "float16" else BF16 if name == "bfloat16" else None


def storage_type(dtype: np.dtype) -> str:
    """The C type of one element in memory."""
    try:
        return _STORAGE[_name(dtype)]
    except KeyError:
        raise TypeError(f"no C type for dtype {dtype}; supported: {', '.join(_STORAGE)}") from None


def register_type(dtype: np.dtype) -> str:
    """The C type a value is computed in (float for float16 and bfloat16)."""
    return "float" if _name(dtype) in ("float16", "bfloat16") else storage_type(dtype)


def kind(dtype: np.dtype) -> str:
    """The op-table template key of a dtype: "f", "i", "u" or "b" (bfloat16: "f")."""
    dt = np.dtype(dtype)
    return "f" if is_float(dt) else dt.kind


def literal(value: object, dtype: np.dtype) -> str:
    """A C literal of ``value`` in ``dtype``'s register type (inf and NaN included)."""
    dt = np.dtype(dtype)
    ctype = register_type(dt)
    if dt.kind == "b":
        return "true" if value else "false"
    if is_float(dt):
        v = float(value)  # type: ignore[arg-type]
        if math.isnan(v):
            return f"(({ctype})__int_as_float(0x7fc00000))" if ctype == "float" else "__longlong_as_double(0x7ff8000000000000LL)"
        if math.isinf(v):
            inf = "__int_as_float(0x7f800000)" if ctype == "float" else "__longlong_as_double(0x7ff0000000000000LL)"
            return f"({'-' if v < 0 else ''}{inf})"
        text = repr(v)
        if "e" not in text and "." not in text:
            text += ".0"
        return f"{text}f" if ctype == "float" else text
    v = int(value)  # type: ignore[call-overload]
    if dt.kind == "u":
        return f"(({ctype}){v}ULL)"
    if v == -(2**63):
        return "((long long)(-9223372036854775807LL - 1))"
    return f"(({ctype}){v}LL)"


#: the reduction whose running value each scan op keeps
SCAN_REDUCTIONS = {"cumsum": "sum", "cumprod": "prod", "cummax": "max", "cummin": "min"}


def scan_identity_literal(opname: str, dtype: np.dtype) -> str:
    """The starting value of a scan (running ``"sum"`` or ``"prod"``) in ``dtype``: the
    reduction's, but -0.0 for float sums, since -0.0 + x is x for every x, -0.0 among them (a
    ``cumsum`` of ``[-0.0]`` is ``[-0.0]``, as NumPy's; +0.0 would give +0.0). A scan has an output
    only where it has added something, so the identity itself never shows."""
    if opname == "sum" and is_float(np.dtype(dtype)):
        return literal(-0.0, dtype)
    return identity_literal(opname, dtype)


def bits_literal(value: object, dtype: np.dtype) -> str:
    """A C expression of :func:`bits_type` holding ``value`` rounded to float16 or bfloat16 (its
    bit pattern)."""
    bits = int(cast(np.array(float(value)), np.dtype(dtype)).view(np.uint16))  # type: ignore[arg-type]
    return f"{bits_type(dtype)}{{0x{bits:04x}}}"


def identity_literal(opname: str, dtype: np.dtype) -> str:
    """The starting value of reduction ``opname`` in ``dtype`` (max/min start at -inf/+inf or the
    integer limits: the front end refuses empty max/min reductions, so these never leak out)."""
    dt = np.dtype(dtype)
    if opname == "sum":
        return literal(0, dt)
    if opname == "prod":
        return literal(1, dt)
    if opname == "any":
        return "false"
    if opname == "all":
        return "true"
    if opname in ("max", "min"):
        low = opname == "max"
        if is_float(dt):
            return literal(-math.inf if low else math.inf, dt)
        if dt.kind == "b":
            return "false" if low else "true"
        info = np.iinfo(dt)
        return literal(info.min if low else info.max, dt)
    raise ValueError(f"reduction {opname!r} has no identity the code generator knows")
