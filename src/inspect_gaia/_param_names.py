"""``-T`` names the task does not take: refused before any sandbox starts, or shown before the run.

inspect itself only logs ``param 'levle' not used by task`` and runs the whole benchmark; in a
terminal its full-screen display covers that line until the run has ended and the money is spent.
So ``gaia`` takes ``**unknown`` (inspect then passes every name through) and decides here:

* a name close to one of its own (``levle``) is a typo: refused in one line naming the nearest;
* a name of one of inspect's own options (``-T limit=10``) is refused naming the option
  (``--limit``): ``-T`` goes to the task, and the task has no such parameter;
* any other name, when every task inspect creates is this package's (``inspect eval
  inspect_gaia/gaia``, an eval-set of ``gaia_level1`` and ``gaia_level2``:
  ``_compat.creating_only_gaia_tasks``), is refused too: no other task can take it, and a run
  without what the user asked for (``-T tools=python`` ran without python) costs the whole run.
  Where its value names one of ``gaia``'s switches the refusal says so (``-T python=true``), and
  so does the warning below;
* with several tasks (``inspect eval-set a b``, a file of tasks, a task rebuilt from a log by
  ``eval-retry``), it is left alone with a warning, because every ``-T`` goes to every task of
  the set, so it may be another task's parameter. The warning is printed where the user sees it
  before the run: in a terminal, before inspect's display takes the screen, with a pause to read
  it (``PAUSE`` seconds, Ctrl-C to stop); in a script, in the log output as inspect's own warning.

The cost of the refusals is that a task of the same eval-set cannot take a parameter whose name is
one letter off one of ``gaia``'s, or named as an inspect option: such a set runs ``gaia`` alone.
"""

from __future__ import annotations

import difflib
import logging
import sys
import time
from collections.abc import Iterable, Mapping

from .errors import GaiaParameterError

INSPECT_OPTIONS = (
    *("limit", "sample_id", "epochs", "model", "solver", "temperature", "max_tokens"),
    *("message_limit", "token_limit", "turn_limit", "time_limit", "working_limit", "cost_limit"),
    *("max_samples", "max_sandboxes", "max_connections", "log_dir", "display"),
)
"""inspect options a user may write as ``-T name=value``, refused naming ``--name``."""
CLOSE = 0.75
"""How alike (difflib's ratio) a name must be to one of ``gaia``'s to count as its typo."""
PAUSE = 5.0
"""Seconds a terminal shows the warning about other names before the run starts."""

logger = logging.getLogger(__name__)


def check_unknown(
    unknown: Mapping[str, object], known: Iterable[str], task: str, alone: bool = False
) -> None:
    """Refuse typos of ``known`` and inspect options among ``unknown``; warn about the rest.

    Args:
        unknown: The ``-T`` names and values the task does not take.
        known: The task's own parameter names.
        task: The task's name, for the warning.
        alone: The task is the only one of its run: every unknown name is refused.

    Raises:
        GaiaParameterError: A name is a typo of a parameter, or one of inspect's options, or
            any name when ``alone``.
    """
    known = list(known)
    names = sorted(unknown)
    for name in names:
        if name in INSPECT_OPTIONS:
            flag = "--" + name.replace("_", "-")
            raise GaiaParameterError(
                f"unknown parameter {name}", fix=f"did you mean inspect's {flag}?"
            )
        nearest = difflib.get_close_matches(name, list(known), n=1, cutoff=CLOSE)
        if nearest:
            raise GaiaParameterError(f"unknown parameter {name}", fix=f"did you mean {nearest[0]}?")
    if names and alone:
        name = names[0]
        meant = _meant(unknown[name], known)
        raise GaiaParameterError(
            f"unknown parameter {name}: {task} has no such parameter",
            fix=f"did you mean {meant}?"
            if meant
            else "drop it (the README's Parameters table lists the task's)",
        )
    if names:
        hints = [meant for name in names if (meant := _meant(unknown[name], known))]
        _warn(names, task, hints)


def _meant(value: object, known: list[str]) -> str:
    """The switches of ``gaia`` a value names, as flags (``-T python=true``); ``""``: none."""
    return " ".join(f"-T {word}=true" for word in _words(value) if word in known)


def _words(value: object) -> list[str]:
    """The words of a ``-T`` value: ``python``, ``python,web_search`` or a list of them."""
    items = value if isinstance(value, list | tuple) else str(value).split(",")
    return [str(item).strip() for item in items]


_warned: set[tuple[str, ...]] = set()
"""Names already warned about in this process (an eval-set creates each of its gaia tasks)."""


def _warn(names: list[str], task: str, hints: list[str]) -> None:
    if tuple(names) in _warned:
        return
    _warned.add(tuple(names))
    listed = ", ".join(f"-T {name}" for name in names)
    message = f"{listed}: {task} has no such parameter, so it is ignored (another task's?)"
    message += f"; for {task}, did you mean {' '.join(hints)}?" if hints else ""
    if sys.stderr.isatty():  # seen before inspect's display covers the screen
        print(f"WARNING {message} — Ctrl-C to stop; starting in {PAUSE:.0f} s", file=sys.stderr)
        time.sleep(PAUSE)
    else:
        logger.warning(message)
