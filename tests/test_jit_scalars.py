"""sl.jit and Python scalar arguments: an int or float argument whose value changes is read at run
time after one more trace (no trace per value), with the bits and errors of a trace by value;
where tracing needs the value (a branch, a shape, an exponent) the function is traced per value."""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import pytest

import stitchlab as sl
from stitchlab.frontend.scalars import ValueNeeded
from stitchlab.ir.dtypes import bfloat16


def _adam(xp: Any) -> Any:
    def step(p: Any, g: Any, m: Any, v: Any, lr: float, t: int) -> Any:
        step.runs += 1
        b1, b2 = 0.9, 0.999
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        m_hat = m / (1 - b1 ** t)
        v_hat = v / (1 - b2 ** t)
        return p - lr * m_hat / (xp.sqrt(v_hat) + 1e-8), m, v

    step.runs = 0
    return step


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
def test_a_learning_rate_and_a_step_count_are_read_at_run_time(dtype: Any) -> None:
    rng = np.random.default_rng(3)
    p, g, m = (rng.standard_normal((16, 24)).astype(dtype) for _ in range(3))
    v = np.abs(rng.standard_normal((16, 24))).astype(dtype)
    body = _adam(sl)
    f, ref = sl.jit(body), _adam(np)
    sl.reset_stats()
    for t in range(1, 31):
        lr = 1e-3 * 0.97 ** t
        out = f(p, g, m, v, lr, t)
        want = ref(p, g, m, v, lr, t)
        for a, b in zip(out, want, strict=True):
            assert a.dtype == b.dtype
            np.testing.assert_array_equal(a.get(), b, err_msg=f"t={t}")
    assert body.runs == 2 and sl.stats()["traces"] == 2  # by value, then once more reading both


def test_zero_and_minus_zero_are_two_values() -> None:
    x = np.array([-0.0, 0.0, 1.5], np.float32)
    for first, second in ((0.0, -0.0), (-0.0, 0.0)):
        f = sl.jit(lambda x, c: x + c)
        for c in (first, second, first):
            np.testing.assert_array_equal(np.signbit(f(x, c).get()), np.signbit(x + c))


def test_a_value_needed_while_tracing_is_traced_per_value_and_the_others_still_read(caplog: Any) -> None:
    @sl.jit
    def f(x: Any, rows: int, lr: float) -> Any:
        return x.reshape(rows, -1).sum(axis=0) * lr

    x = np.arange(24, dtype=np.float64)
    sl.reset_stats()
    with caplog.at_level(logging.INFO, logger="stitchlab"):
        for rows, lr in ((2, 0.5), (2, 0.25), (2, 3.0), (4, 0.5), (4, 1.5), (3, 2.0), (3, 0.125), (2, 7.0)):
            np.testing.assert_array_equal(f(x, rows, lr).get(), x.reshape(rows, -1).sum(axis=0) * lr)
    # (2, 0.5) by value; (2, 0.25) reads lr; (4, 0.5) tries rows too, which a shape needs, then
    # traces rows by value; (3, 2.0) traces rows 3 by value; everything else replays
    assert sl.stats()["traces"] == 5
    assert "scalar 0.5 -> any float (read at run time)" in caplog.text
    assert "int() needs the value of argument [1] while tracing: traced for each of its values" in caplog.text


@pytest.mark.parametrize("use", ["branch", "exponent", "int()", "range", "numpy"])
def test_python_that_needs_the_value_traces_per_value(use: str) -> None:
    def body(x: Any, c: Any) -> Any:
        if use == "branch":
            return x * c if c > 0 else x - c
        if use == "exponent":
            return x ** c
        if use == "int()":
            return x * int(c)
        if use == "range":
            for _ in range(c):
                x = x * 2
            return x
        return x * np.float32(c)

    f = sl.jit(body)
    x = np.array([-np.inf, -1.5, 0.0, 2.0, 9.0], np.float32)
    values = [2, 3, 1, 2, 0] if use == "range" else [2.0, 0.5, -1.0, 1.0, 3.0, 2.0]
    sl.reset_stats()
    with np.errstate(all="ignore"):
        for c in values:
            want = body(x, c)
            got = f(x, c).get()
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)
    assert len(f.traces) == len(set(values))
    assert sl.stats()["traces"] == len(set(values)) + 1  # and the attempt to read it at run time


def test_integers_outside_the_arrays_range_give_numpys_answer_or_error() -> None:
    x = np.array([-3, 0, 7, 127], np.int8)
    add = sl.jit(lambda x, k: x + k)
    eq = sl.jit(lambda x, k: x == k)
    for k in (1, 5, -128, 100):
        np.testing.assert_array_equal(add(x, k).get(), x + k)
        np.testing.assert_array_equal(eq(x, k).get(), x == k)
    for k in (300, -129):
        with pytest.raises(OverflowError, match="out of bounds for int8"):
            add(x, k)
        np.testing.assert_array_equal(eq(x, k).get(), x == k)  # all False: no element can be
    np.testing.assert_array_equal(add(x, 2).get(), x + 2)  # and back to the replay
    before = sl.stats()["traces"]
    add(x, 3)
    assert sl.stats()["traces"] == before


def test_a_derived_number_of_another_type_traces_that_call_by_value() -> None:
    f = sl.jit(lambda x, k: x * 2 ** k)  # int ** int is a float for a negative k
    x = np.arange(4, dtype=np.int64)
    for k in (1, 2, -1, 3, -2, 4):
        want = x * 2 ** k
        got = f(x, k).get()
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_an_int_and_a_float_at_one_position_keep_numpys_dtypes() -> None:
    f = sl.jit(lambda x, c: x * c)
    x = np.arange(5, dtype=np.int32)
    for c in (2, 3, 2.5, -1, 0.25, 7, True):
        want = x * c
        got = f(x, c).get()
        assert got.dtype == want.dtype, c
        np.testing.assert_array_equal(got, want)


def test_half_precision_arrays_take_the_number_as_numpy_converts_it() -> None:
    bf16 = bfloat16()
    x16 = np.linspace(-3, 3, 33).astype(np.float16)
    f = sl.jit(lambda x, c: (x - c) * c)
    for c in (0.1, 1 / 3, 65519.0, 1e-7, 2.0 ** -24 * 1.5):
        with np.errstate(all="ignore"):
            want = (x16 - c) * c
        np.testing.assert_array_equal(f(x16, c).get(), want)
    xb = x16.astype(bf16)
    for c in (0.1, 1 / 3, 3.0e38):
        eager = ((sl.asarray(xb) - c) * c).get()  # by value, checked against ml_dtypes elsewhere
        np.testing.assert_array_equal(f(xb, c).get().view(np.uint16), eager.view(np.uint16))


def test_an_error_with_the_values_themselves_keeps_the_numbers_read_at_run_time() -> None:
    @sl.jit
    def f(x: Any, y: Any, lr: float) -> Any:
        return x * lr + y

    x, y = np.ones((4, 8)), np.ones((4, 8))
    f(x, y, 0.1)
    f(x, y, 0.2)
    with pytest.raises(ValueError, match="broadcast"):
        f(x, np.ones((3, 8)), 0.3)
    sl.reset_stats()
    np.testing.assert_array_equal(f(x, y, 0.4).get(), x * 0.4 + y)
    assert sl.stats()["traces"] == 0


def test_a_bool_stays_part_of_the_signature_by_value() -> None:
    f = sl.jit(lambda x, flag: x + flag)
    x = np.arange(3)
    for flag in (True, False, True, False):
        np.testing.assert_array_equal(f(x, flag).get(), x + flag)
    assert len(f.traces) == 2


def test_a_traced_scalar_outside_its_trace_says_what_it_is() -> None:
    kept = []

    @sl.jit
    def f(x: Any, c: float) -> Any:
        kept.append(c)
        return x * c

    f(np.ones(2), 1.0)
    f(np.ones(2), 2.0)
    assert "traced float argument [1]" in repr(kept[-1])
    with pytest.raises(ValueNeeded, match="bool"):
        bool(kept[-1])


PATTERNS = {
    "clip": lambda x, t: sl.clip(x, -t, t),
    "where": lambda x, t: sl.where(x > t, t, x),
    "full_like": lambda x, t: sl.full_like(x, t) + x,
    "full_int8": lambda x, t: sl.full(x.shape, t, dtype=np.int8) * x,
    "maximum": lambda x, t: sl.maximum(x, t),
    "decay": lambda x, t: sl.exp(-t * x),
    "count_below": lambda x, t: (sl.abs(x) < t).sum(),
    "mean_over": lambda x, t: x.mean() / t,
    "reflected": lambda x, t: (t - x, t / x, t ** x),
    "temperature": lambda x, t: sl.exp((x - x.max(-1, keepdims=True)) / t),
    "cast_after": lambda x, t: (x * t).astype(np.float16),
}


@pytest.mark.parametrize("name", sorted(PATTERNS))
def test_common_uses_of_a_number_read_at_run_time(name: str) -> None:
    fn = PATTERNS[name]
    f = sl.jit(fn)
    x = np.linspace(-3, 3, 24).reshape(4, 6).astype(np.float32)
    with np.errstate(all="ignore"):
        for t in (0.5, 1.5, 2.7, 0.75, -1.25):
            got, want = f(x, t), fn(sl.asarray(x), t)  # eager: the literal value
            for a, b in zip(*(v if isinstance(v, tuple) else (v,) for v in (got, want)), strict=True):
                assert a.dtype == b.dtype
                np.testing.assert_array_equal(a.get(), b.get())
    assert len(f.traces) == 2


def test_numpy_scalars_are_read_at_run_time_in_their_own_dtype() -> None:
    """A NumPy scalar is an array of its dtype (NumPy's scalars are not weak): read at run time
    from the first call, one trace for every value."""
    @sl.jit
    def f(x: Any, lr: Any, k: Any, flag: Any) -> Any:
        return x - lr * x, x * k, sl.where(flag, x, -x), lr

    x16 = np.linspace(-2, 2, 12).astype(np.float16).reshape(3, 4)
    x8 = np.arange(-6, 6, dtype=np.int8).reshape(3, 4)
    sl.reset_stats()
    for t in range(6):
        lr = np.float64(0.5 * (1 + np.cos(np.pi * t / 6)))  # a cosine schedule: NumPy's float64
        k, flag = np.int8(t - 3), np.bool_(t % 2)
        for x in (x16, x8):
            got = f(x, lr, k, flag)
            with np.errstate(all="ignore"):
                want = (x - lr * x, x * k, np.where(flag, x, -x), lr)
            for a, b in zip(got, want, strict=True):
                assert a.dtype == np.asarray(b).dtype
                np.testing.assert_array_equal(a.get(), b)
    assert sl.stats()["traces"] == 2  # one per array dtype
