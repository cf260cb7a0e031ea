"""Named question sets: public lists of GAIA task ids others score on, shipped by name.

A published GAIA number is often on a subset (WebThinker's and MiroThinker's 103 text-only
validation questions) or on a re-annotation (questions left out, answers corrected). Rebuilt by
hand, each such list is a chance to differ; shipped once, by name, a run on it is labelled and
never pooled with a run on another set. ``-T question_set=NAME`` takes one of ``NAMES`` (the
files in ``question_sets/``), or the path of a file in the same format (a set of one's own, a
test's fixture).

What a set file may hold: task ids to keep (``keep``: the subset) or to leave out (``exclude``),
and corrected answers (``answers``); never a question or an answer of GAIA's own (gated: its terms
forbid republishing them). Each names its ``source``, a URL with the commit a reader can check,
and documents its ``levels`` (questions per level), which the task checks against the split it
reads: a list that does not match the snapshot is refused, not silently shortened.

The set's ``sha256`` is over its lists as data (sorted JSON of split, keep, exclude and answers),
not over the file's bytes, so a comment or a reordering keeps it; the log records it with the
name and source (``questionset.QuestionSetRecord``).

A set may instead list the questions it leaves out as ``disputed`` entries (``undisputed``: the
validation questions whose gold is publicly disputed), each with exactly ``task_id``, ``class``
(one of ``DISPUTE_CLASSES``), ``source`` (the link where it is argued) and ``read`` (what of the
source was read); the ids are its ``exclude``. Such a set's levels are not counted against the
snapshot (the sources do not all give a question's level): its ids are checked one by one.

Not shipped: GAIA-Verified's exclusions and corrections (27 of the 165 validation questions found
defective), whose task-id lists could not be found in a public repository to check; a set with a
wrong list is worse than none (docs/question-sets.md).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ..errors import GaiaParameterError

SETS_DIR = Path(__file__).resolve().parent / "question_sets"
"""The named sets shipped in the package, one YAML file each, named ``<name>.yaml``."""
NAMES: tuple[str, ...] = tuple(sorted(p.stem for p in SETS_DIR.glob("*.yaml")))
DISPUTE_CLASSES = (
    "drift",
    "wrong gold",
    "question does not yield the gold",
    "format",
    "several answers",
)
"""Why a gold is disputed: GAIA-Verified's classes (its source moved; the gold was wrong when
written; the question as asked does not lead to it; it breaks GAIA's format rules; more than one
answer is right)."""
DISPUTED_FIELDS = ("task_id", "class", "source", "read")
"""The fields of a ``disputed`` entry, and no others: never a question or an answer."""
TASK_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
"""A GAIA task id: a lower-case UUID."""


@dataclass(frozen=True)
class NamedSet:
    """A question set as its file defines it (not yet checked against a split)."""

    name: str
    source: str
    """The URL (with its commit) a reader checks the lists against."""
    split: str
    keep: tuple[str, ...]
    exclude: tuple[str, ...]
    answers: tuple[tuple[str, str], ...]
    levels: tuple[tuple[int, int], ...]
    """Questions per level the set holds in its split: ``((1, 39), (2, 52), (3, 12))``."""
    sha256: str
    file: str


def _ids(value: object, field: str, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(i, str) and i.strip() for i in value):
        raise GaiaParameterError(f"question set {where}: {field} is not a list of task ids")
    if len(set(value)) != len(value):
        raise GaiaParameterError(f"question set {where}: {field} names a task id twice")
    return tuple(sorted(i.strip() for i in value))


def digest(
    split: str, keep: Iterable[str], exclude: Iterable[str], answers: Mapping[str, str]
) -> str:
    """The set's SHA-256, over its lists as data (sorted JSON)."""
    data = {
        "split": split,
        "keep": sorted(keep),
        "exclude": sorted(exclude),
        "answers": dict(sorted(answers.items())),
    }
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


def load_named_set(value: str, flag: str = "-T question_set") -> NamedSet:
    """The set ``value`` names: one of ``NAMES``, or a set file's path (``flag`` gave it).

    Raises:
        GaiaParameterError: No such set, or its file is not a valid set; one line.
    """
    path = SETS_DIR / f"{value}.yaml" if value in NAMES else Path(value).expanduser()
    if not path.is_file():
        raise GaiaParameterError(
            f"{flag}={value} is neither a named set ({', '.join(NAMES)}) nor a file",
            fix="give one of those names, or the path of a set file (docs/question-sets.md)",
        )
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as ex:
        raise GaiaParameterError(
            f"{flag}: cannot read {path} ({type(ex).__name__})", fix="give a set file"
        ) from ex
    where = str(path)
    if not isinstance(data, dict):
        raise GaiaParameterError(f"question set {where} is not a set file (a YAML mapping)")
    return _named_set(data, where)


def _named_set(data: Mapping[str, Any], where: str) -> NamedSet:
    name, split, source = data.get("name"), data.get("split"), data.get("source")
    url = source.get("url") if isinstance(source, Mapping) else source
    if not isinstance(name, str) or not name.strip():
        raise GaiaParameterError(f"question set {where} has no name")
    if split not in ("validation", "test"):
        raise GaiaParameterError(f"question set {where}: split is not validation or test")
    if not isinstance(url, str) or not url.startswith(("https://", "http://")):
        raise GaiaParameterError(f"question set {where}: source has no URL a reader can check")
    keep = _ids(data.get("keep"), "keep", where)
    exclude = _ids(data.get("exclude"), "exclude", where)
    disputed = data.get("disputed")
    if disputed is not None:
        if exclude:
            raise GaiaParameterError(f"question set {where} has both exclude and disputed")
        exclude = _ids([_disputed_id(e, where) for e in disputed or []], "disputed", where)
    answers = data.get("answers") or {}
    if not isinstance(answers, dict) or not all(
        isinstance(k, str) and isinstance(v, (str, int, float)) for k, v in answers.items()
    ):
        raise GaiaParameterError(f"question set {where}: answers is not {{task_id: answer}}")
    if keep and exclude:
        raise GaiaParameterError(f"question set {where} has both keep and exclude: give one")
    if split == "test" and answers:
        raise GaiaParameterError(
            f"question set {where} corrects answers of the test split, which are private"
        )
    if not (keep or exclude or answers):
        raise GaiaParameterError(f"question set {where} names no question")
    levels = data.get("levels", {} if disputed is not None else None)
    if not isinstance(levels, dict) or not all(
        isinstance(k, int) and isinstance(v, int) for k, v in levels.items()
    ):
        raise GaiaParameterError(
            f"question set {where}: levels is not {{level: questions}} (e.g. {{1: 39}})"
        )
    corrected = {k.strip(): str(v) for k, v in answers.items()}
    return NamedSet(
        name=name.strip(),
        source=url,
        split=split,
        keep=keep,
        exclude=exclude,
        answers=tuple(sorted(corrected.items())),
        levels=tuple(sorted(levels.items())),
        sha256=digest(split, keep, exclude, corrected),
        file=where,
    )


def _disputed_id(entry: object, where: str) -> object:
    """The task id of one ``disputed`` entry, whose fields are exactly ``DISPUTED_FIELDS``."""
    if not isinstance(entry, Mapping) or set(entry) != set(DISPUTED_FIELDS):
        raise GaiaParameterError(
            f"question set {where}: a disputed entry is not exactly {', '.join(DISPUTED_FIELDS)}"
        )
    task_id, source = entry["task_id"], entry["source"]
    if not isinstance(task_id, str) or not TASK_ID.fullmatch(task_id):
        raise GaiaParameterError(f"question set {where}: {task_id!r} is not a GAIA task id")
    if entry["class"] not in DISPUTE_CLASSES:
        raise GaiaParameterError(
            f"question set {where}: the class of {task_id} is not one of "
            + ", ".join(DISPUTE_CLASSES)
        )
    if not isinstance(source, str) or not source.startswith("https://"):
        raise GaiaParameterError(f"question set {where}: {task_id} has no source link")
    return task_id
