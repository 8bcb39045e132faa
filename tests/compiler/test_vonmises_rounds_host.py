"""The preamble's ``sl_vonmises_rounds`` (Best and Fisher's rounds, stopping at the first accepted
one; the uniform and normal ends) as host C++ (its own text), against the op table's NumPy
reference and against a plain per-element transcription of NumPy's method: the same stream
outputs in the same roles, the same angles within a few units (glibc's and NumPy's ``cos``,
``acos`` and ``log`` may differ in a last bit)."""

from __future__ import annotations

import math
import subprocess
from pathlib import Path

import numpy as np
import pytest

from stitchlab.codegen.preamble import PREAMBLE
from stitchlab.ir.ops import OPS, STREAM_STEP, VONMISES_ROUNDS

from .hostcxx import DEVICE_FUNCTION_SHIMS, MASK, build, needs_cxx, preamble_part
from .hostcxx import splitmix64 as _mix

pytestmark = needs_cxx

MAIN = r"""
// per line: kappa's bits and the counter (hex); prints the angle's bits
int main() {
  unsigned long long a, z;
  while (std::scanf(" %llx %llx", &a, &z) == 2) {
    double kappa; std::memcpy(&kappa, &a, 8);
    const double r = sl_vonmises_rounds(kappa, z);
    unsigned long long u; std::memcpy(&u, &r, 8); std::printf("%016llx\n", u);
  }
}
"""

def _by_hand(kappa: float, z0: int) -> tuple[float, int]:
    """The angle and the rounds taken, one element in Python floats."""
    def uniform(k: int) -> float:
        return (_mix((z0 + k * STREAM_STEP) & MASK) >> 11) * 2.0**-53

    if kappa > 1e6:
        return math.sqrt(-2.0 * math.log(1.0 - uniform(0))) * math.cos(2 * math.pi * uniform(1)) / math.sqrt(kappa), 0
    if kappa < 1e-8:
        return math.pi * (2.0 * uniform(0) - 1.0), 0
    if kappa < 1e-5:
        s = 1.0 / kappa + kappa
    else:
        r = 1.0 + math.sqrt(1.0 + 4.0 * kappa * kappa)
        rho = (r - math.sqrt(2.0 * r)) / (2.0 * kappa)
        s = (1.0 + rho * rho) / (2.0 * rho)
    taken = VONMISES_ROUNDS
    for t in range(VONMISES_ROUNDS):
        c = math.cos(math.pi * uniform(2 * t))
        w = (1.0 + s * c) / (s + c)
        y = kappa * (s - w)
        v = ((_mix((z0 + (2 * t + 1) * STREAM_STEP) & MASK) >> 12) + 0.5) * 2.0**-52
        if y * (2.0 - y) - v >= 0.0 or math.log(y / v) + 1.0 - y >= 0.0:
            taken = t + 1
            break
    angle = math.acos(w)
    return (-angle if uniform(2 * VONMISES_ROUNDS) < 0.5 else angle), taken


@pytest.fixture(scope="module")
def rounds_exe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    part = preamble_part("// SplitMix64's output function", "// ldexp's exponent")
    part += preamble_part("// A von Mises angle about 0", "// log(x!) of an integer-valued x >= 0 (ir/ops.py")
    return build(tmp_path_factory.mktemp("vonmises"), "vonmises_rounds", DEVICE_FUNCTION_SHIMS + part + MAIN, "-w")


def _looped(exe: Path, kappas: np.ndarray, z0: np.ndarray) -> np.ndarray:
    lines = "".join(f"{np.float64(k).view(np.uint64):x} {int(z):x}\n" for k, z in zip(kappas, z0, strict=True))
    ran = subprocess.run([str(exe)], input=lines, capture_output=True, text=True, check=True)
    return np.array([int(h, 16) for h in ran.stdout.split()], dtype=np.uint64).view(np.float64)


@pytest.mark.parametrize("kappa", [0.0, 5e-9, 3e-6, 0.3, 1.0, 4.0, 250.0, 1e6, 3e7])
def test_the_loop_is_the_reference_and_the_method(rounds_exe: Path, kappa: float) -> None:
    z0 = np.random.default_rng(int(kappa * 10) % 1000 + 3).integers(0, 2**64, 3000, dtype=np.uint64, endpoint=False)
    kappas = np.full(z0.shape, kappa)
    looped = _looped(rounds_exe, kappas, z0)
    reference = OPS["vonmises_rounds"].numpy(kappas, z0)
    hand = [_by_hand(kappa, int(z)) for z in z0]
    np.testing.assert_allclose(looped, reference, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(reference, [a for a, _ in hand], rtol=1e-12, atol=1e-14)
    assert (np.abs(looped) <= math.pi).all()
    taken = np.array([t for _, t in hand])
    if 1.0 <= kappa <= 1e6:
        assert 1.0 < taken.mean() < 1.6 and taken.max() >= 3  # later rounds reached, seldom
    assert f"t < {VONMISES_ROUNDS}; t++" in PREAMBLE and f"{2 * VONMISES_ROUNDS}ull * step" in PREAMBLE


def test_a_negative_or_nan_kappa_gives_nan_on_both(rounds_exe: Path) -> None:
    kappas, z0 = np.array([-1.0, np.nan, np.inf]), np.array([1, 2, 3], dtype=np.uint64)
    looped, reference = _looped(rounds_exe, kappas, z0), OPS["vonmises_rounds"].numpy(kappas, z0)
    assert np.isnan(looped[:2]).all() and np.isnan(reference[:2]).all()
    assert looped[2] == reference[2] == 0.0  # infinitely concentrated: mu itself
