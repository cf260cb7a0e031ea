"""Per-sample results of GAIA runs, read from inspect logs and from evalscope output directories.

The CLI's ``report``, ``submission`` and ``compare`` all work on these records. ``group_runs``
merges the logs of one model and one set of settings (three ``gaia_levelN`` logs, or a run and its
``inspect eval-retry``) and keeps runs that are not comparable apart; the statistics are in
``stats``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from inspect_ai.log import EvalLog, EvalSample, list_eval_logs, read_eval_log
from inspect_ai.model import ChatMessageAssistant, ChatMessageTool, ModelUsage
from inspect_ai.scorer import CORRECT

from ._params import DEFAULT_MESSAGE_LIMIT, GaiaParams
from .answer_sources import blocking_flags, blocking_setting
from .errors import GaiaError

SCORER = "gaia_scorer"
DEFAULT_TOOLS = tuple(GaiaParams().tools)
TOKEN_KINDS = ("input", "output", "reasoning", "cache_read", "cache_write", "total")
"""Token counts a sample carries, summed over the models it called."""


@dataclass(frozen=True)
class SampleResult:
    """One GAIA question in one epoch, as one harness answered it."""

    task_id: str
    level: int
    target: str
    answer: str | None
    correct: bool
    error: str | None = None
    limit: str | None = None
    trace: str = ""
    epoch: int = 1
    usage: Mapping[str, ModelUsage] = field(default_factory=dict)
    """Tokens (and cost, when priced) per model called, as the log records them."""
    working_time: float | None = None
    contamination: tuple[Any, ...] = ()
    """``Score.metadata["contamination"]``: the evidence it looked its answer up (see
    ``contamination_report``)."""

    @property
    def failed(self) -> bool:
        """Errored or stopped by a limit; such a sample counts as wrong."""
        return self.error is not None or self.limit is not None

    def tokens(self, kind: str) -> int:
        """Tokens of ``kind`` (one of ``TOKEN_KINDS``) over every model the sample called."""
        name = {"cache_read": "input_tokens_cache_read", "cache_write": "input_tokens_cache_write"}
        attribute = name.get(kind, f"{kind}_tokens")
        return sum(int(getattr(usage, attribute) or 0) for usage in self.usage.values())

    @property
    def cost(self) -> float | None:
        """Dollars spent, or None when a model call of the sample has no price."""
        if not self.usage or any(u.total_cost is None for u in self.usage.values()):
            return None
        return sum(float(u.total_cost or 0.0) for u in self.usage.values())


@dataclass(frozen=True)
class RunResults:
    """All samples of one run, with what the run was."""

    source: str
    model: str
    split: str
    samples: tuple[SampleResult, ...]
    settings: dict[str, Any] = field(default_factory=dict)
    """The run's ``gaia`` task metadata (split, levels, hub, revision, dataset_path, ...)."""
    task_version: str = ""
    run_id: str = ""
    """inspect's task id: an ``inspect eval-retry`` of a run keeps it."""
    created: str = ""
    status: str = "success"
    epochs: int = 1
    config: dict[str, Any] = field(default_factory=dict)
    """inspect's run options that change results: limits, generation settings."""


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
    config = {name: getattr(log.eval.config, name) for name in LIMITS}
    config["message_limit"] = config["message_limit"] or (gaia.get("limits") or {}).get(
        "message_limit"
    )
    generate = log.eval.model_generate_config
    config.update({k: getattr(generate, k) for k in _GENERATE if getattr(generate, k) is not None})
    return RunResults(
        source=str(path),
        model=log.eval.model,
        split=str(gaia.get("split", "validation")),
        samples=tuple(_sample_result(sample) for sample in _samples(log, path)),
        settings=dict(gaia),
        task_version=str(log.eval.task_version),
        run_id=log.eval.task_id,
        created=log.eval.created,
        status=log.status,
        epochs=log.eval.config.epochs or 1,
        config=config,
    )


LIMITS = (
    "message_limit",
    "token_limit",
    "turn_limit",
    "time_limit",
    "working_limit",
    "cost_limit",
)
_GENERATE = ("temperature", "top_p", "max_tokens", "reasoning_effort")
"""inspect's options that change results: the limits, and generation settings when given."""


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
        epoch=sample.epoch,
        usage=dict(sample.model_usage),
        working_time=sample.working_time,
        contamination=tuple((score.metadata or {}).get("contamination") or ()) if score else (),
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


# -- comparability and merging -------------------------------------------------------------------


def comparable_settings(run: RunResults) -> dict[str, Any]:
    """What must be equal for two runs' samples to be pooled into one score.

    The model, split, task version and epochs; the agent's tools and modality; every limit that can
    end a sample (attempts, messages, tokens, time, cost, command timeout); the sandbox (kind,
    image, network, CPUs, memory, processes, disk); the prompt; generation settings given on the
    command line. Not the levels or ids (pooling those is the point), the hub or inspect's version.
    """
    gaia = run.settings
    limits = gaia.get("limits") or {}
    return {
        "model": run.model,
        "split": run.split,
        "task_version": run.task_version,
        "epochs": run.epochs,
        "tools": list(gaia.get("tools") or DEFAULT_TOOLS),
        "multimodal": bool(gaia.get("multimodal", False)),
        "max_attempts": max_attempts(run),
        **run.config,
        "command_timeout": limits.get("command_timeout"),
        **{name: gaia.get(name) for name in ("sandbox", "image", "network")},
        **{name: limits.get(name) for name in ("cpus", "memory", "pids", "disk")},
        "prompt_template_sha256": gaia.get("prompt_template_sha256"),
        "block_answer_sources": blocking_setting(gaia),
    }


def comparability_flags(settings: Mapping[str, Any]) -> list[str]:
    """Why a run's score is not a plain pass@1 GAIA score with the default agent."""
    flags: list[str] = []
    if int(settings.get("max_attempts") or 1) > 1:
        flags.append(f"oracle retries, not pass@1 (max_attempts={settings['max_attempts']})")
    tools = list(settings.get("tools") or DEFAULT_TOOLS)
    if tools != list(DEFAULT_TOOLS):
        flags.append(f"non-default tools: {', '.join(tools)}")
    if settings.get("multimodal"):
        flags.append("multimodal: true")
    limit = settings.get("message_limit")
    if limit is not None and int(limit) != DEFAULT_MESSAGE_LIMIT:
        flags.append(f"message limit {limit} (default {DEFAULT_MESSAGE_LIMIT})")
    return flags + blocking_flags(settings)


@dataclass(frozen=True)
class RunGroup:
    """The merged samples of runs with equal ``comparable_settings``."""

    settings: dict[str, Any]
    runs: tuple[RunResults, ...]
    samples: tuple[SampleResult, ...]

    @property
    def model(self) -> str:
        """The model every run of the group evaluated."""
        return str(self.settings["model"])

    @property
    def split(self) -> str:
        """The dataset split of the group."""
        return str(self.settings["split"])

    @property
    def incomplete(self) -> list[str]:
        """Logs of runs that did not finish (cancelled, or still started) and were not retried."""
        finished = {r.run_id for r in self.runs if r.run_id and r.status in ("success", "error")}
        return [
            f"{run.source} ({run.status})"
            for run in self.runs
            if run.status in ("started", "cancelled") and run.run_id not in finished
        ]


def group_runs(runs: Sequence[RunResults]) -> list[RunGroup]:
    """Pool runs with equal ``comparable_settings``; one group per distinct set, in input order.

    Within a group one sample is kept per question and epoch: of a run and its ``inspect
    eval-retry`` (the same inspect task id), a sample that did not error wins over one that did,
    and otherwise the later run's.

    Raises:
        GaiaError: The same question and epoch is in two separate runs (not a run and its retry).
    """
    keyed: dict[str, list[RunResults]] = {}
    for run in runs:
        keyed.setdefault(json.dumps(comparable_settings(run), sort_keys=True), []).append(run)
    groups = []
    for members in keyed.values():
        kept: dict[tuple[str, int], tuple[SampleResult, RunResults]] = {}
        for run in sorted(members, key=lambda r: r.created):
            for sample in run.samples:
                key = (sample.task_id, sample.epoch)
                if key not in kept:
                    kept[key] = (sample, run)
                    continue
                previous, previous_run = kept[key]
                if not run.run_id or run.run_id != previous_run.run_id:
                    raise GaiaError(
                        f"question {sample.task_id} (epoch {sample.epoch}) is in both "
                        f"{previous_run.source} and {run.source}, separate runs of one model "
                        "and settings, not a run and its eval-retry — report them one at a time"
                    )
                if sample.error is None or previous.error is not None:
                    kept[key] = (sample, run)
        groups.append(
            RunGroup(
                settings=comparable_settings(members[0]),
                runs=tuple(members),
                samples=tuple(sample for sample, _ in kept.values()),
            )
        )
    return groups


# -- evalscope -------------------------------------------------------------------------------------

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
