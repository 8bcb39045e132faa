"""stitchlab: lazy NumPy/CuPy-style arrays stitched into fused CUDA kernels.

Example:
    >>> import numpy as np, stitchlab as sl
    >>> x = sl.asarray(np.random.rand(4, 8).astype(np.float32))
    >>> y = sl.exp(x - x.max(axis=-1, keepdims=True))
    >>> z = y / y.sum(axis=-1, keepdims=True)
    >>> np.allclose(z.get().sum(axis=-1), 1)
    True
"""

from __future__ import annotations

__version__ = "0.1.0"

from .frontend.api import *  # noqa: F401,F403  (elementwise functions generated from the op table)
from .frontend.api import (
    ELEMENTWISE as _ELEMENTWISE,
    all,
    allclose,
    amax,
    amin,
    around,
    any,
    argmax,
    argmin,
    astype,
    atleast_1d,
    atleast_2d,
    broadcast_arrays,
    clip,
    concatenate,
    compute,
    count_nonzero,
    expand_dims,
    fabs,
    isclose,
    logsumexp,
    matmul,
    max,
    mean,
    min,
    moveaxis,
    nan_to_num,
    nanmax,
    nanmean,
    nanmin,
    nanstd,
    nansum,
    nanvar,
    prod,
    ptp,
    ravel,
    reshape,
    round,
    squeeze,
    stack,
    std,
    sum,
    swapaxes,
    transpose,
    var,
    where,
)
from .frontend.array import LazyArray
from .frontend import (assign as _assign, index_tricks as _index_tricks, io as _io, library as _library,
                       manipulation as _manipulation, selection as _selection)
from .frontend.assign import *  # noqa: F401,F403  (copyto, put, place...: assignment)
from .frontend.index_tricks import *  # noqa: F401,F403  (mgrid, ogrid, r_, c_, s_...)
from .frontend.io import *  # noqa: F401,F403  (load, save, savez, loadtxt...: files)
from .frontend.library import *  # noqa: F401,F403  (take, cumsum, sort, dot...: library steps)
from .frontend.manipulation import *  # noqa: F401,F403  (flip, tril, eye, split, tile, pad...)
from .frontend.selection import *  # noqa: F401,F403  (nonzero, unique...: shapes from values)
from .frontend.creation import (
    arange,
    array,
    asanyarray,
    asarray,
    ascontiguousarray,
    broadcast_to,
    empty,
    empty_like,
    from_dlpack,
    full,
    full_like,
    linspace,
    ones,
    ones_like,
    zeros,
    zeros_like,
)
from .frontend.build import fast_math
from .frontend.jit import jit
from .frontend.ufunc import ufunc
from .frontend.vectorize import vectorize
from . import _log  # noqa: F401,E402  (STITCHLAB_LOG takes effect at import)
from .explain import Plan, explain
from .ir.dtypes import SUPPORTED as _SUPPORTED
from .runtime import get_backend, set_backend
from .runtime.backend import ConstantsWarning
from .runtime.stats import reset_stats, stats

ndarray = LazyArray

#: The public names (the docs' API list is checked against this by a test).
__all__ = sorted(
    set(_ELEMENTWISE)
    | {
        "LazyArray", "ndarray", "jit", "compute", "explain", "Plan", "get_backend", "set_backend", "stats", "reset_stats",
        "asarray", "array", "zeros", "ones", "full", "empty", "zeros_like", "ones_like",
        "full_like", "empty_like", "arange", "linspace", "broadcast_to",
        "where", "clip", "astype", "sum", "prod", "mean", "max", "min", "amax", "amin", "var",
        "std", "any", "all", "argmax", "argmin", "logsumexp", "reshape", "transpose", "ravel",
        "expand_dims", "squeeze", "matmul", "round", "around", "concatenate", "stack",
        "isclose", "allclose", "nan_to_num", "nansum", "nanmax", "nanmin", "nanmean", "nanvar",
        "nanstd", "count_nonzero", "ptp", "fabs", "swapaxes", "moveaxis", "atleast_1d",
        "atleast_2d", "broadcast_arrays", "divmod", "float_power", "fix", "modf", "frexp", "sinc", "real", "imag",
        "conj", "conjugate", "angle", "result_type", "can_cast", "iinfo", "finfo", "asnumpy",
        "softmax", "log_softmax", "logit", "xlogy", "nanprod", "isposinf", "isneginf", "copy", "select",
        "concat", "permute_dims", "matrix_transpose", "vecdot", "matvec", "vecmat", "nanargmax", "nanargmin",
        "asanyarray", "ascontiguousarray", "from_dlpack", "i0", "piecewise", "isreal", "iscomplex", "isrealobj",
        "iscomplexobj", "isscalar", "promote_types", "isdtype", "issubdtype", "common_type", "min_scalar_type",
        "ufunc", "vectorize", "fast_math", "ConstantsWarning", "get_array_module", "array_repr", "array_str", "array2string",
        "printoptions", "set_printoptions", "get_printoptions", "binary_repr", "base_repr", "errstate", "seterr", "geterr",
        "e", "euler_gamma", "inf", "nan", "newaxis", "pi",
    }
    | set(_assign.__all__)
    | set(_index_tricks.__all__)
    | set(_io.__all__)
    | set(_library.__all__)
    | set(_manipulation.__all__)
    | set(_selection.__all__)
)

# dtypes by name, as in NumPy (sl.float32 is numpy.float32)
import numpy as _np  # noqa: E402

for _name in _SUPPORTED:
    globals()[_name if _name != "bool" else "bool_"] = getattr(_np, _name if _name != "bool" else "bool_")
# NumPy's other names of those types (sl.intp, sl.double...), its abstract classes for issubdtype
# (sl.floating...) and dtype itself, as CuPy has them
_ALIASES = [n for n in ("bool", "intp", "uintp", "int_", "uint", "long", "ulong", "longlong", "ulonglong", "intc", "uintc",
                        "short", "ushort", "byte", "ubyte", "half", "single", "double")
            if hasattr(_np, n) and _np.dtype(getattr(_np, n)).name in _SUPPORTED]
_ALIASES += ["generic", "number", "integer", "signedinteger", "unsignedinteger", "inexact", "floating", "dtype"]
for _name in _ALIASES:
    globals()[_name] = getattr(_np, _name)
del _name

# NumPy's constants, Python floats as in NumPy and CuPy
e = _np.e
"""Euler's number (``numpy.e``)."""
euler_gamma = _np.euler_gamma
"""The Euler–Mascheroni constant (``numpy.euler_gamma``)."""
inf = _np.inf
"""Positive infinity (``numpy.inf``)."""
nan = _np.nan
"""Not a number (``numpy.nan``)."""
pi = _np.pi
"""π (``numpy.pi``)."""
newaxis = None
"""``None``: ``x[:, sl.newaxis]`` inserts an axis of length 1 (``numpy.newaxis``)."""


_SUBPACKAGES = ("codegen", "compression", "frontend", "horovod", "ir", "linalg", "notebook", "plan", "random", "registry",
                "runtime", "topology")


def __dir__() -> list[str]:
    # tab completion (Jupyter, IPython): the public names, the dtypes and the subpackages, not
    # what the modules above import for themselves (numpy, typing...)
    dtypes = [n if n != "bool" else "bool_" for n in _SUPPORTED] + _ALIASES
    return sorted({*__all__, *dtypes, *_SUBPACKAGES, "bfloat16", "__version__"})


def __getattr__(name: str) -> object:
    # sl.bfloat16 is ml_dtypes.bfloat16 (NumPy's bfloat16 scalar type, as CuPy uses), imported
    # on first use so that ``import stitchlab`` stays light
    if name == "bfloat16":
        from .ir.dtypes import bfloat16

        return bfloat16().type
    if name in _SUBPACKAGES:  # sl.registry, sl.topology...: imported on first use
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'stitchlab' has no attribute {name!r}")
