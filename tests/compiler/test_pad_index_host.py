"""``pad`` nodes (``sl.pad``'s modes, ``sl.roll``) read the input at positions computed in the
kernel (``stitchlab.codegen.elemental``, ``_pad_position``). The positions the generated kernels
compute, built as host C++ (each kernel's element loop, its loads bounds-checked), against NumPy's
``pad`` of the positions themselves: every mode, extents 1 to 7, widths to three periods, and a
2-d array padded along both axes. On the GPU: ``tests/gpu/test_library_steps_gpu.py``."""

from __future__ import annotations

import subprocess
from typing import Any

import numpy as np
import pytest

import stitchlab as sl

from .hostcxx import INT_KERNEL_HEADER, build, element_loop, needs_cxx

pytestmark = needs_cxx




def _cases(mode: str) -> list[tuple[tuple[int, ...], tuple[tuple[int, int], ...]]]:
    out = []
    for n in range(1, 8):
        period = {"edge": 1, "wrap": n, "symmetric": 2 * n, "reflect": max(2 * (n - 1), 1)}[mode]
        # within one reflection or wrap (compares), at its limits, and past it (a modulo)
        for before, after in [(1, 0), (0, 2), (n - 1 or 1, n - 1 or 1), (n, n), (n + 1, 0), (3 * period, 1),
                              (2, 3 * period + 1), (period - 1 or 1, period + 1)]:
            out.append(((n,), ((before, after),)))
    out.append(((3, 5), ((2, 4), (7, 1))))
    out.append(((4, 1), ((0, 3), (2, 2))))
    return out


@pytest.mark.parametrize("mode", ["edge", "wrap", "reflect", "symmetric"])
def test_the_emitted_positions_are_numpys_pad(mode: str, tmp_path) -> None:  # noqa: ANN001
    cases = _cases(mode)
    kernels, wants = [], []
    for shape, widths in cases:
        positions = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
        y = sl.pad(sl.asarray(positions), widths, mode=mode)
        (k,) = sl.explain(y).kernels
        assert "sl_load(in0 +" in k.source and "in1" not in k.source, "one input, read at computed positions"
        kernels.append((k.source, positions.size))
        wants.append(np.pad(positions, widths, mode=mode).ravel())
    for (shape, widths), got, want in zip(cases, _run_on_positions(tmp_path, f"pad_{mode}", kernels, wants), wants, strict=True):
        assert np.array_equal(got, want), (mode, shape, widths, got, want)


def _run_on_positions(tmp_path, name: str, kernels: list[tuple[str, int]], wants: list[np.ndarray]) -> list[np.ndarray]:  # noqa: ANN001
    """Each pointwise int32 kernel's element loop (``(source, input size)``; one input ``in0``)
    built as host C++ with its loads bounds-checked, run on the input ``0, 1, 2, ...``: its
    outputs (of the sizes of ``wants``)."""
    functions, calls = [], []
    for c, ((source, size), want) in enumerate(zip(kernels, wants, strict=True)):
        functions.append(f"static void case{c}(const int* in0, int* out0, const int n) {{\n"
                         f"  for (int i = 0; i < n; ++i) {{{element_loop(source)}\n  }}\n}}\n")
        calls.append(f"  {{ static int in[{size}], out[{want.size}];\n"
                     f"    for (int j = 0; j < {size}; ++j) in[j] = j;\n"
                     f"    g_in = in; g_size = {size}; case{c}(in, out, {want.size});\n"
                     f"    for (int j = 0; j < {want.size}; ++j) std::printf(\"%d \", out[j]);\n"
                     f"    std::printf(\"\\n\"); }}\n")
    exe = build(tmp_path, name, INT_KERNEL_HEADER + "".join(functions) + "int main() {\n" + "".join(calls) + "}\n")
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.splitlines()
    assert len(out) == len(wants), out[-3:]
    return [np.array(line.split(), dtype=np.int64) for line in out]


def test_a_pad_along_the_outer_axis_is_keyed_by_the_input_extent() -> None:
    """Kernels are shared between batch sizes (the outermost extent is an argument), but a pad's
    positions depend on its input's extent along the padded axis: two extents, two kernels."""
    names = set()
    for rows in (5, 9):
        y = sl.pad(sl.asarray(np.zeros((rows, 8), np.float32)), ((2, 2), (0, 0)), mode="reflect")
        (k,) = sl.explain(y * 2).kernels
        names.add(k.name)
        assert f"(int){2 * (rows - 1)} - " in k.source  # (the reflection at the far end)
    assert len(names) == 2


def _padded_chain(xp: Any, y: Any, steps: list[tuple[int, int, int, int, int, str]]) -> Any:
    """Pads of sums of two slices of the last pad (a stencil's steps): step ``(axis, a, c,
    before, after, mode)`` pads ``y[a:a + m] + 3 * y[c:c + m]`` along ``axis``."""
    for axis, a, c, before, after, mode in steps:
        m = y.shape[axis] - max(a, c)
        s1, s2 = ((slice(None),) * axis + (slice(k, k + m),) for k in (a, c))
        widths = [(0, 0)] * y.ndim
        widths[axis] = (before, after)
        extra = {"constant_values": -1} if mode == "constant" else {}
        y = xp.pad(y[s1] + 3 * y[s2], widths, mode=mode, **extra)
    return y


def test_pads_of_slices_of_pads_read_numpys_positions(tmp_path) -> None:  # noqa: ANN001
    """An edge pad read at another's position plus a slice's constant reads at one clamp of the
    first position (``_reclamped``; a constant pad is an edge pad with masks): chains of edge,
    constant and wrap pads along either axis, widths past the extent (positions known here)."""
    rng = np.random.default_rng(5)
    kernels, chains, wants = [], [], []
    for _ in range(24):
        positions = np.arange(int(np.prod(shape := rng.integers(2, 8, 2))), dtype=np.int32).reshape(shape)
        steps, extents = [], list(positions.shape)
        for _ in range(int(rng.integers(3, 7))):
            axis = int(rng.integers(2))
            a, c = (int(v) for v in rng.integers(0, extents[axis], 2))
            before, after = (int(v) for v in rng.integers(0, 4, 2))
            mode = str(rng.choice(["edge", "edge", "constant", "wrap"]))
            steps.append((axis, a, c, before, after, mode))
            extents[axis] += before + after - max(a, c)
        y = _padded_chain(sl, sl.asarray(positions) * 1, steps)  # (* 1: no slice is a view of the buffer)
        (k,) = sl.explain(y).kernels
        kernels.append((k.source, positions.size))
        chains.append(steps)
        wants.append(_padded_chain(np, positions, steps).ravel())
    for steps, got, want in zip(chains, _run_on_positions(tmp_path, "pad_chains", kernels, wants), wants, strict=True):
        assert np.array_equal(got, want), steps


def _heat(xp: Any, y: Any, steps: int, axes: int) -> Any:
    """``steps`` explicit steps of a 3-point (``axes`` 1) or 5-point (2) integer stencil whose
    boundary stays 0: ``y + pad(Laplacian of the interior, 1)``."""
    for _ in range(steps):
        if axes == 1:
            y = y + xp.pad(y[:, 2:] - 2 * y[:, 1:-1] + y[:, :-2], ((0, 0), (1, 1)))
        else:
            y = y + xp.pad(y[2:, 1:-1] + y[:-2, 1:-1] + y[1:-1, 2:] + y[1:-1, :-2] - 4 * y[1:-1, 1:-1], 1)
    return y


def test_a_padded_stencils_steps_read_each_offset_once(tmp_path) -> None:  # noqa: ANN001
    """A constant pad is an edge pad whose values outside its input a ``where`` drops (``masked``):
    its kernel reads the input at the position minus the width, unclamped (``Writer._unclamped``),
    so ``k`` fused steps of a 3-point stencil read ``2k + 1`` offsets of the input (clamped per
    path before: 31 loads at 4 steps, 128 at 8; 25 steps of 256 columns wrote 12 MB of source).
    The loads that may reach outside the input clamp their addresses (here bounds-checked), and
    the values are NumPy's, the edges included."""
    cases, kernels, wants = [], [], []
    for axes, steps, shape in [(1, 1, (3, 7)), (1, 4, (6, 40)), (1, 8, (6, 40)), (1, 8, (2, 9)), (2, 3, (9, 11)), (2, 4, (5, 30))]:
        positions = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
        y = _heat(sl, sl.asarray(positions) * 1, steps, axes)
        (k,) = sl.explain(y).kernels
        loads = element_loop(k.source).count("sl_load(")
        assert loads <= (2 * steps + 2 if axes == 1 else 2 * steps * steps + 2 * steps + 2), (axes, steps, loads)
        cases.append((axes, steps, shape))
        kernels.append((k.source, positions.size))
        wants.append(_heat(np, positions, steps, axes).ravel())
    for case, got, want in zip(cases, _run_on_positions(tmp_path, "heat", kernels, wants), wants, strict=True):
        assert np.array_equal(got, want), case
