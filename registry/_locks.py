"""Cross-process locks on files in ``<registry>/locks/`` (POSIX ``flock``).

A lock is released by the kernel when its holder exits, so a crashed process never leaves
a stale lock behind. Build locks are striped over 256 files by key prefix: two different
kernels share a lock file with probability 1/256, which only costs a wait. Where ``fcntl``
does not exist (Windows) the locks are thread-only and the registry falls back to
"first stored wins".
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

HAVE_FILE_LOCKS = fcntl is not None
LOCK_DIR = "locks"


class FileLock:
    """An exclusive lock on one file, taken with polling so it can time out.

    Args:
        path: the lock file; created (mode 0o600) if missing.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def acquire(self, timeout: float) -> bool:
        """Take the lock; return False if it is still held elsewhere after ``timeout`` s.

        Raises:
            OSError: if the lock file cannot be opened (unwritable directory).
        """
        if fcntl is None:  # pragma: no cover - Windows
            return False
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        deadline = time.monotonic() + timeout
        pause = 0.001
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    return False
                time.sleep(pause)
                pause = min(pause * 2, 0.05)
                continue
            except OSError:
                os.close(fd)
                raise
            self._fd = fd
            return True

    def release(self) -> None:
        """Release the lock (closing the descriptor drops the flock)."""
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)


class KeyLocks:
    """Per-key build locks: a thread lock, then a file lock shared with other processes.

    Args:
        directory: the registry directory, or None for thread-only locks (memory mode).
        buckets: number of lock files the keys are striped over.
    """

    def __init__(self, directory: Path | None, buckets: int = 256) -> None:
        self._dir = directory / LOCK_DIR if directory is not None else None
        self._buckets = buckets
        self._guard = threading.Lock()
        self._thread_locks: dict[int, threading.Lock] = {}

    def _bucket(self, key: str) -> int:
        # crc32, not hash(): the bucket must be the same in every process.
        return zlib.crc32(key.encode("utf-8")) % self._buckets

    @contextlib.contextmanager
    def hold(self, key: str, timeout: float) -> Iterator[bool]:
        """Hold the build lock for ``key``.

        Yields:
            True if the cross-process lock is held; False if it timed out or file locks
            are unavailable (the caller must then tolerate a concurrent build).
        """
        bucket = self._bucket(key)
        with self._guard:
            thread_lock = self._thread_locks.setdefault(bucket, threading.Lock())
        got_thread = thread_lock.acquire(timeout=timeout)
        file_lock: FileLock | None = None
        try:
            held = False
            if got_thread and self._dir is not None and HAVE_FILE_LOCKS:
                try:
                    self._dir.mkdir(mode=0o700, exist_ok=True)
                    file_lock = FileLock(self._dir / f"{bucket:02x}.lock")
                    held = file_lock.acquire(timeout)
                    if not held:
                        file_lock = None
                except OSError:
                    file_lock = None
            elif got_thread and self._dir is None:
                held = True  # memory mode: the thread lock is all there is to hold
            yield held
        finally:
            if file_lock is not None:
                file_lock.release()
            if got_thread:
                thread_lock.release()


@contextlib.contextmanager
def creation_lock(directory: Path, timeout: float = 60.0) -> Iterator[None]:
    """Serialize the creation/opening of the diskcache database in ``directory``.

    Concurrent first opens of one diskcache directory can fail with "database is locked"
    (the journal-mode and schema statements are not all covered by SQLite's busy timeout).
    If the lock cannot be taken the caller still proceeds and relies on its retries.
    """
    lock = None
    if HAVE_FILE_LOCKS:
        try:
            (directory / LOCK_DIR).mkdir(mode=0o700, exist_ok=True)
            lock = FileLock(directory / LOCK_DIR / "create.lock")
            if not lock.acquire(timeout):
                lock = None
        except OSError:
            lock = None
    try:
        yield
    finally:
        if lock is not None:
            lock.release()
