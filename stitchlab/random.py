"""``sl.random``: random numbers as lazy arrays, drawn inside the kernels that use them (see
:mod:`stitchlab.frontend.random`)."""

from .frontend.random import *  # noqa: F401,F403
from .frontend.random import (  # noqa: F401
    BINOMIAL_ROUNDS,
    GAMMA_ROUNDS,
    HYPERGEOMETRIC_ROUNDS,
    POISSON_ROUNDS,
    TABLE_LIMIT,
    VONMISES_ROUNDS,
    __all__,
)
