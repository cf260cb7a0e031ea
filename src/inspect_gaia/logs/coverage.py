"""What a group of runs covers, and what it never got to: the flags that keep a ranking honest.

A folder collects a ``--limit 10`` look, a ``-T level=1`` run and the full run of one model; each
is a group of its own, and a 1-question look scoring 1.0000 used to top the full run with no mark.
``coverage_flags`` names what a group is a part of (``partial: 1 of 9 questions (--limit)``,
``level 1 only``), and a group whose every sample errored on reaching the model (no model, an
endpoint down, a refused key) says so with the command that reruns it, instead of reading as a
0.000 the harness produced. ``report`` ranks the groups that cover their split apart from those
that do not (``partial``).

The questions a run was asked are inspect's own record (the log's ``questions/dataset.samples``: the
task's questions after ``-T level``/``ids``, before ``--limit``); the levels are the run's
``GaiaProvenance``. A sample a stop cancelled is no answer at all: ``read`` leaves it out of the
samples and counts it (``CoveredRun.cancelled``), and the group is flagged incomplete.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol

from ..egress.web_record import CAME_FROM, CAUSE, OUTAGE
from .provenance import GaiaProvenance


class CoveredRun(Protocol):
    """What coverage reads of a run: a ``results.RunResults`` (a protocol: results imports us)."""

    @property
    def source(self) -> str: ...  # noqa: D102
    @property
    def provenance(self) -> GaiaProvenance | None: ...  # noqa: D102
    @property
    def subset(self) -> bool: ...  # noqa: D102
    @property
    def questions(self) -> int: ...  # noqa: D102
    @property
    def status(self) -> str: ...  # noqa: D102
    @property
    def not_run(self) -> int: ...  # noqa: D102
    @property
    def cancelled(self) -> int: ...  # noqa: D102
    @property
    def run_id(self) -> str | None: ...  # noqa: D102


class CoveredSample(Protocol):
    """What coverage reads of a sample: a ``results.SampleResult``."""

    @property
    def task_id(self) -> str: ...  # noqa: D102
    @property
    def error(self) -> str | None: ...  # noqa: D102


ALL_LEVELS = (1, 2, 3)
MODEL_UNREACHED = re.compile(
    r"APIConnectionError|APITimeoutError|AuthenticationError|PermissionDeniedError|"
    r"NotFoundError|ConnectError|Connection refused|No model specified",
)
"""A sample error that is about reaching the model, not about its question: the providers' SDK
errors for no connection, a refused key, an unknown model, and inspect's ``none`` model."""
CANCELLED = re.compile(r"^CancelledError\b")
"""inspect's message for a sample a stop cancelled (``repr`` of the cancellation)."""


def coverage_flags(runs: Sequence[CoveredRun], samples: Sequence[CoveredSample]) -> list[str]:
    """Why a group's number is not over its whole split, or not about the model at all.

    Args:
        runs: The group's runs.
        samples: The group's merged samples (one per question and epoch).
    """
    flags = []
    reached = _never_reached(runs, samples)
    if reached:
        flags.append(reached)
    outages = _outages(runs, samples)
    if outages:
        flags.append(outages)
    levels = sorted({level for run in runs if run.provenance for level in run.provenance.levels})
    if levels and tuple(levels) != ALL_LEVELS:
        flags.append(f"level{'s' * (len(levels) > 1)} {', '.join(map(str, levels))} only")
    looks = [run for run in runs if run.subset]
    if looks:
        asked = max(run.questions for run in looks)
        answered = len({s.task_id for s in samples})
        if asked > answered:
            flags.append(f"partial: {answered} of {asked} questions (--limit or --sample-id)")
    return flags


def incomplete_runs(runs: Sequence[CoveredRun]) -> list[str]:
    """The runs that did not finish and that no run of their inspect task id finished.

    Each as ``<log> (<status>[, N samples not finished][, N samples not run])``.
    """

    def unfinished(run: CoveredRun) -> bool:
        return run.status in ("started", "cancelled") or run.not_run > 0 or run.cancelled > 0

    def why(run: CoveredRun) -> str:
        counts = [(run.cancelled, "not finished"), (run.not_run, "not run")]
        return ", ".join([run.status] + [f"{n} samples {what}" for n, what in counts if n])

    finished = {r.run_id for r in runs if r.run_id and not unfinished(r)}
    return [
        f"{run.source} ({why(run)})"
        for run in runs
        if unfinished(run) and run.run_id not in finished
    ]


def partial(flags: Sequence[str]) -> bool:
    """Whether ``flags`` say a group covers part of its split, or part of its run finished."""
    return any(
        flag.startswith(("partial:", "incomplete run")) or flag.endswith(" only") for flag in flags
    )


def cancelled(message: str | None) -> bool:
    """Whether a sample's error is a stop's cancellation (the sample did not finish)."""
    return message is not None and CANCELLED.match(message) is not None


def _never_reached(runs: Sequence[CoveredRun], samples: Sequence[CoveredSample]) -> str | None:
    if not samples or not all(s.error and MODEL_UNREACHED.search(s.error) for s in samples):
        return None
    return (
        f"model never reached: {len(samples)} of {len(samples)} samples errored on it — "
        f"{_retry(runs)}"
    )


def _outages(runs: Sequence[CoveredRun], samples: Sequence[CoveredSample]) -> str | None:
    """Samples an outage of the run's egress proxy ended, and whose sandbox it followed."""
    ended = [s.error for s in samples if s.error and OUTAGE in s.error]
    if not ended:
        return None
    causes = sorted({m.group(1) for e in ended if (m := CAUSE.search(e))})
    cause = f" ({CAME_FROM}{', '.join(causes)})" if causes else ""
    return (
        f"egress proxy down: {len(ended)} sample{'s' * (len(ended) > 1)} ended{cause} — "
        f"{_retry(runs)}"
    )


def _retry(runs: Sequence[CoveredRun]) -> str:
    """The command that reruns the errored samples of ``runs``."""
    return f"inspect eval-retry {' '.join(sorted({run.source for run in runs}))}"
