"""Property test: random expression graphs match NumPy eager in values, shapes and dtypes."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import stitchlab as sl

DTYPES = ["bool", "int8", "int32", "int64", "uint8", "float16", "float32", "float64"]
UNARY = ["negative", "absolute", "exp", "log1p", "sqrt", "square", "sin", "tanh", "floor", "sign", "isnan", "logical_not"]
BINARY = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "fmax", "less", "equal", "logical_and", "floor_divide"]
REDUCE = ["sum", "max", "min", "mean", "any", "prod", "var"]


def np_call(fn, *args, **kw):
    with np.errstate(all="ignore"):
        return np.asarray(getattr(np, fn)(*args, **kw))


def sl_call(fn, *args, **kw):
    return getattr(sl, fn)(*args, **kw)


@st.composite
def programs(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=ndim, max_size=ndim)))
    values = []
    for _ in range(draw(st.integers(1, 3))):
        dtype = draw(st.sampled_from(DTYPES))
        sub = tuple(d if draw(st.booleans()) else 1 for d in shape)[draw(st.integers(0, ndim - 1)):]
        seed = draw(st.integers(0, 2**16))
        raw = np.random.default_rng(seed).uniform(-4, 4, size=sub)
        values.append(raw.astype(dtype) if dtype != "bool" else raw > 0)
    steps = draw(st.lists(st.tuples(st.sampled_from(["unary", "binary", "scalar", "reduce", "layout"]),
                                    st.integers(0, 10**6)), min_size=1, max_size=8))
    return values, steps


def apply(kind, r, env_np, env_sl):
    """Apply one random step to both environments; returns False when the step is not valid."""
    i = r % len(env_np)
    a_np, a_sl = env_np[i], env_sl[i]
    if kind == "unary":
        fn = UNARY[r // 7 % len(UNARY)]
        try:
            out_np = np_call(fn, a_np)
        except TypeError:
            return False
        env_np.append(out_np)
        env_sl.append(sl_call(fn, a_sl))
    elif kind in ("binary", "scalar"):
        fn = BINARY[r // 7 % len(BINARY)]
        if kind == "binary":
            j = r // 101 % len(env_np)
            b_np, b_sl = env_np[j], env_sl[j]
        else:
            b_np = b_sl = [2, -1.5, True, 3][r // 13 % 4]
        try:
            out_np = np_call(fn, a_np, b_np)
        except (TypeError, ValueError, OverflowError):
            return False
        env_np.append(out_np)
        env_sl.append(sl_call(fn, a_sl, b_sl))
    elif kind == "reduce":
        fn = REDUCE[r // 7 % len(REDUCE)]
        axis = None if r % 5 == 0 else tuple(ax for ax in range(a_np.ndim) if (r >> ax) & 1) or (0 if a_np.ndim else None)
        keepdims = bool(r & 8)
        if fn in ("max", "min") and a_np.size == 0:
            return False
        # float16 sums, means and variances work in float32 and round once (docs/user-guide.md,
        # "float16 ... accumulate in float32"): NumPy's own float16 steps overflow to inf past 65504
        # where the float32 result does not (a variance of [232, -139])
        wide = fn in ("sum", "mean", "var") and a_np.dtype == np.float16
        try:
            out_np = np_call(fn, a_np.astype(np.float32) if wide else a_np, axis=axis, keepdims=keepdims)
        except TypeError:
            return False
        if wide:
            out_np = out_np.astype(np.float16)
        env_np.append(out_np)
        env_sl.append(sl_call(fn, a_sl, axis=axis, keepdims=keepdims))
    else:
        choice = r // 7 % 4
        if choice == 0:
            env_np.append(a_np.T)
            env_sl.append(a_sl.T)
        elif choice == 1:
            env_np.append(a_np.reshape(-1))
            env_sl.append(a_sl.reshape(-1))
        elif choice == 2 and a_np.ndim:
            env_np.append(a_np[..., ::-1, None] if a_np.ndim else a_np)
            env_sl.append(a_sl[..., ::-1, None])
        else:
            env_np.append(a_np[None])
            env_sl.append(a_sl[None])
    return True


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_random_graphs_match_numpy(program):
    values, steps = program
    env_np = [np.asarray(v) for v in values]
    env_sl = [sl.asarray(v) for v in values]
    for kind, r in steps:
        apply(kind, r, env_np, env_sl)
    outputs = env_sl[len(values):] or env_sl
    expected = env_np[len(values):] or env_np
    got = sl.compute(*outputs)
    # a float16 value anywhere in the chain bounds the precision of what is computed from it (a
    # float16 variance added to an int64 array is float64, with float16's error)
    half = any(v.dtype == np.float16 for v in env_np)
    for g, e, lazy in zip(got, expected, outputs, strict=False):
        assert lazy.shape == e.shape
        assert lazy.dtype == e.dtype, (lazy.dtype, e.dtype)
        assert g.shape == e.shape and g.dtype == e.dtype
        if e.dtype.kind == "f":
            tol = 2e-2 if half else 1e-5
            np.testing.assert_allclose(g, e, rtol=tol, atol=tol, equal_nan=True)
        else:
            np.testing.assert_array_equal(g, e)
