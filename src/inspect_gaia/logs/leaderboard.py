"""Predictions in the official GAIA leaderboard format: read as a side of ``compare``, or written.

The format the leaderboard takes (and ``inspect-gaia submission`` writes): JSON lines, one per
question, ``{"task_id": ..., "model_answer": ..., "reasoning_trace": ...}`` (the trace optional).
Most agent repositories can write it, so any harness's run can be compared here; the file carries no
levels and no verdicts: both come from the answer key ``compare`` scores every side against.

A malformed file is refused with one line naming the line and what to fix: a line that is not a
JSON object, a line without ``task_id`` or ``model_answer``, or a task id given twice (which of the
two answers would count?). A ``null`` or empty answer is kept and scored wrong.

Writing one: what keeps runs off the leaderboard are ``Problem`` values, each a
``GaiaSubmissionError`` of a kind (``run_problems``: the runs' split, epochs and oracle retries;
``answer_problems``: each question answered once, every one of the split and no other;
``flagged_problems``: samples the run flagged for reading a known answer source);
``submission_file`` is the file of runs with none. The command reads the logs and the split's ids,
and raises the first problem.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..errors import GaiaError, GaiaSubmissionError, few
from .budget import RECORD, counter, keep
from .contamination import flagged
from .files import UnsafeFile, read_text
from .results import RunResults, SampleResult, by_task_id, comparable_settings

FIELDS = ("task_id", "model_answer")


def read_leaderboard(path: str | Path) -> list[SampleResult]:
    """Read a leaderboard JSONL file; its samples have no level (0) and no target (``""``).

    Raises:
        GaiaError: The file is unreadable or malformed; the message names the line.
    """
    try:
        text = read_text(path, count=counter(path))
    except UnsafeFile as ex:
        raise GaiaError(
            f"cannot read {path}: {ex.reason}", fix="give a leaderboard .jsonl file"
        ) from ex
    except OSError as ex:
        raise GaiaError(f"cannot read {path}: {ex.strerror or ex}") from ex
    samples: list[SampleResult] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except (json.JSONDecodeError, RecursionError) as ex:
            problem = ex.msg if isinstance(ex, json.JSONDecodeError) else "nested too deeply"
            raise GaiaError(
                f"{path}, line {number}: not JSON ({problem})",
                fix="a leaderboard file has one JSON object per line",
            ) from ex
        if not isinstance(record, dict) or any(key not in record for key in FIELDS):
            missing = [k for k in FIELDS if not isinstance(record, dict) or k not in record]
            raise GaiaError(
                f"{path}, line {number}: no {' and no '.join(missing)}",
                fix='each line of a leaderboard file is {"task_id": …, "model_answer": …, '
                '"reasoning_trace": …}',
            )
        task_id = str(record["task_id"]).strip()
        if task_id in seen:
            raise GaiaError(
                f"{path}: task id {task_id} is on lines {seen[task_id]} and {number}",
                fix="keep one answer per question",
            )
        seen[task_id] = number
        keep(RECORD + len(line), path)
        answer = record["model_answer"]
        samples.append(
            SampleResult(
                task_id=task_id,
                level=0,
                target="",
                answer=None if answer is None else str(answer),
                correct=False,
                trace=str(record.get("reasoning_trace") or ""),
            )
        )
    if not samples:
        raise GaiaError(f"{path} holds no predictions", fix="give one JSON object per question")
    return samples


# -- writing one -----------------------------------------------------------------------------------

ProblemKind = Literal[
    "mixed_splits",
    "validation_split",
    "epochs",
    "oracle_retries",
    "duplicates",
    "missing",
    "unknown",
    "flagged",
]


class Problem(GaiaSubmissionError):
    """One reason runs cannot be submitted to the leaderboard, of a ``kind`` a caller can test.

    Returned, not raised, so that every reason can be found; the command raises the first.
    """

    def __init__(self, kind: ProblemKind, problem: str, fix: str = "") -> None:
        """Keep the kind beside the problem and its fix."""
        super().__init__(problem, fix)
        self.kind = kind


def run_problems(
    runs: Sequence[RunResults],
    *,
    allow_validation: bool = False,
    allow_oracle_retries: bool = False,
) -> list[Problem]:
    """What in the runs themselves keeps them off the leaderboard, whatever questions they answered.

    Mixed splits, the validation split (unless ``allow_validation``), several epochs, and oracle
    retries (``max_attempts`` > 1, unless ``allow_oracle_retries``); in that order.

    Raises:
        GaiaError: A run is not an inspect log (``results.comparable_settings``).
    """
    problems = []
    splits = {run.split for run in runs}
    if len(splits) > 1:
        problems.append(
            Problem(
                "mixed_splits",
                f"the logs mix splits ({', '.join(sorted(splits))}); give logs of one split",
            )
        )
    elif splits and (split := next(iter(splits))) != "test" and not allow_validation:
        problems.append(
            Problem(
                "validation_split",
                f"these are {split}-split logs; the leaderboard ranks test-split submissions "
                "(pass --allow-validation to write them anyway)",
            )
        )
    repeated = [f"{run.source} ({run.epochs} epochs)" for run in runs if run.epochs > 1]
    if repeated:
        problems.append(
            Problem(
                "epochs",
                f"{', '.join(repeated)}: the leaderboard takes one answer per question",
                fix="submit a single-epoch run",
            )
        )
    oracle = [run.source for run in runs if comparable_settings(run)["max_attempts"] > 1]
    if oracle and not allow_oracle_retries:
        problems.append(
            Problem(
                "oracle_retries",
                f"{', '.join(oracle)} ran with max_attempts > 1: the agent was told when an answer "
                "was wrong, so these are not pass@1 answers (pass --allow-oracle-retries to write "
                "them)",
            )
        )
    return problems


def answer_problems(
    runs: Sequence[RunResults], split_ids: Sequence[str] | None = None
) -> list[Problem]:
    """Each question answered in one log only; given the split's ids, every one and no other.

    Args:
        runs: Runs of one split (``run_problems`` has none).
        split_ids: Every task id of the runs' split; ``None``: only the repeated answers are
            checked (the command checks them before it reads the split's ids).
    """
    merged, duplicates = by_task_id(runs)
    if duplicates:
        twice = sorted(set(duplicates))
        return [
            Problem(
                "duplicates",
                f"{len(twice)} task id(s) answered in more than one log: {few(twice)}",
                fix="give each question's log once (a run and its eval-retry: the retry's log "
                "alone)",
            )
        ]
    if split_ids is None:
        return []
    split = ", ".join(sorted({run.split for run in runs}))
    problems = []
    missing = [task_id for task_id in split_ids if task_id not in merged]
    if missing:
        problems.append(
            Problem(
                "missing",
                f"{len(missing)} task id(s) of the {split} split missing: {few(missing)}",
                fix="give the logs that answer them too (every level's), or run them",
            )
        )
    unknown = sorted(set(merged) - set(split_ids))
    if unknown:
        problems.append(
            Problem(
                "unknown",
                f"{len(unknown)} task id(s) not in the {split} split: {few(unknown)}",
                fix="are these logs of another snapshot? Pass --dataset-path with the one they "
                "ran on",
            )
        )
    return problems


def flagged_ids(runs: Sequence[RunResults]) -> list[str]:
    """Task ids whose sample read a known answer source or its answer (``contamination``)."""
    merged, _ = by_task_id(runs)
    return sorted(task_id for task_id, sample in merged.items() if flagged(sample))


def flagged_problems(runs: Sequence[RunResults], *, allow_flagged: bool = False) -> list[Problem]:
    """The samples the runs themselves flagged, unless ``allow_flagged``.

    A submission that carries an answer read off a known copy of the dataset is not the model's.
    """
    found = flagged_ids(runs)
    if not found or allow_flagged:
        return []
    return [
        Problem(
            "flagged",
            f"{len(found)} sample(s) read a known answer source or their answer off a page: "
            f"{few(found)} (evidence: inspect-gaia report --format json)",
            fix="rerun them with -T block_answer_sources=true, or pass --allow-flagged to package "
            "them (the sidecar says so)",
        )
    ]


@dataclass(frozen=True)
class SubmissionFile:
    """The leaderboard file of runs without problems."""

    text: str
    """One JSON object per line, a line per task id of the split, in the split's order."""
    answers: int
    failed: list[str]
    """Task ids whose sample errored or hit a limit (the command warns of them)."""


def submission_file(runs: Sequence[RunResults], split_ids: Sequence[str]) -> SubmissionFile:
    """The leaderboard file of ``runs``, which ``run_problems`` and ``answer_problems`` passed."""
    merged, _ = by_task_id(runs)
    lines = [
        json.dumps(
            {
                "task_id": task_id,
                "model_answer": merged[task_id].answer or "",
                "reasoning_trace": merged[task_id].trace,
            },
            ensure_ascii=False,
        )
        for task_id in split_ids
    ]
    return SubmissionFile(
        text="\n".join(lines) + "\n",
        answers=len(lines),
        failed=[task_id for task_id in split_ids if merged[task_id].failed],
    )
