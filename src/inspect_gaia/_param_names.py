"""``-T`` names the task does not take: refused before any sandbox starts, or shown before the run.

inspect itself only logs ``param 'levle' not used by task`` and runs the whole benchmark; in a
terminal its full-screen display covers that line until the run has ended and the money is spent.
So ``gaia`` takes ``**unknown`` (inspect then passes every name through) and decides here:

* a name close to one of its own (``levle``) is a typo: refused in one line naming the nearest;
* a name of one of inspect's own options (``-T limit=10``) is refused naming the option
  (``--limit``): ``-T`` goes to the task, and the task has no such parameter;
* any other name is left alone with a warning, because ``inspect eval-set`` gives every ``-T`` to
  every task of the set, so it may be another task's parameter. The warning is printed where the
  user sees it before the run: in a terminal, before inspect's display takes the screen, with a
  pause to read it (``PAUSE`` seconds, Ctrl-C to stop); in a script, in the log output as inspect's
  own warning.

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


def check_unknown(unknown: Mapping[str, object], known: Iterable[str], task: str) -> None:
    """Refuse typos of ``known`` and inspect options among ``unknown``; warn about the rest.

    Args:
        unknown: The ``-T`` names and values the task does not take.
        known: The task's own parameter names.
        task: The task's name, for the warning.

    Raises:
        GaiaParameterError: A name is a typo of a parameter, or one of inspect's options.
    """
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
    if names:
        _warn(names, task)


_warned: set[tuple[str, ...]] = set()
"""Names already warned about in this process (an eval-set creates each of its gaia tasks)."""


def _warn(names: list[str], task: str) -> None:
    if tuple(names) in _warned:
        return
    _warned.add(tuple(names))
    listed = ", ".join(f"-T {name}" for name in names)
    message = f"{listed}: {task} has no such parameter, so it is ignored (another task's?)"
    if sys.stderr.isatty():  # seen before inspect's display covers the screen
        print(f"WARNING {message} — Ctrl-C to stop; starting in {PAUSE:.0f} s", file=sys.stderr)
        time.sleep(PAUSE)
    else:
        logger.warning(message)
