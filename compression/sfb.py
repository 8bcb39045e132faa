"""Sufficient Factor Broadcasting (SFB) for ``nn.Linear`` layers.

For ``Y = X·Wᵀ + b`` with ``X`` of shape ``(..., m)`` flattened to ``T × m`` rows and the output
gradient ``δ = ∂L/∂Y`` flattened to ``T × k``, the weight gradient is exactly ``δᵀ·X`` (``k × m``)
and the bias gradient ``Σ_rows δ``. Replicas that all-gather ``X`` and ``δ`` (any number of rows
per rank) can each rebuild the full-batch gradient locally: no approximation, only float
rounding in a different order than an all-reduce.

This module holds the local half: capturing the factors with hooks and rebuilding the gradient
from gathered factors. The communication lives in ``stitchlab.horovod``.

Example:
    >>> import torch
    >>> layer = torch.nn.Linear(3, 2)
    >>> cap = LinearFactors(layer)
    >>> layer(torch.randn(4, 5, 3)).sum().backward()
    >>> x, dy = cap.take()
    >>> gw, gb = linear_grads(x, dy, bias=True)
    >>> torch.allclose(gw, layer.weight.grad)
    True
"""

from __future__ import annotations

import torch
from torch import nn

from .hooks import layer_input


def linear_grads(
    x: torch.Tensor, dy: torch.Tensor, bias: bool
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Rebuild a linear layer's weight and bias gradient from its factors.

    Args:
        x: layer inputs, ``T × in_features`` (rows of all ranks and passes).
        dy: output gradients, ``T × out_features``, already weighted per rank.
        bias: whether to return the bias gradient.

    Returns:
        ``(grad_weight (out × in), grad_bias (out,) or None)``.
    """
    if x.dim() != 2 or dy.dim() != 2 or x.shape[0] != dy.shape[0]:
        raise ValueError(
            f"SFB factors must be T × in and T × out with the same T; got x {tuple(x.shape)} "
            f"and dy {tuple(dy.shape)}"
        )
    grad_w = dy.t().mm(x)
    grad_b = dy.sum(dim=0) if bias else None
    return grad_w, grad_b


class LinearFactors:
    """Captures the factors of an ``nn.Linear``: its input in a forward hook, its output
    gradient in a hook on the output tensor.

    Every forward call whose output gets a gradient adds one (input, output-gradient) pair, so a
    layer used several times per step (weight sharing) or over several accumulated backward
    passes is covered: :meth:`take` returns all pairs stacked. A forward whose output never gets a
    gradient (evaluation without ``no_grad``) adds nothing, as it adds nothing to autograd's
    gradient either.
    """

    def __init__(self, layer: nn.Linear) -> None:
        if not isinstance(layer, nn.Linear):
            raise TypeError(f"SFB needs an nn.Linear layer, got {type(layer).__name__}")
        self.layer = layer
        self._pairs: list[tuple[torch.Tensor, torch.Tensor]] = []
        self._handle = layer.register_forward_hook(self._forward_hook, with_kwargs=True)

    def _forward_hook(
        self, module: nn.Module, args: tuple, kwargs: dict, output: torch.Tensor
    ) -> None:
        if not (torch.is_grad_enabled() and output.requires_grad):
            return  # no gradient will come
        x = layer_input(args, kwargs).detach().reshape(-1, self.layer.in_features)

        def grad_hook(grad: torch.Tensor) -> None:
            self._pairs.append((x, grad.detach().reshape(-1, self.layer.out_features)))

        output.register_hook(grad_hook)

    @property
    def rows(self) -> int:
        """Rows (tokens) captured so far."""
        return sum(int(x.shape[0]) for x, _ in self._pairs)

    def take(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Return ``(X, δ)`` stacked over the captured calls and forget them."""
        w = self.layer.weight
        if self._pairs:
            x = torch.cat([x for x, _ in self._pairs]).to(w.dtype)
            dy = torch.cat([g for _, g in self._pairs]).to(w.dtype)
        else:
            x = w.new_zeros((0, self.layer.in_features))
            dy = w.new_zeros((0, self.layer.out_features))
        self.clear()
        return x, dy

    def clear(self) -> None:
        self._pairs.clear()

    def remove(self) -> None:
        """Detach the hook from the layer."""
        self._handle.remove()
        self.clear()
