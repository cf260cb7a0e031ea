"""Reading inspect_gaia's logs: every field a reader uses is checked, and a problem is one line.

A log is a file a stranger may have made, so it is checked before inspect opens it (``files``: a
regular file, within sizes, no zip bomb). It is then read in two steps: its header first (cheap
for an ``.eval``, even a large one of another task; a ``.json`` log is read whole, because
inspect's streaming of a JSON header costs time and memory quadratic in its nesting), where the
``gaia`` record is validated as a ``GaiaProvenance``; then its samples, each with an id, a GAIA
level and no twin of the same epoch. A log that fails either step is a ``LogProblem`` naming the
file, the sample and the field. What the record cannot say is read from the log too: a solver that
replaced the agent (``scaffold``), a sandbox that replaced the task's (``sandbox_ran``).
inspect_evals' own ``gaia`` logs are read as well, as another harness's runs (``foreign``): they
have no record, and their levels are written as text.

Logs named one by one are read strictly: the first problem stops the command. A folder, such as
inspect's shared default ``logs/``, may also hold other tasks' logs, runs stopped before any sample
finished and files that are not logs at all; those are skipped, each with its reason, and the
caller says so. A run stopped before any sample finished whose ``inspect eval-retry`` is among the
logs (the same inspect task id) is the retry's predecessor and is left out without a word,
however it was named.
"""

from __future__ import annotations

import json
import os
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import unquote, urlparse

from inspect_ai.log import EvalLog, list_eval_logs, read_eval_log
from pydantic import ValidationError

from .._compat import each_eval_sample
from ..errors import GaiaError, short
from ..sandboxes.docker.config import known_to_inspect
from .budget import ReadBudget, command_budget, counter, note
from .comparability import GENERATE_OPTIONS, INSPECT_LIMITS
from .files import UnsafeFile, check_log, said_size
from .foreign import (
    ForeignProvenance,
    is_inspect_evals_gaia,
    read_foreign,
)
from .parsed import plan
from .provenance import GaiaProvenance, ProvenanceError
from .results import RunResults
from .samples import SampleProblem, SampleTally
from .sandbox_ran import read_sandbox
from .scaffold import read_scaffold

_DAMAGED = "leave this log out, or rerun the run it came from"
_UNSAFE = "leave it out: a log is a regular file within those sizes"


class LogProblem(GaiaError):
    """A log that cannot be used; ``reason`` says why without the file's name."""

    def __init__(self, path: str | Path, reason: str, fix: str = _DAMAGED) -> None:
        """The problem is ``<path>: <reason>``."""
        super().__init__(f"{path}: {reason}", fix)
        self.path = str(path)
        self.reason = reason


@dataclass(frozen=True)
class Skipped:
    """A file of a folder that was not read, and why."""

    path: str
    reason: str


@dataclass(frozen=True)
class LogsRead:
    """The runs read from files and folders, and the folders' files that were skipped."""

    runs: list[RunResults]
    skipped: list[Skipped]
    in_folder: frozenset[str] = frozenset()
    """The runs' sources found in a folder rather than named (``results.group_runs`` keeps
    separate runs of equal settings apart there, and refuses them among named files)."""
    notes: tuple[str, ...] = ()
    """What was read otherwise than asked, a line each (a sample without its transcript)."""


def read_inspect_log(path: str | Path) -> RunResults:
    """Read one inspect_gaia ``.eval``/``.json`` log (or inspect_evals' gaia log), strictly.

    Raises:
        LogProblem: The file is not an inspect log, not a GAIA log of either, damaged, or holds
            no finished sample.
    """
    with command_budget():
        run = _read(path)
    if not run.samples:
        raise _unfinished(run)
    return run


def read_inspect_logs(paths: Iterable[str | Path]) -> LogsRead:
    """Read logs, and every inspect log under any directory among ``paths``; each file once.

    A file named in ``paths`` is read strictly; a file found in a directory that cannot be used is
    skipped (see the module docstring). The result may hold no run: the caller decides.

    Raises:
        LogProblem: A file named in ``paths`` cannot be used.
        GaiaError: A directory holds no inspect log at all.
    """
    with command_budget() as budget:
        return _read_all(paths, budget)


def _read_all(paths: Iterable[str | Path], budget: ReadBudget) -> LogsRead:
    """``read_inspect_logs``, within the command's ``budget``.

    The files' own directories say what they unpack to before any is read: a folder far over the
    budget is refused at once, and the count as each is read (``check_log``) holds the rest.
    """
    files: dict[Path, tuple[str, bool]] = {}  # file -> (as shown, named on its own)

    def add(file: str, named: bool) -> None:
        key = _resolved(file)
        shown, named_before = files.get(key, (file, False))
        files[key] = (shown, named or named_before)

    for path in paths:
        if not Path(path).is_dir():
            add(str(path), named=True)
            continue
        with known_to_inspect():  # inspect reads the header of a log it cannot tell by name
            listed = list_eval_logs(str(path), recursive=True)
        found = [_shown(path, info.name) for info in listed]
        if not found:
            raise GaiaError(
                f"no inspect logs (*.eval, *.json) in directory {path}",
                fix="name the folder that `inspect eval --log-dir` wrote to (inspect's default: "
                "./logs), or log files",
            )
        for log in sorted(found):
            add(log, named=False)
    said = sum(said_size(name) for name, _ in files.values())
    noted = len(budget.notes)
    names = [name for name, _ in files.values()]
    budget.foresee(said, names[0] if len(names) == 1 else f"the {len(names)} logs given")
    runs: list[RunResults] = []
    unfinished: list[tuple[RunResults, bool]] = []
    skipped: list[Skipped] = []
    in_folder: set[str] = set()
    for shown, named in files.values():
        try:
            run = _read(shown)
        except LogProblem as ex:
            if named:
                raise
            skipped.append(Skipped(shown, ex.reason))
            continue
        if not named:
            in_folder.add(run.source)
        if run.samples:
            runs.append(run)
        else:
            unfinished.append((run, named))
    retried = {run.run_id for run in runs if run.run_id}
    for run, named in unfinished:
        if run.run_id in retried:
            continue  # a stopped run's empty log beside its eval-retry: the retry has it all
        if named:
            raise _unfinished(run)
        skipped.append(Skipped(run.source, _unfinished(run).reason))
    notes = tuple(budget.notes[noted:])
    return LogsRead(runs=runs, skipped=skipped, in_folder=frozenset(in_folder), notes=notes)


def _resolved(file: str) -> Path:
    """The file's real path, to read it once; a symlink loop is its own (``_read`` refuses it)."""
    try:
        return Path(file).resolve()
    except (RuntimeError, OSError):
        return Path(os.path.abspath(file))


def _shown(folder: str | Path, name: str) -> str:
    """A log found in ``folder`` as the user would write it: ``logs/x.eval`` for ``logs/``."""
    local = unquote(urlparse(name).path) if name.startswith("file://") else name
    try:
        return str(Path(folder) / Path(local).relative_to(Path(folder).resolve()))
    except ValueError:  # not under the folder as resolved (a remote log store): as inspect says
        return local


def _unfinished(run: RunResults) -> LogProblem:
    return LogProblem(
        run.source,
        f"no sample finished before the run stopped (status {run.status})",
        fix=f"finish it with `inspect eval-retry {run.source}`",
    )


# -- one log ---------------------------------------------------------------------------------------


def _read(path: str | Path) -> RunResults:
    """Header, provenance and samples of one log; a log with no sample is returned as it is.

    The file is opened once, without blocking, and everything after reads that open file (through
    ``/proc/self/fd``, where there is one): checked first (``files.check_log``), so a FIFO, a
    device or a zip bomb is refused before inspect reads it, and a name swapped for a FIFO after
    the check is never opened again.
    """
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError as ex:
        raise LogProblem(path, "no such file", fix="check the path") from ex
    except OSError as ex:
        raise LogProblem(path, f"cannot be read ({ex.strerror or ex})", fix=_UNSAFE) from ex
    try:
        opened = f"/proc/self/fd/{descriptor}"
        return _read_open(path, opened if os.path.exists(opened) else str(path))
    finally:
        os.close(descriptor)


def _read_open(path: str | Path, source: str) -> RunResults:
    """``_read`` of ``path``, held open as ``source``."""
    try:
        values = check_log(source, name=path, count=counter(path))
    except UnsafeFile as ex:
        raise LogProblem(path, ex.reason, fix=ex.fix or _UNSAFE) from ex
    except FileNotFoundError as ex:
        raise LogProblem(path, "no such file", fix="check the path") from ex
    # A JSON log is read whole at once: inspect streams a JSON header with a prefix per event
    # that grows with the nesting, so a deeply nested file took time and memory quadratic in it.
    whole = Path(path).suffix != ".eval"
    header = _inspect_log(path, header_only=not whole, source=source)
    try:
        # the current record: the run's, with inspect's post-eval edits (``web_archive``)
        provenance = GaiaProvenance.from_metadata(header.metadata or header.eval.metadata)
    except ProvenanceError as ex:
        raise LogProblem(path, ex.problem, ex.fix or _DAMAGED) from ex
    if provenance is None and not is_inspect_evals_gaia(header):
        raise LogProblem(
            path,
            f"not an inspect_gaia log (a log of {header.eval.task}, with no gaia task metadata)",
            fix="name inspect_gaia's logs, or a folder of logs (other tasks' are skipped there)",
        )
    # events (every model call's input: the bulk of a log) only where the tools offered are read,
    # the store only where it holds the web the samples read
    wanted = bool(header.eval.solver) or provenance is None
    recorded = provenance is not None and bool(provenance.web_record)
    skipped = (
        {"attachments"} | (set() if recorded else {"store"}) | (set() if wanted else {"events"})
    )
    tally = SampleTally(str(path), levels_as_text=provenance is None, tools=wanted)
    _tally(path, source, header if whole else None, skipped, tally, _without(path, values, skipped))
    log = header
    config = {name: getattr(log.eval.config, name) for name in INSPECT_LIMITS}
    foreign: ForeignProvenance | None = None
    if provenance is not None:
        split = provenance.split
        config["message_limit"] = config["message_limit"] or provenance.limits.message_limit
    else:
        try:
            foreign = read_foreign(log, tally.tools)
        except ValueError as ex:
            raise LogProblem(path, f"an inspect_evals gaia log whose {ex}") from ex
        split = foreign.split
    generate = log.eval.model_generate_config
    config.update(
        {k: getattr(generate, k) for k in GENERATE_OPTIONS if getattr(generate, k) is not None}
    )
    return RunResults(
        source=str(path),
        model=log.eval.model,
        split=split,
        samples=tally.results,
        provenance=provenance,
        foreign=foreign,
        scaffold=read_scaffold(log, tally.tools),
        sandbox_ran=read_sandbox(log),
        task_version=foreign.task_version if foreign else str(log.eval.task_version),
        run_id=log.eval.task_id,
        created=log.eval.created,
        status=log.status,
        epochs=log.eval.config.epochs or 1,
        config=config,
        not_run=_not_run(log, tally.read),
        subset=log.eval.config.limit is not None or log.eval.config.sample_id is not None,
        questions=log.eval.dataset.samples or 0,
        cancelled=tally.cancelled,
    )


def _without(
    path: str | Path, values: dict[str, dict[str, int]], excluded: set[str]
) -> dict[str, frozenset[str]]:
    """The fields each sample part is read without besides ``excluded`` (``parsed.plan``).

    Raises:
        LogProblem: A sample holds more than a reader parses, even without its transcript.
    """
    without = {}
    for part, counted in values.items():
        planned = plan(part, counted, excluded)
        if planned.refused:
            raise LogProblem(path, planned.refused)
        if planned.without:
            without[part] = planned.without
            note(f"note: {path}: {planned.note}")
    return without


def _tally(
    path: str | Path,
    source: str,
    whole: EvalLog | None,
    exclude: set[str],
    tally: SampleTally,
    more: dict[str, frozenset[str]],
) -> None:
    """Add the log's samples to ``tally``: from ``whole``, a log read whole, or one at a time.

    An ``.eval``'s samples are read one by one from the open file (``source``) and each is dropped
    once reduced, so the reader holds one sample at a time, however many the log has.
    """
    try:
        if whole is not None:
            for sample in whole.samples or []:
                tally.add(sample)
            whole.samples = None
            return
        each_eval_sample(source, exclude, tally.add, more)
    except SampleProblem as ex:
        raise LogProblem(path, str(ex)) from ex
    except GaiaError:
        raise
    except ValidationError as ex:  # one sample of an .eval, read on its own
        raise LogProblem(path, _invalid(ex, sample=tally.read), _DAMAGED) from ex
    except Exception as ex:  # inspect raises several types for a damaged part
        raise LogProblem(path, f"not an inspect log ({_unreadable(path, ex)})", _NOT_A_LOG) from ex


def _not_run(log: EvalLog, held: int) -> int:
    """Planned samples (questions × epochs) that the log does not hold (it holds ``held``)."""
    planned = log.results.total_samples if log.results is not None else 0
    return max(0, planned - held)


def _inspect_log(
    path: str | Path,
    *,
    header_only: bool,
    exclude: set[str] | None = None,
    source: str | None = None,
) -> EvalLog:
    """A log as inspect reads it (from ``source``: the open file), without ``exclude``'s fields."""
    kind: Literal["eval", "json"] = "eval" if Path(path).suffix == ".eval" else "json"
    try:
        with known_to_inspect():  # a config our providers wrote reads back without the task
            return read_eval_log(
                source or str(path), header_only=header_only, format=kind, exclude_fields=exclude
            )
    except ValidationError as ex:
        raise LogProblem(path, _invalid(ex), fix=_fix(ex)) from ex
    except FileNotFoundError as ex:
        raise LogProblem(path, "no such file", fix="check the path") from ex
    except Exception as ex:  # inspect raises several types for a missing or damaged log
        reason = f"not an inspect log ({_unreadable(path, ex)})"
        raise LogProblem(path, reason, _NOT_A_LOG) from ex


_NOT_A_LOG = "name inspect logs (.eval, .json) or a folder of them"


def _unreadable(path: str | Path, ex: Exception) -> str:
    """Why inspect could not read a file, in a few words (never zip's or JSON's jargon alone)."""
    if isinstance(ex, RecursionError) or "recursion" in str(ex).lower():
        return "JSON nested too deeply to read"
    if Path(path).suffix == ".eval" and (
        isinstance(ex, zipfile.BadZipFile) or "EOCD" in str(ex) or "zip" in str(ex).lower()
    ):
        return "not a zip archive, or a truncated one"
    if isinstance(ex, (json.JSONDecodeError, UnicodeDecodeError)) or "parsing" in str(ex):
        return "not JSON, or truncated JSON"
    text = str(ex).strip()
    return text.splitlines()[0][:120] if text else type(ex).__name__


def _invalid(ex: ValidationError, sample: int | None = None) -> str:
    """Why the log model refused the file (no header, or a damaged sample), in one line.

    ``sample``: the error is of one sample, read on its own after that many others.
    """
    first = ex.errors(include_url=False)[0]
    loc = [str(part) for part in first["loc"]]
    if sample is not None:
        loc = ["samples", str(sample), *loc]
    problem = "is missing" if first["type"] == "missing" else f"is {short(first['input'])}"
    if loc[:1] == ["samples"] and len(loc) > 2:
        return f"sample #{int(loc[1]) + 1} of the log: {'.'.join(loc[2:])} {problem}"
    if loc == ["eval"] and first["type"] == "missing":
        return "not an inspect log (JSON without inspect's eval header)"
    return f"not an inspect log ({'.'.join(loc) or 'the log'} {problem})"


def _fix(ex: ValidationError) -> str:
    loc = ex.errors(include_url=False)[0]["loc"]
    return _DAMAGED if loc[:1] == ("samples",) else _NOT_A_LOG
