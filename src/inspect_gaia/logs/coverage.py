"""What a group of runs covers, and what it never got to: the flags that keep a ranking honest.

A folder collects a ``--limit 10`` look, a ``-T level=1`` run and the full run of one model; each is
a group of its own, and a 1-question look scoring 1.0000 used to top the full run with no mark.
``coverage_flags`` names what a group is a part of (``partial: 1 of 9 questions (--limit)``, ``level
1 only``), and a group whose every sample errored on its model call (no model, an endpoint down, a
refused key, a server that answers only errors) says so, with the first error's line and the command
that reruns it, instead of reading as a 0.000 the harness produced. ``report`` ranks the groups that
cover their split apart from those that do not (``partial``).

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
from ..errors import counted
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
    @property
    def model_error(self) -> str | None: ...  # noqa: D102


ALL_LEVELS = (1, 2, 3)
MODEL_ERROR_CLASSES = (
    *("APIConnectionError", "APITimeoutError", "APIStatusError", "APIResponseValidationError"),
    *("AuthenticationError", "PermissionDeniedError", "NotFoundError", "BadRequestError"),
    *("RateLimitError", "InternalServerError", "UnprocessableEntityError", "ConflictError"),
    *("ServiceUnavailableError", "OverloadedError", "ConnectError", "ConnectTimeout"),
    *("ReadTimeout", "RemoteProtocolError"),
)
"""The providers' SDK errors (OpenAI's and Anthropic's share these names) and httpx's connection
errors: each names a failed model call, never a question's own trouble."""
MODEL_ERROR = re.compile(
    rf"\b(?:{'|'.join(MODEL_ERROR_CLASSES)})\b|Connection refused|No model specified"
)
"""A sample error that names a failed model call: one of ``MODEL_ERROR_CLASSES`` as a whole name
(``NotFoundError``, never the end of ``ModuleNotFoundError`` or ``FileNotFoundError``), a refused
connection, or inspect's ``none`` model."""
MODEL_CALL = re.compile(r'inspect_ai[/\\]model[/\\]_model\.py", line \d+, in _?generate\b')
"""A frame of inspect's ``Model.generate`` in a sample's traceback: the error came out of a model
call, whatever its class (a 501 from the wrong server, an overloaded server's 5xx)."""
_RAISED = re.compile(r"^((?:\w+\.)*\w+(?:Error|Exception|Timeout)\w*: \S.*)$", re.MULTILINE)
"""The line an exception prints (``openai.InternalServerError: Error code: 501 - …``); the first
of a chained traceback is its root cause."""
TRACEBACK_READ = 200_000
"""Characters of a traceback searched (a hostile log's may be longer)."""
ERROR_LINE = 160
"""Characters of the error's line a flag quotes."""
CANCELLED = re.compile(r"^CancelledError\b")
"""inspect's message for a sample a stop cancelled (``repr`` of the cancellation)."""


def coverage_flags(runs: Sequence[CoveredRun], samples: Sequence[CoveredSample]) -> list[str]:
    """Why a group's number is not over its whole split, or not about the model at all.

    Args:
        runs: The group's runs.
        samples: The group's merged samples (one per question and epoch).
    """
    flags = []
    failed = _never_answered(runs, samples)
    if failed:
        flags.append(failed)
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
        said = [f"{counted(n, 'sample')} {what}" for n, what in counts if n]
        return ", ".join([run.status, *said])

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


def model_call_error(message: str | None, traceback: str = "") -> str | None:
    """The line saying why a sample's model call failed, when its error was one; else ``None``.

    A model call's error: the traceback passes through inspect's ``Model.generate``
    (``MODEL_CALL``), or the message names a model error (``MODEL_ERROR``; a log without a
    traceback). The line is the traceback's first exception line (the root cause), else the
    message's first line.
    """
    if not message or cancelled(message):
        return None
    head = traceback[:TRACEBACK_READ]
    if not (MODEL_ERROR.search(message) or MODEL_CALL.search(head)):
        return None
    raised = _RAISED.search(head)
    line = raised.group(1) if raised else (message.strip().splitlines() or [""])[0]
    return line.strip()[:ERROR_LINE]


def _never_answered(runs: Sequence[CoveredRun], samples: Sequence[CoveredSample]) -> str | None:
    """Every sample of the group errored on its model call: not a score of the model at all."""
    if not samples or not all(s.model_error for s in samples):
        return None
    return (
        f"model calls failed: {len(samples)} of {len(samples)} samples errored on their model "
        f"call ({samples[0].model_error}) — {_retry(runs)}"
    )


def _outages(runs: Sequence[CoveredRun], samples: Sequence[CoveredSample]) -> str | None:
    """Samples an outage of the run's egress proxy ended, and the sandbox that held it then."""
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
