"""``inspect-gaia submission``: the official GAIA leaderboard file from test-split logs.

What keeps logs off the leaderboard, and the file itself, are decided in ``leaderboard``
(``run_problems``, ``answer_problems``, ``flagged_problems``, ``submission_file``), the note beside
it in ``sidecar``; this module is the command: it reads the logs and the split's ids, turns the
first problem into its one-line error, and writes the file and its note (``<output>.md``), never
over a log it was given.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import click

from ..errors import GaiaError, GaiaSubmissionError, counted, few
from ..logs.budget import command_budget, read_budget
from ..logs.leaderboard import (
    Problem,
    answer_problems,
    flagged_ids,
    flagged_problems,
    run_problems,
    submission_file,
)
from ..logs.probe import refuse_probes
from ..logs.read import read_inspect_logs
from ..logs.results import RunResults, group_runs
from ..logs.sidecar import sidecar_text
from ..questions.dataset import gaia_dataset
from ..record import default_settings
from ._output import echo_skipped, max_read_option


def _split_ids(runs: Sequence[RunResults], split: str, dataset_path: str | None) -> list[str]:
    """The split's task ids, from the snapshot the runs recorded or ``--dataset-path``."""
    record = next((run.provenance for run in runs if run.provenance is not None), None)
    if record is not None:
        arguments = record.dataset_arguments(dataset_path)
    elif dataset_path is not None:  # another harness's logs record no snapshot
        arguments = {"dataset_path": dataset_path, "revision": None}
    else:
        raise GaiaError(
            f"{runs[0].source} records no GAIA snapshot (a log of another harness)",
            fix="pass --dataset-path with the snapshot it ran on",
        )
    dataset = gaia_dataset(split="test" if split == "test" else "validation", **arguments)
    return [str(sample.id) for sample in dataset]


def _refuse(problems: Sequence[Problem]) -> None:
    """The first problem, as the command's one-line error."""
    if problems:
        raise problems[0]


def sidecar_path(output: Path) -> Path:
    """Where the note goes: ``submission.jsonl`` -> ``submission.md``."""
    return output.with_suffix(".md") if output.suffix not in ("", ".md") else Path(f"{output}.md")


def _never_over_an_input(logs: Sequence[str], *targets: Path) -> None:
    """Refuse a target that is an input: by path, through a symlink, or a hard link (its inode)."""
    inputs = {Path(log).resolve() for log in logs}
    for target in targets:
        if target.resolve() in inputs or any(_same_file(target, log) for log in logs):
            raise GaiaError(
                f"{target} is one of the logs given",
                fix="name another file for the submission (-o)",
            )


def _same_file(target: Path, log: str) -> bool:
    try:
        return os.path.samefile(target, log)
    except OSError:  # the target does not exist yet
        return False


def _write(target: Path, text: str) -> None:
    """Write ``text`` to a new file beside ``target``, then rename it to ``target``.

    A hard link to a log is replaced, never written through.
    """
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, target)
    except OSError as ex:
        temporary.unlink(missing_ok=True)
        raise GaiaError(f"cannot write {target}: {ex.strerror or ex}") from ex


@click.command()
@click.argument("logs", nargs=-1, required=True, type=click.Path(exists=True))
@click.option(
    "-o", "--output", required=True, type=click.Path(dir_okay=False), help="JSONL file to write."
)
@click.option("--allow-validation", is_flag=True, help="Accept validation-split logs too.")
@click.option(
    "--allow-oracle-retries",
    is_flag=True,
    help="Accept logs run with max_attempts > 1 (the agent was told when it was wrong).",
)
@click.option(
    "--allow-flagged",
    is_flag=True,
    help="Package samples the run flagged for reading a known answer source too (the note beside "
    "the file lists them).",
)
@click.option(
    "--dataset-path",
    type=click.Path(exists=True, file_okay=False),
    help="GAIA snapshot to take the split's task ids from (default: the one the run used).",
)
@max_read_option
def submission(
    logs: tuple[str, ...],
    output: str,
    allow_validation: bool,
    allow_oracle_retries: bool,
    allow_flagged: bool,
    dataset_path: str | None,
    max_read_gb: float | None,
) -> None:
    """Write the GAIA leaderboard file for test-split LOGS, and a note beside it.

    One JSON object per line: task_id, model_answer, reasoning_trace. Several logs (e.g. one per
    level) are merged; every task id of the split must appear exactly once. Samples the run
    flagged for reading a known answer source are refused (--allow-flagged packages them). The
    note, OUTPUT with .md, says what produced the file (model, scaffold, settings, image, whether
    answer sources were blocked), ready to paste into the leaderboard form.

    \b
    Example: a test-split run in a log folder of its own, then its logs
      inspect eval inspect_gaia/gaia -T split=test --model openai/gpt-4o --log-dir logs/test
      inspect-gaia submission logs/test/*_gaia_*.eval -o submission.jsonl
    Or the folder, read as report reads one: inspect-gaia submission logs/test/ -o s.jsonl
    Three gaia_levelN runs instead:
      inspect-gaia submission logs/test/*_gaia-level?_*.eval -o submission.jsonl
    """
    with command_budget(read_budget(max_read_gb)):
        found = read_inspect_logs(logs)  # each file once, however often it is named
    echo_skipped(found.skipped, found.notes)
    runs = found.runs
    if not runs:
        raise GaiaSubmissionError(
            f"no usable inspect_gaia log in {', '.join(logs)}",
            fix="name the test-split logs, or the folder `inspect eval --log-dir` wrote them to",
        )
    refuse_probes(runs, "submission")
    _refuse(
        run_problems(
            runs, allow_validation=allow_validation, allow_oracle_retries=allow_oracle_retries
        )
    )
    target = Path(output)
    note = sidecar_path(target)
    _never_over_an_input(logs, target, note)
    if not target.parent.is_dir():
        raise GaiaError(
            f"cannot write {output}: no directory {target.parent}", fix="create it first"
        )
    _refuse(answer_problems(runs))  # answers given twice, before the split's ids are read
    groups = group_runs(runs, found.in_folder)
    if len(groups) > 1:
        raise GaiaSubmissionError(
            f"these logs are {len(groups)} runs that report would not pool (other models or "
            "settings: `inspect-gaia report` shows them)",
            fix="submit one run's logs",
        )
    _refuse(flagged_problems(runs, allow_flagged=allow_flagged))
    split_ids = _split_ids(runs, runs[0].split, dataset_path)
    _refuse(answer_problems(runs, split_ids))
    written = submission_file(runs, split_ids)
    flagged = flagged_ids(runs)
    _write(target, written.text)
    _write(note, sidecar_text(groups[0], target.name, flagged, written.answers, default_settings()))
    answers = counted(written.answers, "answer")
    click.echo(f"wrote {answers} to {output}, and what produced them to {note}")
    if flagged:
        click.echo(
            f"warning: {len(flagged)} sample(s) flagged for reading an answer source packaged "
            f"(--allow-flagged): {few(flagged)}",
            err=True,
        )
    if failed := written.failed:
        click.echo(
            f"warning: {len(failed)} sample(s) errored or hit a limit: {few(failed)}", err=True
        )
