"""``sl.unravel_index`` and ``sl.ravel_multi_index`` against NumPy: host and device positions,
both orders, every mode, NumPy's errors (device positions are checked when called), the
``unravel_index(argmax(x), x.shape)`` idiom staying lazy (inside ``sl.jit`` too), and
``np.unravel_index`` on stitchlab arrays. On the GPU: ``tests/gpu/test_library_steps_gpu.py``."""

from __future__ import annotations

import numpy as np
import pytest

import stitchlab as sl

RNG = np.random.default_rng(5)
SHAPES = [(2, 3), (4, 1, 5), (7,), (3, 4, 2, 2), ()]


def _equal(got: tuple[sl.LazyArray, ...] | sl.LazyArray, want: object) -> None:
    if isinstance(got, tuple):
        assert isinstance(want, tuple) and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            _equal(g, w)
        return
    assert isinstance(got, sl.LazyArray)
    g = got.get()
    assert g.dtype == np.int64 and g.shape == np.shape(want)
    np.testing.assert_array_equal(g, want)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("order", ["C", "F"])
def test_unravel_index_is_numpys(shape: tuple[int, ...], order: str) -> None:
    size = int(np.prod(shape))
    if not shape:  # (NumPy: one position only, the empty tuple of coordinates)
        for idx in (0, np.array(0)):
            assert sl.unravel_index(idx, shape) == () == np.unravel_index(idx, shape)
        with pytest.raises(ValueError, match="not supported for 0d arrays"):
            sl.unravel_index(sl.asarray(np.array([0])), shape)
        return
    idx = RNG.integers(0, size, (3, 4))
    want = np.unravel_index(idx, shape, order=order)
    _equal(sl.unravel_index(sl.asarray(idx), shape, order=order), want)
    _equal(sl.unravel_index(idx, shape, order=order), want)
    _equal(sl.unravel_index(sl.asarray(idx.astype(np.uint8)) + 0, shape, order=order), want)
    _equal(sl.unravel_index(int(idx[0, 0]), shape, order=order), np.unravel_index(int(idx[0, 0]), shape, order=order))


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("order", ["C", "F"])
def test_ravel_multi_index_is_numpys(shape: tuple[int, ...], order: str) -> None:
    n = len(shape)
    inside = RNG.integers(0, 10, (n, 5)) % np.maximum(np.array(shape, np.int64), 1)[:, None]
    _equal(sl.ravel_multi_index(tuple(sl.asarray(c) for c in inside), shape, order=order),
           np.ravel_multi_index(tuple(inside), shape, order=order))
    anywhere = RNG.integers(-20, 20, (n, 5))
    for mode in ["wrap", "clip", ("clip", "wrap", "clip", "wrap")[:n]] if n else ["wrap"]:
        _equal(sl.ravel_multi_index(tuple(sl.asarray(c) for c in anywhere), shape, mode=mode, order=order),
               np.ravel_multi_index(tuple(anywhere), shape, mode=mode, order=order))
        _equal(sl.ravel_multi_index(tuple(anywhere), shape, mode=mode, order=order),
               np.ravel_multi_index(tuple(anywhere), shape, mode=mode, order=order))


def test_device_positions_outside_give_numpys_errors() -> None:
    for bad in ([6], [-1], [0, 7]):
        with pytest.raises(ValueError) as want:
            np.unravel_index(np.array(bad), (2, 3))
        with pytest.raises(ValueError) as got:
            sl.unravel_index(sl.asarray(np.array(bad)), (2, 3))
        assert str(got.value) == str(want.value)
    with pytest.raises(ValueError, match="invalid entry in coordinates array"):
        sl.ravel_multi_index((sl.asarray(np.array([0, 2])), sl.asarray(np.array([0, 0]))), (2, 3))
    with pytest.raises(ValueError, match="invalid entry in coordinates array"):
        sl.ravel_multi_index((sl.asarray(np.array([0, 1])), sl.asarray(np.array([0, -1]))), (2, 3), mode=("wrap", "raise"))
    for f in (lambda m: m.unravel_index(m.asarray(np.array([1.0])), (2, 3)),
              lambda m: m.ravel_multi_index((m.asarray(np.array([1.0])), m.asarray(np.array([1]))), (2, 3))):
        with pytest.raises(TypeError, match="only int indices permitted"):
            f(sl)
        with pytest.raises(TypeError, match="only int indices permitted"):
            f(np)
    with pytest.raises(ValueError, match="only 'C' or 'F' order"):
        sl.unravel_index(sl.asarray(np.array([1])), (2, 3), order="K")
    with pytest.raises(ValueError, match="sequence of length 2"):
        sl.ravel_multi_index((sl.asarray(np.array([1])),), (2, 3))
    with pytest.raises(ValueError, match="mode must be"):
        sl.ravel_multi_index((sl.asarray(np.array([1])),) * 2, (2, 3), mode="nearest")
    with pytest.raises(ValueError, match="non-negative"):
        sl.unravel_index(sl.asarray(np.array([1])), (2, -3))


def test_the_argmax_idiom_stays_lazy_and_runs_under_jit() -> None:
    a = RNG.standard_normal((5, 7)).astype(np.float32)
    x = sl.asarray(a)
    want = np.unravel_index(np.argmax(a), a.shape)
    got = sl.unravel_index(sl.argmax(x), x.shape)
    assert len(sl.explain(*got).kernels) == 1  # the argmax and the divisions: one kernel, nothing read back
    _equal(got, want)
    f = sl.jit(lambda x: sl.unravel_index(sl.argmin(x, axis=1), (x.shape[1],))[0])
    _equal(f(x), np.argmin(a, axis=1))
    with pytest.raises(RuntimeError, match="cannot be traced by sl.jit"):
        sl.jit(lambda x: sl.unravel_index(sl.argmax(x) + 1, x.shape))(x)


def test_numpy_functions_dispatch_to_stitchlab() -> None:
    idx = np.array([4, 0, 5])
    got = np.unravel_index(sl.asarray(idx), (2, 3))
    _equal(got, np.unravel_index(idx, (2, 3)))
    got = np.ravel_multi_index((sl.asarray(np.array([1, 0])), sl.asarray(np.array([2, 1]))), (2, 3))
    _equal(got, np.array([5, 1]))
