"""``sl.linalg``: NumPy's ``linalg`` names that stitchlab provides: ``norm``, ``vector_norm`` and
``matrix_norm`` lazily (they fuse with the work around them), ``matrix_power`` and ``multi_dot``
as lazy matrix products, NumPy 2's array-API names (``trace``, ``diagonal``, ``outer``, ``cross``,
``vecdot``, ``matmul``, ``tensordot``, ``matrix_transpose``) lazily, and the solvers and
decompositions (``solve``, ``inv``, ``det``, ``slogdet``, ``cholesky``, ``qr``, ``svd``,
``svdvals``, ``eigh``, ``eigvalsh``, ``pinv``, ``lstsq``, ``matrix_rank``, ``cond``,
``tensorinv``, ``tensorsolve``) evaluated when called and run by the array library. Errors are
NumPy's ``LinAlgError`` (also ``sl.linalg.LinAlgError``)."""

from .frontend.linalg import *  # noqa: F401,F403
from .frontend.linalg import EighResult, QRResult, SlogdetResult, SVDResult, __all__  # noqa: F401
