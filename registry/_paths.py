"""Where the registry lives: ``$STITCHLAB_CACHE_DIR``, else the user cache directory."""

from __future__ import annotations

import os
import sys
from pathlib import Path

#: Environment variable naming the registry directory (or ":memory:" for memory-only).
ENV_CACHE_DIR = "STITCHLAB_CACHE_DIR"
#: Environment variable; "memory" selects the memory-only registry.
ENV_REGISTRY = "STITCHLAB_REGISTRY"
#: Environment variable with the size cap, e.g. "512MiB" (default 1 GiB).
ENV_MAX_SIZE = "STITCHLAB_CACHE_MAX_SIZE"
#: The value of ``STITCHLAB_CACHE_DIR`` that selects the memory-only registry.
MEMORY = ":memory:"


def user_cache_dir() -> Path:
    """Return the per-user cache directory for stitchlab.

    Linux and other Unix: ``$XDG_CACHE_HOME/stitchlab``, else ``~/.cache/stitchlab``;
    macOS: ``~/Library/Caches/stitchlab``; Windows: ``%LOCALAPPDATA%\\stitchlab``.
    """
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
        return Path(base) / "stitchlab"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "stitchlab"
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    # The XDG spec says relative paths are invalid and must be ignored.
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "stitchlab"


def env_wants_memory() -> bool:
    """Return True if the environment asks for the memory-only registry."""
    return (
        os.environ.get(ENV_CACHE_DIR, "").strip() == MEMORY
        or os.environ.get(ENV_REGISTRY, "").strip().lower() == "memory"
    )


def default_path() -> Path:
    """Return the registry directory the environment selects (not created here).

    Raises:
        ValueError: if ``$STITCHLAB_CACHE_DIR`` starts with a ``~`` that cannot be expanded, or
            no home directory can be found; the message names the variable and the fix.
    """
    configured = os.environ.get(ENV_CACHE_DIR, "").strip()
    if configured and configured != MEMORY:
        try:
            return Path(configured).expanduser()
        except RuntimeError as error:  # "~nosuchuser/...", or no home directory at all
            raise ValueError(
                f"${ENV_CACHE_DIR}={configured!r}: cannot expand '~' ({error}); give an absolute "
                f"directory, or {MEMORY} for memory-only"
            ) from None
    try:
        return user_cache_dir()
    except (RuntimeError, KeyError) as error:  # no $HOME and no password-database entry
        raise ValueError(
            f"cannot find a home directory for the kernel registry ({error}); set "
            f"${ENV_CACHE_DIR} to a directory, or to {MEMORY} for memory-only"
        ) from None


def make_private_dir(path: Path) -> None:
    """Create ``path`` (and missing parents) with owner-only permissions (0o700).

    An existing directory is left as it is: a team may share one on purpose.

    Raises:
        OSError: if the directory cannot be created (e.g. a file is in the way).
    """
    if path.is_dir():
        return
    missing = []
    probe = path
    while not probe.exists() and probe != probe.parent:
        missing.append(probe)
        probe = probe.parent
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    for created in missing:
        try:
            os.chmod(created, 0o700)  # mkdir's mode is filtered by the umask; be explicit
        except OSError:
            pass
