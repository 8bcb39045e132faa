"""The preamble's ``sl_gamma_rounds`` (the loop that stops at the first accepted round) as host C++
(its own text), against the op table's NumPy reference (every round computed, the first accepted
one selected) and against a plain per-element transcription of Marsaglia and Tsang's method: the
same stream outputs in the same roles, the same value. glibc's and NumPy's ``log``/``cos`` may
differ in a last bit, so values are compared within a few units."""

from __future__ import annotations

import math
import subprocess
from pathlib import Path

import numpy as np
import pytest

from stitchlab.ir.ops import GAMMA_ROUNDS, OPS, STREAM_STEP

from .hostcxx import DEVICE_FUNCTION_SHIMS, MASK, build, needs_cxx, preamble_part
from .hostcxx import splitmix64 as _mix

pytestmark = needs_cxx

MAIN = r"""
// per line: d's bits and the counter (hex); prints the value's bits
int main() {
  unsigned long long a, z;
  while (std::scanf(" %llx %llx", &a, &z) == 2) {
    double d; std::memcpy(&d, &a, 8);
    const double r = sl_gamma_rounds(d, z);
    unsigned long long u; std::memcpy(&u, &r, 8); std::printf("%016llx\n", u);
  }
}
"""

def _by_hand(d: float, z0: int) -> tuple[float, int]:
    """The value and the number of rounds taken, one element in Python floats."""
    out = [_mix((z0 + k * STREAM_STEP) & MASK) for k in range(2 * GAMMA_ROUNDS)]
    c = 1.0 / math.sqrt(9.0 * d) if d > 0 else math.nan
    t = v = math.nan
    for k in range(GAMMA_ROUNDS):
        u1, u2 = (out[k & ~1] >> 11) * 2.0**-53, (out[k | 1] >> 11) * 2.0**-53
        radius, angle = math.sqrt(-2.0 * math.log(1.0 - u1)), 2 * math.pi * u2
        x = radius * (math.sin(angle) if k & 1 else math.cos(angle))
        t = 1.0 + c * x
        v = t * t * t
        u = ((out[GAMMA_ROUNDS + k] >> 12) + 0.5) * 2.0**-52
        if t > 0 and math.log(u) < 0.5 * x * x + d - d * v + d * math.log(v):
            return v, k + 1
    return (v if t > 0 else 1.0), GAMMA_ROUNDS


@pytest.fixture(scope="module")
def rounds_exe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    part = preamble_part("// SplitMix64's output function", "// ldexp's exponent")
    part += preamble_part("// Marsaglia and Tsang's rounds", "// Stirling's series of log Gamma")
    return build(tmp_path_factory.mktemp("gamma"), "gamma_rounds", DEVICE_FUNCTION_SHIMS + part + MAIN, "-w")


@pytest.mark.parametrize("a", [0.05, 1.0, 2.5, 100.0])
def test_the_loop_is_the_reference_and_the_method(rounds_exe: Path, a: float) -> None:
    d = (a + 1.0 if a < 1 else a) - 1.0 / 3.0
    z0 = np.random.default_rng(int(a * 100)).integers(0, 2**64, 4000, dtype=np.uint64, endpoint=False)
    ds = np.full(z0.shape, d)
    lines = "".join(f"{np.float64(d).view(np.uint64):x} {int(z):x}\n" for z in z0)
    ran = subprocess.run([str(rounds_exe)], input=lines, capture_output=True, text=True, check=True)
    looped = np.array([int(h, 16) for h in ran.stdout.split()], dtype=np.uint64).view(np.float64)
    reference = OPS["gamma_rounds"].numpy(ds, z0)
    hand = [_by_hand(d, int(z)) for z in z0]
    by_hand = np.array([v for v, _ in hand])
    np.testing.assert_allclose(looped, reference, rtol=1e-13, atol=0)
    np.testing.assert_allclose(reference, by_hand, rtol=1e-13, atol=0)
    taken = np.array([k for _, k in hand])
    assert taken.mean() < 1.06 and (a > 10 or (taken > (2 if a <= 1 else 1)).any())  # later rounds reached, seldom
    assert (looped > 0).all()


def test_a_nan_or_infinite_d_gives_the_fallback_on_both(rounds_exe: Path) -> None:
    ds = np.array([np.nan, np.inf, np.nan])
    z0 = np.array([1, 2, 2**64 - 1], dtype=np.uint64)
    lines = "".join(f"{d.view(np.uint64):x} {int(z):x}\n" for d, z in zip(ds, z0, strict=True))
    ran = subprocess.run([str(rounds_exe)], input=lines, capture_output=True, text=True, check=True)
    looped = np.array([int(h, 16) for h in ran.stdout.split()], dtype=np.uint64).view(np.float64)
    np.testing.assert_array_equal(looped, [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(OPS["gamma_rounds"].numpy(ds, z0), [1.0, 1.0, 1.0])
