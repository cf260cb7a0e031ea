"""One sample of an inspect_gaia (or inspect_evals) log, as the record the readers work on.

A ``SampleResult`` keeps what the numbers, the reports and a submission need, and no more: the
answer the official scorer scored, the verdicts, the flags, the web the sample read, and a trace
whose every part is cut (``TRACE_PART``), so a hostile sample cannot make a reader hold its text
whole. A sample that a stop cancelled is not finished: it has no result. A field that cannot be
read is a ``SampleProblem`` naming the sample; ``read`` says which file.
"""

from __future__ import annotations

import json
from typing import Any

from inspect_ai.log import EvalLog, EvalSample
from inspect_ai.model import ChatMessageAssistant, ChatMessageTool
from inspect_ai.scorer import CORRECT

from ..dataset import LEVELS, question_text
from ..defaults import OFFICIAL_SCORER
from ..errors import short
from ..judge import JUDGE_SCORER
from ..web_record import from_store
from .coverage import cancelled
from .foreign import input_text, recorded_metadata
from .results import SampleResult


class SampleProblem(ValueError):
    """A sample of a log that cannot be read (the message names the sample and the field)."""


def sample_results(log: EvalLog, *, levels_as_text: bool) -> tuple[SampleResult, ...]:
    """The log's finished samples; ``levels_as_text``: levels written ``"1"`` (inspect_evals).

    Raises:
        SampleProblem: A sample's level is missing or not a GAIA level, or a sample is there twice.
    """
    results: dict[tuple[str, int], SampleResult] = {}
    for sample in log.samples or []:
        if cancelled(error_message(sample)):  # not finished: no answer, and no harness error
            continue
        result = _sample_result(sample, levels_as_text)
        key = (result.task_id, result.epoch)
        if key in results:
            raise SampleProblem(f"sample {result.task_id} (epoch {result.epoch}) is there twice")
        results[key] = result
    return tuple(results.values())


def error_message(sample: EvalSample) -> str | None:
    """The sample's error, if it ended in one."""
    return sample.error.message if sample.error else None


def _sample_result(sample: EvalSample, levels_as_text: bool) -> SampleResult:
    score = (sample.scores or {}).get(OFFICIAL_SCORER)
    answer = score.answer if score is not None else None
    if answer is None and sample.output.choices:
        answer = sample.output.completion
    return SampleResult(
        task_id=str(sample.id),
        level=_level(sample, levels_as_text),
        target=str(sample.target),
        answer=answer,
        correct=score is not None and score.value == CORRECT,
        error=error_message(sample),
        limit=sample.limit.type if sample.limit else None,
        trace=_trace(sample),
        epoch=sample.epoch,
        usage=dict(sample.model_usage),
        working_time=sample.working_time,
        metadata=recorded_metadata(sample),
        contamination=_flags(score.metadata) if score else (),
        web=from_store(sample.store),
        question=question_text(input_text(sample)),
        judge=_judge_score(sample),
    )


def _judge_score(sample: EvalSample) -> dict[str, Any] | None:
    """The sample's ``gaia_judge`` score (``inspect score --scorer inspect_gaia/gaia_judge``)."""
    score = (sample.scores or {}).get(JUDGE_SCORER)
    if score is None:
        return None
    return {"value": score.value, **(score.metadata or {})}


def _flags(metadata: dict[str, Any] | None) -> tuple[Any, ...]:
    """``Score.metadata["contamination"]``: a list of flags (anything else is one odd flag)."""
    flags = (metadata or {}).get("contamination")
    if isinstance(flags, list):
        return tuple(flags)
    return () if flags is None else (flags,)


def _level(sample: EvalSample, as_text: bool) -> int:
    """The sample's GAIA level; ``as_text``: written as ``"1"`` (inspect_evals' parquet reader)."""
    metadata = sample.metadata or {}
    where = f"sample {sample.id} (epoch {sample.epoch}): metadata.level"
    if "level" not in metadata:
        raise SampleProblem(f"{where} is missing")
    level = metadata["level"]
    if as_text and isinstance(level, str) and level.strip() in ("1", "2", "3"):
        level = int(level)
    if isinstance(level, bool) or not isinstance(level, int) or level not in LEVELS:
        raise SampleProblem(f"{where} is {short(level)}, not a GAIA level (1, 2 or 3)")
    return level


TRACE_PART = 2000
"""Characters of each part of a trace kept (an assistant's text, a call, a tool's output): a log's
sample is held as its trace, so a hostile one cannot make the reader hold its text whole."""


def _trace(sample: EvalSample) -> str:
    """The agent's reasoning and actions, as text, for the leaderboard's ``reasoning_trace``."""
    lines: list[str] = []
    for message in sample.messages:
        if isinstance(message, ChatMessageAssistant):
            if message.text.strip():
                lines.append(message.text.strip()[:TRACE_PART])
            for call in message.tool_calls or []:
                arguments = json.dumps(call.arguments, ensure_ascii=False)
                lines.append(f"[{call.function}] {arguments[:TRACE_PART]}")
        elif isinstance(message, ChatMessageTool):
            output = message.text.strip()
            lines.append(f"[{message.function} output] {output[:TRACE_PART]}")
    return "\n".join(lines)
