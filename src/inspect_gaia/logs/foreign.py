"""Logs of inspect_evals' own ``gaia`` task, read as runs of another harness.

``inspect-gaia report`` and ``compare`` read them beside this package's logs (``read``
reads both, and keeps them in a folder of logs), as their own, labelled group
(``harness=inspect_evals``, its task version): never pooled with inspect_gaia's. They carry no
``gaia`` record; ``ForeignProvenance`` holds what their header and model calls say instead.

What is read is the same in every task version of inspect_evals' GAIA (``1.0.1``/``1.1.0``, then
``2-A``, ``3-A``, ``3-B``, ``4-C``; checked against the released sources of inspect-evals 0.3.106,
0.5.0, 0.14.0, 0.18.0 and 0.28.0): a sample's id is the GAIA task id, its target the dataset's
``Final answer``, its metadata the ``level`` (a string in the parquet layout) and the
``Annotator Metadata``; the ``gaia_scorer`` score's ``answer`` is the model's final completion (the
submission); the attachment is named only in the prompt (``/shared_files/<name>``). The test split
has no scorer: the answer is the completion.

Its default agent, for the flags: ``basic_agent`` with bash, python and the web browser (1, 2-A),
``react`` with the same tools (3-A, 3-B), ``react`` with bash, python and web_search (4-C). The
tools actually offered are read from the samples' model calls, as for a custom solver here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from inspect_ai.log import EvalLog, EvalSample

from ..errors import short
from ..questions.dataset import Split
from .comparability import Scaffold, pooled_settings
from .sandbox_ran import SandboxRan

HARNESS = "inspect_evals"
_TASKS = ("gaia", "gaia_level1", "gaia_level2", "gaia_level3")
_FILE = re.compile(r"/shared_files/(\S+?)(?=\s|$)", re.M)
_DEFAULT_AGENT = {"1": "basic_agent", "2": "basic_agent", "3": "react", "4": "react"}


def is_inspect_evals_gaia(log: EvalLog) -> bool:
    """Whether ``log`` is a run of inspect_evals' ``gaia`` task (or a level variant)."""
    metadata = log.eval.metadata or {}
    if isinstance(metadata.get("gaia"), dict):
        return False
    task = log.eval.task
    if task.rsplit("/", 1)[-1] not in _TASKS:
        return False
    return (
        task.startswith("inspect_evals/")
        or "inspect_evals" in (log.eval.packages or {})
        or "inspect_evals" in str(log.eval.task_file or "")
        or "full_task_version" in metadata
    )


def task_version(log: EvalLog) -> str:
    """The task version as inspect_evals names it: ``4-C``, or ``1.1.0`` before ``2-A``."""
    full = (log.eval.metadata or {}).get("full_task_version")
    return str(full) if full else str(log.eval.task_version)


def default_agent(version: str) -> str:
    """The default agent of an inspect_evals GAIA task version."""
    return _DEFAULT_AGENT.get(version.split("-")[0].split(".")[0], "unknown")


@dataclass(frozen=True)
class ForeignProvenance:
    """What another harness's GAIA log says of its run, in place of the ``gaia`` record."""

    harness: str
    task_version: str
    """As the harness names it (``4-C``)."""
    package_version: str | None
    agent: str
    """The task version's default agent."""
    split: Split
    levels: tuple[int, ...]
    tools: tuple[str, ...] | None
    """Offered in the samples' model calls; ``None``: no model call logged."""
    max_attempts: int

    def comparable_settings(
        self,
        *,
        model: str,
        task_version: str,
        epochs: int,
        run_config: Mapping[str, Any],
        scaffold: Scaffold | None = None,
        sandbox_ran: SandboxRan | None = None,
    ) -> dict[str, Any]:
        """What must be equal for pooling (``comparability.Pooled``).

        Another harness's settings hold none of the sandbox's (``pooled_settings``' record is
        ``None``), so the sandbox that ran (``sandbox_ran``) changes nothing here.
        """
        return pooled_settings(
            model=model,
            split=self.split,
            harness=self.harness,
            task_version=task_version,
            epochs=epochs,
            scaffold=scaffold,
            tools=self.tools,
            multimodal=False,
            max_attempts=self.max_attempts,
            run_config=run_config,
        )


def read_foreign(log: EvalLog, tools: list[str] | None) -> ForeignProvenance:
    """The provenance of an inspect_evals GAIA log (``is_inspect_evals_gaia``).

    ``tools``: offered in its samples' model calls (``scaffold.offered_tools``).

    Raises:
        ValueError: A task argument read here is not what the task takes; the message names it.
    """
    args = log.eval.task_args or {}
    attempts, split = args.get("max_attempts") or 1, args.get("split") or "validation"
    if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 1:
        raise ValueError(f"task_args.max_attempts is {short(attempts)}, not a whole number >= 1")
    splits: dict[object, Split] = {"validation": "validation", "test": "test"}
    if split not in splits:
        raise ValueError(f"task_args.split is {short(split)}, not 'validation' or 'test'")
    subset = str(args.get("subset") or "2023_all")
    task = log.eval.task.rsplit("/", 1)[-1]
    level = task[-1] if task != "gaia" else subset[-1] if subset != "2023_all" else ""
    version = task_version(log)
    return ForeignProvenance(
        harness=HARNESS,
        task_version=version,
        package_version=(log.eval.packages or {}).get("inspect_evals"),
        agent=default_agent(version),
        split=splits[split],
        levels=(int(level),) if level.isdigit() else (1, 2, 3),
        tools=None if tools is None else tuple(tools),
        max_attempts=attempts,
    )


def input_text(sample: EvalSample) -> str:
    """The text of a sample's input (its messages' text, joined)."""
    if isinstance(sample.input, str):
        return sample.input
    return "\n".join(m.text for m in sample.input if isinstance(m.text, str))


def recorded_metadata(sample: EvalSample) -> dict[str, Any]:
    """A sample's metadata, with the attachment's name added when only the prompt names it."""
    metadata = dict(sample.metadata or {})
    if "file_name" not in metadata and "Annotator Metadata" in metadata:
        match = _FILE.search(input_text(sample))
        metadata["file_name"] = match.group(1) if match else ""
    return metadata
