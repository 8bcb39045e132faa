"""sl.jit's arguments other than arrays: type checks on numbers read at run time, containers of
arguments, static arguments; every result compared with the function run eagerly on NumPy arrays."""

from __future__ import annotations

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
    got = got.get() if hasattr(got, "get") else got
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
