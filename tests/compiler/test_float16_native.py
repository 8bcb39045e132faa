"""float16 elementwise chains add, subtract and multiply in half precision, with NumPy's bits.

NumPy computes a float16 ``+``, ``-``, ``*`` in float32 and rounds to float16; float32 has enough
bits (24 >= 2 * 11 + 2) that this double rounding gives the correctly rounded float16 result,
which is what PTX ``add.rn.f16``/``sub.rn.f16``/``mul.rn.f16`` compute. So a float16 value stays
in its 16 bits between such ops and is converted to float only where an op needs float (tanh,
division, comparisons, reductions), rounded back once.

The CPU tests read the generated code and compile it with NVRTC; the GPU tests compare results
with NumPy bit for bit. On the GPU machine:
``PYTHONPATH=. python3 -m pytest -m gpu tests/compiler/test_float16_native.py -q``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from floatbits import compile_or_fail, kernel_body, ptx_of

import stitchlab as sl
from stitchlab.codegen import emit
from stitchlab.codegen.preamble import PREAMBLE
from stitchlab.plan.cost import Schedule

from .workloads import bias_gelu

F16 = np.float16


def _f16(*shapes: tuple[int, ...], seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal(s) * 2).astype(F16) for s in shapes]


# --- the generated code (CPU) ------------------------------------------------------------------------
def test_bias_gelu_float16_converts_only_around_tanh() -> None:
    x, b = _f16((256, 4096), (4096,))
    (k,) = sl.explain(*bias_gelu(x, b)).kernels
    body = kernel_body(k.source)
    assert k.schedule.family == "pointwise" and k.schedule.vec > 1
    # two element paths (16-byte vectors, scalar tail), each: loads and the store move bits, the
    # ten add/multiply ops are half instructions, one conversion into tanh and one out of it
    assert body.count("sl_h2f(") == 2 and body.count("sl_f2h(") == 2, body
    assert body.count("sl_hadd(") == 6 and body.count("sl_hmul(") == 12, body
    assert "sl_round_half" not in body and "sl_load(" not in body and "float v" in body
    compile_or_fail(k.source, k.name)


def test_half_instructions_round_each_op_and_are_never_fused() -> None:
    a, b, c = _f16((8, 40), (8, 40), (8, 40), seed=1)
    x, y, z = (sl.asarray(v) for v in (a, b, c))
    (k,) = sl.explain(x * y + z - x * z).kernels
    ptx = ptx_of(k.source)
    assert "mul.rn.f16" in ptx and "add.rn.f16" in ptx and "sub.rn.f16" in ptx
    assert "fma" not in ptx.replace("fma.rn.f32", "")  # no fused half multiply-add
    assert "cvt.f32.f16" not in ptx and "cvt.rn.f16.f32" not in ptx  # no float anywhere


def test_float_ops_round_once_and_their_float16_inputs_convert_once() -> None:
    a, b = _f16((8, 40), (8, 40), seed=2)
    x, y = (sl.asarray(v) for v in (a, b))
    s = x + y
    (k,) = sl.explain(sl.exp(s) / s + s * 2).kernels
    paths = kernel_body(k.source).split("} else {")
    assert len(paths) == 2  # 16-byte vectors, scalar tail
    for path in paths:
        # s converted once for exp and the division; exp(s) once for the division; two roundings
        converted = re.findall(r"sl_h2f\((\w+)\)", path)
        assert len(converted) == len(set(converted)) == 2, path
        assert path.count("sl_f2h(") == 2 and path.count("sl_hadd(") == 2 and path.count("sl_hmul(") == 1, path
    compile_or_fail(k.source, k.name)


def _chains(xp: Any, a: Any, b: Any, c: Any) -> list[Any]:
    """float16 expressions over three arrays, written once for NumPy and stitchlab (``xp``)."""
    return [
        a + b, a - b, a * b, -a, abs(a), xp.square(a), +a,
        ((a + b) * c - a) * (-b) + abs(c) * 0.5 - 3.0,
        xp.where(a > b, a * b, -c + 1.0),
        (a * b) / c + xp.sqrt(abs(a)) - c,  # float ops (IEEE / and sqrt) between half ones
        xp.floor(a * 0.5 - c) * b,
        (a * 3.0).astype(np.float32).astype(np.float16) - b,
    ]


def test_float16_chains_compile_for_every_schedule() -> None:
    a, b, c = _f16((6, 37), (6, 37), (6, 37), seed=3)
    x, y, z = (sl.asarray(v) for v in (a, b, c))
    for k in sl.explain(*_chains(sl, x, y, z)).kernels:
        compile_or_fail(k.source, k.name)
    # row values (a maximum, a sum) entering half ops; 64 columns allow 16-byte row vectors
    x, y, z = (sl.asarray(v) for v in _f16((6, 64), (6, 64), (6, 64), seed=4))
    m = x.max(axis=1, keepdims=True)
    s = (x * y - z).sum(axis=1, keepdims=True)
    outs = [(x - m) * y + s * 2.0, -(x * z) * m, abs(s - m)]
    (k,) = sl.explain(*outs).kernels
    for sched in [Schedule("row_warp", block=128, cache="registers"), Schedule("row_block", block=256, cache="shared"),
                  Schedule("row_block", block=128, cache="none", index="long long"),
                  Schedule("row_warp", block=128, vec=8, cache="registers"), Schedule("column", block=32, ty=8)]:
        ks = emit(k.info, sched)
        assert (ks.schedule.vec == 8) == ("sl_vec<sl_half, 8>" in ks.source)
        compile_or_fail(ks.source, ks.name)


def _selections(xp: Any, x: Any, t: Any) -> list[Any]:
    """where() over a row's cached float16 values: cross-entropy's pick of the target logit (a
    one-hot sum: exactly x[t]) and a clamp, both against the row's maximum."""
    m = x.max(axis=1, keepdims=True)
    onehot = t.reshape(-1, 1) == xp.arange(x.shape[1], dtype=t.dtype)
    return [xp.where(onehot, x, 0.0).sum(axis=1, keepdims=True) - m, xp.where(x > 0, x, 0.0) - m]


def test_selections_of_cached_float16_values_select_floats() -> None:
    """A row cache holds float16 values as floats: where() picks among them without converting
    each to half bits and back (cross-entropy float16: 1824 -> 1688 SASS instructions)."""
    x = sl.asarray(_f16((64, 4096), seed=5)[0])
    t = sl.asarray(np.arange(64, dtype=np.int32) * 7)
    (k,) = sl.explain(*_selections(sl, x, t)).kernels
    assert k.schedule.cache == "registers"
    body = kernel_body(k.source)
    assert re.search(r"const float v\d+ = \(v\d+ \? v\d+ : 0\.0f\);", body), body
    assert not re.search(r"const sl_half v\d+ = \(v\d+ \? v\d+ : sl_half\{0x0000\}\);", body)
    compile_or_fail(k.source, k.name)


def test_float16_exp_and_sigmoid_use_the_hardware_exp2() -> None:
    """exp with a float16 result is one multiply and one MUFU.EX2 (``sl_exp_f16``): its error is
    far below float16's step (the GPU test below checks every float16 input); float32 keeps
    CUDA's accurate ``exp``."""
    a = _f16((8, 40), seed=6)[0]
    for x, fast in ((sl.asarray(a), True), (sl.asarray(a.astype(np.float32)), False)):
        (k,) = sl.explain(sl.exp(x), sl.sigmoid(x) * 2).kernels
        body = kernel_body(k.source)
        assert body.count("sl_exp_f16(") == (4 if fast else 0), body  # exp and sigmoid, two paths
        compile_or_fail(k.source, k.name)


def test_float16_tanh_uses_the_hardware_tanh() -> None:
    """tanh with a float16 result is the MUFU's ``tanh.approx.f32`` (``sl_tanh_f16``; CUDA's tanhf
    before sm_75): faithful for every float16 input (the GPU test below); float32 keeps tanhf."""
    a = _f16((8, 40), seed=7)[0]
    for x, fast in ((sl.asarray(a), True), (sl.asarray(a.astype(np.float32)), False)):
        (k,) = sl.explain(sl.tanh(x) * 2).kernels
        body = kernel_body(k.source)
        assert body.count("sl_tanh_f16(") == (2 if fast else 0), body  # two element paths
        assert ("tanh(" in body.replace("sl_tanh_f16(", "")) == (not fast), body
        compile_or_fail(k.source, k.name)
    assert "tanh.approx.f32" in PREAMBLE and "__CUDA_ARCH__ >= 750" in PREAMBLE


# --- NumPy's bits on the GPU -------------------------------------------------------------------------
SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 65504, -65504, 65472, 32768, 256, 255.9,
                     2.0**-24, -(2.0**-24), 2.0**-14, 1023 * 2.0**-24, 1.0, -1.0, 0.5, 3.0], dtype=F16)


def _hard_inputs(shape: tuple[int, ...], seed: int) -> np.ndarray:
    """float16 values of every kind: random bit patterns (NaN, inf, subnormals included), values
    whose sums and products land near 65504, subnormals; at the start, pairs of ``SPECIALS``
    (arrays of even and odd ``seed`` hold every pair)."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    bits = rng.integers(0, 1 << 16, n, dtype=np.uint16).view(F16)
    big = (rng.uniform(100, 300, n) * rng.choice([-1, 1, 128, -128], n)).astype(F16)  # 300*300, 2*38400
    tiny = (rng.integers(-1023, 1024, n) * 2.0**-24).astype(F16)
    kind = rng.integers(0, 3, n)
    out = np.where(kind == 0, bits, np.where(kind == 1, big, tiny))
    # every pair of specials between the first and second array (as far as the size allows)
    pairs = [np.repeat(SPECIALS, SPECIALS.size), np.tile(SPECIALS, SPECIALS.size)][seed % 2]
    out[: pairs.size] = pairs[:n]
    return out.reshape(shape)


def _finite_inputs(shape: tuple[int, ...], seed: int) -> np.ndarray:
    """Finite float16 values of moderate size, a tenth of them subnormal, some signed zeros."""
    rng = np.random.default_rng(seed)
    out = (rng.standard_normal(shape) * 8).astype(F16)
    pick = rng.random(shape)
    out[pick < 0.1] = (rng.integers(-1023, 1024, shape) * 2.0**-24).astype(F16)[pick < 0.1]
    out[pick > 0.97] = np.where(rng.random(shape) < 0.5, F16(0.0), F16(-0.0))[pick > 0.97]
    return out


def _same_bits(got: np.ndarray, want: np.ndarray, what: str) -> None:
    assert got.dtype == want.dtype == F16 and got.shape == want.shape, (what, got.dtype, got.shape, want.shape)
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan), f"{what}: NaN positions differ"
    g, w = got.view(np.uint16)[~nan], want.view(np.uint16)[~nan]
    bad = np.flatnonzero(g != w)
    assert bad.size == 0, (f"{what}: {bad.size} elements differ, e.g. got {got[~nan][bad[:4]]} "
                           f"want {want[~nan][bad[:4]]} (bits {g[bad[:4]]} vs {w[bad[:4]]})")


def _on_gpu(build: Callable[..., list[Any]], arrays: list[np.ndarray]) -> list[np.ndarray]:
    import cupy as cp

    outs = build(*[sl.asarray(cp.asarray(a)) for a in arrays])
    return [cp.asnumpy(o) for o in sl.compute(*outs)]


@pytest.mark.gpu
@pytest.mark.parametrize("shape", [(64, 4096), (7, 33), (1001,)])
def test_float16_chains_match_numpy_bit_for_bit(cupy_backend: None, shape: tuple[int, ...]) -> None:
    arrays = [_hard_inputs(shape, seed) for seed in (10, 11, 12)]
    with np.errstate(all="ignore"):
        want = _chains(np, *arrays)
    got = _on_gpu(lambda x, y, z: _chains(sl, x, y, z), arrays)
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        _same_bits(g, w, f"chain {k} {shape}")


@pytest.mark.gpu
def test_unaligned_float16_buffers_match_numpy_bit_for_bit(cupy_backend: None) -> None:
    import cupy as cp

    a, b = (_hard_inputs((4097,), seed) for seed in (20, 21))
    x, y = (sl.asarray(cp.asarray(v)[1:]) for v in (a, b))  # 2 bytes past a 16-byte boundary
    got = ((x + y) * x - y).get()
    with np.errstate(all="ignore"):
        want = (a[1:] + b[1:]) * a[1:] - b[1:]
    _same_bits(got, want, "unaligned")


@pytest.mark.gpu
@pytest.mark.parametrize("shape", [(64, 4096), (300, 1000), (5, 33)])
def test_float16_row_values_in_half_chains_match_numpy_bit_for_bit(cupy_backend: None, shape: tuple[int, int]) -> None:
    """A row's maximum (a float accumulator) enters half ops: converted once per row."""
    a, b = (_finite_inputs(shape, seed) for seed in (30, 31))

    def build(xp: Any, x: Any, y: Any) -> list[Any]:
        m = x.max(axis=1, keepdims=True)
        return [(x - m) * y - m, -abs(x * y) + m * 0.25]

    with np.errstate(all="ignore"):
        want = build(np, a, b)
    got = _on_gpu(lambda x, y: build(sl, x, y), [a, b])
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        _same_bits(g, w, f"row output {k} {shape}")


@pytest.mark.gpu
@pytest.mark.parametrize("shape", [(64, 4096), (300, 1000), (5, 33)])
def test_float16_selections_of_cached_values_match_numpy_bit_for_bit(cupy_backend: None, shape: tuple[int, int]) -> None:
    import cupy as cp

    a = _finite_inputs(shape, 32)
    a[:, ::7] = F16(-0.0)
    t = np.random.default_rng(33).integers(0, shape[1], shape[0]).astype(np.int32)
    with np.errstate(all="ignore"):
        want = _selections(np, a, t)
    outs = _selections(sl, sl.asarray(cp.asarray(a)), sl.asarray(cp.asarray(t)))
    got = [cp.asnumpy(o) for o in sl.compute(*outs)]
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        _same_bits(g, w, f"selection {k} {shape}")


@pytest.mark.gpu
@pytest.mark.parametrize("shape", [(1024, 4096), (7, 33)])
def test_bias_gelu_float16_matches_numpy(cupy_backend: None, shape: tuple[int, int]) -> None:
    """Within the float16 tolerance of tests/gpu against float64; and, tanh aside (CUDA's and the
    C library's differ in the last float bits), NumPy's float16 result itself almost everywhere."""
    rows, cols = shape
    x, b = _f16((rows, cols), (cols,), seed=40)
    got = _on_gpu(bias_gelu, [x, b])[0]
    sl.set_backend("numpy")
    with np.errstate(all="ignore"):
        ref16 = bias_gelu(x, b)[0].get()
        ref64 = bias_gelu(x.astype(np.float64), b.astype(np.float64))[0].get()
    assert got.dtype == F16
    scale = max(1.0, float(np.abs(ref64).max()))
    ok = np.isclose(got, ref64, rtol=2e-2, atol=2e-2 * scale) | np.isclose(got, ref16, rtol=2e-2, atol=2e-2 * scale)
    assert ok.all(), f"{int((~ok).sum())} elements off, e.g. {got[~ok][:4]} vs {ref64[~ok][:4]}"
    same = float((got.view(np.uint16) == ref16.view(np.uint16)).mean())
    assert same >= 0.99, f"only {same:.4f} of the elements have NumPy's float16 bits"


def _faithful(got: np.ndarray, exact: np.ndarray) -> np.ndarray:
    """Where ``got`` (float16) is one of the two float16 values around ``exact`` (float64)."""
    with np.errstate(all="ignore"):
        near = exact.astype(F16)
        toward = np.where(exact > near, F16(np.inf), F16(-np.inf)).astype(F16)
        other = np.nextafter(near, toward)
    nan = np.isnan(exact)
    return np.where(nan, np.isnan(got), ((got == near) | (got == other)) & (np.signbit(got) == np.signbit(near)))


@pytest.mark.gpu
def test_float16_exp_sigmoid_and_tanh_are_faithful_for_every_float16(cupy_backend: None) -> None:
    """Every float16 bit pattern: the hardware exp2 and tanh paths are within one float16 step of
    the exact value everywhere (signed zeros kept), and NumPy's float16 ``exp`` and ``tanh``
    (float32 function, rounded) almost everywhere."""
    x = np.arange(1 << 16, dtype=np.uint16).view(F16)
    got_exp, got_sig, got_tanh = _on_gpu(lambda v: [sl.exp(v), sl.sigmoid(v), sl.tanh(v)], [x])
    with np.errstate(all="ignore"):
        x64 = x.astype(np.float64)
        exact_exp, exact_sig, exact_tanh = np.exp(x64), 1 / (1 + np.exp(-x64)), np.tanh(x64)
        numpy_exp, numpy_tanh = np.exp(x), np.tanh(x)
    for what, got, exact in (("exp", got_exp, exact_exp), ("sigmoid", got_sig, exact_sig), ("tanh", got_tanh, exact_tanh)):
        bad = np.flatnonzero(~_faithful(got, exact))
        assert bad.size == 0, f"{what}: {bad.size} not faithful, e.g. x={x[bad[:4]]} got {got[bad[:4]]} exact {exact[bad[:4]]}"
    for what, got, want, least in (("exp", got_exp, numpy_exp, 0.995), ("tanh", got_tanh, numpy_tanh, 0.998)):
        nan = np.isnan(want)
        assert np.array_equal(np.isnan(got), nan)
        same = float((got[~nan].view(np.uint16) == want[~nan].view(np.uint16)).mean())
        print(f"float16 {what}: NumPy's bits for {same:.5f} of the non-NaN inputs")
        assert same >= least, f"{what}: only {same:.5f} of float16 inputs give NumPy's bits"
