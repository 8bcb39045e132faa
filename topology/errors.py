"""Errors raised by :mod:`stitchlab.topology`.

Every error names the offending value and, where there is one, the fix. All derive from
``ValueError`` so callers that validate input can catch one type.
"""

from __future__ import annotations


class TopologyError(ValueError):
    """A device topology is malformed: unknown kind, bad bandwidth, unknown or disconnected device."""


class DocumentError(TopologyError):
    """A JSON document (topology or model profile) is malformed.

    Attributes:
        where: JSON path inside the document (``$.links[3].bandwidth``) or ``None``.
        line, column: 1-based position of a syntax error, else ``None``.
        source: the file name, when the document came from a file.
    """

    def __init__(
        self,
        message: str,
        *,
        where: str | None = None,
        line: int | None = None,
        column: int | None = None,
        source: str | None = None,
    ) -> None:
        self.where = where
        self.line = line
        self.column = column
        self.source = source
        prefix = source or "<document>"
        if line is not None:
            prefix += f":{line}:{column}"
        if where is not None:
            prefix += f": at {where}"
        super().__init__(f"{prefix}: {message}")


class ProfileError(ValueError):
    """A model profile is malformed or does not match the strategy/topology it is used with."""


class DoesNotFitError(ProfileError):
    """The model (weights, gradients, optimizer state, activations) does not fit a device's memory."""
