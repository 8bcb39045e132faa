"""What the capture hooks of :mod:`.sfb` and :mod:`.sparse` share."""

from __future__ import annotations

import torch


def layer_input(args: tuple, kwargs: dict) -> torch.Tensor:
    """The input of an ``nn.Linear`` or ``nn.Embedding`` call, given by position or as ``input=``."""
    return args[0] if args else kwargs["input"]
