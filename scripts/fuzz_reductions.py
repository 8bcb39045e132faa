"""Random differential test of stitchlab's reductions, scans and statistics against NumPy, on
the NumPy backend.

    python scripts/fuzz_reductions.py SECONDS SEED [FOUND_JSON]

Draws random calls (``sum`` ... ``nanpercentile``, ``cumsum`` ..., ``average``) over bool,
int8..uint64, float16, float32 and float64 data of 0 to 3 dimensions (empty axes sometimes, NaN,
inf and signed zeros sometimes), with random ``axis`` (int, tuple, None), ``keepdims``,
``dtype=``, ``out=`` (of a random dtype), ``where=``, ``initial=``, ``ddof`` and quantile methods,
runs each through NumPy and stitchlab and compares: both raise (an exception of a related class),
or the same dtype, shape and values (NaN where NumPy has NaN; floats within a few steps of the
narrowest float dtype involved count as "close"; integer ``out`` values that NumPy casts from
NaN, inf or an out-of-range float, undefined in C, apart). Prints the count of each kind of
difference, those that the user guide documents as deliberate apart, and writes up to two
examples of each to FOUND_JSON (default ``fuzz-found-SEED.json``).
"""

from __future__ import annotations

import collections
import json
import sys
import time
import warnings
from typing import Any

import numpy as np

import stitchlab as sl

DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64,
          np.float16, np.float32, np.float64]
FUNCTIONS = ["sum", "prod", "mean", "var", "std", "max", "min", "any", "all", "nansum", "nanprod", "nanmean", "nanvar",
             "nanstd", "nanmax", "nanmin", "argmax", "argmin", "nanargmax", "nanargmin", "median", "nanmedian",
             "quantile", "nanquantile", "percentile", "nanpercentile", "ptp", "count_nonzero", "cumsum", "cumprod",
             "nancumsum", "nancumprod", "average"]
SCANS = {"cumsum", "cumprod", "nancumsum", "nancumprod"}
HAS_DTYPE = {"sum", "prod", "mean", "var", "std", "nansum", "nanprod", "nanmean", "nanvar", "nanstd"} | SCANS
HAS_WHERE = {"sum", "prod", "mean", "var", "std", "max", "min", "any", "all", "nansum", "nanprod", "nanmean", "nanvar",
             "nanstd", "nanmax", "nanmin"}
ORDER = {"median", "nanmedian", "quantile", "nanquantile", "percentile", "nanpercentile"}
ARGS = {"argmax", "argmin", "nanargmax", "nanargmin"}
HAS_OUT = HAS_WHERE | ARGS | ORDER | SCANS | {"ptp"}
HAS_KEEPDIMS = HAS_WHERE | ARGS | ORDER | {"ptp", "count_nonzero", "average"}
HAS_INITIAL = {"sum", "prod", "max", "min", "nansum", "nanprod", "nanmax", "nanmin"}
METHODS = ["linear", "lower", "higher", "nearest", "midpoint", "inverted_cdf", "hazen", "closest_observation"]


def _data(rng: np.random.Generator, dt: Any, shape: tuple[int, ...]) -> np.ndarray:
    dt = np.dtype(dt)
    if dt == np.bool_:
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        info = np.iinfo(dt)
        lo, hi = [(max(info.min, -5), min(info.max, 6)), (info.min, info.max),
                  (max(info.min, -200), min(info.max, 300))][rng.integers(3)]
        return rng.integers(lo, hi, shape, endpoint=True, dtype=dt)
    k = rng.integers(4)
    v = rng.standard_normal(shape) * [1, 100, 1e4, 3e4][k]
    if dt == np.float16 and k == 3:  # (near float16's largest values)
        v = rng.uniform(30000, 65000, shape) * rng.choice([-1, 1], shape)
    v = np.asarray(v).astype(dt)
    if rng.random() < 0.4 and v.ndim:
        m = rng.random(shape) < 0.3
        v[m] = rng.choice([np.nan, np.inf, -np.inf, 0.0, -0.0], size=int(m.sum()), p=[0.6, 0.1, 0.1, 0.1, 0.1])
    return v


def _case(rng: np.random.Generator) -> tuple[str, np.ndarray, tuple[Any, ...], dict[str, Any], bool]:
    f = FUNCTIONS[rng.integers(len(FUNCTIONS))]
    nd = int(rng.integers(0, 4))
    shape = tuple(int(rng.integers(0, 5)) if rng.random() < 0.1 else int(rng.integers(1, 6)) for _ in range(nd))
    a = _data(rng, DTYPES[rng.integers(len(DTYPES))], shape)
    kw: dict[str, Any] = {}
    r = rng.random()
    if f in SCANS | ARGS:
        if nd and r < 0.7:
            kw["axis"] = int(rng.integers(-nd, nd))
    elif nd and r < 0.4:
        kw["axis"] = int(rng.integers(-nd, nd))
    elif nd > 1 and r < 0.6:
        kw["axis"] = tuple(sorted({int(i) for i in rng.integers(0, nd, size=2)}))
    if f in HAS_KEEPDIMS and rng.random() < 0.3:
        kw["keepdims"] = True
    if f in HAS_DTYPE and rng.random() < 0.25:
        kw["dtype"] = DTYPES[rng.integers(len(DTYPES))]
    if f in HAS_WHERE and rng.random() < 0.2:
        kw["where"] = rng.random(shape if rng.random() < 0.7 or not nd else shape[-1:]) < 0.6
        if f in ("max", "min", "nanmax", "nanmin"):
            kw["initial"] = float(rng.integers(-3, 4))
    if f in HAS_INITIAL and "initial" not in kw and rng.random() < 0.15:
        kw["initial"] = [0, 1, 2.5, -1, 100][rng.integers(5)]
    if f in ("var", "std", "nanvar", "nanstd") and rng.random() < 0.3:
        kw["ddof"] = int(rng.integers(0, 3))
    args: tuple[Any, ...] = ()
    if "quantile" in f or "percentile" in f:
        q: Any = [0.5, 0.0, 1.0, [0.25, 0.75], 0.3][rng.integers(5)]
        if "percentile" in f:
            q = [100 * v for v in q] if isinstance(q, list) else 100 * q
        args = (q,)
        if rng.random() < 0.4:
            kw["method"] = METHODS[rng.integers(len(METHODS))]
    if f == "average" and nd and rng.random() < 0.3:
        ax = kw.get("axis")
        if isinstance(ax, int):
            kw["weights"] = rng.random(shape[ax]) + 0.1
        elif ax is None:
            kw["weights"] = rng.random(shape) + 0.1
    return f, a, args, kw, f in HAS_OUT and rng.random() < 0.3


def _run(lib: Any, f: str, a: np.ndarray, args: tuple[Any, ...], kw: dict[str, Any], out: Any = None) -> np.ndarray:
    kwargs = dict(kw) if out is None else dict(kw, out=np.zeros(*out))
    r = getattr(lib, f)(a if lib is np else sl.asarray(a), *args, **kwargs)
    if out is not None:
        return kwargs["out"]
    return np.asarray(r.get() if isinstance(r, sl.LazyArray) else r)


def _compare(x: np.ndarray, y: np.ndarray, itemsize: int = 8) -> str | None:
    """None where ``y`` is ``x``; "close" for floats within a few steps of the narrowest float
    (``itemsize`` bytes) the computation went through, else the kind of difference."""
    if x.dtype != y.dtype or x.shape != y.shape:
        return "dtype/shape"
    if x.dtype.kind == "f":
        xx, yy = x.astype(np.float64), y.astype(np.float64)
        if np.array_equal(xx, yy, equal_nan=True):
            return None
        rtol = {2: 2e-3, 4: 2e-6, 8: 1e-12}[min(x.itemsize, itemsize)]
        return "close" if np.allclose(xx, yy, rtol=rtol, atol=0, equal_nan=True) else "value"
    return None if np.array_equal(x, y) else "value"


def _outcome(f: str, a: np.ndarray, args: tuple[Any, ...], kw: dict[str, Any], out_dtype: Any) -> tuple[Any, Any]:
    try:
        ref: Any = _run(np, f, a, args, kw)
        if out_dtype is not None:
            ref = _run(np, f, a, args, kw, (ref.shape, out_dtype))
    except Exception as e:  # noqa: BLE001 - any NumPy error is an outcome to compare
        ref = e
    try:
        shape = ref.shape if not isinstance(ref, Exception) else np.shape(_run(np, f, a, args, kw))
        got: Any = _run(sl, f, a, args, kw, None if out_dtype is None else (shape, out_dtype))
    except Exception as e:  # noqa: BLE001
        got = e
    return ref, got


def _narrowest_float(a: np.ndarray, kw: dict[str, Any], out_dtype: Any) -> int:
    """The itemsize of the narrowest float dtype among the data's, ``dtype=`` and ``out``'s (8 if
    none): float32 data into a float64 ``out`` is summed in float32 first by some functions."""
    floats = [np.dtype(d).itemsize for d in (a.dtype, kw.get("dtype"), out_dtype)
              if d is not None and np.dtype(d).kind == "f"]
    return min(floats, default=8)


#: the statistics that cast a sum (of the values, or of the squared deviations) into ``out``
SUMMED_INTO_OUT = {"mean", "nanmean", "var", "nanvar", "std", "nanstd", "average"}


def _through_float(f: str, a: np.ndarray, kw: dict[str, Any], out_dtype: Any) -> bool:
    """Whether NumPy's computation goes through a float dtype (float data or ``dtype=``, a statistic
    of integers, or integers whose promotion with ``out``'s dtype is a float: int64 into uint64)."""
    dtypes = [np.dtype(d) for d in (a.dtype, kw.get("dtype"), out_dtype) if d is not None]
    return f in SUMMED_INTO_OUT | ORDER or any(d.kind == "f" for d in dtypes) or np.result_type(*dtypes).kind == "f"


def undefined_cast(f: str, a: np.ndarray, args: tuple[Any, ...], kw: dict[str, Any], out_dtype: Any) -> bool:
    """Whether NumPy casts a float value that an integer ``out`` or ``dtype=`` cannot hold (NaN,
    inf, out of its range: undefined in C, platform-defined in NumPy, and NumPy's own value depends
    on the loop; user guide, "A float result that does not fit an integer array's dtype"): float
    data outside an integer ``dtype=``, or NumPy's result into a float64 ``out`` (from an
    ``initial`` cast to the integer ``out``'s dtype, as NumPy starts ``out`` from it) holds such a
    value, or, for the statistics that cast their sum into ``out``, a slice's sum may be one (the
    result times the slice's size)."""
    target = np.dtype(out_dtype if out_dtype is not None else kw.get("dtype", np.float64))
    if target.kind not in "iu" or not _through_float(f, a, kw, out_dtype):
        return False
    info = np.iinfo(target)
    with np.errstate(all="ignore"):
        if a.dtype.kind == "f" and a.size and (not np.isfinite(a).all() or a.max() > info.max or a.min() < info.min):
            return True
        if out_dtype is None:
            return False
        floats = dict(kw, initial=np.asarray(kw["initial"]).astype(target)[()]) if "initial" in kw else kw
        try:
            r = _run(np, f, a, args, floats, (np.shape(_run(np, f, a, args, kw)), np.float64)).astype(np.float64)
        except Exception:  # noqa: BLE001 - no float64 out to compare with
            return False
    n = a.size // max(r.size, 1) if f in SUMMED_INTO_OUT else 1
    return bool(np.any(~np.isfinite(r)) or np.any(np.abs(r) * max(n, 1) > info.max) or np.any(r < info.min))


def _kind(ref: Any, got: Any, itemsize: int = 8) -> str | None:
    if isinstance(ref, Exception) and isinstance(got, Exception):
        related = isinstance(got, type(ref)) or isinstance(ref, type(got)) or (
            isinstance(ref, TypeError) and isinstance(got, TypeError))
        return None if related else f"error-class {type(ref).__name__} vs {type(got).__name__}"
    if isinstance(ref, Exception):
        return f"numpy raises {type(ref).__name__}"
    if isinstance(got, Exception):
        return f"stitchlab raises {type(got).__name__}"
    return _compare(ref, got, itemsize)


def documented(key: tuple[str, ...], ref: str) -> str | None:
    """Why a difference is a documented one (user guide), or None."""
    f, kind, dt, out, dtype = key
    if f in ("max", "min", "nanmax", "nanmin", "ptp") and kind == "stitchlab raises TypeError" and out != "-" \
            and not np.can_cast(dt, out):
        return "max/min into an out that cannot hold every input value raise TypeError"
    if kind in ("close", "value") and "float16" in (dt, dtype) and f in (
            "cumsum", "nancumsum", "cumprod", "nancumprod", "var", "std", "nanvar", "nanstd", "mean", "nanmean", "sum",
            "nansum", "prod", "nanprod", "average"):
        return "float16 sums, scans and variances accumulate in float32"
    if f in ("nanargmin", "nanargmax") and kind == "numpy raises ValueError":
        return "nanargmax/nanargmin of an all-NaN slice give -1"
    if f in ("nanquantile", "nanpercentile") and kind == "dtype/shape" and dt in ("float16", "float32") \
            and f"dtype={dt}" in ref and "nan" in ref:
        return "nanquantile of an all-NaN first slice: NumPy's dtype depends on the values"
    if kind == "value, undefined cast":
        return "NaN, inf or out-of-range floats cast into an integer out: platform-defined"
    if f == "average" and kind == "numpy raises ZeroDivisionError":
        return "average gives NaN or inf where NumPy raises ZeroDivisionError"
    if kind == "numpy raises ValueError" and "cannot reshape array of size 0" in ref:
        return "NumPy's own error: an empty input over several axes"
    if kind == "close":
        return "within a few float steps (summation order)"
    return None


def main(seconds: float, seed: int, found_path: str) -> None:
    sl.set_backend("numpy")
    warnings.simplefilter("ignore")
    rng = np.random.default_rng(seed)
    start, n = time.time(), 0
    counts: collections.Counter[tuple[str, ...]] = collections.Counter()
    found: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
    while time.time() - start < seconds:
        f, a, args, kw, with_out = _case(rng)
        out_dtype = DTYPES[rng.integers(len(DTYPES))] if with_out else None
        n += 1
        ref, got = _outcome(f, a, args, kw, out_dtype)
        kind = _kind(ref, got, _narrowest_float(a, kw, out_dtype))
        if kind is None:
            continue
        if kind == "value" and undefined_cast(f, a, args, kw, out_dtype):
            kind = "value, undefined cast"
        elif kind == "value" and ref.dtype.kind in "iu" and _through_float(f, a, kw, out_dtype) and np.allclose(
                ref.astype(np.float64), got.astype(np.float64), rtol=1e-12, atol=1):
            kind = "close"  # (a float computation's last bits, or its truncation, cast into integers)
        key = (f, kind, str(a.dtype), str(np.dtype(out_dtype)) if out_dtype is not None else "-",
               str(np.dtype(kw["dtype"])) if "dtype" in kw else "-")
        counts[key] += 1
        if len(found[repr(key)]) < 2:
            found[repr(key)].append({
                "f": f, "a": a.tolist(), "dtype": str(a.dtype), "args": repr(args), "out": key[3],
                "kw": {k: v.tolist() if isinstance(v, np.ndarray) else np.dtype(v).name if k == "dtype" else v
                       for k, v in kw.items()},
                "ref": repr(ref)[:300], "got": repr(got)[:300]})
    print(f"{n} cases in {seconds:.0f} s, seed {seed}: {sum(counts.values())} differ")
    by_reason: collections.Counter[str] = collections.Counter()
    for key, c in sorted(counts.items(), key=lambda kv: -kv[1]):
        why = documented(key, found[repr(key)][0]["ref"])
        if why:
            by_reason[why] += c
        else:
            print(c, key)
    for why, c in by_reason.most_common():
        print(f"{c} documented: {why}")
    with open(found_path, "w") as fh:
        json.dump(found, fh, indent=1, default=str)


if __name__ == "__main__":
    main(float(sys.argv[1]), int(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else f"fuzz-found-{sys.argv[2]}.json")
