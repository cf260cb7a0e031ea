"""One sample of an inspect_gaia (or inspect_evals) log, as the record the readers work on.

A ``SampleResult`` keeps what the numbers, the reports and a submission need, and no more: the
answer the official scorer scored, the verdicts, the flags, the web the sample read, and a trace
whose every part is cut (``TRACE_PART``), so a hostile sample cannot make a reader hold its text
whole. A sample that a stop cancelled is not finished: it has no result. A field that cannot be
read is a ``SampleProblem`` naming the sample; ``read`` says which file.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from inspect_ai.log import EvalSample
from inspect_ai.model import ChatMessageAssistant, ChatMessageTool
from inspect_ai.scorer import CORRECT

from ..defaults import OFFICIAL_SCORER
from ..egress.web_record import from_store
from ..errors import short
from ..probe.outcomes import PROBE_SCORER, routes_of
from ..questions.dataset import LEVELS, question_text
from ..scoring.judge import JUDGE_SCORER
from .budget import RECORD, keep
from .coverage import cancelled, model_call_error
from .foreign import input_text, recorded_metadata
from .results import SampleResult
from .scaffold import offered_in


class SampleProblem(ValueError):
    """A sample of a log that cannot be read (the message names the sample and the field)."""


class SampleTally:
    """A log's samples reduced as they are read, one at a time: the records kept, and counts.

    ``add`` each sample, then drop it: the reader never holds more than one (``read``). Each
    record's size is counted against the command's budget (``budget``) as it is kept.
    """

    def __init__(self, source: str, *, levels_as_text: bool, tools: bool) -> None:
        """A tally of ``source``'s samples.

        ``levels_as_text``: levels written ``"1"`` (inspect_evals); ``tools``: read the tools
        offered in the model calls (the events must then be read).
        """
        self.source = source
        self.levels_as_text = levels_as_text
        self.read = 0
        """Samples in the log, finished or not."""
        self.cancelled = 0
        """Samples a stop cancelled (no result)."""
        self._tools: dict[str, None] | None = {} if tools else None
        self._called = False
        self._results: dict[tuple[str, int], tuple[tuple[int, str], SampleResult]] = {}

    def add(self, sample: EvalSample) -> None:
        """Reduce one sample to its record (a cancelled one to a count).

        Raises:
            SampleProblem: Its level is missing or not a GAIA level, or it is there twice.
            budget.OverBudget: The command's records come to more than it keeps.
        """
        self.read += 1
        if self._tools is not None:
            self._called = offered_in(sample, self._tools) or self._called
        if cancelled(error_message(sample)):  # not finished: no answer, and no harness error
            self.cancelled += 1
            return
        result = _sample_result(sample, self.levels_as_text)
        key = (result.task_id, result.epoch)
        if key in self._results:
            raise SampleProblem(f"sample {result.task_id} (epoch {result.epoch}) is there twice")
        keep(kept_size(result), self.source)
        # inspect's order of a log's samples: by epoch, then id (a number as one)
        id = sample.id if isinstance(sample.id, str) else str(sample.id).zfill(20)
        order = (sample.epoch, id)
        self._results[key] = (order, result)

    @property
    def results(self) -> tuple[SampleResult, ...]:
        """The finished samples' records, in the log's order."""
        return tuple(result for _, result in sorted(self._results.values(), key=lambda r: r[0]))

    @property
    def tools(self) -> list[str] | None:
        """The tools offered in the model calls (``scaffold.offered_tools``), if read."""
        return list(self._tools) if self._tools is not None and self._called else None


def kept_size(result: SampleResult) -> int:
    """About the bytes a reader holds for ``result``: its texts, the rest as text, ``RECORD``."""
    texts: tuple[str, ...] = (result.target, result.answer or "", result.trace, result.question)
    texts += (result.error or "", result.model_error or "")
    rest = (result.metadata, result.contamination, result.web, result.judge, result.probe)
    return RECORD + sum(len(text) for text in texts) + len(repr(rest))


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
        model_error=model_call_error(
            error_message(sample), sample.error.traceback if sample.error else ""
        ),
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
        probe=_probe_routes(sample),
    )


def _probe_routes(sample: EvalSample) -> tuple[Any, ...] | None:
    """A probe run's routes (``probe/outcomes.py``), from its ``gaia_probe`` score."""
    score = (sample.scores or {}).get(PROBE_SCORER)
    return None if score is None else routes_of(score.metadata)


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
TRACE_TOTAL = 64_000
"""Characters of a whole trace kept (the first parts; a note says how many more were left)."""


def _trace(sample: EvalSample) -> str:
    """The agent's reasoning and actions, as text, for the leaderboard's ``reasoning_trace``."""
    lines: list[str] = []
    size = left = 0
    for line in _trace_parts(sample):
        if left or size + len(line) > TRACE_TOTAL:
            left += 1
            continue
        lines.append(line)
        size += len(line) + 1
    if left:
        lines.append(f"[… {left} more part(s) of the trace left out]")
    return "\n".join(lines)


def _trace_parts(sample: EvalSample) -> Iterator[str]:
    """Each message, call and tool output of the sample, cut at ``TRACE_PART``."""
    for message in sample.messages:
        if isinstance(message, ChatMessageAssistant):
            if message.text.strip():
                yield message.text.strip()[:TRACE_PART]
            for call in message.tool_calls or []:
                arguments = json.dumps(call.arguments, ensure_ascii=False)
                yield f"[{call.function}] {arguments[:TRACE_PART]}"
        elif isinstance(message, ChatMessageTool):
            yield f"[{message.function} output] {message.text.strip()[:TRACE_PART]}"
