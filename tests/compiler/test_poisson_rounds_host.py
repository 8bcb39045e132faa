"""The preamble's ``sl_poisson_rounds`` (a search below rate 10, Hörmann's PTRS rounds from 10 on,
stopping at the first accepted round) as host C++ (its own text), against the op table's NumPy
reference and against a plain per-element transcription of the two methods in Python: the same
stream outputs in the same roles, the same counts. glibc's and NumPy's ``exp``/``log`` may differ
in a last bit, which could move a count only where a test lands within that bit of its bound."""

from __future__ import annotations

import math
import subprocess
from pathlib import Path

import numpy as np
import pytest

from stitchlab.codegen.preamble import PREAMBLE
from stitchlab.ir.ops import OPS, POISSON_ROUNDS, STREAM_STEP

from .hostcxx import build, needs_cxx, preamble_part

pytestmark = needs_cxx

SHIMS = r"""
#include <cmath>
#include <cstdio>
#include <cstring>
#define __device__
#define __forceinline__ inline
#define __noinline__
using std::exp; using std::fabs; using std::floor; using std::log; using std::log1p; using std::sqrt;
"""

MAIN = r"""
// per line: the rate's bits and the counter (hex); prints the count
int main() {
  unsigned long long a, z;
  while (std::scanf(" %llx %llx", &a, &z) == 2) {
    double lam; std::memcpy(&lam, &a, 8);
    std::printf("%.17g\n", sl_poisson_rounds(lam, z));
  }
}
"""

MASK = (1 << 64) - 1


def _mix(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


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
    part += preamble_part("// log P(k) of a Poisson distribution", "// ---- end of preamble")
    return build(tmp_path_factory.mktemp("poisson"), "poisson_rounds", SHIMS + part + MAIN, "-w")


def _looped(exe: Path, lams: np.ndarray, z0: np.ndarray) -> np.ndarray:
    lines = "".join(f"{np.float64(v).view(np.uint64):x} {int(z):x}\n" for v, z in zip(lams, z0, strict=True))
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
