"""A helper of the GPU tests: the same work on several threads at once, each on its own stream."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


def on_own_streams(n: int, work: Callable[[int], Any], per_thread_default: bool = False) -> dict[int, Any]:
    """``{t: work(t)}`` for ``t`` in ``range(n)``: each call in a thread of its own, on a
    non-blocking CuPy stream of its own (``per_thread_default``: on CuPy's per-thread default
    stream, one handle that names a stream of each thread's own), all starting together; each
    stream is synchronized before its thread ends. Errors in the threads are raised here."""
    import cupy as cp

    results: dict[int, Any] = {}
    errors: list[BaseException] = []
    start = threading.Barrier(n)

    def run(t: int) -> None:
        try:
            with cp.cuda.Stream.ptds if per_thread_default else cp.cuda.Stream(non_blocking=True) as s:
                start.wait()
                results[t] = work(t)
                s.synchronize()
        except BaseException as exc:  # noqa: BLE001 - raised below, in the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(t,)) for t in range(n)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    return results
