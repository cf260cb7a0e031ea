"""``inspect-gaia submission``: the official GAIA leaderboard file from test-split logs."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import click

from ..dataset import gaia_dataset
from ..errors import GaiaError, few
from ..inspect_logs import read_inspect_logs
from ..results import RunResults, by_task_id, comparable_settings


def _split_ids(runs: Sequence[RunResults], split: str, dataset_path: str | None) -> list[str]:
    """The split's task ids, from the snapshot the runs recorded or ``--dataset-path``."""
    record = next((run.provenance for run in runs if run.provenance is not None), None)
    if record is not None:
        arguments = record.dataset_arguments(dataset_path)
    elif dataset_path is not None:  # another harness's logs record no snapshot
        arguments = {"dataset_path": dataset_path, "revision": None}
    else:
        raise GaiaError(
            f"{runs[0].source} records no GAIA snapshot (a log of another harness) — pass "
            "--dataset-path with the snapshot it ran on"
        )
    dataset = gaia_dataset(split="test" if split == "test" else "validation", **arguments)
    return [str(sample.id) for sample in dataset]


@click.command()
@click.argument("logs", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
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
    "--dataset-path",
    type=click.Path(exists=True, file_okay=False),
    help="GAIA snapshot to take the split's task ids from (default: the one the run used).",
)
def submission(
    logs: tuple[str, ...],
    output: str,
    allow_validation: bool,
    allow_oracle_retries: bool,
    dataset_path: str | None,
) -> None:
    """Write the GAIA leaderboard submission for test-split LOGS.

    One JSON object per line: task_id, model_answer, reasoning_trace. Several logs (e.g. one per
    level) are merged; every task id of the split must appear exactly once.

    \b
    Example: a test-split run in a log folder of its own, then its logs
      inspect eval inspect_gaia/gaia -T split=test --model openai/gpt-4o --log-dir logs/test
      inspect-gaia submission logs/test/*_gaia_*.eval -o submission.jsonl
    Three gaia_levelN runs instead:
      inspect-gaia submission logs/test/*_gaia-level?_*.eval -o submission.jsonl
    """
    runs = read_inspect_logs(logs).runs  # each file once, however often it is named
    splits = {run.split for run in runs}
    if len(splits) > 1:
        raise GaiaError(
            f"the logs mix splits ({', '.join(sorted(splits))}); give logs of one split"
        )
    (split,) = splits
    if split != "test" and not allow_validation:
        raise GaiaError(
            f"these are {split}-split logs; the leaderboard takes the test split "
            "(pass --allow-validation to write them anyway)"
        )
    repeated = [f"{run.source} ({run.epochs} epochs)" for run in runs if run.epochs > 1]
    if repeated:
        raise GaiaError(
            f"{', '.join(repeated)}: the leaderboard takes one answer per question — submit a "
            "single-epoch run"
        )
    oracle = [run.source for run in runs if comparable_settings(run)["max_attempts"] > 1]
    if oracle and not allow_oracle_retries:
        raise GaiaError(
            f"{', '.join(oracle)} ran with max_attempts > 1: the agent was told when an answer was "
            "wrong, so these are not pass@1 answers (pass --allow-oracle-retries to write them)"
        )
    target = Path(output)
    if not target.parent.is_dir():
        raise GaiaError(f"cannot write {output}: no directory {target.parent} — create it first")
    merged, duplicates = by_task_id(runs)
    if duplicates:
        twice = sorted(set(duplicates))
        raise GaiaError(
            f"{len(twice)} task id(s) answered in more than one log: {few(twice)} — give each "
            "question's log once (a run and its eval-retry: the retry's log alone)"
        )
    expected = _split_ids(runs, split, dataset_path)
    missing = [task_id for task_id in expected if task_id not in merged]
    if missing:
        raise GaiaError(
            f"{len(missing)} task id(s) of the {split} split missing: {few(missing)} — give the "
            "logs that answer them too (every level's), or run them"
        )
    unknown = sorted(set(merged) - set(expected))
    if unknown:
        raise GaiaError(
            f"{len(unknown)} task id(s) not in the {split} split: {few(unknown)} — are these logs "
            "of another snapshot? Pass --dataset-path with the one they ran on"
        )

    lines = [
        json.dumps(
            {
                "task_id": task_id,
                "model_answer": merged[task_id].answer or "",
                "reasoning_trace": merged[task_id].trace,
            },
            ensure_ascii=False,
        )
        for task_id in expected
    ]
    try:
        target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    except OSError as ex:
        raise GaiaError(f"cannot write {output}: {ex.strerror or ex}") from ex
    failed = [t for t in expected if merged[t].failed]
    click.echo(f"wrote {len(lines)} answers to {output}")
    if failed:
        click.echo(
            f"warning: {len(failed)} sample(s) errored or hit a limit: {few(failed)}",
            err=True,
        )
