"""``axes=``, ``axis=`` and ``keepdims=`` of the ufuncs with a signature, against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import stitchlab as sl

_RNG = np.random.default_rng(7)
A = _RNG.random((3, 4, 5))
B = _RNG.random((5, 4, 2))
C = _RNG.random((4, 3, 2))

CASES = [
    ("matmul", (C, C), dict(axes=[(0, 1), (1, 0), (0, 1)])),
    ("matmul", (C, C), dict(axes=[(0, 1), (1, 0), (2, 1)])),
    ("matmul", (C, C), dict(axes=[(-3, -2), (1, 0), (-1, 0)])),
    ("matmul", (C, C[:, :, 0]), dict(axes=[(0, 1), (1, 0), (-1, 0)])),
    ("matmul", (A[0], B[:, 0]), dict(axes=[(0, 1), (0, 1), (1, 0)])),
    ("matmul", (A[0, 0], B[:, 0, 0]), dict(axes=[0, 0, ()])),
    ("matmul", (A[0, 0], B[:, 0, 0]), dict(axes=[(0,), (0,), ()])),
    ("matmul", (C[0, 0], C[0]), dict(axes=[(0,), (1, 0), (0,)])),
    ("vecdot", (A, A), dict(axis=1)),
    ("vecdot", (A, A), dict(axis=-3, keepdims=True)),
    ("vecdot", (A, A), dict(axis=1, keepdims=True)),
    ("vecdot", (A, A), dict(axes=[1, 1, 0], keepdims=True)),
    ("vecdot", (A, A), dict(axes=[1, 1])),
    ("vecdot", (A, A), dict(axes=[1, 1], keepdims=True)),
    ("vecdot", (A, A), dict(axes=[1, 1, ()])),
    ("vecdot", (A, A[0]), dict(axes=[1, 0])),
    ("vecdot", (A, A), dict(keepdims=True)),
    ("matvec", (A, A[0]), dict(axes=[(0, 1), (0,), (0,)])),
    ("matvec", (A, A[0, :, 0]), dict(axes=[(0, 1), (0,), (0,)])),
    ("vecmat", (C[:, 0, 0], C), dict(axes=[0, (0, 1), 1])),
    ("vecmat", (C[:, 0, 0], C), dict(axes=[0, (0, 2), 0])),
]


@pytest.mark.parametrize("name, args, kwargs", CASES)
def test_core_axes_place_operands_and_outputs_as_numpy(name, args, kwargs):
    expected = getattr(np, name)(*args, **kwargs)
    got = getattr(sl, name)(*(sl.asarray(a) for a in args), **kwargs)
    assert got.shape == expected.shape
    np.testing.assert_allclose(sl.asnumpy(got), expected, rtol=1e-12)


def test_core_axes_with_out_and_in_jit():
    expected = np.matmul(C, C, axes=[(0, 1), (1, 0), (0, 1)])
    out = np.zeros_like(expected)
    sl.matmul(sl.asarray(C), sl.asarray(C), axes=[(0, 1), (1, 0), (0, 1)], out=out)
    np.testing.assert_allclose(out, expected, rtol=1e-12)
    f = sl.jit(lambda x: sl.vecdot(x, x, axis=0, keepdims=True) + 1)
    np.testing.assert_allclose(sl.asnumpy(f(sl.asarray(C))), np.vecdot(C, C, axis=0, keepdims=True) + 1, rtol=1e-12)
    # NumPy's own function on stitchlab arrays comes here too (__array_ufunc__)
    got = np.matmul(sl.asarray(C), C, axes=[(0, 1), (1, 0), (0, 1)])
    np.testing.assert_allclose(sl.asnumpy(got), expected, rtol=1e-12)


@pytest.mark.parametrize(
    "name, args, kwargs",
    [
        ("matmul", (A, B), dict(axes=[(1, 2), (0, 1)])),  # the output has core axes: its entry is needed
        ("matmul", (A[0], B[:, 0]), dict(axes=[(0, 1), (0,), (0,)])),  # 2 core axes, 1 given
        ("matmul", (A, B), dict(axis=0)),  # three distinct core dimensions
        ("matmul", (A, B), dict(keepdims=True)),  # the output has core dimensions
        ("vecdot", (A, A), dict(axes=[(1,), (1,), ()], keepdims=True)),  # keepdims gives the output one
        ("vecdot", (A, A), dict(axes=[1, 1], axis=1)),
        ("matmul", (A, B), dict(axes=[(1, 1), (0, 1), (0, 1)])),
        ("matmul", (A, B), dict(axes=[(1, 5), (0, 1), (0, 1)])),
        ("matmul", (A, B), dict(axes=[(1, 2, 0), (0, 1), (0, 1)])),
        ("matmul", (A, B), dict(axes=[(1, 2), (0, 1), (0, 1), (0, 1)])),
        ("matmul", (A, B), dict(axes=(1, 2))),  # a tuple, not a list
        ("vecdot", (A, A), dict(axes=[1.0, 1])),
    ],
)
def test_core_axes_numpy_refuses_are_refused_with_its_exception(name, args, kwargs):
    with pytest.raises(Exception) as expected:
        getattr(np, name)(*args, **kwargs)
    with pytest.raises(type(expected.value)):
        getattr(sl, name)(*(sl.asarray(a) for a in args), **kwargs)


def test_ufuncs_without_a_signature_still_refuse_axes():
    with pytest.raises(TypeError, match="axes"):
        sl.add(sl.asarray(A), 1, axes=[(), (), ()])
