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

from .hooks import layer_input


def encode_rows(grad: torch.Tensor, rows: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """The (index, value) encoding of ``grad`` restricted to ``rows``.

    Args:
        grad: dense ``V × d`` gradient, or a sparse COO gradient (its own rows are used and
            ``rows`` is ignored).
        rows: integer row indices that may be non-zero, in any order; a row given more than
            once is sent once. ``None``: the rows of a dense ``grad`` holding a non-zero (or
            NaN) value, found in one pass over ``grad`` (rows a step looked up whose gradient
            is zero are left out; they add nothing).

    Returns:
        ``(indices, values)``: distinct ``int64`` rows in ascending order, and those rows of
        ``grad`` (``len(indices) × d``).

    Raises:
        TypeError: ``rows`` of a float or bool dtype (give the positions as integers).
        ValueError: ``grad`` that is not a ``V × d`` matrix.
    """
    if rows is not None and (rows.dtype.is_floating_point or rows.dtype.is_complex or rows.dtype == torch.bool):
        raise TypeError(f"encode_rows: rows must be integer row indices, got dtype {rows.dtype}; give the "
                        f"positions (a mask's: mask.nonzero().flatten())")
    if grad.dim() != 2:
        raise ValueError(f"encode_rows: grad must be a V × d matrix, got shape {tuple(grad.shape)}")
    if grad.is_sparse:
        g = grad.coalesce()
        if g.sparse_dim() == 1:  # nn.Embedding(sparse=True): one index per stored row
            return g.indices()[0].to(torch.int64), g.values()
        rows = g.indices()[0]  # both dimensions sparse: gather the touched rows whole
        rows = torch.unique(rows).to(torch.int64)
        return rows, g.index_select(0, rows).to_dense()
    if rows is None:
        rows = grad.ne(0).any(dim=1).nonzero().flatten()  # (ascending, distinct)
    else:
        rows = torch.unique(rows.reshape(-1).to(device=grad.device, dtype=torch.int64))
    return rows, grad.index_select(0, rows)


def decode_rows(
    indices: Sequence[torch.Tensor], values: Sequence[torch.Tensor], num_rows: int
) -> torch.Tensor:
    """Sum gathered (index, value) pieces into a dense ``num_rows × d`` gradient.

    Floating values accumulate in float64 (complex in complex128) and round once to the values'
    dtype; integer values accumulate in int64, which wraps to the values' dtype as their own sum
    would. A row that no piece holds is ``+0``; the sign of a zero sum is not kept (``-0.0``
    pieces give ``+0.0``), and a NaN stays NaN without its payload.

    Raises:
        ValueError: no pieces, pieces that do not pair up, values that are not ``n × d`` with
            one ``d``, or an index outside ``[0, num_rows)``.
        TypeError: bool values.
    """
    if not values:
        raise ValueError("decode_rows got no pieces")
    if len(indices) != len(values):
        raise ValueError(
            f"decode_rows got {len(indices)} index pieces but {len(values)} value pieces"
        )
    out_dtype = values[0].dtype
    if out_dtype == torch.bool:
        raise TypeError("decode_rows: bool values have no sum; give numbers (values.to(torch.int8))")
    dim = values[0].shape[1] if values[0].dim() == 2 else None
    for idx, val in zip(indices, values, strict=True):
        if val.dim() != 2 or val.shape[1] != dim or idx.shape != val.shape[:1]:
            raise ValueError(
                f"decode_rows: each piece must be n indices and n × d values with one d; got "
                f"indices {tuple(idx.shape)} and values {tuple(val.shape)}"
                + (f" (d = {dim} from the first piece)" if dim is not None else "")
            )
    if out_dtype.is_complex:
        acc_dtype = torch.complex128
    elif out_dtype.is_floating_point:
        acc_dtype = torch.float64
    else:
        acc_dtype = torch.int64
    acc = torch.zeros((num_rows, dim), dtype=acc_dtype, device=values[0].device)
    for idx, val in zip(indices, values, strict=True):
        if idx.numel() and (int(idx.min()) < 0 or int(idx.max()) >= num_rows):
            raise ValueError(
                f"row index out of range [0, {num_rows}): min {int(idx.min())}, max {int(idx.max())}"
            )
        acc.index_add_(0, idx.to(torch.int64), val.to(acc_dtype))
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
        self._handle = layer.register_forward_hook(self._forward_hook, with_kwargs=True)

    def _forward_hook(
        self, module: nn.Module, args: tuple, kwargs: dict, output: torch.Tensor
    ) -> None:
        if torch.is_grad_enabled() and output.requires_grad:
            self._rows.append(torch.unique(layer_input(args, kwargs).detach().reshape(-1)))

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
