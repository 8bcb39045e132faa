"""float16 and bfloat16 absolute values on the GPU at hand, against NumPy, bit for bit.

The ptxas of NVRTC 13.0 to 13.3 packs two float-to-float16 conversions into one F2FP.PACK_AB and
dropped the sign mask ``& 0x7fff`` that followed (fuzz seed 1000455: ``fabs`` of int8 gave -1.0
for every other element). An absolute value of bits that came out of a conversion is now taken
in float before converting back (``codegen.elemental.Writer._absolute_bits``); bits read from
memory keep the mask. Neither needs ``--ptxas-options=-O0`` any more, which cost these kernels
1.1-5x on NVRTC 13.0. Every 16-bit pattern, read as it is and through conversions, in vectorized
(8 halves a thread) and element-by-element kernels.

Run on the GPU machine: ``PYTHONPATH=. python3 -m pytest -m gpu tests/gpu/test_half_absolute_gpu.py -q``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import stitchlab as sl
from stitchlab.runtime import kernels

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cupy_backend")]

DTYPES = ["float16", "bfloat16"]


def _dtype(name: str) -> np.dtype:
    return np.dtype(sl.bfloat16) if name == "bfloat16" else np.dtype(name)


def _every_pattern(name: str, shape: tuple[int, ...]) -> np.ndarray:
    """All 65 536 bit patterns of the dtype (NaNs with every payload, both zeros, subnormals), in
    ``shape`` (a multiple of them: repeated)."""
    bits = np.resize(np.arange(1 << 16, dtype=np.uint16), shape)
    return bits.view(_dtype(name))


def _bits(a: Any) -> np.ndarray:
    return np.asarray(a).view(np.uint16)


def _same(got: Any, want: np.ndarray, exact_nans: bool) -> None:
    """``got`` has NumPy's bits; NaNs only as NaNs where ``exact_nans`` is False (a NaN that went
    through a conversion: the GPU's conversions keep a payload's high bits or make it quiet)."""
    g, w = np.asarray(got), want
    assert g.dtype == w.dtype and g.shape == w.shape
    if exact_nans:
        np.testing.assert_array_equal(_bits(g), _bits(w))
        return
    gf, wf = g.astype(np.float32), w.astype(np.float32)
    assert np.array_equal(np.isnan(gf), np.isnan(wf))
    keep = ~np.isnan(wf)
    np.testing.assert_array_equal(_bits(g)[keep], _bits(w)[keep])


CASES: dict[str, tuple[Callable[[Any, Any], Any], bool]] = {
    # (the expression over an array of every pattern, for stitchlab and NumPy; NaNs bit for bit)
    "abs(x)": (lambda m, x: abs(x), True),
    "abs(-x)": (lambda m, x: abs(-x), True),
    "abs(x) * 1 (stored)": (lambda m, x: abs(x) * x.dtype.type(1), False),
    "abs(x converted through float32)": (lambda m, x: abs(x.astype(np.float32).astype(x.dtype)), False),
    "abs(x - x[::-1])": (lambda m, x: abs(x - x[..., ::-1]), False),
    "abs(x * 0.5)": (lambda m, x: abs(x * x.dtype.type(0.5)), False),
    "abs(maximum(x, -x converted))": (lambda m, x: abs(m.maximum(x, (-x).astype(np.float32).astype(x.dtype))), False),
}


@pytest.mark.parametrize("shape", [(256, 256), (7, 9363)])
@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("name", DTYPES)
def test_absolute_of_every_16_bit_pattern(name: str, case: str, shape: tuple[int, ...]) -> None:
    expr, exact = CASES[case]
    a = _every_pattern(name, shape)
    x = sl.asarray(a)
    with np.errstate(all="ignore"):
        want = np.asarray(expr(np, a))
    got = expr(sl, x)
    for k in sl.explain(got).kernels:
        if getattr(k, "source", None):
            assert kernels.ptxas_options(k, "13.0") == (), k.name
    _same(got.get(), want, exact)


@pytest.mark.parametrize("shape", [(64, 4096), (3, 1001)])
def test_fabs_of_int8_the_program_that_failed(shape: tuple[int, ...]) -> None:
    """Fuzz seed 1000455's step: ``fabs`` of int8 (a float16 result), every int8 value."""
    a = np.resize(np.arange(-128, 128, dtype=np.int8), shape)
    got = sl.fabs(sl.asarray(a))
    np.testing.assert_array_equal(_bits(got.get()), _bits(np.fabs(a)))
    assert not np.signbit(got.get().astype(np.float32)).any()
