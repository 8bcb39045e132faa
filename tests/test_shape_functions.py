"""``sl.ndim``, ``shape``, ``size``, ``broadcast_shapes``, ``rollaxis``, ``block`` and ``resize``
against NumPy: values, dtypes, shapes, errors, and NumPy's functions on stitchlab arrays
(``__array_function__``). On the GPU: ``tests/gpu/test_library_steps_gpu.py``."""

from __future__ import annotations

import numpy as np
import pytest

import stitchlab as sl


def _same(got: sl.LazyArray, want: np.ndarray) -> None:
    assert isinstance(got, sl.LazyArray)
    g = got.get()
    assert g.dtype == want.dtype and g.shape == want.shape
    np.testing.assert_array_equal(g, want)


@pytest.mark.parametrize("a", [np.zeros((2, 3, 4)), [[1, 2]], 5, np.float32(2), np.zeros(0)])
def test_ndim_shape_and_size_are_numpys(a: object) -> None:
    for x in (a, sl.asarray(a)):
        assert sl.ndim(x) == np.ndim(a) and sl.shape(x) == np.shape(a) and sl.size(x) == np.size(a)
    if np.ndim(a) == 3:
        assert sl.size(a, 1) == 3 and sl.size(a, -1) == 4 and sl.size(a, (0, 2)) == 8
        assert np.size(sl.asarray(a), (0, 2)) == 8 and np.ndim(sl.asarray(a)) == 3 and np.shape(sl.asarray(a)) == (2, 3, 4)
        with pytest.raises(np.exceptions.AxisError):
            sl.size(a, 3)


def test_broadcast_shapes_is_numpys() -> None:
    assert sl.broadcast_shapes((5, 1, 3), (4, 3), 1, ()) == np.broadcast_shapes((5, 1, 3), (4, 3), 1, ()) == (5, 4, 3)
    assert sl.broadcast_shapes() == ()
    with pytest.raises(ValueError, match="shape mismatch"):
        sl.broadcast_shapes((2, 3), (3, 2))


def test_rollaxis_is_numpys() -> None:
    a = np.arange(120).reshape(2, 3, 4, 5)
    for axis in range(-4, 4):
        for start in range(-4, 5):
            _same(sl.rollaxis(sl.asarray(a), axis, start), np.rollaxis(a, axis, start))
    _same(np.rollaxis(sl.asarray(a), 3, 1), np.rollaxis(a, 3, 1))
    for axis, start in ((4, 0), (0, 5), (0, -5)):
        with pytest.raises(np.exceptions.AxisError) as got:
            sl.rollaxis(sl.asarray(a), axis, start)
        with pytest.raises(np.exceptions.AxisError) as want:
            np.rollaxis(a, axis, start)
        assert str(got.value) == str(want.value)


def test_block_is_numpys() -> None:
    a, b, c = np.ones((2, 2), np.float32), np.zeros((2, 1), np.float32), np.full((1, 3), 7, np.int16)
    v = np.arange(3)
    cases = [[[a, b], [c]], [v, v], [[v], [v]], [[[1]], [[2]]], [1, 2.5], 5, [[np.ones((2, 2, 2)), np.zeros((2, 2, 1))]],
             [[a], [np.ones((1, 2), np.float32)]], [np.int8(3), v]]
    for blocks in cases:
        want = np.block(blocks)
        def lazy(x: object) -> object:
            return [lazy(v) for v in x] if isinstance(x, list) else sl.asarray(x)
        _same(sl.block(lazy(blocks)), want)
        _same(sl.block(blocks), want)
    _same(np.block([[sl.asarray(a), sl.asarray(b)]]), np.block([[a, b]]))
    for bad in ([[1], 2], [], [[1], []], (1, 2), [(1, 2)], [[a, np.ones((3, 1))]]):
        with pytest.raises((ValueError, TypeError)) as want:
            np.block(bad)
        with pytest.raises(want.type) as got:
            sl.block(bad)
        if want.type is TypeError or "depth" in str(want.value) or "empty" in str(want.value):
            assert str(got.value) == str(want.value)


@pytest.mark.parametrize("new_shape", [(2, 3), (7,), (0,), 5, (3, 0), (1, 1, 5), ()])
def test_resize_is_numpys(new_shape: object) -> None:
    for a in (np.arange(4).reshape(2, 2), np.arange(0, dtype=np.float32), np.array(3.5), np.array([True, False, True])):
        _same(sl.resize(sl.asarray(a), new_shape), np.resize(a, new_shape))
    _same(np.resize(sl.asarray(np.arange(3)), new_shape), np.resize(np.arange(3), new_shape))


def test_resize_refuses_negative_extents() -> None:
    with pytest.raises(ValueError, match="non-negative"):
        sl.resize(sl.zeros(3), (-1, 2))
    assert len(sl.explain(sl.resize(sl.asarray(np.arange(6.0)), (4, 5)) * 2).kernels) == 1
