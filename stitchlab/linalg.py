"""``sl.linalg``: NumPy's ``linalg`` names that stitchlab provides lazily (``norm``; products are
``sl.matmul``, ``sl.tensordot``, ``sl.einsum``)."""

from .frontend.linalg import __all__, norm  # noqa: F401
