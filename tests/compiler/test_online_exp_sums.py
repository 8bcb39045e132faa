"""Which sums ``GroupInfo.online_exp_sums`` lets a streamed kernel compute in the max's pass
(``schedules.OPTIONS["online_exp_sum"]``; their values on the host in
``tests/compiler/test_host_kernels.py``, on the GPU in ``tests/gpu/test_streamed_vectors_gpu.py``)."""

from __future__ import annotations

import numpy as np
import pytest

import stitchlab as sl


def _group(*outs):
    (k,) = [k for k in sl.explain(*outs).kernels if k.info is not None and k.info.kind == "reduce"]
    return k.info


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sums_of_exps_shifted_by_their_max_are_found(dtype: str) -> None:
    x = sl.asarray(np.random.default_rng(0).standard_normal((64, 512)).astype(dtype))
    for info in (_group(sl.logsumexp(x, axis=-1)), _group(sl.softmax(x, axis=-1)),
                 _group(sl.log(sl.exp(x - x.max(-1, keepdims=True)).sum(-1)))):
        sums = [r for r in info.reductions if r.op == "sum"]
        assert len(sums) == 1 and set(info.online_exp_sums()) == {id(sums[0])}


def test_rounded_exps_and_other_shifts_are_not() -> None:
    rng = np.random.default_rng(0)
    for dtype in ("float16", "bfloat16"):  # exps rounded to the dtype one by one, as NumPy's
        x = sl.asarray(rng.standard_normal((64, 512)).astype(np.float32)).astype(dtype)
        assert _group(sl.logsumexp(x, axis=-1)).online_exp_sums() == {}
    x = sl.asarray(rng.standard_normal((64, 512)).astype(np.float32))
    y = sl.asarray(rng.standard_normal((64, 512)).astype(np.float32))
    assert _group(sl.exp(x - y.max(-1, keepdims=True)).sum(-1)).online_exp_sums() == {}  # another array's max
    assert _group(sl.exp(x - x.min(-1, keepdims=True)).sum(-1)).online_exp_sums() == {}  # not a max
    assert _group((sl.exp(x - x.max(-1, keepdims=True)) * y).sum(-1)).online_exp_sums() == {}  # not the exp itself
