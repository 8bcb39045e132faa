"""``sl.lexsort`` against NumPy: one to three keys with many ties (integers, floats with NaNs,
bools), every axis of 1- to 3-d keys, keys as a sequence or as the rows of an array, 0-d keys,
NumPy's errors, and ``np.lexsort`` on stitchlab arrays. On the GPU:
``tests/gpu/test_library_steps_gpu.py``."""

from __future__ import annotations

import numpy as np
import pytest

import stitchlab as sl

RNG = np.random.default_rng(8)


@pytest.mark.parametrize("shape", [(12,), (5, 7), (3, 4, 5)])
@pytest.mark.parametrize("nkeys", [1, 2, 3])
def test_lexsort_is_numpys(shape: tuple[int, ...], nkeys: int) -> None:
    ints = [RNG.integers(0, 3, shape) for _ in range(nkeys)]
    floats = [np.where(RNG.random(shape) < 0.2, np.nan, RNG.integers(0, 3, shape).astype(np.float32)) for _ in range(nkeys)]
    mixed = [RNG.random(shape) < 0.5, RNG.integers(-2, 2, shape).astype(np.int8), RNG.integers(0, 2, shape).astype(np.float64)][:nkeys]
    for keys in (ints, floats, mixed):
        for axis in range(-len(shape), len(shape)):
            want = np.lexsort(keys, axis=axis)
            got = sl.lexsort([sl.asarray(k) for k in keys], axis=axis)
            assert got.dtype == want.dtype == np.int64
            np.testing.assert_array_equal(got.get(), want)
        if len({k.dtype for k in keys}) == 1:
            np.testing.assert_array_equal(sl.lexsort(sl.asarray(np.stack(keys))).get(), np.lexsort(np.stack(keys)))


def test_lexsort_edge_cases_and_errors() -> None:
    assert int(sl.lexsort([np.array(3)]).get()) == np.lexsort([np.array(3)]) == 0
    assert sl.lexsort(np.zeros((2, 0))).get().shape == (0,)
    got = np.lexsort(sl.asarray(np.array([[1, 0, 1], [0, 0, 1]])), axis=0)
    assert isinstance(got, sl.LazyArray)
    np.testing.assert_array_equal(got.get(), np.lexsort(np.array([[1, 0, 1], [0, 0, 1]]), axis=0))
    for bad, error in (([], TypeError), (np.array(5), TypeError), ([np.array([1, 2]), np.array([1, 2, 3])], ValueError)):
        with pytest.raises(error) as want:
            np.lexsort(bad)
        with pytest.raises(error) as got:
            sl.lexsort(bad)
        assert str(got.value) == str(want.value)
    with pytest.raises(np.exceptions.AxisError):
        sl.lexsort([np.arange(3)], axis=1)
