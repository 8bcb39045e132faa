"""The argmax/argmin combine rules of the preamble (``sl_arg``, ``sl_op_argmax``,
``sl_op_argmin``, ``sl_arg_index``), compiled as host C++ from the preamble's own text and run on
the CPU against NumPy's argmax/argmin. Two orders: the kernels' (a row dealt to 1-9 threads in
chunks of 1, 4 or 8 positions; each thread adds its elements with ``step`` in increasing
positions, as every row schedule's loops do; the threads' pairs combined as a random tree, for
the shuffles and warps combine in orders the host cannot reproduce), and every element's pair
combined as a random tree. Rows with ties, NaNs (the first counts), +-inf, all equal. The GPU
itself checks the kernels in ``tests/gpu/test_arg_reductions_gpu.py``."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np

from stitchlab.codegen.preamble import PREAMBLE

from .hostcxx import build, needs_cxx, preamble_part

pytestmark = needs_cxx


def _preamble_part(start: str, end: str) -> str:
    return preamble_part(start, end, include_end=True)


MAIN = r"""
#include <cstdio>
#include <vector>
#include <cmath>
#include <cstdlib>
// combine the pairs as a pseudo-random tree: a random neighbour pair, either operand first
template <class Op> sl_arg<float> tree(std::vector<sl_arg<float>> v, unsigned seed) {
  while (v.size() > 1) {
    seed = seed * 1103515245u + 12345u;
    const size_t k = (seed >> 8) % (v.size() - 1);
    v[k] = (seed >> 4) & 1 ? Op()(v[k], v[k + 1]) : Op()(v[k + 1], v[k]);
    v.erase(v.begin() + k + 1);
  }
  return v[0];
}
// the kernels' order: position p is thread (p / chunk) % threads's; each thread steps up its
// positions from the identity, then the threads' pairs meet in a tree
template <class Op> int by_threads(const std::vector<float>& x, int threads, int chunk, unsigned seed, float ident) {
  std::vector<sl_arg<float>> acc(threads, sl_arg<float>{ident, 0x7fffffff});
  for (int p = 0; p < (int)x.size(); ++p) acc[(p / chunk) % threads] = Op().step(acc[(p / chunk) % threads], x[p], p);
  return sl_arg_index(tree<Op>(acc, seed));
}
// every element a pair, in a shuffled order, with an identity, all met in a tree
template <class Op> int by_tree(const std::vector<float>& x, const std::vector<int>& perm, unsigned seed, float ident) {
  std::vector<sl_arg<float>> v;
  v.push_back(sl_arg<float>{ident, 0x7fffffff});
  for (int p : perm) v.push_back(sl_arg<float>{x[p], p});
  return sl_arg_index(tree<Op>(v, seed));
}
// every row: n, then n values, then a permutation of 0..n-1, threads, chunk, a tree order seed
int main() {
  int n;
  while (std::scanf("%d", &n) == 1) {
    std::vector<float> x(n); std::vector<int> perm(n); int threads, chunk; unsigned seed;
    for (auto& e : x) { char s[64]; std::scanf("%63s", s); e = std::strtof(s, nullptr); }
    for (auto& p : perm) std::scanf("%d", &p);
    std::scanf("%d %d %u", &threads, &chunk, &seed);
    std::printf("%d %d %d %d\n", by_threads<sl_op_argmax>(x, threads, chunk, seed, -INFINITY), by_tree<sl_op_argmax>(x, perm, seed, -INFINITY),
                by_threads<sl_op_argmin>(x, threads, chunk, seed, INFINITY), by_tree<sl_op_argmin>(x, perm, seed, INFINITY));
  }
}
"""


def _rows(rng: np.random.Generator) -> list[np.ndarray]:
    rows = []
    for n in (1, 2, 3, 7, 33, 200):
        for _ in range(40):
            x = rng.integers(-3, 4, n).astype(np.float32)  # many ties
            kind = rng.integers(0, 6)
            if kind == 1:
                x[rng.integers(0, n, 1 + n // 10)] = np.nan
            elif kind == 2:
                x[:] = -np.inf
            elif kind == 3:
                x[:] = np.inf
            elif kind == 4:
                x[rng.integers(0, n, 1 + n // 5)] = rng.choice([np.inf, -np.inf])
            rows.append(x)
    return rows


def test_combine_rules_give_numpys_index_in_the_kernels_orders(tmp_path: Path) -> None:
    src = "#define __device__\n#define __forceinline__ inline\n#define __shfl_xor_sync(m, v, o) (v)\n"
    src += _preamble_part("template <class T> struct sl_is_float", "template <> struct sl_is_float<double> { static constexpr bool value = true; };")
    src += "\n" + _preamble_part("template <class T> __device__ __forceinline__ bool sl_isnan", "\n}\n")
    src += "template <class T> T sl_shfl_xor(T v, int) { return v; }\n"
    src += _preamble_part("template <class V> struct sl_arg", "// reduction combiners")
    src += MAIN
    exe = build(tmp_path, "arg", src)
    rng = np.random.default_rng(0)
    rows = _rows(rng)
    lines = []
    for x in rows:
        perm = rng.permutation(len(x))
        layout = f"{int(rng.integers(1, 10))} {int(rng.choice([1, 4, 8]))} {int(rng.integers(1, 2**31))}"
        lines.append(f"{len(x)} {' '.join(repr(float(v)) for v in x)} {' '.join(map(str, perm))} {layout}")
    out = subprocess.run([str(exe)], input="\n".join(lines) + "\n", capture_output=True, text=True, check=True).stdout.split("\n")
    for x, line in zip(rows, out, strict=False):
        got = list(map(int, line.split()))
        want = [int(np.argmax(x))] * 2 + [int(np.argmin(x))] * 2
        assert got == want, (x.tolist(), got, want)
    assert len([o for o in out if o]) == len(rows)


def test_the_preamble_parts_exist() -> None:
    """The test above reads the rules from the preamble's text by these markers."""
    for marker in ("template <class V> struct sl_arg", "struct sl_op_argmax {", "struct sl_op_argmin {",
                   "sl_arg<V> step(sl_arg<V> a, V v, int i) const", "int sl_arg_index(sl_arg<V> a)"):
        assert marker in PREAMBLE
    assert re.search(r"struct sl_op_argmin \{.*?step", PREAMBLE, re.S)
