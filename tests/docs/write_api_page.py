"""Write docs/api.md from ``sl.__all__``: ``python tests/docs/write_api_page.py``.

Run it when the public namespace changes (``tests/docs/test_api_list.py`` fails until then), then
review the sections: a new name lands in "Other" unless it is added to one below.
"""
import importlib.util
import sys
import types
from pathlib import Path

import stitchlab as sl
from stitchlab.frontend.api import ELEMENTWISE

SECTIONS = [
    ("Arrays", "The lazy array type. `sl.ndarray` is another name for it.", ["LazyArray", "ndarray"]),
    ("Creating arrays", "", ["asarray", "array", "zeros", "ones", "full", "empty", "zeros_like", "ones_like",
                             "full_like", "empty_like", "arange", "linspace", "logspace", "geomspace", "tri", "indices",
                             "fromfunction", "vander", "asanyarray", "ascontiguousarray", "asarray_chkfinite", "require",
                             "from_dlpack", "bartlett", "blackman", "hamming", "hanning", "kaiser"]),
    ("Evaluating, planning, tracing", "", ["compute", "explain", "Plan", "jit", "fast_math"]),
    ("Reductions", "They take `axis` (an int, negative or None; a tuple where NumPy takes one) and `keepdims` as NumPy's "
     "do (`trapezoid` has no `keepdims`, as NumPy's).",
     ["sum", "prod", "mean", "max", "min", "amax", "amin", "var", "std", "any", "all", "argmax", "argmin", "logsumexp",
      "nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar", "nanstd", "nanargmax", "nanargmin", "count_nonzero", "ptp",
      "trapezoid", "vecdot"]),
    ("SciPy-style functions", "`scipy.special`'s meaning, composed of the ops above and fused: over rows, `softmax` "
     "and `log_softmax` are one kernel.", ["softmax", "log_softmax", "logit", "xlogy"]),
    ("Layout and selection", "Index maps: lazy, no copy.", ["reshape", "ravel", "transpose", "swapaxes", "moveaxis",
                                                            "expand_dims", "squeeze", "atleast_1d", "atleast_2d", "atleast_3d", "rollaxis", "permute_dims", "matrix_transpose",
                                                            "broadcast_to", "broadcast_arrays", "where", "clip", "astype"]),
    ("Comparing and cleaning values", "", ["isclose", "allclose", "nan_to_num", "isposinf", "isneginf", "select", "copy", "isin"]),
    ("Matrix products and joins", "A matrix product (`matmul`, `dot`, `tensordot`, `inner`, `vdot`, `einsum`) is a plan step "
     "of its own (CuPy/cuBLAS or NumPy), never fused; the work around it fuses. `matvec`, `vecmat`, `kron` and `cross` are "
     "fused elementwise work and reductions, `cov` and `corrcoef` one matrix product with the centring and scaling fused, "
     "and a join of up to four arrays is an index map fused into its use.",
     ["matmul", "matvec", "vecmat", "dot", "tensordot", "inner", "vdot", "kron", "cross", "cov", "corrcoef", "einsum",
      "einsum_path", "concatenate",
      "concat", "stack", "vstack", "hstack", "dstack", "column_stack", "block"]),
    ("Gathers, scans, sorts and order statistics",
     "Plan steps of their own run by CuPy or NumPy (`sl.explain`: \"interpreted\"); the work around them fuses.",
     ["take", "take_along_axis", "cumsum", "cumprod", "nancumsum", "nancumprod", "cumulative_sum", "cumulative_prod", "sort", "argsort", "median", "quantile", "percentile",
      "nanmedian", "nanquantile", "nanpercentile", "partition", "argpartition", "lexsort", "searchsorted", "digitize", "interp"]),
    ("Shapes that depend on the values",
     "Evaluate when called (the positions' count is read back, as in CuPy); the result is a stitchlab array and what follows is lazy. Not in `sl.jit` or under CUDA-graph capture.",
     ["nonzero", "flatnonzero", "argwhere", "extract", "compress", "unique", "unique_all", "unique_counts", "unique_inverse",
      "unique_values", "intersect1d", "union1d", "setdiff1d", "setxor1d", "bincount", "histogram", "histogram2d", "histogramdd",
      "histogram_bin_edges", "trim_zeros", "unravel_index", "ravel_multi_index"]),
    ("Array manipulation and construction",
     "Mostly built from lazy views, index compares and broadcasts, fused into the kernel of their use (`roll`, `pad` and a "
     "1-d `diag` join or gather); `delete` and `insert` are gather steps, `unwrap` a scan step, and `apply_along_axis` "
     "runs on the evaluated array.",
     ["flip", "fliplr", "flipud", "tril", "triu", "eye", "identity", "diagonal", "diag", "trace", "outer", "tile", "repeat",
      "meshgrid", "diff", "roll", "pad", "split", "array_split", "hsplit", "vsplit", "dsplit", "array_equal", "array_equiv",
      "average", "rot90", "append", "ediff1d", "unstack", "diagflat", "gradient", "convolve", "correlate", "resize", "delete",
      "insert", "choose", "piecewise", "packbits", "unpackbits", "unwrap", "apply_along_axis", "apply_over_axes"]),
    ("Assignment", "Lazy like the rest: the target then stands for the new value (user guide, \"Assignment\").",
     ["copyto", "place", "put", "putmask", "put_along_axis", "fill_diagonal"]),
    ("Polynomials", "", ["polyval", "polyadd", "polysub", "polymul", "polydiv", "polyder", "polyint", "polyfit", "poly"]),
    ("Elementwise functions", "NumPy's names and semantics (broadcasting, NumPy 2 type promotion); `sigmoid` (`expit`), `rsqrt`, `erf` and `erfc` as in SciPy/CuPy.",
     sorted(ELEMENTWISE + ["fabs", "round", "around", "divmod", "modf", "frexp", "fix", "sinc", "i0", "real", "imag", "conj",
                           "conjugate", "angle", "real_if_close"])),
    ("Ufuncs", "Every elementwise function above (and `divmod`, `modf`, `frexp`, `matmul`, `vecdot`...) is a `sl.ufunc`: "
     "NumPy's `out=`, `where=`, `dtype=`, `signature=`, `casting=` and its methods `reduce`, `accumulate`, `outer`, "
     "`reduceat`, `at`. `sl.vectorize` makes a Python function of elements one fused kernel where what it builds is "
     "elementwise.", ["ufunc", "vectorize"]),
    ("Files", "NumPy's formats, read and written on the host; what is read comes back as stitchlab arrays.",
     ["load", "save", "savez", "savez_compressed", "loadtxt", "savetxt", "genfromtxt", "fromfile", "frombuffer", "fromiter",
      "NpzFile"]),
    ("Index tricks", "NumPy's: `mgrid`/`ogrid` build lazy grids (fused into their use), `r_`/`c_` join arrays, "
     "slices and scalars with `concatenate`; `s_`, `index_exp` and `ndindex` are NumPy's own.",
     ["mgrid", "ogrid", "r_", "c_", "s_", "index_exp", "ndindex", "ndenumerate", "ix_", "tril_indices", "tril_indices_from",
      "triu_indices", "triu_indices_from", "diag_indices", "diag_indices_from", "mask_indices"]),
    ("Dtypes and shapes", "Answered from dtypes and shapes alone: nothing is evaluated.",
     ["result_type", "can_cast", "promote_types", "min_scalar_type", "common_type", "isdtype", "issubdtype", "iinfo", "finfo",
      "isscalar", "isreal", "iscomplex", "isrealobj", "iscomplexobj", "isfortran", "iterable", "ndim", "shape", "size",
      "broadcast_shapes"]),
    ("Constants, printing and modules", "NumPy's constants and print options (a stitchlab array prints through NumPy), "
     "NumPy's floating-point error state (stitchlab's kernels, as CuPy's, report no floating-point errors); "
     "`get_array_module` picks `stitchlab` or `numpy` for code written against `xp`, as CuPy's does.",
     ["e", "euler_gamma", "inf", "nan", "newaxis", "pi", "array_repr", "array_str", "array2string", "printoptions",
      "set_printoptions", "get_printoptions", "binary_repr", "base_repr", "errstate", "seterr", "geterr",
      "get_array_module", "asnumpy"]),
    ("Backends and counters", "", ["get_backend", "set_backend", "stats", "reset_stats", "ConstantsWarning"]),
]

names = set(sl.__all__)
listed = [n for _, _, ns in SECTIONS for n in ns]
other = sorted(names - set(listed))
if other:
    SECTIONS.append(("Other", "", other))
out = ["# API reference", "",
       "Every public name of the `stitchlab` namespace (`import stitchlab as sl`), from the docstrings.",
       "`tests/docs/test_api_list.py` checks this page against `sl.__all__`; `tests/docs/write_api_page.py` writes it.", ""]
for title, intro, ns in SECTIONS:
    ns = [n for n in ns if n in names]
    if not ns:
        continue
    out += [f"## {title}", ""]
    if intro:
        out += [intro, ""]
    for n in ns:
        target = f"stitchlab.{n}"
        if importlib.util.find_spec(target) is not None and not isinstance(getattr(sl, n), types.ModuleType):
            target = f"{getattr(sl, n).__module__}.{n}"  # a submodule of the same name would be documented instead
        out.append(f"::: {target}")
        if n == "ndarray":
            out += ["    options:", "      members: false"]
        out.append("")
_linalg = importlib.import_module("stitchlab.frontend.linalg")
out += ["## `sl.linalg`", "", "`sl.linalg.LinAlgError` is NumPy's `numpy.linalg.LinAlgError`.", ""]
out += [f"::: stitchlab.frontend.linalg.{n}\n" for n in _linalg.__all__ if getattr(_linalg, n).__module__.startswith("stitchlab")]
out += ["## `sl.random`", "", "::: stitchlab.frontend.random", "    options:", "      members: false", ""]
out += [f"::: stitchlab.frontend.random.{n}\n" for n in importlib.import_module("stitchlab.frontend.random").__all__]
out += [
    "## Notebook views",
    "",
    "`stitchlab.notebook` (ipywidgets and tqdm load only when a widget or a progress bar is made).",
    "",
]
for n in ["show", "array_html", "plan_html", "widgets.PlanExplorer", "widgets.RegistryBrowser", "progress.progress", "plan_view", "graph_view", "PlanView"]:
    out += [f"::: stitchlab.notebook.{n}", ""]
out += ["### Plan overrides (for the compiler)", "", "::: stitchlab.notebook.hooks", "    options:", "      show_root_heading: false", ""]
out += ["## Logging", "", "::: stitchlab._log", "    options:", "      show_root_heading: false",
        "      members: [set_level, configure_from_env, log_compile, log_recompile, log_source]", ""]
target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2] / "docs" / "api.md"
target.write_text("\n".join(out), encoding="utf-8")
