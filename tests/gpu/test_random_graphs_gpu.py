"""Random expression graphs on the GPU at sizes where the schedules differ (axes of 1 to 4096
elements), every value checked against NumPy's step on stitchlab's inputs (``tests/fuzzgraphs.py``
says how). 480 fixed programs, and 120 more with bfloat16 leaves.

Run on the GPU machine: ``PYTHONPATH=. python3 -m pytest -m gpu tests/gpu/test_random_graphs_gpu.py -q``;
more seeds: ``python3 tests/fuzzgraphs.py FIRST COUNT`` with the cupy backend.
"""

from __future__ import annotations

import fuzzgraphs
import pytest

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cupy_backend")]

CHUNK = 40


def _failures(first: int, dtypes: list[str] | None = None) -> list[str]:
    out = []
    for seed in range(first, first + CHUNK):
        problems = fuzzgraphs.check(seed, dtypes)
        if problems:
            out.append(fuzzgraphs.build(seed, dtypes).describe() + "\n" + "\n".join(problems))
    return out


@pytest.mark.parametrize("first", range(0, 480, CHUNK))
def test_random_graphs_match_numpy_on_gpu(first: int) -> None:
    failures = _failures(first)
    assert not failures, "\n\n".join(failures)


@pytest.mark.parametrize("first", range(10_000, 10_120, CHUNK))
def test_random_graphs_bfloat16_on_gpu(first: int) -> None:
    pytest.importorskip("ml_dtypes")
    failures = _failures(first, ["bfloat16", "bfloat16", "float32", "int32", "bool"])
    assert not failures, "\n\n".join(failures)
