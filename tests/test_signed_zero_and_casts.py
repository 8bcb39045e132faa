"""Results that depend on operand order or on how often a cast rounds, bit for bit as NumPy.

* ``maximum``/``minimum`` are not commutative bit for bit: of two equal values (``-0.0`` and
  ``+0.0``) NumPy returns one operand by position, and of two NaNs the first one (its payload and
  sign). The canonical form must keep their operands in order (so must ``fmax``/``fmin``).
* float64 -> float16 rounds once in NumPy. Through float32 it can round twice: a float64 just above
  a float16 midpoint rounds to the midpoint in float32, and the midpoint then rounds to even. The
  generated CUDA converts with PTX ``cvt.rn.f16.f64``.

CPU tests: the numpy backend against NumPy, and the generated source/PTX (NVRTC, no GPU). The GPU
checks are in ``tests/gpu/test_casts_gpu.py``.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
from floatbits import bits, compile_or_fail, kernel_body, nan_with_payload, ptx_of

import stitchlab as sl
from stitchlab.ir import OPS, build_graph

FLOATS = [np.float16, np.float32, np.float64]
#: float64 values whose float16 rounding differs when it goes through float32: just above the
#: midpoint of 1 and 1 + 2**-10; just below the overflow threshold 65520; just above half the
#: smallest subnormal (and their negatives)
DOUBLE_ROUNDING = np.array([1 + 2.0**-11 + 2.0**-40, 65519.99999, 2.0**-25 + 2.0**-60])
DOUBLE_ROUNDING = np.concatenate([DOUBLE_ROUNDING, -DOUBLE_ROUNDING])


def order_cases(dtype: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(a, b, c)`` where ``a - c`` and ``b`` are signed zeros of both signs, NaNs with distinct
    payloads and signs, and ordinary values."""
    n1, n2 = nan_with_payload(dtype, 1), nan_with_payload(dtype, 2, negative=True)
    a = np.array([1.0, -0.0, 0.0, -0.0, 0.0, n1, n1, 2.0, 3.0, -1.0], dtype)
    b = np.array([0.0, 0.0, -0.0, -0.0, 0.0, n2, 1.0, n2, 1.0, -2.0], dtype)
    c = np.zeros_like(a)
    return a, b, c


# --- maximum and minimum keep their operand order ----------------------------------------------
@pytest.mark.parametrize("name", ["maximum", "minimum", "fmax", "fmin"])
def test_order_dependent_binary_ops_are_not_commutative(name: str) -> None:
    assert not OPS[name].commutative
    x, y = sl.asarray(np.ones(3, np.float32)), sl.asarray(np.zeros(3, np.float32))
    fn = getattr(sl, name)
    key = build_graph([fn(sl.exp(x), y)._node])[0].key
    assert key != build_graph([fn(y, sl.exp(x))._node])[0].key


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", ["maximum", "minimum", "fmax", "fmin"])
def test_maximum_of_signed_zeros_and_nans_is_numpys_on_the_numpy_backend(
    numpy_backend: None, dtype: Any, name: str
) -> None:
    """``maximum(a - c, b)`` and ``maximum(b, a - c)``: whichever way round the canonical sort
    would put them, the result is NumPy's for the operands as written (sign of zero and NaN
    payload included)."""
    a, b, c = order_cases(dtype)
    x, y, z = (sl.asarray(v) for v in (a, b, c))
    np_fn, sl_fn = getattr(np, name), getattr(sl, name)
    with np.errstate(all="ignore"):
        for got, want, what in [
            (sl_fn(x - z, y), np_fn(a - c, b), f"{name}(a - c, b)"),
            (sl_fn(y, x - z), np_fn(b, a - c), f"{name}(b, a - c)"),
            (sl_fn(x, y), np_fn(a, b), f"{name}(a, b)"),
            (sl_fn(y, x), np_fn(b, a), f"{name}(b, a)"),
        ]:
            g = got.get()
            assert g.dtype == want.dtype
            assert np.array_equal(bits(g), bits(want)), f"{what}: bits {bits(g)} want {bits(want)}"


def test_both_orders_in_one_graph_stay_two_nodes(numpy_backend: None) -> None:
    a, b, _ = order_cases(np.float64)
    x, y = sl.asarray(a), sl.asarray(b)
    g = build_graph([sl.maximum(x, y)._node, sl.maximum(y, x)._node])[0]
    assert [n.op for n in g.nodes].count("maximum") == 2
    p, q = sl.compute(sl.maximum(x, y), sl.maximum(y, x))
    assert np.array_equal(bits(np.asarray(p)), bits(np.maximum(a, b)))
    assert np.array_equal(bits(np.asarray(q)), bits(np.maximum(b, a)))


# --- float64 -> float16 rounds once ---------------------------------------------------------------
def test_double_rounding_cases_differ_through_float32() -> None:
    """The cases are real: through float32 every one of them gives other float16 bits."""
    with np.errstate(over="ignore"):
        direct = DOUBLE_ROUNDING.astype(np.float16)
        twice = DOUBLE_ROUNDING.astype(np.float32).astype(np.float16)
    assert (bits(direct) != bits(twice)).all()


def test_float64_to_float16_rounds_once_on_the_numpy_backend(numpy_backend: None) -> None:
    x = sl.asarray(DOUBLE_ROUNDING)
    with np.errstate(over="ignore"):
        want = DOUBLE_ROUNDING.astype(np.float16)
        assert np.array_equal(bits(x.astype(np.float16).get()), bits(want))
        assert np.array_equal(bits((x * 1.0).astype(np.float16).get()), bits(want))


def test_integers_to_float16_through_float32_round_once() -> None:
    """Why integer -> float16 needs no direct conversion: an integer of magnitude up to 2**24 is
    exact in float32, and every larger one is past float16's overflow threshold (65520), so the
    float32 step never rounds where it matters. Checked on every int32 in [-2**17, 2**17] and
    on large int64/uint64 values."""
    r = np.arange(-(2**17), 2**17 + 1, dtype=np.int64)
    big = np.array([2**24 - 1, 2**24 + 1, 2**53 + 1, 2**63 - 1, -(2**63), 65519, 65520, -65520], np.int64)
    ubig = np.array([2**64 - 1, 2**32 + 1, 65519, 65520], np.uint64)
    with np.errstate(over="ignore"):
        for v in (r, big, ubig, r.astype(np.int32)):
            assert np.array_equal(bits(v.astype(np.float16)), bits(v.astype(np.float32).astype(np.float16)))


# --- the generated CUDA (NVRTC, no GPU) -----------------------------------------------------------
@pytest.mark.parametrize(
    "build",
    [
        lambda x: x.astype(np.float16),
        lambda x: (sl.exp(x) * 0.5).astype(np.float16),
        lambda x: (x.astype(np.float16) * x.astype(np.float16)) + 1.0,
        lambda x: x - sl.linspace(0.0, 1.0, x.shape[-1], dtype=np.float16).astype(np.float64),
    ],
    ids=["astype", "expr", "half-chain", "linspace"],
)
def test_float64_to_float16_is_one_cvt_inptx(build: Any) -> None:
    x = sl.asarray(np.linspace(-3, 3, 8 * 40).reshape(8, 40))
    (k,) = sl.explain(build(x)).kernels
    assert "sl_d2h(" in kernel_body(k.source)
    ptx = ptx_of(k.source)
    assert "cvt.rn.f16.f64" in ptx
    assert "cvt.rn.f32.f64" not in ptx, "a float64 value rounds to float32 on its way to float16"
    compile_or_fail(k.source, k.name)


def test_float16_iota_converts_from_double_once() -> None:
    from stitchlab.frontend.creation import _iota

    y = _iota(40, 0.1, 1 / 3, np.dtype(np.float16)) * 2.0
    (k,) = sl.explain(y).kernels
    ptx = ptx_of(k.source)
    assert "cvt.rn.f16.f64" in ptx and "cvt.rn.f32.f64" not in ptx
    compile_or_fail(k.source, k.name)


def test_maximum_keeps_its_operand_order_in_generated_code() -> None:
    """``sl_maximum``'s first argument is the first operand as written, whichever sorts first."""
    x, y = (sl.asarray(np.ones((8, 40), np.float32)) for _ in range(2))
    for fn, dev in [(sl.maximum, "sl_maximum"), (sl.minimum, "sl_minimum"), (sl.fmax, "fmax"), (sl.fmin, "fmin")]:
        for first_exp in (True, False):
            out = fn(sl.exp(x), y) if first_exp else fn(y, sl.exp(x))
            (k,) = sl.explain(out).kernels
            body = kernel_body(k.source)
            exp_var = re.search(r"(\w+) = \(float\)\(exp\(", body).group(1)
            first, second = re.search(rf"\b{dev}\((\w+), (\w+)\)", body).groups()
            assert (first, second)[0 if first_exp else 1] == exp_var, (fn.__name__, body)
            compile_or_fail(k.source, k.name)


@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_float16_maximum_selects_half_bits_without_rounding(name: str) -> None:
    """NumPy's float16 maximum/minimum pick one operand's bits (NaN payload kept): so do
    ``sl_hmax``/``sl_hmin``; no conversion back to float16 is needed."""
    x, y = (sl.asarray(np.ones((8, 40), np.float16)) for _ in range(2))
    (k,) = sl.explain(getattr(sl, name)(x, y)).kernels
    body = kernel_body(k.source)
    assert f"sl_h{name[:3]}(" in body and "sl_f2h(" not in body, body
    assert "cvt.rn.f16.f32" not in ptx_of(k.source)
    compile_or_fail(k.source, k.name)
