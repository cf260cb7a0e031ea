"""Reading inspect_gaia's logs into ``RunResults``.

A log is read in two steps: its header first (cheap, even for a large log of another task), where
the ``gaia`` record is validated as a ``GaiaProvenance``; then its samples.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import unquote, urlparse

from inspect_ai.log import EvalLog, EvalSample, list_eval_logs, read_eval_log
from inspect_ai.model import ChatMessageAssistant, ChatMessageTool
from inspect_ai.scorer import CORRECT

from ._provenance import GENERATE_OPTIONS, INSPECT_LIMITS, GaiaProvenance, ProvenanceError
from .errors import GaiaError
from .results import RunResults, SampleResult

SCORER = "gaia_scorer"


def read_inspect_log(path: str | Path) -> RunResults:
    """Read an inspect_gaia ``.eval``/``.json`` log.

    Raises:
        GaiaError: The file is not a readable inspect_gaia log.
    """
    header = _inspect_log(path, header_only=True)
    try:
        provenance = GaiaProvenance.from_metadata(header.eval.metadata)
    except ProvenanceError as ex:
        fix = f" — {ex.fix}" if ex.fix else ""
        raise GaiaError(f"{path}: {ex.problem}{fix}") from ex
    if provenance is None:
        raise GaiaError(f"{path} is not an inspect_gaia log (no gaia task metadata)")
    log = _inspect_log(path, header_only=False)
    config = {name: getattr(log.eval.config, name) for name in INSPECT_LIMITS}
    config["message_limit"] = config["message_limit"] or provenance.limits.message_limit
    generate = log.eval.model_generate_config
    config.update(
        {k: getattr(generate, k) for k in GENERATE_OPTIONS if getattr(generate, k) is not None}
    )
    return RunResults(
        source=str(path),
        model=log.eval.model,
        split=provenance.split,
        samples=tuple(_sample_result(sample) for sample in _samples(log, path)),
        provenance=provenance,
        task_version=str(log.eval.task_version),
        run_id=log.eval.task_id,
        created=log.eval.created,
        status=log.status,
        epochs=log.eval.config.epochs or 1,
        config=config,
    )


def read_inspect_logs(paths: Iterable[str | Path]) -> list[RunResults]:
    """Read logs, and every inspect log under any directory among ``paths``; each file once.

    Raises:
        GaiaError: A file is not a readable inspect_gaia log, or a directory holds no log.
    """
    files: dict[Path, str] = {}
    for path in paths:
        if not Path(path).is_dir():
            files.setdefault(Path(path).resolve(), str(path))
            continue
        found = [_local(info.name) for info in list_eval_logs(str(path), recursive=True)]
        if not found:
            raise GaiaError(f"no inspect logs (*.eval, *.json) in directory {path}")
        for log in sorted(found):
            files.setdefault(Path(log).resolve(), log)
    return [read_inspect_log(file) for file in files.values()]


def _local(name: str) -> str:
    return unquote(urlparse(name).path) if name.startswith("file://") else name


def _inspect_log(path: str | Path, *, header_only: bool) -> EvalLog:
    try:
        return read_eval_log(str(path), header_only=header_only)
    except Exception as ex:  # inspect raises several types for a missing or damaged log
        raise GaiaError(f"cannot read inspect log {path}: {ex}") from ex


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
        epoch=sample.epoch,
        usage=dict(sample.model_usage),
        working_time=sample.working_time,
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
