"""The device functions every generated kernel starts with.

The op table's CUDA templates name these ``sl_*`` functions; they give NumPy's semantics where C's
differ: Python-style floor division and modulo (integer division by zero gives 0, as NumPy),
NaN-propagating maximum/minimum (with NumPy's operand on ties of -0.0 and +0.0), NumPy's casts to
bool, integer powers. float16 is stored as ``sl_half``, converted with PTX ``cvt`` instructions
(from double in one rounding: ``sl_d2h``) and added, subtracted and multiplied with PTX half
instructions (``sl_hadd``…); bfloat16 likewise as ``sl_bf16`` (``sl_d2bf``, ``sl_hadd``…). No CUDA
header is needed, and NVRTC compiles the kernels with no include path at all (on a CPU-only
machine too).
"""

from __future__ import annotations

import hashlib

PREAMBLE = r"""
// ---- stitchlab preamble ------------------------------------------------------------------
struct __align__(2) sl_half { unsigned short x; };
__device__ __forceinline__ float sl_h2f(sl_half h) {
  float f; asm("{ cvt.f32.f16 %0, %1; }" : "=f"(f) : "h"(h.x)); return f;
}
__device__ __forceinline__ sl_half sl_f2h(float f) {
  sl_half h; asm("{ cvt.rn.f16.f32 %0, %1; }" : "=h"(h.x) : "f"(f)); return h;
}
// a double to the nearest float16 in one rounding, as NumPy (through float it can round twice:
// 1 + 2^-11 + 2^-40 becomes the midpoint 1 + 2^-11 in float, then 1.0 instead of 1 + 2^-10)
__device__ __forceinline__ sl_half sl_d2h(double d) {
  sl_half h; asm("{ cvt.rn.f16.f64 %0, %1; }" : "=h"(h.x) : "d"(d)); return h;
}
// round a float to the nearest float16 (a float16 reduction's result, held in float)
__device__ __forceinline__ float sl_round_half(float f) { return sl_h2f(sl_f2h(f)); }
// float16 arithmetic on half bits (sm_53 and later). For +, - and * of two float16 values the
// float result rounded to float16 is the correctly rounded one (float carries 24 >= 2*11+2
// bits), so one half instruction gives NumPy's bits. The explicit .rn keeps ptxas from fusing a
// multiply and an add into an fma, whose single rounding would differ.
__device__ __forceinline__ sl_half sl_hadd(sl_half a, sl_half b) {
  sl_half r; asm("{ add.rn.f16 %0, %1, %2; }" : "=h"(r.x) : "h"(a.x), "h"(b.x)); return r;
}
__device__ __forceinline__ sl_half sl_hsub(sl_half a, sl_half b) {
  sl_half r; asm("{ sub.rn.f16 %0, %1, %2; }" : "=h"(r.x) : "h"(a.x), "h"(b.x)); return r;
}
__device__ __forceinline__ sl_half sl_hmul(sl_half a, sl_half b) {
  sl_half r; asm("{ mul.rn.f16 %0, %1, %2; }" : "=h"(r.x) : "h"(a.x), "h"(b.x)); return r;
}
// sign-bit operations, as NumPy's float16 negative and absolute (NaN keeps its payload)
__device__ __forceinline__ sl_half sl_hneg(sl_half a) { return sl_half{(unsigned short)(a.x ^ 0x8000u)}; }
__device__ __forceinline__ sl_half sl_habs(sl_half a) { return sl_half{(unsigned short)(a.x & 0x7fffu)}; }

// bfloat16 (ml_dtypes.bfloat16): the high 16 bits of a float, held as those bits or in float (as
// float16, codegen/elemental.py); a float result is rounded to the nearest bfloat16 (ties to
// even), as ml_dtypes rounds its float32 results; doubles and 64-bit integers round once (sl_d2bf)
struct __align__(2) sl_bf16 { unsigned short x; };
__device__ __forceinline__ float sl_bf2f(sl_bf16 b) { return __uint_as_float((unsigned int)b.x << 16); }
// (sm_80+: cvt.rn.bf16x2.f32 with a zero high half: ptxas gives one F2FP.BF16.F32.PACK_AB, where for
// cvt.rn.bf16.f32 it often chose the conversion unit's F2F.BF16.F32; same bits, logsumexp 3 % faster)
__device__ __forceinline__ sl_bf16 sl_f2bf(float f) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  unsigned int u; asm("{ cvt.rn.bf16x2.f32 %0, %1, %2; }" : "=r"(u) : "f"(0.0f), "f"(f)); return sl_bf16{(unsigned short)u};
#else
  const unsigned int u = __float_as_uint(f);
  if (f != f) return sl_bf16{(unsigned short)((u >> 16) | 0x40u)};
  return sl_bf16{(unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16)};
#endif
}
// a float rounded to the nearest bfloat16, held in float
__device__ __forceinline__ float sl_round_bf16(float f) { return sl_bf2f(sl_f2bf(f)); }
// a double to the nearest bfloat16 in one rounding: to float toward zero with the lowest bit set
// where that was inexact (rounding to odd: float keeps 16 bits more than bfloat16, so the second
// rounding is the correct one; through float to nearest it could round twice)
__device__ __forceinline__ sl_bf16 sl_d2bf(double d) {
  const float f = __double2float_rz(d);
  return sl_f2bf(__uint_as_float(__float_as_uint(f) | (unsigned int)((double)f != d && d == d)));
}
// 64-bit integers the same way: to double toward zero, odd where inexact, then sl_d2bf
__device__ __forceinline__ sl_bf16 sl_ll2bf(long long x) {
  const double d = __ll2double_rz(x);
  return sl_d2bf(__longlong_as_double(__double_as_longlong(d) | (long long)((long long)d != x)));
}
__device__ __forceinline__ sl_bf16 sl_ull2bf(unsigned long long x) {
  const double d = __ull2double_rz(x);
  return sl_d2bf(__longlong_as_double(__double_as_longlong(d) | (long long)((unsigned long long)d != x)));
}
// the bits of a float that holds a bfloat16 value (its low half is zero): exact
__device__ __forceinline__ sl_bf16 sl_bf16_of(float f) { return sl_bf16{(unsigned short)(__float_as_uint(f) >> 16)}; }
// bfloat16 +, -, * on bits: the float result rounded once is the correctly rounded one (float
// carries 24 >= 2*8+2 bits), so one bfloat16 instruction (sm_90) gives ml_dtypes' bits
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
__device__ __forceinline__ sl_bf16 sl_hadd(sl_bf16 a, sl_bf16 b) {
  sl_bf16 r; asm("{ add.rn.bf16 %0, %1, %2; }" : "=h"(r.x) : "h"(a.x), "h"(b.x)); return r;
}
__device__ __forceinline__ sl_bf16 sl_hsub(sl_bf16 a, sl_bf16 b) {
  sl_bf16 r; asm("{ sub.rn.bf16 %0, %1, %2; }" : "=h"(r.x) : "h"(a.x), "h"(b.x)); return r;
}
__device__ __forceinline__ sl_bf16 sl_hmul(sl_bf16 a, sl_bf16 b) {
  sl_bf16 r; asm("{ mul.rn.bf16 %0, %1, %2; }" : "=h"(r.x) : "h"(a.x), "h"(b.x)); return r;
}
#else
__device__ __forceinline__ sl_bf16 sl_hadd(sl_bf16 a, sl_bf16 b) { return sl_f2bf(sl_bf2f(a) + sl_bf2f(b)); }
__device__ __forceinline__ sl_bf16 sl_hsub(sl_bf16 a, sl_bf16 b) { return sl_f2bf(sl_bf2f(a) - sl_bf2f(b)); }
__device__ __forceinline__ sl_bf16 sl_hmul(sl_bf16 a, sl_bf16 b) { return sl_f2bf(__fmul_rn(sl_bf2f(a), sl_bf2f(b))); }
#endif
__device__ __forceinline__ sl_bf16 sl_hneg(sl_bf16 a) { return sl_bf16{(unsigned short)(a.x ^ 0x8000u)}; }
__device__ __forceinline__ sl_bf16 sl_habs(sl_bf16 a) { return sl_bf16{(unsigned short)(a.x & 0x7fffu)}; }
// ml_dtypes' maximum/minimum: the first operand if NaN or larger (smaller), else the second (of
// two equal ones the second, as NumPy's float32 loops)
__device__ __forceinline__ sl_bf16 sl_hmax(sl_bf16 a, sl_bf16 b) {
  const float fa = sl_bf2f(a), fb = sl_bf2f(b);
  return (fa > fb || fa != fa) ? a : b;
}
__device__ __forceinline__ sl_bf16 sl_hmin(sl_bf16 a, sl_bf16 b) {
  const float fa = sl_bf2f(a), fb = sl_bf2f(b);
  return (fa < fb || fa != fa) ? a : b;
}

template <class T> struct sl_is_float { static constexpr bool value = false; };
template <> struct sl_is_float<float> { static constexpr bool value = true; };
template <> struct sl_is_float<double> { static constexpr bool value = true; };
template <class T> struct sl_is_signed { static constexpr bool value = T(-1) < T(0); };

// loads and stores between storage and register types
template <class T> __device__ __forceinline__ T sl_load(const T* p) { return *p; }
// A byte reaches the kernel's arithmetic through an int NVVM cannot look into: of the bytes of a
// vector load, NVVM (13.0 to 13.5 emit the same PTX) computes on the 16-bit halves that hold two
// and left out the sign extension of each half's low byte before right shifts and comparisons
// (int8 floor_divide(x, 2) gave 126 for -3 on the H200, right_shift(x - 2, x) 3 for -1;
// docs/compiler.md section 8); each byte is now extended on its own (one PTX cvt, as in a scalar
// loop). tests/fuzzgraphs.py packed_byte_reads finds the pattern in PTX.
__device__ __forceinline__ int sl_opaque(int v) {
  int r;
  asm("mov.b32 %0, %1;" : "=r"(r) : "r"(v));
  return r;
}
__device__ __forceinline__ signed char sl_load(const signed char* p) { return (signed char)sl_opaque(*p); }
__device__ __forceinline__ unsigned char sl_load(const unsigned char* p) { return (unsigned char)sl_opaque(*p); }
__device__ __forceinline__ float sl_load(const sl_half* p) { return sl_h2f(*p); }
__device__ __forceinline__ bool sl_load(const bool* p) { return *reinterpret_cast<const unsigned char*>(p) != 0; }
template <class T, class V> __device__ __forceinline__ void sl_store(T* p, V v) { *p = (T)v; }
__device__ __forceinline__ void sl_store(sl_half* p, float v) { *p = sl_f2h(v); }
template <class T> __device__ __forceinline__ T sl_from_storage(T v) { return v; }
__device__ __forceinline__ float sl_from_storage(sl_half v) { return sl_h2f(v); }
__device__ __forceinline__ float sl_load(const sl_bf16* p) { return sl_bf2f(*p); }
__device__ __forceinline__ void sl_store(sl_bf16* p, float v) { *p = sl_f2bf(v); }
__device__ __forceinline__ float sl_from_storage(sl_bf16 v) { return sl_bf2f(v); }
template <class T> __device__ __forceinline__ T sl_to_storage_as(T*, T v) { return v; }

// 16-byte (or narrower) vectors of N elements
template <class T, int N> struct __align__(sizeof(T) * N) sl_vec { T v[N]; };
// N consecutive elements: one vector access when aligned, else N scalar loads
template <class T, int N> __device__ __forceinline__ sl_vec<T, N> sl_load_vec(const T* p, bool aligned) {
  if (aligned) return *reinterpret_cast<const sl_vec<T, N>*>(p);
  sl_vec<T, N> v;
#pragma unroll
  for (int u = 0; u < N; ++u) v.v[u] = p[u];
  return v;
}

// NumPy's astype: to bool is "!= 0" (NaN is true); float to unsigned goes through int64
template <class To, class From> __device__ __forceinline__ To sl_cast(From x) {
  if constexpr (sizeof(To) == 1 && To(2) == To(1)) {  // bool
    return x != From(0);
  } else if constexpr (sl_is_float<From>::value && !sl_is_float<To>::value && !sl_is_signed<To>::value && sizeof(To) < 8) {
    return (To)(long long)x;
  } else {
    return (To)x;
  }
}

template <class T> __device__ __forceinline__ T sl_abs(T x) { return x < T(0) ? (T)(T(0) - x) : x; }

template <class T> __device__ __forceinline__ T sl_int_reciprocal(T x) {
  if (x == T(0)) return T(0);
  return (T)(T(1) / x);
}

template <class T> __device__ __forceinline__ T sl_sigmoid(T x) { return T(1) / (T(1) + exp(-x)); }

// NumPy's deg2rad/rad2deg: one multiply by its constant, float pi / 180 and 180 / float pi in
// float (the float16 and bfloat16 loops compute in float too), NPY_PI / 180 and 180 / NPY_PI in double
__device__ __forceinline__ float sl_deg2rad(float x) { return x * 0x1.1df46ap-6f; }
__device__ __forceinline__ double sl_deg2rad(double x) { return x * 0x1.1df46a2529d39p-6; }
__device__ __forceinline__ float sl_rad2deg(float x) { return x * 0x1.ca5dcp+5f; }
__device__ __forceinline__ double sl_rad2deg(double x) { return x * 0x1.ca5dc1a63c1f8p+5; }

// An aligned vector of N elements at p in one vector load with a cache hint. Streaming (.cs:
// evicted first): row kernels that store no full-size output load their rows with it
// (schedules.OPTIONS["cache_hints"], compiler.md §4). Read-only (__ldg): kept whole, where a
// struct load whose elements are used apart is split into scalar loads (a stencil's taps,
// Writer._lane_vector); equal calls are one load.
template <bool Stream, class U> __device__ __forceinline__ U sl_load_hinted(const U* p) { return Stream ? __ldcs(p) : __ldg(p); }
template <bool Stream, class T, int N> __device__ __forceinline__ sl_vec<T, N> sl_load_vec_hinted(const T* p) {
  sl_vec<T, N> v;
  if constexpr (sizeof(v) == 16) *reinterpret_cast<uint4*>(&v) = sl_load_hinted<Stream>(reinterpret_cast<const uint4*>(p));
  else if constexpr (sizeof(v) == 8) *reinterpret_cast<uint2*>(&v) = sl_load_hinted<Stream>(reinterpret_cast<const uint2*>(p));
  else if constexpr (sizeof(v) == 4) *reinterpret_cast<unsigned*>(&v) = sl_load_hinted<Stream>(reinterpret_cast<const unsigned*>(p));
  else v = *reinterpret_cast<const sl_vec<T, N>*>(p);
  return v;
}
template <class T, int N> __device__ __forceinline__ sl_vec<T, N> sl_load_stream(const T* p) { return sl_load_vec_hinted<true, T, N>(p); }
template <class T, int N> __device__ __forceinline__ sl_vec<T, N> sl_load_vec_ro(const T* p) { return sl_load_vec_hinted<false, T, N>(p); }

// Brings the cache line holding *p into L2 (no register is written).
template <class T> __device__ __forceinline__ void sl_prefetch_l2(const T* p) {
  asm volatile("prefetch.global.L2 [%0];" :: "l"(p));
}

// A partial result another block wrote before its __threadfence (split reductions' last block):
// ld.global.cg reads L2, where the writes are, and unlike a volatile load lets several be in
// flight at once. Types without an __ldcg overload (bool) load through volatile.
template <class T> __device__ __forceinline__ T sl_load_cg(const T* p) { return *(const volatile T*)p; }
__device__ __forceinline__ float sl_load_cg(const float* p) { return __ldcg(p); }
__device__ __forceinline__ double sl_load_cg(const double* p) { return __ldcg(p); }
__device__ __forceinline__ int sl_load_cg(const int* p) { return __ldcg(p); }
__device__ __forceinline__ unsigned int sl_load_cg(const unsigned int* p) { return __ldcg(p); }
__device__ __forceinline__ long long sl_load_cg(const long long* p) { return __ldcg(p); }
__device__ __forceinline__ unsigned long long sl_load_cg(const unsigned long long* p) { return __ldcg(p); }

// exp for float16 results (cuda_f16 in the op table): MUFU.EX2 of x * log2(e), relative error
// below 2**-18 where the float16 result is nonzero, against float16's 2**-11 step. Flushing
// subnormal floats (ftz) is invisible after the rounding to float16; also the exp of bfloat16
// exp(a - max(a)) summed in float32, where it is invisible in the sum (GroupInfo.shifted_exps).
__device__ __forceinline__ float sl_exp_f16(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x * 1.44269504088896341f));
  return y;
}

// 1 / y for y >= 1 (a float16 sigmoid's 1 + exp(-x), Welford's running count): one MUFU.RCP,
// the value __fdividef(1, y) has. Under --fmad=false ptxas guards __fdividef with a rescale of
// subnormal divisors (4 more instructions per element; float16 SiLU gate +5 % on the H200), which
// y >= 1 never needs. Flushing a subnormal result (y > 2**126) is invisible in a float16 result.
__device__ __forceinline__ float sl_rcp_ge1(float y) {
  float r;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(y));
  return r;
}

// exp for bfloat16 results (cuda_bf16 in the op table): MUFU.EX2 without flushing subnormals
// (bfloat16 keeps float32's exponent range); relative error below 2**-17, against bfloat16's
// 2**-8 step
__device__ __forceinline__ float sl_exp_bf16(float x) {
  float y;
  asm("ex2.approx.f32 %0, %1;" : "=f"(y) : "f"(x * 1.44269504088896341f));
  return y;
}

// tanh for float16 results (cuda_f16 in the op table): the MUFU's tanh.approx.f32, one
// instruction where CUDA's accurate tanhf takes about 14 (two branches of polynomial and
// exp/reciprocal, a select). Faithful for every float16 input and NumPy's float16 tanh for all
// but about 0.1 % of them (measured over all 65 536 on the H200; tests/compiler/
// test_float16_native.py checks it on the GPU at hand). Before sm_75 (no tanh.approx): tanhf.
__device__ __forceinline__ float sl_tanh_f16(float x) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 750
  float y;
  asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
#else
  return tanhf(x);
#endif
}

// NumPy's logaddexp / logaddexp2 (npy_logaddexp): equal operands (infinities of one sign too)
// give x + log(2) (x + 1); NaN propagates through the difference
template <class T> __device__ __forceinline__ T sl_logaddexp(T x, T y) {
  if (x == y) return x + (T)0.693147180559945309417232121458176568;
  const T d = x - y;
  if (d > 0) return x + log1p(exp(-d));
  if (d <= 0) return y + log1p(exp(d));
  return d;
}
template <class T> __device__ __forceinline__ T sl_logaddexp2(T x, T y) {
  const T log2e = (T)1.442695040888963407359924681001892137;
  if (x == y) return x + (T)1;
  const T d = x - y;
  if (d > 0) return x + log2e * log1p(exp2(-d));
  if (d <= 0) return y + log2e * log1p(exp2(d));
  return d;
}

template <class T> __device__ __forceinline__ T sl_sign(T x) {
  if constexpr (sl_is_float<T>::value) {
    if (x != x) return x;
  }
  return (T)((T(0) < x) - (x < T(0)));
}

// NumPy's maximum/minimum: the first NaN operand as it is (payload, sign), else the larger
// (smaller) value and, of two equal ones (-0.0 and +0.0), the second operand, as NumPy's float32
// and float64 loops give on x86-64 (maxps/minps return their second operand on ties)
// (one select, not early returns: a reduction's chain of them compiles to two compares and a
// select per element instead of a branch; a NaN b fails "a > b" and so is chosen unless a is NaN)
template <class T> __device__ __forceinline__ bool sl_isnan(T a) {
  if constexpr (sl_is_float<T>::value) { return a != a; } else { return false; }
}
template <class T> __device__ __forceinline__ T sl_maximum(T a, T b) { return (a > b || sl_isnan(a)) ? a : b; }
template <class T> __device__ __forceinline__ T sl_minimum(T a, T b) { return (a < b || sl_isnan(a)) ? a : b; }
// NumPy's float16 maximum/minimum (a C loop: "a >= b || isnan(a) ? a : b"): the first NaN
// operand, else the larger (smaller) value and, of two equal ones, the first operand; the bits of
// the chosen operand, nothing rounded
__device__ __forceinline__ sl_half sl_hmax(sl_half a, sl_half b) {
  const float fa = sl_h2f(a), fb = sl_h2f(b);
  return (fa >= fb || fa != fa) ? a : b;
}
__device__ __forceinline__ sl_half sl_hmin(sl_half a, sl_half b) {
  const float fa = sl_h2f(a), fb = sl_h2f(b);
  return (fa <= fb || fa != fa) ? a : b;
}

// Python/NumPy floor division and modulo
template <class T> __device__ __forceinline__ T sl_floordiv(T a, T b) {
  if constexpr (sl_is_float<T>::value) {
    if (b == T(0)) return a / b;
    T mod = fmod(a, b);
    T div = (a - mod) / b;
    if (mod != T(0) && ((b < T(0)) != (mod < T(0)))) div -= T(1);
    if (div != T(0)) {
      T fl = floor(div);
      if (div - fl > T(0.5)) fl += T(1);
      return fl;
    }
    return copysign(T(0), a / b);
  } else if constexpr (sizeof(T) == 1 && T(2) == T(1)) {  // bool
    return b ? a : false;
  } else {
    if (b == T(0)) return T(0);
    if constexpr (sl_is_signed<T>::value) {
      if (b == T(-1)) return (T)(T(0) - a);  // wraps for the minimum, as NumPy
      T q = a / b;
      if ((a % b != T(0)) && ((a < T(0)) != (b < T(0)))) q -= T(1);
      return q;
    } else {
      return a / b;
    }
  }
}
template <class T> __device__ __forceinline__ T sl_mod(T a, T b) {
  if constexpr (sl_is_float<T>::value) {
    if (b == T(0)) return fmod(a, b);
    T mod = fmod(a, b);
    if (mod != T(0)) {
      if ((b < T(0)) != (mod < T(0))) mod += b;
    } else {
      mod = copysign(T(0), b);
    }
    return mod;
  } else if constexpr (sizeof(T) == 1 && T(2) == T(1)) {
    return false;
  } else {
    if (b == T(0)) return T(0);
    if constexpr (sl_is_signed<T>::value) {
      if (b == T(-1)) return T(0);
      T r = a % b;
      if (r != T(0) && ((r < T(0)) != (b < T(0)))) r += b;
      return r;
    } else {
      return a % b;
    }
  }
}

// The sign of a - b for a signed and an unsigned 64-bit integer, exactly (NumPy's int64/uint64
// comparison loops; C would convert the signed one: -1 < 2**63 would be false)
__device__ __forceinline__ int sl_compare_mixed(long long a, unsigned long long b) {
  return a < 0 || (unsigned long long)a < b ? -1 : (unsigned long long)a > b;
}
__device__ __forceinline__ int sl_compare_mixed(unsigned long long a, long long b) {
  return -sl_compare_mixed(b, a);
}

// NumPy's fmod: C's for floats (NaN for a zero divisor); for integers the remainder with the
// dividend's sign, 0 for a zero divisor (NumPy warns) and for -1 (C's INT_MIN % -1 traps)
template <class T> __device__ __forceinline__ T sl_fmod(T a, T b) {
  if constexpr (sl_is_float<T>::value) {
    return fmod(a, b);
  } else {
    if (b == T(0)) return T(0);
    if constexpr (sl_is_signed<T>::value) {
      if (b == T(-1)) return T(0);
    }
    return (T)(a % b);
  }
}

// NumPy's shifts: a shift by the type's width or more (or by a negative amount) gives 0, or -1
// for a right shift of a negative value; a left shift wraps (C leaves both undefined)
template <class T> __device__ __forceinline__ T sl_lshift(T a, T b) {
  if ((unsigned long long)(long long)b >= sizeof(T) * 8) return T(0);
  return (T)((unsigned long long)a << (int)b);
}
// nextafter and spacing: float and double through C's nextafter (NumPy's loops); float16 on its
// bits as NumPy's half loops (equal values give y, as NumPy 2.5 and C: nextafter(-0, +0) is +0;
// spacing is a positive magnitude, below a negative power of two the step toward zero); bfloat16
// on its bits as ml_dtypes' loops (spacing is nextafter toward the same-signed infinity minus x)
template <class T> __device__ __forceinline__ T sl_nextafter(T x, T y) { return x == y ? y : nextafter(x, y); }
__device__ __forceinline__ float sl_nextafter(float x, float y) { return x == y ? y : nextafterf(x, y); }
// (the infinity of x's sign; +inf for either zero, whose spacing NumPy makes positive)
__device__ __forceinline__ float sl_inf_like(float x) { return copysignf(__int_as_float(0x7f800000), x == 0.0f ? 1.0f : x); }
__device__ __forceinline__ double sl_inf_like(double x) { return copysign(__longlong_as_double(0x7ff0000000000000LL), x == 0.0 ? 1.0 : x); }
template <class T> __device__ __forceinline__ T sl_spacing(T x) {
  return isinf(x) ? x - x : sl_nextafter(x, sl_inf_like(x)) - x;  // (inf - inf: NaN)
}
__device__ __forceinline__ sl_half sl_nextafter(sl_half x, sl_half y) {
  const unsigned short a = x.x, b = y.x;
  if ((a & 0x7fffu) > 0x7c00u || (b & 0x7fffu) > 0x7c00u) return sl_half{0x7e00u};
  if (a == b || ((a | b) & 0x7fffu) == 0) return y;
  if ((a & 0x7fffu) == 0) return sl_half{(unsigned short)((b & 0x8000u) + 1u)};
  if (!(a & 0x8000u)) return sl_half{(unsigned short)((short)a > (short)b ? a - 1u : a + 1u)};
  return sl_half{(unsigned short)(!(b & 0x8000u) || (a & 0x7fffu) > (b & 0x7fffu) ? a - 1u : a + 1u)};
}
__device__ __forceinline__ sl_half sl_spacing(sl_half h) {
  const unsigned short x = h.x, e = x & 0x7c00u, m = x & 0x03ffu;
  if (e == 0x7c00u) return sl_half{0x7e00u};
  if (x == 0x7bffu) return sl_half{0x7c00u};
  if ((x & 0x8000u) && m == 0)
    return sl_half{(unsigned short)(e > 0x2c00u ? e - 0x2c00u : e > 0x0400u ? 1u << ((e >> 10) - 2) : 1u)};
  return sl_half{(unsigned short)(e > 0x2800u ? e - 0x2800u : e > 0x0400u ? 1u << ((e >> 10) - 1) : 1u)};
}
__device__ __forceinline__ sl_bf16 sl_nextafter(sl_bf16 x, sl_bf16 y) {
  const unsigned short a = x.x, b = y.x, am = a & 0x7fffu, bm = b & 0x7fffu;
  if (am > 0x7f80u || bm > 0x7f80u) return sl_bf16{0x7fc0u};
  if (a == b) return y;
  if (am == 0) return bm == 0 ? y : sl_bf16{(unsigned short)((b & 0x8000u) | 1u)};
  return sl_bf16{(unsigned short)(am > bm || ((a ^ b) & 0x8000u) ? a - 1u : a + 1u)};
}
__device__ __forceinline__ sl_bf16 sl_spacing(sl_bf16 x) {
  if ((x.x & 0x7f80u) == 0x7f80u) return sl_bf16{0x7fc0u};
  const sl_bf16 n = sl_nextafter(x, sl_bf16{(unsigned short)((x.x & 0x8000u) | 0x7f80u)});
  return sl_bf16_of(sl_bf2f(n) - sl_bf2f(x));  // (exact: a power of two, or inf)
}

// frexp's exponent (C's frexp; NumPy's 0 for infinities and NaN, where C leaves it unspecified)
template <class T> __device__ __forceinline__ int sl_frexp_exp(T x) {
  int e = 0;
  const T m = frexp(x, &e);
  return m == m && !isinf(x) ? e : 0;
}

// NumPy's bitwise_count: the 1 bits of |x| in x's width (the magnitude of the most negative value
// wraps to itself, as NumPy's), one POPC
template <class T> __device__ __forceinline__ unsigned char sl_popcount(T x) {
  if constexpr (sizeof(T) == 8) {
    unsigned long long u = (unsigned long long)x;
    if (x < T(0)) u = 0ULL - u;
    return (unsigned char)__popcll(u);
  } else {
    constexpr unsigned int mask = sizeof(T) == 4 ? 0xffffffffu : (1u << (8 * sizeof(T))) - 1u;
    unsigned int u = (unsigned int)x & mask;
    if (x < T(0)) u = (0u - u) & mask;
    return (unsigned char)__popc(u);
  }
}
template <class T> __device__ __forceinline__ T sl_rshift(T a, T b) {
  if ((unsigned long long)(long long)b >= sizeof(T) * 8) return (sl_is_signed<T>::value && a < T(0)) ? T(-1) : T(0);
  return (T)(a >> (int)b);
}

// NumPy's heaviside: 0 below zero, 1 above, x2 at zero, NaN for NaN
template <class T> __device__ __forceinline__ T sl_heaviside(T x, T h) {
  return x != x ? x : x < T(0) ? T(0) : x > T(0) ? T(1) : h;
}

// NumPy's gcd and lcm: computed over the operands' magnitudes in the unsigned type of their width
// (32 bits for narrower types: the results are the same once converted back), so the most negative
// value keeps its magnitude and wrap-arounds are NumPy's: gcd(-128, 0) and lcm(-128, 3) of int8 are
// -128, lcm(64, 3) of int8 is -64
template <class T> struct sl_magnitude_type { typedef unsigned int type; };
template <> struct sl_magnitude_type<long long> { typedef unsigned long long type; };
template <> struct sl_magnitude_type<unsigned long long> { typedef unsigned long long type; };
template <class T> __device__ __forceinline__ typename sl_magnitude_type<T>::type sl_magnitude(T a) {
  typedef typename sl_magnitude_type<T>::type U;
  return (sl_is_signed<T>::value && a < T(0)) ? U(0) - (U)a : (U)a;
}
template <class U> __device__ __forceinline__ U sl_gcd_unsigned(U a, U b) {
  while (b != U(0)) {
    const U r = a % b;
    a = b;
    b = r;
  }
  return a;
}
template <class T> __device__ __forceinline__ T sl_gcd(T a, T b) {
  return (T)sl_gcd_unsigned(sl_magnitude(a), sl_magnitude(b));
}
template <class T> __device__ __forceinline__ T sl_lcm(T a, T b) {
  const auto ua = sl_magnitude(a), ub = sl_magnitude(b);
  const auto g = sl_gcd_unsigned(ua, ub);
  return g == 0 ? T(0) : (T)(ua / g * ub);
}
// SplitMix64's output function (Steele, Lea and Flood 2014): sl.random's values
__device__ __forceinline__ unsigned long long sl_splitmix64(unsigned long long z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// ldexp's exponent as C's int: beyond +-100000 every finite float over- or underflows alike
template <class T> __device__ __forceinline__ int sl_ldexp_exp(T n) {
  return n > T(100000) ? 100000 : n < T(-100000) ? -100000 : (int)n;
}

template <class T> __device__ __forceinline__ T sl_pow(T a, T b) {
  if constexpr (sl_is_float<T>::value) {
    return pow(a, b);
  } else if constexpr (sizeof(T) == 1 && T(2) == T(1)) {
    return a || !b;
  } else {
    if constexpr (sl_is_signed<T>::value) {
      if (b < T(0)) {  // NumPy refuses this; give the exact value where it is an integer
        if (a == T(1)) return T(1);
        if (a == T(-1)) return (b % T(2)) ? T(-1) : T(1);
        return T(0);
      }
    }
    T result = T(1), base = a;
    unsigned long long e = (unsigned long long)b;
    while (e) {
      if (e & 1ULL) result = (T)(result * base);
      base = (T)(base * base);
      e >>= 1;
    }
    return result;
  }
}

// shuffles for every register type (narrow types travel as int)
template <class T> __device__ __forceinline__ T sl_shfl_xor(T v, int o) {
  if constexpr (sizeof(T) < 4) {
    return (T)__shfl_xor_sync(0xffffffffu, (int)v, o);
  } else {
    return __shfl_xor_sync(0xffffffffu, v, o);
  }
}

// argmax/argmin: a value and its position along the reduced axis (an int below the identity's
// 0x7fffffff: groups.ARG_MAX_COLS). The combiners keep NumPy's index: the first extreme, a NaN
// counting as the extreme (the first NaN wins); of equal values the smaller position.
// Associative and commutative, so any combining order (warps, shuffles) gives that index.
// step() adds one element to a thread's own pair. A thread's elements come in increasing
// positions (every schedule's loops go up the reduced axis; column kernels of such a group do
// not alternate their passes' direction), so an element replaces the pair only
// when it is strictly greater (smaller) or the thread's first NaN: one comparison and a NaN
// test of the pair per element. An element equal to the identity never replaces it, so a row
// whose every element is the identity (-inf for argmax) keeps the identity's position, which
// sl_arg_index reads as the row's first element.
template <class V> struct sl_arg { V v; int i; };
template <class V> __device__ __forceinline__ sl_arg<V> sl_shfl_xor(sl_arg<V> a, int o) {
  return sl_arg<V>{sl_shfl_xor(a.v, o), __shfl_xor_sync(0xffffffffu, a.i, o)};
}
struct sl_op_argmax {
  template <class V> __device__ __forceinline__ sl_arg<V> operator()(sl_arg<V> a, sl_arg<V> b) const {
    const bool an = sl_isnan(a.v), bn = sl_isnan(b.v);
    return (an != bn ? an : (an || a.v == b.v) ? a.i <= b.i : a.v > b.v) ? a : b;
  }
  template <class V> __device__ __forceinline__ sl_arg<V> step(sl_arg<V> a, V v, int i) const {
    return (!(a.v >= v) && !sl_isnan(a.v)) ? sl_arg<V>{v, i} : a;
  }
};
struct sl_op_argmin {
  template <class V> __device__ __forceinline__ sl_arg<V> operator()(sl_arg<V> a, sl_arg<V> b) const {
    const bool an = sl_isnan(a.v), bn = sl_isnan(b.v);
    return (an != bn ? an : (an || a.v == b.v) ? a.i <= b.i : a.v < b.v) ? a : b;
  }
  template <class V> __device__ __forceinline__ sl_arg<V> step(sl_arg<V> a, V v, int i) const {
    return (!(a.v <= v) && !sl_isnan(a.v)) ? sl_arg<V>{v, i} : a;
  }
};
template <class V> __device__ __forceinline__ int sl_arg_index(sl_arg<V> a) { return a.i == 0x7fffffff ? 0 : a.i; }
// a split row's partial pairs (row_split's workspace), read by its last block
template <class V> __device__ __forceinline__ sl_arg<V> sl_load_cg(const sl_arg<V>* p) {
  return sl_arg<V>{sl_load_cg(&p->v), sl_load_cg(&p->i)};
}

// reduction combiners
struct sl_op_sum { template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return (T)(a + b); } };
struct sl_op_prod { template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return (T)(a * b); } };
// max/min reductions over float accumulators (float32 and float16 data) are one FMNMX.NAN per
// element (PTX max.NaN / min.NaN, sm_80 on): a NaN anywhere gives the canonical NaN, and of +0.0
// and -0.0 max gives +0.0 and min -0.0 (IEEE 754-2019 maximum/minimum). The selects of
// sl_maximum/sl_minimum cost two compares and a select; they keep the NaN's payload and pick by
// position, which a reduction's combining order does not follow NumPy's anyway. The elementwise
// maximum/minimum ops keep NumPy's operand semantics.
struct sl_op_max {
  template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return sl_maximum(a, b); }
  __device__ __forceinline__ float operator()(float a, float b) const { float d; asm("max.NaN.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "f"(b)); return d; }
};
struct sl_op_min {
  template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return sl_minimum(a, b); }
  __device__ __forceinline__ float operator()(float a, float b) const { float d; asm("min.NaN.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "f"(b)); return d; }
};
// a running maximum/minimum (scans: NumPy's maximum.accumulate), element by element as NumPy's
// maximum/minimum: the first NaN, else of equal values the later one; associative, so any
// grouping of a scan gives these bits
struct sl_op_running_max { template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return sl_maximum(a, b); } };
struct sl_op_running_min { template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return sl_minimum(a, b); } };
// float16's (ir.ops.keeps_earlier_ties; row kernels and runtime/scan.py's kernels): NumPy's float16
// loop keeps the earlier of equal values (-0.0, +0.0); as associative
struct sl_op_running_max_first { template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return (a >= b || sl_isnan(a)) ? a : b; } };
struct sl_op_running_min_first { template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return (a <= b || sl_isnan(a)) ? a : b; } };
struct sl_op_any { template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return a || b; } };
struct sl_op_all { template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return a && b; } };

// all lanes of a warp get the reduction of the warp's values; with W < 32, of each aligned group
// of W lanes (a power of two)
template <int W = 32, class T, class Op> __device__ __forceinline__ T sl_warp_allreduce(T v, Op op) {
#pragma unroll
  for (int o = W / 2; o > 0; o >>= 1) v = op(v, sl_shfl_xor(v, o));
  return v;
}
// all threads of a block get the reduction of the block's values; smem holds 32 values
template <class T, class Op> __device__ __forceinline__ T sl_block_allreduce(T v, Op op, T ident, T* smem) {
  v = sl_warp_allreduce(v, op);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) smem[warp] = v;
  __syncthreads();
  const int nwarps = (blockDim.x + 31) >> 5;
  v = lane < nwarps ? smem[lane] : ident;
  v = sl_warp_allreduce(v, op);
  __syncthreads();
  return v;
}
// the same for a buffer used once per launch: no barrier after the read (saves one __syncthreads).
// W, a power of two at least the block's warps: each group of W lanes reads the warps' results
// and combines them in log2(W) steps, in the order the 32-lane version does (its other lanes
// hold the identity)
template <int W = 32, class T, class Op> __device__ __forceinline__ T sl_block_allreduce_once(T v, Op op, T ident, T* smem) {
  v = sl_warp_allreduce(v, op);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) smem[warp] = v;
  __syncthreads();
  const int nwarps = (blockDim.x + 31) >> 5, j = lane & (W - 1);
  v = j < nwarps ? smem[j] : ident;
  return sl_warp_allreduce<W>(v, op);
}
// A row's running op (cumsum, cumprod, cummax, cummin) in a row kernel (plan/groups.py, fusable_scan): thread
// `lane` of a team of TEAM (a warp, or a block of TEAM / 32 warps) holds NT chunks of V consecutive
// elements of the row in a, chunk t at (lane + t * TEAM) * V (the identity past the row's end),
// and gets their running values in place. Each chunk is scanned in the thread, the chunks' last
// values across the warp by shuffles; with several warps, their totals go through sm
// (NT * (TEAM / 32 + 1) values, used once per launch) to warps that scan them, a chunk each in turn.
// Each element is then op(everything before its chunk, the lanes before it in the chunk, itself):
// an order of its own (float results may differ from a sequential scan's in the last bits).
// With `carry`, the running value of what comes before these chunks (a tile of a row that a
// kernel walks, schedules.py "tiles"), every element starts from it; gives op(carry, all chunks),
// the next tile's. sm is reused only after a barrier.
template <int NT, int V, int TEAM, class T, class Op>
__device__ __forceinline__ T sl_row_scan(T (&a)[NT * V], Op op, T ident, int lane, T* sm, T carry) {
  constexpr int W = TEAM / 32;
  T incl[NT];
#pragma unroll
  for (int t = 0; t < NT; ++t) {
#pragma unroll
    for (int u = 1; u < V; ++u) a[t * V + u] = op(a[t * V + u - 1], a[t * V + u]);
    incl[t] = a[t * V + V - 1];
  }
  const int wl = lane & 31;
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
#pragma unroll
    for (int t = 0; t < NT; ++t) {
      const T y = __shfl_up_sync(0xffffffffu, incl[t], d);
      if (wl >= d) incl[t] = op(y, incl[t]);
    }
  }
  // (carry: the team's running value before chunk t)
  if constexpr (W == 1) {
#pragma unroll
    for (int t = 0; t < NT; ++t) {
      const T before = __shfl_up_sync(0xffffffffu, incl[t], 1), total = __shfl_sync(0xffffffffu, incl[t], 31);
      const T lead = op(carry, wl == 0 ? ident : before);
#pragma unroll
      for (int u = 0; u < V; ++u) a[t * V + u] = op(lead, a[t * V + u]);
      carry = op(carry, total);
    }
  } else {
    const int warp = lane >> 5;
    if (wl == 31) {
#pragma unroll
      for (int t = 0; t < NT; ++t) sm[t * W + warp] = incl[t];
    }
    __syncthreads();
    for (int t = warp; t < NT; t += W) {  // each chunk's warp totals to the running totals before each
      T v = wl < W ? sm[t * W + wl] : ident;
#pragma unroll
      for (int d = 1; d < W; d <<= 1) {
        const T y = __shfl_up_sync(0xffffffffu, v, d);
        if (wl >= d) v = op(y, v);
      }
      const T before = __shfl_up_sync(0xffffffffu, v, 1);
      if (wl < W) sm[t * W + wl] = wl == 0 ? ident : before;
      if (wl == W - 1) sm[NT * W + t] = v;
    }
    __syncthreads();
#pragma unroll
    for (int t = 0; t < NT; ++t) {
      const T before = __shfl_up_sync(0xffffffffu, incl[t], 1);
      const T lead = op(op(carry, sm[t * W + warp]), wl == 0 ? ident : before);
#pragma unroll
      for (int u = 0; u < V; ++u) a[t * V + u] = op(lead, a[t * V + u]);
      carry = op(carry, sm[NT * W + t]);
    }
  }
  return carry;
}
template <int NT, int V, int TEAM, class T, class Op>
__device__ __forceinline__ void sl_row_scan(T (&a)[NT * V], Op op, T ident, int lane, T* sm) {
  sl_row_scan<NT, V, TEAM>(a, op, ident, lane, sm, ident);
}
// Programmatic dependent launch (sm_90 and later; stitchlab/runtime/pdl.py): launched with the
// programmatic-stream-serialization attribute, a kernel may start while the kernel before it in
// the stream drains its last blocks. Every generated kernel calls this first, before any load or
// store: it waits until that kernel has finished and its writes are visible. Without the launch
// attribute, and before sm_90, it does nothing.
__device__ __forceinline__ void sl_grid_dependency_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
// Marsaglia and Tsang's rounds of sl.random's gamma draws (ir/ops.py, _gamma_rounds: the same
// operations in the same order): the first accepted proposal of rounds 0..11, else the last
// round's (1 where it is not positive). A round accepts with probability 0.95 or more, so a thread
// usually leaves after one; each round's outputs of the element's counter z0 are made as needed
static __device__ __noinline__ double sl_gamma_rounds(double d, unsigned long long z0) {
  const unsigned long long step = 0x9E3779B97F4A7C15ull;
  const double c = 1.0 / sqrt(9.0 * d);
  double x, t = 0.0, v = 1.0, sine = 0.0;
#pragma unroll 1
  for (int k = 0; k < 12; k++) {
    if ((k & 1) == 0) {
      const double u1 = (double)(sl_splitmix64(z0 + (unsigned long long)k * step) >> 11) * 0x1p-53;
      const double u2 = (double)(sl_splitmix64(z0 + (unsigned long long)(k + 1) * step) >> 11) * 0x1p-53;
      const double radius = sqrt(-2.0 * log(1.0 - u1)), angle = 0x1.921fb54442d18p+2 * u2;
      x = radius * cos(angle);
      sine = radius * sin(angle);
    } else {
      x = sine;
    }
    t = 1.0 + c * x;
    v = t * t * t;
    const double u = ((double)(sl_splitmix64(z0 + (unsigned long long)(12 + k) * step) >> 12) + 0.5) * 0x1p-52;
    if (t > 0.0 && log(u) < 0.5 * x * x + d - d * v + d * log(v)) return v;
  }
  return t > 0.0 ? v : 1.0;
}
// Stirling's series of log Gamma(y) - ((y - 1/2) log y - y + log(2 pi) / 2) for y >= 11, five
// terms (ir/ops.py, _stirling_series)
static __device__ __forceinline__ double sl_stirling_series(double y) {
  const double r = 1.0 / y, r2 = r * r;
  return r * (0.08333333333333333 + r2 * (-0.002777777777777778 + r2 * (0.0007936507936507937 +
              r2 * (-0.0005952380952380953 + r2 * 0.0008417508417508417))));
}
// log(x!) of the exact factorial of an integer-valued 0 <= x < 10
static __device__ __forceinline__ double sl_small_log_factorial(double x) {
  double f = 1.0;
  for (int i = 2; i <= (int)x; i++) f *= i;
  return log(f);
}
// log(x!) - ((x + 1/2) log(x + 1) - (x + 1) + log(2 pi) / 2) of an integer-valued x >= 0
// (_stirling_tail)
static __device__ __forceinline__ double sl_stirling_tail(double x) {
  if (x < 10.0) return sl_small_log_factorial(x) - (x + 0.5) * log(x + 1.0) + (x + 1.0) - 0.9189385332046727;
  return sl_stirling_series(x + 1.0);
}
// log P(k) of a Poisson distribution of rate lam at an integer-valued k >= 0 (ir/ops.py,
// _poisson_log_pmf): with the exact factorial below 10, Stirling's series and d = k + 1 - lam
// from there (precise at rates of 1e15 too)
static __device__ __forceinline__ double sl_poisson_log_pmf(double k, double lam, double loglam) {
  if (k < 10.0) return -lam + k * loglam - sl_small_log_factorial(k);
  const double x = k + 1.0, d = x - lam;
  return d - k * log1p(d / lam) - 0.5 * log(x) - 0.9189385332046727 - sl_stirling_series(x);
}
// A Poisson count of sl.random (ir/ops.py, _poisson_rounds: the same operations in the same
// order): below rate 10 the inverse distribution function searched from 0; from 10 on the first
// accepted of Hoermann's PTRS rounds 0..25, else the last proposal (at least 0); -1 for a rate
// NumPy rejects (negative, NaN, above 9.2e18)
static __device__ __noinline__ double sl_poisson_rounds(double lam, unsigned long long z0) {
  const unsigned long long step = 0x9E3779B97F4A7C15ull;
  if (!(lam >= 0.0 && lam <= 9.2e18)) return -1.0;
  if (lam < 10.0) {
    const double u = (double)(sl_splitmix64(z0) >> 11) * 0x1p-53;
    double p = exp(-lam), cdf = p, k = 0.0;
    while (u >= cdf) {
      k += 1.0;
      p = p * lam / k;
      const double following = cdf + p;
      if (following == cdf) break;
      cdf = following;
    }
    return k;
  }
  const double slam = sqrt(lam), loglam = log(lam);
  const double b = 0.931 + 2.53 * slam, a = -0.059 + 0.02483 * b;
  const double lia = log(1.1239 + 1.1328 / (b - 3.4)), vr = 0.9277 - 3.6224 / (b - 2.0);
  double k = 0.0;
#pragma unroll 1
  for (int r = 0; r < 26; r++) {
    const double U = ((double)(sl_splitmix64(z0 + (unsigned long long)(2 * r) * step) >> 12) + 0.5) * 0x1p-52 - 0.5;
    const double v = ((double)(sl_splitmix64(z0 + (unsigned long long)(2 * r + 1) * step) >> 12) + 0.5) * 0x1p-52;
    const double us = 0.5 - fabs(U);
    k = floor((2.0 * a / us + b) * U + lam + 0.43);
    if (us >= 0.07 && v <= vr) return k;
    if (k >= 0.0 && (us >= 0.013 || v <= us) &&
        log(v) + lia - log(a / (us * us) + b) <= sl_poisson_log_pmf(k, lam, loglam)) return k;
  }
  return k > 0.0 ? k : 0.0;
}
// A binomial count of sl.random (ir/ops.py, _binomial_rounds: the same operations in the same
// order) for q = min(p, 1 - p): where n q < 10 the inverse distribution function searched from 0;
// from 10 on the first accepted of Hoermann's BTRS rounds 0..29, else the last proposal (clipped
// to [0, n]); n minus the count where p > 1/2; -1 for parameters NumPy rejects
static __device__ __noinline__ double sl_binomial_rounds(double n, double p, unsigned long long z0) {
  const unsigned long long step = 0x9E3779B97F4A7C15ull;
  if (!(n >= 0.0 && n <= 9.2e18 && p >= 0.0 && p <= 1.0)) return -1.0;
  const bool flip = p > 0.5;
  const double q = flip ? 1.0 - p : p;
  double k = 0.0;
  if (n * q < 10.0) {
    const double u = (double)(sl_splitmix64(z0) >> 11) * 0x1p-53;
    const double r = q / (1.0 - q);
    double pk = exp(n * log1p(-q)), cdf = pk;
    while (u >= cdf && k < n) {
      k += 1.0;
      pk = pk * (r * (n - k + 1.0) / k);
      const double following = cdf + pk;
      if (following == cdf) break;
      cdf = following;
    }
  } else {
    const double spq = sqrt(n * q * (1.0 - q)), b = 1.15 + 2.53 * spq, a = -0.0873 + 0.0248 * b + 0.01 * q;
    const double c = n * q + 0.5, vr = 0.92 - 4.2 / b, alpha = (2.83 + 5.1 / b) * spq, r = q / (1.0 - q);
    const double m = floor((n + 1.0) * q);
    const double h = (m + 0.5) * log((m + 1.0) / (r * (n - m + 1.0))) + sl_stirling_tail(m) + sl_stirling_tail(n - m);
    int t = 0;
#pragma unroll 1
    for (; t < 30; t++) {
      const double U = ((double)(sl_splitmix64(z0 + (unsigned long long)(2 * t) * step) >> 12) + 0.5) * 0x1p-52 - 0.5;
      const double v = ((double)(sl_splitmix64(z0 + (unsigned long long)(2 * t + 1) * step) >> 12) + 0.5) * 0x1p-52;
      const double us = 0.5 - fabs(U);
      k = floor((2.0 * a / us + b) * U + c);
      if (k >= 0.0 && k <= n && ((us >= 0.07 && v <= vr) ||
          log(v * alpha / (a / (us * us) + b)) <= h + (n + 1.0) * log1p((k - m) / (n - k + 1.0)) +
              (k + 0.5) * log(r * (n - k + 1.0) / (k + 1.0)) - sl_stirling_tail(k) - sl_stirling_tail(n - k))) break;
    }
    if (t == 30) k = k < 0.0 ? 0.0 : (k > n ? n : k);
  }
  return flip ? n - k : k;
}
// A von Mises angle about 0 of sl.random (ir/ops.py, _vonmises_rounds: the same operations in the
// same order): uniform below kappa 1e-8, a normal of variance 1 / kappa above 1e6, otherwise the
// first accepted of Best and Fisher's rounds 0..33 (else the last), signed by output 68; NaN for
// a negative or NaN kappa
static __device__ __noinline__ double sl_vonmises_rounds(double kappa, unsigned long long z0) {
  const unsigned long long step = 0x9E3779B97F4A7C15ull;
  const double pi = 0x1.921fb54442d18p+1;
  if (!(kappa >= 0.0)) return nan("");
  if (kappa > 1e6) {
    const double u1 = (double)(sl_splitmix64(z0) >> 11) * 0x1p-53, u2 = (double)(sl_splitmix64(z0 + step) >> 11) * 0x1p-53;
    return sqrt(-2.0 * log(1.0 - u1)) * cos(0x1.921fb54442d18p+2 * u2) / sqrt(kappa);
  }
  if (kappa < 1e-8) return pi * (2.0 * ((double)(sl_splitmix64(z0) >> 11) * 0x1p-53) - 1.0);
  const double r = 1.0 + sqrt(1.0 + 4.0 * kappa * kappa), rho = (r - sqrt(2.0 * r)) / (2.0 * kappa);
  const double s = kappa < 1e-5 ? 1.0 / kappa + kappa : (1.0 + rho * rho) / (2.0 * rho);
  double w = 0.0;
#pragma unroll 1
  for (int t = 0; t < 34; t++) {
    const double u = (double)(sl_splitmix64(z0 + (unsigned long long)(2 * t) * step) >> 11) * 0x1p-53;
    const double v = ((double)(sl_splitmix64(z0 + (unsigned long long)(2 * t + 1) * step) >> 12) + 0.5) * 0x1p-52;
    const double c = cos(pi * u);
    w = (1.0 + s * c) / (s + c);
    const double y = kappa * (s - w);
    if (y * (2.0 - y) - v >= 0.0 || log(y / v) + 1.0 - y >= 0.0) break;
  }
  const double angle = acos(w);
  return (double)(sl_splitmix64(z0 + 68ull * step) >> 11) * 0x1p-53 < 0.5 ? -angle : angle;
}
// log(x!) of an integer-valued x >= 0 (ir/ops.py, _log_factorial): the exact factorial's below
// 10, Stirling's from there
static __device__ __forceinline__ double sl_log_factorial(double x) {
  if (x < 10.0) return sl_small_log_factorial(x);
  return (x + 0.5) * log(x + 1.0) - (x + 1.0) + 0.9189385332046727 + sl_stirling_series(x + 1.0);
}
// A hypergeometric count of sl.random (ir/ops.py, _hypergeometric_rounds: the same operations in
// the same order): for s = min(sample, good + bad - sample) below 10 the s draws one by one; from
// 10 on the first accepted of Stadlober's HRUA rounds 0..69 (else the last proposal in range,
// else the mode); complemented where s was; -1 for parameters NumPy rejects
static __device__ __noinline__ double sl_hypergeometric_rounds(double good, double bad, double sample,
                                                                 unsigned long long z0) {
  const unsigned long long step = 0x9E3779B97F4A7C15ull;
  const double total = good + bad;
  if (!(good >= 0.0 && bad >= 0.0 && sample >= 0.0 && sample <= total && good < 1e9 && bad < 1e9)) return -1.0;
  const double s = fmin(sample, total - sample);
  double count;
  if (s < 10.0) {
    double left_good = good, left = total;
    count = 0.0;
    for (int i = 0; i < (int)s; i++) {
      const double u = (double)(sl_splitmix64(z0 + (unsigned long long)i * step) >> 11) * 0x1p-53;
      if (u * left < left_good) {
        count += 1.0;
        left_good -= 1.0;
      }
      left -= 1.0;
    }
  } else {
    const double small = fmin(good, bad), large = fmax(good, bad);
    const double a = s * (small / total) + 0.5;
    const double c = sqrt((total - s) * s * (small / total) * (large / total) / (total - 1.0) + 0.5);
    const double h = 1.7155277699214135 * c + 0.8989161620588988;
    const double m = floor((s + 1.0) * (small + 1.0) / (total + 2.0));
    const double g = sl_log_factorial(m) + sl_log_factorial(small - m) + sl_log_factorial(s - m) + sl_log_factorial(large - s + m);
    const double b = fmin(fmin(s, small) + 1.0, floor(a + 16.0 * c));
    count = m;
#pragma unroll 1
    for (int t = 0; t < 70; t++) {
      const double u = ((double)(sl_splitmix64(z0 + (unsigned long long)(2 * t) * step) >> 12) + 0.5) * 0x1p-52;
      const double v = (double)(sl_splitmix64(z0 + (unsigned long long)(2 * t + 1) * step) >> 11) * 0x1p-53;
      const double x = a + h * (v - 0.5) / u;
      if (!(x >= 0.0 && x < b)) continue;
      const double k = floor(x);
      count = k;
      const double d = g - (sl_log_factorial(k) + sl_log_factorial(small - k) + sl_log_factorial(s - k) +
                            sl_log_factorial(large - s + k));
      if (u * (4.0 - u) - 3.0 <= d || (u * (u - d) < 1.0 && 2.0 * log(u) <= d)) break;
    }
    if (good > bad) count = s - count;
  }
  return s < sample ? good - count : count;
}
// ---- end of preamble -----------------------------------------------------------------------
"""

#: Digest of the preamble: part of every kernel's registry key ("header digest").
PREAMBLE_DIGEST = hashlib.sha256(PREAMBLE.encode()).hexdigest()[:16]
