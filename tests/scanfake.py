"""A stand-in for CuPy over NumPy that drives ``stitchlab.runtime.scan.scan`` without a GPU: the
CPU models (``tests/test_scan_passes.py``) or the kernels built as host C++
(``tests/compiler/test_scan_kernels_host.py``) take the place of its kernels."""

from __future__ import annotations

import numpy as np


class FakeCupy:
    """The parts of CuPy :func:`scan.scan` uses, over NumPy, on a GPU of ``sms`` SMs."""
    ascontiguousarray = staticmethod(np.ascontiguousarray)
    empty = staticmethod(np.empty)
    empty_like = staticmethod(np.empty_like)
    zeros = staticmethod(np.zeros)

    def __init__(self, sms: int) -> None:
        self.sms = sms
