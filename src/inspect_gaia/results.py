"""Per-sample results of GAIA runs, read from inspect logs and from evalscope output directories.

The CLI's ``report``, ``submission`` and ``compare`` all work on these records.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspect_ai.log import EvalLog, EvalSample, read_eval_log
from inspect_ai.model import ChatMessageAssistant, ChatMessageTool
from inspect_ai.scorer import CORRECT

from .errors import GaiaError

SCORER = "gaia_scorer"


@dataclass(frozen=True)
class SampleResult:
    """One GAIA question as one harness answered it."""

    task_id: str
    level: int
    target: str
    answer: str | None
    correct: bool
    error: str | None = None
    limit: str | None = None
    trace: str = ""

    @property
    def failed(self) -> bool:
        """Errored or stopped by a limit; such a sample counts as wrong."""
        return self.error is not None or self.limit is not None


@dataclass(frozen=True)
class RunResults:
    """All samples of one run, with what the run was."""

    source: str
    model: str
    split: str
    samples: tuple[SampleResult, ...]
    settings: dict[str, Any] = field(default_factory=dict)
    """The run's ``gaia`` task metadata (split, levels, hub, revision, dataset_path, ...)."""


def read_inspect_log(path: str | Path) -> RunResults:
    """Read an inspect_gaia ``.eval``/``.json`` log.

    Raises:
        GaiaError: The file is not a readable inspect_gaia log.
    """
    try:
        log = read_eval_log(str(path))
    except Exception as ex:  # inspect raises several types for a missing or damaged log
        raise GaiaError(f"cannot read inspect log {path}: {ex}") from ex
    gaia = (log.eval.metadata or {}).get("gaia")
    if not isinstance(gaia, dict):
        raise GaiaError(f"{path} is not an inspect_gaia log (no gaia task metadata)")
    return RunResults(
        source=str(path),
        model=log.eval.model,
        split=str(gaia.get("split", "validation")),
        samples=tuple(_sample_result(sample) for sample in _samples(log, path)),
        settings=dict(gaia),
    )


def max_attempts(run: RunResults) -> int:
    """Submissions the run allowed per sample (above 1 the agent learnt when it was wrong)."""
    limits = run.settings.get("limits") or {}
    return int(limits.get("max_attempts") or 1)


def _samples(log: EvalLog, path: str | Path) -> list[EvalSample]:
    if not log.samples:
        raise GaiaError(f"{path} holds no samples (was the run cancelled before any finished?)")
    return log.samples


def _sample_result(sample: EvalSample) -> SampleResult:
    score = (sample.scores or {}).get(SCORER)
    answer = score.answer if score is not None else None
    if answer is None and sample.output.choices:
        answer = sample.output.completion
    return SampleResult(
        task_id=str(sample.id),
        level=int((sample.metadata or {}).get("level", 0)),
        target=str(sample.target),
        answer=answer,
        correct=score is not None and score.value == CORRECT,
        error=sample.error.message if sample.error else None,
        limit=sample.limit.type if sample.limit else None,
        trace=_trace(sample),
    )


def _trace(sample: EvalSample) -> str:
    """The agent's reasoning and actions, as text, for the leaderboard's ``reasoning_trace``."""
    lines: list[str] = []
    for message in sample.messages:
        if isinstance(message, ChatMessageAssistant):
            if message.text.strip():
                lines.append(message.text.strip())
            for call in message.tool_calls or []:
                lines.append(f"[{call.function}] {json.dumps(call.arguments, ensure_ascii=False)}")
        elif isinstance(message, ChatMessageTool):
            output = message.text.strip()
            lines.append(f"[{message.function} output] {output[:2000]}")
    return "\n".join(lines)


_LEVEL_FILE = re.compile(r"gaia_\d+_level(\d)\.jsonl$")


def read_evalscope_run(directory: str | Path) -> RunResults:
    """Read an evalscope GAIA output directory (its ``reviews/<model>/gaia_*.jsonl`` files).

    Raises:
        GaiaError: No GAIA review files are there.
    """
    root = Path(directory)
    files = sorted(root.glob("reviews/*/gaia_*.jsonl"))
    if not files:
        raise GaiaError(
            f"{root} is not an evalscope GAIA output directory: no reviews/<model>/gaia_*.jsonl"
        )
    samples: list[SampleResult] = []
    for file in files:
        match = _LEVEL_FILE.search(file.name)
        for number, line in enumerate(file.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                samples.append(
                    _evalscope_review(line, match.group(1) if match else "0", file, number)
                )
    return RunResults(
        source=str(root), model=files[0].parent.name, split="validation", samples=tuple(samples)
    )


def _evalscope_review(line: str, file_level: str, file: Path, number: int) -> SampleResult:
    """One evalscope review line as a SampleResult; a malformed line is a one-line error."""
    try:
        review = json.loads(line)
        sample_score = review["sample_score"]
        score = sample_score["score"]
        metadata = sample_score.get("sample_metadata") or {}
        task_id = metadata["task_id"]
        target = (score.get("metadata") or {}).get("target")
        if target is None:
            target = review["target"][0] if isinstance(review["target"], list) else review["target"]
        value = score["value"]
        accuracy = float(value.get("acc", 0.0) if isinstance(value, dict) else value)
        level = int(metadata.get("level") or file_level)
    except json.JSONDecodeError as ex:
        raise GaiaError(
            f"{file}, line {number}: not JSON ({ex.msg}) — is the run complete?"
        ) from ex
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as ex:
        raise GaiaError(
            f"{file}, line {number}: not an evalscope GAIA review (no usable {ex!s}) — is this "
            "an evalscope GAIA output directory?"
        ) from ex
    return SampleResult(
        task_id=str(task_id),
        level=level,
        target=str(target),
        answer=score.get("extracted_prediction"),
        correct=accuracy == 1.0,
    )


@dataclass(frozen=True)
class LevelSummary:
    """Accuracy of a group of samples; errored and limit-hit samples count as wrong."""

    label: str
    n: int
    correct: int
    errored: int
    limited: int

    @property
    def accuracy(self) -> float:
        """Correct over all samples of the group."""
        return self.correct / self.n if self.n else float("nan")

    @property
    def stderr(self) -> float:
        """Standard error of the mean, as inspect's ``stderr`` (sample std with ddof=1)."""
        if self.n < 2:
            return 0.0
        p = self.accuracy
        variance = (self.correct * (1 - p) ** 2 + (self.n - self.correct) * p**2) / (self.n - 1)
        return math.sqrt(variance / self.n)


def summarise(samples: Iterable[SampleResult]) -> list[LevelSummary]:
    """One summary per level present, then ``all``."""
    listed = list(samples)
    groups = [
        (f"{level}", [s for s in listed if s.level == level])
        for level in sorted({s.level for s in listed})
    ]
    groups.append(("all", listed))
    return [
        LevelSummary(
            label=label,
            n=len(group),
            correct=sum(s.correct for s in group),
            errored=sum(s.error is not None for s in group),
            limited=sum(s.limit is not None and s.error is None for s in group),
        )
        for label, group in groups
    ]


def by_task_id(runs: Sequence[RunResults]) -> tuple[dict[str, SampleResult], list[str]]:
    """Merge runs on task id; also returns the ids that occur more than once."""
    merged: dict[str, SampleResult] = {}
    duplicates: list[str] = []
    for run in runs:
        for sample in run.samples:
            if sample.task_id in merged:
                duplicates.append(sample.task_id)
            merged[sample.task_id] = sample
    return merged, duplicates
