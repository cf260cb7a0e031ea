"""Question sets others use: questions left out (``exclude``) and answers corrected (``answers``).

A re-annotation such as GAIA-Verified removes defective questions and corrects some answers; a
text-only study leaves out questions with attachments. ``-T exclude=`` and ``-T answers=`` (and
``inspect-gaia compare --exclude/--answers``) take such lists, so the score is of a named question
set, recorded in the log's provenance (``QuestionSetRecord``: the ``gaia`` record's
``question_set``) and flagged by ``report`` and ``compare`` (``question set: 147 of 165, 9 answers
corrected``), never one that passes for the full split.
inspect_gaia ships no such list: bring your own.

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

from .errors import GaiaParameterError

_ANSWER_KEYS = ("answer", "Final answer", "final_answer", "model_answer")


@dataclass(frozen=True)
class QuestionSet:
    """Questions left out, and corrected answers, as given (not yet checked against a split)."""

    exclude: tuple[str, ...] = ()
    exclude_source: str | None = None
    """The file the ids came from, or None when they were given inline."""
    answers: tuple[tuple[str, str], ...] = ()
    answers_source: str | None = None

    @property
    def empty(self) -> bool:
        """Neither questions left out nor answers corrected: the split as published."""
        return not self.exclude and not self.answers

    def fingerprint(self) -> str | None:
        """What decides pooling: the lists' sizes and a hash of their contents (None when empty)."""
        if self.empty:
            return None
        parts = []
        if self.exclude:
            parts.append(f"exclude {len(self.exclude)} ({_sha(sorted(self.exclude))})")
        if self.answers:
            parts.append(f"answers {len(self.answers)} ({_sha(sorted(self.answers))})")
        return ", ".join(parts)


def _sha(value: Any) -> str:
    return hashlib.sha256(json.dumps(value).encode()).hexdigest()[:8]


def _read(path: Path, flag: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as ex:
        raise GaiaParameterError(
            f"{flag}: cannot read {path} ({ex}) — give a readable file"
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
                    f"{flag}: {source} is not a JSON list ({why or 'nested too deeply'}) — give "
                    "one task id per line, or a JSON list"
                ) from ex
        else:
            lines = [line.split("#", 1)[0] for line in text.splitlines()]
            items = " ".join(lines).replace(",", " ").split()
    elif isinstance(value, str):
        if "/" in value or value.endswith((".txt", ".json", ".csv")):
            raise GaiaParameterError(f"{flag}: no file {value} — give task ids or a file of them")
        items = value.split(",")
    else:
        items = value if isinstance(value, Iterable) else [value]
    ids = tuple(dict.fromkeys(str(item).strip() for item in items if str(item).strip()))
    if not ids:
        raise GaiaParameterError(f"{flag} names no task id — give ids, or a file of them")
    return ids, source


def parse_answers(
    value: object, flag: str = "-T answers"
) -> tuple[tuple[tuple[str, str], ...], str | None]:
    """Corrected answers from a JSON or JSONL file, and the file's path."""
    if value is None:
        return (), None
    if not isinstance(value, str) or not Path(value).expanduser().is_file():
        raise GaiaParameterError(
            f"{flag} must be a file of corrected answers (JSON {{task_id: answer}} or JSON lines) "
            f"— got {value!r}"
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
                    f'{flag}: {source}, line {number} is not {{"task_id": …, "answer": …}} — '
                    "give a JSON object {task_id: answer} or one such object per line"
                ) from ex
    answers: dict[str, str] = {}
    for task_id, answer in pairs:
        if not isinstance(answer, (str, int, float)) or isinstance(answer, bool):
            raise GaiaParameterError(f"{flag}: the answer of {task_id} in {source} is not text")
        answers[str(task_id).strip()] = str(answer)
    if not answers:
        raise GaiaParameterError(f"{flag}: {source} holds no answer")
    return tuple(sorted(answers.items())), source


def parse_question_set(exclude: object, answers: object, flags: Sequence[str] = ()) -> QuestionSet:
    """Both parameters at once (``flags`` names them for messages: ``-T exclude``, ...)."""
    exclude_flag, answers_flag = tuple(flags) or ("-T exclude", "-T answers")
    ids, exclude_source = parse_exclude(exclude, exclude_flag)
    corrected, answers_source = parse_answers(answers, answers_flag)
    return QuestionSet(ids, exclude_source, corrected, answers_source)


def check_ids(
    question_set: QuestionSet, split: str, split_ids: Iterable[str], flags: Sequence[str]
) -> None:
    """Every id of ``question_set`` is in the split.

    Raises:
        GaiaParameterError: Some are not; the message names them and the flag.
    """
    known = set(split_ids)
    for flag, ids in zip(
        flags, (question_set.exclude, [i for i, _ in question_set.answers]), strict=True
    ):
        unknown = [i for i in ids if i not in known]
        if unknown:
            shown = ", ".join(unknown[:3]) + (
                f" and {len(unknown) - 3} more" if unknown[3:] else ""
            )
            raise GaiaParameterError(
                f"{flag} names {len(unknown)} task id(s) not in the {split} split: {shown} — "
                "check the list (and the split)"
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

    @field_validator("exclude", "corrected", mode="before")
    @classmethod
    def _json_lists(cls, value: object) -> object:
        """JSON has lists where the record has tuples."""
        return tuple(value) if isinstance(value, list) else value

    def fingerprint(self) -> str | None:
        """What decides pooling: the lists' sizes and a hash of their contents."""
        given = QuestionSet(self.exclude, None, tuple(sorted(self.answers.items())), None)
        return given.fingerprint()


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
    check_ids(question_set, split, split_levels, ("-T exclude", "-T answers"))
    corrections = dict(question_set.answers)
    excluded = set(question_set.exclude)
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
        raise GaiaParameterError("-T exclude leaves out every selected question — nothing to run")
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
    )
    return MemoryDataset(kept, name=dataset.name, location=dataset.location), record


def describe(questions: int, of: int, corrected: int) -> str:
    """``question set: 147 of 165, 9 answers corrected``."""
    text = f"question set: {questions} of {of}"
    return text + (f", {corrected} answer{'s' * (corrected != 1)} corrected" if corrected else "")
