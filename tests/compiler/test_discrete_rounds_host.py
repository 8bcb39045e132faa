"""The preamble's ``sl_poisson_rounds`` and ``sl_binomial_rounds`` (a search for small means,
Hörmann's PTRS and BTRS rounds from 10 on, stopping at the first accepted round) as host C++
(their own text), against the op table's NumPy references and against plain per-element
transcriptions of the methods in Python: the same stream outputs in the same roles, the same
counts. glibc's and NumPy's ``exp``/``log`` may differ in a last bit, which could move a count
only where a test lands within that bit of its bound."""

from __future__ import annotations

import math
import subprocess
from pathlib import Path

import numpy as np
import pytest

from stitchlab.codegen.preamble import PREAMBLE
from stitchlab.ir.ops import (
    BINOMIAL_ROUNDS,
    HYPERGEOMETRIC_ROUNDS,
    OPS,
    POISSON_ROUNDS,
    STREAM_STEP,
)

from .hostcxx import DEVICE_FUNCTION_SHIMS, MASK, build, needs_cxx, preamble_part
from .hostcxx import splitmix64 as _mix

pytestmark = needs_cxx

MAIN = r"""
// per line: P, the rate's bits and the counter, B, n's and p's bits and the counter, or H, good's,
// bad's and sample's bits and the counter (hex);
// prints the count
int main() {
  char kind;
  unsigned long long a, b, z;
  while (std::scanf(" %c %llx", &kind, &a) == 2) {
    double x, y; std::memcpy(&x, &a, 8);
    if (kind == 'P') {
      std::scanf(" %llx", &z);
      std::printf("%.17g\n", sl_poisson_rounds(x, z));
    } else if (kind == 'B') {
      std::scanf(" %llx %llx", &b, &z);
      std::memcpy(&y, &b, 8);
      std::printf("%.17g\n", sl_binomial_rounds(x, y, z));
    } else {
      unsigned long long c; double w;
      std::scanf(" %llx %llx %llx", &b, &c, &z);
      std::memcpy(&y, &b, 8); std::memcpy(&w, &c, 8);
      std::printf("%.17g\n", sl_hypergeometric_rounds(x, y, w, z));
    }
  }
}
"""

def _log_pmf(k: float, lam: float) -> float:
    """log P(k), Python floats: plainly below 10; from there as ``d = k + 1 - lam`` and Stirling's
    series of log(k!) (its terms written out)."""
    if k < 10:
        return -lam + k * math.log(lam) - math.log(math.factorial(int(k)))
    x = k + 1.0
    d = x - lam
    series = 1 / (12 * x) - 1 / (360 * x**3) + 1 / (1260 * x**5) - 1 / (1680 * x**7) + 1 / (1188 * x**9)
    return d - k * math.log1p(d / lam) - 0.5 * math.log(x) - 0.5 * math.log(2 * math.pi) - series


def _by_hand(lam: float, z0: int) -> tuple[float, int]:
    """The count and the rounds taken (0 for the search), one element in Python floats."""
    out = [_mix((z0 + k * STREAM_STEP) & MASK) for k in range(2 * POISSON_ROUNDS)]
    if lam < 10:
        u = (out[0] >> 11) * 2.0**-53
        p = math.exp(-lam)
        cdf, k = p, 0
        while u >= cdf:
            k += 1
            p = p * lam / k
            if cdf + p == cdf:
                break
            cdf += p
        return float(k), 0
    b = 0.931 + 2.53 * math.sqrt(lam)
    a = -0.059 + 0.02483 * b
    alpha, vr = 1.1239 + 1.1328 / (b - 3.4), 0.9277 - 3.6224 / (b - 2.0)
    k = 0.0
    for r in range(POISSON_ROUNDS):
        big_u = ((out[2 * r] >> 12) + 0.5) * 2.0**-52 - 0.5
        v = ((out[2 * r + 1] >> 12) + 0.5) * 2.0**-52
        us = 0.5 - abs(big_u)
        k = math.floor((2.0 * a / us + b) * big_u + lam + 0.43)
        if us >= 0.07 and v <= vr:
            return float(k), r + 1
        if k >= 0 and (us >= 0.013 or v <= us) and (
                math.log(v) + math.log(alpha) - math.log(a / (us * us) + b) <= _log_pmf(k, lam)):
            return float(k), r + 1
    return float(max(k, 0)), POISSON_ROUNDS


@pytest.fixture(scope="module")
def rounds_exe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    part = preamble_part("// SplitMix64's output function", "// ldexp's exponent")
    part += preamble_part("// Stirling's series of log Gamma", "// ---- end of preamble")
    return build(tmp_path_factory.mktemp("counts"), "count_rounds", DEVICE_FUNCTION_SHIMS + part + MAIN, "-w")


def _looped(exe: Path, lams: np.ndarray, z0: np.ndarray) -> np.ndarray:
    lines = "".join(f"P {np.float64(v).view(np.uint64):x} {int(z):x}\n" for v, z in zip(lams, z0, strict=True))
    ran = subprocess.run([str(exe)], input=lines, capture_output=True, text=True, check=True)
    return np.array([float(w) for w in ran.stdout.split()])


@pytest.mark.parametrize("lam", [0.0, 0.01, 2.5, 9.999, 10.0, 63.7, 1e5, 3e15])
def test_the_loop_is_the_reference_and_the_methods(rounds_exe: Path, lam: float) -> None:
    z0 = np.random.default_rng(int(lam) % 1000 + 7).integers(0, 2**64, 3000, dtype=np.uint64, endpoint=False)
    lams = np.full(z0.shape, lam)
    looped = _looped(rounds_exe, lams, z0)
    reference = OPS["poisson_rounds"].numpy(lams, z0)
    hand = [_by_hand(lam, int(z)) for z in z0]
    np.testing.assert_array_equal(looped, reference)
    np.testing.assert_array_equal(reference, [k for k, _ in hand])
    taken = np.array([r for _, r in hand])
    if lam >= 10:
        assert 1.0 < taken.mean() < 1.35 and taken.max() >= 3  # later rounds reached, seldom
    assert (looped >= 0).all() and looped.dtype == np.float64
    assert abs(looped.mean() - lam) < 6 * math.sqrt(max(lam, 1e-3) / looped.size) + 1e-9


def test_rates_numpy_rejects_give_minus_one_on_both(rounds_exe: Path) -> None:
    lams = np.array([-1.0, np.nan, np.inf, 1e19, -0.0])
    z0 = np.array([1, 2, 3, 4, 5], dtype=np.uint64)
    want = [-1.0, -1.0, -1.0, -1.0, 0.0]
    np.testing.assert_array_equal(_looped(rounds_exe, lams, z0), want)
    np.testing.assert_array_equal(OPS["poisson_rounds"].numpy(lams, z0), want)


def test_the_log_pmf_is_the_plain_one_and_sums_to_one_at_a_rate_of_3e15() -> None:
    log_pmf = OPS["poisson_rounds"].numpy.__globals__["_poisson_log_pmf"]
    for lam in (10.0, 57.3, 1e4, 1e6):
        k = np.unique(np.round(lam + np.linspace(-8, 8, 41) * math.sqrt(lam)).clip(0))
        plain = [-lam + v * math.log(lam) - math.lgamma(v + 1) for v in k]
        np.testing.assert_allclose(log_pmf(k, lam, math.log(lam)), plain, rtol=0, atol=1e-9 * max(1.0, lam / 1e4))
        np.testing.assert_allclose(log_pmf(k, lam, math.log(lam)), [_log_pmf(v, lam) for v in k], rtol=0, atol=1e-12)
    # where k log(lam) and log(k!) are 1e17: the probabilities over +-9 standard deviations (every
    # 2000th k, times 2000) sum to 1
    lam = 3e15
    k = np.arange(lam - 9 * math.sqrt(lam), lam + 9 * math.sqrt(lam), 2000.0).round()
    assert abs(np.exp(log_pmf(k, lam, math.log(lam))).sum() * 2000 - 1) < 1e-6
    assert f"r < {POISSON_ROUNDS}; r++" in PREAMBLE


def _binomial_by_hand(n: float, p: float, z0: int) -> tuple[float, int]:
    """The count and the rounds taken (0 for the search), one element in Python floats, with
    ``math.lgamma`` for the log-factorials (agreeing with the series to about 1e-15)."""
    out = [_mix((z0 + k * STREAM_STEP) & MASK) for k in range(2 * BINOMIAL_ROUNDS)]
    q = min(p, 1.0 - p)
    if n * q < 10:
        u = (out[0] >> 11) * 2.0**-53
        r = q / (1.0 - q)
        pk = math.exp(n * math.log1p(-q))
        cdf, k = pk, 0.0
        while u >= cdf and k < n:
            k += 1.0
            pk = pk * (r * (n - k + 1.0) / k)
            if cdf + pk == cdf:
                break
            cdf += pk
        return (n - k if p > 0.5 else k), 0
    spq = math.sqrt(n * q * (1 - q))
    b = 1.15 + 2.53 * spq
    a = -0.0873 + 0.0248 * b + 0.01 * q
    alpha, m = (2.83 + 5.1 / b) * spq, math.floor((n + 1) * q)

    def log_pmf(k: float) -> float:  # plain: fine at these n
        return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1) + k * math.log(q) + (n - k) * math.log1p(-q)

    k = 0.0
    for r in range(BINOMIAL_ROUNDS):
        big_u = ((out[2 * r] >> 12) + 0.5) * 2.0**-52 - 0.5
        v = ((out[2 * r + 1] >> 12) + 0.5) * 2.0**-52
        us = 0.5 - abs(big_u)
        k = math.floor((2.0 * a / us + b) * big_u + n * q + 0.5)
        if 0 <= k <= n and ((us >= 0.07 and v <= 0.92 - 4.2 / b) or
                            math.log(v * alpha / (a / (us * us) + b)) <= log_pmf(k) - log_pmf(m)):
            return (n - k if p > 0.5 else k), r + 1
    k = min(max(k, 0.0), n)
    return (n - k if p > 0.5 else k), BINOMIAL_ROUNDS


def _binomial_looped(exe: Path, ns: np.ndarray, ps: np.ndarray, z0: np.ndarray) -> np.ndarray:
    lines = "".join(f"B {np.float64(n).view(np.uint64):x} {np.float64(p).view(np.uint64):x} {int(z):x}\n"
                    for n, p, z in zip(ns, ps, z0, strict=True))
    ran = subprocess.run([str(exe)], input=lines, capture_output=True, text=True, check=True)
    return np.array([float(w) for w in ran.stdout.split()])


@pytest.mark.parametrize(("n", "p"), [(0.0, 0.3), (1.0, 0.5), (7.0, 0.9), (19.0, 0.5), (20.0, 0.5), (20.0, 0.51),
                                      (1000.0, 0.3), (1000.0, 0.995), (1e6, 0.5), (3e5, 1e-4), (50.0, 1.0), (50.0, 0.0)])
def test_the_binomial_loop_is_the_reference_and_the_methods(rounds_exe: Path, n: float, p: float) -> None:
    z0 = np.random.default_rng(int(n) % 997 + int(p * 100)).integers(0, 2**64, 3000, dtype=np.uint64, endpoint=False)
    ns, ps = np.full(z0.shape, n), np.full(z0.shape, p)
    looped = _binomial_looped(rounds_exe, ns, ps, z0)
    reference = OPS["binomial_rounds"].numpy(ns, ps, z0)
    hand = [_binomial_by_hand(n, p, int(z)) for z in z0]
    np.testing.assert_array_equal(looped, reference)
    np.testing.assert_array_equal(reference, [k for k, _ in hand])
    taken = np.array([r for _, r in hand])
    if n * min(p, 1 - p) >= 10:
        assert 1.0 < taken.mean() < 1.45 and taken.max() >= 3  # later rounds reached, seldom
    assert (looped >= 0).all() and (looped <= n).all()
    assert abs(looped.mean() - n * p) < 6 * math.sqrt(max(n * p * (1 - p), 1e-3) / looped.size) + 1e-9


def test_binomial_parameters_numpy_rejects_give_minus_one_on_both(rounds_exe: Path) -> None:
    ns = np.array([-1.0, np.nan, np.inf, 1e19, 5.0, 5.0, 5.0])
    ps = np.array([0.5, 0.5, 0.5, 0.5, -0.1, 1.5, np.nan])
    z0 = np.arange(1, 8, dtype=np.uint64)
    np.testing.assert_array_equal(_binomial_looped(rounds_exe, ns, ps, z0), np.full(7, -1.0))
    np.testing.assert_array_equal(OPS["binomial_rounds"].numpy(ns, ps, z0), np.full(7, -1.0))


def test_the_stirling_tail_and_the_binomial_log_ratio_at_a_trillion_trials() -> None:
    """The remainder against ``lgamma``; the BTRS bound's log(P(k) / P(m)) form summed over
    +-9 standard deviations at n = 1e12 (every 1000th k): probabilities that sum to 1."""
    tail = OPS["binomial_rounds"].numpy.__globals__["_stirling_tail"]
    x = np.array([0.0, 1.0, 5.0, 9.0, 10.0, 11.0, 300.0])
    plain = [math.lgamma(v + 1) - ((v + 0.5) * math.log(v + 1) - (v + 1) + 0.5 * math.log(2 * math.pi)) for v in x]
    np.testing.assert_allclose(tail(x), plain, rtol=1e-9, atol=1e-15)
    n, q = 1e12, 0.3
    m, r, sd = math.floor((n + 1) * q), q / (1 - q), math.sqrt(n * q * (1 - q))
    k = np.arange(m - 9 * sd, m + 9 * sd, 1000.0).round()
    h = (m + 0.5) * math.log((m + 1.0) / (r * (n - m + 1.0))) + tail(np.float64(m)) + tail(np.float64(n - m))
    ratio = (h + (n + 1.0) * np.log1p((k - m) / (n - k + 1.0)) + (k + 0.5) * np.log(r * (n - k + 1.0) / (k + 1.0))
             - tail(k) - tail(n - k))
    # P(m) from the normal approximation's peak (exact enough at these n: relative 1e-12)
    assert abs(np.exp(ratio).sum() * 1000 / (math.sqrt(2 * math.pi) * sd) - 1) < 1e-5
    assert f"t < {BINOMIAL_ROUNDS}; t++" in PREAMBLE


def _unmix(y: int) -> int:
    """The counter whose SplitMix64 output is ``y`` (the output function inverted: its xor-shifts
    undone by iteration, its multiplies by their inverses modulo 2**64)."""
    def unshift(v: int, s: int) -> int:
        x = v
        for _ in range(64 // s + 1):
            x = v ^ (x >> s)
        return x

    y = (unshift(y, 31) * pow(0x94D049BB133111EB, -1, 1 << 64)) & MASK
    return unshift((unshift(y, 27) * pow(0xBF58476D1CE4E5B9, -1, 1 << 64)) & MASK, 30)


def test_the_largest_uniform_stops_the_search_at_n(rounds_exe: Path) -> None:
    """The uniform 1 - 2**-53 lies above the rounded sum of all of binomial(5, 0.1)'s terms: the
    search stops at n (without the bound it went on to n + 1); the Poisson search stops where its
    sum stops growing, on both sides alike."""
    z = _unmix(MASK)
    assert _mix(z) == MASK
    z0 = np.array([z, z], dtype=np.uint64)
    ns, ps = np.array([5.0, 4.0]), np.array([0.1, 0.2])
    np.testing.assert_array_equal(_binomial_looped(rounds_exe, ns, ps, z0), [5.0, 4.0])
    np.testing.assert_array_equal(OPS["binomial_rounds"].numpy(ns, ps, z0), [5.0, 4.0])
    lams = np.array([3.0, 0.5])
    looped = _looped(rounds_exe, lams, z0)
    np.testing.assert_array_equal(looped, OPS["poisson_rounds"].numpy(lams, z0))
    assert looped[0] > 15 and looped[1] > 8


def _hypergeometric_by_hand(good: float, bad: float, sample: float, z0: int) -> float:
    """The count, one element in Python floats, NumPy's methods with ``math.lgamma`` for log(k!)."""
    def output(k: int) -> int:
        return _mix((z0 + k * STREAM_STEP) & MASK)

    total = good + bad
    s = min(sample, total - sample)
    if s < 10:
        left_good, left, count = good, total, 0.0
        for i in range(int(s)):
            if (output(i) >> 11) * 2.0**-53 * left < left_good:
                count, left_good = count + 1, left_good - 1
            left -= 1
    else:
        small, large = min(good, bad), max(good, bad)
        a = s * (small / total) + 0.5
        c = math.sqrt((total - s) * s * (small / total) * (large / total) / (total - 1.0) + 0.5)
        h = 1.7155277699214135 * c + 0.8989161620588988
        m = math.floor((s + 1.0) * (small + 1.0) / (total + 2.0))

        def lf(x: float) -> float:
            return math.lgamma(x + 1)

        g = lf(m) + lf(small - m) + lf(s - m) + lf(large - s + m)
        b = min(min(s, small) + 1.0, math.floor(a + 16.0 * c))
        count = m
        for t in range(HYPERGEOMETRIC_ROUNDS):
            u = ((output(2 * t) >> 12) + 0.5) * 2.0**-52
            v = (output(2 * t + 1) >> 11) * 2.0**-53
            x = a + h * (v - 0.5) / u
            if not 0 <= x < b:
                continue
            count = math.floor(x)
            d = g - (lf(count) + lf(small - count) + lf(s - count) + lf(large - s + count))
            if u * (4.0 - u) - 3.0 <= d or (u * (u - d) < 1.0 and 2.0 * math.log(u) <= d):
                break
        if good > bad:
            count = s - count
    return good - count if s < sample else count


@pytest.mark.parametrize(("good", "bad", "sample"), [(5.0, 10.0, 7.0), (7.0, 3.0, 10.0), (0.0, 5.0, 3.0), (10.0, 10.0, 10.0),
                                                     (100.0, 30.0, 60.0), (20.0, 20.0, 39.0), (1e6, 1e6, 5000.0),
                                                     (1e8, 1e6, 1e6), (999.0, 1.0, 500.0)])
def test_the_hypergeometric_loop_is_the_reference_and_the_methods(rounds_exe: Path, good: float, bad: float, sample: float) -> None:
    z0 = np.random.default_rng(int(good + bad + sample) % 991).integers(0, 2**64, 3000, dtype=np.uint64, endpoint=False)
    gs, bs, ss = (np.full(z0.shape, v) for v in (good, bad, sample))
    lines = "".join(f"H {np.float64(good).view(np.uint64):x} {np.float64(bad).view(np.uint64):x} "
                    f"{np.float64(sample).view(np.uint64):x} {int(z):x}\n" for z in z0)
    ran = subprocess.run([str(rounds_exe)], input=lines, capture_output=True, text=True, check=True)
    looped = np.array([float(w) for w in ran.stdout.split()])
    reference = OPS["hypergeometric_rounds"].numpy(gs, bs, ss, z0)
    np.testing.assert_array_equal(looped, reference)
    np.testing.assert_array_equal(reference, [_hypergeometric_by_hand(good, bad, sample, int(z)) for z in z0])
    assert (looped >= max(0.0, sample - bad)).all() and (looped <= min(sample, good)).all()
    sd = math.sqrt(sample * good / (good + bad) * bad / (good + bad) * (good + bad - sample) / max(good + bad - 1, 1))
    assert abs(looped.mean() - sample * good / (good + bad)) < 6 * sd / math.sqrt(looped.size) + 1e-9
    assert f"t < {HYPERGEOMETRIC_ROUNDS}; t++" in PREAMBLE


def test_hypergeometric_parameters_numpy_rejects_give_minus_one_on_both(rounds_exe: Path) -> None:
    rows = np.array([[-1.0, 5.0, 2.0], [5.0, -1.0, 2.0], [5.0, 5.0, -1.0], [5.0, 5.0, 11.0], [1e9, 5.0, 2.0],
                     [np.nan, 5.0, 2.0]])
    z0 = np.arange(1, 7, dtype=np.uint64)
    lines = "".join(f"H {r[0].view(np.uint64):x} {r[1].view(np.uint64):x} {r[2].view(np.uint64):x} {int(z):x}\n"
                    for r, z in zip(rows, z0, strict=True))
    ran = subprocess.run([str(rounds_exe)], input=lines, capture_output=True, text=True, check=True)
    np.testing.assert_array_equal([float(w) for w in ran.stdout.split()], np.full(6, -1.0))
    np.testing.assert_array_equal(OPS["hypergeometric_rounds"].numpy(rows[:, 0], rows[:, 1], rows[:, 2], z0), np.full(6, -1.0))
