"""What a scan stitched into a row kernel would give the top-p mask: a hand-written CUDA kernel
(not generated, not in the product) that holds a row of logits in registers, takes its max and
its sum of exponentials, scans the probabilities and stores ``cumsum(softmax(x)) < p``, reading
the logits once and writing the mask once. Timed against stitchlab's plan (a row kernel, the scan
step, an elementwise kernel) and torch.compile in the same process, as ``benchmarks/scans.py``
times them (held loops, CUDA events, median of ``--samples``), its result checked the same way.

    python3 benchmarks/top_p_fused_probe.py --out /tmp/top-p [--samples 15] [--commit C]

Writes ``top_p_fused.json``. Rows of 32000 float32, 2048 of them; a block of 1024 threads a row,
eight float4 loads a thread.
"""

from __future__ import annotations

import json
import pathlib
import sys
from typing import Any

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # appended: the installed stitchlab (or the GPU machine's shim) stays first
    sys.path.append(str(ROOT))

from benchmarks.scans import _checker, top_p, top_p_torch  # noqa: E402
from benchmarks.timing import CupyClock, TorchClock, gpu_run_meta, measure, probe_args  # noqa: E402

SHAPE = (2048, 32000)

KERNEL = r"""
#define THREADS 1024
#define SEGS 8   // float4 loads a thread: THREADS * SEGS * 4 >= the row's length
__device__ __forceinline__ float warp_max(float v) {
  for (int d = 16; d; d >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, d));
  return v;
}
__device__ __forceinline__ float warp_sum(float v) {
  for (int d = 16; d; d >>= 1) v += __shfl_xor_sync(0xffffffffu, v, d);
  return v;
}
extern "C" __global__ void __launch_bounds__(THREADS) top_p_row(const float* __restrict__ x, unsigned char* __restrict__ mask,
                                                             int n, float p) {
  __shared__ float red[32];
  __shared__ float wsum[SEGS][32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const float* xr = x + (long long)blockIdx.x * n;
  unsigned char* mr = mask + (long long)blockIdx.x * n;
  float v[SEGS][4];
  float m = __int_as_float(0xff800000);
  #pragma unroll
  for (int k = 0; k < SEGS; ++k) {
    const int i = (threadIdx.x + k * THREADS) * 4;
    if (i + 4 <= n) {
      const float4 q = *reinterpret_cast<const float4*>(xr + i);
      v[k][0] = q.x; v[k][1] = q.y; v[k][2] = q.z; v[k][3] = q.w;
    } else {
      #pragma unroll
      for (int u = 0; u < 4; ++u) v[k][u] = i + u < n ? xr[i + u] : __int_as_float(0xff800000);
    }
    #pragma unroll
    for (int u = 0; u < 4; ++u) m = fmaxf(m, v[k][u]);
  }
  m = warp_max(m);
  if (lane == 0) red[warp] = m;
  __syncthreads();
  m = warp_max(red[lane]);
  __syncthreads();
  float s = 0.0f;
  #pragma unroll
  for (int k = 0; k < SEGS; ++k)
    #pragma unroll
    for (int u = 0; u < 4; ++u) { v[k][u] = expf(v[k][u] - m); s += v[k][u]; }
  s = warp_sum(s);
  if (lane == 0) red[warp] = s;
  __syncthreads();
  s = warp_sum(red[lane]);
  const float inv = 1.0f / s;
  // each segment: the thread's four in order, then across the warp's lanes, then across warps
  float excl[SEGS];
  #pragma unroll
  for (int k = 0; k < SEGS; ++k) {
    #pragma unroll
    for (int u = 0; u < 4; ++u) v[k][u] = v[k][u] * inv + (u ? v[k][u - 1] : 0.0f);
    float incl = v[k][3];
    #pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
      const float y = __shfl_up_sync(0xffffffffu, incl, d);
      if (lane >= d) incl += y;
    }
    excl[k] = incl - v[k][3];
    if (lane == 31) wsum[k][warp] = incl;
  }
  __syncthreads();
  float carry = 0.0f;
  #pragma unroll
  for (int k = 0; k < SEGS; ++k) {
    float before = 0.0f, all = 0.0f;
    for (int j = 0; j < 32; ++j) {
      const float t = wsum[k][j];
      before += j < warp ? t : 0.0f;
      all += t;
    }
    const float lead = carry + before + excl[k];
    carry += all;
    const int i = (threadIdx.x + k * THREADS) * 4;
    unsigned int bits = 0;
    #pragma unroll
    for (int u = 0; u < 4; ++u) bits |= (unsigned int)(lead + v[k][u] < p) << (8 * u);
    if (i + 4 <= n) *reinterpret_cast<unsigned int*>(mr + i) = bits;
    else for (int u = 0; u < 4 && i + u < n; ++u) mr[i + u] = (bits >> (8 * u)) & 1u;
  }
}
"""


def main(argv: list[str] | None = None) -> int:
    args = probe_args(__doc__, "top-p-fused-results", argv)

    import cupy as cp
    import torch

    import stitchlab as sl

    sl.set_backend("cupy")
    meta, bw = gpu_run_meta(args.commit, args.samples, shape=list(SHAPE))
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    x = np.random.default_rng(3).standard_normal(SHAPE, dtype=np.float32)
    xs, xt = cp.asarray(x), torch.as_tensor(x, device="cuda")
    check = _checker("top_p_float32", x, 1)
    kernel = cp.RawKernel(KERNEL, "top_p_row")
    assert SHAPE[1] % 4 == 0 and SHAPE[1] <= 1024 * 8 * 4

    def fused() -> Any:
        mask = cp.empty(SHAPE, dtype=bool)
        kernel((SHAPE[0],), (1024,), (xs, mask, np.int32(SHAPE[1]), np.float32(0.9)))
        return mask

    torch._dynamo.reset()
    jitted, compiled = sl.jit(lambda u: top_p(sl, u)), torch.compile(top_p_torch)
    floor = (x.nbytes + x.size) / bw * 1e6
    rows = [measure({"impl": impl, "floor_us": floor}, call, clock, args.samples, check) for impl, call, clock in (
        ("hand-written fused row kernel", fused, CupyClock()), ("stitchlab", lambda: jitted(xs), CupyClock()),
        ("torch_compile", lambda: compiled(xt), TorchClock()))]
    (out / "top_p_fused.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    print(f"{meta['date']} {meta['gpu']} commit {args.commit}; copy {bw / 1e12:.3f} TB/s; {SHAPE} float32, floor {floor:.1f} us")
    for r in rows:
        dev = r.get("device", {}).get("median_us")
        print(f"{r['impl']:32} device {dev if dev is None else round(dev, 1)} us  ok {r.get('ok')} {r.get('check', '')} "
              f"{r.get('error', '')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
