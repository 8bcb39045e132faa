"""Generated kernels run on the CPU: the whole kernel source (preamble included) built as host
C++ with CUDA's execution model emulated, so that the emitters' index arithmetic, guards, passes,
barriers and block reductions are checked against NumPy without a GPU (in CI too).

How: every CUDA thread of a block is a fiber (``ucontext``) on one OS thread. The block's fibers
run in turn, each until it reaches ``__syncthreads()`` (all of the block's live fibers must, then
all go on) or a warp shuffle (the 32 lanes of its warp exchange through a slot each, then go on);
blocks run one after another, so ``__shared__`` variables are ``static`` (one block at a time holds
them). Between two of the block's barriers each warp in turn runs as far as it can (increasing
warps, or with ``order=1`` decreasing), so one warp runs ahead of the others: code that reads
shared memory another warp writes with no barrier between gives a different result in one of the
two orders. The PTX the preamble writes as inline ``asm`` has host versions
(:data:`HOST_ASM`): float16 conversions correctly rounded through ``_Float16``, the approximate
``ex2``/``rcp`` as exact ``exp2f`` and division, NaN-propagating min/max. Memory is the host's:
an out-of-range access is not caught (run under a sanitizer for that).

What this does not check: the device's own arithmetic (approximate functions, fused multiply-adds
ptxas forms, flushed subnormals), memory ordering between blocks beyond running them in order,
speed. Those stay with the GPU tests (``tests/gpu``).
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

from stitchlab.codegen.preamble import PREAMBLE

from .hostcxx import CXX

#: host C++ for each PTX instruction the preamble writes inline: ``{0}`` is the output operand,
#: ``{1}``, ``{2}`` the inputs (as the ``asm`` statement names them)
HOST_ASM = {
    "cvt.f32.f16": "{0} = slh_h2f({1});",
    "cvt.rn.f16.f32": "{0} = slh_f2h({1});",
    "cvt.rn.f16.f64": "{0} = slh_d2h({1});",
    "add.rn.f16": "{0} = slh_f2h(slh_h2f({1}) + slh_h2f({2}));",
    "sub.rn.f16": "{0} = slh_f2h(slh_h2f({1}) - slh_h2f({2}));",
    "mul.rn.f16": "{0} = slh_f2h(slh_h2f({1}) * slh_h2f({2}));",
    "cvt.rn.bf16x2.f32": "{0} = slh_f2bf({2});",
    "add.rn.bf16": "{0} = slh_f2bf(slh_bf2f({1}) + slh_bf2f({2}));",
    "sub.rn.bf16": "{0} = slh_f2bf(slh_bf2f({1}) - slh_bf2f({2}));",
    "mul.rn.bf16": "{0} = slh_f2bf(slh_bf2f({1}) * slh_bf2f({2}));",
    "mov.b32": "{0} = {1};",
    "prefetch.global.L2": "(void)({0});",
    "ex2.approx.ftz.f32": "{0} = exp2f({1});",
    "ex2.approx.f32": "{0} = exp2f({1});",
    "rcp.approx.ftz.f32": "{0} = 1.0f / ({1});",
    "tanh.approx.f32": "{0} = tanhf({1});",
    "max.NaN.f32": "{0} = slh_max_nan({1}, {2});",
    "min.NaN.f32": "{0} = slh_min_nan({1}, {2});",
    "griddepcontrol.wait": "",
}

_ASM = re.compile(r'asm(?:\s+volatile)?\("([^"]*)"\s*((?::[^:;]*?)*)\);')
_OPERAND = re.compile(r'"[=+]?[a-z]"\(([^()]*(?:\([^()]*\))?[^()]*)\)')

RUNTIME = r"""
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>
#include <ucontext.h>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __align__(n) alignas(n)
#define __shared__ static

using std::acos; using std::acosh; using std::asin; using std::asinh; using std::atan; using std::atan2;
using std::atanh; using std::cbrt; using std::ceil; using std::copysign; using std::cos; using std::cosh;
using std::erf; using std::erfc; using std::exp; using std::exp2; using std::expm1; using std::fabs;
using std::floor; using std::fma; using std::fmax; using std::fmin; using std::fmod; using std::frexp;
using std::hypot; using std::ldexp; using std::lgamma; using std::log; using std::log10; using std::log1p;
using std::log2; using std::modf; using std::nextafter; using std::pow; using std::remainder; using std::rint;
using std::round; using std::signbit; using std::sin; using std::sinh; using std::sqrt; using std::tan;
using std::tanh; using std::tgamma; using std::trunc; using std::isnan; using std::isinf; using std::isfinite;
using std::min; using std::max;  // (CUDA's integer min/max: both operands of one type in these kernels)

struct dim3 { unsigned x = 1, y = 1, z = 1; };
static dim3 threadIdx, blockIdx, blockDim, gridDim;
struct alignas(16) uint4 { unsigned x, y, z, w; };
struct alignas(8) uint2 { unsigned x, y; };

template <class To, class From> static inline To slh_bits(From f) { To t; std::memcpy(&t, &f, sizeof t); return t; }
static inline float __int_as_float(int i) { return slh_bits<float>(i); }
static inline int __float_as_int(float f) { return slh_bits<int>(f); }
static inline float __uint_as_float(unsigned u) { return slh_bits<float>(u); }
static inline unsigned __float_as_uint(float f) { return slh_bits<unsigned>(f); }
static inline double __longlong_as_double(long long i) { return slh_bits<double>(i); }
static inline long long __double_as_longlong(double d) { return slh_bits<long long>(d); }
static inline float __double2float_rz(double d) {
  float f = (float)d;
  if (std::isfinite(d) && std::fabs((double)f) > std::fabs(d)) f = std::nextafter(f, 0.0f);
  return f;
}
static inline double __ll2double_rz(long long x) {
  double d = (double)x;
  if ((d > 0 && (long double)d > (long double)x) || (d < 0 && (long double)d < (long double)x)) d = std::nextafter(d, 0.0);
  return d;
}
static inline double __ull2double_rz(unsigned long long x) {
  double d = (double)x;
  if ((long double)d > (long double)x) d = std::nextafter(d, 0.0);
  return d;
}
static inline float __fmul_rn(float a, float b) { return a * b; }
static inline float __fdividef(float a, float b) { return a / b; }
// (__expf, __logf, __sinf... : glibc's own, the same functions as expf, logf, sinf)
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
static inline int __popc(unsigned x) { return __builtin_popcount(x); }
static inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
template <class T> static inline T __ldg(const T* p) { return *p; }
template <class T> static inline T __ldcs(const T* p) { return *p; }
template <class T> static inline T __ldcg(const T* p) { return *p; }
static inline void __threadfence() {}
template <class T> static inline T atomicAdd(T* p, T v) { T old = *p; *p = old + v; return old; }

static inline float slh_h2f(unsigned short h) { return (float)slh_bits<_Float16>(h); }
static inline unsigned short slh_f2h(float f) { return slh_bits<unsigned short>((_Float16)f); }
static inline unsigned short slh_d2h(double d) { return slh_bits<unsigned short>((_Float16)d); }
static inline float slh_bf2f(unsigned short b) { return __uint_as_float((unsigned)b << 16); }
static inline unsigned short slh_f2bf(float f) {
  const unsigned u = __float_as_uint(f);
  if (f != f) return (unsigned short)((u >> 16) | 0x40u);
  return (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
static inline float slh_max_nan(float a, float b) { return (a != a || b != b) ? NAN : std::fmax(a, b); }
static inline float slh_min_nan(float a, float b) { return (a != a || b != b) ? NAN : std::fmin(a, b); }

// ---- the threads of a block as fibers ----
namespace slh {
enum State { RUN, BLOCK_WAIT, WARP_WAIT, DONE };
struct Fiber { ucontext_t ctx; State state; dim3 tid; };
static std::vector<Fiber> fibers;
static char* stacks = nullptr;  // (malloc: untouched pages of a thread's stack cost nothing)
static size_t stacks_bytes = 0;
static ucontext_t home;
static int current = -1;
static std::function<void()> body;
static unsigned long long slots[1024];

static void yield(State s) {
  fibers[current].state = s;
  swapcontext(&fibers[current].ctx, &home);
}
static void trampoline() {
  body();
  fibers[current].state = DONE;
  swapcontext(&fibers[current].ctx, &home);
}
static unsigned linear() { return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z); }

// Each warp in turn (increasing or, order 1, decreasing) runs as far as it can, its lanes
// together through their shuffles, until every live lane waits at the block's barrier or is done;
// then the barrier opens. One warp thus runs ahead of the others as far as the barriers allow.
static int run_block(int order) {
  const int n = (int)fibers.size(), warps = (n + 31) / 32;
  for (;;) {
    for (int k = 0; k < warps; ++k) {
      const int w = order ? warps - 1 - k : k, first = w * 32, last = std::min(n, first + 32);
      for (;;) {
        for (int j = 0; j < last - first; ++j) {
          const int i = order ? last - 1 - j : first + j;
          if (fibers[i].state != RUN) continue;
          current = i;
          threadIdx = fibers[i].tid;
          swapcontext(&home, &fibers[i].ctx);
        }
        bool any = false, all = true;  // live lanes all at a shuffle: it completes, they go on
        for (int i = first; i < last; ++i) {
          if (fibers[i].state == DONE) continue;
          any = true;
          all = all && fibers[i].state == WARP_WAIT;
        }
        if (!(any && all)) break;
        for (int i = first; i < last; ++i)
          if (fibers[i].state == WARP_WAIT) fibers[i].state = RUN;
      }
    }
    bool all_done = true;
    for (int i = 0; i < n; ++i) {
      if (fibers[i].state == WARP_WAIT) return 2;  // a warp split between a shuffle and a barrier
      if (fibers[i].state != DONE) all_done = false;
    }
    if (all_done) return 0;
    for (int i = 0; i < n; ++i)
      if (fibers[i].state == BLOCK_WAIT) fibers[i].state = RUN;
  }
}

static int launch(dim3 grid, dim3 block, int order, size_t stack_bytes, std::function<void()> kernel) {
  const int n = (int)(block.x * block.y * block.z);
  if (n > 1024) return 3;
  body = kernel;
  gridDim = grid;
  blockDim = block;
  fibers.assign(n, Fiber{});
  if (stacks_bytes < (size_t)n * stack_bytes) {
    std::free(stacks);
    stacks_bytes = (size_t)n * stack_bytes;
    stacks = (char*)std::malloc(stacks_bytes);
  }
  for (unsigned bz = 0; bz < grid.z; ++bz)
    for (unsigned by = 0; by < grid.y; ++by)
      for (unsigned bx = 0; bx < grid.x; ++bx) {
        blockIdx = dim3{bx, by, bz};
        for (int i = 0; i < n; ++i) {
          Fiber& f = fibers[i];
          f.state = RUN;
          f.tid = dim3{(unsigned)i % block.x, ((unsigned)i / block.x) % block.y, (unsigned)i / (block.x * block.y)};
          getcontext(&f.ctx);
          f.ctx.uc_stack.ss_sp = stacks + (size_t)i * stack_bytes;
          f.ctx.uc_stack.ss_size = stack_bytes;
          f.ctx.uc_link = nullptr;
          makecontext(&f.ctx, trampoline, 0);
        }
        const int rc = run_block(order);
        if (rc) return rc;
      }
  return 0;
}
}  // namespace slh

static inline void __syncthreads() { slh::yield(slh::BLOCK_WAIT); }
// the lanes of a warp meet (as at a shuffle) before any goes on
static inline void __syncwarp(unsigned = 0xffffffffu) { slh::yield(slh::WARP_WAIT); }
// a warp shuffle: lane t gets the value of lane src(t & 31) of its warp
template <class T, class F> static inline T slh_shuffle(T v, F src) {
  static_assert(sizeof(T) <= 8, "shuffle of at most 8 bytes");
  const unsigned t = slh::linear();
  std::memcpy(&slh::slots[t], &v, sizeof(T));
  slh::yield(slh::WARP_WAIT);  // every lane of the warp has written its value
  T r;
  std::memcpy(&r, &slh::slots[(t & ~31u) | (src(t & 31u) & 31u)], sizeof(T));
  slh::yield(slh::WARP_WAIT);  // and read its partner's, before the slots are written again
  return r;
}
template <class T> static inline T __shfl_xor_sync(unsigned, T v, int o) {
  return slh_shuffle(v, [o](unsigned l) { return l ^ (unsigned)o; });
}
// (CUDA's: a lane below d keeps its own value)
template <class T> static inline T __shfl_up_sync(unsigned, T v, unsigned d) {
  return slh_shuffle(v, [d](unsigned l) { return l >= d ? l - d : l; });
}
template <class T> static inline T __shfl_sync(unsigned, T v, int src) {
  return slh_shuffle(v, [src](unsigned) { return (unsigned)src; });
}
// each lane's predicate, a bit a lane of the warp (every lane of the warp live, as the kernels'
// full-mask ballots ask)
static inline unsigned __ballot_sync(unsigned, int p) {
  const unsigned t = slh::linear(), first = t & ~31u;
  slh::slots[t] = p ? 1ull : 0ull;
  slh::yield(slh::WARP_WAIT);
  unsigned m = 0u;
  for (unsigned l = 0; l < 32u; ++l) m |= slh::slots[first + l] ? 1u << l : 0u;
  slh::yield(slh::WARP_WAIT);
  return m;
}
static inline int __ffs(unsigned x) { return __builtin_ffs((int)x); }
static inline int __clz(unsigned x) { return x ? __builtin_clz(x) : 32; }
"""


def host_preamble(preamble: str = PREAMBLE) -> str:
    """``preamble`` (or a kernel's whole source) with each inline ``asm`` statement replaced by its
    host version (:data:`HOST_ASM`).

    Raises:
        KeyError: for PTX that has no host version (add one to :data:`HOST_ASM`).
    """

    def swap(m: re.Match[str]) -> str:
        instr = m.group(1).strip().strip("{}").strip().rstrip(";").split()[0]
        if instr not in HOST_ASM:
            raise KeyError(f"no host version of the PTX instruction {instr!r} (tests/compiler/hostkernels.py HOST_ASM)")
        operands = _OPERAND.findall(m.group(2))
        return HOST_ASM[instr].format(*operands)

    return _ASM.sub(swap, preamble)


def _wrapper(name: str, ctypes_: list[str]) -> str:
    """``sl_host_launch``: calls kernel ``name`` with its arguments read from ``args``."""
    unpack = [f"*({c.replace('__restrict__', '').strip()}*)args[{k}]" for k, c in enumerate(ctypes_)]
    return (f'extern "C" int sl_host_launch(void** args, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, '
            f'unsigned bz, int order) {{\n'
            f'  return slh::launch(dim3{{gx, gy, gz}}, dim3{{bx, by, bz}}, order, 1 << 17, [=]() {{ {name}({", ".join(unpack)}); }});\n'
            f'}}\n')


_built: dict[str, Any] = {}


@functools.cache
def unsupported() -> str | None:
    """Why kernels cannot run on this host (no C++ compiler, no ucontext, no ``_Float16``), or None."""
    if CXX is None:
        return "no host C++ compiler"
    if not sys.platform.startswith("linux"):
        return "fibers through ucontext (Linux)"
    probe = "#include <ucontext.h>\nint main() { ucontext_t c; getcontext(&c); _Float16 h = (_Float16)1.5; return (int)h - 1; }\n"
    done = subprocess.run([str(CXX), "-std=c++17", "-x", "c++", "-o", os.devnull, "-"], input=probe,
                          capture_output=True, text=True)
    return None if done.returncode == 0 else f"{CXX} lacks _Float16 or ucontext: {done.stderr.strip()[:200]}"


def build_kernel(source: str, name: str, ctypes_: list[str], directory: Path) -> Any:
    """The host build of kernel ``name`` (its full ``source``), loaded: ``lib.sl_host_launch``."""
    text = RUNTIME + host_preamble(source) + "\n" + _wrapper(name, ctypes_)
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    if digest in _built:
        return _built[digest]
    lib = directory / f"{name}_{digest}.so"
    if not lib.exists():  # (built before, by this text: the same library)
        cpp, part = lib.with_suffix(f".{os.getpid()}.cpp"), lib.with_suffix(f".{os.getpid()}.so")
        cpp.write_text(text)
        done = subprocess.run([str(CXX), "-std=c++17", "-O1", "-shared", "-fPIC", "-w", "-o", str(part), str(cpp)],
                              capture_output=True, text=True)
        cpp.unlink()
        if done.returncode:
            raise RuntimeError(f"host build of {name} failed:\n{done.stderr[-4000:]}")
        os.replace(part, lib)  # whole, for another process building the same kernel at once
    loaded = ctypes.CDLL(str(lib))
    loaded.sl_host_launch.restype = ctypes.c_int
    _built[digest] = loaded
    return loaded


_SCALARS = {"int32": ctypes.c_int32, "int64": ctypes.c_int64, "uint32": ctypes.c_uint32}
#: what ``slh::launch`` returns when a block cannot run to its end
_FAILURES = {2: "a warp waits at a shuffle while other lanes of it wait at a barrier (or have exited)",
             3: "a block of more than 1024 threads"}


def _interpret(kernel: Any, env: dict[int, np.ndarray], pos: dict[int, int]) -> None:
    """A step without CUDA code (run by the array library, or a group left unfused) node by node
    with NumPy, as the cupy backend runs it with CuPy (``launch._interpret_group``)."""
    from stitchlab.plan.groups import FREE_OPS
    from stitchlab.runtime.interpreter import eval_node

    members = {id(n) for n in kernel.info.members}
    memo: dict[int, Any] = {}

    def ev(n: Any) -> Any:
        if id(n) not in memo:
            if pos[id(n)] in env and id(n) not in members:
                memo[id(n)] = env[pos[id(n)]]
            elif id(n) in members or n.op in FREE_OPS or n.op in ("const", "iota"):
                with np.errstate(all="ignore"):
                    memo[id(n)] = np.asarray(eval_node(n, [ev(i) for i in n.inputs], np)).astype(n.dtype, copy=False)
            else:
                raise RuntimeError(f"{kernel.name}: node {n!r} has no buffer")
        return memo[id(n)]

    for n, _ in kernel.info.outputs:
        env[pos[id(n)]] = np.ascontiguousarray(ev(n)).reshape(n.shape)


def run_plan(plan: Any, sources: Any, directory: Path, order: int = 0) -> list[np.ndarray]:
    """Run ``plan`` on the host over the buffers of ``sources`` (the graph's input leaves, as
    :func:`stitchlab.ir.graph.build_graph` gives them): each kernel as the cupy backend binds it
    (:func:`stitchlab.runtime.plan_cache.lower_kernel`), a step without CUDA code with NumPy;
    returns the graph's outputs as NumPy arrays."""
    from stitchlab.runtime.plan_cache import lower_kernel, outputs_of

    graph = plan.graph
    pos = {id(n): k for k, n in enumerate(graph.nodes)}
    env: dict[int, np.ndarray] = {}
    for node, src in zip(graph.inputs, sources, strict=True):
        value = src.value if src.value is not None else src.attr("value")  # (a constant read at run time)
        env[pos[id(node)]] = np.ascontiguousarray(np.asarray(value, dtype=node.dtype).reshape(node.shape))
    for kernel in plan.kernels:
        if not kernel.source or kernel.error is not None:  # a step of the array library, or unfused
            _interpret(kernel, env, pos)
            continue
        entry = lower_kernel(kernel, "", pos)
        storage, args = [], []
        for p in entry["stores"]:
            env[p] = np.zeros(graph.nodes[p].shape, graph.nodes[p].dtype)
        for role, a, b in entry["params"]:
            if role in ("in", "out"):
                arr = env[a]
                cell = ctypes.c_void_p(arr.ctypes.data)
            elif role in ("ws", "counter"):  # (zeroed, as the runtime's scratch.py gives them)
                arr = np.zeros(b, np.dtype(a))
                storage.append(arr)
                cell = ctypes.c_void_p(arr.ctypes.data)
            else:
                cell = _SCALARS[a](b)
            storage.append(cell)
            args.append(ctypes.cast(ctypes.pointer(cell), ctypes.c_void_p))
        lib = build_kernel(kernel.source, kernel.name, [p.ctype for p in kernel.params], directory)
        argv = (ctypes.c_void_p * max(1, len(args)))(*args)
        rc = lib.sl_host_launch(argv, *entry["grid"], *entry["block"], order)
        if rc:
            raise RuntimeError(f"{kernel.name} ({kernel.schedule}): {_FAILURES.get(rc, rc)}")
    out = []
    for p, shape in outputs_of(plan):
        out.append(env[p].reshape(shape) if shape is not None else env[p])
    return out
