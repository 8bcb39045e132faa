"""Parts of the CUDA preamble built as host C++ for the ``*_host`` tests (no GPU needed)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from stitchlab.codegen.preamble import PREAMBLE

CXX = shutil.which("c++") or shutil.which("g++")
needs_cxx = pytest.mark.skipif(CXX is None, reason="no host C++ compiler")


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
