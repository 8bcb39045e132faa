"""Sparse (index, value) encoding of embedding gradients.

An embedding's gradient is non-zero only in the rows a step looked up. Each rank sends the
distinct rows it touched (``int64`` indices) and those rows of its local gradient; every rank
sums the gathered rows into a dense table. The sum accumulates in float64, in the order of the
pieces (rank order for an all-gather: the same on every rank), and rounds once: for float16
that is the exactly rounded sum of the ranks' gradients (float64 holds their sums exactly); for
float32 and bfloat16, float64's sum rounded, which is the exactly rounded sum except where the
pieces of one element span more than float64's 53 bits (then it can be one unit in the last
place off, and depend on the order of the pieces).

Example:
    >>> import torch
    >>> emb = torch.nn.Embedding(10, 3)
    >>> cap = EmbeddingRows(emb)
    >>> emb(torch.tensor([[1, 4, 4]])).sum().backward()
    >>> rows = cap.take()
    >>> rows.tolist()
    [1, 4]
    >>> idx, val = encode_rows(emb.weight.grad, rows)
    >>> torch.equal(decode_rows([idx], [val], 10), emb.weight.grad)
    True
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn


def encode_rows(grad: torch.Tensor, rows: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The (index, value) encoding of ``grad`` restricted to ``rows``.

    Args:
        grad: dense ``V × d`` gradient, or a sparse COO gradient (its own rows are used and
            ``rows`` is ignored).
        rows: distinct integer row indices that may be non-zero (a row given twice would be sent
            twice, and summed twice by :func:`decode_rows`).

    Raises:
        TypeError: ``rows`` of a float or bool dtype (give the positions as integers).
    """
    if rows.dtype.is_floating_point or rows.dtype.is_complex or rows.dtype == torch.bool:
        raise TypeError(f"encode_rows: rows must be integer row indices, got dtype {rows.dtype}; give the "
                        f"positions (a mask's: mask.nonzero().flatten())")
    if grad.is_sparse:
        g = grad.coalesce()
        return g.indices()[0].to(torch.int64), g.values()
    rows = rows.to(device=grad.device, dtype=torch.int64)
    return rows, grad.index_select(0, rows)


def decode_rows(
    indices: Sequence[torch.Tensor], values: Sequence[torch.Tensor], num_rows: int
) -> torch.Tensor:
    """Sum gathered (index, value) pieces into a dense ``num_rows × d`` gradient.

    Accumulates in float64 and rounds once to the values' dtype.
    """
    if not values:
        raise ValueError("decode_rows got no pieces")
    dim = values[0].shape[1]
    out_dtype = values[0].dtype
    acc = torch.zeros((num_rows, dim), dtype=torch.float64, device=values[0].device)
    if len(indices) != len(values):
        raise ValueError(
            f"decode_rows got {len(indices)} index pieces but {len(values)} value pieces"
        )
    for idx, val in zip(indices, values, strict=True):
        if idx.numel() and (int(idx.min()) < 0 or int(idx.max()) >= num_rows):
            raise ValueError(
                f"row index out of range [0, {num_rows}): min {int(idx.min())}, max {int(idx.max())}"
            )
        acc.index_add_(0, idx, val.to(torch.float64))
    return acc.to(out_dtype)


class EmbeddingRows:
    """Records the distinct rows an ``nn.Embedding`` looks up, in a forward hook."""

    def __init__(self, layer: nn.Embedding) -> None:
        if not isinstance(layer, nn.Embedding):
            raise TypeError(
                f"sparse encoding needs an nn.Embedding layer, got {type(layer).__name__}"
            )
        self.layer = layer
        self._rows: list[torch.Tensor] = []
        self._handle = layer.register_forward_hook(self._forward_hook)

    def _forward_hook(self, module: nn.Module, args: tuple, output: torch.Tensor) -> None:
        if torch.is_grad_enabled() and output.requires_grad:
            self._rows.append(torch.unique(args[0].detach().reshape(-1)))

    def take(self) -> torch.Tensor:
        """Distinct rows looked up since the last call (sorted ``int64``), and forget them."""
        device = self.layer.weight.device
        if not self._rows:
            return torch.zeros(0, dtype=torch.int64, device=device)
        rows = torch.unique(torch.cat(self._rows)).to(torch.int64)
        self._rows.clear()
        return rows

    def remove(self) -> None:
        self._handle.remove()
        self._rows.clear()
