"""Errors that stop a GAIA run before it starts, each saying what to do about it.

They subclass inspect_ai's ``PrerequisiteError`` so that ``inspect eval`` prints the one-line
message instead of a traceback.
"""

from __future__ import annotations

from collections.abc import Sequence

from ._compat import PrerequisiteError


class GaiaError(PrerequisiteError):
    """Base class of inspect_gaia's errors; ``str(error)`` is the whole message."""

    def __init__(self, message: str) -> None:
        """Keep the message both for inspect's display and for ``str()``."""
        super().__init__(message)
        self.args = (message,)

    def __str__(self) -> str:
        """The message, as given."""
        return str(self.args[0])


class GaiaParameterError(GaiaError, ValueError):
    """A task parameter has a value GAIA does not have; the message lists the valid ones."""


class GaiaDatasetError(GaiaError):
    """The GAIA dataset cannot be loaded (not a snapshot, gated, offline, incomplete)."""


def short(value: object, width: int = 40) -> str:
    """``repr(value)`` cut to ``width`` characters, to quote a bad value inside a one-line error."""
    text = repr(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def few(items: Sequence[str], shown: int = 3) -> str:
    """The first ``shown`` items and how many more: ``a, b, c and 197 more``."""
    head = ", ".join(items[:shown])
    return head if len(items) <= shown else f"{head} and {len(items) - shown} more"
