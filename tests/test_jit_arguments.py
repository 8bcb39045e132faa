"""sl.jit's arguments other than arrays: type checks on numbers read at run time, containers of
arguments, static arguments; every result compared with the function run eagerly on NumPy arrays."""

from __future__ import annotations

import collections
import numbers

import numpy as np
import pytest

import stitchlab as sl

TYPE_CHECKS = {
    "isinstance int": lambda s: isinstance(s, int),
    "isinstance float": lambda s: isinstance(s, float),
    "isinstance Number": lambda s: isinstance(s, numbers.Number) and not isinstance(s, float),
    "np.isscalar": lambda s: np.isscalar(s) and not isinstance(s, float),
    "sl.isscalar": lambda s: sl.isscalar(s) and not isinstance(s, float),
}


def _same(got, want):
    got, want = got.get(), np.asarray(want)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("check", list(TYPE_CHECKS))
def test_a_type_check_on_a_number_read_at_run_time_answers_as_for_the_number(check):
    test = TYPE_CHECKS[check]

    def f(x, s):
        return x + s if test(s) else x * s

    jf = sl.jit(f)
    x = np.arange(4, dtype=np.float32)
    for s in (2, 3, 4, 2.5, 3.5, 7):  # by value, then read at run time: ints, then floats
        _same(jf(x, s), f(x, s))


def test_type_of_a_number_in_the_function_takes_its_numbers_by_value():
    def f(x, s):
        return x + s if type(s) is int else x * s

    jf = sl.jit(f)
    x = np.arange(4, dtype=np.float32)
    for s in (2, 3, 4, 2.5):
        _same(jf(x, s), f(x, s))
    assert len(jf.traces) == 4


def test_a_number_checked_with_isinstance_is_still_read_at_run_time():
    def f(x, s):
        assert isinstance(s, (int, float))
        return x * s

    jf = sl.jit(f)
    x = np.arange(4, dtype=np.float32)
    for s in range(1, 9):
        _same(jf(x, s), f(x, s))
    assert len(jf.traces) == 2


def test_a_tuple_of_numbers_is_numbers_not_an_array():
    def f(x, p):
        return x * p[0] + p[1]

    jf = sl.jit(f)
    x = np.arange(3, dtype=np.float32)
    for p in ((2, 3), (2.5, 3), (2.5, -1.0), [4, 0.5]):
        _same(jf(x, p), f(x, p))  # float32: Python numbers are weak


def test_arrays_in_a_tuple_keep_their_own_dtypes_and_shapes():
    pair = (np.ones(4, np.float32), np.arange(6, dtype=np.int8).reshape(2, 3))
    second = sl.jit(lambda p: p[1])
    _same(second(pair), pair[1])

    def f(p):
        return p[0].sum() + p[1].sum(axis=0)

    _same(sl.jit(f)(pair), f(pair))


Params = collections.namedtuple("Params", "w b")


def test_dicts_namedtuples_and_nested_lists_are_flattened_into_their_leaves():
    def step(x, state):
        p = state["params"]
        return {"y": x * p.w + p.b, "scaled": [x * state["lr"], (x - state["shift"][0],)]}

    jf = sl.jit(step)
    x = np.arange(4, dtype=np.float32)
    for lr in (0.1, 0.2, 0.3, 0.4):  # a number in a container is read at run time once it changes
        state = {"params": Params(np.full(4, 2, np.float32), np.ones(4, np.float16)), "lr": lr, "shift": [1]}
        got, want = jf(x, state), step(x, state)
        _same(got["y"], want["y"])
        _same(got["scaled"][0], want["scaled"][0])
        _same(got["scaled"][1][0], want["scaled"][1][0])
    assert [len(j.traces) for j in jf._layouts.values()] == [2]


def _twice_plus_one(v):
    return v * 2 + 1


STATIC = [
    (None, lambda x, a: x if a is None else x * 2),
    ("sum", lambda x, a: x.sum() if a == "sum" else x.max()),
    ("max", lambda x, a: x.sum() if a == "sum" else x.max()),
    (b"b", lambda x, a: x + len(a)),
    (np.dtype(np.int16), lambda x, a: x.astype(a)),
    (np.int32, lambda x, a: x.astype(a)),
    (slice(1, None, 2), lambda x, a: x[a]),
    (Ellipsis, lambda x, a: x[a, 0]),
    (_twice_plus_one, lambda x, a: a(x)),
    ((0, 2), lambda x, a: x.sum(axis=a)),
    ((4, 6), lambda x, a: x.reshape(a)),
    ((), lambda x, a: x.sum().reshape(a)),
    ((np.int8, None, "float32"), lambda x, a: x.astype(a[0]).astype(a[2])),
]


@pytest.mark.parametrize("value, f", STATIC, ids=[getattr(v, "__name__", repr(v)) for v, _ in STATIC])
def test_a_static_argument_is_passed_as_itself(value, f):
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    jf = sl.jit(f)
    for _ in range(2):
        _same(jf(x, value), f(x, value))


def test_equal_static_values_share_a_trace_and_other_values_trace_again():
    f = sl.jit(lambda x, how, shape: (x.sum() if how == "sum" else x.max()).reshape(shape))
    x = np.arange(6.0)
    for how, shape in (("sum", (1,)), ("".join(["s", "um"]), (1,)), ("max", (1,)), ("sum", (1, 1)), ("sum", (1,))):
        _same(f(x, how, shape), (x.sum() if how == "sum" else x.max()).reshape(shape))
    assert sum(len(j.traces) for j in f._layouts.values()) == 3


def test_a_generator_argument_draws_anew_at_every_call():
    f = sl.jit(lambda x, gen: x + gen.random(x.shape))
    gen = sl.random.default_rng(0)
    x = np.zeros(8)
    assert not np.array_equal(f(x, gen).get(), f(x, gen).get())


def test_an_unhashable_argument_is_refused_with_the_fix():
    f = sl.jit(lambda x, opts: x)
    with pytest.raises(TypeError, match=r"argument 1 of <lambda> is a set.*closure or functools.partial"):
        f(np.ones(2), {1, 2})
    with pytest.raises(TypeError, match=r"argument 'opts'\[0\]\['a'\] of <lambda> is a set"):
        f(np.ones(2), opts=[{"a": {3}}])


def test_a_tuple_of_numpy_integers_is_a_static_value_of_its_types(caplog):
    import logging

    def f(x, s):
        return x.reshape(s) * s[0]

    jf = sl.jit(f)
    x = np.arange(6, dtype=np.int8)
    with caplog.at_level(logging.INFO, logger="stitchlab"):
        for s in ((2, 3), (np.int64(2), np.int64(3)), (3, 2)):  # NumPy's int64 is not weak
            _same(jf(x, s), f(x, s))
    assert "new static values or containers in argument 1" in caplog.text
