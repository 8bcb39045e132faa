"""``sl.linalg``: NumPy's ``linalg`` names that stitchlab provides: ``norm`` lazily (it fuses with
the work around it), ``matrix_power`` as lazy matrix products, and the solvers and
decompositions (``solve``, ``inv``, ``det``, ``slogdet``, ``cholesky``, ``qr``, ``svd``,
``svdvals``, ``eigh``, ``eigvalsh``, ``pinv``, ``lstsq``, ``matrix_rank``) evaluated when called
and run by the array library (products are ``sl.matmul``, ``sl.tensordot``, ``sl.einsum``)."""

from .frontend.linalg import (  # noqa: F401
    EighResult,
    QRResult,
    SlogdetResult,
    SVDResult,
    __all__,
    cholesky,
    det,
    eigh,
    eigvalsh,
    inv,
    lstsq,
    matrix_power,
    matrix_rank,
    norm,
    pinv,
    qr,
    slogdet,
    solve,
    svd,
    svdvals,
)
