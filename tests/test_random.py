"""``sl.random`` on the numpy backend: the stream is SplitMix64's (checked against a plain Python
implementation), draws continue the stream, the values have the documented form and pass
distribution tests, errors name the value and the fix, a draw fuses into the kernel that uses it,
and a draw under ``sl.jit`` continues the stream at every call (the replayed launch:
``tests/compiler/test_jit_replay.py``). GPU: ``tests/gpu/test_random_gpu.py`` (the same bits)."""

from __future__ import annotations

import math
import re
import threading
from typing import Any

import numpy as np
import pytest

import stitchlab as sl
from stitchlab.frontend import random as slr

pytestmark = pytest.mark.usefixtures("numpy_backend")

MASK = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15


def splitmix64(key: int, start: int, n: int) -> list[int]:
    """Outputs ``start .. start + n - 1`` of the stream of ``key``: Steele, Lea and Flood's mix of
    ``key + j * golden``, over Python ints."""
    out = []
    for j in range(start, start + n):
        z = (key + j * GOLDEN) & MASK
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        out.append(z ^ (z >> 31))
    return out


def test_the_stream_is_splitmix64() -> None:
    rng = sl.random.default_rng(2026)
    raw = rng.integers(0, 1 << 64, 20, dtype=np.uint64).get()
    want = splitmix64(slr._key(2026), 0, 20)
    assert [int(v) for v in raw] == want
    # the next draw continues where the last one stopped; a float takes the top bits
    u = rng.random(5).get()
    top = [(v >> 11) * 2.0**-53 for v in splitmix64(slr._key(2026), 20, 5)]
    assert u.tolist() == top


def test_draws_continue_the_stream_whatever_their_shape() -> None:
    a, b = sl.random.default_rng(5), sl.random.default_rng(5)
    first = np.concatenate([a.random((2, 3)).get().ravel(), a.random(4).get(), a.random().get().ravel()])
    np.testing.assert_array_equal(first, b.random(11).get())
    # standard_normal takes two outputs per value
    c = sl.random.default_rng(5)
    c.standard_normal(3)
    np.testing.assert_array_equal(c.random(2).get(), sl.random.default_rng(5).random(8).get()[6:])


def test_seeds() -> None:
    def draw(seed: object) -> np.ndarray:
        return sl.random.default_rng(seed).integers(0, 1 << 62, 8).get()

    np.testing.assert_array_equal(draw(1), draw(np.int64(1)))
    assert not np.array_equal(draw(1), draw(2))
    assert not np.array_equal(draw(1), draw(1 + (1 << 64)))  # large seeds fold in every bit
    assert not np.array_equal(draw(None), draw(None))  # fresh entropy
    g = sl.random.default_rng(3)
    assert sl.random.default_rng(g) is g
    sl.random.seed(11)
    x = sl.random.rand(3).get()
    sl.random.seed(11)
    np.testing.assert_array_equal(sl.random.rand(3).get(), x)
    np.testing.assert_array_equal(x, sl.random.default_rng(11).random(3).get())


@pytest.mark.parametrize("dtype, bits", [("float64", 53), ("float32", 24), ("float16", 11), ("bfloat16", 8)])
def test_uniform_values_are_exact_multiples_of_the_step_below_one(dtype: str, bits: int) -> None:
    x = sl.random.default_rng(1).random(200_000, dtype=dtype).get()
    assert str(x.dtype) == dtype
    v = x.astype(np.float64)
    assert v.min() >= 0 and v.max() < 1
    np.testing.assert_array_equal(v * 2.0**bits, np.floor(v * 2.0**bits))
    assert abs(v.mean() - 0.5) < 5 * math.sqrt(1 / 12 / v.size)
    if bits <= 11:  # every step value is reached
        assert np.unique(v).size == 2**bits


def _ks(sample: np.ndarray, cdf: np.ndarray) -> float:
    """Kolmogorov-Smirnov distance of a sorted sample from the CDF values at its points."""
    n = sample.size
    i = np.arange(1, n + 1)
    return float(max(np.max(i / n - cdf), np.max(cdf - (i - 1) / n)))


def test_distributions_pass_kolmogorov_smirnov_and_moment_tests() -> None:
    rng = sl.random.default_rng(99)
    n = 200_000
    bound = 1.95 / math.sqrt(n)  # the KS statistic's 0.1 % critical value
    u = np.sort(rng.random(n).get())
    assert _ks(u, u) < bound
    z = np.sort(rng.standard_normal(n).get())
    phi = 0.5 * (1 + np.vectorize(math.erf)(z / math.sqrt(2)))
    assert _ks(z, phi) < bound
    assert abs(z.mean()) < 5 / math.sqrt(n) and abs(z.var() - 1) < 5 * math.sqrt(2 / n)
    m = rng.normal(3.0, 0.5, n).get()
    assert abs(m.mean() - 3) < 5 * 0.5 / math.sqrt(n) and abs(m.std() - 0.5) < 0.01
    w = rng.uniform(-2, 6, n, dtype=np.float32).get()
    assert w.dtype == np.float32 and w.min() >= -2 and w.max() < 6 and abs(w.mean() - 2) < 0.03
    # successive uniforms are uncorrelated
    pairs = rng.random(n).get()
    assert abs(np.corrcoef(pairs[:-1], pairs[1:])[0, 1]) < 5 / math.sqrt(n)


@pytest.mark.parametrize("low, high, dtype, endpoint", [(0, 7, "int64", False), (-3, 4, "int8", False), (250, 255, "uint8", True),
                                                        (-(2**31), 2**31 - 1, "int32", True), (10**12, 10**12 + 5, "int64", False)])
def test_integers_are_uniform_over_the_range(low: int, high: int, dtype: str, endpoint: bool) -> None:
    x = sl.random.default_rng(4).integers(low, high, 60_000, dtype=dtype, endpoint=endpoint).get()
    assert str(x.dtype) == dtype
    top = high if endpoint else high - 1
    assert x.min() >= low and x.max() <= top
    span = top - low + 1
    if span <= 16:
        counts = np.bincount((x.astype(np.int64) - low), minlength=span)
        expected = x.size / span
        chi2 = float(((counts - expected) ** 2 / expected).sum())
        assert chi2 < span - 1 + 6 * math.sqrt(2 * (span - 1))  # far in the tail otherwise
        assert counts.min() > 0
    np.testing.assert_array_equal(sl.random.randint(5, size=3).get() < 5, True)


def test_a_draw_fuses_into_its_use() -> None:
    from lazycheck import families

    x = sl.asarray(np.ones((64, 512), np.float32))
    dropped = x * (sl.random.default_rng(0).random(x.shape, np.float32) >= 0.25) / 0.75
    assert families(dropped) == ["pointwise"]
    kept = dropped.get()
    assert set(np.unique(kept).tolist()) <= {0.0, np.float32(1 / 0.75)}
    assert 0.2 < (kept == 0).mean() < 0.3
    assert families(sl.random.default_rng(0).standard_normal((8, 8)) + x[:8, :8]) == ["pointwise"]


def test_errors_name_the_value_and_the_fix() -> None:
    rng = sl.random.default_rng(0)
    with pytest.raises(TypeError, match="dtype must be float16, bfloat16, float32 or float64, got int32"):
        rng.random(3, dtype=np.int32)
    with pytest.raises(TypeError, match="dtype must be an integer dtype or bool, got float32"):
        rng.integers(0, 3, dtype=np.float32)
    with pytest.raises(ValueError, match="low >= high"):
        rng.integers(5, 5)
    with pytest.raises(ValueError, match="high is out of bounds for int8"):
        rng.integers(0, 300, dtype=np.int8)
    with pytest.raises(ValueError, match="low is out of bounds for uint8"):
        rng.integers(-1, 3, dtype=np.uint8)
    with pytest.raises(TypeError, match="low and high must be integers or integer arrays"):
        rng.integers(0, 3 + 0j)  # (a float bound is truncated, as NumPy's)
    with pytest.raises(ValueError, match="scale < 0"):
        rng.normal(0, -1.0, 3)
    with pytest.raises(OverflowError, match="not finite"):
        rng.uniform(-1e308, 1e308, 3)
    with pytest.raises(ValueError, match="a seed must be a non-negative integer, got -1"):
        sl.random.default_rng(-1)
    with pytest.raises(TypeError, match="a seed must be a non-negative integer"):
        sl.random.default_rng(1.5)
    with pytest.raises(ValueError, match="negative"):
        rng.random((2, -1))


def test_a_draw_inside_jit_takes_the_next_numbers_at_every_call() -> None:
    rng = sl.random.default_rng(3)

    @sl.jit
    def dropout(x: sl.LazyArray, p: float) -> sl.LazyArray:
        return x * (rng.random(x.shape, np.float32) >= p) / (1 - p)

    x = np.ones((4, 6), np.float32)
    calls = [dropout(x, 0.5).get() for _ in range(3)]
    assert len(dropout.traces) == 1
    same_stream = sl.random.default_rng(3)
    for got in calls:  # each call continues the stream, as the same draws outside sl.jit would
        want = (x * (same_stream.random(x.shape, np.float32) >= 0.5) / 0.5).get()
        np.testing.assert_array_equal(got, want)
    assert not np.array_equal(calls[0], calls[1])


def test_draws_from_threads_take_disjoint_parts_of_the_stream() -> None:
    rng = sl.random.default_rng(8)
    got: list[np.ndarray] = []
    lock = threading.Lock()

    def draw() -> None:
        for _ in range(20):
            v = rng.integers(0, 1 << 64, 50, dtype=np.uint64).get()
            with lock:
                got.append(v)

    threads = [threading.Thread(target=draw) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    values = np.sort(np.concatenate(got))
    want = np.sort(np.array(splitmix64(slr._key(8), 0, 4 * 20 * 50), dtype=np.uint64))
    np.testing.assert_array_equal(values, want)  # every output once, none twice


def test_module_functions_and_shapes() -> None:
    assert sl.random.rand(2, 3).shape == (2, 3) and sl.random.rand().shape == ()
    assert sl.random.randn(4, dtype=np.float32).dtype == np.float32
    assert sl.random.random_sample((5,)).shape == (5,)
    assert sl.random.normal(np.zeros(3), 1.0).shape == (3,)
    assert sl.random.uniform(size=(2, 2)).dtype == np.float64
    assert sl.random.standard_normal(7).shape == (7,)
    assert sl.random.integers(3, size=2).dtype == np.int64
    assert "SplitMix64" in repr(sl.random.default_rng(0))
    assert sl.random.random(0).shape == (0,)


def test_permutation_and_choice() -> None:
    rng = sl.random.default_rng(12)
    p = rng.permutation(1000).get()
    assert p.dtype == np.int64 and sorted(p.tolist()) == list(range(1000)) and not np.array_equal(p, np.arange(1000))
    x = np.arange(24).reshape(4, 6)
    rows = rng.permutation(x).get()
    assert sorted(map(tuple, rows.tolist())) == sorted(map(tuple, x.tolist()))
    cols = rng.permutation(x, axis=1).get()
    assert np.array_equal(np.sort(cols, axis=1), x) and np.all(cols - cols[:, :1] == (cols - cols[:, :1])[0])
    assert rng.permutation(0).shape == (0,) and rng.permutation(-3).shape == (0,)
    # uniform with replacement, with probabilities (NumPy's cumulative sum), without replacement
    n = 60_000
    u = rng.choice(5, n).get()
    assert u.min() == 0 and u.max() == 4 and np.all(np.abs(np.bincount(u) / n - 0.2) < 0.01)
    w = rng.choice(3, n, p=[0.2, 0.5, 0.3]).get()
    np.testing.assert_allclose(np.bincount(w) / n, [0.2, 0.5, 0.3], atol=0.01)
    assert rng.choice(3, 50, p=[0.0, 1.0, 0.0]).get().tolist() == [1] * 50
    distinct = rng.choice(50, 50, replace=False).get()
    assert sorted(distinct.tolist()) == list(range(50))
    # weighted without replacement: inclusion frequencies of NumPy's successive draws
    hits = np.zeros(4)
    for _ in range(3000):
        hits[rng.choice(4, 2, replace=False, p=[0.1, 0.2, 0.3, 0.4]).get()] += 1
    numpy_rng, want = np.random.default_rng(0), np.zeros(4)
    for _ in range(20000):
        want[numpy_rng.choice(4, 2, replace=False, p=[0.1, 0.2, 0.3, 0.4])] += 1
    np.testing.assert_allclose(hits / 3000, want / 20000, atol=0.04)
    assert rng.choice(4, 3, replace=False, p=[0.5, 0.5, 0.0, 1e-300]).get().tolist().count(2) == 0
    values = rng.choice(np.arange(10) * 2, (2, 3)).get()
    assert values.shape == (2, 3) and np.all(values % 2 == 0)
    assert rng.choice(x, 5, axis=1).shape == (4, 5) and rng.choice(7).shape == ()
    assert sl.random.permutation(3).shape == (3,) and sl.random.choice(3, 2).shape == (2,)


def test_permutation_and_choice_errors_are_numpys() -> None:
    rng = sl.random.default_rng(0)
    with pytest.raises(ValueError, match="a must be a positive integer unless no samples are taken"):
        rng.choice(0, 3)
    with pytest.raises(ValueError, match="Cannot take a larger sample than population when replace is False"):
        rng.choice(3, 5, replace=False)
    with pytest.raises(ValueError, match="a and p must have same size"):
        rng.choice(3, 2, p=[0.5, 0.5])
    with pytest.raises(ValueError, match="Probabilities are not non-negative"):
        rng.choice(3, 2, p=[0.5, 0.6, -0.1])
    with pytest.raises(ValueError, match="Probabilities do not sum to 1"):
        rng.choice(3, 2, p=[0.2, 0.2, 0.2])
    with pytest.raises(ValueError, match="Fewer non-zero entries in p than size"):
        rng.choice(3, 3, replace=False, p=[0.5, 0.5, 0.0])
    with pytest.raises(TypeError, match="reorders stitchlab arrays.*rng.permutation"):
        rng.shuffle(np.arange(3))
    with pytest.raises(TypeError, match="reorders stitchlab arrays"):
        sl.random.shuffle(np.arange(3))


def test_spawned_generators_have_streams_of_their_own() -> None:
    parent = sl.random.default_rng(5)
    a, b = parent.spawn(2)
    c = parent.spawn(1)[0]
    draws = [g.integers(0, 1 << 62, 1000).get() for g in (a, b, c, parent)]
    for i in range(4):
        for j in range(i + 1, 4):
            assert not np.intersect1d(draws[i], draws[j]).size  # no shared values among 4000 draws
    a2, b2 = sl.random.default_rng(5).spawn(2)  # reproducible
    np.testing.assert_array_equal(a2.integers(0, 1 << 62, 1000).get(), draws[0])
    np.testing.assert_array_equal(b2.integers(0, 1 << 62, 1000).get(), draws[1])
    assert parent.spawn(0) == []
    with pytest.raises(ValueError, match="n_children must be non-negative"):
        parent.spawn(-1)


def test_distribution_parameters_may_be_numbers_or_arrays() -> None:
    rng = sl.random.default_rng(6)
    assert rng.normal(np.zeros(3), [1.0, 2.0, 3.0]).shape == (3,)
    assert rng.normal(sl.zeros((2, 1)), 1.0, dtype=np.float32).shape == (2, 1)
    assert rng.uniform(np.float32(1), np.int64(2), 4).dtype == np.float64
    with pytest.raises(OverflowError, match="not finite"):
        rng.uniform(np.float64(-1e308), np.float64(1e308), 3)
    with pytest.raises(ValueError, match="scale < 0"):
        rng.normal(0, np.array([1.0, -1.0]))
    u = rng.uniform(sl.asarray(np.array([0.0, 10.0])), 11.0, (50_000, 2)).get()
    assert u[:, 0].min() >= 0 and u[:, 1].min() >= 10 and u.max() < 11


def test_exponential_gumbel_laplace_logistic_pass_kolmogorov_smirnov_and_moment_tests() -> None:
    rng = sl.random.default_rng(123)
    n = 200_000
    bound = 1.95 / math.sqrt(n)  # the KS statistic's 0.1 % critical value
    cdfs = {
        "standard_exponential": (lambda: rng.standard_exponential(n), lambda x: 1 - np.exp(-x), 1.0, 1.0),
        "exponential": (lambda: rng.exponential(2.5, n), lambda x: 1 - np.exp(-x / 2.5), 2.5, 2.5**2),
        "gumbel": (lambda: rng.gumbel(1.0, 2.0, n), lambda x: np.exp(-np.exp(-(x - 1.0) / 2.0)),
                   1.0 + 2.0 * 0.5772156649, math.pi**2 / 6 * 4.0),
        "laplace": (lambda: rng.laplace(-1.0, 0.5, n), lambda x: np.where(x < -1.0, 0.5 * np.exp((x + 1.0) / 0.5),
                                                                          1 - 0.5 * np.exp(-(x + 1.0) / 0.5)), -1.0, 2 * 0.25),
        "logistic": (lambda: rng.logistic(3.0, 0.5, n), lambda x: 1 / (1 + np.exp(-(x - 3.0) / 0.5)), 3.0, math.pi**2 / 3 * 0.25),
    }
    for name, (draw, cdf, mean, var) in cdfs.items():
        x = np.sort(draw().get())
        assert x.dtype == np.float64 and np.isfinite(x).all(), name
        assert _ks(x, cdf(x)) < bound, name
        assert abs(x.mean() - mean) < 6 * math.sqrt(var / n), name
        assert abs(x.var() / var - 1) < 0.03, name


def test_more_distributions_shapes_dtypes_parameters_and_errors() -> None:
    rng = sl.random.default_rng(5)
    assert rng.exponential(size=(2, 3), dtype=np.float32).dtype == np.float32
    assert rng.standard_exponential((4,), dtype=np.float16).shape == (4,)
    assert rng.gumbel(np.zeros((2, 1)), [1.0, 2.0, 3.0]).shape == (2, 3)
    assert rng.laplace(sl.zeros(5), 1.0, dtype=np.float32).shape == (5,)
    x = rng.exponential(np.array([0.0, 1.0, 10.0]), (20_000, 3)).get()
    assert (x[:, 0] == 0).all() and x[:, 1].mean() < x[:, 2].mean()
    assert (rng.standard_exponential(100_000).get() > 0).all()  # -log(u) of u below 1
    # the stream's extreme outputs (all bits zero, all one) give uniforms inside (0, 1) and finite draws
    edge = sl.random.default_rng(1)
    edge._streams = lambda name, shape, count: [sl.asarray(np.array([0, (1 << 64) - 1], np.uint64))]  # type: ignore[method-assign]
    np.testing.assert_array_equal(edge._open("edge", (2,)).get(), [2.0**-53, 1 - 2.0**-53])
    for name in ("standard_exponential", "exponential", "gumbel", "laplace", "logistic"):
        assert np.isfinite(getattr(edge, name)(size=2).get()).all(), name
    for name in ("exponential", "gumbel", "laplace", "logistic"):
        with pytest.raises(ValueError, match="scale < 0"):
            getattr(rng, name)(scale=-1.0, size=3) if name == "exponential" else getattr(rng, name)(0.0, -1.0, 3)
    with pytest.raises(ValueError, match="method must be 'zig' or 'inv'"):
        rng.standard_exponential(3, method="ziggurat")
    with pytest.raises(TypeError, match="dtype must be float16"):
        rng.gumbel(size=3, dtype=np.int32)
    sl.random.seed(8)
    a = [f(size=4).get() for f in (sl.random.standard_exponential, sl.random.exponential, sl.random.gumbel,
                                   sl.random.laplace, sl.random.logistic)]
    sl.random.seed(8)
    b = [f(size=4).get() for f in (sl.random.standard_exponential, sl.random.exponential, sl.random.gumbel,
                                   sl.random.laplace, sl.random.logistic)]
    for u, v in zip(a, b, strict=True):
        np.testing.assert_array_equal(u, v)


def test_gumbel_noise_samples_a_softmax_inside_jit() -> None:
    """The Gumbel-max trick: argmax(logits + Gumbel noise) picks class k with probability
    softmax(logits)[k]; under sl.jit each call draws new noise."""
    logits = np.log(np.array([0.5, 0.3, 0.2]))
    rng = sl.random.default_rng(11)

    @sl.jit
    def sample(lg: sl.LazyArray) -> sl.LazyArray:
        return (lg + rng.gumbel(size=(20_000, 3))).argmax(axis=-1)

    first = sample(logits).get()
    counts = np.bincount(np.concatenate([first, sample(logits).get()]), minlength=3) / 40_000
    np.testing.assert_allclose(counts, [0.5, 0.3, 0.2], atol=0.015)
    assert not np.array_equal(first, sample(logits).get())


def test_more_closed_form_distributions_pass_kolmogorov_smirnov_and_moment_tests() -> None:
    """Each against its distribution function (the KS statistic below its 0.1 % critical value)
    and its mean and variance (Cauchy: its median and quartiles, it has no moments)."""
    rng = sl.random.default_rng(2024)
    n = 200_000
    bound = 1.95 / math.sqrt(n)
    erf = np.vectorize(math.erf)

    def wald_cdf(x: np.ndarray, mu: float, lam: float) -> np.ndarray:
        phi = lambda t: 0.5 * (1 + erf(t / math.sqrt(2)))  # noqa: E731
        s = np.sqrt(lam / x)
        return phi(s * (x / mu - 1)) + math.exp(2 * lam / mu) * phi(-s * (x / mu + 1))

    g = math.gamma
    cases = {
        "lognormal": (lambda: rng.lognormal(0.5, 0.75, n), lambda x: 0.5 * (1 + erf((np.log(x) - 0.5) / (0.75 * math.sqrt(2)))),
                      math.exp(0.5 + 0.75**2 / 2), (math.exp(0.75**2) - 1) * math.exp(1 + 0.75**2)),
        "rayleigh": (lambda: rng.rayleigh(2.0, n), lambda x: 1 - np.exp(-x * x / 8.0), 2.0 * math.sqrt(math.pi / 2),
                     (4 - math.pi) / 2 * 4.0),
        "weibull": (lambda: rng.weibull(1.7, n), lambda x: 1 - np.exp(-(x**1.7)), g(1 + 1 / 1.7),
                    g(1 + 2 / 1.7) - g(1 + 1 / 1.7) ** 2),
        "pareto": (lambda: rng.pareto(5.0, n), lambda x: 1 - (1 + x) ** -5.0, 1 / 4, 5.0 / (4**2 * 3)),
        "power": (lambda: rng.power(3.0, n), lambda x: x**3.0, 3 / 4, 3 / (16 * 5)),
        "triangular": (lambda: rng.triangular(-1.0, 0.5, 3.0, n),
                       lambda x: np.where(x <= 0.5, (x + 1) ** 2 / (4 * 1.5), 1 - (3 - x) ** 2 / (4 * 2.5)),
                       (-1 + 0.5 + 3) / 3, (1 + 0.25 + 9 - (-0.5) - (-3) - 1.5) / 18),
        "wald": (lambda: rng.wald(1.5, 2.0, n), lambda x: wald_cdf(x, 1.5, 2.0), 1.5, 1.5**3 / 2.0),
        "wald-wide": (lambda: rng.wald(3.0, 0.05, n), lambda x: wald_cdf(x, 3.0, 0.05), 3.0, 3.0**3 / 0.05),
    }
    for name, (draw, cdf, mean, var) in cases.items():
        x = np.sort(draw().get())
        assert x.dtype == np.float64 and np.isfinite(x).all() and (x > -1 if name == "triangular" else x > 0).all(), name
        assert _ks(x, cdf(x)) < bound, name
        if name != "wald-wide":  # heavy right tail: its sample variance converges slowly
            assert abs(x.mean() - mean) < 6 * math.sqrt(var / n), name
            assert abs(x.var() / var - 1) < 0.05, name
    c = np.sort(rng.standard_cauchy(n).get())
    assert np.isfinite(c).all()
    assert _ks(c, 0.5 + np.arctan(c) / math.pi) < bound
    np.testing.assert_allclose(np.quantile(c, [0.25, 0.5, 0.75]), [-1, 0, 1], atol=0.02)


@pytest.mark.parametrize("p", [0.001, 0.2, 0.5, 0.9])
def test_geometric_counts_have_the_geometric_probabilities(p: float) -> None:
    """A chi-square test of the counts against ``(1 - p)**(k - 1) * p`` (bins of expected count 20
    or more, the tail in one), and the mean ``1 / p``."""
    n = 200_000
    k = sl.random.default_rng(77).geometric(p, n).get()
    assert k.dtype == np.int64 and k.min() >= 1
    assert abs(k.mean() - 1 / p) < 6 * math.sqrt((1 - p) / p**2 / n)
    top = max(2, int(math.log(20 / (n * p)) / math.log1p(-p)) + 1) if p < 1 else 2
    edges = np.unique(np.linspace(1, top, 60).astype(np.int64)) if p < 0.01 else np.arange(1, top + 1)
    counts = np.array([np.count_nonzero((k >= a) & (k < b)) for a, b in zip(edges[:-1], edges[1:], strict=True)]
                      + [np.count_nonzero(k >= edges[-1])])
    cdf = lambda m: 1 - (1 - p) ** (m - 1)  # noqa: E731  P(K < m)
    expected = n * np.diff(np.append(cdf(edges), 1.0))
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    dof = len(counts) - 1
    assert chi2 < dof + 5 * math.sqrt(2 * dof), (chi2, dof)


def test_more_closed_form_distributions_shapes_parameters_and_errors() -> None:
    rng = sl.random.default_rng(9)
    assert rng.lognormal(np.zeros((2, 1)), [0.5, 1.0, 2.0]).shape == (2, 3)
    assert rng.rayleigh(sl.ones(4), dtype=np.float32).dtype == np.float32
    assert rng.weibull([1.0, 2.0], (3, 2), dtype=np.float16).shape == (3, 2)
    assert rng.triangular(0.0, np.array([0.5, 1.0]), 1.0).shape == (2,)
    assert rng.wald(1.0, 2.0, (2, 2), dtype=np.float32).dtype == np.float32
    assert rng.standard_cauchy((2, 3), dtype=np.float32).shape == (2, 3)
    assert rng.geometric(np.array([[0.5], [0.9]]), (2, 3)).dtype == np.int64
    # NumPy's edge values: weibull(0) and rayleigh(0) zeros, power(inf) ones, pareto(inf) zeros, geometric(1) ones,
    # a tiny geometric p beyond int64: its largest value
    np.testing.assert_array_equal(rng.weibull(0.0, 5).get(), np.zeros(5))
    np.testing.assert_array_equal(rng.weibull(sl.asarray(np.array([0.0, 0.0])), 2).get(), np.zeros(2))
    np.testing.assert_array_equal(rng.rayleigh(0.0, 5).get(), np.zeros(5))
    np.testing.assert_array_equal(rng.power(math.inf, 5).get(), np.ones(5))
    np.testing.assert_array_equal(rng.pareto(math.inf, 5).get(), np.zeros(5))
    np.testing.assert_array_equal(rng.geometric(1.0, 5).get(), np.ones(5, np.int64))
    np.testing.assert_array_equal(rng.geometric(1e-300, 3).get(), np.full(3, np.iinfo(np.int64).max))
    w = rng.weibull(sl.asarray(np.array([0.0, 2.0])), (1000, 2)).get()
    assert (w[:, 0] == 0).all() and (w[:, 1] > 0).all()
    t = rng.triangular(2.0, 2.0, 5.0, 10_000).get()  # mode at the left end
    assert t.min() >= 2 and t.max() <= 5
    # the stream's extreme outputs give finite draws
    edge = sl.random.default_rng(1)
    edge._streams = lambda name, shape, count: [sl.asarray(np.array([0, (1 << 64) - 1], np.uint64))] * count  # type: ignore[method-assign]
    for name, args in [("lognormal", ()), ("rayleigh", ()), ("weibull", (0.5,)), ("pareto", (0.5,)), ("power", (0.5,)),
                       ("standard_cauchy", ()), ("triangular", (0.0, 0.5, 1.0)), ("wald", (1.0, 1.0)), ("geometric", (0.5,))]:
        assert np.isfinite(getattr(edge, name)(*args, size=2).get()).all(), name
    for call, message in [
        (lambda: rng.lognormal(0.0, -1.0), "sigma < 0"), (lambda: rng.rayleigh(-1.0), "scale < 0"),
        (lambda: rng.weibull(-1.0), "a < 0"), (lambda: rng.pareto(0.0), "a <= 0"), (lambda: rng.power([1.0, 0.0]), "a <= 0"),
        (lambda: rng.triangular(1.0, 0.0, 2.0), "left > mode"), (lambda: rng.triangular(0.0, 3.0, 2.0), "mode > right"),
        (lambda: rng.triangular(1.0, 1.0, 1.0), "left == right"), (lambda: rng.wald(0.0, 1.0), "mean <= 0"),
        (lambda: rng.wald(1.0, -2.0), "scale <= 0"), (lambda: rng.geometric(0.0), "p <= 0, p > 1 or p contains NaNs"),
        (lambda: rng.geometric(1.5), "p <= 0, p > 1"), (lambda: rng.geometric(math.nan), "contains NaNs"),
    ]:
        with pytest.raises(ValueError, match=message):
            call()
    with pytest.raises(TypeError, match="dtype must be float16"):
        rng.wald(1.0, 1.0, 3, dtype=np.int32)
    names = ("lognormal", "rayleigh", "standard_cauchy")
    sl.random.seed(8)
    a = [getattr(sl.random, f)(size=4).get() for f in names] + [sl.random.weibull(2.0, 4).get(), sl.random.pareto(2.0, 4).get(),
                                                               sl.random.power(2.0, 4).get(), sl.random.geometric(0.3, 4).get(),
                                                               sl.random.triangular(0.0, 1.0, 2.0, 4).get(), sl.random.wald(1.0, 1.0, 4).get()]
    sl.random.seed(8)
    b = [getattr(sl.random, f)(size=4).get() for f in names] + [sl.random.weibull(2.0, 4).get(), sl.random.pareto(2.0, 4).get(),
                                                               sl.random.power(2.0, 4).get(), sl.random.geometric(0.3, 4).get(),
                                                               sl.random.triangular(0.0, 1.0, 2.0, 4).get(), sl.random.wald(1.0, 1.0, 4).get()]
    for u, v in zip(a, b, strict=True):
        np.testing.assert_array_equal(u, v)


def test_a_closed_form_draw_fuses_into_its_use() -> None:
    x = sl.asarray(np.ones((64, 128), np.float32))
    y = x * sl.random.default_rng(4).lognormal(0.0, 0.1, x.shape, dtype=np.float32)
    assert sl.explain(y).kernels and len(sl.explain(y).kernels) == 1


def _ks2(x: np.ndarray, y: np.ndarray) -> float:
    """The two-sample Kolmogorov-Smirnov statistic of two samples of one size."""
    both = np.sort(np.concatenate([x, y]))
    return float(np.max(np.abs(np.searchsorted(np.sort(x), both, side="right")
                               - np.searchsorted(np.sort(y), both, side="right")))) / x.size


@pytest.mark.parametrize(("name", "args"), [
    ("standard_gamma", (0.3,)), ("standard_gamma", (1.0,)), ("standard_gamma", (7.5,)), ("gamma", (2.0, 3.0)),
    ("beta", (0.5, 2.0)), ("beta", (0.01, 0.02)), ("beta", (40.0, 3.0)), ("chisquare", (3.0,)), ("standard_t", (4.0,)),
    ("f", (5.0, 7.0)), ("noncentral_chisquare", (3.0, 2.0)), ("noncentral_chisquare", (0.5, 1.5)),
    ("noncentral_chisquare", (0.7, 40.0)), ("noncentral_chisquare", (4.0, 0.0)), ("noncentral_f", (3.0, 20.0, 3.0)),
    ("noncentral_f", (0.8, 10.0, 0.5)),
])
def test_gamma_family_has_numpys_distributions(name: str, args: tuple[float, ...]) -> None:
    """Each against NumPy's own sampler of the distribution (a two-sample KS statistic below its
    0.1 % critical value) and its mean."""
    n = 100_000
    x = getattr(sl.random.default_rng(17), name)(*args, size=n).get()
    y = getattr(np.random.default_rng(18), name)(*args, size=n)
    assert x.dtype == np.float64 and np.isfinite(x).all()
    assert _ks2(x, y) < 1.95 * math.sqrt(2 / n), (name, args, _ks2(x, y))
    if name not in ("standard_t", "noncentral_f"):
        assert abs(x.mean() / y.mean() - 1) < 0.03


def test_noncentral_chisquare_with_parameters_per_element() -> None:
    """An array of df on both sides of 1 (the two methods, chosen per element) and arrays of nonc
    with df on both sides of 1."""
    rng, n = sl.random.default_rng(23), 60_000
    x = rng.noncentral_chisquare(np.array([0.5, 3.0]), 2.0, (n, 2)).get()
    y = np.random.default_rng(24).noncentral_chisquare(np.array([0.5, 3.0]), 2.0, (n, 2))
    for k in range(2):
        assert _ks2(x[:, k], y[:, k]) < 1.95 * math.sqrt(2 / n)
    z = rng.noncentral_chisquare(3.0, sl.asarray(np.array([1.0, 6.0])), (n, 2)).get()
    np.testing.assert_allclose(z.mean(0), [4.0, 9.0], rtol=0.03)
    assert rng.noncentral_f(3.0, 4.0, 1.0, (2, 5), dtype=np.float32).dtype == np.float32
    w = rng.noncentral_chisquare(np.array([0.5, 0.9, 3.0]), np.array([1.0, 30.0, 30.0]), (n, 3)).get()
    v = np.random.default_rng(25).noncentral_chisquare(np.array([0.5, 0.9, 3.0]), np.array([1.0, 30.0, 30.0]), (n, 3))
    for k in range(3):  # df <= 1 with a nonc per element: a Poisson count per element
        assert _ks2(w[:, k], v[:, k]) < 1.95 * math.sqrt(2 / n)
    for call, message in [(lambda: rng.noncentral_chisquare(0.0, 1.0), "df <= 0"), (lambda: rng.noncentral_chisquare(1.0, -1.0), "nonc < 0"),
                          (lambda: rng.noncentral_f(1.0, 0.0, 1.0), "dfden <= 0")]:
        with pytest.raises(ValueError, match=message):
            call()


def test_dirichlet_and_gamma_family_shapes_parameters_and_errors() -> None:
    rng = sl.random.default_rng(19)
    d = rng.dirichlet([0.5, 1.0, 2.0, 0.0], 50_000).get()
    assert d.shape == (50_000, 4)
    np.testing.assert_allclose(d.sum(1), 1.0, rtol=1e-12)
    assert (d[:, 3] == 0).all()  # a zero alpha: that component 0, as in NumPy
    np.testing.assert_allclose(d.mean(0)[:3], np.array([0.5, 1.0, 2.0]) / 3.5, atol=0.005)
    tiny = rng.dirichlet([1e-3, 1e-3], 10_000).get()  # gammas below the smallest float: still a distribution
    assert np.isfinite(tiny).all() and abs(tiny[:, 0].mean() - 0.5) < 0.03
    assert rng.dirichlet([1.0, 1.0], (2, 3), dtype=np.float32).shape == (2, 3, 2)
    assert rng.standard_gamma(sl.asarray(np.array([[0.5], [4.0]])), (2, 3), dtype=np.float32).dtype == np.float32
    g = rng.gamma(np.array([0.0, 0.4, 3.0]), [1.0, 2.0, 0.5], (20_000, 3)).get()
    assert (g[:, 0] == 0).all() and abs(g[:, 1].mean() / 0.8 - 1) < 0.03 and abs(g[:, 2].mean() / 1.5 - 1) < 0.03
    lazy = rng.standard_gamma(sl.asarray(np.array([0.0, 0.4, 3.0])), (20_000, 3)).get()
    assert (lazy[:, 0] == 0).all() and abs(lazy[:, 1].mean() / 0.4 - 1) < 0.03 and abs(lazy[:, 2].mean() / 3 - 1) < 0.03
    np.testing.assert_array_equal(rng.standard_gamma(0.0, 4).get(), np.zeros(4))
    b = rng.beta(sl.asarray(np.array([0.5, 5.0])), 1.0, (20_000, 2)).get()
    assert (b >= 0).all() and (b <= 1).all() and abs(b[:, 0].mean() - 1 / 3) < 0.01 and abs(b[:, 1].mean() - 5 / 6) < 0.01
    for call, message in [
        (lambda: rng.standard_gamma(-1.0), "shape < 0"), (lambda: rng.gamma(1.0, -1.0), "scale < 0"),
        (lambda: rng.beta(0.0, 1.0), "a <= 0"), (lambda: rng.beta(1.0, [1.0, 0.0]), "b <= 0"),
        (lambda: rng.chisquare(0.0), "df <= 0"), (lambda: rng.standard_t(-2.0), "df <= 0"),
        (lambda: rng.f(0.0, 1.0), "dfnum <= 0"), (lambda: rng.f(1.0, 0.0), "dfden <= 0"),
        (lambda: rng.dirichlet([1.0, -1.0]), "alpha < 0"), (lambda: rng.dirichlet(1.0), "too small depth"),
    ]:
        with pytest.raises(ValueError, match=message):
            call()
    names = ("standard_gamma", "chisquare", "standard_t")
    for seed_draws in range(2):
        sl.random.seed(21)
        draws = [getattr(sl.random, f)(2.0, 4).get() for f in names] + [sl.random.gamma(2.0, 1.5, 4).get(),
                 sl.random.beta(2.0, 3.0, 4).get(), sl.random.f(2.0, 3.0, 4).get(), sl.random.dirichlet([1.0, 2.0], 4).get()]
        if seed_draws == 0:
            first = draws
    for u, v in zip(first, draws, strict=True):
        np.testing.assert_array_equal(u, v)


def test_a_gamma_draw_is_one_kernel_with_its_use() -> None:
    x = sl.asarray(np.ones((64, 128), np.float32))
    y = x * sl.random.default_rng(4).standard_gamma(2.0, x.shape, dtype=np.float32)
    assert len(sl.explain(y).kernels) == 1


@pytest.mark.parametrize("method", ["svd", "eigh", "cholesky"])
def test_multivariate_normal_has_the_mean_and_covariance(method: str) -> None:
    mean = np.array([1.0, -2.0, 0.5])
    cov = np.array([[2.0, 0.3, 0.0], [0.3, 1.0, -0.4], [0.0, -0.4, 0.5]])
    n = 200_000
    x = sl.random.default_rng(23).multivariate_normal(mean, cov, n, method=method).get()
    assert x.shape == (n, 3) and x.dtype == np.float64
    se = np.sqrt((cov**2 + np.outer(np.diag(cov), np.diag(cov))) / n)  # the sample covariance's standard errors
    assert (np.abs(x.mean(0) - mean) < 5 * np.sqrt(np.diag(cov) / n)).all()
    assert (np.abs(np.cov(x.T) - cov) < 5 * se).all(), np.cov(x.T) - cov


def test_multivariate_normal_shapes_and_numpys_errors() -> None:
    rng = sl.random.default_rng(24)
    mean, cov = np.array([1.0, -2.0]), np.array([[1.0, 0.5], [0.5, 2.0]])
    y = rng.multivariate_normal(sl.asarray(mean), sl.asarray(cov), (3, 4), dtype=np.float32)
    assert y.shape == (3, 4, 2) and y.dtype == np.float32
    assert rng.multivariate_normal(mean, cov).shape == (2,)
    with pytest.warns(RuntimeWarning, match="covariance is not symmetric positive-semidefinite"):
        rng.multivariate_normal([0.0, 0.0], [[1.0, 2.0], [2.0, 1.0]])
    bad_cov = [[1.0, 2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    for args in [{"method": "x"}, {"mean": np.ones((2, 2))}, {"cov": np.ones(2)}, {"cov": np.eye(3)},
                 {"check_valid": "no", "cov": bad_cov, "mean": np.zeros(3)},
                 {"check_valid": "raise", "cov": bad_cov, "mean": np.zeros(3)}]:
        kwargs = {"mean": mean, "cov": cov} | args
        with pytest.raises(ValueError) as want:
            np.random.default_rng(0).multivariate_normal(**kwargs)
        with pytest.raises(ValueError, match=re.escape(str(want.value))):
            rng.multivariate_normal(**kwargs)


def _chi2_two_samples(x: np.ndarray, y: np.ndarray) -> tuple[float, int]:
    """The chi-square statistic of two count samples of one size over their values (values seen
    fewer than 40 times in both pooled into one bin) and its degrees of freedom."""
    values = np.union1d(x, y)
    cx = np.array([np.count_nonzero(x == v) for v in values])
    cy = np.array([np.count_nonzero(y == v) for v in values])
    keep = cx + cy >= 40
    cx, cy = np.append(cx[keep], cx[~keep].sum()), np.append(cy[keep], cy[~keep].sum())
    used = cx + cy > 0
    cx, cy = cx[used], cy[used]
    return float(((cx - cy) ** 2 / (cx + cy)).sum()), len(cx) - 1


@pytest.mark.parametrize(("name", "args"), [
    ("poisson", (0.3,)), ("poisson", (4.5,)), ("poisson", (1e4,)), ("binomial", (10, 0.3)), ("binomial", (1000, 0.999)),
    ("binomial", (10**9, 1e-7)), ("hypergeometric", (5, 10, 7)), ("hypergeometric", (10**6, 10**6, 5000)),
    ("logseries", (0.5,)), ("logseries", (0.99,)), ("negative_binomial", (2.5, 0.3)), ("negative_binomial", (0.3, 0.9)),
    ("negative_binomial", (50, 0.01)),
])
def test_discrete_distributions_have_numpys_probabilities(name: str, args: tuple[Any, ...]) -> None:
    """Against NumPy's own sampler: a two-sample chi-square test of the counts (below its degrees of
    freedom plus five standard deviations) and the mean."""
    n = 100_000
    x = getattr(sl.random.default_rng(31), name)(*args, size=n).get()
    y = getattr(np.random.default_rng(32), name)(*args, size=n)
    assert x.dtype == np.int64
    stat, dof = _chi2_two_samples(x, y)
    assert stat < dof + 5 * math.sqrt(2 * dof), (stat, dof)
    assert abs(x.mean() - y.mean()) < 6 * math.sqrt(2 * y.var() / n) + 1e-12


def test_discrete_distributions_edges_and_numpys_errors() -> None:
    rng = sl.random.default_rng(33)
    for draw, want in [(lambda: rng.poisson(0.0, 5), 0), (lambda: rng.binomial(5, 0.0, 5), 0), (lambda: rng.binomial(5, 1.0, 5), 5),
                       (lambda: rng.binomial(0, 0.5, 5), 0), (lambda: rng.hypergeometric(0, 5, 3, 5), 0),
                       (lambda: rng.hypergeometric(5, 0, 3, 5), 3), (lambda: rng.logseries(0.0, 5), 1),
                       (lambda: rng.negative_binomial(3, 1.0, 5), 0)]:
        np.testing.assert_array_equal(draw().get(), np.full(5, want, np.int64))
    big = rng.poisson(3e9, 1000).get()
    assert abs(big.mean() - 3e9) < 6 * math.sqrt(3e9 / 1000)
    assert rng.binomial(5.7, 0.5, (2, 3)).get().max() <= 5  # n truncated, as NumPy's
    assert rng.poisson(2.0).shape == ()
    with pytest.raises(ValueError, match="table of .* entries"):
        rng.logseries(1 - 1e-9)
    for call in [lambda g: g.poisson(-1.0), lambda g: g.poisson(math.nan), lambda g: g.poisson(1e19),
                 lambda g: g.binomial(-1, 0.5), lambda g: g.binomial(5, 1.5), lambda g: g.binomial(5, math.nan),
                 lambda g: g.hypergeometric(-1, 2, 1), lambda g: g.hypergeometric(1, -2, 1), lambda g: g.hypergeometric(1, 2, -1),
                 lambda g: g.hypergeometric(1, 2, 5), lambda g: g.hypergeometric(10**9, 2, 1),
                 lambda g: g.logseries(1.0), lambda g: g.logseries(-0.1), lambda g: g.logseries(math.nan),
                 lambda g: g.negative_binomial(0, 0.5), lambda g: g.negative_binomial(1, 0.0),
                 lambda g: g.negative_binomial(1, math.nan)]:
        with pytest.raises(ValueError) as want:
            call(np.random.default_rng(0))
        with pytest.raises(ValueError, match=re.escape(str(want.value))):
            call(rng)
    sl.random.seed(34)
    a = [sl.random.poisson(3.0, 4).get(), sl.random.binomial(9, 0.4, 4).get(), sl.random.hypergeometric(4, 6, 5, 4).get(),
         sl.random.logseries(0.7, 4).get()]
    sl.random.seed(34)
    b = [sl.random.poisson(3.0, 4).get(), sl.random.binomial(9, 0.4, 4).get(), sl.random.hypergeometric(4, 6, 5, 4).get(),
         sl.random.logseries(0.7, 4).get()]
    for u, v in zip(a, b, strict=True):
        np.testing.assert_array_equal(u, v)


RATES = np.array([0.0, 0.02, 1.0, 4.5, 9.999, 10.0, 10.5, 37.0, 2500.0, 7.7e6])


def test_poisson_with_a_rate_per_element_has_numpys_probabilities() -> None:
    """Rates on both sides of 10 (the search and the rejection rounds), one column each, against
    NumPy's sampler (the two-sample chi-square test and the mean); the parameter broadcast with
    ``size``, from the host, the device or a lazy expression."""
    n = 60_000
    x = sl.random.default_rng(35).poisson(RATES, (n, RATES.size)).get()
    y = np.random.default_rng(36).poisson(RATES, (n, RATES.size))
    assert x.dtype == np.int64 and x.shape == (n, RATES.size)
    for k, lam in enumerate(RATES):
        stat, dof = _chi2_two_samples(x[:, k], y[:, k])
        assert stat <= dof + 5 * math.sqrt(2 * dof), (lam, stat, dof)
        assert abs(x[:, k].mean() - lam) < 6 * math.sqrt(lam / n) + 1e-12, lam
        if lam > 1000:  # counts seen too seldom to bin: a two-sample KS statistic (0.1 %)
            assert _ks2(x[:, k].astype(float), y[:, k].astype(float)) < 1.95 * math.sqrt(2 / n), lam
    assert (x[:, 0] == 0).all()
    rng = sl.random.default_rng(37)
    lam = np.linspace(0.0, 40.0, 7).reshape(7, 1)
    counts = rng.poisson(lam * np.ones((1, 20_000))).get()  # shape from the parameter
    np.testing.assert_allclose(counts.mean(1), lam[:, 0], atol=0.2)
    assert rng.poisson(sl.asarray(lam), (3, 7, 4)).shape == (3, 7, 4)
    lazy = rng.poisson(sl.asarray(lam) * 2.0 + 1.0, (7, 5000)).get()
    np.testing.assert_allclose(lazy.mean(1), lam[:, 0] * 2 + 1, rtol=0.05)


def test_poisson_rates_per_element_errors_and_rates_numpy_rejects() -> None:
    rng = sl.random.default_rng(38)
    for bad in ([1.0, -1.0], [np.nan, 1.0], [1.0, 1e19]):
        with pytest.raises(ValueError) as want:
            np.random.default_rng(0).poisson(np.array(bad))
        with pytest.raises(ValueError, match=re.escape(str(want.value))):
            rng.poisson(np.array(bad))
    with pytest.raises(ValueError, match="not compatible with broadcast dimensions"):
        rng.poisson(np.ones(3), (2, 4))
    # a rate that is a lazy array is not read back to be checked: -1 where NumPy would raise
    got = rng.poisson(sl.asarray(np.array([-1.0, np.nan, np.inf, 3.0, 20.0]))).get()
    np.testing.assert_array_equal(got[:3], [-1, -1, -1])
    assert got[3] >= 0 and got[4] >= 0


def test_poisson_per_element_is_one_kernel_and_draws_anew_under_jit() -> None:
    rng = sl.random.default_rng(39)
    lam = sl.asarray(np.linspace(0.5, 60.0, 64).reshape(8, 8))
    plan = sl.explain(lam * 0.5 + rng.poisson(lam))
    assert len(plan.kernels) == 1, plan
    gen = sl.random.default_rng(40)
    jitted = sl.jit(lambda t: gen.poisson(t) + 1)
    first, second = jitted(lam).get(), jitted(lam).get()
    assert not np.array_equal(first, second)
    np.testing.assert_array_equal(sl.random.default_rng(40).poisson(lam).get() + 1, first)


BINOMIAL = [(0, 0.3), (1, 0.5), (7, 0.9), (19, 0.5), (20, 0.5), (20, 0.51), (100, 0.1), (1000, 0.3), (10**6, 0.5),
            (10**9, 0.01), (5 * 10**5, 2e-5), (50, 1.0), (50, 0.0)]


def test_binomial_with_parameters_per_element_has_numpys_probabilities() -> None:
    """n min(p, 1 - p) on both sides of 10 (the search and the rejection rounds) and p on both sides
    of 1/2, one column each, against NumPy's sampler; an n of integers from the device, a p
    from a lazy expression."""
    n, p = (np.array(v) for v in zip(*BINOMIAL, strict=True))
    rows = 60_000
    x = sl.random.default_rng(46).binomial(n, p, (rows, n.size)).get()
    y = np.random.default_rng(47).binomial(n, p, (rows, n.size))
    assert x.dtype == np.int64 and x.shape == (rows, n.size)
    for k in range(n.size):
        stat, dof = _chi2_two_samples(x[:, k], y[:, k])
        assert stat <= dof + 5 * math.sqrt(2 * dof), (n[k], p[k], stat, dof)
        sd = math.sqrt(n[k] * p[k] * (1 - p[k]))
        assert abs(x[:, k].mean() - n[k] * p[k]) < 6 * sd / math.sqrt(rows) + 1e-12, (n[k], p[k])
        if sd > 30:
            assert _ks2(x[:, k].astype(float), y[:, k].astype(float)) < 1.95 * math.sqrt(2 / rows), (n[k], p[k])
    assert (x >= 0).all() and (x <= n).all()
    np.testing.assert_array_equal(x[:, -2], 50)
    rng = sl.random.default_rng(48)
    lazy = rng.binomial(sl.asarray(np.array([10, 40, 400])), sl.asarray(np.array([0.2, 0.5, 0.7])) * 1.0, (20_000, 3)).get()
    np.testing.assert_allclose(lazy.mean(0), [2.0, 20.0, 280.0], rtol=0.02)
    assert rng.binomial(np.array([3, 4], np.uint8), 0.5).shape == (2,)
    assert rng.binomial(5.7, np.array([0.5, 0.5]), (1000, 2)).get().max() <= 5  # a number n is truncated, as NumPy's


def test_binomial_per_element_errors_and_parameters_numpy_rejects() -> None:
    rng = sl.random.default_rng(49)
    for call in [lambda g: g.binomial(np.array([-1, 2]), 0.5), lambda g: g.binomial(np.array([3, 2]), np.array([0.5, 1.5])),
                 lambda g: g.binomial(np.array([3, 2]), np.array([0.5, np.nan])), lambda g: g.binomial(-2, np.array([0.5]))]:
        with pytest.raises(ValueError) as want:
            call(np.random.default_rng(0))
        with pytest.raises(ValueError, match=re.escape(str(want.value))):
            call(rng)
    with pytest.raises(TypeError, match=r"n must be an array of integers.*float64.*astype"):
        rng.binomial(np.array([5.7, 3.0]), 0.5)
    with pytest.raises(TypeError, match=r"n must be an array of integers.*float32"):
        rng.binomial(sl.asarray(np.array([5.0], np.float32)), 0.5)
    got = rng.binomial(sl.asarray(np.array([-3, 5, 5, 5])), sl.asarray(np.array([0.5, -0.1, np.nan, 1.0]))).get()
    np.testing.assert_array_equal(got, [-1, -1, -1, 5])  # on the device: not read back, -1 where NumPy raises


def test_multinomial_has_numpys_distribution() -> None:
    """Every count sums to n; each category's counts and the pair of the first two against NumPy's
    sampler (chi-square tests); a batch of distributions, an n per element, size."""
    rows, pvals = 60_000, [0.05, 0.25, 0.0, 0.3, 0.4]
    x = sl.random.default_rng(50).multinomial(60, pvals, rows).get()
    y = np.random.default_rng(51).multinomial(60, pvals, rows)
    assert x.dtype == np.int64 and x.shape == (rows, 5)
    np.testing.assert_array_equal(x.sum(1), 60)
    assert (x[:, 2] == 0).all()
    for k in (0, 1, 3, 4):
        stat, dof = _chi2_two_samples(x[:, k], y[:, k])
        assert stat <= dof + 5 * math.sqrt(2 * dof), (k, stat, dof)
    stat, dof = _chi2_two_samples(x[:, 0] * 100 + x[:, 1], y[:, 0] * 100 + y[:, 1])  # the joint law of two
    assert stat <= dof + 5 * math.sqrt(2 * dof), (stat, dof)
    rng = sl.random.default_rng(52)
    batch = rng.multinomial(np.array([10, 400]), np.array([[0.5, 0.5], [0.9, 0.1]]), (20_000, 2)).get()
    assert batch.shape == (20_000, 2, 2)
    np.testing.assert_array_equal(batch.sum(-1), np.broadcast_to([10, 400], (20_000, 2)))
    np.testing.assert_allclose(batch.mean(0), [[5.0, 5.0], [360.0, 40.0]], rtol=0.02)
    assert sl.random.multinomial(5, [0.5, 0.5], (3, 2)).shape == (3, 2, 2)
    many = rng.multinomial(10**6, np.full(30, 1 / 30), 200).get()  # large n: BTRS rounds per category
    np.testing.assert_array_equal(many.sum(1), 10**6)
    assert abs(many.mean() - 10**6 / 30) < 50


def test_multinomial_errors_are_numpys() -> None:
    rng = sl.random.default_rng(53)
    for call in [lambda g: g.multinomial(5, [-0.1, 1.1]), lambda g: g.multinomial(-1, [0.5, 0.5]), lambda g: g.multinomial(5, 0.5),
                 lambda g: g.multinomial(5, [np.nan, 0.5]), lambda g: g.multinomial(5, [0.7, 0.7, 0.1]),
                 lambda g: g.multinomial(np.array([3, -1]), [0.5, 0.5])]:
        with pytest.raises(ValueError) as want:
            call(np.random.default_rng(0))
        with pytest.raises(ValueError, match=re.escape(str(want.value))):
            call(rng)
    with pytest.raises(ValueError, match="size .3,. is not compatible"):
        rng.multinomial(np.array([5, 5]), [0.5, 0.5], (3,))
    with pytest.raises(TypeError, match="n must be an array of integers"):
        rng.multinomial(np.array([5.0]), [0.5, 0.5])


@pytest.mark.parametrize(("mu", "kappa"), [(0.0, 0.0), (0.0, 3e-6), (1.0, 0.5), (3.0, 4.0), (-3.0, 40.0), (0.5, 1e4),
                                         (2.0, 1e7)])
def test_vonmises_has_numpys_distribution(mu: float, kappa: float) -> None:
    """Against NumPy's sampler: a two-sample KS statistic of the angles and of the angles turned by
    pi (the wrap at +-pi moved to mu's side), below the 0.1 % critical value."""
    n = 100_000
    x = sl.random.default_rng(54).vonmises(mu, kappa, n).get()
    y = np.random.default_rng(55).vonmises(mu, kappa, n)
    assert x.dtype == np.float64 and (np.abs(x) <= math.pi).all()
    for turn in (0.0, math.pi):
        a, b = np.angle(np.exp(1j * (x + turn))), np.angle(np.exp(1j * (y + turn)))
        assert _ks2(a, b) < 1.95 * math.sqrt(2 / n), (mu, kappa, turn, _ks2(a, b))


def test_vonmises_parameters_per_element_errors_and_module_function() -> None:
    rng = sl.random.default_rng(56)
    mu, kappa = np.array([-2.0, 0.0, 2.5]), np.array([[1.0], [30.0]])
    x = rng.vonmises(mu, kappa, (20_000, 2, 3)).get()
    mean = np.exp(1j * x).mean(0)
    np.testing.assert_allclose(np.angle(mean), np.broadcast_to(mu, (2, 3)), atol=0.05)
    np.testing.assert_allclose(np.abs(mean)[0], 0.4464, atol=0.015)  # I1(1) / I0(1)
    assert (np.abs(mean)[1] > 0.98).all()
    with pytest.raises(ValueError) as want:
        np.random.default_rng(0).vonmises(0.0, np.array([1.0, -1.0]))
    with pytest.raises(ValueError, match=re.escape(str(want.value))):
        rng.vonmises(0.0, np.array([1.0, -1.0]))
    assert np.isnan(rng.vonmises(0.0, sl.asarray(np.array([-1.0]))).get()).all()  # on the device: NaN, not read back
    sl.random.seed(57)
    first = sl.random.vonmises(0.0, 2.0, 5).get()
    sl.random.seed(57)
    np.testing.assert_array_equal(sl.random.vonmises(0.0, 2.0, 5).get(), first)


def test_logseries_with_a_p_per_element_has_numpys_probabilities() -> None:
    """Kemp's method per element against NumPy's sampler (chi-square tests of the counts), and
    NumPy's check of a host array; -1 for a p outside [0, 1) on the device."""
    ps, n = np.array([0.0, 0.1, 0.5, 0.9, 0.999]), 60_000
    x = sl.random.default_rng(58).logseries(ps, (n, ps.size)).get()
    y = np.random.default_rng(59).logseries(ps, (n, ps.size))
    assert x.dtype == np.int64 and (x >= 1).all()
    np.testing.assert_array_equal(x[:, 0], 1)
    for k in range(1, ps.size):
        stat, dof = _chi2_two_samples(x[:, k], y[:, k])
        assert stat <= dof + 5 * math.sqrt(2 * dof), (ps[k], stat, dof)
    rng = sl.random.default_rng(60)
    with pytest.raises(ValueError) as want:
        np.random.default_rng(0).logseries(np.array([0.5, 1.0]))
    with pytest.raises(ValueError, match=re.escape(str(want.value))):
        rng.logseries(np.array([0.5, 1.0]))
    np.testing.assert_array_equal(rng.logseries(sl.asarray(np.array([-0.1, 1.0, np.nan]))).get(), [-1, -1, -1])
    assert len(sl.explain(rng.logseries(sl.asarray(ps)) + 1).kernels) == 1


HYPERGEOMETRIC = np.array([(10, 10, 10), (5, 50, 12), (100, 30, 60), (50, 70, 40), (10**6, 10**6, 5000), (20, 20, 39),
                           (999, 1, 500), (5, 10, 7), (7, 3, 10), (0, 5, 3)])


def test_hypergeometric_with_parameters_per_element_has_numpys_probabilities() -> None:
    """The draws one by one (the smaller of the sample and its complement below 10) and the HRUA
    rounds (from 10), one column each, against NumPy's sampler; NumPy's checks in NumPy's order."""
    good, bad, sample = HYPERGEOMETRIC.T
    n = 60_000
    x = sl.random.default_rng(61).hypergeometric(good, bad, sample, (n, good.size)).get()
    y = np.random.default_rng(62).hypergeometric(good, bad, sample, (n, good.size))
    assert x.dtype == np.int64
    for k in range(good.size):
        stat, dof = _chi2_two_samples(x[:, k], y[:, k])
        assert stat <= dof + 5 * math.sqrt(2 * dof), (HYPERGEOMETRIC[k], stat, dof)
    assert (x >= np.maximum(0, sample - bad)).all() and (x <= np.minimum(sample, good)).all()
    rng = sl.random.default_rng(63)
    lazy = rng.hypergeometric(sl.asarray(np.array([30, 300])), 70, sl.asarray(np.array([50, 50])), (20_000, 2)).get()
    np.testing.assert_allclose(lazy.mean(0), [15.0, 50 * 300 / 370], rtol=0.02)
    A = np.array
    for args in [(A([-1, 2]), 3, 1), (3, A([-1, 2]), 1), (3, 2, A([-1, 1])), (3, 2, A([6, 1])), (A([10**9]), 1, 1),
                 (A([-1]), A([-1]), A([-5])), (A([-1]), A([10**9]), A([1])), (A([-1]), A([-1]), A([5]))]:
        with pytest.raises(ValueError) as want:
            np.random.default_rng(0).hypergeometric(*args)
        with pytest.raises(ValueError, match=re.escape(str(want.value))):
            rng.hypergeometric(*args)
    with pytest.raises(TypeError, match="ngood must be an array of integers"):
        rng.hypergeometric(A([2.0]), 1, 1)
    got = rng.hypergeometric(sl.asarray(A([5, 5, 5])), sl.asarray(A([5, -1, 5])), sl.asarray(A([11, 2, 4]))).get()
    assert got[0] == -1 and got[1] == -1 and 0 <= got[2] <= 4  # on the device: -1 where NumPy raises


def test_negative_binomial_with_parameters_per_element() -> None:
    n = 60_000
    shapes, probs = np.array([0.4, 3.0, 25.0]), np.array([0.9, 0.3, 0.05])
    x = sl.random.default_rng(42).negative_binomial(shapes, probs, (n, 3)).get()
    y = np.random.default_rng(43).negative_binomial(shapes, probs, (n, 3))
    assert x.dtype == np.int64
    for k in range(3):
        stat, dof = _chi2_two_samples(x[:, k], y[:, k])
        assert stat < dof + 5 * math.sqrt(2 * dof), (k, stat, dof)
    none = sl.random.default_rng(44).negative_binomial(np.array([2.0, 5.0]), 1.0, (10, 2)).get()
    np.testing.assert_array_equal(none, np.zeros((10, 2), np.int64))  # p = 1: no failures
    for call in [lambda g: g.negative_binomial(np.array([1.0, 0.0]), 0.5), lambda g: g.negative_binomial(2.0, np.array([0.5, 0.0])),
                 lambda g: g.negative_binomial(np.array([1.0]), np.array([np.nan]))]:
        with pytest.raises(ValueError) as want:
            call(np.random.default_rng(0))
        with pytest.raises(ValueError, match=re.escape(str(want.value))):
            call(sl.random.default_rng(45))


@pytest.mark.parametrize("draw", [
    lambda g, t: t + g.poisson(3.0, t.shape), lambda g, t: t * g.standard_gamma(2.0, t.shape),
    lambda g, t: t * g.beta(0.4, 0.4, t.shape), lambda g, t: t + g.multivariate_normal([0.0, 1.0], [[1.0, 0.5], [0.5, 1.0]], t.shape[:1]),
    lambda g, t: t * g.dirichlet([1.0, 2.0], t.shape[:1]), lambda g, t: t + g.weibull(1.5, t.shape),
], ids=["poisson", "standard_gamma", "beta", "multivariate_normal", "dirichlet", "weibull"])
def test_the_new_distributions_draw_anew_at_every_jitted_call(draw: Any) -> None:
    gen = sl.random.default_rng(40)
    jitted = sl.jit(lambda t: draw(gen, t))
    x = sl.asarray(np.ones((50, 2)))
    first, second = jitted(x).get(), jitted(x).get()
    assert first.shape == second.shape == (50, 2) and not np.array_equal(first, second)
    again = sl.random.default_rng(40)
    np.testing.assert_array_equal(draw(again, x).get(), first)  # the first call's numbers: the stream's first


def test_permuted_shuffles_each_slice_on_its_own_and_bytes() -> None:
    rng = sl.random.default_rng(41)
    rows = np.tile(np.arange(4), (24_000, 1))
    got = rng.permuted(sl.asarray(rows), axis=1).get()
    np.testing.assert_array_equal(np.sort(got, axis=1), rows)  # each row a permutation of its own
    codes = (got * np.array([64, 16, 4, 1])).sum(1)
    counts = np.unique(codes, return_counts=True)[1]
    assert len(counts) == 24 and ((counts - 1000) ** 2 / 1000).sum() < 23 + 5 * math.sqrt(46)  # uniform over 4! orders
    x = np.arange(12).reshape(3, 4)
    flat = rng.permuted(sl.asarray(x)).get()
    assert flat.shape == (3, 4) and np.array_equal(np.sort(flat.ravel()), x.ravel())
    columns = rng.permuted(sl.asarray(x), axis=0).get()
    np.testing.assert_array_equal(np.sort(columns, axis=0), x)
    out = np.empty((3, 4), np.int64)
    assert rng.permuted(x, axis=-1, out=out) is out and np.array_equal(np.sort(out, 1), x)
    with pytest.raises(np.exceptions.AxisError):
        rng.permuted(sl.asarray(x), axis=2)
    with pytest.raises(ValueError, match="out must have the same shape as x"):
        rng.permuted(sl.asarray(x), out=np.empty((2, 2)))
    data = rng.bytes(100_000)
    assert isinstance(data, bytes) and len(data) == 100_000
    assert abs(np.frombuffer(data, np.uint8).mean() - 127.5) < 1.0
    assert sl.random.bytes(0) == b""


def test_integers_take_array_bounds() -> None:
    rng = sl.random.default_rng(42)
    x = rng.integers([0, 10], [5, 20], size=(50_000, 2)).get()
    assert x.dtype == np.int64 and x.shape == (50_000, 2)
    np.testing.assert_array_equal(np.unique(x[:, 0]), np.arange(5))
    np.testing.assert_array_equal(np.unique(x[:, 1]), np.arange(10, 20))
    counts = np.bincount(x[:, 1] - 10)
    assert ((counts - 5000) ** 2 / 5000).sum() < 9 + 5 * math.sqrt(18)  # uniform
    below = rng.integers(np.array([3, 7]), size=(1000, 2)).get()
    assert (below >= 0).all() and (below < np.array([3, 7])).all() and below[:, 1].max() == 6
    np.testing.assert_array_equal(rng.integers([4, 1], [4, 1], endpoint=True).get(), [4, 1])
    dev = rng.integers(sl.asarray(np.array([-5, 100])), 200, size=(1000, 2), dtype=np.int16).get()
    assert dev.dtype == np.int16 and dev[:, 0].min() >= -5 and dev[:, 1].min() >= 100 and dev.max() < 200
    full = rng.integers(np.array([0], np.uint64), np.array([2**64 - 1], np.uint64), endpoint=True, size=1000, dtype=np.uint64).get()
    assert full.dtype == np.uint64 and full.max() > 2**63  # all 2**64 values: the output itself
    for args, kwargs in [(([0, 10], [5, 5]), {}), (([0, -200], [5, 5]), {"dtype": np.int8}),
                         (([0, 0], [5, 300]), {"dtype": np.int8}), (([2, 3], [1, 3]), {"endpoint": True})]:
        with pytest.raises(ValueError) as want:
            np.random.default_rng(0).integers(*args, **kwargs)
        with pytest.raises(ValueError, match=re.escape(str(want.value))):
            rng.integers(*args, **kwargs)
    with pytest.raises(TypeError, match="complex128"):
        rng.integers(np.array([0.5j]), [3])


@pytest.mark.parametrize("draw", [
    lambda g, size: g.normal([0.0, 0.0], 1.0, size=size), lambda g, size: g.weibull([1.0, 2.0], size=size),
    lambda g, size: g.standard_gamma([1.0, 2.0], size=size), lambda g, size: g.integers([0, 1], [5, 6], size=size),
], ids=["normal", "weibull", "standard_gamma", "integers"])
def test_a_size_the_parameters_do_not_broadcast_to_raises(draw: Any) -> None:
    """NumPy's error, where the draw used to take the parameters' shape instead of ``size``."""
    rng = sl.random.default_rng(43)
    for size in [(), (3,)]:
        with pytest.raises(ValueError, match=re.escape(f"Output size {size} is not compatible with broadcast dimensions "
                                                       "of inputs (2,)")):
            draw(rng, size)
    assert draw(rng, (4, 2)).shape == (4, 2)


@pytest.mark.parametrize(("name", "args"), [
    ("uniform", (1, 0, 3)),
    ("uniform", (np.array([0.0, 1.0]), np.array([1.0, 0.0]))),
    ("uniform", (0, np.array([1.0, np.nan]))),
    ("uniform", (0, np.inf, 3)),
    ("normal", (0, -1, 3)),
    ("exponential", (np.array([-1.0]),)),
    ("integers", (3, 3, 3)),
    ("gamma", (1, -1, 3)),
    ("wald", (1, 0, 3)),
    ("triangular", (1, 0, 2, 3)),
    ("vonmises", (0, -1, 3)),
    ("beta", (0, 1, 3)),
    ("poisson", (np.nan, 3)),
    ("binomial", (3, 1.5, 3)),
    ("logseries", (1, 3)),
    ("dirichlet", ([-1, 1], 3)),
])
def test_host_parameters_are_refused_as_numpys_generator_refuses_them(name: str, args: tuple[Any, ...]) -> None:
    with pytest.raises((ValueError, OverflowError)) as expected:
        getattr(np.random.default_rng(0), name)(*args)
    with pytest.raises(expected.type) as got:
        getattr(sl.random.default_rng(0), name)(*args)
    assert str(expected.value).lower() in str(got.value).lower()


def test_uniform_of_high_below_low_is_refused_by_the_generator_only() -> None:
    # NumPy 2's Generator refuses it; NumPy's and CuPy's module functions draw in (high, low]
    with pytest.raises(ValueError, match=r"high - low < 0 \(low=1, high=0\); give low <= high"):
        sl.random.default_rng(0).uniform(1, 0, 3)
    u = sl.random.uniform(1, 0, 1000).get()
    assert u.min() > 0 and u.max() <= 1 and np.random.uniform(1, 0, 3).shape == (3,)


def test_a_nan_noncentrality_draws_nan_as_numpy() -> None:
    rng = sl.random.default_rng(0)
    for df, nonc in [(1, np.nan), (3, np.nan), (np.array([1.0, 3.0, 0.5]), np.full(3, np.nan)), (1, np.array([np.nan, 1.0]))]:
        want = np.random.default_rng(0).noncentral_chisquare(df, nonc, np.broadcast_shapes(np.shape(df), np.shape(nonc)) or 2)
        got = rng.noncentral_chisquare(df, nonc, want.shape).get()
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    assert np.isnan(rng.noncentral_f(1, 1, np.nan, 2).get()).all()


@pytest.mark.parametrize("size", [None, 3, (2, 4)])
def test_dirichlet_of_no_components_draws_empty_vectors_as_numpy(size: Any) -> None:
    want = np.random.default_rng(0).dirichlet([], size=size)
    got = sl.random.default_rng(0).dirichlet([], size=size)
    assert got.shape == want.shape and got.dtype == want.dtype
    assert got.get().shape == want.shape


#: draws of int seeds recorded before sequences and SeedSequences were taken: an int seed's stream is unchanged
_SEEDED = {0: [969397886678051878, 483924178416925696], 42: [3063180732386728930, 4366551868547703214],
           2**64 + 5: [155120214773975727, 471377480317728800]}


def test_seeds_are_numpys_ints_sequences_and_seed_sequences() -> None:
    for seed, first in _SEEDED.items():
        assert sl.random.default_rng(seed).integers(0, 2**62, 2).get().tolist() == first
    assert sl.random.default_rng(np.array(42)).integers(0, 2**62, 2).get().tolist() == _SEEDED[42]
    def first(seed: Any) -> np.ndarray:
        return sl.random.default_rng(seed).random(4).get()

    one_two_three = first([1, 2, 3])
    for seed in ((1, 2, 3), np.array([1, 2, 3]), np.random.SeedSequence([1, 2, 3])):
        np.testing.assert_array_equal(first(seed), one_two_three)
    np.testing.assert_array_equal(first(np.random.SeedSequence(3)), first([3]))  # (NumPy's state of both is one)
    assert not np.array_equal(first([3]), one_two_three) and not np.array_equal(first([3]), first(3))
    for bad in ([1, -1], [1.5]):
        with pytest.raises((ValueError, TypeError)) as want:
            np.random.default_rng(bad)
        with pytest.raises(want.type):
            sl.random.default_rng(bad)


@pytest.mark.parametrize("call", [
    lambda g: g.integers(0, 2, 1000, dtype=bool),
    lambda g: g.integers(0, 1, 1000, dtype=np.bool_, endpoint=True),
    lambda g: g.integers(0, np.array([1, 2]), (500, 2), dtype=bool),
    lambda g: g.integers(0.5, 2.7, 1000),
    lambda g: g.integers(-0.5, 2, 1000, dtype=np.uint8),
    lambda g: g.integers(3.0, size=1000),
    lambda g: g.integers(np.float32(1.5), np.array(4.5), 1000),
    lambda g: g.integers(np.array([0.5, 1.9]), 2.7, (1000, 2)),
    lambda g: g.integers(np.array([0.0, 1.0]), 5, (1000, 2)),
    lambda g: g.random(np.array([2, 3])),
    lambda g: g.standard_normal(np.array([4])),
    lambda g: g.choice(np.array(5), 1000),
    lambda g: g.choice(np.array(5), np.array([10, 3]), replace=True),
], ids=["bool", "bool-endpoint", "bool-array", "floats", "float-low-uint8", "float-high", "float-0d-arrays",
        "float-array", "float-array-whole", "size-array", "size-array-normal", "choice-0d", "choice-size-array"])
def test_inputs_numpy_takes_draw_its_shapes_dtypes_and_range(call: Any) -> None:
    want = call(np.random.default_rng(0))
    got = call(sl.random.default_rng(0)).get()
    assert got.shape == want.shape and got.dtype == want.dtype
    if want.dtype.kind in "biu":
        assert got.min() == want.min() and got.max() == want.max()  # (every value of the range drawn)


@pytest.mark.parametrize("call", [
    lambda g: g.integers(-1.5, 2, 10, dtype=np.uint8), lambda g: g.integers(np.array([-0.5]), 2, 3, dtype=np.uint8),
    lambda g: g.integers(0, 3, 3, dtype=bool), lambda g: g.integers(-1, 1, 3, dtype=bool),
    lambda g: g.integers(0, np.array([1, 3]), dtype=bool), lambda g: g.integers(0, 1e20, 3),
    lambda g: g.integers(0, np.array([1e20]), 3), lambda g: g.integers(0, np.nan, 3), lambda g: g.integers(0, np.inf, 3),
    lambda g: g.integers(0.9, 1.1, 3) if False else g.integers(1.9, 1.1, 3),
    lambda g: g.random(np.array([2.0, 3.0])), lambda g: g.random(np.array([[2, 3]])), lambda g: g.choice(np.array(5.0), 3),
])
def test_inputs_numpy_refuses_are_refused(call: Any) -> None:
    with pytest.raises((ValueError, TypeError, OverflowError)) as want:
        call(np.random.default_rng(0))
    with pytest.raises(want.type):
        call(sl.random.default_rng(0))


@pytest.mark.parametrize("method", ["random", "standard_normal"])
def test_random_and_standard_normal_draw_into_out_as_numpy(method: str) -> None:
    for out in (sl.zeros((2, 3)), np.zeros((2, 3)), np.zeros((2, 3), order="F")):
        got = getattr(sl.random.default_rng(0), method)(out=out)
        assert got is out
        value = out.get() if isinstance(out, sl.LazyArray) else out
        np.testing.assert_array_equal(value, getattr(sl.random.default_rng(0), method)((2, 3)).get())
    o32 = sl.zeros(3, dtype=np.float32)
    assert getattr(sl.random.default_rng(0), method)(3, dtype=np.float32, out=o32) is o32 and o32.dtype == np.float32
    for kwargs in ({"out": np.zeros(3, np.float32)}, {"out": np.zeros(3, np.int64)}, {"size": 4, "out": np.zeros(3)},
                   {"out": np.zeros(6)[::2]}):
        with pytest.raises((TypeError, ValueError)) as want:
            getattr(np.random.default_rng(0), method)(**kwargs)
        with pytest.raises(want.type, match=str(want.value).split(".")[0]):
            getattr(sl.random.default_rng(0), method)(**kwargs)
