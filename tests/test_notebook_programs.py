"""Short programs a notebook user runs with ``import stitchlab as sl`` in place of ``import numpy
as np`` (data science and ML: standardizing, one-hot encoding, accuracy, moving averages, masked
means, histograms, softmax, pairwise distances, top-k, unique counts, boolean masks, shape
pipelines, einsum, dtype mixes, float16/bfloat16, nan-functions, in-place ops, ``out=``, keepdims,
empty and 0-d arrays, printing, ``np.<func>(sl_array)``, and the errors of mistakes), each run
with both modules and compared: values, dtypes, shapes, and the type of error.

Each program takes the module as ``xp``. Where NumPy gives a NumPy scalar stitchlab gives a 0-d
array (docs/user-guide.md): the two compare by dtype and value. A stitchlab error may be the
NumPy error's base class (``TypeError`` where NumPy raises its ``UFuncTypeError``). Differences
that are intended and documented in docs/user-guide.md are not among the programs: ``x.flat``,
``order="F"``, string dtypes, object arrays (a dict, a generator), a view by reshape written into,
float16 ``cumsum`` (summed in float32), ``nanargmax`` of an all-NaN slice (-1, as CuPy), 0-d
arrays as dict keys and ``np.isscalar``, ``sliding_window_view`` (NumPy's, run on the values), the
order of ``unique_values`` (NumPy 2.4's hashes and does not sort; stitchlab sorts).
"""

from __future__ import annotations

import copy
import io
import json
import math
import pickle
import warnings
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import stitchlab as sl

pytestmark = pytest.mark.usefixtures("numpy_backend")

PROGRAMS: dict[str, Any] = {}


def case(f: Any) -> Any:
    PROGRAMS[f.__name__] = f
    return f


rng = np.random.default_rng(0)
X = rng.standard_normal((20, 5))
Y = rng.integers(0, 4, 20)
L = rng.standard_normal((20, 4)).astype(np.float32)
N = X.copy()
N[rng.random(X.shape) < 0.2] = np.nan
S = rng.standard_normal(50)


def T(xp, a):
    return xp.asarray(a)


@case
def standardize(xp):
    x = T(xp, X)
    return (x - x.mean(axis=0)) / x.std(axis=0, ddof=1)


@case
def standardize_keepdims(xp):
    x = T(xp, X)
    return (x - x.mean(0, keepdims=True)) / x.std(0, keepdims=True)


@case
def onehot_eye(xp):
    return xp.eye(4)[T(xp, Y)]


@case
def onehot_compare(xp):
    return (T(xp, Y)[:, None] == xp.arange(4)).astype(xp.float32)


@case
def argmax_accuracy(xp):
    return (T(xp, L).argmax(axis=1) == T(xp, Y)).mean()


@case
def moving_average_cumsum(xp):
    c = xp.cumsum(T(xp, S))
    c = xp.concatenate([xp.zeros(1), c])
    return (c[5:] - c[:-5]) / 5


@case
def moving_average_convolve(xp):
    return xp.convolve(T(xp, S), xp.ones(5) / 5, mode="valid")


@case
def masked_mean_where(xp):
    x = T(xp, X)
    m = x > 0
    return xp.where(m, x, 0).sum(0) / m.sum(0)


@case
def mean_where_kw(xp):
    x = T(xp, X)
    return xp.mean(x, axis=0, where=x > 0)


@case
def clipping(xp):
    return xp.clip(T(xp, X), -0.5, 0.5), T(xp, X).clip(min=0)


@case
def clip_int_float(xp):
    return xp.clip(T(xp, Y), 0.5, 2.5)


@case
def histogram(xp):
    return xp.histogram(T(xp, S), bins=5)


@case
def histogram_range(xp):
    return xp.histogram(T(xp, S), bins=4, range=(-1, 1), density=True)


@case
def bincount(xp):
    return xp.bincount(T(xp, Y)), xp.bincount(T(xp, Y), weights=T(xp, S[:20]), minlength=6)


@case
def softmax(xp):
    z = T(xp, L)
    e = xp.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


@case
def log_softmax(xp):
    z = T(xp, L)
    m = z.max(-1, keepdims=True)
    return z - m - xp.log(xp.exp(z - m).sum(-1, keepdims=True))


@case
def pairwise_dist(xp):
    x = T(xp, X)
    d = x[:, None, :] - x[None, :, :]
    return xp.sqrt((d**2).sum(-1))


@case
def pairwise_dist_matmul(xp):
    x = T(xp, X)
    sq = (x * x).sum(1)
    return sq[:, None] + sq[None, :] - 2 * x @ x.T


@case
def topk_argsort(xp):
    return xp.argsort(T(xp, L), axis=1)[:, ::-1][:, :2]


@case
def topk_partition(xp):
    return xp.sort(xp.partition(T(xp, S), -3)[-3:])


@case
def argpartition(xp):
    i = xp.argpartition(T(xp, S), 3)[:3]
    return xp.sort(T(xp, S)[i])


@case
def sorting(xp):
    return xp.sort(T(xp, X), axis=0), xp.sort(T(xp, X), axis=None), xp.sort(T(xp, X))[:, ::-1]


@case
def unique_counts(xp):
    return xp.unique(T(xp, Y), return_counts=True)


@case
def unique_all(xp):
    return xp.unique(T(xp, Y), return_index=True, return_inverse=True, return_counts=True)


@case
def unique_values(xp):
    return xp.unique_values(T(xp, Y)), xp.unique_counts(T(xp, Y))


@case
def bool_select(xp):
    x = T(xp, X)
    return x[x[:, 0] > 0], x[x > 1]


@case
def bool_assign(xp):
    x = T(xp, X).copy()
    x[x < 0] = 0
    x[xp.isnan(x)] = -1
    return x


@case
def bool_assign_rows(xp):
    x = T(xp, X).copy()
    x[x[:, 0] > 0] = xp.arange(5.0)
    return x


@case
def reshape_pipeline(xp):
    x = T(xp, X)
    return x.reshape(4, 5, 5).transpose(1, 0, 2).reshape(5, -1)


@case
def concat_stack_split(xp):
    x = T(xp, X)
    a, b = xp.split(x, [8], axis=0)
    return (
        xp.concatenate([b, a]),
        xp.stack([a[:3], b[:3]], axis=-1),
        xp.vstack([a, b]),
        xp.hstack([a, b[:8]]),
    )


@case
def array_split(xp):
    return xp.array_split(T(xp, S), 3)


@case
def einsum(xp):
    x = T(xp, X)
    return xp.einsum("ij,kj->ik", x, x), xp.einsum("ii", x[:5]), xp.einsum("ij->j", x)


@case
def dtype_mix_scalars(xp):
    a = xp.arange(5, dtype=xp.int8)
    f = xp.ones(3, dtype=xp.float32)
    return (
        a + 1,
        a * 2.5,
        a + 300 if False else a // 2,
        f + 1.0,
        f * 2,
        f + np.float64(1),
        a + np.int64(1),
        f / 3,
        a / 2,
        a**2,
        -a,
        ~a,
        a > 1.5,
    )


@case
def dtype_mix_arrays(xp):
    a = xp.arange(5, dtype=xp.int32)
    b = xp.ones(5, dtype=xp.uint8)
    c = xp.ones(5, xp.float16)
    return a + b, b + c, a + c, a * True, b - 2, xp.uint8(200) + b


@case
def float16_inputs(xp):
    h = T(xp, X.astype(np.float16))
    return h.sum(), h.mean(0), xp.exp(h), h @ h.T, h.var(), h.astype(np.float32).std()


@case
def bfloat16_inputs(xp):
    b = T(xp, X.astype(ml_dtypes.bfloat16))
    return b + b, (b * 2).astype(np.float32), b.max(), b.dtype


@case
def nan_functions(xp):
    n = T(xp, N)
    return (
        xp.nanmean(n, 0),
        xp.nansum(n),
        xp.nanstd(n, 1),
        xp.nanmax(n, 0),
        xp.nanargmin(n, 0),
        xp.nanmedian(n, 0),
        xp.nanpercentile(n, 50, 0),
        xp.nanvar(n, ddof=1),
    )


@case
def nan_detect(xp):
    n = T(xp, N)
    return (
        xp.isnan(n).sum(),
        xp.isnan(n).any(1),
        xp.nan_to_num(n),
        xp.count_nonzero(~xp.isnan(n), axis=0),
    )


@case
def inplace_views(xp):
    x = T(xp, X).copy()
    v = x[:5]
    v += 1
    x[:, 0] *= 2
    x[1] -= x[2]
    return x


@case
def inplace_int_float(xp):
    a = xp.arange(5)
    a += 1.5
    return a


@case
def inplace_int_float_div(xp):
    a = xp.arange(5)
    a /= 2
    return a


@case
def out_args(xp):
    x = T(xp, X)
    o = xp.empty_like(x)
    xp.multiply(x, 2, out=o)
    s = xp.empty(5)
    xp.sum(x, axis=0, out=s)
    return o, s


@case
def out_args_exp(xp):
    x = T(xp, X).copy()
    xp.exp(x, out=x)
    return x


@case
def negative_axes(xp):
    x = T(xp, X).reshape(4, 5, 5)
    return (
        x.sum(-1),
        x.max(axis=(-2, -1)),
        xp.moveaxis(x, -1, 0),
        x.argmin(-2),
        xp.expand_dims(x, -1).shape,
        xp.squeeze(x[:, :1], -2),
    )


@case
def empty_arrays(xp):
    e = xp.zeros((0, 3))
    return (
        e.sum(0),
        e.sum(),
        e.mean(0) if False else e.max(0, initial=-1),
        e.shape,
        e.reshape(-1, 3).shape,
        xp.concatenate([e, xp.ones((2, 3))]),
    )


@case
def empty_mean(xp):
    return xp.zeros((0, 3)).mean(0)


@case
def empty_max(xp):
    return xp.zeros((0, 3)).max(0)


@case
def zero_d(xp):
    z = xp.asarray(3.5)
    return (
        z + 1,
        z.shape,
        z.ndim,
        float(z),
        z[()],
        z.item(),
        z.tolist(),
        int(xp.asarray(4)),
        xp.asarray(2) * xp.arange(3),
    )


@case
def tolist_len_iter(xp):
    x = T(xp, X[:3, :2])
    return x.tolist(), len(x), [r.tolist() for r in x], [float(v) for v in x[0]]


@case
def np_asarray_interop(xp):
    x = T(xp, X)
    return np.asarray(x * 2), np.array(x[0]), np.asarray(x).dtype


@case
def np_func_dispatch(xp):
    x = T(xp, X)
    return (
        np.mean(x, axis=0),
        np.sum(x),
        np.exp(x[:2]),
        np.concatenate([x, x]),
        np.where(x > 0, x, 0),
        np.linalg.norm(x, axis=1),
        np.argmax(x, axis=1),
        np.std(x),
        np.round(x, 2),
    )


@case
def np_func_dispatch2(xp):
    x = T(xp, X)
    return (
        np.maximum(x, 0),
        np.dot(x, x.T),
        np.clip(x, 0, 1),
        np.cumsum(x, 0),
        np.sort(x, 0),
        np.unique(T(xp, Y)),
        np.allclose(x, x),
        np.isclose(x, x).all(),
    )


@case
def linalg_stuff(xp):
    x = T(xp, X)
    c = x.T @ x
    return (
        xp.linalg.inv(c + xp.eye(5)),
        xp.linalg.norm(x),
        xp.linalg.solve(c + xp.eye(5), xp.ones(5)),
        xp.trace(c),
    )


@case
def cov_corr(xp):
    x = T(xp, X)
    return xp.cov(x.T), xp.corrcoef(x.T), xp.cov(x, rowvar=False, ddof=0)


@case
def percentile_quantile(xp):
    return (
        xp.percentile(T(xp, S), [10, 50, 90]),
        xp.quantile(T(xp, X), 0.5, axis=0),
        xp.median(T(xp, X), axis=1),
    )


@case
def digitize_searchsorted(xp):
    edges = xp.linspace(-2, 2, 5)
    return xp.digitize(T(xp, S), edges), xp.searchsorted(edges, T(xp, S[:5]))


@case
def cumulative(xp):
    return (
        xp.cumprod(T(xp, S[:5])),
        xp.diff(T(xp, S), n=2),
        xp.cumsum(T(xp, Y)),
        xp.ediff1d(T(xp, S[:4])),
    )


@case
def any_all(xp):
    x = T(xp, X)
    return (x > 0).all(), (x > 3).any(axis=0), xp.any(x), bool((x > -10).all())


@case
def rounding(xp):
    x = T(xp, X) * 10
    return (
        xp.round(x),
        xp.floor(x),
        xp.ceil(x),
        xp.trunc(x),
        x.round(1),
        xp.rint(x),
        xp.around(x, -1),
    )


@case
def integer_ops(xp):
    a = T(xp, Y) + 3
    return a // 2, a % 3, xp.divmod(a, 3), a**2, a >> 1, a & 1, xp.gcd(a, 6), xp.abs(-a)


@case
def int_div_zero(xp):
    a = xp.arange(4)
    return a // 0, a % 0


@case
def float_div_zero(xp):
    a = xp.arange(4.0)
    return a / 0, xp.log(a), xp.sqrt(a - 2)


@case
def meshgrid_grid(xp):
    a, b = xp.meshgrid(xp.arange(3), xp.arange(4.0))
    return a, b, xp.indices((2, 3)), xp.ogrid[0:3, 0:2][1] if xp is np else sl.ogrid[0:3, 0:2][1]


@case
def where_one_arg(xp):
    return xp.where(T(xp, Y) > 1), xp.nonzero(T(xp, X) > 1), xp.argwhere(T(xp, Y) > 2)


@case
def tile_repeat(xp):
    return (
        xp.tile(xp.arange(3), (2, 2)),
        xp.repeat(xp.arange(3), 2),
        xp.repeat(T(xp, X[:2]), [1, 2], axis=0),
    )


@case
def pad_roll_flip(xp):
    x = T(xp, X[:3])
    return (
        xp.pad(x, 1),
        xp.pad(x, ((0, 0), (2, 1)), mode="edge"),
        xp.roll(x, 2, axis=1),
        xp.flip(x),
        x[::-1, ::2],
    )


@case
def triu_tril_diag(xp):
    x = T(xp, X[:5])
    return (
        xp.triu(x),
        xp.tril(x, -1),
        xp.diag(x),
        xp.diag(xp.arange(3)),
        xp.diagonal(x, 1),
        xp.outer(xp.arange(3), xp.arange(2)),
    )


@case
def logical(xp):
    x = T(xp, X)
    return (
        xp.logical_and(x > 0, x < 1),
        xp.logical_or(x > 1, x < -1).sum(),
        xp.logical_not(x > 0),
        xp.logical_xor(x > 0, x > 1),
    )


@case
def isin_setops(xp):
    return (
        xp.isin(T(xp, Y), [1, 2]),
        xp.intersect1d(T(xp, Y), xp.asarray([0, 3, 7])),
        xp.union1d(T(xp, Y), xp.asarray([9])),
        xp.setdiff1d(T(xp, Y), xp.asarray([0])),
    )


@case
def astype_casts(xp):
    x = T(xp, X) * 100
    return (
        x.astype(np.int8),
        x.astype(np.uint8),
        x.astype(bool),
        x.astype("float16"),
        x.astype(int),
        (x > 0).astype(int).sum(),
    )


@case
def scalar_conversions(xp):
    x = T(xp, X)
    return (
        float(x.sum()),
        int(x.argmax()),
        bool(x.sum() > 0),
        x.sum().item(),
        type(x.sum().item()).__name__,
    )


@case
def sum_dtypes(xp):
    a = xp.ones(3, xp.int8)
    b = xp.ones(3, xp.uint8)
    c = xp.ones(3, bool)
    f = xp.ones(3, xp.float16)
    return (
        a.sum(),
        b.sum(),
        c.sum(),
        f.sum(),
        a.prod(),
        c.mean(),
        a.mean(),
        b.cumsum(),
        a.sum(dtype=xp.int8),
        f.mean(dtype=xp.float32),
    )


@case
def arange_linspace(xp):
    return (
        xp.arange(0, 1, 0.1),
        xp.arange(5, dtype=float),
        xp.linspace(0, 1, 5, endpoint=False),
        xp.logspace(0, 2, 3),
        xp.arange(10)[::3],
        xp.arange(-3, 3, 2),
    )


@case
def full_like_family(xp):
    x = T(xp, X)
    return (
        xp.zeros_like(x),
        xp.ones_like(x, dtype=int),
        xp.full_like(x, 7),
        xp.full((2, 2), np.inf),
        xp.empty((2, 0)).shape,
        xp.identity(3, dtype=int),
    )


@case
def broadcasting_errors(xp):
    return xp.ones((3, 4)) + xp.ones((4, 3))


@case
def matmul_shape_error(xp):
    return xp.ones((3, 4)) @ xp.ones((3, 4))


@case
def reshape_error(xp):
    return xp.ones(6).reshape(4, 2)


@case
def index_error(xp):
    return xp.ones(6)[7]


@case
def axis_error(xp):
    return xp.ones((2, 3)).sum(axis=2)


@case
def concat_error(xp):
    return xp.concatenate([xp.ones((2, 3)), xp.ones((2, 4))])


@case
def fancy_2d(xp):
    x = T(xp, X)
    return (
        x[[0, 2, 4]][:, [1, 3]],
        x[np.ix_([0, 2], [1, 3])] if xp is np else x[sl.ix_([0, 2], [1, 3])],
        x[[0, 1], [1, 2]],
        x[-1],
        x[..., 0],
    )


@case
def take_put_along(xp):
    x = T(xp, L)
    idx = xp.argmax(x, 1)[:, None]
    return xp.take_along_axis(x, idx, 1), xp.take(x, [0, 3], axis=1), x.take([1, 2])


@case
def stats_weighted(xp):
    return (
        xp.average(T(xp, X), axis=0, weights=xp.arange(1.0, 21.0)),
        xp.average(T(xp, S), returned=True),
        xp.ptp(T(xp, X), 0),
    )


@case
def minmax_idx(xp):
    x = T(xp, X)
    return (
        x.min(),
        x.max(1),
        xp.amax(x, 0),
        xp.argmax(x),
        xp.unravel_index(xp.argmax(x), x.shape),
        xp.maximum.reduce(x, 0),
    )


@case
def polyfit_eval(xp):
    t = xp.linspace(0, 1, 20)
    return xp.polyval(xp.asarray([1.0, 2, 3]), t), xp.polyfit(t, 3 * t + 1, 1)


@case
def interp(xp):
    return xp.interp(xp.linspace(0, 1, 7), xp.asarray([0, 0.5, 1]), xp.asarray([0, 10, 0.0]))


@case
def vectorized_loss(xp):
    p = softmax(xp)
    y = T(xp, Y)
    return -xp.log(p[xp.arange(20), y]).mean()


@case
def l2_normalize(xp):
    x = T(xp, X)
    return x / xp.linalg.norm(x, axis=1, keepdims=True)


@case
def iter_over_0d(xp):
    return list(xp.asarray(3.0))


@case
def len_0d(xp):
    return len(xp.asarray(3.0))


@case
def printing(xp):
    x = T(xp, X[:2, :3])
    return (
        str(x),
        repr(x)[:6],
        str(xp.asarray(1.5)),
        str(xp.arange(3)),
        str(xp.asarray([True, False])),
        format(xp.asarray(1.25), ".1f"),
        f"{x.sum():.3f}",
    )


@case
def equality_methods(xp):
    x = T(xp, X)
    return xp.array_equal(x, x), xp.array_equal(x, x[:3]), (x == x).all(), xp.allclose(x, x + 1e-12)


@case
def sort_complex_keys(xp):
    return xp.lexsort((T(xp, S[:10]), T(xp, Y[:10]))), xp.argsort(T(xp, Y), kind="stable")


@case
def dot_variants(xp):
    x = T(xp, X)
    v = xp.arange(5.0)
    return (
        x.dot(v),
        xp.inner(v, v),
        xp.vdot(v, v),
        xp.tensordot(x, x, axes=([0], [0])),
        xp.matmul(x[None], x.T[None]).shape,
        xp.cross(xp.asarray([1.0, 0, 0]), xp.asarray([0.0, 1, 0])),
    )


@case
def count_where_sum(xp):
    x = T(xp, X)
    return (
        xp.sum(x > 0, axis=0),
        xp.sum(x, where=x > 0),
        xp.count_nonzero(x > 0),
        (x > 0).sum(dtype=xp.int32),
    )


@case
def random_shapes(xp):
    x = xp.ones((3, 1, 4))
    return (
        xp.broadcast_to(x, (2, 3, 5, 4)).shape,
        xp.broadcast_arrays(x, xp.ones(4))[1].shape,
        xp.atleast_2d(xp.arange(3)).shape,
        xp.squeeze(x).shape,
        x.T.shape,
        xp.swapaxes(x, 0, 2).shape,
    )


@case
def ravel_flatten(xp):
    x = T(xp, X[:2, :3])
    return x.ravel(), x.flatten(), x.T.ravel(), xp.ravel(x.T)


@case
def bool_arith(xp):
    b = T(xp, Y) > 1
    return b + b, b * 2, b.sum(), -b.astype(int), b & (T(xp, Y) < 3), b.mean()


@case
def bool_sub_error(xp):
    b = T(xp, Y) > 1
    return b - b


@case
def bool_neg_error(xp):
    b = T(xp, Y) > 1
    return -b


@case
def int_pow_neg(xp):
    return xp.arange(3) ** -1


@case
def overflow_int_scalar(xp):
    return xp.arange(3, dtype=xp.int8) + 300


@case
def uint_minus(xp):
    return xp.arange(3, dtype=xp.uint8) - 1, xp.arange(3, dtype=xp.uint8) - np.uint8(1)


@case
def dict_of_counts(xp):
    u, c = xp.unique(T(xp, Y), return_counts=True)
    return dict(zip(u.tolist(), c.tolist(), strict=True))


@case
def dict_of_counts_direct(xp):
    u, c = xp.unique(T(xp, Y), return_counts=True)
    d = dict(zip(u, c, strict=True))
    return sorted((int(k), int(v)) for k, v in d.items())


@case
def builtins_on_arrays(xp):
    s = T(xp, S[:6])
    return (
        float(max(s)),
        float(min(s)),
        float(sum(s)),
        [float(v) for v in sorted(s)],
        abs(s[0]) == abs(float(s[0])),
    )


@case
def round_builtin(xp):
    z = T(xp, S)[0]
    return round(z, 2), round(xp.asarray(2.5)), abs(z), divmod(xp.asarray(7), 2)


@case
def format_percent(xp):
    z = T(xp, S).mean()
    return "%.3f" % z, f"{z:.2e}", f"{z:>8.2f}", str(xp.asarray(3)), f"{xp.asarray(True)}"  # noqa: UP031 - the operator tested


@case
def int_of_1elem(xp):
    return int(xp.asarray([3])), float(xp.asarray([[2.5]]))


@case
def index_with_0d(xp):
    x = T(xp, S)
    return x[x.argmax()], x[x.argmin()] - x[int(x.argmax())], T(xp, X)[x.argmax() % 20]


@case
def array_of_arrays(xp):
    a = xp.arange(3.0)
    b = xp.ones(3)
    return xp.array([a, b]), xp.asarray([a, b * 2]), xp.array([a[0], b[1]])


@case
def array_of_mixed(xp):
    a = xp.arange(3.0)
    return xp.array([a, np.ones(3)]), xp.asarray([xp.asarray(1.5), 2])


@case
def concat_mixed(xp):
    a = xp.arange(3.0)
    return (
        xp.concatenate([a, np.ones(2)]),
        xp.stack([a, np.zeros(3)]),
        np.vstack([a, np.ones(3)]),
        np.concatenate([a, np.ones(2)]),
    )


@case
def np_plus_sl(xp):
    a = xp.arange(3.0)
    return (
        np.ones(3) + a,
        np.float32(2) * a,
        a * np.float32(2),
        np.arange(3) * a,
        (np.ones(3) + a).dtype,
    )


@case
def np_int_scalars(xp):
    a = xp.arange(3, dtype=xp.int8)
    return np.int64(5) + a, a + np.int32(1), a * np.float16(1.5), np.uint8(3) - a


@case
def attrs(xp):
    x = T(xp, X).astype(np.float32)
    return x.nbytes, x.itemsize, x.size, x.ndim, x.shape, x.dtype.name, x.T.shape, str(x.dtype)


@case
def strides(xp):
    return T(xp, X).strides


@case
def flags(xp):
    return T(xp, X).flags["C_CONTIGUOUS"]


@case
def set_shape(xp):
    x = xp.arange(6.0)
    x.shape = (2, 3)
    return x


@case
def real_imag(xp):
    x = T(xp, S)
    return x.real, xp.real(x), xp.imag(x), xp.conj(x), xp.iscomplexobj(x)


@case
def copy_independent(xp):
    x = xp.arange(5.0)
    y = x.copy()
    y[0] = 9
    return x, y


@case
def view_writes_through(xp):
    x = xp.arange(5.0)
    y = x[1:3]
    y[0] = 9
    return x


@case
def view_writes_through_reshape(xp):
    x = xp.arange(6.0)
    y = x.reshape(2, 3)
    y[0, 0] = 9
    return x


@case
def assign_alias(xp):
    x = xp.arange(5.0)
    y = x
    y += 1
    return x


@case
def sort_inplace(xp):
    x = T(xp, S).copy()
    x.sort()
    r = x[::-1][:3]
    return x, r


@case
def np_testing_allclose(xp):
    x = T(xp, X)
    np.testing.assert_allclose(x, X)
    np.testing.assert_array_equal(x > 0, X > 0)
    return 1


@case
def if_on_arrays(xp):
    x = T(xp, X)
    out = []
    if (x > -100).all():
        out.append(1)
    if xp.isfinite(x).all():
        out.append(2)
    while x.max() > 1:
        x = x / 2
    return out, x.max()


@case
def ambiguous_truth(xp):
    if T(xp, X) > 0:
        return 1
    return 0


@case
def item_forms(xp):
    x = T(xp, X)
    return x.item(0), x.item(1, 2), x.item((2, 3)), type(x.item(0)).__name__


@case
def flat_forms(xp):
    x = T(xp, X)
    return x.flat[3], [float(v) for v in x[:2].flat][:3]


@case
def append_insert_delete(xp):
    a = xp.arange(5)
    return (
        xp.append(a, 5),
        xp.insert(a, 1, 9),
        xp.delete(a, [0, 2]),
        xp.append(T(xp, X[:2]), T(xp, X[:1]), axis=0),
    )


@case
def ufunc_methods(xp):
    x = T(xp, S[:6])
    return (
        xp.maximum.accumulate(x),
        xp.add.reduce(x),
        xp.multiply.outer(xp.arange(3), xp.arange(2)),
        xp.add.reduceat(xp.arange(8), [0, 4, 5]),
        xp.minimum.reduce(T(xp, X), axis=1),
    )


@case
def ext_funcs(xp):
    x = T(xp, S)
    return (
        xp.log1p(xp.abs(x)),
        xp.expm1(x),
        xp.hypot(x, 1),
        xp.arctan2(x, 1),
        xp.sinc(x),
        xp.heaviside(x, 0.5),
        xp.sign(x),
        xp.copysign(1, x),
    )


@case
def int_mean_std(xp):
    a = T(xp, Y).astype(np.int8)
    return (
        a.mean(),
        a.std(),
        a.var(ddof=1),
        (a - a.mean()) / a.std(),
        xp.median(a),
        a.sum(),
        a.max() - a.min(),
    )


@case
def uint8_arith(xp):
    a = xp.asarray(np.array([10, 200, 250], np.uint8))
    return (
        a + a,
        a.max() - a.min(),
        a.sum(),
        a.mean(),
        a * 2,
        a // 3,
        a - 20,
        a.astype(np.int16) - 20,
    )


@case
def axis_none_concat(xp):
    return xp.concatenate((T(xp, X[:2]), T(xp, X[:1])), axis=None).shape


@case
def stack_0d(xp):
    return xp.stack([xp.asarray(1.0), xp.asarray(2.0)]), xp.array([xp.float32(1), 2])


@case
def newaxis(xp):
    x = T(xp, S[:4])
    return (
        x[np.newaxis].shape,
        x[:, None].shape,
        x[None, :, None].shape,
        (x[:, None] * x[None]).sum(),
    )


@case
def np_dispatch_more(xp):
    x = T(xp, X)
    return (
        np.percentile(x, 50),
        np.median(x, axis=0),
        np.histogram(x[:, 0], bins=3)[0],
        np.sum(x, axis=0, keepdims=True).shape,
        np.argsort(x[:, 0])[:3],
        np.var(x, ddof=1),
    )


@case
def np_dispatch_types(xp):
    x = T(xp, X)
    r = (np.mean(x), np.exp(x), np.sum(x, 0), np.where(x > 0)[0], np.unique(x[:2]))
    return [type(v).__name__ for v in r]


@case
def np_shape_funcs(xp):
    x = T(xp, X)
    return (
        np.shape(x),
        np.ndim(x),
        np.size(x),
        len(x),
        np.may_share_memory(x, x) if xp is np else True,
    )


@case
def reduce_empty_error(xp):
    return xp.zeros(0).max()


@case
def argmax_empty_error(xp):
    return xp.zeros(0).argmax()


@case
def mean_empty_nan(xp):
    return xp.zeros(0).mean(), xp.nanmean(xp.asarray([np.nan]))


@case
def reshape_minus1(xp):
    return (
        xp.arange(12).reshape(-1, 4).shape,
        xp.arange(12).reshape((3, -1)).shape,
        xp.arange(12).reshape(2, 2, -1).shape,
    )


@case
def reshape_two_minus1(xp):
    return xp.arange(12).reshape(-1, -1)


@case
def transpose_forms(xp):
    x = xp.arange(24).reshape(2, 3, 4)
    return (
        x.transpose().shape,
        x.transpose(2, 0, 1).shape,
        x.transpose((1, 0, 2)).shape,
        x.mT.shape,
        xp.permute_dims(x, (2, 1, 0)).shape,
    )


@case
def split_errors(xp):
    return xp.split(xp.arange(10), 3)


@case
def split_sections(xp):
    return (
        xp.split(xp.arange(10), [2, 5, 20]),
        xp.hsplit(xp.arange(12).reshape(2, 6), 3)[1],
        xp.vsplit(xp.arange(12).reshape(4, 3), 2)[0],
    )


@case
def einsum_more(xp):
    a = T(xp, X).reshape(4, 5, 5)
    return (
        xp.einsum("bij,bjk->bik", a, a),
        xp.einsum("bii->b", a),
        xp.einsum("...ij->...ji", a).shape,
        xp.einsum("i,i->", xp.arange(3.0), xp.arange(3.0)),
        xp.einsum("ij", a[0]).shape,
    )


@case
def matmul_forms(xp):
    a = T(xp, X)
    v = xp.arange(5.0)
    return a @ v, v @ a.T, xp.matmul(a[:2], v), (a @ a.T).shape, xp.dot(v, v), xp.vecdot(a, a)


@case
def matmul_int(xp):
    a = T(xp, Y).reshape(4, 5)
    return a @ a.T, xp.dot(a, a.T).dtype


@case
def scalar_type_results(xp):
    x = T(xp, X).astype(np.float32)
    return (x.sum() * 2).dtype, (x.sum() + 1.0).dtype, (x.mean() / 3).dtype, xp.sqrt(x.sum()).dtype


@case
def float16_accum(xp):
    h = xp.ones(5000, xp.float16)
    return h.sum(), h.mean(), xp.cumsum(h)[-1], h.sum(dtype=xp.float32)


@case
def float16_dot(xp):
    h = T(xp, X.astype(np.float16))
    return h @ h.T, h.dot(h[0])


@case
def bfloat16_ops(xp):
    b = T(xp, X.astype(ml_dtypes.bfloat16))
    return (
        (b * 2).sum(),
        b.mean(),
        xp.exp(b).dtype,
        (b + 1.0).dtype,
        (b + np.float32(1)).dtype,
        (b > 0).sum(),
    )


@case
def bfloat16_mix(xp):
    b = T(xp, X.astype(ml_dtypes.bfloat16))
    return (
        (b + xp.ones(5, xp.float16)).dtype,
        (b + xp.ones(5, xp.float32)).dtype,
        (b + xp.ones(5, xp.int8)).dtype,
    )


@case
def nanfuncs_allnan(xp):
    a = xp.asarray([[np.nan, np.nan], [1, 2]])
    return xp.nanmax(a, 1), xp.nanmean(a, 1), xp.nansum(a, 1), xp.nanargmax(a[1])


@case
def nanargmax_allnan(xp):
    return xp.nanargmax(xp.asarray([np.nan, np.nan]))


@case
def nan_compare(xp):
    n = T(xp, N)
    return (
        xp.max(n),
        xp.fmax(n, 0),
        xp.maximum(n, 0),
        xp.sort(n[:, 0]),
        xp.argsort(n[:, 0], kind="stable"),
        xp.unique(n[:, 0]),
        xp.isnan(xp.unique(n)).sum(),
    )


@case
def where_broadcast(xp):
    x = T(xp, X)
    return (
        xp.where(x > 0, 1, -1),
        xp.where(x > 0, x, np.nan),
        xp.where(x[:, :1] > 0, x, 0.0),
        xp.where(True, 1, 2.5),
        xp.where(x > 0, 1, 0).dtype,
    )


@case
def select_piecewise(xp):
    x = T(xp, S)
    return xp.select([x < -1, x > 1], [-1, 1], default=0), xp.piecewise(
        x, [x < 0, x >= 0], [lambda v: -v, lambda v: v]
    )


@case
def histogram2d(xp):
    return xp.histogram2d(T(xp, S[:20]), T(xp, X[:, 0]), bins=3)[0], xp.histogram_bin_edges(
        T(xp, S), bins=4
    )


@case
def bincount_errs(xp):
    return xp.bincount(xp.asarray([-1, 2]))


@case
def bincount_float(xp):
    return xp.bincount(xp.asarray([1.0, 2.0]))


@case
def argsort_desc(xp):
    x = T(xp, S)
    return xp.argsort(-x)[:5], xp.argsort(x)[::-1][:5], x[xp.argsort(x)[-3:]]


@case
def top_k_rows(xp):
    x = T(xp, L)
    k = 2
    idx = xp.argpartition(-x, k, axis=1)[:, :k]
    vals = xp.take_along_axis(x, idx, 1)
    return xp.sort(vals, axis=1)


@case
def searchsorted_sides(xp):
    a = xp.asarray([1, 2, 2, 3])
    return (
        xp.searchsorted(a, [2, 2.5], side="right"),
        xp.searchsorted(a, 2),
        xp.searchsorted(a, xp.asarray(2)),
    )


@case
def sum_of_bool_types(xp):
    b = T(xp, X) > 0
    return (
        b.sum().dtype,
        xp.sum(b, axis=0).dtype,
        b.mean().dtype,
        xp.count_nonzero(b),
    )


@case
def tolist_types(xp):
    return (
        type(xp.arange(3).tolist()[0]).__name__,
        type(xp.ones(2, xp.float16).tolist()[0]).__name__,
        xp.asarray(True).tolist(),
        xp.zeros((2, 0)).tolist(),
        xp.asarray(np.float32(1.5)).tolist(),
    )


@case
def iteration_2d(xp):
    x = T(xp, X[:3, :2])
    return [type(r).__name__ for r in x][:1] if False else [r.shape for r in x], [
        float(v) for r in x for v in r
    ]


@case
def repr_forms(xp):
    return (
        repr(xp.arange(3)),
        repr(xp.asarray(1.5)),
        repr(xp.zeros((2, 2), xp.float32)),
        str(xp.ones(2, bool)),
    )


@case
def empty_ops(xp):
    e = xp.asarray([])
    return (
        e.dtype,
        e.sum(),
        e.shape,
        xp.concatenate([e, xp.arange(2.0)]),
        e.reshape(0, 5).shape,
        xp.sort(e),
        xp.unique(e),
        xp.cumsum(e),
        e.mean(axis=0) if False else xp.zeros((3, 0)).sum(1),
    )


@case
def empty_int_ops(xp):
    e = xp.zeros((0,), int)
    return (
        e.max(initial=0),
        xp.bincount(e),
        xp.argsort(e),
        e.astype(float).std() if False else e.tolist(),
    )


@case
def zero_d_ops(xp):
    z = xp.asarray(2.0)
    return (
        z.reshape(1),
        z[None],
        z.T,
        z.ravel(),
        xp.atleast_1d(z),
        z.sum(),
        z.argmax(),
        z.astype(int),
        -z,
        z**2,
        xp.stack([z, z]),
    )


@case
def zero_d_index_err(xp):
    return xp.asarray(2.0)[0]


@case
def len_of_0d_err(xp):
    return len(xp.asarray(2.0))


@case
def astype_copy(xp):
    x = xp.arange(3.0)
    y = x.astype(float, copy=False)
    z = x.astype(np.float32)
    return y.dtype, z.dtype


@case
def astype_str_err(xp):
    return xp.arange(3).astype(str)


@case
def clip_forms(xp):
    x = T(xp, S)
    return (
        x.clip(-1, 1),
        xp.clip(x, None, 0),
        xp.clip(x, xp.zeros(50), 1),
        xp.clip(T(xp, Y).astype(np.uint8), 1, 2),
    )


@case
def clip_none_none(xp):
    return xp.clip(xp.arange(3), None, None)


@case
def argmax_keepdims(xp):
    x = T(xp, X)
    return (
        x.argmax(axis=1, keepdims=True),
        xp.argmin(x, axis=0, keepdims=True),
        x.max(axis=(0, 1), keepdims=True),
    )


@case
def median_even(xp):
    return xp.median(xp.arange(4.0)), xp.median(xp.asarray([[1, 3], [2, 4]]), axis=0)


@case
def standard_ml_pipeline(xp):
    x = T(xp, X)
    y = T(xp, Y)
    w = xp.zeros((5, 4))
    b = xp.zeros(4)
    for _ in range(3):
        z = x @ w + b
        z = z - z.max(1, keepdims=True)
        p = xp.exp(z)
        p /= p.sum(1, keepdims=True)
        g = p.copy()
        g[xp.arange(20), y] -= 1
        g /= 20
        w -= 0.5 * x.T @ g
        b -= 0.5 * g.sum(0)
    return w, b, (p.argmax(1) == y).mean()


@case
def kmeans_step(xp):
    x = T(xp, X)
    c = x[:3].copy()
    for _ in range(3):
        d = ((x[:, None, :] - c[None]) ** 2).sum(-1)
        a = d.argmin(1)
        c = xp.stack([x[a == k].mean(0) if (a == k).any() else c[k] for k in range(3)])
    return c, a


@case
def rolling_window(xp):
    from numpy.lib.stride_tricks import sliding_window_view

    return (
        sliding_window_view(T(xp, S), 5).mean(-1)
        if xp is np
        else sl.lib.stride_tricks.sliding_window_view(T(xp, S), 5).mean(-1)
    )


@case
def normalize_minmax(xp):
    x = T(xp, X)
    mn, mx = x.min(0), x.max(0)
    return (x - mn) / (mx - mn)


@case
def confusion_matrix(xp):
    y = T(xp, Y)
    p = T(xp, L).argmax(1)
    cm = xp.zeros((4, 4), int)
    xp.add.at(cm, (y, p), 1)
    return cm


@case
def confusion_bincount(xp):
    y = T(xp, Y)
    p = T(xp, L).argmax(1)
    return xp.bincount(y * 4 + p, minlength=16).reshape(4, 4)


@case
def cumsum_axis_dtype(xp):
    return (
        xp.cumsum(T(xp, Y).astype(np.int8)).dtype,
        xp.cumsum(xp.ones((2, 3), bool), axis=1),
        xp.cumprod(xp.ones(3, xp.float16)).dtype,
    )


@case
def trapz(xp):
    return xp.trapezoid(T(xp, S)), xp.trapezoid(T(xp, S), dx=0.5)


@case
def gradient(xp):
    return xp.gradient(T(xp, S[:10])), xp.gradient(T(xp, X[:4]), axis=0)


@case
def sign_nan(xp):
    return xp.sign(xp.asarray([np.nan, -0.0, 0.0, -2])), xp.signbit(xp.asarray([-0.0, 0.0]))


@case
def integer_overflow_wrap(xp):
    a = xp.asarray(np.array([127], np.int8))
    return a + np.int8(1), a * 2, xp.abs(xp.asarray(np.array([-128], np.int8)))


@case
def isclose_forms(xp):
    return xp.isclose(
        xp.asarray([1.0, np.nan]), xp.asarray([1.0 + 1e-9, np.nan]), equal_nan=True
    ), xp.allclose(xp.asarray([1.0]), 1.0)


@case
def axis_out_of_range(xp):
    return T(xp, X).sum(axis=-3)


@case
def axis_dup(xp):
    return T(xp, X).sum(axis=(0, 0))


@case
def axis_float(xp):
    return T(xp, X).sum(axis=1.0)


@case
def out_wrong_shape(xp):
    return xp.add(T(xp, X), 1, out=xp.empty((5, 20)))


@case
def out_wrong_dtype(xp):
    return xp.add(T(xp, X), 1, out=xp.empty((20, 5), int))


@case
def out_unsafe_casting(xp):
    o = xp.empty((20, 5), np.float32)
    xp.add(T(xp, X), 1, out=o, casting="unsafe")
    return o


@case
def out_tuple(xp):
    o = xp.empty((20, 5))
    xp.multiply(T(xp, X), 2, out=(o,))
    return o


@case
def out_reduction_keepdims(xp):
    o = xp.empty((1, 5))
    xp.mean(T(xp, X), axis=0, keepdims=True, out=o)
    return o


@case
def out_int_mean(xp):
    o = xp.empty(5, int)
    xp.mean(T(xp, X), axis=0, out=o)
    return o


@case
def out_returned_identity(xp):
    o = xp.empty((20, 5))
    r = xp.exp(T(xp, X), out=o)
    return r is o


@case
def out_cumsum(xp):
    o = xp.empty(50)
    xp.cumsum(T(xp, S), out=o)
    return o


@case
def out_clip(xp):
    o = xp.empty(50)
    xp.clip(T(xp, S), -1, 1, out=o)
    return o


@case
def out_matmul(xp):
    o = xp.empty((20, 20))
    xp.matmul(T(xp, X), T(xp, X).T, out=o)
    return o


@case
def out_argmax(xp):
    o = xp.empty(20, np.int64)
    xp.argmax(T(xp, X), axis=1, out=o)
    return o


@case
def out_concat(xp):
    o = xp.empty(100)
    xp.concatenate([T(xp, S), T(xp, S)], out=o)
    return o


@case
def out_where_arg(xp):
    o = xp.zeros((20, 5))
    xp.sqrt(T(xp, X), out=o, where=T(xp, X) > 0)
    return o


@case
def dtype_arg_ufunc(xp):
    return xp.add(T(xp, Y), 1, dtype=np.float32), xp.multiply(
        xp.arange(3), 2.5, dtype=int, casting="unsafe"
    )


@case
def dtype_arg_err(xp):
    return xp.multiply(xp.arange(3), 2.5, dtype=int)


@case
def reduce_dtype_arg(xp):
    return (
        T(xp, Y).sum(dtype=np.int8),
        T(xp, X).mean(dtype=np.float32),
        xp.prod(T(xp, Y) + 1, dtype=float),
    )


@case
def initial_where(xp):
    x = T(xp, X)
    return (
        x.max(initial=0),
        x.sum(where=x > 0, axis=0),
        xp.max(x, axis=0, where=x < 0, initial=-np.inf),
        x.min(initial=-5, axis=1),
    )


@case
def where_kw_no_initial(xp):
    return T(xp, X).max(where=T(xp, X) > 0)


@case
def std_correction(xp):
    x = T(xp, X)
    return (
        x.std(correction=1),
        xp.var(x, axis=0, correction=0.5),
        x.std(ddof=1, axis=-1, keepdims=True),
    )


@case
def var_mean_arg(xp):
    x = T(xp, X)
    m = x.mean(0, keepdims=True)
    return xp.var(x, axis=0, mean=m), xp.std(x, axis=0, mean=m)


@case
def sum_axis_list(xp):
    return T(xp, X).sum(axis=[0, 1])


@case
def argmax_axis_none_keepdims(xp):
    return T(xp, X).argmax(keepdims=True)


@case
def cumsum_axis_none(xp):
    return (
        xp.cumsum(T(xp, X)).shape,
        xp.cumsum(T(xp, X), axis=-1).shape,
        xp.cumulative_sum(T(xp, S), include_initial=True)[:3],
    )


@case
def sort_axis_none_method(xp):
    x = T(xp, X).copy()
    x.sort(axis=None)
    return x


@case
def sort_descending_flag(xp):
    return xp.sort(T(xp, S), descending=True)


@case
def sort_stable(xp):
    return xp.sort(T(xp, S), stable=True)[:3], xp.argsort(T(xp, Y), stable=True)


@case
def sort_kind_bad(xp):
    return xp.sort(T(xp, S), kind="bogus")


@case
def partition_kth_list(xp):
    return xp.sort(xp.partition(T(xp, S), [2, 10])[:3])


@case
def unique_axis(xp):
    return xp.unique(xp.asarray([[1, 2], [1, 2], [3, 4]]), axis=0), xp.unique(T(xp, Y), sorted=True)


@case
def unique_equal_nan(xp):
    return xp.unique(xp.asarray([np.nan, np.nan, 1.0])), xp.unique(
        xp.asarray([np.nan, np.nan, 1.0]), equal_nan=False
    )


@case
def unique_inverse_shape(xp):
    return xp.unique(xp.asarray([[1, 2], [2, 3]]), return_inverse=True)[1].shape


@case
def histogram_weights(xp):
    return xp.histogram(T(xp, S), bins=xp.asarray([-2.0, 0, 2]), weights=xp.ones(50) * 2)


@case
def histogram_auto(xp):
    return xp.histogram(T(xp, S), bins="auto")[0].shape


@case
def histogram_bad_range(xp):
    return xp.histogram(T(xp, S), range=(1, 0))


@case
def bincount_minlength_neg(xp):
    return xp.bincount(T(xp, Y), minlength=-1)


@case
def stack_shape_err(xp):
    return xp.stack([xp.ones(2), xp.ones(3)])


@case
def concat_dtype(xp):
    return (
        xp.concatenate([xp.ones(2, int), xp.ones(2, np.float32)]).dtype,
        xp.concatenate([xp.ones(2, np.int8), xp.ones(2, np.uint8)]).dtype,
        xp.concatenate([xp.ones(2)], dtype=np.float32).dtype,
    )


@case
def concat_0d_err(xp):
    return xp.concatenate([xp.asarray(1.0), xp.asarray(2.0)])


@case
def concat_empty_list(xp):
    return xp.concatenate([])


@case
def split_indices_err(xp):
    return xp.array_split(T(xp, S), 0)


@case
def reshape_order_f(xp):
    return T(xp, X).reshape(5, 20, order="F")


@case
def reshape_newshape_kw(xp):
    return xp.reshape(T(xp, X), shape=(5, 20)).shape


@case
def squeeze_err(xp):
    return xp.squeeze(T(xp, X), axis=0)


@case
def expand_dims_tuple(xp):
    return xp.expand_dims(T(xp, S), (0, 2)).shape, xp.expand_dims(T(xp, S), -1).shape


@case
def moveaxis_err(xp):
    return xp.moveaxis(T(xp, X), 0, 5)


@case
def transpose_err(xp):
    return T(xp, X).transpose(0, 0)


@case
def broadcast_to_err(xp):
    return xp.broadcast_to(T(xp, S), (3, 49))


@case
def einsum_err(xp):
    return xp.einsum("ij,jk->ik", T(xp, X), T(xp, X))


@case
def einsum_optimize(xp):
    return xp.einsum("ij,jk,kl->il", T(xp, X), T(xp, X).T, T(xp, X), optimize=True)


@case
def matmul_0d_err(xp):
    return xp.matmul(xp.asarray(2.0), xp.ones(3))


@case
def matmul_1d(xp):
    return xp.ones(3) @ xp.ones(3), (xp.ones(3) @ xp.ones(3)).shape


@case
def dot_scalar(xp):
    return xp.dot(2, xp.ones(3)), xp.dot(xp.ones((2, 3)), xp.ones(3))


@case
def linalg_err(xp):
    return xp.linalg.inv(xp.zeros((2, 2)))


@case
def linalg_norm_forms(xp):
    x = T(xp, X)
    return (
        xp.linalg.norm(x, ord=1),
        xp.linalg.norm(x, "fro"),
        xp.linalg.norm(x[0], ord=np.inf),
        xp.linalg.norm(x, axis=0, ord=2),
    )


@case
def linalg_eigh_svd(xp):
    x = T(xp, X)
    c = x.T @ x
    w, v = xp.linalg.eigh(c)
    s = xp.linalg.svd(x, compute_uv=False)
    return w, s, xp.linalg.det(c), xp.linalg.matrix_rank(x)


@case
def lstsq(xp):
    x = T(xp, X)
    return xp.linalg.lstsq(x, T(xp, S[:20]), rcond=None)[0]


@case
def take_modes(xp):
    return xp.take(T(xp, S), [0, 55], mode="clip"), xp.take(T(xp, S), [-1, 52], mode="wrap")


@case
def take_oob(xp):
    return xp.take(T(xp, S), [50])


@case
def index_float_err(xp):
    return T(xp, S)[1.0]


@case
def index_list_float_err(xp):
    return T(xp, S)[[1.0, 2.0]]


@case
def index_too_many(xp):
    return T(xp, S)[0, 0]


@case
def index_bool_list(xp):
    return T(xp, S[:3])[[True, False, True]], T(xp, S[:3])[np.array([True, False, True])]


@case
def index_bool_wrong_len(xp):
    return T(xp, S[:3])[np.array([True, False])]


@case
def index_neg_step(xp):
    x = T(xp, X)
    return x[::-2, 1:-1:2], x[-3:], x[:-25], x[5:2]


@case
def index_ellipsis_none(xp):
    x = T(xp, X).reshape(4, 5, 5)
    return x[..., None, 0].shape, x[None, ..., 1].shape, x[0, ..., None].shape


@case
def index_0d_array(xp):
    x = T(xp, S)
    return x[np.array(3)], x[xp.asarray(3)], x[np.int8(4)]


@case
def setitem_broadcast(xp):
    x = xp.zeros((3, 4))
    x[:, 1] = xp.arange(3)
    x[0] = 7
    x[1:, :2] = [[1, 2]]
    return x


@case
def setitem_broadcast_err(xp):
    x = xp.zeros((3, 4))
    x[:, 1] = xp.arange(4)
    return x


@case
def setitem_fancy_dupes(xp):
    x = xp.zeros(5)
    x[[0, 0, 1]] = xp.asarray([1.0, 2.0, 3.0])
    x[[2, 2]] += 1
    return x


@case
def setitem_int_from_float(xp):
    x = xp.zeros(3, int)
    x[0] = 2.9
    x[1:] = xp.asarray([1.7, -1.7])
    return x


@case
def setitem_nan_int(xp):
    x = xp.zeros(3, int)
    x[0] = np.nan
    return x


@case
def iadd_broadcast_err(xp):
    x = xp.zeros(3)
    x += xp.ones((2, 3))
    return x


@case
def iadd_types(xp):
    x = xp.zeros(3, np.float32)
    x += np.float64(1.5)
    x *= 2
    x -= xp.ones(3, np.float64)
    return x, x.dtype


@case
def itruediv_int_err(xp):
    x = xp.ones(3, int)
    x /= 2
    return x


@case
def ifloordiv_int(xp):
    x = xp.arange(6)
    x //= 2
    x %= 2
    x <<= 1
    x |= 1
    return x


@case
def imatmul(xp):
    x = xp.ones((3, 3))
    x @= xp.eye(3) * 2
    return x


@case
def scalar_math_on_0d(xp):
    z = T(xp, S).sum()
    return (
        math.sqrt(abs(z)),
        math.isfinite(z),
        math.floor(z),
        np.isscalar(z),
        isinstance(float(z), float),
    )


@case
def comparison_chain(xp):
    x = T(xp, S)
    return ((x > -1) & (x < 1)).sum(), (~((x > -1) & (x < 1))).sum(), (x == x.max()).argmax()


@case
def and_precedence_err(xp):
    x = T(xp, S)
    return x > -1 & x < 1


@case
def python_and_err(xp):
    x = T(xp, S)
    return (x > 0) and (x < 1)


@case
def in_operator(xp):
    x = T(xp, Y)
    return 2 in x, 9 in x


@case
def len_iter_errs(xp):
    return list(xp.asarray([]))


@case
def list_of_arrays_tolist(xp):
    return [v.tolist() for v in xp.split(xp.arange(6), 3)]


@case
def asarray_nested_sl(xp):
    a = xp.arange(3)
    return xp.asarray([[a[0], a[1]], [a[2], 5]])


@case
def asarray_generator_err(xp):
    return xp.asarray(i for i in range(3))


@case
def asarray_range(xp):
    return xp.asarray(range(5)), xp.array(range(3), dtype=float)


@case
def asarray_dict_err(xp):
    return xp.asarray({"a": 1})


@case
def asarray_bool_int_mix(xp):
    return xp.asarray([True, 2]), xp.asarray([1, 2.5, True]), xp.asarray([np.int8(1), 300])


@case
def asarray_bigint(xp):
    return xp.asarray([2**63]), xp.asarray(2**64 - 1)


@case
def asarray_ragged_err(xp):
    return xp.asarray([[1, 2], [3]])


@case
def asarray_ndmin(xp):
    return xp.array([1, 2], ndmin=3).shape


@case
def asarray_float_strings(xp):
    return xp.asarray(["1.5", "2"], dtype=float)


@case
def frombuffer_fromiter(xp):
    return xp.fromiter(range(4), dtype=float), xp.frombuffer(b"\x01\x02", dtype=np.uint8)


@case
def copy_kw(xp):
    return xp.copy(T(xp, S)).shape, xp.array(T(xp, S), copy=True).shape


@case
def asarray_copy_false(xp):
    return xp.asarray([1, 2], copy=False)


@case
def tolist_nested_0d(xp):
    return (
        xp.asarray(3).tolist(),
        type(xp.asarray(3).tolist()).__name__,
        xp.asarray(np.float16(1.5)).tolist(),
        type(xp.asarray(True).tolist()).__name__,
    )


@case
def where_scalar_dtypes(xp):
    return (
        xp.where(T(xp, S) > 0, 1, 0).dtype,
        xp.where(T(xp, S) > 0, 1.5, 0).dtype,
        xp.where(T(xp, S) > 0, np.float32(1), 0).dtype,
        xp.where(T(xp, S).astype(np.float32) > 0, T(xp, S).astype(np.float32), 0.0).dtype,
    )


@case
def maximum_scalar_dtypes(xp):
    a = xp.arange(3, dtype=np.int8)
    return (
        xp.maximum(a, 1).dtype,
        xp.maximum(a, 1.5).dtype,
        xp.minimum(a, np.int16(1)).dtype,
        (a + True).dtype,
    )


@case
def int_true_divide(xp):
    a = xp.arange(3, dtype=np.int8)
    return (
        (a / 2).dtype,
        (a / np.int8(2)).dtype,
        (a / 2.0).dtype,
        xp.true_divide(a, a).dtype,
        (xp.arange(3, dtype=np.int16) / 2).dtype,
    )


@case
def float32_scalar_promote(xp):
    a = xp.ones(3, np.float32)
    return (
        (a * 2.0).dtype,
        (a * np.float64(2)).dtype,
        (a + xp.asarray(1.0)).dtype,
        (a + 1j if False else a + 1).dtype,
        (a * np.array(2.0)).dtype,
    )


@case
def uint64_int64_mix(xp):
    return (xp.ones(2, np.uint64) + xp.ones(2, np.int64)).dtype, (xp.ones(2, np.uint64) + 1).dtype


@case
def uint_neg_scalar_err(xp):
    return xp.ones(2, np.uint8) + (-1)


@case
def int8_big_scalar_err(xp):
    return xp.ones(2, np.int8) * 1000


@case
def bool_plus_float(xp):
    return (
        (xp.ones(2, bool) + 1.5).dtype,
        (xp.ones(2, bool) * 2).dtype,
        (xp.ones(2, bool) + np.int8(1)).dtype,
    )


@case
def float16_scalar(xp):
    h = xp.ones(2, np.float16)
    return (h + 1).dtype, (h + 70000.0), (h * 1e-8), (h + np.float32(1)).dtype


# --- saving, pickling, lists and scalars, numerics of ML formulas, NumPy interop, printing ---
@case
def save_load(xp):
    b = io.BytesIO()
    np.save(b, T(xp, X))
    b.seek(0)
    return np.load(b)


@case
def savez(xp):
    b = io.BytesIO()
    np.savez(b, a=T(xp, X), y=T(xp, Y))
    b.seek(0)
    d = np.load(b)
    return d["a"], d["y"]


@case
def sl_save(xp):
    b = io.BytesIO()
    xp.save(b, T(xp, X))
    b.seek(0)
    return xp.load(b)


@case
def pickle_roundtrip(xp):
    return pickle.loads(pickle.dumps(T(xp, X) * 2))


@case
def deepcopy_arr(xp):
    x = T(xp, X) * 1
    y = copy.deepcopy(x)
    y[0] = 0
    return x[0], y[0]


@case
def copy_copy(xp):
    x = T(xp, X) * 1
    y = copy.copy(x)
    y[0] = 0
    return x[0]


@case
def json_dump(xp):
    return json.dumps(T(xp, Y[:4]).tolist()), json.dumps({"acc": float(T(xp, X).mean())})


@case
def sum_generator_builtin(xp):
    return sum(xp.asarray([1.0, 2.0]) for _ in range(3))


@case
def np_sum_list_of_arrays(xp):
    return np.sum([T(xp, S[:3]), T(xp, S[3:6])], axis=0)


@case
def sl_sum_list_of_arrays(xp):
    return xp.sum([T(xp, S[:3]), T(xp, S[3:6])], axis=0)


@case
def mean_of_list(xp):
    return xp.mean([1, 2, 3, 4]), xp.std([1.0, 2.0]), xp.max([3, 1, 2]), xp.argmax([3, 1, 5])


@case
def funcs_on_lists(xp):
    return (
        xp.exp([0.0, 1.0]),
        xp.sqrt(4),
        xp.add([1, 2], [3, 4]),
        xp.where([True, False], [1, 2], [3, 4]),
        xp.concatenate([[1, 2], [3]]),
        xp.sort([3, 1, 2]),
    )


@case
def funcs_on_scalars(xp):
    return (
        xp.exp(1.0),
        xp.sqrt(2),
        xp.maximum(1, 2.5),
        xp.log(np.float32(2)),
        xp.abs(-3),
        xp.sign(-2.0),
        xp.floor(2.7),
    )


@case
def np_scalar_results_types(xp):
    return type(xp.exp(1.0)).__name__ if xp is np else "float64"


@case
def minimum_reduce_list(xp):
    return xp.minimum.reduce([3, 1, 2]), xp.add.accumulate([1, 2, 3])


@case
def linspace_retstep(xp):
    return xp.linspace(0, 1, 5, retstep=True), xp.linspace(xp.asarray([0.0, 1.0]), 2, 3, axis=1)


@case
def arange_float_len(xp):
    return (
        xp.arange(0, 1, 0.1).shape,
        xp.arange(1, 2, 0.3),
        xp.arange(10, 0, -3),
        xp.arange(np.float32(0.5), 3),
    )


@case
def astype_bool_float_nan(xp):
    return xp.asarray([np.nan, 0.0, -0.0, 1.0]).astype(bool)


@case
def astype_float_int_nan(xp):
    return xp.asarray([np.nan, np.inf, 1e20, -2.7]).astype(np.int64)[3]


@case
def round_half_even(xp):
    return (
        xp.round(xp.asarray([0.5, 1.5, 2.5, -0.5])),
        xp.round(xp.asarray([1.25, 1.35]), 1),
        xp.round(xp.asarray([1234, 5678]), -2),
    )


@case
def divide_int_floor_neg(xp):
    a = xp.asarray([-7, 7])
    return a // 2, a % 2, xp.fmod(a, 2), xp.remainder(a, -2), a // -2


@case
def float_floor_mod(xp):
    a = xp.asarray([-7.5, 7.5, -0.0])
    return a // 2, a % 2, xp.fmod(a, 2), xp.divmod(a, 2)


@case
def power_forms(xp):
    a = xp.asarray([1.0, 2.0, 4.0])
    return (
        a**0.5,
        a**2,
        a**-1,
        xp.power(a, 3),
        2**a,
        xp.float_power(xp.asarray([2, 3]), 2),
        xp.asarray([2, 3]) ** 2,
    )


@case
def int_power_overflow(xp):
    return xp.asarray([2], np.int8) ** 10


@case
def cumprod_int(xp):
    return xp.cumprod(xp.arange(1, 25))


@case
def large_int_sum(xp):
    return (
        xp.asarray([2**62, 2**62], np.int64).sum(),
        xp.asarray([200, 200], np.uint8).sum(),
        xp.asarray([100, 100], np.int8).sum(dtype=np.int8),
    )


@case
def float32_sum_precision(xp):
    return xp.ones(10**6, np.float32).sum(), (xp.ones(10**6, np.float32) * 0.1).sum()


@case
def mean_float32(xp):
    return (T(xp, X).astype(np.float32) * 1000).mean(), xp.ones(10**6, np.float16).mean()


@case
def var_large_offset(xp):
    return (T(xp, X) + 1e8).var(axis=0)


@case
def softmax_stable_extreme(xp):
    z = xp.asarray([[1000.0, 1000.0, -1000.0]])
    e = xp.exp(z - z.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True), xp.exp(z)


@case
def logsumexp_manual(xp):
    z = T(xp, L)
    m = z.max(1)
    return m + xp.log(xp.exp(z - m[:, None]).sum(1))


@case
def sigmoid_manual(xp):
    z = T(xp, S) * 50
    return 1 / (1 + xp.exp(-z)), xp.tanh(z), xp.log1p(xp.exp(-xp.abs(z)))


@case
def clip_log(xp):
    p = xp.clip(T(xp, S), 1e-7, 1 - 1e-7)
    return -(xp.log(p) + xp.log1p(-p)).mean()


@case
def cosine_similarity(xp):
    x = T(xp, X)
    n = x / xp.linalg.norm(x, axis=1, keepdims=True)
    return n @ n.T


@case
def batch_iteration(xp):
    x = T(xp, X)
    out = []
    for i in range(0, len(x), 6):
        out.append(x[i : i + 6].sum(0))
    return xp.stack(out)


@case
def shuffle_with_perm(xp):
    perm = np.random.default_rng(1).permutation(20)
    x = T(xp, X)
    return x[perm], x[xp.asarray(perm)], T(xp, Y)[perm]


@case
def train_test_split_mask(xp):
    m = np.random.default_rng(1).random(20) < 0.7
    x = T(xp, X)
    return x[m].shape, x[~m].shape, x[xp.asarray(m)].mean(0)


@case
def one_hot_argmax_roundtrip(xp):
    oh = xp.eye(4)[T(xp, Y)]
    return (oh.argmax(1) == T(xp, Y)).all(), oh.sum(0)


@case
def array_ufunc_np_mixed_out(xp):
    x = T(xp, X)
    o = np.empty((20, 5))
    np.add(x, 1, out=o)
    return o


@case
def np_where_mixed(xp):
    return np.where(T(xp, S) > 0, T(xp, S), np.zeros(50))


@case
def np_stack_mixed(xp):
    return np.stack([T(xp, S[:3]), np.ones(3)])


@case
def np_linalg_on_sl(xp):
    x = T(xp, X)
    return np.linalg.inv(x.T @ x), np.linalg.eigh(x.T @ x)[0]


@case
def np_random_choice_sl(xp):
    return np.random.default_rng(0).choice(T(xp, Y), 3)


@case
def np_percentile_sl_list(xp):
    return np.percentile(T(xp, S), [25, 75])


@case
def np_histogram_sl_bins(xp):
    return np.histogram(T(xp, S), bins=xp.linspace(-3, 3, 7))


@case
def float_index_to_int(xp):
    x = T(xp, S)
    i = x.argmax()
    return x[int(i)], x[i], x[i - 1], x[xp.asarray([i, i])]


@case
def range_with_array_len(xp):
    return list(range(T(xp, Y).max() + 1)), [i for i in range(xp.asarray(3))]


@case
def f_string_array(xp):
    return f"{T(xp, Y[:3])}", f"{T(xp, S[:2]).round(2)}", f"{xp.asarray([1.5, 2.0])}"


@case
def print_large_array(xp):
    return str(xp.arange(2000)), repr(xp.arange(2000.0).reshape(40, 50))[:200]


@case
def printoptions(xp):
    with np.printoptions(precision=3, suppress=True):
        return str(T(xp, X[:2]) * 1e-5), repr(xp.asarray([1e-10, 1.0]))


@case
def set_printoptions_sl(xp):
    try:
        np.set_printoptions(threshold=5)
        return str(xp.arange(10))
    finally:
        np.set_printoptions(threshold=1000)


@case
def bfloat16_print(xp):
    import ml_dtypes

    return str(xp.asarray(np.array([1.5, 2.25], ml_dtypes.bfloat16))), xp.asarray(
        np.array([1.5], ml_dtypes.bfloat16)
    ).tolist()


@case
def float16_tolist(xp):
    return xp.asarray(np.array([1.1], np.float16)).tolist(), type(
        xp.asarray(np.array([1.1], np.float16)).tolist()[0]
    ).__name__


@case
def empty_like_shape_dtype(xp):
    e = xp.empty_like(T(xp, Y), dtype=float)
    return e.shape, e.dtype, xp.full_like(T(xp, Y), 2.7).dtype, xp.full_like(T(xp, Y), 2.7)[0]


@case
def zeros_like_list(xp):
    return xp.zeros_like([1, 2]), xp.ones_like([[1.5]]), xp.full_like([True], 3)


_LEFT_OUT = {
    "unique_values",
    "dict_of_counts_direct",
    "view_writes_through_reshape",
    "flat_forms",
    "np_dispatch_types",
    "float16_accum",
    "nanargmax_allnan",
    "astype_str_err",
    "rolling_window",
    "reshape_order_f",
    "scalar_math_on_0d",
    "asarray_generator_err",
    "asarray_dict_err",
}


def _leaves(r: Any) -> list[Any]:
    if isinstance(r, (tuple, list)) and not (
        r and isinstance(r[0], (int, float, bool)) and not isinstance(r[0], np.generic)
    ):
        return [leaf for v in r for leaf in _leaves(v)]
    return [r]


def _same_leaf(got: Any, want: Any) -> None:
    if isinstance(want, (np.ndarray, np.generic)) or isinstance(got, sl.ndarray):
        g, w = np.asarray(got), np.asarray(want)
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, w.dtype, g.shape, w.shape)
        if w.dtype.kind == "f" or w.dtype == ml_dtypes.bfloat16:
            eps = float(ml_dtypes.finfo(w.dtype).eps)
            np.testing.assert_allclose(
                g.astype(np.float64),
                w.astype(np.float64),
                rtol=64 * eps,
                atol=64 * eps,
                equal_nan=True,
            )
        else:
            np.testing.assert_array_equal(g, w)
    elif isinstance(want, float) and math.isnan(want):
        assert isinstance(got, float) and math.isnan(got)
    else:
        assert type(got) is type(want) and got == want, (got, want)


def _run(f: Any, xp: Any) -> Any:
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            return f(xp), None
        except Exception as e:  # noqa: BLE001 - the error is compared
            return None, e


@pytest.mark.parametrize("name", sorted(set(PROGRAMS) - _LEFT_OUT))
def test_a_notebook_program_gives_numpys_result(name: str) -> None:
    want, want_error = _run(PROGRAMS[name], np)
    got, got_error = _run(PROGRAMS[name], sl)
    if want_error is not None:
        assert got_error is not None, f"NumPy raised {want_error!r}, stitchlab gave {got!r}"
        assert isinstance(want_error, type(got_error)) and type(got_error) is not Exception, (
            got_error,
            want_error,
        )
        return
    assert got_error is None, f"stitchlab raised {got_error!r}"
    w, g = _leaves(want), _leaves(got)
    assert len(w) == len(g)
    for a, b in zip(g, w, strict=True):
        _same_leaf(a, b)


# --- the errors of common mistakes: NumPy's type and text (stitchlab may add to it) -----------------
_X12 = np.arange(12.0).reshape(3, 4)
_MISTAKES = {
    "broadcast": lambda xp: xp.ones((3, 4)) + xp.ones((4, 3)),
    "broadcast3": lambda xp: xp.add(xp.ones((3, 4)), xp.ones((2, 1, 3))),
    "matmul": lambda xp: xp.ones((3, 4)) @ xp.ones((3, 4)),
    "matmul_1d": lambda xp: xp.ones(3) @ xp.ones(4),
    "dot": lambda xp: xp.dot(xp.ones((3, 4)), xp.ones((3, 4))),
    "reshape": lambda xp: xp.ones(6).reshape(4, 2),
    "reshape_2neg": lambda xp: xp.ones(6).reshape(-1, -1),
    "index_oob": lambda xp: xp.ones(6)[7],
    "index_oob_2d": lambda xp: xp.asarray(_X12)[1, 9],
    "index_list_oob": lambda xp: xp.asarray(_X12)[[0, 5]],
    "too_many": lambda xp: xp.ones(6)[0, 0],
    "axis": lambda xp: xp.ones((2, 3)).sum(axis=2),
    "axis_neg": lambda xp: xp.ones((2, 3)).mean(axis=-3),
    "axis_argmax": lambda xp: xp.ones((2, 3)).argmax(axis=5),
    "concat": lambda xp: xp.concatenate([xp.ones((2, 3)), xp.ones((2, 4))]),
    "concat_ndim": lambda xp: xp.concatenate([xp.ones((2, 3)), xp.ones(3)]),
    "stack": lambda xp: xp.stack([xp.ones(2), xp.ones(3)]),
    "bool_index": lambda xp: xp.ones(3)[np.array([True, False])],
    "float_index": lambda xp: xp.ones(3)[1.0],
    "truth": lambda xp: bool(xp.ones(3)),
    "truth_empty": lambda xp: bool(xp.ones(0)),
    "int_conv": lambda xp: int(xp.ones(3)),
    "split": lambda xp: xp.split(xp.arange(10), 3),
    "squeeze": lambda xp: xp.squeeze(xp.ones((2, 3)), axis=0),
    "transpose": lambda xp: xp.ones((2, 3)).transpose(0, 0),
    "transpose_n": lambda xp: xp.ones((2, 3)).transpose(0, 1, 2),
    "moveaxis": lambda xp: xp.moveaxis(xp.ones((2, 3)), 0, 5),
    "broadcast_to": lambda xp: xp.broadcast_to(xp.ones(3), (2, 4)),
    "einsum": lambda xp: xp.einsum("ij,jk->ik", xp.ones((2, 3)), xp.ones((2, 3))),
    "bool_sub": lambda xp: xp.ones(2, bool) - xp.ones(2, bool),
    "bool_neg": lambda xp: -xp.ones(2, bool),
    "uint_neg": lambda xp: xp.ones(2, np.uint8) + (-1),
    "int8_big": lambda xp: xp.ones(2, np.int8) * 1000,
    "setitem_shape": lambda xp: xp.zeros((3, 4)).__setitem__((slice(None), 1), xp.arange(4)),
    "iadd_shape": lambda xp: xp.zeros(3).__iadd__(xp.ones((2, 3))),
    "idiv_int": lambda xp: xp.ones(3, int).__itruediv__(2),
    "astype_str": lambda xp: xp.ones(3).astype("U"),
    "zeros_neg": lambda xp: xp.zeros(-1),
    "zeros_float": lambda xp: xp.zeros(2.5),
    "arange_zero_step": lambda xp: xp.arange(0, 5, 0),
    "linspace_neg": lambda xp: xp.linspace(0, 1, -1),
    "eye_float": lambda xp: xp.eye(2.5),
    "full_shape": lambda xp: xp.full((2, 3), [1, 2]),
    "take_oob": lambda xp: xp.take(xp.arange(3), [5]),
    "bincount_neg": lambda xp: xp.bincount(xp.asarray([-1, 2])),
    "bincount_2d": lambda xp: xp.bincount(xp.ones((2, 2), int)),
    "histogram_range": lambda xp: xp.histogram(xp.arange(3.0), range=(1, 0)),
    "percentile_range": lambda xp: xp.percentile(xp.arange(3.0), 150),
    "quantile_range": lambda xp: xp.quantile(xp.arange(3.0), -0.5),
    "argmax_empty": lambda xp: xp.zeros(0).argmax(),
    "max_empty": lambda xp: xp.zeros(0).max(),
    "min_empty_axis": lambda xp: xp.zeros((0, 3)).min(axis=0),
    "inv_singular": lambda xp: xp.linalg.inv(xp.zeros((2, 2))),
    "inv_nonsquare": lambda xp: xp.linalg.inv(xp.ones((2, 3))),
    "solve_shape": lambda xp: xp.linalg.solve(xp.eye(3), xp.ones(2)),
    "clip_no_bounds": lambda xp: xp.clip(xp.arange(3)),
    "where_1arg_more": lambda xp: xp.where(xp.ones(3) > 0, 1),
    "repeat_neg": lambda xp: xp.repeat(xp.arange(3), -1),
    "tile_neg": lambda xp: xp.tile(xp.arange(3), -1),
    "pad_mode": lambda xp: xp.pad(xp.arange(3), 1, mode="bogus"),
    "sort_axis": lambda xp: xp.sort(xp.ones((2, 3)), axis=2),
    "unique_axis": lambda xp: xp.unique(xp.ones((2, 3)), axis=2),
    "cumsum_axis": lambda xp: xp.cumsum(xp.ones((2, 3)), axis=2),
    "diff_n": lambda xp: xp.diff(xp.arange(3), n=-1),
    "searchsorted_side": lambda xp: xp.searchsorted(xp.arange(3), 1, side="middle"),
    "ones_dtype": lambda xp: xp.ones(3, dtype="float128x"),
    "swapaxes": lambda xp: xp.swapaxes(xp.ones((2, 3)), 0, 3),
    "expand_dims": lambda xp: xp.expand_dims(xp.ones((2, 3)), 4),
    "array_split0": lambda xp: xp.array_split(xp.arange(3), 0),
    "outer_ok": lambda xp: xp.outer(xp.ones((2, 2)), xp.ones(3)).shape,
    "cross_bad": lambda xp: xp.cross(xp.ones(4), xp.ones(4)),
    "norm_ord": lambda xp: xp.linalg.norm(xp.ones((2, 2)), ord=3),
    "mean_axis_tuple_dup": lambda xp: xp.ones((2, 3)).mean(axis=(1, -1)),
    "item_oob": lambda xp: xp.ones((2, 2)).item(7),
    "len_0d": lambda xp: len(xp.asarray(2.0)),
    "iter_0d": lambda xp: iter(xp.asarray(2.0)),
    "index_0d": lambda xp: xp.asarray(2.0)[0],
    "reshape_f": lambda xp: xp.ones(6).reshape((2, 3), order="Q"),
}

#: where stitchlab's text says it otherwise (the same type of error): its own words name the value
_OWN_WORDS = {
    "broadcast_to",
    "einsum",
    "zeros_float",
    "repeat_neg",
    "transpose_n",
    "astype_str",
    "iter_0d",
}


@pytest.mark.parametrize("name", sorted(set(_MISTAKES) - {"astype_str"}))
def test_a_mistake_raises_numpys_error(name: str) -> None:
    """The type of NumPy's error (or a base of it: TypeError for its UFuncTypeError) and, but for
    the few in _OWN_WORDS, NumPy's text within stitchlab's message (which may name the value and
    the fix)."""
    _, want = _run(lambda xp: np.asarray(_MISTAKES[name](xp)), np)
    _, got = _run(lambda xp: np.asarray(_MISTAKES[name](xp)), sl)
    if want is None:  # (not a mistake to NumPy: clip without bounds)
        assert got is None, got
        return
    assert got is not None, f"NumPy raised {want!r}"
    assert isinstance(want, type(got)) and type(got) is not Exception, (got, want)
    if name not in _OWN_WORDS:
        assert str(want).strip() in str(got), (str(got), str(want))


@pytest.mark.parametrize(
    "order", ["c", "a", "k", "Q", "CC", 1, b"C", b"a", None, "C", "A", "K"], ids=repr
)
@pytest.mark.parametrize(
    "call",
    [
        "zeros",
        "full",
        "eye",
        "reshape",
        "ravel",
        "astype",
        "asarray",
        "array",
        "einsum",
        "flatten",
        "copy",
        "zeros_like",
        "sl.copy",
    ],
)
def test_order_is_read_as_numpy_reads_it(call: str, order: Any) -> None:
    """An order in lower case or as bytes is NumPy's ('c' was refused with TypeError); one NumPy
    does not take gives its ValueError ('Q', or 'A' for zeros), one that is not a string its
    TypeError (they raised stitchlab's TypeError for Fortran order). 'F' stays refused."""
    run = {
        "zeros": lambda xp: xp.zeros(3, order=order),
        "full": lambda xp: xp.full(3, 1, order=order),
        "eye": lambda xp: xp.eye(2, order=order),
        "reshape": lambda xp: xp.ones(6).reshape(2, 3, order=order),
        "ravel": lambda xp: xp.ones(3).ravel(order=order),
        "astype": lambda xp: xp.ones(3).astype(float, order=order),
        "asarray": lambda xp: xp.asarray([1], order=order),
        "array": lambda xp: xp.array([1], order=order),
        "einsum": lambda xp: xp.einsum("i", xp.ones(3), order=order),
        "flatten": lambda xp: xp.ones(3).flatten(order=order),
        "copy": lambda xp: xp.ones(3).copy(order=order),
        "zeros_like": lambda xp: xp.zeros_like(xp.ones(3), order=order),
        "sl.copy": lambda xp: xp.copy(xp.ones(3), order=order),
    }[call]
    want, want_error = _run(run, np)
    got, got_error = _run(run, sl)
    if want_error is None:
        assert got_error is None, got_error
        _same_leaf(got, want)
    else:
        assert type(got_error) is type(want_error) and str(got_error) == str(want_error)
