"""Per-sample results of GAIA runs, from inspect logs (``read``) and EvalScope (``evalscope``).

The CLI's ``report``, ``submission`` and ``compare`` all work on these records. ``group_runs``
merges the logs of one model and one set of settings (three ``gaia_levelN`` logs, or a run and its
``inspect eval-retry``) and keeps runs that are not comparable apart; the statistics are in
``stats``.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from inspect_ai.model import ModelUsage

from ..egress.web_record import WebRequest
from ..errors import GaiaError
from ..probe.outcomes import RouteOutcome
from .comparability import Pooled, Scaffold, comparability_flags
from .coverage import coverage_flags, incomplete_runs
from .foreign import ForeignProvenance
from .provenance import GaiaProvenance, question_set_flag
from .sandbox_ran import SandboxRan

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
    model_error: str | None = None
    """The line of the error, when the sample errored on its model call (``coverage``)."""
    limit: str | None = None
    trace: str = ""
    epoch: int = 1
    usage: Mapping[str, ModelUsage] = field(default_factory=dict)
    """Tokens (and cost, when priced) per model called, as the log records them."""
    working_time: float | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    """What the log recorded of the question: level, ``file_name``, annotator metadata."""
    contamination: tuple[Any, ...] = ()
    """``Score.metadata["contamination"]``: the evidence it looked its answer up (see
    ``contamination``)."""
    web: tuple[WebRequest, ...] | None = None
    """What it requested through the run's egress proxy (``web_record``); ``None``: not
    recorded."""
    question: str = ""
    """The question as the run asked it (without the task's instructions); ``""``: not recorded."""
    judge: Mapping[str, Any] | None = None
    """The log's ``gaia_judge`` score: ``value`` (``C``/``I``/``N``), ``judge_model``,
    ``prompt_sha256`` (see ``judged.logged_verdict``)."""
    probe: tuple[RouteOutcome, ...] | None = None
    """A probe run's routes and their outcomes (``probe/outcomes.py``); ``None``: not a probe."""

    @property
    def failed(self) -> bool:
        """Errored or stopped by a limit (a limit-hit sample is still scored on its answer)."""
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
    provenance: GaiaProvenance | None = None
    """The ``gaia`` record of an inspect_gaia log; ``None`` for another harness's run."""
    foreign: ForeignProvenance | None = None
    """What an inspect_evals gaia log says of its run (it has no ``gaia`` record)."""
    scaffold: Scaffold | None = None
    """The solver that replaced the task's agent (``--solver``); ``None``: the task's own."""
    sandbox_ran: SandboxRan | None = None
    """The sandbox provider the log says ran (inspect's ``--sandbox`` may replace the task's)."""
    task_version: str = ""
    run_id: str = ""
    """inspect's task id: an ``inspect eval-retry`` of a run keeps it."""
    created: str = ""
    status: str = "success"
    epochs: int = 1
    config: dict[str, Any] = field(default_factory=dict)
    """inspect's run options that change results: limits, generation settings."""
    not_run: int = 0
    """Samples the run planned but never logged: a task drained with ``inspect ctl task drain``
    abandons its queued samples and still ends ``success``."""
    subset: bool = False
    """Run on some of its questions only (``--limit``, ``--sample-id``): a look, not a result."""
    questions: int = 0
    """The questions the task selected (inspect's dataset size, before ``--limit``); 0: unknown."""
    cancelled: int = 0
    """Samples a stop cancelled: not finished, left out of ``samples`` (see ``coverage``)."""


# -- comparability and merging -------------------------------------------------------------------


def comparable_settings(run: RunResults) -> dict[str, Any]:
    """What must be equal for two runs' samples to be pooled (see ``GaiaProvenance``).

    Raises:
        GaiaError: The run has no provenance (an evalscope run, a leaderboard file).
    """
    arguments: dict[str, Any] = {
        "model": run.model,
        "task_version": run.task_version,
        "epochs": run.epochs,
        "run_config": run.config,
        "scaffold": run.scaffold,
    }
    record: Pooled | None = run.provenance if run.provenance is not None else run.foreign
    if record is not None:
        return record.comparable_settings(**arguments, sandbox_ran=run.sandbox_ran)
    raise GaiaError(f"{run.source} is not an inspect log: it has no provenance to compare")


@dataclass(frozen=True)
class RunGroup:
    """The merged samples of runs with equal ``comparable_settings``."""

    settings: dict[str, Any]
    runs: tuple[RunResults, ...]
    samples: tuple[SampleResult, ...]
    run: str = ""
    """``run <date> <id>`` when runs of these settings in a folder asked the same questions and
    were kept apart (see ``group_runs``); empty when the settings make one group."""

    @property
    def model(self) -> str:
        """The model every run of the group evaluated."""
        return str(self.settings["model"])

    @property
    def split(self) -> str:
        """The dataset split of the group."""
        return str(self.settings["split"])

    @property
    def flags(self) -> list[str]:
        """Why the group's score is not a plain pass@1 GAIA score, and which logs may lack some.

        ``comparability_flags`` of the settings, the question set, what the group covers
        (``coverage_flags``), then the incomplete runs.
        """
        records = [run.provenance for run in self.runs if run.provenance is not None]
        question_set = question_set_flag(records, {s.task_id for s in self.samples})
        sandbox = next(
            (r.provenance.sandbox_flags(r.sandbox_ran) for r in self.runs if r.provenance), []
        )
        return (
            comparability_flags(self.settings)
            + sandbox
            + ([question_set] if question_set else [])
            + coverage_flags(self.runs, self.samples)
            + [f"incomplete run, questions may be missing: {log}" for log in self.incomplete]
        )

    @property
    def incomplete(self) -> list[str]:
        """Logs of runs that did not finish and were not retried to the end.

        Unfinished: cancelled, still started, or drained (samples never run, status success).
        """
        return incomplete_runs(self.runs)


def group_runs(runs: Sequence[RunResults], in_folder: Collection[str] = ()) -> list[RunGroup]:
    """Pool runs with equal ``comparable_settings``; one group per distinct set, in input order.

    Within a group one sample is kept per question and epoch: of a run and its ``inspect
    eval-retry`` (the same inspect task id), a sample that did not error wins over one that did,
    and otherwise the later run's. Separate runs that asked none of the same questions pool (three
    ``gaia_levelN`` runs, ``-T ids=`` shards). Taken in the order they started, a run that asks a
    question (and epoch) the runs before it answered starts a new group of the same settings, with
    its own ``run`` label, when either log was found in a folder (``in_folder``): a folder such as
    ``logs/`` collects a ``--limit`` look, a full run and a rerun of one model over a week.

    Raises:
        GaiaError: The same question and epoch is in two separate runs named one by one.
    """
    keyed: dict[str, list[RunResults]] = {}
    for run in runs:
        keyed.setdefault(json.dumps(comparable_settings(run), sort_keys=True), []).append(run)
    groups = []
    for members in keyed.values():
        settings = comparable_settings(members[0])
        pools = _separate_runs(members, frozenset(in_folder))
        for pool in pools:
            groups.append(
                RunGroup(
                    settings=settings,
                    runs=tuple(pool),
                    samples=_merged(pool),
                    run=run_label(pool) if len(pools) > 1 else "",
                )
            )
    return groups


def _separate_runs(
    members: Sequence[RunResults], in_folder: frozenset[str]
) -> list[list[RunResults]]:
    """``members`` (runs of equal settings) as pools of runs that answer each question once."""
    by_task: dict[str, list[RunResults]] = {}  # a run and its retries: one inspect task id
    for number, run in enumerate(sorted(members, key=lambda r: r.created)):
        by_task.setdefault(run.run_id or f"#{number}", []).append(run)
    pools: list[list[RunResults]] = []
    for logs in by_task.values():  # in the order the runs started
        asked = {(s.task_id, s.epoch): run for run in logs for s in run.samples}
        clash = next(
            (
                (earlier, asked[(s.task_id, s.epoch)], s)
                for earlier in (pools[-1] if pools else [])
                for s in earlier.samples
                if (s.task_id, s.epoch) in asked
            ),
            None,
        )
        if clash is None and pools:
            pools[-1].extend(logs)
            continue
        if clash is not None and not {clash[0].source, clash[1].source} & in_folder:
            earlier, later, sample = clash
            raise GaiaError(
                f"question {sample.task_id} (epoch {sample.epoch}) is in both {earlier.source} "
                f"and {later.source}, separate runs of one model and settings, not a run and "
                "its eval-retry",
                fix="name one of them, or their folder (each run is then a group)",
            )
        pools.append(list(logs))
    return pools


def _merged(runs: Sequence[RunResults]) -> tuple[SampleResult, ...]:
    """One sample per question and epoch; of a run and its retries, the one that did not error."""
    kept: dict[tuple[str, int], SampleResult] = {}
    for run in sorted(runs, key=lambda r: r.created):
        for sample in run.samples:
            previous = kept.get((sample.task_id, sample.epoch))
            if previous is None or sample.error is None or previous.error is not None:
                kept[(sample.task_id, sample.epoch)] = sample
    return tuple(kept.values())


def run_label(runs: Sequence[RunResults]) -> str:
    """``run 2026-12-05 08:54 3hX9kL2a``: when the first of ``runs`` started, and its task id.

    The id is the start of inspect's task id, which names the log file and which an eval-retry
    keeps; ``+N`` counts further runs pooled with it (``gaia_levelN`` runs, shards).
    """
    first = min(runs, key=lambda r: r.created)
    others = len({r.run_id or r.source for r in runs}) - 1
    when = first.created[:16].replace("T", " ")
    return f"run {when} {first.run_id[:8]}".rstrip() + (f" +{others}" if others else "")


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
