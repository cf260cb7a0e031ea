"""One memory budget per command: what all the files a command reads may unpack to, and keep.

``files`` bounds each file (a sample, a header part, a whole log); a command may still be handed a
folder of many such files. So a command reads against one ``ReadBudget``, whatever it reads (the
logs of ``report``, both sides of ``compare``, a leaderboard or review file):

* ``MAX_READ`` bytes unpacked in all: every part of an ``.eval`` counts as it is decompressed for
  its check (``files.check_archive``), a ``.json`` log or a text file by its size;
* ``MAX_KEPT`` bytes kept in all: what the readers hold of the samples once each is reduced to
  its record (``samples.kept_size``: its texts, and ``RECORD`` a record), and of each line of a
  leaderboard or review file.

Samples are read one at a time and dropped once reduced (``read``), so what a command holds at once
is one sample (at most ``files.MAX_SAMPLE`` unpacked, less its events, store and attachments, which
are never parsed) and the records kept so far: the two counts bound the work and the memory of a
command whatever it is handed. Over either, the command stops with one line naming the file it had
reached and the fix (docs/reports.md, "Logs from anyone", gives the figures).

The budget is the command's (``command_budget``: ``report``, ``compare`` and ``submission`` each
open one, whose ``max_read`` their ``--max-read-gb`` may raise); a reader called outside one (a
library call) opens its own for the call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import GaiaError
from .files import MiB, size_text

MAX_READ = 16 * 1024 * MiB
"""Bytes all the files one command reads may unpack to (four times a log's own cap)."""
MAX_KEPT = 256 * MiB
"""Bytes of sample records one command may keep (a record is a few KiB; a trace at most
``samples.TRACE_TOTAL`` characters)."""
FEWER = "name fewer logs, or a folder that holds fewer runs, and report the rest on their own"
"""The fix of an exhausted budget: the command's own arguments."""
MORE = f"{FEWER}; or raise the budget with --max-read-gb N"
"""The fix of a read past ``max_read``, which the commands' ``--max-read-gb`` sets."""
GB = 2**30
RECORD = 4096
"""Bytes a record is counted for besides its texts (its objects, usage, flags): a sample of a
log (``samples.kept_size``), a line of a leaderboard or review file."""


class OverBudget(GaiaError):
    """A command read, or would keep, more than its budget; it stops (it is not a file to skip)."""


@dataclass
class ReadBudget:
    """What a command has read and kept so far, against its limits."""

    max_read: int = field(default_factory=lambda: MAX_READ)
    max_kept: int = field(default_factory=lambda: MAX_KEPT)
    read: int = 0
    kept: int = 0
    notes: list[str] = field(default_factory=list)
    """What the readers said of the files as they read them (a sample read without its
    transcript: ``parsed``), for the command to print."""

    def spend(self, size: int, where: str | Path) -> None:
        """Count ``size`` bytes unpacked from ``where``.

        Raises:
            OverBudget: The command's files unpack to more than ``max_read``.
        """
        self.read += size
        if self.read > self.max_read:
            raise OverBudget(f"{where}: the files read so far unpack to {self._beyond()}", MORE)

    def foresee(self, size: int, what: str) -> None:
        """Refuse ``what``, which says it unpacks to ``size``, before any of it is read.

        Raises:
            OverBudget: With what was read already, it says it is more than ``max_read``.
        """
        if self.read + size > self.max_read:
            already = f" ({size_text(self.read)} read already)" if self.read else ""
            problem = f"{what}: {size_text(size)} unpacked, {self._beyond()}{already}"
            raise OverBudget(problem, MORE)

    def keep(self, size: int, where: str | Path) -> None:
        """Count ``size`` bytes of records kept from ``where``.

        Raises:
            OverBudget: The command's records come to more than ``max_kept``.
        """
        self.kept += size
        if self.kept > self.max_kept:
            kept = f"more than the {size_text(self.max_kept)} of records one command keeps"
            raise OverBudget(f"{where}: the samples read so far come to {kept}", FEWER)

    def _beyond(self) -> str:
        return f"more than the {size_text(self.max_read)} one command reads"


def read_budget(max_read_gb: float | None) -> ReadBudget | None:
    """The budget a command's ``--max-read-gb`` asks for; ``None``: the default one."""
    return None if max_read_gb is None else ReadBudget(max_read=int(max_read_gb * GB))


_ACTIVE: ContextVar[ReadBudget | None] = ContextVar("inspect_gaia_read_budget", default=None)


@contextmanager
def command_budget(budget: ReadBudget | None = None) -> Iterator[ReadBudget]:
    """The budget of the command under way, or ``budget`` (a new one) for the duration."""
    active = _ACTIVE.get()
    if active is not None and budget is None:
        yield active
        return
    chosen = budget or ReadBudget()
    token = _ACTIVE.set(chosen)
    try:
        yield chosen
    finally:
        _ACTIVE.reset(token)


def counter(where: str | Path) -> Callable[[int], None]:
    """What counts bytes unpacked from ``where`` against the active budget (none open: nothing).

    ``files`` takes it (``check_log``, ``read_text``), so that it needs no budget of its own.
    """
    active = _ACTIVE.get()
    if active is None:
        return lambda size: None
    return lambda size: active.spend(size, where)


def keep(size: int, where: str | Path) -> None:
    """Count ``size`` kept bytes from ``where`` against the active budget, if one is open."""
    active = _ACTIVE.get()
    if active is not None:
        active.keep(size, where)


def note(line: str) -> None:
    """Keep ``line`` for the command under way to print, if one is open."""
    active = _ACTIVE.get()
    if active is not None:
        active.notes.append(line)
