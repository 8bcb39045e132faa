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
                             "full_like", "empty_like", "arange", "linspace", "logspace", "tri", "indices"]),
    ("Evaluating, planning, tracing", "", ["compute", "explain", "jit", "fast_math"]),
    ("Reductions", "All take `axis` (int, tuple, negative or None) and `keepdims`, as in NumPy.",
     ["sum", "prod", "mean", "max", "min", "amax", "amin", "var", "std", "any", "all", "argmax", "argmin", "logsumexp",
      "nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar", "nanstd", "count_nonzero", "ptp", "trapezoid", "vecdot"]),
    ("SciPy-style functions", "`scipy.special`'s meaning, composed of the ops above and fused: over rows, `softmax` "
     "and `log_softmax` are one kernel.", ["softmax", "log_softmax", "logit", "xlogy"]),
    ("Layout and selection", "Index maps: lazy, no copy.", ["reshape", "ravel", "transpose", "swapaxes", "moveaxis",
                                                            "expand_dims", "squeeze", "atleast_1d", "atleast_2d", "permute_dims", "matrix_transpose",
                                                            "broadcast_to", "broadcast_arrays", "where", "clip", "astype"]),
    ("Comparing and cleaning values", "", ["isclose", "allclose", "nan_to_num", "isposinf", "isneginf", "select", "copy", "isin"]),
    ("Matrix products and joins", "A plan step of its own (CuPy/cuBLAS or NumPy), never fused; the work around it fuses.",
     ["matmul", "dot", "tensordot", "inner", "vdot", "einsum", "concatenate", "concat", "stack"]),
    ("Gathers, scans, sorts and order statistics",
     "Plan steps of their own run by CuPy or NumPy (`sl.explain`: \"interpreted\"); the work around them fuses.",
     ["take", "take_along_axis", "cumsum", "cumprod", "nancumsum", "nancumprod", "cumulative_sum", "cumulative_prod", "sort", "argsort", "median", "quantile", "percentile",
      "nanmedian", "nanquantile", "nanpercentile", "searchsorted", "digitize"]),
    ("Shapes that depend on the values",
     "Evaluate when called (the positions' count is read back, as in CuPy); the result is a stitchlab array and what follows is lazy. Not in `sl.jit` or under CUDA-graph capture.",
     ["nonzero", "flatnonzero", "argwhere", "extract", "compress", "unique", "bincount", "histogram", "histogram2d", "histogramdd"]),
    ("Array manipulation and construction",
     "Built from lazy views, index compares and broadcasts, fused into the kernel of their use (`roll`, `pad` and a 1-d `diag` join or gather).",
     ["flip", "fliplr", "flipud", "tril", "triu", "eye", "identity", "diagonal", "diag", "trace", "outer", "tile", "repeat",
      "meshgrid", "diff", "roll", "pad", "split", "array_split", "hsplit", "vsplit", "dsplit", "array_equal", "array_equiv",
      "average", "rot90", "append", "ediff1d", "unstack", "diagflat", "gradient", "convolve", "correlate"]),
    ("Elementwise functions", "NumPy's names and semantics (broadcasting, NumPy 2 type promotion); `sigmoid` (`expit`), `rsqrt`, `erf` and `erfc` as in SciPy/CuPy.",
     sorted(ELEMENTWISE + ["fabs", "round", "around"])),
    ("Ufuncs", "Every elementwise function above (and `divmod`, `modf`, `frexp`, `matmul`, `vecdot`...) is a `sl.ufunc`: "
     "NumPy's `out=`, `where=`, `dtype=`, `signature=`, `casting=` and its methods `reduce`, `accumulate`, `outer`, "
     "`reduceat`, `at`. `sl.vectorize` makes a Python function of elements one fused kernel where what it builds is "
     "elementwise.", ["ufunc", "vectorize"]),
    ("Files", "NumPy's formats, read and written on the host; what is read comes back as stitchlab arrays.",
     ["load", "save", "savez", "savez_compressed", "loadtxt", "savetxt", "genfromtxt", "fromfile", "frombuffer", "fromiter",
      "NpzFile"]),
    ("Index tricks", "NumPy's: `mgrid`/`ogrid` build lazy grids (fused into their use), `r_`/`c_` join arrays, "
     "slices and scalars with `concatenate`; `s_`, `index_exp` and `ndindex` are NumPy's own.",
     ["mgrid", "ogrid", "r_", "c_", "s_", "index_exp", "ndindex", "ndenumerate"]),
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
