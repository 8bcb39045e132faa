"""Kernels that compare integer values or compare positions they read through a pad compile
without ptxas optimization on an NVRTC older than 13.4, whose ptxas can drop a negation when it
fuses integer min/max and folds a compare of a clamped position into the clamp's predicate
(``runtime.kernels.ptxas_options``; on the H200 with NVRTC 13.0, ``(x * -1).max(axis=1)`` of int32
rows gave max(x) and ``sl.r_[x, 0, 1:4, 0:1:3j]`` ended in 1, 1, 1 for 0, 0.5, 1).
The same ptxas dropped the sign mask ``& 0x7fff`` of a float16 converted from float and packed
with another by one conversion (``fabs`` of int8 gave -1.0 for every other element); such an
absolute value is now taken in float, before the conversion, and its kernels keep full
optimization (the last tests here).
The values are checked on the GPU (tests/gpu/test_integer_minmax_gpu.py, test_random_graphs_gpu.py);
here: which kernels get the option, that it reaches NVRTC and the registry key, and that NVRTC accepts it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import stitchlab as sl
from stitchlab.runtime import kernels, nvrtc

from .standin import StandIn

OLD, FIXED = ("12.9", "13.0", "13.3"), ("13.4", "13.5", "14.0")


def _kernels(*outs: Any) -> list[Any]:
    return sl.explain(*outs, device="H200").kernels


def _ints(dtype: str = "int32", shape: tuple[int, ...] = (4, 1000)) -> Any:
    return sl.asarray(np.random.default_rng(0).integers(-50, 50, shape).astype(dtype))


CASES: dict[str, tuple[Callable[[], list[Any]], bool]] = {
    "int32 max of x * -1": (lambda: [(_ints() * -1).max(axis=1)], True),
    "int16 min over columns": (lambda: [(-_ints("int16")).min(axis=0)], True),
    "uint8 max": (lambda: [_ints("int16").astype("uint8").max(axis=1)], True),
    "int32 argmax": (lambda: [(_ints() * -1).argmax(axis=1)], True),
    "int32 elementwise maximum": (lambda: [sl.maximum(-_ints(), 3) + 1], True),
    "int32 absolute": (lambda: [abs(_ints()) * 2], True),
    "int32 where": (lambda: [sl.where(_ints() > 0, -_ints(), 5)], True),
    "float16 fabs of int8": (lambda: [sl.fabs(_ints("int8"))], False),  # (taken in float: no mask after a conversion)
    "float16 absolute": (lambda: [abs(_ints("float32").astype("float16")) + 1], False),  # (taken in float: no mask after a conversion)
    "bfloat16 absolute": (lambda: [abs(_ints("float32").astype("bfloat16"))], False),  # (taken in float: no mask after a conversion)
    "int8 floor_divide by 2": (lambda: [sl.floor_divide(_ints("int8"), 2)], False),  # (fixed in the source)
    "int8 right_shift": (lambda: [_ints("int8") >> 1], False),
    "float32 absolute": (lambda: [abs(_ints("int8").astype("float32"))], False),
    "int64 max": (lambda: [(_ints("int64") * -1).max(axis=1)], False),
    "int32 sum": (lambda: [(_ints() * -1).sum(axis=1)], False),
    "float32 max and argmax": (lambda: [(_ints("float32") * -1).max(axis=1), _ints("float32").argmax(axis=0)], False),
    "float32 where on a bool mask": (lambda: [sl.where(_ints("float32") > 0, _ints("float32"), 0.0)], False),
    # positions compared where a pad reads them (NVRTC 13.0-13.3 fold clamp(i - k, 0, 2) == 2 into
    # the clamp's predicate, set below the bound too: sl.r_'s linspace part gave 1.0 for 0.0, 0.5)
    # (unless the pad is masked, a join's or a constant pad's: it reads unclamped, and NVRTC 13.0
    # compiles these optimized without that fold, benchmarks/results/2026-12-05-cpu-masked-pad-rule-sass.txt)
    "r_ with a linspace": (lambda: [sl.r_[_ints("float32")[0], 0, 1:4, 0:1:3j]], False),
    "a padded triangle": (lambda: [sl.pad(sl.tri(40, 50), 2) * 3], False),
    "an edge-padded triangle": (lambda: [sl.pad(sl.tri(40, 50), 2, mode="edge") * 3], True),
    "a reflect-padded join with an arange": (lambda: [sl.pad(sl.concatenate([_ints("float32")[0], sl.arange(5.0)]) > 3, 2, mode="reflect")], True),
    "two steps of a padded stencil": (lambda: [_heat2(_ints("float32", (40, 50)))], False),
    "a join of arrays": (lambda: [sl.concatenate([_ints("float32"), -_ints("float32")], axis=1)], False),
    "a join with an arange": (lambda: [sl.concatenate([_ints("float32")[0], sl.arange(5.0)])], False),
    "an edge pad": (lambda: [sl.pad(_ints("float32"), 3, mode="edge")], False),
    "a triangle": (lambda: [sl.tri(40, 50) * 3], False),
    # the pad's axis is followed to the compared position: a position on another axis is no clamp's
    "a 3 x 3 mean of a zero pad": (lambda: [_mean3(sl.pad(_ints("float32", (40, 50)), 1))], False),
    "a constant pad of 2-d": (lambda: [sl.pad(_ints("float32"), ((2, 3), (1, 4)), constant_values=7) * 2], False),
    "a row mask, transposed, padded along it": (lambda: [sl.pad(_row_mask().T, ((0, 0), (1, 1)), mode="edge")], True),
    "a row mask, transposed, padded across": (lambda: [sl.pad(_row_mask().T, ((1, 1), (0, 0)), mode="edge")], False),
    "a row mask, flattened, padded": (lambda: [sl.pad(_row_mask().reshape(2000), 1, mode="edge")], True),
    "a row mask, split, padded along rows": (lambda: [sl.pad(_row_mask().reshape(40, 5, 10), ((1, 1), (0, 0), (0, 0)), mode="wrap")], True),
    "a row mask, split, padded along columns": (lambda: [sl.pad(_row_mask().reshape(40, 5, 10), ((0, 0), (0, 0), (1, 1)), mode="wrap")], False),
}


def _mean3(p: Any) -> Any:
    n, m = p.shape[0] - 2, p.shape[1] - 2
    return sum(p[i:i + n, j:j + m] for i in range(3) for j in range(3)) / 9


def _heat2(u: Any) -> Any:
    for _ in range(2):  # (the second step compares positions read through the first's pads)
        u = u + 0.1 * sl.pad(u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4 * u[1:-1, 1:-1], 1)
    return u


def _row_mask() -> Any:
    """A 40 x 50 array whose kernel compares row positions only."""
    return sl.where(sl.arange(40)[:, None] == 5, 1.0, _ints("float32", (40, 50)))


def test_which_nvrtc_versions_drop_negations() -> None:
    assert [nvrtc.ptxas_drops_negations(v) for v in (*OLD, *FIXED, "unavailable", "12.0")] == [
        True, True, True, False, False, False, False, True]


@pytest.mark.parametrize("case", list(CASES))
def test_kernels_that_compare_small_integers_compile_unoptimized_on_an_old_nvrtc(case: str) -> None:
    build, affected = CASES[case]
    ks = _kernels(*build())
    assert ks
    for version in OLD:
        got = {kernels.ptxas_options(k, version) for k in ks}
        assert (kernels.UNOPTIMIZED in got) == affected, (case, version, got)
        assert got <= {(), kernels.UNOPTIMIZED}
    for version in (*FIXED, "unavailable"):
        assert {kernels.ptxas_options(k, version) for k in ks} == {()}, (case, version)


def test_the_option_reaches_nvrtc_and_the_registry_key(standin: StandIn, monkeypatch: pytest.MonkeyPatch,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(nvrtc, "version", lambda: "13.0")
    monkeypatch.setattr(kernels, "_warned", set())
    x = sl.asarray(standin.array((4, 1000), "int32"))
    f = sl.asarray(standin.array((4, 1000), "float32"))
    with caplog.at_level("WARNING", logger="stitchlab.runtime"):
        sl.compute((x * -1).max(axis=1), (f * -1).max(axis=1))
        sl.compute((x * -1).min(axis=1))
    warned = [r.getMessage() for r in caplog.records if "ptxas" in r.getMessage()]
    assert len(warned) == 1 and "NVRTC 13.0" in warned[0] and "nvidia-cuda-nvrtc>=13.4" in warned[0]
    (ik,), (fk,) = _kernels((x * -1).max(axis=1)), _kernels((f * -1).max(axis=1))
    assert standin.options[ik.name] == kernels.UNOPTIMIZED
    assert standin.options[fk.name] == ()
    comps = kernels.components(ik, "sm_90")
    assert comps["nvrtc_version"] == "13.0 --ptxas-options=-O0"
    assert kernels.components(fk, "sm_90")["nvrtc_version"] == "13.0"
    # a cubin compiled without the option (before this workaround) has another key: not reused
    assert kernels.key_of(comps) != kernels.key_of({**comps, "nvrtc_version": "13.0"})
    monkeypatch.setattr(nvrtc, "version", lambda: "13.5")
    assert kernels.components(ik, "sm_90")["nvrtc_version"] == "13.5"


def test_nvrtc_accepts_the_option() -> None:
    pytest.importorskip("cuda.bindings.nvrtc", reason="NVRTC (pip cuda-bindings) is not installed")
    (k,) = _kernels((_ints() * -1).max(axis=1))
    cubin, _ = nvrtc.compile_cubin(k.source, k.name, "sm_90", kernels.UNOPTIMIZED)
    assert cubin[:4] == b"\x7fELF"


ABSOLUTES: dict[str, tuple[Callable[[], Any], str]] = {
    # (what the kernel computes, how its 16-bit absolute value is written)
    "fabs of int8": (lambda: sl.fabs(_ints("int8")), "float"),
    "float16 of a float32 product": (lambda: abs((_ints("float32") * 1.5).astype("float16")), "float"),
    "bfloat16 difference": (lambda: abs(_ints("float32").astype("bfloat16") - _ints("int8").astype("bfloat16")), "float"),
    "float16 maximum of converted values": (lambda: abs(sl.maximum(_ints("int8").astype("float16"), -_ints("int8").astype("float16"))), "float"),
    "a float16 input": (lambda: abs(_ints("float16")), "mask"),
    "a bfloat16 input, negated": (lambda: abs(-_ints("bfloat16")), "mask"),
    "a float16 input, selected": (lambda: abs(sl.where(_ints() > 0, _ints("float16"), _ints("float16", (1, 1000)))), "mask"),
}


@pytest.mark.parametrize("case", list(ABSOLUTES))
def test_a_16_bit_absolute_value_of_converted_bits_is_taken_in_float(case: str) -> None:
    """Bits that came out of a conversion from float (or a 16-bit add, subtract or multiply, or
    a sign or select operation on such bits) get ``|x|`` in float and are converted back; bits
    read from memory (through a sign flip or a selection) keep NumPy's mask ``& 0x7fff``. Either
    way the kernel compiles optimized on an old NVRTC."""
    build, how = ABSOLUTES[case]
    (k,) = _kernels(build())
    body = k.source[k.source.index("extern \"C\""):]
    assert ("fabsf(" in body) == (how == "float") and ("sl_habs(" in body) == (how == "mask"), body
    assert kernels.ptxas_options(k, "13.0") == ()
