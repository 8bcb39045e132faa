"""``apply_along_axis``, ``apply_over_axes``, ``asarray_chkfinite``, ``require``, ``isfortran``,
``iterable``, ``real_if_close``, ``mask_indices``, ``poly`` and ``einsum_path`` against NumPy on the
numpy backend: values, shapes, dtypes, NumPy's errors and ``np.<name>`` dispatch."""

from __future__ import annotations

import numpy as np
import pytest

import stitchlab as sl

pytestmark = pytest.mark.usefixtures("numpy_backend")

A = np.random.default_rng(41).standard_normal((3, 4, 5))


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
@pytest.mark.parametrize("case", ["scalar", "same", "matrix", "float32"])
def test_apply_along_axis_is_numpys(axis: int, case: str) -> None:
    func = {"scalar": lambda r: r[0] * 2 + r.sum(), "same": lambda r: r[::-1] - r.mean(),
            "matrix": lambda r: r[:, None] * r[None, :2], "float32": lambda r: np.float32(r.shape[0])}[case]
    want = np.apply_along_axis(func, axis, A)
    got = sl.apply_along_axis(func, axis, sl.asarray(A))
    assert isinstance(got, sl.LazyArray) and got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got.get(), want, rtol=1e-12, atol=1e-12)


def test_apply_along_axis_runs_on_read_only_values_and_stays_out_of_jit() -> None:
    """The slices are the array library's (read-only views of the numpy backend's buffer: a
    ``func1d`` that writes into its slice cannot change the stitchlab array), arguments pass
    through, NumPy's errors; inside ``sl.jit`` it raises."""
    x = sl.asarray(A.copy())
    writable: list[bool] = []
    got = sl.apply_along_axis(lambda r, k, scale=1.0: writable.append(r.flags.writeable) or r[k] * scale, 1, x, 2, scale=3.0)
    np.testing.assert_allclose(got.get(), A[:, 2, :] * 3.0)
    assert writable and not any(writable)
    with pytest.raises(ValueError, match="read-only"):
        sl.apply_along_axis(lambda r: r.sort(), 0, x)
    np.testing.assert_array_equal(x.get(), A)
    with pytest.raises(ValueError, match="iteration dimensions are 0"):
        sl.apply_along_axis(np.sum, 0, sl.asarray(np.zeros((3, 0))))
    with pytest.raises(np.exceptions.AxisError):
        sl.apply_along_axis(np.sum, 3, x)
    with pytest.raises(RuntimeError, match="inside sl.jit"):
        sl.jit(lambda v: sl.apply_along_axis(np.sum, 0, v))(A)


@pytest.mark.parametrize("axes", [0, [0, 2], [-1], (1, 2), []])
def test_apply_over_axes_is_numpys(axes: object) -> None:
    for func in (np.sum, np.mean, lambda a, axis: np.cumsum(a, axis)):
        want = np.apply_over_axes(func, A, axes)
        got = sl.apply_over_axes(func, sl.asarray(A), axes)
        assert got.shape == want.shape
        np.testing.assert_allclose(got.get(), want, rtol=1e-12, atol=1e-12)
    assert isinstance(np.apply_over_axes(np.sum, sl.asarray(A), axes), sl.LazyArray)
    with pytest.raises(ValueError, match="correct shape"):
        sl.apply_over_axes(lambda a, axis: a.sum(), sl.asarray(A), [0])


def test_asarray_chkfinite_require_and_predicates() -> None:
    for bad in ([1.0, np.inf], [[np.nan]], np.array([1, -np.inf], np.float16)):
        with pytest.raises(ValueError, match="must not contain infs or NaNs"):
            np.asarray_chkfinite(bad)
        with pytest.raises(ValueError, match="must not contain infs or NaNs"):
            sl.asarray_chkfinite(bad)
    ok = sl.asarray_chkfinite([1, 2], dtype=np.float32)
    assert ok.dtype == np.float32 and ok.get().tolist() == [1.0, 2.0]
    assert sl.asarray_chkfinite(np.array([2**62, 3])).dtype == np.int64  # integers: nothing to check
    with pytest.raises(ValueError, match="C-contiguous"):
        sl.asarray_chkfinite([1.0], order="F")
    x = sl.asarray(A)
    assert sl.require(x) is x and sl.require(x, np.float32, "CAW").dtype == np.float32
    owned = sl.require(x, requirements=["O", "E"])
    assert owned is not x and np.array_equal(owned.get(), A)
    with pytest.raises(ValueError, match="Cannot specify both C and F"):
        sl.require(x, requirements="CF")
    with pytest.raises(ValueError, match="C-contiguous"):
        sl.require(x, requirements=["F_CONTIGUOUS"])
    with pytest.raises(KeyError):
        sl.require(x, requirements=["X"])
    assert sl.isfortran(x) is False and sl.isfortran(np.asfortranarray(A)) is True
    assert sl.iterable(x) and not sl.iterable(sl.asarray(1.0)) and not sl.iterable(3)
    assert sl.real_if_close(A).shape == A.shape and isinstance(np.real_if_close(x), sl.LazyArray)


@pytest.mark.parametrize(("n", "k", "func"), [(4, 0, "triu"), (4, 1, "triu"), (5, -1, "tril"), (1, 0, "tril")])
def test_mask_indices_is_numpys(n: int, k: int, func: str) -> None:
    want = np.mask_indices(n, getattr(np, func), k)
    got = sl.mask_indices(n, getattr(sl, func), k)
    assert len(got) == 2
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g.get(), w)


def test_poly_and_einsum_path_are_numpys() -> None:
    for roots in ([1.0, 2.0], [3], [], np.array([1, 2, 3], np.int32), [0.5, -0.5, 2.0]):
        got = sl.poly(roots)
        np.testing.assert_allclose(got.get(), np.poly(roots))
        assert got.dtype == np.asarray(np.poly(roots)).dtype  # (no roots: NumPy's 1.0, a 0-d array here)
    for m in (np.array([[2.0, 1.0], [1.0, 3.0]]), np.array([[0.0, -1.0], [1.0, 0.0]])):  # eigenvalues real, +-i
        np.testing.assert_allclose(np.poly(sl.asarray(m)).get(), np.poly(m), atol=1e-15)
    with pytest.raises(TypeError):
        sl.poly(np.array([1j, 2.0]))  # complex roots are no stitchlab array
    a, b, c = np.ones((3, 40)), np.ones((40, 5)), np.ones((5, 60))
    want = np.einsum_path("ij,jk,kl->il", a, b, c, optimize="optimal")
    got = np.einsum_path("ij,jk,kl->il", sl.asarray(a), sl.asarray(b), c, optimize="optimal")
    assert got[0] == want[0] and got[1] == want[1]
    want = np.einsum_path(a, [0, 1], b, [1, 2], c, [2, 3], [0, 3], optimize="greedy")
    got = sl.einsum_path(sl.asarray(a), [0, 1], b, [1, 2], sl.asarray(c), [2, 3], [0, 3], optimize="greedy")
    assert got[0] == want[0] and got[1] == want[1]
