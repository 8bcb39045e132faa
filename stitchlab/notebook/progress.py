"""Progress bars for batches of kernel compiles or autotuning runs (``tqdm.auto``).

The compiler wraps a batch like this::

    from stitchlab.notebook.progress import progress

    with progress(len(groups), "compiling kernels") as bar:
        for group in groups:
            compile_group(group)
            bar.update()

In a notebook ``tqdm.auto`` draws a widget bar, in a terminal a text bar on stderr. tqdm is
imported only when a bar is made, and a batch that ends within ``delay`` seconds (0.5 by
default) shows nothing at all, so small batches stay quiet. Without tqdm, or with
``STITCHLAB_PROGRESS=0``, the bar is a silent stand-in with the same methods.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

#: Set to "0" to turn progress bars off.
ENV_PROGRESS = "STITCHLAB_PROGRESS"


class SilentBar:
    """The stand-in used when bars are off: counts, shows nothing."""

    def __init__(self, total: int | None = None, desc: str = "") -> None:
        self.total = total
        self.desc = desc
        self.n = 0
        self.postfix = ""
        self.leave = True

    def update(self, n: int = 1) -> None:
        self.n += n

    def set_postfix_str(self, text: str = "", refresh: bool = True) -> None:
        self.postfix = text

    def set_description(self, desc: str = "", refresh: bool = True) -> None:
        self.desc = desc

    def close(self) -> None:
        pass


def enabled() -> bool:
    """False if ``$STITCHLAB_PROGRESS`` is "0", "off" or "false"."""
    return os.environ.get(ENV_PROGRESS, "1").strip().lower() not in ("0", "off", "false", "no")


@contextmanager
def progress(total: int | None, desc: str, *, unit: str = "kernel", delay: float = 0.5,
             **tqdm_kwargs: Any) -> Iterator[Any]:
    """A progress bar over ``total`` steps; call ``bar.update()`` after each step.

    Args:
        total: number of steps (None if unknown).
        desc: what is being done, e.g. ``"compiling kernels"``.
        unit: the step's name in the bar.
        delay: show the bar only once the batch has run this many seconds.
        tqdm_kwargs: passed to ``tqdm.auto.tqdm``.

    Yields:
        The bar: ``update(n=1)``, ``set_postfix_str(text)``, ``set_description(desc)``.
    """
    bar: Any = None
    if enabled():
        try:
            from tqdm.auto import tqdm
        except ImportError:
            bar = None
        else:
            bar = tqdm(total=total, desc=desc, unit=unit, delay=delay, **tqdm_kwargs)
    if bar is None:
        bar = SilentBar(total, desc)
    start = time.monotonic()
    try:
        yield bar
    finally:
        if time.monotonic() - start < delay:
            bar.leave = False  # tqdm's notebook bar would otherwise draw a finished bar at close
        bar.close()
