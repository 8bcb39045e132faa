"""Parts of the CUDA preamble built as host C++ for the ``*_host`` tests (no GPU needed)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from stitchlab.codegen.preamble import PREAMBLE

CXX = shutil.which("c++") or shutil.which("g++")
needs_cxx = pytest.mark.skipif(CXX is None, reason="no host C++ compiler")


#: the head of a host build of the preamble's device functions (``sl_gamma_rounds``...): the CUDA
#: qualifiers as nothing, the math functions from <cmath>
DEVICE_FUNCTION_SHIMS = r"""
#include <cmath>
#include <cstdio>
#include <cstring>
#define __device__
#define __forceinline__ inline
#define __noinline__
using std::acos; using std::cos; using std::exp; using std::fabs; using std::floor; using std::fmax; using std::fmin;
using std::log; using std::log1p; using std::nan; using std::sin; using std::sqrt;
"""

MASK = (1 << 64) - 1


def splitmix64(z: int) -> int:
    """SplitMix64's output function of a Python integer (sl.random's streams), for per-element
    transcriptions in the host tests."""
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def preamble_part(start: str, end: str, include_end: bool = False) -> str:
    """The preamble's text from ``start`` up to ``end`` (the first after ``start``)."""
    i = PREAMBLE.index(start)
    j = PREAMBLE.index(end, i)
    return PREAMBLE[i:j + len(end) if include_end else j]


def build(directory: Path, name: str, source: str, *flags: str) -> Path:
    """Compile ``source`` (C++17, -O1 and ``flags``) into ``directory/name``; fails the test with
    the compiler's message if it does not compile."""
    cpp = directory / f"{name}.cpp"
    cpp.write_text(source)
    exe = directory / name
    built = subprocess.run([str(CXX), "-std=c++17", "-O1", *flags, "-o", str(exe), str(cpp)], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr[-3000:]
    return exe


#: host stand-ins for an int32 kernel's loads (bounds-checked against the one input ``g_in``),
#: stores and casts, for running a pointwise kernel's element loop (:func:`element_loop`) on the host
INT_KERNEL_HEADER = r"""
#include <cstdio>
#include <cstdlib>
static const int* g_in; static long long g_size;
static int sl_load(const int* p) {
  if (p < g_in || p - g_in >= g_size) { std::printf("out of bounds: %lld\n", (long long)(p - g_in)); std::exit(3); }
  return *p;
}
static void sl_store(int* p, int v) { *p = v; }
template <typename T, typename S> static T sl_cast(S v) { return (T)v; }
"""


def element_loop(source: str) -> str:
    """The statements of a pointwise kernel's element-by-element loop (after its bounds check)."""
    body = source.split("// ---- end of preamble")[1]
    tail = body[body.rindex("if (i >= n) break;") + len("if (i >= n) break;"):]
    lines = []
    for line in tail.splitlines():
        if line.strip() == "}":
            break
        lines.append(line)
    return "\n".join(lines)
