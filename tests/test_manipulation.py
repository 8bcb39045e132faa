"""NumPy's construction, manipulation and comparison functions built from lazy ops
(``stitchlab/frontend/manipulation.py``): NumPy's values, shapes, dtypes and errors, and the ones
made of views, compares and broadcasts fuse into the kernel of their use. GPU:
``tests/gpu/test_library_steps_gpu.py``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from lazycheck import families, same

import stitchlab as sl

pytestmark = pytest.mark.usefixtures("numpy_backend")

RNG = np.random.default_rng(43)
A = RNG.standard_normal((6, 5)).astype(np.float32)
T3 = RNG.standard_normal((3, 4, 5))
I16 = RNG.integers(-9, 9, (4, 6)).astype(np.int16)


@pytest.mark.parametrize("name, args", [
    ("flip", (A,)), ("flip", (A, 1)), ("flip", (T3, (0, 2))), ("fliplr", (A,)), ("flipud", (I16,)),
    ("outer", (A[0], I16[1])), ("outer", (T3[0], A[:2])),
])
def test_flips_and_outer_are_numpys(name: str, args: tuple[Any, ...]) -> None:
    want = getattr(np, name)(*args)
    same(getattr(sl, name)(sl.asarray(args[0]), *args[1:]), want)
    same(getattr(np, name)(sl.asarray(args[0]), *args[1:]), want)  # NumPy's function, lazily


@pytest.mark.parametrize("k", [-7, -2, 0, 1, 4, 9])
def test_triangles_diagonals_and_eye_are_numpys(k: int) -> None:
    for a in (A, I16, A > 0, T3):
        same(sl.tril(sl.asarray(a), k), np.tril(a, k))
        same(sl.triu(sl.asarray(a), k), np.triu(a, k))
    same(sl.tril(sl.asarray(A[0]), k), np.tril(A[0], k))  # 1-d: broadcast to a square
    same(sl.eye(4, 6, k), np.eye(4, 6, k))
    same(sl.eye(3, k=k, dtype=np.int8), np.eye(3, k=k, dtype=np.int8))
    for a in (A, I16):
        same(sl.diagonal(sl.asarray(a), k), np.diagonal(a, k))
        same(sl.asarray(a).diagonal(k), np.diagonal(a, k))
        same(sl.trace(sl.asarray(a), k), np.asarray(np.trace(a, k)))
        same(sl.diag(sl.asarray(a[0]), k), np.diag(a[0], k))
        same(sl.diag(sl.asarray(a), k), np.diag(a, k))
    same(sl.diagonal(sl.asarray(T3), k, 2, 0), np.diagonal(T3, k, 2, 0))
    same(sl.trace(sl.asarray(T3), k, 1, 2, dtype=np.float32), np.trace(T3, k, 1, 2, dtype=np.float32))
    same(sl.identity(3, int), np.identity(3, int))


def test_triangle_and_diagonal_errors_are_numpys() -> None:
    with pytest.raises(ValueError, match="at least two dimensions"):
        sl.diagonal(sl.asarray(A[0]))
    with pytest.raises(ValueError, match="axis1 and axis2 cannot be the same"):
        sl.diagonal(sl.asarray(A), 0, 1, -1)
    with pytest.raises(ValueError, match="Input must be 1- or 2-d"):
        sl.diag(sl.asarray(T3))
    with pytest.raises(ValueError, match=">= 2-d"):
        sl.fliplr(sl.asarray(A[0]))
    with pytest.raises(ValueError, match="negative dimensions"):
        sl.eye(-1)


@pytest.mark.parametrize("args", [(-1,), (3, -2), (-2, 3), (-3, -1, 1), (0,)], ids=str)
def test_tri_of_negative_sizes_is_empty_as_numpys(args: tuple[int, ...]) -> None:
    same(sl.tri(*args), np.tri(*args))  # (eye raises for them, in NumPy as here)


def test_views_compares_and_broadcasts_fuse_into_their_use() -> None:
    x = sl.asarray(A)
    assert families(sl.tril(x * 2, -1) + sl.eye(6, 5)) == ["pointwise"]
    assert families(sl.trace(sl.exp(x))) == [families(sl.exp(x).sum())[0]]
    y = sl.tile(x, (2, 3)) * sl.repeat(sl.repeat(sl.flip(x, 0), 2, 0), 3, 1)
    assert families(y) == ["pointwise"]
    same(y, np.tile(A, (2, 3)) * np.repeat(np.repeat(A[::-1], 2, 0), 3, 1))
    assert families(sl.diff(x, 2, axis=0).sum(0)) == families(x.sum(0))


@pytest.mark.parametrize("sections, axis", [(3, 0), (4, 0), ([1, 4], 1), ([-2, 10, 2], 1), ([], 0), (1, 1)])
def test_splits_are_numpys(sections: Any, axis: int) -> None:
    for got, want in zip(sl.array_split(sl.asarray(A), sections, axis), np.array_split(A, sections, axis), strict=True):
        same(got, want)
    if isinstance(sections, list) or A.shape[axis] % sections == 0:
        for got, want in zip(sl.split(sl.asarray(A), sections, axis), np.split(A, sections, axis), strict=True):
            same(got, want)
    else:
        with pytest.raises(ValueError, match="array split does not result in an equal division"):
            sl.split(sl.asarray(A), sections, axis)
    for got, want in zip(sl.hsplit(sl.asarray(A), 5), np.hsplit(A, 5), strict=True):
        same(got, want)
    for got, want in zip(sl.vsplit(sl.asarray(A), [2]), np.vsplit(A, [2]), strict=True):
        same(got, want)
    for got, want in zip(sl.dsplit(sl.asarray(T3), 5), np.dsplit(T3, 5), strict=True):
        same(got, want)
    with pytest.raises(ValueError, match="number sections must be larger than 0"):
        sl.array_split(sl.asarray(A), 0)


@pytest.mark.parametrize("reps", [2, (2, 1), (1, 3), (2, 1, 3), (0, 2)])
def test_tile_is_numpys(reps: Any) -> None:
    for a in (A, I16[0], np.float64(2.5)):
        same(sl.tile(sl.asarray(a), reps), np.tile(a, reps))


@pytest.mark.parametrize("repeats, axis", [(3, 1), (2, None), (0, 0), ([1, 0, 2, 1, 1, 3], 0), ([2], 1), (np.arange(5), -1)])
def test_repeat_is_numpys(repeats: Any, axis: Any) -> None:
    same(sl.repeat(sl.asarray(A), repeats, axis), np.repeat(A, repeats, axis))
    same(sl.asarray(A).repeat(repeats, axis), np.repeat(A, repeats, axis))


def test_repeat_and_tile_errors_are_numpys() -> None:
    with pytest.raises(ValueError, match="repeats may not contain negative values"):
        sl.repeat(sl.asarray(A), -1)
    with pytest.raises(ValueError, match="could not be broadcast"):
        sl.repeat(sl.asarray(A), [1, 2], axis=0)
    with pytest.raises(TypeError, match="Cannot cast"):
        sl.repeat(sl.asarray(A), 1.5)
    with pytest.raises(ValueError, match="negative dimensions"):
        sl.tile(sl.asarray(A), -1)


@pytest.mark.parametrize("repeats, axis", [(np.array([[2]]), None), ([[1, 2]], 0), (np.ones((1, 1, 1), int), 1)], ids=str)
def test_repeat_refuses_counts_of_two_or_more_dimensions_as_numpy(repeats: Any, axis: Any) -> None:
    with pytest.raises(ValueError):
        np.repeat(A, repeats, axis)
    with pytest.raises(ValueError, match="object too deep for desired array"):
        sl.repeat(sl.asarray(A), repeats, axis)


@pytest.mark.parametrize("indexing", ["xy", "ij"])
@pytest.mark.parametrize("sparse", [False, True])
def test_meshgrid_is_numpys(indexing: str, sparse: bool) -> None:
    vs = (np.arange(3), np.linspace(0, 1, 4), np.arange(2.0))
    for n in (1, 2, 3):
        got = sl.meshgrid(*(sl.asarray(v) for v in vs[:n]), indexing=indexing, sparse=sparse)
        want = np.meshgrid(*vs[:n], indexing=indexing, sparse=sparse)
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            same(g, w)
    with pytest.raises(ValueError, match="Valid values for `indexing`"):
        sl.meshgrid(sl.arange(2), indexing="yx")


@pytest.mark.parametrize("n, axis, prepend, append", [
    (1, -1, None, None), (2, 0, None, None), (0, 1, None, None), (1, 1, 0, A[:, :1]), (3, 1, A[:, :2], 7.0),
])
def test_diff_is_numpys(n: int, axis: int, prepend: Any, append: Any) -> None:
    extra = {k: v for k, v in (("prepend", prepend), ("append", append)) if v is not None}
    same(sl.diff(sl.asarray(A), n, axis, **extra), np.diff(A, n, axis, **extra))
    same(sl.diff(sl.asarray(I16), n, axis), np.diff(I16, n, axis))
    same(sl.diff(sl.asarray(A > 0), n, axis), np.diff(A > 0, n, axis))
    same(np.diff(sl.asarray(A), n, axis), np.diff(A, n, axis))


def test_diff_errors_are_numpys() -> None:
    with pytest.raises(ValueError, match="order must be non-negative but got -1"):
        sl.diff(sl.asarray(A), -1)
    with pytest.raises(ValueError, match="at least one dimensional"):
        sl.diff(sl.asarray(np.float32(1)))


def test_diff_of_order_zero_is_the_input_as_numpys() -> None:
    """NumPy returns ``a`` for ``n=0`` before it checks dimensions, axis or ``prepend``/``append``."""
    zero_d = np.array(7, np.uint8)
    same(sl.diff(sl.asarray(zero_d), 0), np.asarray(np.diff(zero_d, 0)))
    same(sl.diff(sl.asarray(A), 0, axis=5, append=np.ones((9, 9))), np.diff(A, 0, axis=5, append=np.ones((9, 9))))


@pytest.mark.parametrize("shift, axis", [(2, None), (-13, None), (1, 0), (7, 1), ((1, -2), (0, 1)), ((1, 2), 1), (0, 0)])
def test_roll_is_numpys(shift: Any, axis: Any) -> None:
    same(sl.roll(sl.asarray(A), shift, axis), np.roll(A, shift, axis))
    same(np.roll(sl.asarray(I16), shift, axis), np.roll(I16, shift, axis))


@pytest.mark.parametrize("mode", ["constant", "edge", "wrap", "reflect", "symmetric"])
@pytest.mark.parametrize("width", [1, (2, 0), ((1, 2), (3, 0)), 7])
def test_pad_is_numpys(mode: str, width: Any) -> None:
    same(sl.pad(sl.asarray(A), width, mode), np.pad(A, width, mode))
    same(sl.pad(sl.asarray(I16[0]), width if np.ndim(width) < 2 else width[0], mode),
          np.pad(I16[0], width if np.ndim(width) < 2 else width[0], mode))
    same(np.pad(sl.asarray(A), width, mode), np.pad(A, width, mode))


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "float16", "bfloat16", "float64"])
def test_pads_rolls_and_padded_stencils_are_fused(dtype: str) -> None:
    """A pad or a roll is an index map read by the kernel that consumes it, as a slice is: a
    padded stencil, a roll stencil and a "same" convolution are one kernel each."""
    from stitchlab.ir.dtypes import as_dtype

    a = (np.random.default_rng(4).standard_normal((6, 9)) * 9).astype(as_dtype(dtype))
    x = sl.asarray(a)
    for mode in ("constant", "edge", "wrap", "reflect", "symmetric"):
        p = sl.pad(x, ((1, 1), (2, 2)), mode)
        q = np.pad(a, ((1, 1), (2, 2)), mode)
        if dtype == "bool":
            stencil, want = p[:-2, 2:-2] ^ p[2:, 4:], q[:-2, 2:-2] ^ q[2:, 4:]
        else:
            stencil, want = p[:-2, 2:-2] - p[2:, 4:] + x, q[:-2, 2:-2] - q[2:, 4:] + a
        assert len(sl.explain(stencil).kernels) == 1
        same(stencil, want)
    assert len(sl.explain(sl.roll(x, 1, 0) + sl.roll(x, (-2, 3), (1, 1)) + x).kernels) == 1
    same(sl.roll(x, 1, 0) + sl.roll(x, (-2, 3), (1, 1)) + x, np.roll(a, 1, 0) + np.roll(a, (-2, 3), (1, 1)) + a)
    if dtype == "float64":
        conv = sl.convolve(x.ravel(), sl.asarray(np.array([0.25, 0.5, 0.25])), "same")
        assert len(sl.explain(conv).kernels) == 1


@pytest.mark.parametrize("mode", ["constant", "edge", "wrap", "reflect", "symmetric"])
def test_pads_of_jitted_functions_follow_the_batch(mode: str) -> None:
    """A pad along the outer (batch) axis depends on its extent: each batch size gets its own
    kernel and NumPy's values; a pad along an inner axis shares one kernel between batches."""
    f = sl.jit(lambda x: sl.pad(x, ((2, 3), (0, 0)), mode) * 2)
    g = sl.jit(lambda x: sl.pad(x, ((0, 0), (2, 5)), mode) + 1)
    for rows in (4, 7, 4):
        a = np.arange(rows * 5, dtype=np.float32).reshape(rows, 5)
        np.testing.assert_array_equal(f(sl.asarray(a)).get(), np.pad(a, ((2, 3), (0, 0)), mode) * 2)
        np.testing.assert_array_equal(g(sl.asarray(a)).get(), np.pad(a, ((0, 0), (2, 5)), mode) + 1)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int8", "uint8", "int32", "bool"])
@pytest.mark.parametrize("mode", ["reflect", "symmetric"])
def test_pad_odd_reflection_is_numpys_bit_for_bit(dtype: str, mode: str) -> None:
    """``reflect_type="odd"`` (2 × the edge − the mirror image), also wider than one reflection,
    where NumPy mirrors in steps about each new edge: the same bits (its float roundings, integer
    wraps, bool's ``or``), a singleton axis padded with its edge as NumPy's, and one kernel."""
    rng = np.random.default_rng(7)
    for n in (1, 2, 3, 5):
        a = (rng.standard_normal((3, n)) * 60).astype(sl.bfloat16 if dtype == "bfloat16" else dtype)
        for width in (1, (0, 2), (4, 1), (13, 9), ((1, 2), (7, 0)), ((2, 0), (3, 25))):
            got = sl.pad(sl.asarray(a), width, mode, reflect_type="odd")
            want = np.pad(a, width, mode, reflect_type="odd")
            assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.shape)
            np.testing.assert_array_equal(got.get().view(f"u{a.itemsize}"), want.view(f"u{a.itemsize}"), err_msg=f"{n} {width}")
    x = sl.asarray(a)
    assert len(sl.explain(sl.pad(x, ((0, 0), (11, 4)), mode, reflect_type="odd") * 2).kernels) == 1
    same(np.pad(x, 3, mode, reflect_type="odd"), np.pad(a, 3, mode, reflect_type="odd"))  # NumPy's function, its keyword


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int8", "int16", "uint8", "bool"])
def test_pad_linear_ramp_is_numpys_bit_for_bit(dtype: str) -> None:
    """``mode="linear_ramp"``: NumPy's ``linspace`` from each end value to the edge, in the dtype
    NumPy's promotion gives (one value or one pair is a NumPy scalar, strong; pairs per axis are
    Python numbers, weak), integers floored, an edge equal to its end value (a zero step) taking
    NumPy's other formula; corners ramp from the axes padded before."""
    rng = np.random.default_rng(8)
    for n in (1, 2, 5):
        a = (rng.standard_normal((3, n)) * 50).astype(sl.bfloat16 if dtype == "bfloat16" else dtype)
        for width in (1, (0, 2), (4, 1), ((1, 2), (7, 0))):
            for ends in (None, 5, 2.7, (1, -3), ((1, 2), (3.5, 4)), [[1], [2]], np.float32(2.5)):
                kw = {} if ends is None else {"end_values": ends}
                got, want = sl.pad(sl.asarray(a), width, "linear_ramp", **kw), np.pad(a, width, "linear_ramp", **kw)
                assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.shape)
                np.testing.assert_array_equal(got.get().view(f"u{a.itemsize}"), want.view(f"u{a.itemsize}"), err_msg=f"{n} {width} {ends}")
    b = np.array([[1.0, 3.0], [0.0, 5.0]], np.float32)  # (edges 1 and 0 equal to their end values)
    for ends in ((1, 2), ((1, 0), (3, 5))):
        same(sl.pad(sl.asarray(b), 5, "linear_ramp", end_values=ends), np.pad(b, 5, "linear_ramp", end_values=ends))
    same(np.pad(sl.asarray(b), 2, "linear_ramp"), np.pad(b, 2, "linear_ramp"))  # NumPy's function
    with pytest.raises(ValueError, match=r"unsupported keyword arguments for mode 'linear_ramp': \['stat_length'\]"):
        sl.pad(sl.asarray(b), 1, "linear_ramp", stat_length=2)
    with pytest.raises(ValueError, match="can't extend empty axis 1"):
        sl.pad(sl.asarray(b[:, :0]), 1, "linear_ramp")


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int8", "int32", "uint8", "bool"])
@pytest.mark.parametrize("mode", ["maximum", "minimum", "mean", "median"])
def test_pad_statistics_modes_are_numpys(dtype: str, mode: str) -> None:
    """``maximum``/``minimum``/``mean``/``median`` of the edge regions (``stat_length``: all, fewer,
    more than the axis, per side and axis, rounded), corners from the axes padded before; a mean or
    median of integers rounds half to even, as NumPy's."""
    a = (np.random.default_rng(6).standard_normal((5, 6)) * 20).astype(dtype)
    for width in (1, (2, 3), ((1, 0), (0, 4)), 7):
        for length in (None, 1, 2, (1, 3), ((2, 1), (1, 4)), 100, 1.6):
            kw = {} if length is None else {"stat_length": length}
            same(sl.pad(sl.asarray(a), width, mode, **kw), np.pad(a, width, mode, **kw))
    x = sl.asarray(a)
    kernels = 3 if mode == "median" else 2  # the statistics (the median after a sort step), then the join
    assert len(sl.explain(sl.pad(x, ((0, 0), (2, 2)), mode) + 1).kernels) == kernels
    same(np.pad(x, 2, mode, stat_length=3), np.pad(a, 2, mode, stat_length=3))  # NumPy's function, its keywords


def test_pad_statistics_and_empty_modes_edge_cases_are_numpys() -> None:
    with np.errstate(invalid="ignore"), pytest.warns(RuntimeWarning):
        want = np.pad(A, 1, "mean", stat_length=0)
    same(sl.pad(sl.asarray(A), 1, "mean", stat_length=0), want)  # NaN, as NumPy's mean of nothing
    same(sl.pad(sl.asarray(I16), (2, 1), "empty"), np.pad(I16, (2, 1)))  # zeros (NumPy's are undefined)
    with pytest.raises(ValueError, match=r"unsupported keyword arguments for mode 'empty': \['constant_values'\]"):
        sl.pad(sl.asarray(I16), 1, "empty", constant_values=3)
    with pytest.raises(ValueError, match="stat_length of 0 yields no value for padding"):
        sl.pad(sl.asarray(I16), 1, "maximum", stat_length=0)
    with pytest.raises(ValueError, match="stat_length of 0 yields no value for padding"):
        sl.pad(sl.asarray(I16), 1, "mean", stat_length=(0, 1))  # (NumPy fills integers with whatever NaN casts to)
    with pytest.raises(ValueError, match="index can't contain negative values"):
        sl.pad(sl.asarray(A), 1, "minimum", stat_length=-1)
    with pytest.raises(ValueError, match="can't extend empty axis 1"):
        sl.pad(sl.asarray(A[:, :0]), 1, mode="mean")
    with pytest.raises(ValueError, match=r"unsupported keyword arguments for mode 'maximum': \['reflect_type'\]"):
        sl.pad(sl.asarray(A), 1, mode="maximum", reflect_type="even")


def test_pad_constant_values_and_errors_are_numpys() -> None:
    same(sl.pad(sl.asarray(A), 1, constant_values=((1, 2), (3, 4))), np.pad(A, 1, constant_values=((1, 2), (3, 4))))
    same(np.pad(sl.asarray(A), 1, constant_values=7), np.pad(A, 1, constant_values=7))
    same(sl.pad(sl.asarray(I16), (1, 2), constant_values=2.7), np.pad(I16, (1, 2), constant_values=2.7))
    with pytest.raises(TypeError, match="`pad_width` must be of integral type"):
        sl.pad(sl.asarray(A), 1.5)
    with pytest.raises(ValueError, match="index can't contain negative values"):
        sl.pad(sl.asarray(A), -1)
    with pytest.raises(ValueError, match="mode 'ramp' is not supported by sl.pad"):
        sl.pad(sl.asarray(A), 1, mode="ramp")
    with pytest.raises(ValueError, match="reflect_type='od' is neither 'even' nor 'odd'"):
        sl.pad(sl.asarray(A), 1, mode="reflect", reflect_type="od")  # (NumPy's pads it as "even")
    for mode in ("edge", "wrap"):  # (as NumPy's: only the reflections take it)
        with pytest.raises(ValueError, match=rf"unsupported keyword arguments for mode '{mode}': \['reflect_type'\]"):
            sl.pad(sl.asarray(A), 1, mode=mode, reflect_type="even")
    same(sl.pad(sl.asarray(A[:, :0]), ((1, 0), (2, 1)), constant_values=5), np.pad(A[:, :0], ((1, 0), (2, 1)), constant_values=5))
    same(sl.pad(sl.asarray(A[:0]), 2, constant_values=((7, 8), (9, 6))), np.pad(A[:0], 2, constant_values=((7, 8), (9, 6))))
    with pytest.raises(ValueError, match="can't extend empty axis 1"):
        sl.pad(sl.asarray(A[:, :0]), 1, mode="edge")
    with pytest.raises(ValueError, match="unsupported keyword arguments"):
        sl.pad(sl.asarray(A), 1, mode="edge", constant_values=3)


def test_array_equal_and_equiv_are_numpys() -> None:
    x = sl.asarray(A)
    nan = np.array([1.0, np.nan])
    assert sl.array_equal(x, A) is True and sl.array_equal(x, A + 1) is False and sl.array_equal(x, A[:2]) is False
    assert sl.array_equal(sl.asarray(nan), nan) is False and sl.array_equal(sl.asarray(nan), nan, equal_nan=True) is True
    assert sl.array_equal(sl.asarray(I16), I16, equal_nan=True) is True
    assert sl.array_equiv(x[:1], np.broadcast_to(A[:1], (3, 5))) is True
    assert sl.array_equiv(x, A[:, :2]) is False and sl.array_equiv(x, A[::-1]) is False
    assert np.array_equal(x, A) is True


@pytest.mark.parametrize("axis, weights", [(None, None), (0, None), (1, np.arange(5.0)), ((0, 1), None), (None, A > 0), (0, [1, 2, 3, 4, 5, 6])])
def test_average_is_numpys(axis: Any, weights: Any) -> None:
    for a in (A, I16[:, :5] if np.ndim(weights) != 2 else A):
        w = weights if weights is None or np.shape(weights)[0] != 6 or a.shape[0] == 6 else None
        got, scl = sl.average(sl.asarray(a), axis, w, returned=True)
        want, wscl = np.average(a, axis, w, returned=True)
        assert got.dtype == np.asarray(want).dtype and got.shape == np.shape(want)
        np.testing.assert_allclose(got.get(), want, rtol=1e-6)
        np.testing.assert_allclose(scl.get(), wscl, rtol=1e-6)


def test_average_errors_are_numpys() -> None:
    with pytest.raises(TypeError, match="Axis must be specified"):
        sl.average(sl.asarray(A), weights=np.ones(5))
    with pytest.raises(TypeError, match="1D weights expected"):
        sl.average(sl.asarray(A), 1, weights=np.ones((1, 5)))
    with pytest.raises(ValueError, match="Length of weights not compatible"):
        sl.average(sl.asarray(A), 1, weights=np.ones(4))


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("dtype", ["float64", "float32", "int8", "bool"])
@pytest.mark.parametrize(("n", "m"), [(1, 1), (5, 3), (3, 5), (40, 7), (8, 8), (50, 33), (2, 40)])
def test_convolve_and_correlate_are_numpys(mode: str, dtype: str, n: int, m: int) -> None:
    """Values, shapes and dtypes of NumPy's 1-d convolution and correlation, the shorter operand
    on either side; int8 wraps as NumPy's; filters past LAZY_FILTER (33, 40) run evaluated."""
    rng = np.random.default_rng(n * 100 + m)
    a, v = ((rng.random(k) > 0.5) if dtype == "bool" else (rng.random(k) * 100 - 50).astype(dtype) for k in (n, m))
    for fn in ("convolve", "correlate"):
        want = getattr(np, fn)(a, v, mode)
        for got in (getattr(sl, fn)(sl.asarray(a), sl.asarray(v), mode), getattr(np, fn)(sl.asarray(a), sl.asarray(v), mode)):
            assert isinstance(got, sl.LazyArray)
            value = got.get()
            assert value.shape == want.shape and value.dtype == want.dtype
            if dtype.startswith("float"):
                np.testing.assert_allclose(value, want, rtol=1e-5 if dtype == "float32" else 1e-12, atol=1e-3)
            else:
                np.testing.assert_array_equal(value, want)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("fn", ["convolve", "correlate"])
def test_convolve_nan_and_inf_reach_only_the_outputs_numpy_multiplies_them_into(fn: str, mode: str) -> None:
    """A NaN or inf in the shorter operand meets no padded zero: the outputs whose sum does not
    take it stay numbers, as NumPy's; a lone -0.0 product sums from +0.0, as NumPy's."""
    a = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    for v in (np.array([np.nan, 1.0]), np.array([2.0, np.inf, -1.0]), np.array([1.0, 2.0, 3.0, -np.inf])):
        want = getattr(np, fn)(a, v, mode)
        got = getattr(sl, fn)(sl.asarray(a), sl.asarray(v), mode).get()
        np.testing.assert_array_equal(got, want)  # (NaN where NumPy has NaN only)
    want = getattr(np, fn)(np.array([-0.0]), np.array([1.0]), mode)
    got = getattr(sl, fn)(sl.asarray(np.array([-0.0])), sl.asarray(np.array([1.0])), mode).get()
    assert np.signbit(got).tolist() == np.signbit(want).tolist() == [False]


def test_convolve_float16_sums_in_float32_as_numpy() -> None:
    a = np.array([0.59521484375, -0.40380859375], np.float16)
    v = np.array([215, 72, 173, 130, 255], np.uint8)
    for fn in ("convolve", "correlate"):
        for mode in ("full", "same", "valid"):
            same(getattr(sl, fn)(sl.asarray(a), sl.asarray(v), mode), getattr(np, fn)(a, v, mode))


@pytest.mark.parametrize("mode", [0, 1, 2, np.int64(2), 3, -1, True, 1.0, None, "FULL"], ids=repr)
def test_convolve_modes_take_numpys_integer_codes(mode: Any) -> None:
    a, v = np.array([1, 2, 3]), np.array([1, 1, 5])
    for fn in ("convolve", "correlate"):
        try:
            want = getattr(np, fn)(a, v, mode=mode)
        except (TypeError, ValueError) as e:
            with pytest.raises(type(e)):
                getattr(sl, fn)(sl.asarray(a), sl.asarray(v), mode=mode)
            continue
        same(getattr(sl, fn)(sl.asarray(a), sl.asarray(v), mode=mode), want)


def test_a_valid_convolution_is_one_kernel_with_its_neighbours() -> None:
    x = sl.asarray(np.random.default_rng(3).random(4096).astype(np.float32))
    box = sl.asarray(np.full(5, 0.2, np.float32))
    y = sl.tanh(sl.convolve(x * 2, box, "valid")) + 1
    assert [k.schedule.family for k in sl.explain(y).kernels] == ["pointwise"]
    np.testing.assert_allclose(y.get(), np.tanh(np.convolve(x.get() * 2, box.get(), "valid")) + 1, rtol=1e-6)


def test_convolve_errors_are_numpys() -> None:
    one = sl.asarray(np.ones(3))
    with pytest.raises(ValueError, match=r"mode must be one of 'valid', 'same', or 'full' \(got 'x'\)"):
        sl.convolve(one, one, "x")
    with pytest.raises(ValueError, match="v cannot be empty"):
        sl.correlate(one, sl.asarray(np.ones(0)))
    with pytest.raises(ValueError, match="object too deep for desired array"):
        sl.convolve(sl.asarray(np.ones((2, 2))), one)


@pytest.mark.parametrize(("a", "v"), [(2.0, np.ones(3)), (np.arange(3.0), 2.0), (2.0, 3.0), (np.int8(2), np.ones(3, np.int8)),
                                      (2, np.ones(3, np.int8))], ids=str)
def test_convolve_takes_a_0d_operand_as_one_element_as_numpy(a: Any, v: Any) -> None:
    want = np.convolve(a, v)
    got = sl.convolve(sl.asarray(a), sl.asarray(v))
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got.get(), want)
    same = sl.convolve(a, v)  # Python and NumPy numbers as they are
    assert same.dtype == want.dtype
    np.testing.assert_array_equal(same.get(), want)
    with pytest.raises(ValueError, match="object of too small depth"):  # NumPy's correlate refuses them
        np.correlate(a, v)
    with pytest.raises(ValueError, match="object of too small depth"):
        sl.correlate(sl.asarray(a), sl.asarray(v))
