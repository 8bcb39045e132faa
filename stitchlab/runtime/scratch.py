"""A call's buffers besides its inputs and outputs, kept right on several streams and under CUDA
graph capture.

*Counters.* Split reductions (``row_split``, ``column_split``) count each row's finished blocks in
a counter that the kernel sets back to zero when it ends, so the counters are allocated once, not
per call. Two calls that run at the same time on different streams must not share them: the blocks
of one would count toward the other's rows, a row's last block would be missed, and the count would
never come back to zero. They are therefore kept per stream (calls on one stream run one after the
other). A stream's counters stay allocated while the executable lives; they are a few bytes per row.

*Graph capture.* While a stream is captured into a CUDA graph, kernels are recorded, not run, and
the graph keeps the address of every buffer they use. A call's temporaries (the results passed
between its kernels, split reductions' partial results, contiguous copies of its inputs) go back to
CuPy's pool when it returns, and a later allocation could then be handed memory that every replay
of the graph overwrites. Under capture a call therefore gets counters of its own, and its
temporaries and counters live as long as any of its outputs does: the outputs are what a graph's
user keeps, to read what the replays compute. Steps that run unfused through CuPy operations
(:func:`~stitchlab.runtime.launch._interpret_group`) allocate as CuPy does, outside this.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any


def capturing(stream: Any) -> bool:
    """Whether ``stream`` is being captured into a CUDA graph."""
    try:
        return bool(stream.is_capturing())
    except Exception:  # noqa: BLE001 - the legacy stream while another captures: its launch reports that
        return False


def _keep(_: Any) -> None:
    """The finalizer's callback: nothing to do; holding its argument until then is its purpose."""


def keep_alive(outputs: Sequence[Any], temporaries: list[Any]) -> None:
    """Keep ``temporaries`` alive until every one of ``outputs`` has been collected."""
    if temporaries:
        for o in outputs:
            weakref.finalize(o, _keep, temporaries)


class Scratch:
    """The counters of one executable's split kernels, per stream; and whether a call is captured.

    Args:
        counters: per counter buffer, its slot in the executable's environment, length and dtype.
        temporaries: the slots of the buffers a call allocates that are not its outputs.
    """

    __slots__ = ("counter_slots", "temporary_slots", "_specs", "_zeros", "_stream", "_by_stream")

    def __init__(self, cp: Any, counters: Sequence[tuple[int, int, Any]], temporaries: Sequence[int]) -> None:
        self.counter_slots = [s for s, _, _ in counters]
        self.temporary_slots = list(temporaries)
        self._specs = [(n, dtype) for _, n, dtype in counters]
        self._zeros = cp.zeros
        self._stream = cp.cuda.get_current_stream
        self._by_stream: dict[int, list[Any]] = {}

    def begin(self) -> tuple[list[Any], bool]:
        """The counters this call uses, and whether its stream is being captured (then the counters
        are the call's own, zeroed on the captured stream)."""
        stream = self._stream()
        if capturing(stream):
            return [self._zeros(n, dtype) for n, dtype in self._specs], True
        # keyed by the handle: a handle is reused only after its stream is destroyed, and counters
        # are zero again once the work queued on a stream has run
        counters = self._by_stream.get(stream.ptr)
        if counters is None:
            counters = self._by_stream[stream.ptr] = [self._zeros(n, dtype) for n, dtype in self._specs]
        return counters, False
