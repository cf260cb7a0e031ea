"""Any GAIA run as a side of ``inspect-gaia compare``, and the answers every side is scored against.

A side is read from a path:

* a directory with ``reviews/<model>/gaia_*.jsonl``: an evalscope GAIA output directory of one
  model (of several: name one model's folder, ``reviews/<model>``);
* a ``.jsonl`` file: predictions in the official leaderboard format (``leaderboard``), which
  smolagents, OpenHands and most agent repositories can write;
* any other file or directory: inspect logs, this package's or inspect_evals' ``gaia`` task's
  (``foreign``), read and validated by ``read`` (in a folder, other files are skipped with
  their reason) and merged as ``report`` merges them (a run and its retry, three level runs). They
  must be of one model: two models are two runs to compare, not one side. A folder that holds
  several runs of that model (a ``--limit`` look, the full run, an ``--epochs 2`` run) gives its
  newest complete run (``latest``), and the side names the run taken and each run left out.

The answer key is GAIA's own: the ``Final answer`` and level of every question of the validation
split, read from a snapshot (``--dataset-path``, else the local snapshot an inspect_gaia side ran
on, else the cache of ``inspect-gaia download``; never downloaded here). Without any snapshot the
sides' own recorded targets are used when every side has them and they agree, and the output says
so. ``--question-set``, ``--exclude`` and ``--answers`` make it a question set.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..errors import GaiaError
from ..questions.dataset import check_record, metadata_file
from ..questions.hub import DEFAULT_HUB, DEFAULT_REVISIONS, cached_snapshot
from ..questions.questionset import QuestionSet, describe, resolve
from ..questions.snapshot_files import read_records
from .evalscope import evalscope_review_files, read_evalscope_run
from .latest import describe as describe_run
from .latest import latest
from .leaderboard import read_leaderboard
from .probe import refuse_probes
from .provenance import GaiaProvenance
from .read import Skipped, read_inspect_logs
from .results import SampleResult, group_runs, run_label

SPLIT = "validation"
COMPARE_FLAGS = ("--exclude", "--answers", "--question-set")
"""``compare``'s options for a question set, named in its messages."""
EVALSCOPE = "evalscope"
LEADERBOARD = "leaderboard-jsonl"


@dataclass(frozen=True)
class Side:
    """One run, whatever harness produced it, as ``compare`` sees it."""

    path: str
    harness: str
    model: str
    samples: tuple[SampleResult, ...]
    flags: tuple[str, ...] = ()
    provenance: GaiaProvenance | None = None
    """The ``gaia`` record of an inspect_gaia side's first run (where its questions came from)."""
    logs: tuple[str, ...] = ()
    verdicts: bool = True
    """Whether the harness recorded its own verdicts (a leaderboard file has none)."""
    skipped: tuple[Skipped, ...] = ()
    """Files of a folder of logs that were not read, and why (the command says so)."""
    chosen: tuple[str, ...] = ()
    """Where a folder held several runs of its model: the run taken, then each run left out; and
    what its logs were read without (the readers' notes)."""
    run: str = ""
    """``run <date> <id>`` of a side read from inspect logs: what tells apart two runs of one
    model (``compare`` titles such sides with it)."""

    @property
    def label(self) -> str:
        """``model (harness)``."""
        return f"{self.model} ({self.harness})"

    @property
    def epochs(self) -> list[int]:
        """The epochs present."""
        return sorted({s.epoch for s in self.samples})


def read_side(path: str) -> Side:
    """Read one side from ``path`` (see the module docstring for what a path may be).

    Raises:
        GaiaError: The path is none of those, is a test-split run, or holds several runs.
    """
    where = Path(path)
    if where.is_dir() and evalscope_review_files(where):
        run = read_evalscope_run(where)
        return Side(path, EVALSCOPE, run.model, run.samples, logs=(path,))
    if where.is_file() and where.suffix == ".jsonl":
        samples = read_leaderboard(where)
        return Side(path, LEADERBOARD, where.stem, tuple(samples), logs=(path,), verdicts=False)
    found = read_inspect_logs([path])
    if not found.runs:
        raise GaiaError(
            f"no usable GAIA log in {path} ({len(found.skipped)} file(s) skipped)",
            fix="name inspect_gaia's or inspect_evals' gaia logs, an evalscope output folder or "
            "a leaderboard .jsonl file",
        )
    refuse_probes(found.runs, "compare")
    groups = group_runs(found.runs, found.in_folder)
    models = sorted({g.model for g in groups})
    if len(models) > 1:
        raise GaiaError(
            f"{path} holds runs of {len(models)} models ({', '.join(models)})",
            fix="give one model's logs per side (`inspect-gaia report` shows the groups)",
        )
    (group,), left_out = latest(groups, key=lambda g: "")
    chosen = (
        (f"took {describe_run(group, groups)}",)
        + tuple(f"left out {describe_run(g, groups)}" for g in left_out)
        if left_out
        else ()
    )
    if group.split != SPLIT:
        raise GaiaError(
            f"{path} is a {group.split}-split run: its answers are private, so there is "
            "nothing to score",
            fix="compare validation runs",
        )
    return Side(
        path=path,
        harness=str(group.settings["harness"]),
        model=group.model,
        samples=group.samples,
        flags=tuple(group.flags),
        provenance=group.runs[0].provenance,
        logs=tuple(run.source for run in group.runs),
        skipped=tuple(found.skipped),
        chosen=chosen + found.notes,
        run=run_label(group.runs),
    )


@dataclass(frozen=True)
class Question:
    """One question of the answer key."""

    level: int
    answer: str
    metadata: Mapping[str, Any] = field(default_factory=dict)
    question: str = ""
    """The question's text (for ``--judge``); ``""`` when neither snapshot nor run has it."""


@dataclass(frozen=True)
class AnswerKey:
    """The answers every side is scored against, and where they came from."""

    questions: Mapping[str, Question]
    split_ids: frozenset[str]
    """Every task id of the split, excluded ones included (to tell another split's ids)."""
    source: str
    question_set: str | None = None


def _snapshot(sides: Sequence[Side], dataset_path: str | None) -> Path | None:
    if dataset_path is not None:
        return Path(dataset_path)
    records = [side.provenance for side in sides if side.provenance is not None]
    for record in records:
        recorded = record.dataset_path
        if recorded and (Path(recorded) / "2023" / SPLIT).is_dir():
            return Path(recorded)
    for record in records:
        if record.hub in DEFAULT_REVISIONS and record.revision:
            cached = cached_snapshot(record.hub, record.revision, SPLIT)
            if cached is not None:
                return cached
    return cached_snapshot(DEFAULT_HUB, DEFAULT_REVISIONS[DEFAULT_HUB], SPLIT)


def _from_snapshot(root: Path) -> dict[str, Question]:
    source = metadata_file(root, SPLIT)
    questions = {}
    for row, raw in enumerate(read_records(source), 1):
        record = check_record(raw, source, row)
        questions[record.task_id] = Question(
            record.level,
            record.answer,
            {"file_name": record.file_name, "annotator_metadata": record.annotator_metadata},
            record.question,
        )
    return questions


def _from_sides(sides: Sequence[Side]) -> dict[str, Question]:
    questions: dict[str, Question] = {}
    for side in sides:
        if not side.verdicts:
            raise GaiaError(
                f"{side.path} carries no answers to score against and no GAIA snapshot was found",
                fix="give --dataset-path (a folder holding 2023/validation), or fetch one with "
                "`inspect-gaia download --split validation`",
            )
        for sample in side.samples:
            known = questions.setdefault(
                sample.task_id,
                Question(sample.level, sample.target, sample.metadata, sample.question),
            )
            if known.answer != sample.target:
                raise GaiaError(
                    f"the runs disagree on the answer of {sample.task_id} ({known.answer!r}, "
                    f"{sample.target!r})",
                    fix="give --dataset-path to score both against one snapshot",
                )
    return questions


def answer_key(
    sides: Sequence[Side], dataset_path: str | None, question_set: QuestionSet
) -> AnswerKey:
    """The answer key for ``sides``: from a snapshot, else their own targets; then the question set.

    Raises:
        GaiaError: No answers can be had, the sides disagree on one, or an id of ``question_set``
            is not in the split.
    """
    root = _snapshot(sides, dataset_path)
    if root is not None:
        questions, source = _from_snapshot(root), f"snapshot {root}"
    else:
        questions, source = _from_sides(sides), "the runs' own targets (no GAIA snapshot found)"
    split_ids = frozenset(questions)
    levels = {task_id: q.level for task_id, q in questions.items()}
    excluded, corrected = resolve(question_set, SPLIT, levels, COMPARE_FLAGS)
    kept = {
        task_id: replace(q, answer=corrected.get(task_id, q.answer))
        for task_id, q in questions.items()
        if task_id not in excluded
    }
    label = None
    if not question_set.empty:
        name = question_set.named.name if question_set.named else None
        label = describe(len(kept), len(questions), sum(t in kept for t in corrected), name)
    return AnswerKey(kept, split_ids, source, label)


def check_split(side: Side, key: AnswerKey) -> None:
    """Every task id of ``side`` is in the key's split.

    Raises:
        GaiaError: Some are not (a run or a file of another split, or of another dataset).
    """
    unknown = sorted({s.task_id for s in side.samples} - key.split_ids)
    if unknown:
        shown = ", ".join(unknown[:3]) + (f" and {len(unknown) - 3} more" if unknown[3:] else "")
        raise GaiaError(
            f"{len(unknown)} task id(s) of {side.path} are not in the {SPLIT} split of "
            f"{key.source}: {shown}",
            fix="is it a run of another split or dataset?",
        )
