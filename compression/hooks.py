"""What the forward hooks that read a layer's input share: :mod:`.sfb`'s and :mod:`.sparse`'s capture
hooks and the Horovod profiler's (``stitchlab.horovod``). Needs torch."""

from __future__ import annotations

import torch


def layer_input(args: tuple, kwargs: dict) -> torch.Tensor:
    """The input of an ``nn.Linear`` or ``nn.Embedding`` call, given by position or as ``input=``."""
    return args[0] if args else kwargs["input"]
