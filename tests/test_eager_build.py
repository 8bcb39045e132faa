"""The remembered parts of building an eager expression (operand signatures of elementwise ops,
converted constants, canonical graphs) give what building from scratch gives."""

from __future__ import annotations

import numpy as np
import pytest

import stitchlab as sl
from stitchlab.frontend import build


def test_a_remembered_signature_still_checks_python_integers_against_the_loop():
    a = np.array([-128, 0, 5, 127], np.int8)
    x = sl.asarray(a)
    np.testing.assert_array_equal(x + 1, a + np.int8(1))  # (int8, int) remembered
    with pytest.raises(OverflowError, match="1000 out of bounds for int8"):
        x + 1000
    np.testing.assert_array_equal(x < 1, a < 1)
    np.testing.assert_array_equal(x < 1000, a < 1000)  # compared exactly, as NumPy does
    np.testing.assert_array_equal(x > -1000, a > -1000)
    np.testing.assert_array_equal(x < 1, a < 1)


def test_a_remembered_signature_casts_and_broadcasts_its_operands_as_the_first_build():
    x = sl.asarray(np.ones((4, 3), np.int8))
    b = sl.asarray(np.ones(3, np.float32))
    y = sl.asarray(np.ones((4, 3), np.float32))
    for _ in range(3):  # built from scratch, then with the signature's remembered steps
        n = (x + b)._node
        assert [(i.op, i.dtype, i.shape) for i in n.inputs] == [("astype", np.float32, (4, 3)),
                                                                 ("broadcast", np.float32, (4, 3))]
        assert n.inputs[0].inputs[0] is x._node
        m = (y * 2.0)._node
        assert m.inputs[0] is y._node and m.inputs[1].op == "broadcast"
        k = (b - y)._node
        assert k.inputs[0].op == "broadcast" and k.inputs[1] is y._node


def test_a_remembered_signature_keeps_python_scalar_kinds_apart():
    a = np.array([1, 2, 3], np.int16)
    x = sl.asarray(a)
    assert (x * 2).dtype == np.int16
    assert (x * 2.0).dtype == np.float64
    assert (x * True).dtype == np.int16
    assert (x / 2).dtype == np.float64
    f = sl.asarray(np.array([1.0, 2.0], np.float16))
    assert (f * 2).dtype == (f * 2.0).dtype == np.float16
    assert (sl.asarray(np.arange(3.0)) + f[:1]).dtype == np.float64  # another shape: its own entry


def test_remembered_constants_keep_signed_zeros_and_types_apart():
    a = np.array([1.0, -2.0, 3.0], np.float32)
    x = sl.asarray(a)
    for z in (0.0, -0.0, 0.0):
        np.testing.assert_array_equal(np.signbit(np.asarray(x * z)), np.signbit(a * z))
    assert build.const(1, np.dtype(np.float32)).attrs == build.const(1.0, np.dtype(np.float32)).attrs
    assert repr(build.const(-0.0, np.dtype(np.float32)).attrs) != repr(build.const(0.0, np.dtype(np.float32)).attrs)
    big = 10**400  # a Python int beyond float64: converted as before, never a crash of the memo
    with pytest.raises(OverflowError):
        sl.asarray(np.arange(3, dtype=np.int64)) + big


def test_a_remembered_constant_belongs_to_its_dtype():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    for _ in range(2):  # converted, then remembered
        items = {np.dtype(dt).name: build.const(0.1, np.dtype(dt)).attr("value")
                 for dt in (np.float16, ml_dtypes.bfloat16, np.float32, np.float64)}
        assert items == {"float16": float(np.float16(0.1)), "bfloat16": float(ml_dtypes.bfloat16(0.1)),
                         "float32": float(np.float32(0.1)), "float64": 0.1}
    assert build.const(7, np.dtype(np.int8)).attr("value") == 7
    assert build.const(7, np.dtype(bool)).attr("value") is True


def test_a_remembered_axis_still_refuses_a_bool():
    x = sl.asarray(np.ones((2, 3)))
    np.testing.assert_array_equal(x.sum(axis=1), np.full(2, 3.0))
    with pytest.raises(TypeError, match="axis must be an integer, got True"):
        x.sum(axis=True)
    with pytest.raises(np.exceptions.AxisError):
        x.sum(axis=2)
    np.testing.assert_array_equal(x.sum(axis=-1), np.full(2, 3.0))


def test_python_scalars_shared_between_expressions_stay_right():
    a = np.arange(6.0).reshape(2, 3)
    x, y = sl.asarray(a), sl.asarray(a + 10)

    def shapes_agree(z):  # every input of an elementwise node has its shape (explicit broadcasts)
        return all(i.shape == z._node.shape for i in z._node.inputs)

    first = x * 2.25 + 0.5
    assert shapes_agree(first)
    np.testing.assert_array_equal(first, a * 2.25 + 0.5)  # evaluated: its own node materialized
    np.testing.assert_array_equal(y * 2.25 + 0.5, (a + 10) * 2.25 + 0.5)
    np.testing.assert_array_equal(sl.compute(x * 2.25, y * 2.25)[1], (a + 10) * 2.25)
    np.testing.assert_array_equal(np.signbit(np.asarray(x * -0.0)), np.signbit(a * -0.0))
    np.testing.assert_array_equal(np.signbit(np.asarray(x * 0.0)), np.signbit(a * 0.0))
    row = sl.asarray(a[0]) * 2.25  # another shape: the scalar's own broadcast
    assert shapes_agree(row)
    np.testing.assert_array_equal(row, a[0] * 2.25)
    np.testing.assert_array_equal(sl.asarray(a.astype(np.float32)) * 2.25, a.astype(np.float32) * 2.25)


def test_shared_counts_of_means_and_variances_belong_to_their_reduction():
    rng = np.random.default_rng(3)
    for rows in (4, 5, 4):
        a = rng.random((rows, 3))
        x = sl.asarray(a)
        np.testing.assert_allclose(x.mean(0), a.mean(0), rtol=1e-12)
        np.testing.assert_allclose(x.var(0), a.var(0), rtol=1e-12)
        np.testing.assert_allclose(x.var(0, ddof=1), a.var(0, ddof=1), rtol=1e-12)
        np.testing.assert_allclose(x.std(1, keepdims=True), a.std(1, keepdims=True), rtol=1e-12)
        np.testing.assert_allclose(sl.mean(x.astype(np.float32), axis=0), a.astype(np.float32).mean(0), rtol=1e-6)


def test_a_remembered_reduction_signature_checks_and_builds_as_the_first():
    a = np.arange(6, dtype=np.int8).reshape(2, 3)
    x = sl.asarray(a)
    for _ in range(2):  # the second build of each comes from the remembered signature
        s = x.sum(1)
        assert (s.dtype, s.shape) == (a.sum(1).dtype, (2,))
        assert x.sum(1, keepdims=True).shape == (2, 1)
        assert x.any(0).dtype == np.bool_
        assert x.argmax(1).dtype == np.int64
        assert x.sum(np.int64(0)).shape == (3,)  # an axis of NumPy's int type: the checked path
        assert x.sum((0, 1), keepdims=True).shape == (1, 1)
        with pytest.raises(TypeError, match="axis must be an integer"):
            x.sum((0, True))
        np.testing.assert_array_equal(sl.asarray(a.astype(np.float32)).max(axis=None), a.max())
        with pytest.raises(ValueError, match="zero-size array to reduction operation maximum"):
            sl.asarray(np.ones((0, 3))).max(0)
    np.testing.assert_array_equal(s, a.sum(1))


def test_a_remembered_broadcast_still_refuses_shapes_that_do_not_match():
    x = sl.asarray(np.arange(3.0))
    for _ in range(2):
        assert sl.broadcast_to(x, (2, 3)).shape == (2, 3)
        with pytest.raises(ValueError, match=r"cannot broadcast an array of shape \(3,\) to shape \(2, 4\)"):
            sl.broadcast_to(x, (2, 4))
    np.testing.assert_array_equal(sl.broadcast_to(x, (2, 3)), np.broadcast_to(np.arange(3.0), (2, 3)))
