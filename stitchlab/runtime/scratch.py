"""A call's buffers besides its inputs and outputs, kept right on several streams and under CUDA
graph capture.

*Counters.* Split reductions (``row_split``, ``column_split``) count each row's finished blocks in
a counter that the kernel sets back to zero when it ends, so the counters are allocated once, not
per call. Two calls that run at the same time on different streams must not share them: the blocks
of one would count toward the other's rows, a row's last block would be missed, and the count would
never come back to zero. They are therefore kept per stream (calls on one stream run one after the
other). A stream's counters stay allocated while the executable lives; they are a few bytes per row.

*Workspaces.* A split kernel also has a workspace per reduction (``ws`` in a recipe, ``R * G``
partial results): block ``g`` of row ``r`` writes its partial result at ``ws[r * G + g]`` before
it counts itself finished, and only the row's last block reads the row's ``G`` entries, after the
count. So a launch reads only what it wrote itself, never what an earlier launch left there. Each
workspace is a parameter of one kernel only: it has no graph position, so it is never an output,
never passed to another kernel of the call, and nothing reads it after that kernel has ended. It is
free again once its kernel has ended, and on one stream the next call's kernel touches it only
after that (stream order; with programmatic dependent launch a kernel may start before the one
before it has ended, but every generated kernel first waits for that grid to finish,
:mod:`stitchlab.runtime.pdl`). The workspaces are therefore kept per stream, with the counters,
instead of being allocated per call: ``R * G`` accumulators per split reduction and stream (about
4 KiB for the row split of a 4M-element sum, 100 KiB for the column split of a 1M×48 array), while
the executable lives. Two streams running at once would overwrite each other's partial results,
hence a set per stream.

*Graph capture.* While a stream is captured into a CUDA graph, kernels are recorded, not run, and
the graph keeps the address of every buffer they use. A call's temporaries (the results passed
between its kernels, contiguous copies of its inputs) go back to CuPy's pool when it returns, and a
later allocation could then be handed memory that every replay of the graph overwrites. Under
capture a call therefore gets counters and workspaces of its own (a replay may run while eager calls
use the stream's set), and its temporaries, counters and workspaces live as long as any of its
outputs does: the outputs are what a graph's user keeps, to read what the replays compute. Steps
that run unfused through CuPy operations (:func:`~stitchlab.runtime.launch._interpret_group`)
allocate as CuPy does, outside this.

*Numbers read at run time.* The Python numbers an ``sl.jit`` call reads when it runs
(:mod:`stitchlab.frontend.scalars`) reach its kernels as 0-d buffers. On each stream and thread
they live in one device block, 8 bytes a number, written by one host-to-device copy per call
(:class:`Numbers`): on one stream the copy runs after the kernels of the call before (which read
the old numbers) and before this call's, so one block serves every call, and the 0-d views into it
are made once. Keyed by thread too: two threads on one stream would otherwise enqueue their
copies before either's kernels. Under capture a call gets buffers of its own, filled by kernels,
that live as long as its outputs.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

#: ``cudaStreamPerThread``: the handle of the per-thread default stream (CuPy's ``Stream.ptds``,
#: and its current stream when ``CUPY_CUDA_PER_THREAD_DEFAULT_STREAM=1``).
PER_THREAD_STREAM = 2


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
    """The counters and workspaces of one executable's split kernels, per stream; and whether a
    call is captured.

    Args:
        counters: per counter buffer, its slot in the executable's environment, length and dtype.
        workspaces: per workspace, the same.
        temporaries: the slots of the buffers a call allocates that are not its outputs.
    """

    __slots__ = ("slots", "temporary_slots", "_counters", "_workspaces", "_zeros", "_empty", "_stream", "_by_stream")

    def __init__(self, cp: Any, counters: Sequence[tuple[int, int, Any]], workspaces: Sequence[tuple[int, int, Any]],
                 temporaries: Sequence[int]) -> None:
        self.slots = [s for s, _, _ in counters] + [s for s, _, _ in workspaces]  # what begin() fills
        self.temporary_slots = list(temporaries)
        self._counters = [(n, dtype) for _, n, dtype in counters]
        self._workspaces = [(n, dtype) for _, n, dtype in workspaces]
        self._zeros = cp.zeros
        self._empty = cp.empty
        self._stream = cp.cuda.get_current_stream
        self._by_stream: dict[Any, list[Any]] = {}

    def _new(self) -> list[Any]:
        """A set of counters (zeroed, on the current stream) and workspaces, in the order of ``slots``."""
        return [self._zeros(n, dtype) for n, dtype in self._counters] + [self._empty(n, dtype) for n, dtype in self._workspaces]

    def begin(self) -> tuple[list[Any], bool]:
        """The buffers for ``slots`` this call uses, and whether its stream is being captured (then
        they are the call's own, the counters zeroed on the captured stream)."""
        stream = self._stream()
        if capturing(stream):
            return self._new(), True
        # keyed by the handle: a handle is reused only after its stream is destroyed, and the
        # counters are zero again, and the workspaces free, once the work queued on a stream has run.
        # The per-thread default stream's one handle names a stream of each thread's own.
        key: Any = stream.ptr
        if key == PER_THREAD_STREAM:
            key = (key, threading.get_ident())
        buffers = self._by_stream.get(key)
        if buffers is None:
            buffers = self._by_stream[key] = self._new()
        return buffers, False


class Numbers:
    """Per stream and thread, the device block holding one call's numbers read at run time, of
    ``dtypes`` (see the module's docstring); calling it with the numbers (converted to their dtypes'
    values) gives their 0-d buffers and whether they are the call's own (under capture)."""

    __slots__ = ("_dtypes", "_nbytes", "_cp", "_scalar", "_stream", "_copy", "_h2d", "_by_key")

    def __init__(self, cp: Any, dtypes: Sequence[Any], scalar: Any) -> None:
        self._dtypes = [np.dtype(d) for d in dtypes]
        self._scalar = scalar  # (value, dtype) -> a 0-d buffer filled by a kernel
        self._nbytes = 8 * len(self._dtypes)
        self._cp = cp
        self._stream = cp.cuda.get_current_stream
        self._copy = cp.cuda.runtime.memcpyAsync
        self._h2d = cp.cuda.runtime.memcpyHostToDevice
        self._by_key: dict[Any, tuple[int, int, list[np.ndarray], tuple[Any, ...]]] = {}

    def _new(self) -> tuple[int, int, list[np.ndarray], tuple[Any, ...]]:
        """(host staging address, device address, host 0-d views, device 0-d views)."""
        host = np.zeros(self._nbytes, np.uint8)
        device = self._cp.empty(self._nbytes, np.uint8)
        slots = [(8 * i, 8 * i + dt.itemsize, dt) for i, dt in enumerate(self._dtypes)]
        return (host.ctypes.data, device.data.ptr, [host[a:b].view(dt).reshape(()) for a, b, dt in slots],
                tuple(device[a:b].view(dt).reshape(()) for a, b, dt in slots))

    def __call__(self, values: Sequence[Any]) -> tuple[tuple[Any, ...], bool]:
        stream = self._stream()
        if capturing(stream):  # filled by kernels, which the graph replays
            return tuple(self._scalar(v, dt) for v, dt in zip(values, self._dtypes, strict=True)), True
        key = (stream.ptr, threading.get_ident())
        block = self._by_key.get(key)
        if block is None:
            block = self._by_key[key] = self._new()
        host, address, views, buffers = block  # (the views hold the host array: its address stays valid)
        for view, v in zip(views, values, strict=True):
            view[()] = v
        self._copy(address, host, self._nbytes, self._h2d, stream.ptr)
        return buffers, False
