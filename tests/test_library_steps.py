"""Gathers (``sl.take``, integer-array and NumPy-mask indexing), scans (``cumsum``, ``cumprod``),
sorts (``sort``, ``argsort``) and the products built on ``matmul`` (``dot``, ``tensordot``,
``inner``, ``vdot``): plan steps of their own run by the array library
(``stitchlab/frontend/library.py``), with NumPy's values, shapes, dtypes and errors, the work
around them fused, and ``sl.jit`` replaying them. GPU: ``tests/gpu/test_library_steps_gpu.py``."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from lazycheck import families, same

import stitchlab as sl

pytestmark = pytest.mark.usefixtures("numpy_backend")

RNG = np.random.default_rng(41)
A = RNG.standard_normal((6, 5)).astype(np.float32)
I32 = RNG.integers(-50, 50, (4, 7)).astype(np.int32)


@pytest.mark.parametrize("key", [
    [1, 3, -1], np.array([[0, 5], [2, 2]]), (slice(None), [0, 4]), (Ellipsis, [4, 0]), ([2], Ellipsis),
    np.array(3), [True, False, True, False, False, True], A[:, 0] > 0, A > 0,
], ids=["list", "2-d", "axis-1", "ellipsis-last", "ellipsis-first", "0-d", "bool-list", "row-mask", "full-mask"])
def test_integer_array_and_mask_indexing_is_numpys(key: Any) -> None:
    same(sl.asarray(A)[key], A[key])


@pytest.mark.parametrize("axis, mode, idx", [
    (None, "raise", [0, 29, -30]), (0, "raise", [[5, 0], [1, -6]]), (1, "raise", []),
    (1, "wrap", [7, -9, 4]), (0, "clip", [70, -9, 2]), (-1, "raise", np.array([True, False])),
])
def test_take_is_numpys(axis: Any, mode: str, idx: Any) -> None:
    same(sl.take(sl.asarray(A), idx, axis=axis, mode=mode), np.take(A, idx, axis=axis, mode=mode))
    same(np.take(sl.asarray(A), idx, axis=axis, mode=mode), np.take(A, idx, axis=axis, mode=mode))


def test_take_checks_host_positions_when_called_and_device_ones_when_run() -> None:
    x = sl.asarray(A)
    with pytest.raises(IndexError, match="index 6 is out of bounds for axis 0 with size 6"):
        x[[0, 6]]
    with pytest.raises(IndexError, match="index -7 is out of bounds for axis 0 with size 6"):
        sl.take(x, [-7], axis=0)
    with pytest.raises(IndexError, match="cannot do a non-empty take from an empty axes"):
        sl.take(x[:, :0], [0], axis=1)
    with pytest.raises(IndexError, match="integer"):
        sl.take(x, [1.0])
    lazy_idx = sl.asarray(np.array([2, -1, 0])) * 1
    same(x[lazy_idx], A[[2, -1, 0]])
    bad = sl.asarray(np.array([2, 6])) * 1  # computed positions: checked when the step runs
    y = x[bad]
    with pytest.raises(IndexError, match="index 6 is out of bounds for axis 0 with size 6"):
        y.get()
    with pytest.raises(ValueError, match="clipmode"):
        sl.take(x, [0], mode="nearest")


@pytest.mark.parametrize("idx, axis", [
    (np.array([[0], [4], [1], [-1], [2], [3]]), 1), (np.array([[0, 1, 2, 0, 5]]), 0), (np.zeros((1, 1), int), 0),
    (np.array([1, 29, -30]), None), (np.argsort(A, axis=1)[:, ::-1], -1),
])
def test_take_along_axis_is_numpys(idx: np.ndarray, axis: Any) -> None:
    want = np.take_along_axis(A, idx, axis)
    same(sl.take_along_axis(sl.asarray(A), idx, axis), want)
    same(np.take_along_axis(sl.asarray(A), idx, axis), want)
    same(sl.take_along_axis(sl.asarray(A), sl.asarray(idx) * 1, axis), want)  # positions computed lazily
    same(sl.take_along_axis(sl.asarray(A[:1]), np.zeros((3, 5), int), 0), np.take_along_axis(A[:1], np.zeros((3, 5), int), 0))


def test_take_along_axis_errors_are_numpys() -> None:
    x = sl.asarray(A)
    with pytest.raises(ValueError, match="same number of dimensions"):
        sl.take_along_axis(x, np.array([0, 1]), 1)
    with pytest.raises(IndexError, match="must be an integer array"):
        sl.take_along_axis(x, np.array([[0.0]]), 1)
    with pytest.raises(IndexError, match="index 9 is out of bounds for axis 1 with size 5"):
        sl.take_along_axis(x, np.array([[9]]), 1)
    with pytest.raises(ValueError, match="when axis=None"):
        sl.take_along_axis(x, np.array([[1]]), None)
    with pytest.raises(ValueError, match="do not broadcast along axis 0"):
        sl.take_along_axis(x, np.zeros((4, 1), int), 1)
    y = sl.take_along_axis(x, sl.asarray(np.array([[9]])) * 1, 1)  # checked when it runs
    with pytest.raises(IndexError, match="index 9 is out of bounds for axis 1 with size 5"):
        y.get()


B3 = RNG.standard_normal((4, 5, 6)).astype(np.float32)


@pytest.mark.parametrize("key", [
    ([0, 3], [1, 4]), (np.arange(4), [0, 1, 2, 3]), (0, [1, 2]), (slice(None), [0, 1], [2, 3]),
    ([0, 1], slice(None), [2, 3]), (slice(1, 3), [0, 4]), ([1, 2], slice(0, 4, 2)), (Ellipsis, [0, 1], [5, -1]),
    ([[0], [1]], [0, 1, 2]), (-1, slice(None), [0, 5]), (np.array([[0, 1], [2, 3]]), 1, 2), ([0, 1], 0, slice(None)),
    (1, [0, 2], Ellipsis), ([], []), (np.int64(2), [1]), (slice(None, None, -1), [3, 0], [[1], [2]]),
    (0, np.array(1)), (np.array(-1), slice(None), 2),
], ids=["pairs", "arange-pairs", "int-and-array", "trailing-pair", "separated", "partial-slice", "slice-after",
        "ellipsis", "broadcast", "negative-int-separated", "int-int-array", "int-after", "int-ellipsis", "empty",
        "numpy-int", "reversed-slice", "0-d-array-and-int", "0-d-separated"])
def test_several_index_arrays_are_numpys(key: Any) -> None:
    same(sl.asarray(B3)[key], B3[key])


def test_several_device_index_arrays_are_numpys_and_checked_when_the_step_runs() -> None:
    x = sl.asarray(B3)
    i, j = np.array([0, 3, -1]), np.array([-5, 4, -1])
    same(x[sl.asarray(i), sl.asarray(j)], B3[i, j])
    same(x[:, sl.asarray(i[:2]), j[:2]], B3[:, i[:2], j[:2]])  # a device array beside a host one
    same(x[sl.asarray(i), :, sl.asarray(j)], B3[i, :, j])
    y = x[sl.asarray(np.array([0, 4])), sl.asarray(j[:2])]
    with pytest.raises(IndexError, match=r"^index 4 is out of bounds for axis 0 with size 4$"):
        y.get()


_C = np.arange(24.0).reshape(2, 3, 4)


@pytest.mark.parametrize("key", [
    (None, [5], [7]), ([5], [7]), ([1], [7]), (True, [5]), (True, [5], [9]), ([5], slice(None), [9]),
    (slice(None), [5], [9]), (0, [5], [9]), (None, 0, [5], [9]), (Ellipsis, [5], [9]), ([-3], [-4]),
    ([[5]], [9, 1]), ([1, 5], [9, 1]), (None, [5], None, [7]), ([0], None, [7], [9]), ([0, 1], [1, -4], [[9], [0]]),
    ([[0, 1], [1, 0]], [[2, 1], [1, 7]], [[0, 4], [9, 1]]),
], ids=repr)
@pytest.mark.parametrize("how", ["read", "assign", "add.at", "negative.at"])
def test_several_device_index_arrays_out_of_bounds_name_numpys_axis_and_index(key: Any, how: str) -> None:
    """Several index arrays from the device with positions out of bounds: the step raises NumPy's
    IndexError, naming the first array out of bounds anywhere (NumPy checks them one after
    another), its first such index and the axis of x it indexes (not counting None or a boolean
    scalar's new axis); it named only the merged axes' extents."""
    def run(x: Any, k: Any, xp: Any) -> Any:
        if how == "read":
            return x[k]
        if how == "assign":
            x[k] = 1.0
        else:
            getattr(xp, how.split(".")[0]).at(*((x, k, 1.0) if how == "add.at" else (x, k)))
        return x

    with pytest.raises(IndexError) as want:
        run(_C.copy(), tuple(np.array(k) if isinstance(k, list) else k for k in key), np)
    dev = tuple(sl.asarray(np.array(k)) if isinstance(k, list) else k for k in key)
    with pytest.raises(IndexError) as got:
        run(sl.asarray(_C.copy()), dev, sl).get()
    assert str(got.value) == str(want.value)


def test_a_device_index_far_out_of_bounds_is_named_by_a_bound() -> None:
    """Positions past what the merged step's codes tell (about 2**59 here) are named by that bound."""
    x = sl.asarray(_C)
    with pytest.raises(IndexError, match=r"^an index at or past \d{18} is out of bounds for axis 2 with size 4$"):
        x[sl.asarray(np.array([0])), sl.asarray(np.array([1])), sl.asarray(np.array([2**62]))].get()
    with pytest.raises(IndexError, match=r"^index -1000000000000 is out of bounds for axis 2 with size 4$"):
        x[sl.asarray(np.array([0])), sl.asarray(np.array([1])), sl.asarray(np.array([-10**12]))].get()


def test_picking_one_logit_per_row_is_one_gather() -> None:
    logits = RNG.standard_normal((8, 10)).astype(np.float32)
    t = RNG.integers(0, 10, 8)
    y = sl.asarray(logits)[np.arange(8), t]
    assert families(sl.exp(y) + 1) == ["interpreted", "pointwise"]
    same(y, logits[np.arange(8), t])


@pytest.mark.parametrize("key, match", [
    (([0, 4], [1, 1]), "index 4 is out of bounds for axis 0 with size 4"),
    ((slice(None), [0, 1], [1, 6]), "index 6 is out of bounds for axis 2 with size 6"),
    (([0, 1], [1, 2, 3]), r"shape mismatch: indexing arrays could not be broadcast together with shapes \(2,\) \(3,\)"),
    (([0.5, 1], [1, 2]), "arrays used as indices must be of integer"),
    ((None, [4]), "index 4 is out of bounds for axis 0 with size 4"),  # (x's axis, not one counting the new one)
    ((True, slice(None), None, 1, 7), "index 7 is out of bounds for axis 2 with size 6"),
    (([0, 1], A[:4, 0] > 0), "a boolean mask must be the only index"),
    (([0], [0], [0], [0]), "too many indices for array: array is 3-dimensional, but 4 were indexed"),
    (([0], True, None, [0], [0], [0]), "too many indices for array: array is 3-dimensional, but 4 were indexed"),
    (([0, 1], False), r"shape mismatch: indexing arrays could not be broadcast together with shapes \(2,\) \(0,\)"),
    ((0, [0, 1], [0, 1, 2]), r"broadcast together with shapes \(2,\) \(3,\)$"),  # (NumPy lists the arrays only)
    ((7, [0, 1], [0, 1, 2]), "index 7 is out of bounds for axis 0 with size 4"),  # (integers before the broadcast)
], ids=["first-axis", "last-axis", "broadcast", "float", "newaxis", "boolean-newaxis", "mask-beside", "too-many",
        "too-many-beside-new-axes", "false-beside", "broadcast-beside-an-integer", "integer-before-broadcast"])
def test_bad_advanced_indices_raise_numpys_errors(key: Any, match: str) -> None:
    with pytest.raises(IndexError, match=match):
        sl.asarray(B3)[key]


def test_a_numpy_mask_of_the_wrong_shape_raises_numpys_error() -> None:
    with pytest.raises(IndexError, match="boolean index did not match indexed array along axis 0"):
        sl.asarray(A)[np.ones(5, bool)]


@pytest.mark.parametrize("fn", ["cumsum", "cumprod"])
@pytest.mark.parametrize("a, axis, dtype", [
    (A, None, None), (A, 0, None), (A, -1, None), (I32, 1, None), (I32.astype(np.uint8), 0, None),
    (I32 > 0, 1, None), (I32, None, np.float64), (A.astype(np.float64), 1, None),
])
def test_scans_are_numpys(fn: str, a: np.ndarray, axis: Any, dtype: Any) -> None:
    if fn == "cumprod" and a.dtype.kind in "iu":
        a = np.clip(a, -2, 2).astype(a.dtype)  # no overflow in the products
    want = getattr(np, fn)(a, axis=axis, dtype=dtype)
    same(getattr(sl, fn)(sl.asarray(a), axis=axis, dtype=dtype), want)
    same(getattr(sl.asarray(a), fn)(axis, dtype), want)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_16_bit_float_scans_run_in_float32_and_round_once(dtype: str) -> None:
    dt = sl.bfloat16 if dtype == "bfloat16" else np.float16
    a = (RNG.standard_normal(3000) * 4).astype(dt)
    for fn in ("cumsum", "cumprod"):
        b = a if fn == "cumsum" else (1 + a.astype(np.float32) / 400).astype(dt)
        got = getattr(sl, fn)(sl.asarray(b)).get()
        assert got.dtype == b.dtype
        np.testing.assert_array_equal(got, getattr(np, fn)(b.astype(np.float32)).astype(dt))
    if dtype == "float16":  # NumPy rounds every partial sum to float16 and drifts from the exact sums
        exact = np.cumsum(a.astype(np.float64))
        assert np.abs(sl.cumsum(sl.asarray(a)).get() - exact).max() < np.abs(np.cumsum(a) - exact).max()


@pytest.mark.parametrize("a, axis", [
    (A, -1), (A, 0), (A, None), (np.array([3.0, np.nan, -1.0, -0.0, 0.0, np.inf, -np.inf]), 0),
    (I32, 1), (I32 > 0, 0), (np.array([[2, 1, 2, 1, 2]], np.int16), 1),
    (np.round(RNG.standard_normal(1000)).astype(np.float32), 0),  # ties: quicksort would reorder them
])
def test_sort_and_stable_argsort_are_numpys(a: np.ndarray, axis: Any) -> None:
    same(sl.sort(sl.asarray(a), axis), np.sort(a, axis))
    same(sl.argsort(sl.asarray(a), axis), np.argsort(a, axis, kind="stable"))
    same(sl.asarray(a).argsort(axis), np.argsort(a, axis, kind="stable"))
    same(np.sort(sl.asarray(a), axis), np.sort(a, axis))


def test_sort_errors_are_numpys_and_in_place_sort_sorts() -> None:
    x = sl.asarray(A)
    with pytest.raises(ValueError, match="sort kind must be one of"):
        sl.sort(x, kind="bogo")
    with pytest.raises(np.exceptions.AxisError):
        sl.sort(x, axis=2)
    with pytest.raises(np.exceptions.AxisError):
        sl.sort(sl.asarray(np.float32(1.0)))  # (argsort gives [0], as NumPy's: tests/test_shape_arguments.py)
    before = x
    x.sort()  # in place: x then stands for the sorted value
    assert x is before
    np.testing.assert_array_equal(x.get(), np.sort(A, axis=-1))


@pytest.mark.parametrize("sa, sb", [
    ((5,), (5,)), ((3, 5), (5,)), ((5,), (5, 4)), ((3, 5), (5, 4)), ((2, 3, 5), (5, 4)),
    ((2, 3, 5), (4, 5, 6)), ((3, 5), ()), ((), (2, 2)),
])
def test_dot_is_numpys(sa: tuple[int, ...], sb: tuple[int, ...]) -> None:
    a, b = RNG.standard_normal(sa), RNG.standard_normal(sb)
    got = sl.dot(sl.asarray(a), b)
    want = np.dot(a, b)
    assert got.shape == np.shape(want)
    np.testing.assert_allclose(got.get(), want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.dot(sl.asarray(a), b).get(), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("axes, shape_b", [
    (0, (2, 3)), (1, (5, 2)), (2, (3, 5, 2)), (([1], [0]), (3, 2)), (([0, 2], [1, 0]), (5, 4, 2)), ((-1, 1), (2, 5, 3)),
])
def test_tensordot_is_numpys(axes: Any, shape_b: tuple[int, ...]) -> None:
    a, b = RNG.standard_normal((4, 3, 5)), RNG.standard_normal(shape_b)
    np.testing.assert_allclose(sl.tensordot(sl.asarray(a), b, axes).get(), np.tensordot(a, b, axes), rtol=1e-12, atol=1e-12)


def test_inner_and_vdot_are_numpys() -> None:
    a, b = RNG.standard_normal((4, 3, 5)), RNG.standard_normal((2, 5))
    np.testing.assert_allclose(sl.inner(sl.asarray(a), b).get(), np.inner(a, b), rtol=1e-12)
    np.testing.assert_allclose(sl.inner(sl.asarray(a), 2.0).get(), np.inner(a, 2.0), rtol=1e-12)
    c = RNG.standard_normal((5, 12))
    np.testing.assert_allclose(sl.vdot(sl.asarray(a), c).get(), np.vdot(a, c), rtol=1e-12)


def test_product_shape_errors_name_the_shapes() -> None:
    with pytest.raises(ValueError, match=r"^shapes \(2,3\) and \(4,5\) not aligned: 3 \(dim 1\) != 4 \(dim 0\)$"):  # (NumPy's text)
        sl.dot(sl.asarray(np.ones((2, 3))), np.ones((4, 5)))
    with pytest.raises(ValueError, match="shape-mismatch for sum"):
        sl.tensordot(sl.asarray(np.ones((2, 3))), np.ones((4, 5)), 1)
    with pytest.raises(ValueError, match="not aligned"):
        sl.inner(sl.asarray(np.ones((2, 3))), np.ones((2, 4)))
    with pytest.raises(ValueError, match="vdot: the operands have 3 and 4 elements"):
        sl.vdot(sl.asarray(np.ones(3)), np.ones(4))


def test_steps_are_their_own_with_the_work_around_them_fused() -> None:
    x = sl.asarray(A)
    y = sl.cumsum(x * 2, axis=0) + 1  # (down the columns: a step; along the rows a row kernel scans)
    assert families(y) == ["pointwise", "interpreted", "pointwise"]
    np.testing.assert_allclose(y.get(), np.cumsum(A * 2, axis=0) + 1, rtol=1e-6)
    assert families(sl.cumsum(x * 2, axis=1) + 1) == ["row_warp"]
    z = sl.exp(sl.take(x + 1, [4, 0], axis=1)).sum(-1)
    assert len(families(z)) == 3 and families(z)[1] == "interpreted"
    np.testing.assert_allclose(z.get(), np.exp(np.take(A + 1, [4, 0], axis=1)).sum(-1), rtol=1e-6)


def test_jit_traces_and_replays_library_steps() -> None:
    @sl.jit
    def f(x: Any, i: Any) -> Any:
        return x[[1, 2]] * 2, sl.cumsum(x, 0), sl.sort(x * 2)[:, :2], sl.take(x, sl.argsort(x[:, 0]), 0), x[i] + 1

    idx = np.array([0, 5])
    for _ in range(2):
        got = [np.asarray(v) for v in f(A, idx)]
    wants = [A[[1, 2]] * 2, np.cumsum(A, 0), np.sort(A * 2)[:, :2], A[np.argsort(A[:, 0], kind="stable")], A[idx] + 1]
    for g, w in zip(got, wants, strict=True):
        np.testing.assert_array_equal(g, w)
    with pytest.raises(IndexError, match="index 6 is out of bounds"):
        f(A, np.array([0, 6]))


@pytest.mark.parametrize("spec, shapes", [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (3, 4)]), ("ii", [(3, 3)]), ("ii->i", [(3, 3)]),
    ("ij->", [(2, 3)]), ("ji", [(2, 3)]), ("...ij,...jk", [(5, 1, 2, 3), (4, 3, 2)]), ("bij,bjk->bik", [(4, 2, 3), (4, 3, 5)]),
    ("i,i", [(3,), (3,)]), ("i,j->ij", [(3,), (4,)]), ("ba,ca", [(2, 3), (4, 3)]), ("...i,...i->...", [(2, 3, 4), (4,)]),
    ("ij...,jk...->ik...", [(2, 3, 5), (3, 4, 5)]), ("iJ,Jk", [(2, 3), (3, 4)]), ("i...->...", [(3, 2, 2)]),
    (" ij , jk -> ki ", [(2, 3), (3, 4)]),
])
def test_einsum_is_numpys(spec: str, shapes: list[tuple[int, ...]]) -> None:
    ops = [RNG.standard_normal(s) for s in shapes]
    want = np.einsum(spec, *ops)
    got = sl.einsum(spec, sl.asarray(ops[0]), *ops[1:])
    assert got.shape == np.shape(want)
    np.testing.assert_allclose(got.get(), want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.einsum(spec, sl.asarray(ops[0]), *ops[1:]).get(), want, rtol=1e-12, atol=1e-12)


def test_einsum_dtypes_are_numpys() -> None:
    for a, b in [(I32.astype(np.int16), I32.T.astype(np.int8)), (A.astype(np.float16), A.T), (A > 0, A.T > 0)]:
        same(sl.einsum("ij,jk->ik", sl.asarray(a), b), np.einsum("ij,jk->ik", a, b))
    bf = pytest.importorskip("ml_dtypes").bfloat16
    with pytest.raises(TypeError, match="einsum of bfloat16.*float32"):
        sl.einsum("ij->i", sl.asarray(A.astype(bf)))


@pytest.mark.parametrize("spec, shapes, match", [
    ("ij,jk", [(2, 3), (4, 5)], "'j' has sizes 3 and 4"),
    ("ij", [(2, 3, 4)], "does not match operand 0, which has 3 dimension"),
    ("ij,jk->iq", [(2, 3), (3, 4)], "output subscript 'q' which never appeared"),
    ("ij->ii", [(2, 2)], "output subscript 'i' multiple times"),
    ("ij,jk", [(2, 3)], "fewer operands"),
    ("i1", [(2, 2)], "invalid subscript '1'"),
])
def test_einsum_errors_name_the_subscript(spec: str, shapes: list[tuple[int, ...]], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        sl.einsum(spec, *[sl.asarray(np.ones(s)) for s in shapes])


_E = np.arange(6.0).reshape(2, 3)
_E8 = np.full((2, 3), 100, np.int8)


@pytest.mark.parametrize("call", [
    lambda m, a, z: m.einsum("ij->i", a(_E), out=z(2)),
    lambda m, a, z: m.einsum("ij->i", a(_E * 1.5), out=z(2, np.int64), casting="unsafe"),
    lambda m, a, z: m.einsum("ij->", a(_E8), out=z((), np.int64)),  # the loop in out's dtype: no int8 wrap
    lambda m, a, z: m.einsum("ij->i", a(_E8), dtype=np.int8),
    lambda m, a, z: m.einsum("ij->i", a(_E8), dtype=np.float64),
    lambda m, a, z: m.einsum("ij->i", a(_E), dtype=np.float32, casting="same_kind"),
    lambda m, a, z: m.einsum("ij->i", a(_E * 1.7), dtype=np.int64, casting="unsafe"),
    lambda m, a, z: m.einsum("ij,kj", a(_E), a(_E), casting="no"),
    lambda m, a, z: m.einsum("ij->i", a(_E), order="C"),
    lambda m, a, z: m.einsum(a(_E), [0, 1], a(_E), [2, 1], [0, 2]),
    lambda m, a, z: m.einsum(a(_E), [0, 1], a(_E), [2, 1]),  # implicit output: A..Z then a..z
    lambda m, a, z: m.einsum(a(_E), [30, 1], a(_E), [2, 1]),
    lambda m, a, z: m.einsum(a(np.ones((4, 2, 3))), [Ellipsis, 1], a(_E), [0, 1], [Ellipsis, 0]),
    lambda m, a, z: m.einsum(a(_E), np.array([0, 1]), [1]),
    lambda m, a, z: m.einsum(a(_E), [0, 1], [1], out=z(3)),
], ids=["out", "out-unsafe", "out-wider", "dtype-int8", "dtype-float64", "dtype-same_kind", "dtype-unsafe",
        "casting-no", "order", "sublists", "sublists-implicit", "sublists-lowercase", "sublists-ellipsis",
        "sublists-ndarray", "sublists-out"])
def test_einsum_takes_numpys_keywords_and_operand_lists(call: Any) -> None:
    want = call(np, lambda x: x, np.zeros)
    got = call(sl, sl.asarray, sl.zeros)
    same(got, np.asarray(want))
    same(call(np, sl.asarray, sl.zeros), np.asarray(want))  # NumPy's own function on stitchlab arrays


@pytest.mark.parametrize(("call", "error", "match"), [
    (lambda m, a, z: m.einsum("ij->i", a(_E), out=z(2, np.float32)), TypeError, "according to the rule 'safe'"),
    (lambda m, a, z: m.einsum("ij->i", a(_E), out=z(2, np.int64)), TypeError, "according to the rule 'safe'"),
    (lambda m, a, z: m.einsum("ij->i", a(_E), dtype=np.float32), TypeError, "according to the rule 'safe'"),
    (lambda m, a, z: m.einsum("ij,kj", a(_E), a(_E8), casting="no"), TypeError, "according to the rule 'no'"),
    (lambda m, a, z: m.einsum("ij->i", a(_E8), dtype=np.float64, out=z(2, np.float32)), TypeError, "rule 'safe'"),
    (lambda m, a, z: m.einsum("ij->i", a(_E), casting="bad"), ValueError, "casting must be one of"),
    (lambda m, a, z: m.einsum("ij->i", a(_E), out=z(3)), ValueError, ""),
    (lambda m, a, z: m.einsum("ij->i", a(_E), out=z((2, 2))), ValueError, ""),
    (lambda m, a, z: m.einsum(a(_E), [52, 0]), ValueError, r"subscript is not within the valid range \[0, 52\)"),
    (lambda m, a, z: m.einsum(a(_E), [-1, 0]), ValueError, r"subscript is not within the valid range \[0, 52\)"),
    (lambda m, a, z: m.einsum(a(_E), ["i", "j"]), TypeError, "each subscript must be either an integer or an ellipsis"),
], ids=["out-float32", "out-int", "dtype-float32", "casting-no", "dtype-and-out", "casting-bad", "out-shape",
        "out-ndim", "sublist-52", "sublist-negative", "sublist-str"])
def test_einsum_refuses_what_numpys_refuses(call: Any, error: type, match: str) -> None:
    with pytest.raises(error, match=match or None):
        call(np, lambda x: x, np.zeros)
    with pytest.raises(error, match=match or None):
        call(sl, sl.asarray, sl.zeros)


def test_einsum_of_bfloat16_runs_in_the_dtype_given() -> None:
    bf = pytest.importorskip("ml_dtypes").bfloat16
    b = A.astype(bf)
    same(sl.einsum("ij->i", sl.asarray(b), dtype=np.float32), np.einsum("ij->i", b, dtype=np.float32))


def test_einsum_is_a_step_of_its_own_and_jit_replays_it() -> None:
    y = sl.einsum("ij,kj->ik", sl.asarray(A) * 2, A[:3]) + 1
    assert families(y) == ["pointwise", "interpreted", "pointwise"]
    f = sl.jit(lambda x: sl.einsum("ij,kj->ik", x * 2, x) + 1)
    for _ in range(2):
        got = np.asarray(f(A))
    np.testing.assert_allclose(got, np.einsum("ij,kj->ik", A * 2, A) + 1, rtol=1e-5)


Q_DATA = {dt: (np.random.default_rng(8).standard_normal((5, 7, 6)) * 20).astype(dt)
          for dt in ("float32", "float64", "float16", "int32", "int8")}
Q_DATA["float32"][1, 2, 3] = np.nan


@pytest.mark.parametrize("dtype", list(Q_DATA))
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_median_quantile_and_percentile_are_numpys(dtype: str, axis: Any, keepdims: bool) -> None:
    a = Q_DATA[dtype]
    same(sl.median(sl.asarray(a), axis=axis, keepdims=keepdims), np.asarray(np.median(a, axis=axis, keepdims=keepdims)))
    qs: list[Any] = [0.3, 1, 0, [0.1, 0.5, 1.0], np.array([[0.2, 0.9]]), 0.99, [0, 1]]
    if axis is not None or dtype != "float32":  # NumPy's dtype for a NaN slice reduced to a scalar: the docstring
        qs += [np.float64(0.75), np.int64(1)]
    for q in qs:
        for method in ("linear", "lower", "higher", "nearest", "midpoint"):
            want = np.asarray(np.quantile(a, q, axis=axis, method=method, keepdims=keepdims))
            same(sl.quantile(sl.asarray(a), q, axis=axis, method=method, keepdims=keepdims), want)
            p = type(q)(q * 100) if type(q) in (int, float) else np.asarray(q) * 100
            want = np.asarray(np.percentile(a, p, axis=axis, method=method, keepdims=keepdims))
            same(np.percentile(sl.asarray(a), p, axis=axis, method=method, keepdims=keepdims), want)


def test_quantile_errors_are_numpys() -> None:
    x = sl.asarray(A)
    with pytest.raises(ValueError, match=r"Quantiles must be in the range \[0, 1\]"):
        sl.quantile(x, 1.5)
    with pytest.raises(ValueError, match=r"Percentiles must be in the range \[0, 100\]"):
        sl.percentile(x, [10, 101])
    with pytest.raises(ValueError, match="'hazen ' is not a valid method"):
        sl.quantile(x, 0.5, method="hazen ")
    with pytest.raises(TypeError, match="q must be known on the host"):
        sl.quantile(x, sl.asarray(np.array(0.5)))
    # (an empty slice's median is NaN, as NumPy's: tests/test_reduction_arguments.py)


def test_median_is_a_sort_step_with_the_rest_fused() -> None:
    y = sl.median(sl.asarray(A) * 2, axis=1) + 1
    kinds = families(y)
    assert len(kinds) == 3 and kinds[1] == "interpreted"  # x * 2; the sort; the mean of the middle, + 1


NAN_DATA = {dt: (np.random.default_rng(9).standard_normal((5, 7, 6)) * 20).astype(dt) for dt in ("float32", "float64", "float16")}
for _a in NAN_DATA.values():
    _a[np.random.default_rng(10).random(_a.shape) < 0.3] = np.nan
    _a[2, 3, :] = np.nan  # an all-NaN row
    _a[:, 1, 2] = np.nan


@pytest.mark.parametrize("dtype", list(NAN_DATA))
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_nan_skipping_median_and_quantiles_are_numpys(dtype: str, axis: Any, keepdims: bool) -> None:
    a = NAN_DATA[dtype]
    with warnings.catch_warnings():  # NumPy warns of the all-NaN slices
        warnings.simplefilter("ignore", RuntimeWarning)
        want = np.asarray(np.nanmedian(a, axis=axis, keepdims=keepdims))
    same(sl.nanmedian(sl.asarray(a), axis=axis, keepdims=keepdims), want)
    qs: list[Any] = [0.3, 1, 0, [0.1, 0.5, 1.0], np.float64(0.75), 0.99, [0, 1]]
    if not isinstance(axis, tuple):  # a 2-d q over several axes: NumPy's nanquantile orders the axes otherwise
        qs.append(np.array([[0.2, 0.9]]))
    for q in qs:
        for method in ("linear", "lower", "higher", "nearest", "midpoint"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                want = np.asarray(np.nanquantile(a, q, axis=axis, method=method, keepdims=keepdims))
                p = type(q)(q * 100) if type(q) in (int, float) else np.asarray(q) * 100
                want_p = np.asarray(np.nanpercentile(a, p, axis=axis, method=method, keepdims=keepdims))
            same(sl.nanquantile(sl.asarray(a), q, axis=axis, method=method, keepdims=keepdims), want)
            same(np.nanpercentile(sl.asarray(a), p, axis=axis, method=method, keepdims=keepdims), want_p)


def test_nan_skipping_functions_of_integers_are_the_plain_ones() -> None:
    same(sl.nanmedian(sl.asarray(I32), axis=1), np.nanmedian(I32, axis=1))
    same(sl.nanquantile(sl.asarray(I32), 0.3, axis=0), np.nanquantile(I32, 0.3, axis=0))


def test_nanquantile_gathers_need_no_check_and_can_be_captured() -> None:
    y = sl.nanquantile(sl.asarray(NAN_DATA["float32"]), 0.5, axis=-1)
    steps = [n for k in sl.explain(y).kernels for n in (k.nodes if k.schedule.family == "interpreted" else ())]
    gathers = [n for n in steps if n.op == "take_along_axis"]
    assert gathers and all(n.attr("checked") for n in gathers)


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_is_numpys(side: str) -> None:
    a = np.array([1.0, 2.0, 2.0, 5.0, np.nan], np.float32)
    v = np.array([[2.0, np.nan], [5.5, -1.0]])
    same(sl.searchsorted(sl.asarray(a), v, side=side), np.searchsorted(a, v, side=side))
    same(np.searchsorted(sl.asarray(a), v, side=side), np.searchsorted(a, v, side=side))
    same(sl.searchsorted(sl.asarray(np.array([3, 1, 2])), [2], side, sorter=[1, 2, 0]),
         np.searchsorted(np.array([3, 1, 2]), [2], side, sorter=[1, 2, 0]))
    same(sl.searchsorted(sl.asarray(I32[0]), 2.5), np.asarray(np.searchsorted(I32[0], 2.5)))


@pytest.mark.parametrize("bins", [[1, 2, 3], [3, 2, 1], [1, 1, 2], [2.5], np.array([0.0, 1.0, np.inf])])
@pytest.mark.parametrize("right", [False, True])
def test_digitize_is_numpys(bins: Any, right: bool) -> None:
    x = np.array([-1.0, 0.5, 1.0, 2.0, 3.0, 3.5, np.nan])
    same(sl.digitize(sl.asarray(x), bins, right), np.digitize(x, bins, right))
    same(np.digitize(sl.asarray(x), bins, right), np.digitize(x, bins, right))
    # bins held by a stitchlab array: not checked, their direction taken on the device
    same(sl.digitize(sl.asarray(x), sl.asarray(np.asarray(bins)), right), np.digitize(x, bins, right))
    same(sl.digitize(sl.asarray(x), sl.asarray(np.asarray(bins)) * 1, right), np.digitize(x, bins, right))


def test_digitize_with_lazy_bins() -> None:
    x = np.random.default_rng(4).uniform(-0.2, 1.2, (6, 7))
    for bins in (np.linspace(0, 1, 11), np.linspace(1, 0, 11), np.array([0.5, 0.5]), np.array([], np.float64)):
        for right in (False, True):
            same(sl.digitize(sl.asarray(x), sl.asarray(bins) + 0, right), np.digitize(x, bins, right))
    same(sl.digitize(sl.asarray(x), sl.linspace(1, 0, 5)), np.digitize(x, np.linspace(1, 0, 5)))


def test_search_errors_are_numpys() -> None:
    with pytest.raises(ValueError, match="search side must be 'left' or 'right'"):
        sl.searchsorted(sl.asarray(np.arange(3)), 1, side="middle")
    with pytest.raises(ValueError, match="a must be 1-d"):
        sl.searchsorted(sl.asarray(np.ones((2, 2))), 1)
    with pytest.raises(ValueError, match="bins must be monotonically increasing or decreasing"):
        sl.digitize(sl.asarray(np.arange(3)), [1, 3, 2])
    with pytest.raises(ValueError, match="object too deep for desired array"):
        sl.digitize(sl.asarray(np.arange(3)), sl.asarray(np.ones((2, 2))))
    with pytest.raises(ValueError, match="object of too small depth"):
        sl.digitize(sl.asarray(np.arange(3)), sl.asarray(np.float64(1)))


def test_take_checks_nothing_where_its_result_is_empty_and_indexing_always_checks() -> None:
    """NumPy's ``take`` (and ``compress``, ``extract`` on it) skip the bounds check when the axes
    before ``axis`` hold no element; its indexing does not (found by a CPU sweep against NumPy)."""
    e = np.zeros((0, 3), np.float32)
    x = sl.asarray(e)
    same(sl.take(x, [5], axis=1), np.take(e, [5], axis=1))
    same(sl.compress([0, 0, 0, 1], x, axis=1), np.compress([0, 0, 0, 1], e, axis=1))
    with pytest.raises(IndexError, match="index 5 is out of bounds for axis 1 with size 3"):
        x[:, [5]]
    with pytest.raises(IndexError, match="index 0 is out of bounds for axis 0 with size 0"):
        x[[0]]
    with pytest.raises(IndexError, match="index 0 is out of bounds for axis 1 with size 0"):
        sl.take_along_axis(sl.asarray(np.zeros((2, 0))), np.zeros((2, 1), int), 1)
    with pytest.raises(IndexError, match="cannot do a non-empty take from an empty axes"):
        sl.take(sl.asarray(np.zeros(0)), [1])


def test_index_arrays_that_broadcast_empty_check_only_their_integers_as_numpy() -> None:
    """NumPy checks no position of index arrays whose broadcast is empty, but always the integers
    (and 0-d arrays) beside them; reading and assigning alike."""
    a = np.zeros((2, 3), np.float32)
    empty = np.array([], np.int64)
    for key in [(np.array([5]), empty), ([], [7]), (np.array([5]), sl.asarray(empty))]:
        x = sl.asarray(a)
        host = tuple(np.asarray(k.get()) if isinstance(k, sl.ndarray) else k for k in key)
        same(x[key], a[host])
        x[key] = 1
        same(x, a)
    for key in [(5, empty), (np.array(5), empty), (5, sl.asarray(empty))]:
        with pytest.raises(IndexError, match="index 5 is out of bounds for axis 0 with size 2"):
            sl.asarray(a)[key]
        with pytest.raises(IndexError, match="index 5 is out of bounds for axis 0 with size 2"):
            sl.asarray(a)[key] = 1


class _RadixCupy:
    """NumPy standing in for CuPy where it matters here: 1-d float sorts in the order of a radix
    sort of the bits (thrust::less; CUB holds -0.0 equal to 0.0), which puts a NaN whose sign bit
    is set before every number."""

    def __getattr__(self, name: str) -> Any:
        return getattr(np, name)

    @staticmethod
    def abs(x: np.ndarray) -> np.ndarray:  # CuPy's on the H200: no bit operation, a NaN was negated
        return np.where(x > 0, x, -x)

    @staticmethod
    def _radix_key(x: np.ndarray) -> np.ndarray:
        u = np.where(x == 0, 0.0, x).astype(np.float64).view(np.uint64)
        return np.where(u >> np.uint64(63), ~u, u | np.uint64(1 << 63))

    def argsort(self, x: np.ndarray, axis: Any = -1) -> np.ndarray:
        assert x.ndim == 1
        return np.argsort(self._radix_key(x), kind="stable")

    def sort(self, x: np.ndarray, axis: Any = -1) -> np.ndarray:
        return x[self.argsort(x, axis)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_radix_sort_on_the_gpu_puts_negative_nans_last(dtype: str) -> None:
    """Found by the GPU fuzz (wide family, seed 500776): ``arccos`` on the GPU gave NaNs with the
    sign bit set, and CuPy's 1-d argsort put them first. The library step clears their sign bit."""
    from stitchlab.runtime.interpreter import _library_step

    a = np.array([2.0, -np.nan, -1.0, np.nan, 0.5, -0.0, 0.0, -np.nan, -3.0], dtype)
    assert np.signbit(a[1])
    x = sl.asarray(a)
    for op, want in (("argsort", np.argsort(a, kind="stable")), ("sort", np.sort(a))):
        node = getattr(sl, op)(x)._node
        got = _library_step(node, [a], _RadixCupy())
        np.testing.assert_array_equal(got, want)
        assert op == "argsort" or not np.signbit(got[np.isnan(got)]).any()


def test_unique_sorts_nans_of_either_sign_last() -> None:
    """``sl.unique`` hands CuPy the same key (``nans_sort_last``): no NaN keeps its sign bit; on
    NumPy's side nothing changes."""
    from stitchlab.runtime.interpreter import nans_sort_last

    a = np.array([-np.nan, 2.0, np.nan, -np.nan, -1.0])
    key = nans_sort_last(a, _RadixCupy())
    assert not np.signbit(key[np.isnan(key)]).any() and np.array_equal(key, a, equal_nan=True)
    # a NaN keeps its payload, a positive one its bits (NumPy's unique returns them; found on the H200)
    for dtype, bits in ((np.float32, [0x7FC00000, 0xFFC00001, 0x7F800003]), (np.float64, [0x7FF8000000000000, 0xFFF0000000000005])):
        nans = np.array(bits, dtype=np.dtype(dtype).str.replace("f", "u")).view(dtype)
        got = nans_sort_last(nans, _RadixCupy()).view(nans.dtype.str.replace("f", "u"))
        np.testing.assert_array_equal(got, np.array(bits, got.dtype) & np.array(np.iinfo(got.dtype).max >> 1, got.dtype))
    assert nans_sort_last(a, np) is a
    np.testing.assert_array_equal(_RadixCupy().sort(key), np.sort(a))
    np.testing.assert_array_equal(sl.unique(sl.asarray(a)).get(), np.unique(a))
