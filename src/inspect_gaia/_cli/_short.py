"""A group's flags cut to a few words each, for the overview's ``flags`` column.

The flags are sentences (what differs, why, the fix): under each group's level table they are
shown whole, one a line; in the overview, one cell per group, a recorded run's sentence was a
25-line cell at 100 columns. There each is its first clause, or the name a reader knows it by.
The JSON and CSV documents keep the sentences.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_NAMED = (
    (re.compile(r"^web recorded by the run's proxy"), "web recorded"),
    (re.compile(r"^(\d+) samples? read a known answer source"), r"answer source read: \1"),
    (re.compile(r"^the egress proxy refused (\d+) requests?"), r"\1 refused"),
    (re.compile(r"^\d+ samples? saw \d+ screenshots? or other media"), "media unscanned"),
    (re.compile(r"^answer sources blocked"), "answer sources blocked"),
    (re.compile(r"^sandbox(?: config)? replaced by inspect's --sandbox"), "sandbox replaced"),
    (re.compile(r"^block_answer_sources was asked, but"), "nothing blocked"),
    (re.compile(r"^agent: (\S+)"), r"agent \1"),
)
"""Flags whose first clause is long, or says less than a name would."""
_CLAUSE = re.compile(r": | \(| — |, (?=[a-z])")
_AGENT = "agent: "
WIDTH = 32
"""A short flag longer than this is cut at a word, with an ellipsis."""


def short_flags(flags: Sequence[str], label: str = "") -> str:
    """``flags`` as the overview shows them: each a few words, joined with ``; ``.

    Args:
        flags: The group's flags.
        label: The group's name in the overview: an agent it names already is not named again
            (``another agent``).
    """
    shown = []
    for flag in flags:
        if flag.startswith(_AGENT) and flag.removeprefix(_AGENT) in label:
            shown.append("another agent")
        elif _named(flag):
            shown.append(_named(flag) or "")
        else:  # a note of several parts (the contamination's): each part
            shown += [short_flag(part) for part in flag.split("; ")]
    return "; ".join(shown)


def short_flag(flag: str) -> str:
    """One flag (or one part of a note joined with ``; ``) in a few words."""
    named = _named(flag)
    if named:
        return named
    head = _CLAUSE.split(flag, maxsplit=1)[0]
    if len(head) <= WIDTH:
        return head
    return head[: WIDTH - 1].rsplit(" ", 1)[0] + "…"


def _named(flag: str) -> str | None:
    for pattern, name in _NAMED:
        found = pattern.match(flag)
        if found:
            return found.expand(name)
    return None
