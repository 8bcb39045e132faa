"""sl.jit cases a random-program fuzzer found: each jitted call gives what the function gives run
eagerly with stitchlab (and NumPy), or the error the user guide documents."""

from __future__ import annotations

import numpy as np
import pytest

import stitchlab as sl


def test_a_view_of_a_view_of_a_local_returned_after_a_write_through_is_no_outside_array():
    def f(x):
        a = x.copy()
        v = a[1:]
        w = v[1:]  # holds v, which the write below reaches through
        w[0] = 5
        return w

    x = np.arange(4.0)
    eager = f(sl.asarray(x)).get()
    np.testing.assert_array_equal(eager, [5, 3])
    jitted = sl.jit(f)
    for _ in range(2):
        np.testing.assert_array_equal(jitted(x).get(), eager)


def test_a_captured_array_assigned_into_and_returned_is_refused_and_keeps_its_value():
    total = sl.zeros(3)

    @sl.jit
    def accumulate(x):
        total[1] += x[0]  # eagerly, every call would add to total
        return total

    for _ in range(2):
        with pytest.raises(TypeError, match="assigns into an array from outside the function"):
            accumulate(np.ones(3))
    np.testing.assert_array_equal(total.get(), [0, 0, 0])


def test_clip_of_an_integer_array_with_a_bound_read_at_run_time_at_the_edge_of_its_dtype():
    # NumPy leaves a side open for a Python int at or beyond the dtype's range, so a float bound
    # above it wins (np.clip(x_uint8, inf, 255) is inf): an int read at run time must do the same
    f = sl.jit(lambda x, lo, hi: sl.clip(x, lo, hi))
    x = np.arange(3, dtype=np.uint8)
    for lo, hi in ((0.5, 1), (0.5, 2), (float("inf"), 255), (float("inf"), 256), (7.5, 3)):
        expected = np.clip(x, lo, hi)
        got = f(x, lo, hi).get()
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)


def _add_in_place(x, s):
    s += 1  # a NumPy scalar is immutable: Python rebinds s to s + 1
    return x * s


def _scale_in_place(x, s):
    s *= 1.5  # np.int8(1) * 1.5 is a float64
    return x * s


@pytest.mark.parametrize("f", [_add_in_place, _scale_in_place])
def test_an_in_place_operator_on_a_numpy_scalar_argument_makes_a_new_number_as_numpy_does(f):
    x = np.arange(3, dtype=np.float32)
    jitted = sl.jit(f)
    for s in (np.float32(2), np.float32(3), np.int8(1), np.float64(-1)):
        expected = f(x, s)
        got = jitted(x, s).get()
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)
