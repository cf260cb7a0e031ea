"""Question sets others use: questions left out (``exclude``) and answers corrected (``answers``).

A re-annotation such as GAIA-Verified removes defective questions and corrects some answers; a
text-only study keeps only questions without attachments. ``-T question_set=`` takes such a set by
name (``named_sets``: the ones shipped, or a set file), ``-T exclude=`` and ``-T answers=`` take
lists of one's own (and ``inspect-gaia compare`` takes all three), so the score is of a question
set, recorded in the log's provenance (``QuestionSetRecord``: the ``gaia`` record's
``question_set``, with a named set's name, source and hash) and flagged by ``report`` and
``compare`` (``question set text-103: 103 of 165``), never one that passes for the full split.

* ``exclude``: task ids, as ``a,b``, a list, or a file: one id per line (``#`` starts a comment;
  commas and spaces also separate), or a JSON list.
* ``answers``: a file of corrected answers: a JSON object ``{"task_id": "answer", ...}`` or JSON
  lines ``{"task_id": ..., "answer": ...}`` (``Final answer`` or ``final_answer`` are read too).

Every id must be in the split: a typo is an error, not a silently unchanged score.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspect_ai.dataset import Dataset, MemoryDataset, Sample
from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..errors import GaiaParameterError
from .named_sets import NamedSet, load_named_set

_ANSWER_KEYS = ("answer", "Final answer", "final_answer", "model_answer")


@dataclass(frozen=True)
class QuestionSet:
    """Questions left out, and corrected answers, as given (not yet checked against a split)."""

    exclude: tuple[str, ...] = ()
    exclude_source: str | None = None
    """The file the ids came from, or None when they were given inline."""
    answers: tuple[tuple[str, str], ...] = ()
    answers_source: str | None = None
    named: NamedSet | None = None
    """``-T question_set``: a named set, applied before ``exclude`` and ``answers``."""

    @property
    def empty(self) -> bool:
        """Neither questions left out nor answers corrected: the split as published."""
        return not self.exclude and not self.answers and self.named is None

    def fingerprint(self, name: str | None = None) -> str | None:
        """What decides pooling: the lists' sizes and a hash of their contents (None when empty).

        A named set's runs are pooled under its name too (``text-103: exclude 62 (…)``).
        """
        if self.empty:
            return None
        parts = []
        if self.exclude:
            parts.append(f"exclude {len(self.exclude)} ({_sha(sorted(self.exclude))})")
        if self.answers:
            parts.append(f"answers {len(self.answers)} ({_sha(sorted(self.answers))})")
        text = ", ".join(parts)
        return f"{name}: {text}" if name else text


def _sha(value: Any) -> str:
    return hashlib.sha256(json.dumps(value).encode()).hexdigest()[:8]


def _read(path: Path, flag: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as ex:
        raise GaiaParameterError(
            f"{flag}: cannot read {path} ({ex})", fix="give a readable file"
        ) from ex


def parse_exclude(value: object, flag: str = "-T exclude") -> tuple[tuple[str, ...], str | None]:
    """Task ids to leave out (inline, a list, or a file), and the file they came from."""
    if value is None:
        return (), None
    source = None
    items: Iterable[object]
    if isinstance(value, str) and Path(value).expanduser().is_file():
        source = str(Path(value).expanduser())
        text = _read(Path(source), flag)
        if text.lstrip().startswith("["):
            try:
                items = json.loads(text)
            except (json.JSONDecodeError, RecursionError) as ex:
                why = f"{ex.msg}, line {ex.lineno}" if isinstance(ex, json.JSONDecodeError) else ""
                raise GaiaParameterError(
                    f"{flag}: {source} is not a JSON list ({why or 'nested too deeply'})",
                    fix="give one task id per line, or a JSON list",
                ) from ex
        else:
            lines = [line.split("#", 1)[0] for line in text.splitlines()]
            items = " ".join(lines).replace(",", " ").split()
    elif isinstance(value, str):
        if "/" in value or value.endswith((".txt", ".json", ".csv")):
            raise GaiaParameterError(
                f"{flag}: no file {value}", fix="give task ids or a file of them"
            )
        items = value.split(",")
    else:
        items = value if isinstance(value, Iterable) else [value]
    ids = tuple(dict.fromkeys(str(item).strip() for item in items if str(item).strip()))
    if not ids:
        raise GaiaParameterError(f"{flag} names no task id", fix="give ids, or a file of them")
    return ids, source


def parse_answers(
    value: object, flag: str = "-T answers"
) -> tuple[tuple[tuple[str, str], ...], str | None]:
    """Corrected answers from a JSON or JSONL file, and the file's path."""
    if value is None:
        return (), None
    if not isinstance(value, str) or not Path(value).expanduser().is_file():
        raise GaiaParameterError(
            f"{flag} must be a file of corrected answers (JSON {{task_id: answer}} or JSON lines)",
            got=value,
        )
    source = str(Path(value).expanduser())
    text = _read(Path(source), flag)
    pairs: list[tuple[object, object]] = []
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError):  # JSON lines, or not JSON: read line by line
        data = None
    if isinstance(data, dict):
        pairs = list(data.items())
    else:
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                answer = next(record[key] for key in _ANSWER_KEYS if key in record)
                pairs.append((record["task_id"], answer))
            except (json.JSONDecodeError, RecursionError, KeyError, StopIteration, TypeError) as ex:
                raise GaiaParameterError(
                    f'{flag}: {source}, line {number} is not {{"task_id": …, "answer": …}}',
                    fix="give a JSON object {task_id: answer} or one such object per line",
                ) from ex
    answers: dict[str, str] = {}
    for task_id, answer in pairs:
        if not isinstance(answer, (str, int, float)) or isinstance(answer, bool):
            raise GaiaParameterError(f"{flag}: the answer of {task_id} in {source} is not text")
        answers[str(task_id).strip()] = str(answer)
    if not answers:
        raise GaiaParameterError(f"{flag}: {source} holds no answer")
    return tuple(sorted(answers.items())), source


FLAGS = ("-T exclude", "-T answers", "-T question_set")
"""How the task's parameters are named in messages; ``compare`` names its options instead."""


def parse_question_set(
    exclude: object, answers: object, flags: Sequence[str] = FLAGS, named: object = None
) -> QuestionSet:
    """The three parameters at once (``flags`` names them for messages: ``-T exclude``, ...)."""
    exclude_flag, answers_flag, named_flag = flags
    ids, exclude_source = parse_exclude(exclude, exclude_flag)
    corrected, answers_source = parse_answers(answers, answers_flag)
    if named is not None and (not isinstance(named, str) or not named.strip()):
        raise GaiaParameterError(f"{named_flag} must name a question set", got=named)
    named_set = load_named_set(named.strip(), named_flag) if isinstance(named, str) else None
    return QuestionSet(ids, exclude_source, corrected, answers_source, named_set)


def check_ids(
    question_set: QuestionSet, split: str, split_ids: Iterable[str], flags: Sequence[str]
) -> None:
    """Every id of ``question_set`` is in the split.

    Raises:
        GaiaParameterError: Some are not; the message names them and the flag.
    """
    known = set(split_ids)
    named = question_set.named
    lists = [
        (flags[0], question_set.exclude),
        (flags[1], [i for i, _ in question_set.answers]),
    ]
    if named is not None:
        flag = f"{flags[2]}={named.name}"
        if named.split != split:
            raise GaiaParameterError(
                f"{flag} is a set of the {named.split} split", fix=f"drop it on the {split} split"
            )
        lists.append((flag, [*named.keep, *named.exclude, *(i for i, _ in named.answers)]))
    for flag, ids in lists:
        unknown = [i for i in ids if i not in known]
        if unknown:
            shown = ", ".join(unknown[:3]) + (
                f" and {len(unknown) - 3} more" if unknown[3:] else ""
            )
            raise GaiaParameterError(
                f"{flag} names {len(unknown)} task id(s) not in the {split} split: {shown}",
                fix="check the list (and the split)",
            )


class QuestionSetRecord(BaseModel):
    """A question set as a run applied it: the ``question_set`` of the log's ``gaia`` record."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)  # as GaiaProvenance's

    exclude: tuple[str, ...] = ()
    exclude_source: str | None = None
    """The file the ids came from; ``None``: given inline."""
    answers: dict[str, str] = Field(default_factory=dict)
    """Corrected answers by task id, scored instead of the dataset's."""
    answers_source: str | None = None
    corrected: tuple[str, ...] = ()
    """The selected questions whose answer was corrected."""
    split_questions: dict[str, int]
    """Questions of the whole split per level (``"1"``, ``"2"``, ``"3"``): the M of N of M."""
    name: str | None = None
    """``-T question_set``: the named set applied (its lists are in ``exclude``/``answers``)."""
    source: str | None = None
    """The named set's source: a URL, with its commit, a reader can check."""
    sha256: str | None = None
    """The named set's SHA-256 (``named_sets.digest``)."""

    @field_validator("exclude", "corrected", mode="before")
    @classmethod
    def _json_lists(cls, value: object) -> object:
        """JSON has lists where the record has tuples."""
        return tuple(value) if isinstance(value, list) else value

    def fingerprint(self) -> str | None:
        """What decides pooling: the lists' sizes, a hash of their contents, the set's name."""
        given = QuestionSet(self.exclude, None, tuple(sorted(self.answers.items())), None)
        return given.fingerprint(self.name)


def resolve(
    question_set: QuestionSet,
    split: str,
    split_levels: Mapping[str, int],
    flags: Sequence[str] = FLAGS,
) -> tuple[set[str], dict[str, str]]:
    """The task ids ``question_set`` leaves out of the split, and the answers it corrects.

    A named set's ``keep`` leaves out every other id of the split; its own corrections come
    first, ``-T answers`` over them.

    Raises:
        GaiaParameterError: An id is not in the split, or a named set's questions per level are
            not the split's (another snapshot than the set was made on).
    """
    check_ids(question_set, split, split_levels, flags)
    named = question_set.named
    excluded = set(question_set.exclude)
    corrections = dict(question_set.answers)
    if named is not None:
        kept = set(named.keep) if named.keep else set(split_levels) - set(named.exclude)
        found: dict[int, int] = {}
        for task_id in kept:
            found[split_levels[task_id]] = found.get(split_levels[task_id], 0) + 1
        if named.levels and tuple(sorted(found.items())) != named.levels:
            raise GaiaParameterError(
                f"{flags[2]}={named.name}: its questions per level in this snapshot "
                f"({_per_level(found)}) are not the set's ({_per_level(dict(named.levels))})",
                fix="run it on the GAIA snapshot it was made on (the default revision)",
            )
        excluded |= set(split_levels) - kept
        corrections = dict(named.answers) | corrections
    return excluded, corrections


def _per_level(counts: Mapping[int, int]) -> str:
    return ", ".join(f"level {level}: {n}" for level, n in sorted(counts.items()))


def apply_question_set(
    dataset: Dataset, question_set: QuestionSet, split: str, split_levels: Mapping[str, int]
) -> tuple[Dataset, QuestionSetRecord | None]:
    """Leave out and correct questions; returns the dataset and the record of what was done.

    Args:
        dataset: The questions selected so far (levels, ids).
        question_set: What to leave out and correct.
        split: The split's name, for messages.
        split_levels: Every task id of the whole split and its level.

    Returns:
        The questions left, and the record (``None`` when ``question_set`` is empty).

    Raises:
        GaiaParameterError: An id is not in the split, or nothing is left.
    """
    if question_set.empty:
        return dataset, None
    excluded, corrections = resolve(question_set, split, split_levels)
    kept: list[Sample] = []
    for sample in dataset:
        if str(sample.id) in excluded:
            continue
        answer = corrections.get(str(sample.id))
        if answer is not None:
            metadata = {**(sample.metadata or {}), "original_answer": sample.target}
            sample = sample.model_copy(update={"target": answer, "metadata": metadata})
        kept.append(sample)
    if not kept:
        raise GaiaParameterError(
            "the question set leaves out every selected question — nothing to run (check -T "
            "exclude, -T question_set and the levels or ids chosen)"
        )
    counts: dict[str, int] = {}
    for level in split_levels.values():
        counts[str(level)] = counts.get(str(level), 0) + 1
    record = QuestionSetRecord(
        exclude=tuple(sorted(excluded)),
        exclude_source=question_set.exclude_source,
        answers=corrections,
        answers_source=question_set.answers_source,
        corrected=tuple(sorted(str(s.id) for s in kept if str(s.id) in corrections)),
        split_questions=dict(sorted(counts.items())),
        **(
            {}
            if (named := question_set.named) is None
            else {"name": named.name, "source": named.source, "sha256": named.sha256}
        ),
    )
    return MemoryDataset(kept, name=dataset.name, location=dataset.location), record


def describe(questions: int, of: int, corrected: int, name: str | None = None) -> str:
    """``question set: 147 of 165, 9 answers corrected``; named: ``question set text-103: …``."""
    text = f"question set{f' {name}' if name else ''}: {questions} of {of}"
    return text + (f", {corrected} answer{'s' * (corrected != 1)} corrected" if corrected else "")
