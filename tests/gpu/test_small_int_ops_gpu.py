"""Every elementwise ufunc of int8, uint8, int16 and uint16 values in the vector loops, on the GPU,
against NumPy: all 65,536 pairs of 8-bit values (16 times over: 2**20 elements, so the
16-element int8 loop runs), random 16-bit pairs with the extreme values, each operation a kernel of
its own, of two arrays, of an array and each constant, of a constant and an array, and of a value
the kernel computed (``x - 3``).

NVVM (NVRTC 13.0 to 13.5 emit the same PTX) compiled ``floor_divide(x, 2)`` of int8 in the
16-element loop with 16-bit shifts that skipped the sign extension of the low byte of each half
holding two bytes (it gave 126 for -3 on the H200: wide fuzz seed 3500191; ``right_shift(x - 2,
x)`` 3 for -1: seed 4300003); each byte of a vector load now reaches the arithmetic through an
opaque int (``sl_load`` in the preamble). A one-op-at-a-time sweep is what finds such code
generation bugs: in a fused kernel the loads are shared and the instructions differ.

Run on the GPU machine: ``PYTHONPATH=. python3 -m pytest -m gpu tests/gpu/test_small_int_ops_gpu.py -q``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ml_dtypes  # noqa: F401  (registers the "bfloat16" dtype name with NumPy)
import numpy as np
import pytest

import stitchlab as sl

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cupy_backend")]

DTYPES = ["int8", "uint8", "int16", "uint16"]
BINARY = ["add", "subtract", "multiply", "divide", "floor_divide", "remainder", "fmod", "power", "left_shift",
          "right_shift", "gcd", "lcm", "maximum", "minimum", "fmax", "fmin", "bitwise_and", "bitwise_or",
          "bitwise_xor", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and",
          "logical_or", "logical_xor", "arctan2", "hypot", "copysign", "heaviside"]
UNARY = ["negative", "positive", "absolute", "square", "sign", "invert", "logical_not", "reciprocal", "signbit",
         "fabs", "sqrt", "cbrt", "rint", "bitwise_count"]
CASTS = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16", "float32",
         "float64", "bfloat16"]
CONSTANTS = [2, 3, 4, 7, 16, -1, -2, -3]


def _pairs(dtype: str) -> tuple[np.ndarray, np.ndarray]:
    info = np.iinfo(dtype)
    if info.bits == 8:
        every = np.arange(info.min, info.max + 1).astype(dtype)
        x, y = np.tile(every, every.size), np.repeat(every, every.size)
        return np.tile(x, 16), np.tile(y, 16)
    rng = np.random.default_rng(2 * info.bits + (info.min < 0))
    x, y = (rng.integers(info.min, info.max + 1, 1 << 20).astype(dtype) for _ in range(2))
    edges = np.array([info.min, info.min + 1, -1 if info.min else 1, 0, 1, 2, info.max - 1, info.max]).astype(dtype)
    x[:64], y[:64] = np.tile(edges, 8), np.repeat(edges, 8)
    return x, y


def _compare(name: str, got: Any, want: np.ndarray) -> str | None:
    """None when ``got`` (a device result) is NumPy's ``want``: bit for bit for integers and
    booleans, within a few units in the last place for floats; else what differs."""
    import cupy as cp

    g = cp.asnumpy(cp.asarray(got))
    if g.dtype != want.dtype or g.shape != want.shape:
        return f"{name}: {g.dtype}{g.shape}, NumPy {want.dtype}{want.shape}"
    if want.dtype.kind == "f" or want.dtype == np.dtype("bfloat16"):
        g64, w64 = g.astype(np.float64), want.astype(np.float64)
        eps = float(np.finfo(np.float16 if want.dtype.itemsize == 2 else want.dtype).eps)
        close = np.isclose(g64, w64, rtol=4 * eps, atol=0, equal_nan=True)
        bad = np.flatnonzero(~close)
    else:
        bad = np.flatnonzero(g != want)
    if not bad.size:
        return None
    i = bad[0]
    return f"{name}: {bad.size} of {want.size} differ, first at [{i}]: {g[i]!r}, NumPy {want[i]!r}"


def _check_all(cases: dict[str, Callable[[Any], Any]], inputs: tuple[np.ndarray, ...]) -> None:
    """Each case is one kernel (a result computed before the next is built) compared with NumPy's."""
    import cupy as cp

    dev = [sl.asarray(cp.asarray(a)) for a in inputs]
    wrong = []
    for name, f in cases.items():
        with np.errstate(all="ignore"):
            try:
                want = np.asarray(f(np, *inputs))
            except (TypeError, ValueError):  # NumPy refuses it (a power to a negative constant)
                continue
        try:
            got = f(sl, *dev)
        except Exception as exc:  # noqa: BLE001 - NumPy computes it: a refusal is a finding
            wrong.append(f"{name}: raised {exc!r}")
            continue
        wrong.append(_compare(name, got, want))
    wrong = [w for w in wrong if w]
    assert not wrong, "\n".join(wrong)


def _fits(c: int, dtype: str) -> bool:
    info = np.iinfo(dtype)
    return info.min <= c <= info.max


@pytest.mark.parametrize("op", BINARY)
@pytest.mark.parametrize("dtype", DTYPES)
def test_binary_ufunc_of_every_narrow_pair(dtype: str, op: str) -> None:
    x, y = _pairs(dtype)
    if op == "power":  # (NumPy raises for negative integer exponents)
        y = y & np.asarray(7, dtype)
    cases: dict[str, Callable[..., Any]] = {f"{op}(x, y)": lambda m, a, b: getattr(m, op)(a, b)}
    for c in CONSTANTS:
        if _fits(c, dtype):
            cases[f"{op}(x, {c})"] = lambda m, a, b, c=c: getattr(m, op)(a, c)
    for c in (3, -2):
        if _fits(c, dtype):  # (for power, of nonnegative exponents)
            cases[f"{op}({c}, x)"] = lambda m, a, b, c=c: getattr(m, op)(c, b if op == "power" else a)
    # of a value computed in the kernel (NVVM computed on two bytes at once: (x - 2) >> x, seed 4300003)
    cases[f"{op}(x - 3, y)"] = lambda m, a, b: getattr(m, op)(a - 3, b)
    cases[f"{op}(x - 3, 2)"] = lambda m, a, b: getattr(m, op)(a - 3, 2)
    _check_all(cases, (x, y))


@pytest.mark.parametrize("dtype", DTYPES)
def test_unary_ufuncs_and_casts_of_every_narrow_value(dtype: str) -> None:
    x, _ = _pairs(dtype)
    cases: dict[str, Callable[..., Any]] = {f"{op}(x)": lambda m, a, op=op: getattr(m, op)(a) for op in UNARY}
    cases |= {f"{op}(x - 3)": lambda m, a, op=op: getattr(m, op)(a - 3) for op in UNARY}
    cases |= {f"x.astype({t})": lambda m, a, t=t: a.astype(t) for t in CASTS}
    cases |= {f"(x * 3).astype({t})": lambda m, a, t=t: (a * 3).astype(t) for t in CASTS}
    _check_all(cases, (x,))


@pytest.mark.parametrize("signed", ["int8", "int32", "int64"])
def test_comparisons_of_signed_and_uint64_values_are_exact(signed: str) -> None:
    """NumPy compares int64 (and narrower signed values, widened) with uint64 exactly; C converts
    the signed operand (``-5 < 2**63`` false): wide fuzz seed 5200284, ``less(int8, cumsum(uint8))``
    on the H200. Kernels call ``sl_compare_mixed``."""
    info, rng = np.iinfo(signed), np.random.default_rng(5200284)
    s = rng.integers(info.min, info.max, 1 << 20, endpoint=True).astype(signed)
    u = rng.integers(0, 2**64 - 1, 1 << 20, np.uint64, True) >> rng.integers(0, 64, 1 << 20).astype(np.uint64)
    u[::3] = np.abs(s[::3].astype(np.int64)).astype(np.uint64)  # (equal magnitudes, either sign)
    s[:4], u[:4] = [info.min, -1, 0, info.max], [2**63, 2**64 - 1, 0, info.max]
    cases: dict[str, Callable[..., Any]] = {}
    for op in ("less", "less_equal", "greater", "greater_equal", "equal", "not_equal"):
        cases[f"{op}(s, u)"] = lambda m, a, b, op=op: getattr(m, op)(a, b)
        cases[f"{op}(u, s)"] = lambda m, a, b, op=op: getattr(m, op)(b, a)
    _check_all(cases, (s, u))


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64"])
def test_floor_division_and_remainder_by_powers_of_two_are_numpys(dtype: str) -> None:
    """A signed ``x // 2**k`` is emitted as ``x >> k`` and ``x % 2**k`` as ``x & (2**k - 1)``
    (``stitchlab.codegen.elemental``): every power of two the type holds, of the extreme values,
    of random ones and of a value the kernel computed."""
    info, rng = np.iinfo(dtype), np.random.default_rng(np.iinfo(dtype).bits)
    x = rng.integers(info.min, info.max, 1 << 20, endpoint=True).astype(dtype)
    x[:8] = [info.min, info.min + 1, -2, -1, 0, 1, info.max - 1, info.max]
    cases: dict[str, Callable[..., Any]] = {}
    for k in range(info.bits - 1):
        cases[f"x // 2**{k}"] = lambda m, a, k=k: m.floor_divide(a, 2**k)
        cases[f"x % 2**{k}"] = lambda m, a, k=k: m.remainder(a, 2**k)
    cases["(x - 3) // 4, (x - 3) % 64"] = lambda m, a: m.floor_divide(a - 3, 4) + m.remainder(a - 3, 64)
    _check_all(cases, (x,))
