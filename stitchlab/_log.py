"""Log levels: ``STITCHLAB_LOG=info|debug`` makes stitchlab say what it compiles and why.

Everything goes through the standard :mod:`logging` module under the logger ``"stitchlab"``
(subsystems log under children such as ``"stitchlab.registry"``). By default the library adds
no handler and logs nothing a user sees. Setting the environment variable before the first
``import stitchlab._log`` — or calling :func:`set_level` — attaches one stderr handler:

* ``info``: one line per kernel compile with its registry outcome and time, one line per
  recompile with its reason;
* ``debug``: also the generated CUDA source of each compiled kernel, and the registry's and
  planner's own debug lines.

(The module is ``stitchlab._log``, not ``stitchlab.log``: a submodule named ``log`` would
replace the function ``sl.log`` on import.)

The compiler and the registry report through the helpers below, so the wording is the same
everywhere::

    from stitchlab._log import log_compile, log_recompile
    log_compile("softmax_f32_row", key, "miss", 0.412)
    log_recompile("softmax_f32_row", "dtype changed: float32 -> float16")

Examples:
    >>> import logging, stitchlab._log as slog
    >>> slog.set_level("info")            # same as STITCHLAB_LOG=info
    >>> logging.getLogger("stitchlab").level == logging.INFO
    True
    >>> slog.set_level(None)              # back to silent
"""

from __future__ import annotations

import logging
import os
import sys

#: The environment variable read at import time.
ENV_LOG = "STITCHLAB_LOG"

#: The logger every stitchlab module logs under (children: ``stitchlab.registry``, ...).
logger = logging.getLogger("stitchlab")

#: Outcomes :func:`log_compile` accepts.
OUTCOMES = ("hit", "miss", "compiled")

_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
}
_FORMAT = "[stitchlab %(levelname)s] %(message)s"
_handler: logging.Handler | None = None


def _parse(level: str | int | None) -> int | None:
    if level is None or level == "":
        return None
    if isinstance(level, int) and not isinstance(level, bool):
        return level
    name = str(level).strip().lower()
    if name in ("0", "off", "none", "false"):
        return None
    if name in _LEVELS:
        return _LEVELS[name]
    raise ValueError(
        f"{ENV_LOG}={level!r} is not a log level; use one of {', '.join(_LEVELS)} (or unset it)"
    )


def set_level(level: str | int | None) -> None:
    """Show stitchlab's log lines at ``level`` on stderr, or stop showing them (None).

    Args:
        level: ``"info"``, ``"debug"``, ``"warning"``, ``"error"``, a :mod:`logging` level
            number, or None / ``"off"`` to detach stitchlab's handler again.

    Raises:
        ValueError: if ``level`` is not one of those names.
    """
    global _handler
    parsed = _parse(level)
    if parsed is None:
        if _handler is not None:
            logger.removeHandler(_handler)
            _handler = None
        logger.setLevel(logging.NOTSET)
        return
    if _handler is None:
        _handler = logging.StreamHandler(sys.stderr)
        _handler.setFormatter(logging.Formatter(_FORMAT))
        logger.addHandler(_handler)
    logger.setLevel(parsed)


def configure_from_env() -> None:
    """Apply ``$STITCHLAB_LOG`` (called once at import; call again after changing it).

    An unknown value is reported with a warning rather than breaking ``import stitchlab``.
    """
    value = os.environ.get(ENV_LOG, "")
    try:
        set_level(value or None)
    except ValueError as error:
        import warnings

        warnings.warn(str(error), stacklevel=2)


def _short(key: str) -> str:
    return key[:12] + "…" if len(key) > 12 else key


def log_compile(name: str, key: str, outcome: str, seconds: float) -> None:
    """Report one kernel compile request (INFO).

    Args:
        name: the kernel's name (as in ``plan.kernels[i].name``).
        key: its registry key (shown shortened to 12 hex digits).
        outcome: ``"hit"`` (found in the registry, no NVRTC), ``"miss"`` (not found; a compile
            follows) or ``"compiled"`` (NVRTC ran and the result was stored).
        seconds: time spent on this request (lookup, or lookup plus compile).

    Raises:
        ValueError: if ``outcome`` is not one of :data:`OUTCOMES`.

    Example output::

        [stitchlab INFO] compile softmax_f32_row: compiled in 412.3 ms (key 3f2a9c1d0b7e…)
    """
    if outcome not in OUTCOMES:
        raise ValueError(f"log_compile outcome {outcome!r} must be one of {OUTCOMES}")
    logger.info("compile %s: %s in %.1f ms (key %s)", name, outcome, seconds * 1e3, _short(key))


def log_recompile(name: str, reason: str) -> None:
    """Report that ``name`` is compiled again and why (INFO), e.g. ``"dtype changed"``.

    Example output::

        [stitchlab INFO] recompile softmax_f32_row: shape class changed: (8, 512) -> (8, 4096)
    """
    logger.info("recompile %s: %s", name, reason)


def log_source(name: str, source: str) -> None:
    """Show the generated CUDA source of ``name`` (DEBUG only; free when debug is off)."""
    if logger.isEnabledFor(logging.DEBUG):
        logger.debug("source of %s:\n%s", name, source)


configure_from_env()
