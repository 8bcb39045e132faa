"""Ufunc calls with ``dtype=``, ``signature=``, ``casting=`` and ``out=`` on Python numbers, and
the dtypes and values of ``conj``, ``clip``, ``select`` and ``round`` with them: each compared
with NumPy 2 on the same operands (dtype, shape and value; NumPy's exception type where it
raises)."""

from __future__ import annotations

import itertools
import subprocess
import sys
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import stitchlab as sl

INTS = ["int8", "uint8", "int16", "int32", "int64", "uint64"]
FLOATS = ["float16", "float32", "float64"]


def _outcome(f: Callable[[], Any]) -> Any:
    """``f()`` evaluated, as (dtype, shape, values, signs), or the type of the exception it raises
    (where stitchlab's is lazy, at evaluation: ``power`` of integers to a negative power)."""
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            r = f()
            r = r.get() if isinstance(r, sl.ndarray) else np.asarray(r)
    except Exception as exc:  # noqa: BLE001 - the exception type is the outcome compared
        return type(exc)
    return r.dtype, r.shape, r.tolist(), np.signbit(r).tolist() if r.dtype.kind == "f" else None


def _same_as_numpy(numpy_call: Callable[[], Any], stitchlab_call: Callable[[], Any]) -> None:
    want, got = _outcome(numpy_call), _outcome(stitchlab_call)
    if isinstance(want, type):
        # (NumPy's UFuncTypeError subclasses are TypeErrors; stitchlab raises those or TypeError)
        expected = TypeError if issubclass(want, TypeError) else want
        assert isinstance(got, type) and issubclass(got, expected), (want, got)
    else:
        assert not isinstance(got, type), (want, got)
        # NaN != NaN: compare the text of the values
        assert repr(got) == repr(want), (want, got)


# --- A: casting='equiv' with a Python number -------------------------------------------------------
def test_equiv_casting_with_a_python_number_raises_numpys_error_instead_of_crashing() -> None:
    # np.add.resolve_dtypes((float32, int, None), casting='equiv') segfaults in NumPy 2.4; run in
    # a child process so that a crash fails this test instead of killing the run
    code = ("import numpy as np, stitchlab as sl\n"
            "x = sl.asarray(np.ones(3, np.float32))\n"
            "for v in (2, 2.0):\n"
            "    try:\n"
            "        sl.add(x, v, casting='equiv')\n"
            "    except TypeError as exc:\n"
            "        print(exc)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 2
    assert "cannot cast Python int to float32 under the casting rule 'equiv'" in lines[0]
    assert "casting='safe'" in lines[0]  # the fix
    assert "cannot cast Python float to float32" in lines[1]


@pytest.mark.parametrize("casting", ["equiv", "no"])
@pytest.mark.parametrize("dtype", INTS + FLOATS + ["bool"])
@pytest.mark.parametrize("name", ["add", "multiply", "less", "logical_and", "maximum", "arctan2", "left_shift"])
def test_equiv_and_no_casting_with_python_numbers_are_numpys(name: str, dtype: str, casting: str) -> None:
    x = np.array([1, 2, 3]).astype(dtype)
    for v, dt in itertools.product((2, 2.0), (None, np.float64, np.int64)):
        kw = {"casting": casting} | ({"dtype": dt} if dt is not None else {})
        _same_as_numpy(lambda v=v, kw=kw: getattr(np, name)(x, v, **kw),
                       lambda v=v, kw=kw: getattr(sl, name)(sl.asarray(x), v, **kw))


# --- B: a Python number is converted to the loop's dtype first -------------------------------------
CASES_B = [
    ("multiply", "int32", 1.5, {"dtype": np.int32}),
    ("fmod", "int16", np.float64(-4.5), {"dtype": np.int8}),
    ("floor_divide", "int64", 2.5, {"signature": (None, None, np.int64)}),
    ("bitwise_and", "int8", 100000.0, {"dtype": np.int32}),
    ("left_shift", "uint8", np.float64(4.0), {"dtype": np.uint64}),
    ("add", "int8", 300, {"dtype": np.int8}),  # OverflowError, as in NumPy
    ("add", "int8", -1, {"dtype": np.uint8}),  # likewise
    ("add", "float32", 1e300, {"dtype": np.float32}),  # inf
    ("subtract", "uint8", 2**40, {"dtype": np.float16}),
]


@pytest.mark.parametrize(("name", "dtype", "value", "kw"), CASES_B)
def test_unsafe_dtype_converts_a_python_number_to_the_loop_dtype_first(name: str, dtype: str, value: Any,
                                                                      kw: dict[str, Any]) -> None:
    x = np.array([3, -1, 59, 7]).astype(dtype)
    for swap in (False, True):
        args_np = (value, x) if swap else (x, value)
        args_sl = (value, sl.asarray(x)) if swap else (sl.asarray(x), value)
        _same_as_numpy(lambda a=args_np: getattr(np, name)(*a, casting="unsafe", **kw),
                       lambda a=args_sl: getattr(sl, name)(*a, casting="unsafe", **kw))
        # NumPy's own function on a stitchlab array takes the same path
        _same_as_numpy(lambda a=args_np: getattr(np, name)(*a, casting="unsafe", **kw),
                       lambda a=args_sl: getattr(np, name)(*a, casting="unsafe", **kw))


@pytest.mark.parametrize("loop", INTS + FLOATS)
@pytest.mark.parametrize("value", [1.5, -4.5, 1e10, 2.5, 7, -1, 300, 2**40, True])
@pytest.mark.parametrize("name", ["add", "multiply", "power", "fmod", "floor_divide", "bitwise_and", "maximum"])
def test_every_loop_dtype_gets_numpys_converted_number(name: str, value: Any, loop: str) -> None:
    x = np.array([3, 59, 7], np.int8)
    _same_as_numpy(lambda: getattr(np, name)(x, value, dtype=loop, casting="unsafe"),
                   lambda: getattr(sl, name)(sl.asarray(x), value, dtype=loop, casting="unsafe"))


def test_numpys_power_of_a_python_float_on_a_stitchlab_array_converts_it() -> None:
    x = np.array([33], np.int8)
    got = np.power(1.5, sl.asarray(x), dtype=np.uint8, casting="unsafe")
    assert got.get().tolist() == np.power(1.5, x, dtype=np.uint8, casting="unsafe").tolist() == [1]


# --- C: only Python numbers: int64/float64 arrays, not weak ----------------------------------------
CASES_C: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = [
    ("floor", (1,), {"dtype": np.uint32, "casting": "no"}),
    ("absolute", (65535,), {"dtype": np.uint16}),
    ("cos", (-7.0,), {"dtype": np.float32, "casting": "no"}),
    ("conjugate", (2**63 - 1,), {"dtype": np.int8}),
    ("reciprocal", (2**63,), {"dtype": np.int8}),
    ("reciprocal", (2**64,), {"dtype": np.int8}),
    ("add", (1, 2.5), {"dtype": np.float32}),
    ("add", (1, 2), {"dtype": np.int8, "casting": "same_kind"}),
    ("multiply", (3, True), {"casting": "safe"}),
    ("sigmoid", (1,), {"dtype": np.float32}),
]


@pytest.mark.parametrize(("name", "args", "kw"), CASES_C)
def test_python_numbers_alone_are_int64_or_float64_arrays(name: str, args: tuple[Any, ...], kw: dict[str, Any]) -> None:
    if name == "sigmoid":  # (not NumPy's: its float loop, as NumPy's exp would pick)
        _same_as_numpy(lambda: (1 / (1 + np.exp(-np.asarray(args[0]))).astype(np.float32)),
                       lambda: sl.sigmoid(*args, **kw))
        return
    _same_as_numpy(lambda: getattr(np, name)(*args, **kw), lambda: getattr(sl, name)(*args, **kw))


@pytest.mark.parametrize("out_dtype", ["float64", "float32", "int64"])
def test_python_numbers_alone_with_out_cast_as_numpy(out_dtype: str) -> None:
    for casting in ("no", "same_kind", "unsafe"):
        _same_as_numpy(lambda c=casting: np.arctan(3, out=np.zeros((), out_dtype), casting=c),
                       lambda c=casting: sl.arctan(3, out=sl.zeros((), out_dtype), casting=c))


# --- D: conjugate of bool is int8 -------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["bool"] + INTS + FLOATS)
def test_conjugate_has_numpys_dtype_bool_giving_int8(dtype: str) -> None:
    x = np.array([1, 0, 1]).astype(dtype)
    for name in ("conj", "conjugate"):
        _same_as_numpy(lambda n=name: getattr(np, n)(x), lambda n=name: getattr(sl, n)(sl.asarray(x)))
        for out in ("uint8", "int8", "float32"):  # int8 into uint8 raises, as NumPy's same_kind
            _same_as_numpy(lambda n=name, o=out: getattr(np, n)(x, out=np.zeros(3, o)),
                           lambda n=name, o=out: getattr(sl, n)(sl.asarray(x), out=sl.zeros(3, o)))
    _same_as_numpy(lambda: np.conjugate(True), lambda: sl.conjugate(True))


# --- E: clip -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", INTS + ["bool"])
@pytest.mark.parametrize(("lo", "hi"), [(-1, 2), (-1000, 1000), (-1000, 5), (3, 2**64), (None, -129), (-(2**63), None),
                                        (300, 400), (-5, -1), (2**63, 2**64), (0.5, 2), (True, 2)])
def test_clip_with_python_int_bounds_beyond_the_dtype_is_numpys(dtype: str, lo: Any, hi: Any) -> None:
    x = np.array([0, 1, 2, 3, 100]).astype(dtype)
    _same_as_numpy(lambda: np.clip(x, lo, hi), lambda: sl.clip(sl.asarray(x), lo, hi))
    _same_as_numpy(lambda: np.clip(x, lo, hi, out=np.zeros(5, dtype)),
                   lambda: sl.clip(sl.asarray(x), lo, hi, out=sl.zeros(5, dtype)))


@pytest.mark.parametrize(("x", "lo", "hi"), [("int8", 0.5, "float16"), ("bool", 127, "int8"), ("int8", "uint16", "float16"),
                                             ("uint8", -1.5, 300), ("float16", 70000, "int8"), ("int16", "uint8", 2.5),
                                             ("float32", "int64", 1), ("uint64", "int64", 0)])
def test_clip_promotes_its_three_operands_at_once(x: str, lo: Any, hi: Any) -> None:
    def operand(v: Any, lib: Any) -> Any:
        return lib.asarray(np.array([1, 3]).astype(v)) if isinstance(v, str) else v

    a = np.array([0, 2]).astype(x)
    _same_as_numpy(lambda: np.clip(a, operand(lo, np), operand(hi, np)),
                   lambda: sl.clip(sl.asarray(a), operand(lo, sl), operand(hi, sl)))


SPECIALS = [-0.0, 0.0, np.nan, 1.0, -1.0, 2.0]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("bounds", ["python", "numpy scalar", "0-d", "one element", "arrays", "one array"])
def test_clip_keeps_numpys_signed_zeros_and_nans(dtype: str, bounds: str) -> None:
    # every (x, min, max) of the specials, min > max and NaNs included; NumPy's loop keeps x where it
    # equals a constant bound (and always for float16), the bound for array bounds of float32/64
    triples = np.array(list(itertools.product(SPECIALS, repeat=3))).astype(dtype).T
    x, lo, hi = triples
    if bounds == "arrays":
        _same_as_numpy(lambda: np.clip(x, lo, hi), lambda: sl.clip(sl.asarray(x), sl.asarray(lo), sl.asarray(hi)))
        return
    if bounds == "one array":
        _same_as_numpy(lambda: np.clip(x, lo, 1.0), lambda: sl.clip(sl.asarray(x), sl.asarray(lo), 1.0))
        return
    xs = np.array(SPECIALS, dtype)
    for lo1, hi1 in itertools.product(SPECIALS, repeat=2):
        make = {"python": float, "numpy scalar": np.dtype(dtype).type, "0-d": lambda v: np.array(v, dtype),
                "one element": lambda v: np.array([v], dtype)}[bounds]
        lo_, hi_ = make(lo1), make(hi1)
        lo_sl, hi_sl = (lo_, hi_) if bounds in ("python", "numpy scalar") else (sl.asarray(lo_), sl.asarray(hi_))
        _same_as_numpy(lambda lo_=lo_, hi_=hi_: np.clip(xs, lo_, hi_),
                       lambda lo_sl=lo_sl, hi_sl=hi_sl: sl.clip(sl.asarray(xs), lo_sl, hi_sl))


# --- G: select with Python numbers among the choices ------------------------------------------------
@pytest.mark.parametrize("dtype", ["bool", *INTS, *FLOATS])
@pytest.mark.parametrize(("choice", "default"), [(5, 0), (300, 0), (5, 300), (5, -1), (2.5, 0), (2**63, 0), (True, 0),
                                                 (5, True), (70000, 1e300), (-1, 0.5)])
def test_select_keeps_python_numbers_in_the_choices_weak(dtype: str, choice: Any, default: Any) -> None:
    conds = [np.array([True, False, False]), np.array([False, True, False])]
    x = np.array([1, 2, 3]).astype(dtype)
    _same_as_numpy(lambda: np.select(conds, [x, choice], default),
                   lambda: sl.select([sl.asarray(c) for c in conds], [sl.asarray(x), choice], default))


# --- F: round/around with out= of another dtype -----------------------------------------------------
ROUND_VALUES = [126, -3.5, 54.68914, 0.125, 2.5, -1.55, 1e5 + 0.5, 7, 0]


@pytest.mark.parametrize("out_dtype", ["bool", *INTS, *FLOATS])
@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int64", *FLOATS])
def test_round_into_out_computes_in_outs_dtype_as_numpy(dtype: str, out_dtype: str) -> None:
    with np.errstate(over="ignore", invalid="ignore"):  # (1e5 in float16 and int8: inf, wrapped)
        x = np.array(ROUND_VALUES).astype(dtype) if dtype != "bool" else np.array([True, False] * 4 + [True])
    for decimals in (-2, -1, 0, 1, 2, 3):
        for name in ("round", "around"):
            _same_as_numpy(lambda d=decimals, n=name: getattr(np, n)(x, d, out=np.zeros(len(x), out_dtype)),
                           lambda d=decimals, n=name: getattr(sl, n)(sl.asarray(x), d, out=sl.zeros(len(x), out_dtype)))
        _same_as_numpy(lambda d=decimals: np.round(x, d, out=np.zeros(len(x), out_dtype)),
                       lambda d=decimals: np.round(sl.asarray(x), d, out=sl.zeros(len(x), out_dtype)))


@pytest.mark.parametrize("name, args, kw", [
    ("minimum", (127, 0.0), {"dtype": np.float16, "casting": "no"}),     # two numbers stay weak
    ("equal", (-1, 1e10), {"casting": "no"}),
    ("subtract", (2**63 - 1, 2**63 - 1), {"dtype": np.int32}),           # by value: OverflowError
    ("add", (True, 65535), {"dtype": np.uint8, "casting": "unsafe"}),
    ("add", (1, 2.5), {"dtype": np.int32, "casting": "unsafe"}),
    ("floor", (1,), {"dtype": np.uint32, "casting": "no"}),               # one number: an int64 array
    ("conjugate", (2**63 - 1,), {"dtype": np.int8}),
    ("minimum", (np.array([1.0, 0.0]), 2**64), {"dtype": bool, "casting": "unsafe"}),  # too large for C
])
def test_python_numbers_with_dtype_or_casting_are_numpys(name: str, args: tuple[Any, ...], kw: dict[str, Any]) -> None:
    _same_as_numpy(lambda: getattr(np, name)(*args, **kw),
                   lambda: getattr(sl, name)(*[sl.asarray(a) if isinstance(a, np.ndarray) else a for a in args], **kw))
