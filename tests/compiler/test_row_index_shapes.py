"""A value of a reduction's row read at a shape without its 1s (``keepdims=False``) and combined
with an array broadcast over some of the kept axes (``w / x.sum(axis=1)``, ``w`` of shape
``(1, K)``): each element reads ``w`` at its own position. Before the fix the generated column
kernel read such an operand at element 0 whenever the kept shape had more axes than the result
(found on the H200 by ``tests/fuzzgraphs.py``, seed 1075). The values are checked on the GPU by
``tests/gpu/test_random_graphs_gpu.py``; here, on the H200 preset's source: no GPU needed."""

from __future__ import annotations

import re

import numpy as np
import pytest

import stitchlab as sl

CASES = [((8, 128, 100), 1, (1, 100)), ((8, 4096, 100), 1, (1, 100)), ((64, 8, 100), 0, (8, 1)),
         ((128, 8, 100), 0, (1, 100)), ((8, 100, 128), 2, (1, 100)), ((4, 8, 128, 100), 2, (8, 100))]


@pytest.mark.parametrize("with_sum", [False, True])
@pytest.mark.parametrize(("shape", "axis", "wshape"), CASES)
def test_row_values_read_broadcast_operands_at_their_own_position(shape, axis, wshape, with_sum) -> None:
    x = sl.asarray(np.ones(shape, np.float32))
    w = sl.asarray(np.ones(wshape, np.float32))
    s = sl.sum(x, axis=axis)
    plan = sl.explain(*([w / s, s] if with_sum else [w / s]), device="H200")
    for kernel in plan.kernels:
        # every input here has more than one element: none is read at a constant position
        assert not re.findall(r"sl_load\(in\d+ \+ 0\)", kernel.source), kernel.source
