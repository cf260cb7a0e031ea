"""Errors that stop a GAIA run or a command, each saying what to do about it.

One type, ``GaiaError(problem, fix)``: the house's one line ``problem — fix`` is joined here and
nowhere else, and the parts stay apart for a caller that shows them itself (``doctor``). The
errors that carry more (``DockerProblem``'s subject, ``LogProblem``'s path) subclass it beside the
code that raises them. They subclass inspect_ai's ``PrerequisiteError`` so that ``inspect eval``
prints the one line instead of a traceback (with its brackets escaped: inspect prints it as rich
markup).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from types import TracebackType
from typing import TYPE_CHECKING, TypeVar

from rich.markup import escape

from ._compat import PrerequisiteError, inspect_cli_excepthook

if TYPE_CHECKING:
    from pydantic import ValidationError


_NOTHING = object()
"""``got`` not given: no value is quoted (``None`` is a value a user can give)."""


class GaiaError(PrerequisiteError):
    """Base class of inspect_gaia's errors: what is wrong, and what to do about it.

    ``str(error)`` is the one line, ``problem — fix`` (the problem alone when there is no fix);
    the parts stay apart for a caller that lays them out itself (``doctor``'s check lines). A
    value that was refused is given as ``got`` and quoted after the problem (``— got 'x'``).
    """

    def __init__(self, problem: str, fix: str = "", *, got: object = _NOTHING) -> None:
        """Keep the parts, and the joined line both for inspect's display and for ``str()``.

        inspect prints ``.message`` through rich, which reads ``[mcp]`` in ``inspect-gaia[mcp]``
        as markup and drops it; escaped there, every bracket prints as written.
        """
        if got is not _NOTHING:
            problem = f"{problem} — got {got!r}"
        self.problem = problem
        self.fix = fix
        line = f"{problem} — {fix}" if fix else problem
        super().__init__(escape(line))
        self.args = (line,)

    def __str__(self) -> str:
        """The one line: ``problem — fix``, or the problem alone."""
        return str(self.args[0])


def refusals_to_stderr() -> None:
    """Have ``inspect eval`` print a refusal on stderr, whatever its ``--display``.

    inspect's CLI prints a ``PrerequisiteError`` (every ``GaiaError``, and its own missing keys)
    on stdout through rich's console, which ``--display none`` silences: a script or CI saw exit
    1 and nothing else. Called when the task is created; wraps inspect's hook only (a Python
    caller's own hook and tracebacks are left alone), once.
    """
    if not inspect_cli_excepthook():
        return
    inspects = sys.excepthook

    def hook(kind: type[BaseException], error: BaseException, trace: TracebackType | None) -> None:
        if not isinstance(error, PrerequisiteError):
            inspects(kind, error, trace)
            return
        if isinstance(error, GaiaError):
            print(str(error), file=sys.stderr, flush=True)
            return
        from rich.console import Console  # inspect's own message: rich markup, kept on one line

        Console(stderr=True, soft_wrap=True, highlight=False).print(error.message)

    sys.excepthook = hook


class GaiaParameterError(GaiaError, ValueError):
    """A task parameter has a value GAIA does not have; the message lists the valid ones."""


class GaiaDatasetError(GaiaError):
    """The GAIA dataset cannot be loaded (not a snapshot, gated, offline, incomplete)."""


class GaiaSubmissionError(GaiaError):
    """Logs that cannot be a leaderboard submission (``leaderboard.Problem`` adds its kind)."""


_Choice = TypeVar("_Choice", bound=str)


def one_of(name: str, value: object, choices: Sequence[_Choice]) -> _Choice:
    """``value`` when it is one of ``choices``, else a one-line error listing them.

    Raises:
        GaiaParameterError: ``value`` is none of ``choices``; the message names ``name``.
    """
    for choice in choices:
        if value == choice:
            return choice
    raise GaiaParameterError(f"{name} must be one of {', '.join(choices)}", got=value)


def short(value: object, width: int = 40) -> str:
    """``repr(value)`` cut to ``width`` characters, to quote a bad value inside a one-line error."""
    text = repr(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def counted(number: int, noun: str, plural: str = "") -> str:
    """``1 sample``, ``2 samples``: a count and its noun, agreeing (``plural``: when not ``+s``)."""
    return f"{number} {noun if number == 1 else plural or noun + 's'}"


def few(items: Sequence[str], shown: int = 3) -> str:
    """The first ``shown`` items and how many more: ``a, b, c and 197 more``."""
    head = ", ".join(items[:shown])
    return head if len(items) <= shown else f"{head} and {len(items) - shown} more"


# -- one line per damaged field --------------------------------------------------------------------

_EXPECTED = {
    "int": "not a whole number",
    "float": "not a number",
    "bool": "not true or false",
    "string": "not a string",
    "list": "not a list",
    "tuple": "not a list",
    "dict": "not a mapping",
    "model": "not a mapping",
}


def validation_problem(error: ValidationError, prefix: str) -> str:
    """The first problem of a pydantic validation error as ``<field> is <value>, <what is wrong>``.

    Args:
        error: What pydantic raised.
        prefix: The validated object's name, leading the field's dotted path (``gaia``).
    """
    first = error.errors(include_url=False)[0]
    where = ".".join([prefix, *map(str, first["loc"])])
    kind = first["type"]
    if kind == "missing":
        return f"{where} is missing"
    if kind == "extra_forbidden":
        return f"{where} is not a field of the record"
    if kind == "too_short":
        return f"{where} is empty"
    family = kind.split("_")[0]
    if family in _EXPECTED:
        expected = _EXPECTED[family]
    elif kind == "literal_error":
        expected = f"not one of {first['ctx']['expected']}"
    elif kind == "value_error":
        expected = str(first["ctx"]["error"])
    elif kind.startswith(("greater_than", "less_than")):
        expected = str(first["msg"]).lower().replace("input should", "should")
    else:
        expected = str(first["msg"]).lower()
    return f"{where} is {short(first['input'])}, {expected}"
