"""A stand-in for CuPy over NumPy that drives ``stitchlab.runtime.scan.scan`` without a GPU: the
CPU models (``tests/test_scan_passes.py``) or the kernels built as host C++
(``tests/compiler/test_scan_kernels_host.py``) take the place of its kernels."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from stitchlab.runtime import scan


class FakeCupy:
    """The parts of CuPy :func:`scan.scan` uses, over NumPy, on a GPU of ``sms`` SMs."""
    ascontiguousarray = staticmethod(np.ascontiguousarray)
    empty = staticmethod(np.empty)
    empty_like = staticmethod(np.empty_like)
    zeros = staticmethod(np.zeros)

    def __init__(self, sms: int) -> None:
        self.sms = sms


def install(monkeypatch: pytest.MonkeyPatch, kernels: Any, sms: int = 2) -> FakeCupy:
    """A :class:`FakeCupy` of ``sms`` SMs, with ``kernels`` (as ``scan._kernels``: ``(cp, op,
    dtype, out)`` to the kernels) in place of the compiled ones. Every dtype takes
    ``sl_scan_columns`` where the shape does (:func:`scan.columns_pay`, which picks it by speed,
    patched), so that the kernel runs for each."""
    monkeypatch.setattr(scan, "_kernels", kernels)
    monkeypatch.setattr(scan, "columns_pay", lambda read, acc: True)
    monkeypatch.setattr(scan, "_sm_count", lambda cp, device: cp.sms)
    monkeypatch.setattr(scan, "_device_id", lambda cp: 0)
    return FakeCupy(sms)
