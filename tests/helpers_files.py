"""Files a test makes instead of a run: damaged snapshots, parsed parameters, logs."""

from __future__ import annotations

import base64
import inspect
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import pyarrow as pa
import pyarrow.parquet as pq
from inspect_ai.log import EvalLog
from inspect_ai.util import SandboxEnvironmentSpec

from inspect_gaia import DEFAULT_INPUT_PROMPT, _params, gaia
from inspect_gaia.defaults import PROVIDERS
from inspect_gaia.options import GaiaParams
from inspect_gaia.record import provenance_of
from inspect_gaia.task import gaia_questions, parameter_names
from tests.helpers_runs import MODEL
from tests.scenario import GAIA_TINY, VALIDATION_DIR

# -- damaged snapshots -----------------------------------------------------------------------------


def rewrite_record(snapshot: Path, which: str, **changes: Any) -> None:
    """Change the record of task ``which`` in a snapshot's validation metadata."""
    path = snapshot / VALIDATION_DIR / "metadata.parquet"
    rows = pq.read_table(path).to_pylist()
    for row in rows:
        if row["task_id"] == which:
            row.update(changes)
    pq.write_table(pa.Table.from_pylist(rows), path)


# -- parameters ------------------------------------------------------------------------------------


def parse_params(**raw: object) -> GaiaParams:
    """What ``gaia(**raw)`` parses: ``_params.parse_params`` with ``gaia()``'s defaults for the rest.

    ``parse_params`` has no defaults of its own (a value ``gaia()`` forgot to pass on is a type error).
    """
    signature = inspect.signature(gaia).parameters
    defaults = {name: signature[name].default for name in parameter_names()}
    return _params.parse_params(**{**defaults, **raw})


# -- logs without a run ----------------------------------------------------------------------------


def gaia_record(**params: object) -> dict[str, Any]:
    """The ``gaia`` task metadata a run of ``gaia(**params)`` writes (on gaia-tiny by default).

    Built by the task's own code from parsed parameters, so test logs cannot drift from real ones.
    """
    parsed = parse_params(**{"dataset_path": str(GAIA_TINY), **params})
    # -T exclude / -T answers, applied to the questions as the task applies them
    question_set = None if parsed.dataset.question_set.empty else gaia_questions(parsed.dataset)[1]
    return provenance_of(
        parsed,
        prompt=DEFAULT_INPUT_PROMPT,
        image_id=None,
        sandbox_provider=PROVIDERS[parsed.sandbox.kind],
        question_set=question_set,
    ).as_metadata()


def write_log(
    path: Path,
    samples: Sequence[dict[str, Any]],
    *,
    model: str = MODEL,
    params: dict[str, object] | None = None,
    metadata: dict[str, Any] | None = None,
    task: str = "inspect_gaia/gaia",
    task_version: str = "1.0.0",
    run_id: str = "",
    created: str = "2026-12-03T00:00:00+00:00",
    epochs: int = 1,
    message_limit: int | None = None,
    limit: int | None = None,
    status: Literal["started", "success", "cancelled", "error"] = "success",
    sandbox: SandboxEnvironmentSpec | None = None,
    solver: str | None = None,
    solver_args: dict[str, Any] | None = None,
    offered_tools: Sequence[str] | None = None,
    questions: int | None = None,
) -> Path:
    """Write an inspect_gaia log of ``gaia(**params)`` without running anything (for unit tests).

    ``metadata`` replaces the task metadata (a log of another task: ``{}``). Also settable: inspect's
    task id (an eval-retry keeps it), the creation time, epochs, a ``--message-limit``, a
    ``--limit``, the status, the sandbox spec inspect records, and a solver that replaced the task's agent
    (``solver``, ``solver_args``: what ``inspect eval --solver X -S a=1`` records) with the tools
    each sample's model call offered (``offered_tools``; ``None``: no model call is logged), and
    the questions the task selected (``questions``: inspect's dataset size, before ``--limit``).
    Each sample is a dict: ``id``, ``level`` (written as given), ``target``, ``answer``,
    ``value`` (``C``/``I``), optionally ``epoch``, ``error``, ``limit``, ``input_tokens``,
    ``input`` (the prompt), ``output_tokens``, ``reasoning_tokens``, ``cache_read``, ``cache_write``, ``cost`` (dollars, as
    inspect records a priced call), ``working_time``, ``contamination`` (the score's flags), ``store`` (the sample's store) and
    ``metadata`` (more sample metadata: ``file_name``, ``annotator_metadata``). ``.json`` paths write inspect's JSON format.
    """
    from inspect_ai.event import Event, ModelEvent
    from inspect_ai.log import (
        EvalConfig,
        EvalDataset,
        EvalError,
        EvalSample,
        EvalSampleLimit,
        EvalSpec,
        write_eval_log,
    )
    from inspect_ai.model import GenerateConfig, ModelOutput, ModelUsage
    from inspect_ai.scorer import Score
    from inspect_ai.tool import ToolInfo, ToolParams

    def model_calls() -> list[Event]:
        if offered_tools is None:
            return []
        tools = [ToolInfo(name=t, description=t, parameters=ToolParams()) for t in offered_tools]
        output = ModelOutput.from_content(model, "")
        config = GenerateConfig()
        return [
            ModelEvent(
                model=model, input=[], tools=tools, tool_choice="auto", config=config, output=output
            )
        ]

    eval_samples = []
    for sample in samples:
        tokens = int(sample.get("input_tokens", 0)), int(sample.get("output_tokens", 0))
        usage = ModelUsage(
            input_tokens=tokens[0],
            output_tokens=tokens[1],
            total_tokens=sum(tokens),
            reasoning_tokens=sample.get("reasoning_tokens"),
            input_tokens_cache_read=sample.get("cache_read"),
            input_tokens_cache_write=sample.get("cache_write"),
            total_cost=sample.get("cost"),
        )
        eval_samples.append(
            EvalSample(
                id=sample["id"],
                epoch=int(sample.get("epoch", 1)),
                input=str(sample.get("input", "q")),
                target=str(sample["target"]),
                metadata={"level": sample["level"], "file_name": "", **sample.get("metadata", {})},
                output=ModelOutput.from_content(model, str(sample.get("answer", ""))),
                scores={
                    "gaia_scorer": Score(
                        value=sample["value"],
                        answer=sample.get("answer"),
                        metadata={
                            "answer_source": "submit",
                            **(
                                {"contamination": sample["contamination"]}
                                if sample.get("contamination")
                                else {}
                            ),
                        },
                    )
                },
                model_usage={model: usage},
                total_time=float(sample.get("working_time", 1.0)),
                working_time=float(sample.get("working_time", 1.0)),
                error=EvalError(
                    message=sample["error"],
                    traceback=sample.get("traceback", ""),
                    traceback_ansi="",
                )
                if sample.get("error")
                else None,
                limit=EvalSampleLimit(type=sample["limit"], limit=100)
                if sample.get("limit")
                else None,
                events=model_calls(),
                store=dict(sample.get("store", {})),
            )
        )
    log = EvalLog(
        status=status,
        eval=EvalSpec(
            created=created,
            task=task,
            task_id=run_id,
            task_version=task_version,
            dataset=EvalDataset(name="gaia-validation", samples=questions),
            model=model,
            config=EvalConfig(epochs=epochs, message_limit=message_limit, limit=limit),
            metadata={"gaia": gaia_record(**(params or {}))} if metadata is None else metadata,
            sandbox=sandbox,
            solver=solver,
            solver_args=solver_args,
        ),
        samples=eval_samples,
    )
    write_eval_log(log, str(path))
    return path


def dumps(value: Any) -> str:
    """Compact JSON, for building evalscope fixtures in tests."""
    return json.dumps(value, separators=(",", ":"))


def b64(path: Path) -> str:
    """A file's bytes in base64, as a data URL carries them."""
    return base64.b64encode(path.read_bytes()).decode()
