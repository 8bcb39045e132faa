"""Signed integer ``floor_divide`` and ``remainder`` by a constant power of two: the emitter writes
``x >> k`` and ``x & (2**k - 1)`` (NumPy's floor semantics; C's ``/`` and ``%`` truncate and the
correction costs about 14 instructions an element of int8). The expressions are taken from the
generated kernels and built as host C++, then compared with NumPy over the extreme values and
random ones. On the GPU: ``tests/gpu/test_small_int_ops_gpu.py``."""

from __future__ import annotations

import re
import subprocess

import numpy as np
import pytest

import stitchlab as sl

from .hostcxx import build, needs_cxx

SIGNED = {"int8": "signed char", "int16": "short", "int32": "int", "int64": "long long"}


def _divisors(dtype: str) -> list[int]:
    return sorted({1, 2, 4, 64, 2 ** (np.iinfo(dtype).bits - 2)})


def _body(*arrays: sl.LazyArray) -> str:
    """The one kernel's source after the preamble (which defines ``sl_floordiv`` and ``sl_mod``)."""
    (k,) = sl.explain(*arrays).kernels
    return k.source.split("// ---- end of preamble")[1]


def _kernel_lines(dtype: str, divisors: list[int]) -> list[str]:
    x = sl.asarray(np.arange(-4, 4, dtype=dtype))
    return _body(*[op(x, d) for d in divisors for op in (sl.floor_divide, sl.remainder)]).splitlines()


@pytest.mark.parametrize("dtype", list(SIGNED))
def test_power_of_two_divisors_are_shifts_and_masks_in_the_kernel(dtype: str) -> None:
    ctype = SIGNED[dtype]
    src = "\n".join(_kernel_lines(dtype, _divisors(dtype)))
    for d in _divisors(dtype):
        k = d.bit_length() - 1
        assert re.search(rf"\(v\d+ >> {k}\);", src), (d, src[-1500:])
        assert f"& (({ctype}){d - 1}LL))" in src, (d, src[-1500:])
    assert "sl_floordiv" not in src and "sl_mod" not in src


@pytest.mark.parametrize("divisor", [3, -2, -4, 6, 0])
def test_other_divisors_keep_the_general_functions(divisor: int) -> None:
    x = sl.asarray(np.arange(-4, 4, dtype=np.int16))
    body = _body(x // divisor, x % divisor)
    assert "sl_floordiv(v" in body and "sl_mod(v" in body and ">>" not in body


@pytest.mark.parametrize("dtype", ["uint8", "uint32", "float32"])
def test_unsigned_and_float_division_keep_the_general_functions(dtype: str) -> None:
    x = sl.asarray(np.arange(0, 8, dtype=dtype))
    body = _body(x // 4, x % 4)
    assert "sl_floordiv(v" in body and "sl_mod(v" in body and ">>" not in body


def test_a_widened_value_is_shifted_in_its_own_type() -> None:
    x = sl.asarray(np.arange(-4, 4, dtype=np.int8))
    y = x.astype(np.int64) // 4
    body = _body(y)
    assert re.search(r"const long long v\d+ = \(long long\)\(v\d+ >> 2\);", body), body


@needs_cxx
@pytest.mark.parametrize("dtype", list(SIGNED))
def test_the_emitted_shifts_and_masks_are_numpys_floor_division(dtype: str, tmp_path) -> None:  # noqa: ANN001
    ctype, info = SIGNED[dtype], np.iinfo(dtype)
    divisors = _divisors(dtype)
    # the emitted lines of the scalar loop (the last occurrence of each), input variable renamed to x
    lines = _kernel_lines(dtype, divisors)
    load = [ln for ln in lines if "= sl_load(in0 + i);" in ln][-1]
    var = re.search(r"(v\d+) = sl_load", load).group(1)
    exprs = [m.group(1) for ln in lines if (m := re.search(rf"= (\({re.escape(ctype)}\)\({var} (?:>>|&) .*\));$", ln))]
    assert len(exprs) == 2 * len(divisors), exprs
    body = "".join(f'    std::printf("%lld ", (long long)({e.replace(var, "x")}));\n' for e in exprs)
    exe = build(tmp_path, "pow2", "#include <cstdio>\nint main() {\n  long long v;\n"
                f"  while (std::scanf(\" %lld\", &v) == 1) {{\n    const {ctype} x = ({ctype})v;\n{body}"
                '    std::printf("\\n");\n  }\n}\n')
    rng = np.random.default_rng(11)
    edges = np.array([info.min, info.min + 1, -65, -64, -63, -5, -4, -3, -2, -1, 0, 1, 2, 3, 63, 64, info.max - 1, info.max])
    x = np.concatenate([edges, rng.integers(info.min, info.max, 3000, endpoint=True)]).astype(dtype)
    out = subprocess.run([str(exe)], input="\n".join(map(str, x.tolist())), capture_output=True, text=True, check=True).stdout
    got = np.array([ln.split() for ln in out.splitlines()], dtype=np.int64)
    want = np.stack([op(x, np.asarray(d, dtype)) for d in divisors for op in (np.floor_divide, np.remainder)], axis=1)
    assert np.array_equal(got, want.astype(np.int64)), np.argwhere(got != want)[:5]
