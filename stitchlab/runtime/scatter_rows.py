"""The scatter step's one pass on the GPU (``interpreter._scatter``, CuPy only): a copy of ``x``
whose rows at given unique positions come from the values instead, each output row read once,
from one or the other, in the widest words the rows' bytes and the buffers' alignment allow.
Measured on the H200 in docs/performance.md, "Assignment"."""

from __future__ import annotations

import functools
import math
from types import ModuleType
from typing import Any

import numpy as np

#: rows of at least these many bytes (after the axis) are scattered by one pass that copies
#: every row from ``x`` or from the values (below), else by a copy and CuPy's assignment
ROW_BYTES = 128

#: the positions' map (``src[idx[i]] = i`` over ``src`` set to -1), then one pass over the
#: output's rows, a block each (rows = pre * n, each of post words): row r = (p, i) is copied
#: from the values' row (p, src[i]) where src[i] >= 0, else from x's
_SCATTER_ROWS = r"""
extern "C" __global__ void sl_scatter_map(const long long* idx, long long* src, long long k) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < k) src[idx[i]] = i;
}

extern "C" __global__ void sl_scatter_rows(const W* x, const W* v, const long long* src, W* out,
                                           long long rows, long long n, long long k, long long post) {
    for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
        long long p = r / n, s = src[r - p * n];
        const W* from = s < 0 ? x + r * post : v + (p * k + s) * post;
        W* to = out + r * post;
        for (long long j = threadIdx.x; j < post; j += blockDim.x)
            to[j] = from[j];
    }
}
"""


@functools.cache
def _kernels(cp: ModuleType, word: int) -> tuple[Any, Any]:
    name = {16: "uint4", 8: "unsigned long long", 4: "unsigned int", 2: "unsigned short", 1: "unsigned char"}[word]
    module = cp.RawModule(code=f"typedef {name} W;\n" + _SCATTER_ROWS)
    return module.get_function("sl_scatter_map"), module.get_function("sl_scatter_rows")


def scatter_rows(cp: ModuleType, x: Any, idx: Any, values: Any, axis: int) -> Any:
    """``x`` with its rows at the unique positions ``idx`` along ``axis`` replaced by ``values``',
    in one pass that reads each output row once (from ``x`` or the values) in the widest words its
    bytes and the buffers' alignment allow, a block a row. On the H200, 1024 of 8192 rows of 4096
    floats: a copy then CuPy's assignment took 95 us back to back; this pass 68, and the map
    made by ``cupy.full`` and CuPy's assignment 71 (hence a memset and a kernel of its own)."""
    n, k = x.shape[axis], idx.shape[0]
    row = math.prod(x.shape[axis + 1:]) * x.itemsize
    x, values, idx = cp.ascontiguousarray(x), cp.ascontiguousarray(values), cp.ascontiguousarray(idx)
    word = next(w for w in (16, 8, 4, 2, 1) if row % w == 0 and x.data.ptr % w == 0 and values.data.ptr % w == 0)
    fill, copy = _kernels(cp, word)
    src = cp.empty(n, dtype=np.int64)
    src.data.memset_async(0xFF, src.nbytes)  # (every byte 0xff: -1)
    fill((-(-k // 256),), (256,), (idx, src, np.int64(k)))
    out = cp.empty(x.shape, x.dtype)
    rows = x.size * x.itemsize // row
    copy((min(rows, 2**31 - 1),), (256,), (x, values, src, out) + tuple(np.int64(a) for a in (rows, n, k, row // word)))
    return out
