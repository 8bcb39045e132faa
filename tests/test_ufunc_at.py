"""NumPy's unbuffered ``ufunc.at`` on stitchlab arrays (``stitchlab/frontend/assign.py``
``ufunc_at``; the scatter step with a ufunc, ``stitchlab/runtime/scatter_at.py``): every kind of
index, repeated positions applied in order, NumPy's loop dtypes and casts, ``np.<ufunc>.at`` and
``sl.<ufunc>.at``, each against NumPy doing the same to a NumPy array; the plans and the errors.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import stitchlab as sl
from stitchlab.ir.dtypes import as_dtype, cast

RNG = np.random.default_rng(4040)

#: ops whose result NumPy computes exactly as the step does, for every dtype they take
EXACT = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "fmax", "fmin", "bitwise_and",
         "bitwise_or", "bitwise_xor", "logical_and", "logical_or", "logical_xor", "floor_divide",
         "remainder", "copysign", "power", "arctan2", "hypot", "logaddexp", "nextafter", "gcd", "lcm",
         "less", "greater_equal", "not_equal"]


def _data(shape: Any, dtype: np.dtype) -> np.ndarray:
    v = RNG.standard_normal(shape) * 5
    if dtype.kind in "iu":
        return RNG.integers(0 if dtype.kind == "u" else -50, 50, size=shape).astype(dtype)
    if dtype == np.bool_:
        return RNG.random(shape) < 0.5
    return v.astype(dtype)


def _same_at(name: str, a: np.ndarray, key: Any, b: Any, lazy_key: bool = False, lazy_b: bool = False) -> None:
    """``np.<name>.at`` on a stitchlab copy of ``a`` gives NumPy's result (or NumPy's error type)."""
    ufunc = getattr(np, name)
    want = a.copy()
    x = sl.asarray(a.copy())
    lk = (tuple(sl.asarray(k) if isinstance(k, np.ndarray) and k.dtype != bool else k for k in key)
          if isinstance(key, tuple) else sl.asarray(key)) if lazy_key else key
    values = () if b is None else (sl.asarray(b) if lazy_b else b,)  # (None: a unary ufunc)
    with np.errstate(all="ignore"):
        try:
            ufunc.at(want, key, *([] if b is None else [b]))
        except Exception as e:  # noqa: BLE001 - the same type of error, whatever it is
            with pytest.raises(type(e)):
                ufunc.at(x, lk, *values)
            return
        ufunc.at(x, lk, *values)
        got = x.get()
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want, err_msg=f"{name}.at, key {key!r}")


def _operand(name: str, shape: Any, dtype: np.dtype) -> np.ndarray:
    v = _data(shape, dtype)
    return v % 3 if name == "power" and dtype.kind in "iu" else v  # (NumPy refuses negative integer powers)


@pytest.mark.parametrize("name", EXACT)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int8", "int32", "uint16", "int64", "bool"])
def test_repeated_positions_accumulate_in_order(name: str, dtype: str) -> None:
    dt = np.dtype(dtype)
    a = _data((40, 6), dt)
    rows = RNG.integers(-40, 40, size=300)  # every row about 7 times
    _same_at(name, a, rows, _operand(name, (300, 6), dt))
    _same_at(name, a, rows, _operand(name, (300, 6), dt), lazy_key=True, lazy_b=True)
    _same_at(name, a, (rows[:50], RNG.integers(0, 6, size=50)), _operand(name, 50, dt))
    _same_at(name, a.ravel(), rows % 240, _operand(name, 1, dt))  # one value broadcast, flat


#: unary ops whose result NumPy computes exactly as the kernels do (or one that is not
#: idempotent, so that repeats show), applied at repeated positions
UNARY = ["negative", "absolute", "square", "sqrt", "reciprocal", "isnan", "logical_not", "invert", "sign", "floor"]


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int16", "uint8", "bool"])
def test_unary_ops_apply_once_per_repeat(name: str, dtype: str) -> None:
    dt = np.dtype(dtype)
    a = np.abs(_data((40, 6), dt)) if name == "sqrt" else _data((40, 6), dt)
    rows = RNG.integers(-40, 40, size=120)  # every row about 3 times
    for key in (rows, (rows[:50], RNG.integers(0, 6, size=50)), (slice(1, None, 2), [5, 5, -1, 0]), (3, [0, 0, 0]),
                rows[:0], RNG.random((40, 6)) < 0.3, RNG.random(40) < 0.5, True, False, (Ellipsis, [1, 1])):
        _same_at(name, a, key, None)
        if isinstance(key, np.ndarray) and key.dtype != bool or isinstance(key, tuple) and key[0] is not Ellipsis:
            _same_at(name, a, key, None, lazy_key=True)


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "maximum", "divide"])
def test_mixed_dtypes_use_numpys_loop_and_cast_back_each_step(name: str) -> None:
    """NumPy takes a Python number as an int64, float64 or bool array (not as a weak scalar), and
    casts each result back to the array's dtype (``unsafe``): an int array plus 1.5 twice is 2,
    float32 plus a float64 value rounds once per step."""
    idx = [0, 1, 0, 0, 2]
    for dtype in ("int8", "uint8", "int32", "float16", "float32", "bool"):
        a = _data(4, np.dtype(dtype))
        for b in (1.5, 300, True, 2.0**-24 + 2.0**-50, np.float32(0.3), np.arange(5) * 0.7, np.arange(5, dtype=np.int16) - 2):
            _same_at(name, a, idx, b)
    x = sl.zeros(3, dtype=np.int64)
    np.add.at(x, [0, 0], 1.5)
    assert x.get().tolist() == [2, 0, 0]


@pytest.mark.parametrize("kind", ["slices", "mask", "device mask", "integers", "ellipsis"])
def test_keys_without_arrays_are_an_update_in_place(kind: str) -> None:
    a = _data((30, 8), np.dtype(np.float32))
    key = {"slices": (slice(2, 25, 3), slice(None, None, -2)), "mask": a > 1, "device mask": a > 1,
           "integers": (3, -1), "ellipsis": (Ellipsis, 2)}[kind]
    shape = a[key].shape
    _same_at("add", a, key, _data(shape, np.dtype(np.float32)), lazy_key=kind == "device mask")
    _same_at("maximum", a, key, 0.5, lazy_key=kind == "device mask")
    if kind != "device mask":
        x = sl.asarray(a)
        np.multiply.at(x, key, 3.0)
        kernels = sl.explain(x).kernels
        assert kernels and not any(n.op == "scatter" for k in kernels for n in k.nodes)  # (a fused where)


def test_keys_of_every_shape_against_numpy() -> None:
    """Random keys with integer arrays: several arrays broadcast, separated by slices, beside
    integers, 2-d, negative, on the host and on the device."""
    a = _data((9, 7, 5), np.dtype(np.float64))
    for _ in range(200):
        key: list[Any] = []
        for n in a.shape:
            r = RNG.random()
            key.append(RNG.integers(-n, n, size=[(4,), (3, 4), (1, 4)][int(RNG.integers(0, 3))]) if r < 0.45 else
                       int(RNG.integers(-n, n)) if r < 0.6 else slice(None, None, int(RNG.choice([1, -1, 2]))))
        t = tuple(key[:int(RNG.integers(1, 4))])
        try:
            shape = a[t].shape
        except IndexError:
            continue
        b = _data(shape[int(RNG.integers(0, len(shape) + 1)):] if shape else (), np.dtype(np.float64))
        _same_at("add", a, t, b, lazy_key=bool(RNG.random() < 0.5), lazy_b=bool(RNG.random() < 0.5))
        _same_at("subtract", a, t, 1.25)


def test_bfloat16_rounds_each_step_once() -> None:
    """bfloat16 arrays: the op in bfloat16 (float32, rounded once: ml_dtypes' loops); with float64
    values in float64, each result rounded once to bfloat16 (stitchlab's cast)."""
    bf16 = as_dtype("bfloat16")
    a = _data(16, bf16)
    idx = RNG.integers(0, 16, size=200)
    v = _data(200, bf16)
    _same_at("add", a, idx, v)
    _same_at("multiply", a, idx, v)
    w = RNG.standard_normal(200) * 0.01
    want = a.copy()
    for i, val in zip(idx, w, strict=True):
        want[i] = cast(np.asarray(np.float64(want[i]) + val), bf16)
    for lazy in (False, True):
        x = sl.asarray(a)
        np.add.at(x, sl.asarray(idx) if lazy else idx, w)
        np.testing.assert_array_equal(x.get().view(np.uint16), want.view(np.uint16))


def test_sl_functions_have_at_and_arrays_built_before_keep_their_value() -> None:
    a = np.arange(6.0)
    x = sl.asarray(a)
    before = x * 1
    sl.add.at(x, [1, 1, 5], 2.0)
    sl.maximum.at(x, [0], 9.0)
    np.testing.assert_array_equal(x.get(), [9.0, 5.0, 2.0, 3.0, 4.0, 7.0])
    np.testing.assert_array_equal(before.get(), a)
    np.testing.assert_array_equal(a, np.arange(6.0))  # (wrapped data is not written)
    sl.power.at(x, [2, 2], 2.0)  # (every binary ufunc, power's written-out function too)
    assert x.get()[2] == 16.0
    sl.sqrt.at(x, [2, 2, 0])  # (and every unary one)
    np.testing.assert_array_equal(x.get()[:3], [3.0, 5.0, 2.0])


def test_histogram_of_weights_with_device_bins() -> None:
    """``np.add.at(hist, bins, weights)``: bins computed lazily (on the device on the GPU)."""
    v = RNG.standard_normal(5000)
    bins = np.clip(((v + 3) * 4).astype(np.int64), 0, 23)
    want = np.zeros(24)
    np.add.at(want, bins, v * v)
    x = sl.asarray(v)
    hist = sl.zeros(24)
    np.add.at(hist, sl.clip(((x + 3) * 4).astype(np.int64), 0, 23), x * x)
    np.testing.assert_array_equal(hist.get(), want)


def test_errors() -> None:
    x = sl.zeros(5)
    with pytest.raises(ValueError, match="second operand needed"):
        np.add.at(x, [0])
    with pytest.raises(ValueError, match="second operand provided when ufunc is unary"):
        np.negative.at(x, [0, 1], 1.0)
    with pytest.raises(TypeError, match="two inputs share a dtype"):
        np.ldexp.at(x, [0], 2)
    with pytest.raises(TypeError, match="numpy boolean subtract"):
        np.subtract.at(sl.zeros(3, dtype=bool), [0], True)
    with pytest.raises(IndexError, match="index 5 is out of bounds for axis 0 with size 5"):
        np.add.at(x, [0, 5], 1.0)
    y = sl.zeros(5)
    np.add.at(y, sl.asarray(np.array([0, 5])), 1.0)
    with pytest.raises(IndexError, match="index 5 is out of bounds"):
        y.get()
    with pytest.raises(ValueError, match=r"values of shape \(3,\) do not broadcast to the indexed shape \(2,\)"):
        np.add.at(x, [0, 1], [1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match="takes no keyword"):
        np.add.at(x, [0], 1.0, out=x)
    with pytest.raises(TypeError, match="writes into a stitchlab array"):
        sl.add.at(np.zeros(3), [0], 1.0)
    base = sl.zeros((3, 3))
    with pytest.raises(TypeError, match="view"):
        np.add.at(base.T[0], [0, 0], 1.0)
    np.add.at(base[0], [0, 0], 1.0)  # a view by indexing writes through, as NumPy's
    np.testing.assert_array_equal(base.get(), [[2.0, 0, 0], [0, 0, 0], [0, 0, 0]])


def test_jit_refuses_an_argument_and_takes_a_local_array() -> None:
    @sl.jit
    def counts(idx: Any) -> Any:
        h = sl.zeros(8, dtype=np.int64)
        np.add.at(h, idx, 1)
        return h

    idx = RNG.integers(0, 8, size=100)
    want = np.bincount(idx, minlength=8)
    np.testing.assert_array_equal(counts(sl.asarray(idx)).get(), want)
    np.testing.assert_array_equal(counts(sl.asarray(idx)).get(), want)

    @sl.jit
    def into_argument(h: Any) -> Any:
        np.add.at(h, [0, 0], 1.0)
        return h

    with pytest.raises(TypeError, match="argument"):
        into_argument(sl.zeros(3))


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int32", "uint32", "int64", "uint64", "float16", "float32",
                                   "float64", "bfloat16"])
def test_generated_kernels_compile(dtype: str) -> None:
    """The step's kernels (the sorted pass for every op's loop, the atomic pass where the dtype
    has one) compile with NVRTC for sm_90, for the array's own loop and a float64 or int64 one
    (no GPU needed)."""
    pytest.importorskip("cuda.bindings.nvrtc", reason="NVRTC (pip cuda-bindings) is not installed")
    from stitchlab.runtime import scatter_at
    from stitchlab.runtime.nvrtc import compile_cubin

    x = as_dtype(dtype)
    wide = np.dtype(np.float64 if x.kind == "f" or dtype == "bfloat16" else np.int64)
    compiled = 0
    for name in ("add", "subtract", "multiply", "divide", "maximum", "bitwise_or", "logical_and", "less", "power"):
        for values in {x, wide}:
            try:
                loop = getattr(np, name).resolve_dtypes((x, values, None))
            except TypeError:  # (no loop for these dtypes: NumPy raises as the front end does)
                continue
            if loop[0] == loop[1]:
                compile_cubin(scatter_at._source(name, x, loop[0]), "sl_scatter_at", "sm_90")
                compiled += 1
    assert compiled >= 5


def test_sort_kernels_compile() -> None:
    """The step's sort of (position, order) by ranks, with 32- and 64-bit keys, its placing
    kernel and the keys of the longer lists CuPy sorts compile with NVRTC for sm_90 (run on the
    GPU by tests/gpu/test_ufunc_at_gpu.py)."""
    pytest.importorskip("cuda.bindings.nvrtc", reason="NVRTC (pip cuda-bindings) is not installed")
    from stitchlab.runtime import scatter_at
    from stitchlab.runtime.nvrtc import compile_cubin

    for key in ("unsigned int", "unsigned long long"):
        assert compile_cubin(scatter_at._keyed(scatter_at._RANK, key), "sl_rank_entries", "sm_90")[0]
        assert compile_cubin(scatter_at._keyed(scatter_at._KEYS, key), "sl_sort_keys", "sm_90")[0]
    assert compile_cubin(scatter_at._PLACE, "sl_place_entries", "sm_90")[0]


@pytest.mark.parametrize(("shape", "key", "b"), [
    ((3,), [0, 1], np.ones((1, 2))), ((3,), [0, 1], np.ones((1, 1, 2))), ((3, 2), [0, 0], np.ones(2)),
    ((), (), 5.0), ((4,), True, 1.0), ((4,), False, 1.0), ((4,), np.True_, np.ones((1, 4))), ((4,), True, np.ones((2, 4))),
    ((4,), [[0, 1], [1, 1]], 1.0), ((4, 3), (slice(None), [0, 0]), np.arange(8.0).reshape(4, 2)),
    ((4, 3), ([0, 0], slice(1, None)), np.arange(4.0).reshape(2, 2)), ((4,), [], []),
    ((4,), np.array([], dtype=np.int64), 1.0), ((4,), [0, 1], [1.0, 2.0, 3.0]), ((4,), [0, -5], 1.0),
], ids=lambda v: repr(v)[:24])
def test_edge_keys_and_values(shape: tuple[int, ...], key: Any, b: Any) -> None:
    """Values with leading axes of one, a bool key (all of ``x`` once, or nothing), 0-d arrays,
    empty keys, nested lists: NumPy's result or NumPy's error type."""
    _same_at("add", np.arange(float(np.prod(shape))).reshape(shape), key, b)
