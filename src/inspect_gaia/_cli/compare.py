"""``inspect-gaia compare``: an inspect_gaia run beside an evalscope GAIA run, per question."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..contamination_report import (
    COMPARE_FLAGGED_WRONG,
    compare_flagged_wrong,
    contamination_block,
)
from ..errors import GaiaError
from ..results import (
    SampleResult,
    comparability_flags,
    comparable_settings,
    read_evalscope_run,
    read_inspect_log,
)
from ..scorer import question_scorer
from ._output import dump_json, format_option, render

SCHEMA_VERSION = 1
NO_DIFFERENCES = "no question answered differently"
SUMMARY_COLUMNS = (
    "level",
    "n",
    "inspect_acc",
    "evalscope_acc",
    "inspect_rescored",
    "evalscope_rescored",
    "agreement",
)
DISAGREEMENT_COLUMNS = (
    "task_id",
    "level",
    "target",
    "inspect_answer",
    "inspect_correct",
    "evalscope_answer",
    "evalscope_correct",
)


def _rescored(sample: SampleResult, target: str) -> bool:
    return question_scorer(sample.answer, target)[0]


def compare_runs(
    ours: list[SampleResult], theirs: list[SampleResult]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[str]]:
    """Summary rows per level (then ``all``), disagreeing questions, and ids in one run only.

    A level is always a string: ``"1"``, ``"2"``, ``"3"`` or ``"all"``.
    """
    mine = {s.task_id: s for s in ours}
    other = {s.task_id: s for s in theirs}
    joined = sorted(set(mine) & set(other), key=lambda t: (mine[t].level, t))
    only_one = sorted(set(mine) ^ set(other))
    summary: list[dict[str, Any]] = []
    levels = sorted({mine[t].level for t in joined})
    for label, ids in [
        (str(level), [t for t in joined if mine[t].level == level]) for level in levels
    ] + [("all", joined)]:
        n = len(ids)
        if n == 0:
            continue
        summary.append(
            {
                "level": label,
                "n": n,
                "inspect_acc": sum(mine[t].correct for t in ids) / n,
                "evalscope_acc": sum(other[t].correct for t in ids) / n,
                # Both answers judged by the same scorer: what remains is the agents' difference.
                "inspect_rescored": sum(_rescored(mine[t], mine[t].target) for t in ids) / n,
                "evalscope_rescored": sum(_rescored(other[t], mine[t].target) for t in ids) / n,
                "agreement": sum(mine[t].correct == other[t].correct for t in ids) / n,
            }
        )
    disagreements = [
        {
            "task_id": t,
            "level": str(mine[t].level),
            "target": mine[t].target,
            "inspect_answer": mine[t].answer,
            "inspect_correct": mine[t].correct,
            "evalscope_answer": other[t].answer,
            "evalscope_correct": other[t].correct,
        }
        for t in joined
        if mine[t].correct != other[t].correct or mine[t].answer != other[t].answer
    ]
    return summary, disagreements, only_one


@click.command()
@click.argument("inspect_log", type=click.Path(exists=True, dir_okay=False))
@click.argument("evalscope_output_dir", type=click.Path(exists=True, file_okay=False))
@format_option
@click.option(
    "--table",
    type=click.Choice(("levels", "differences")),
    default="levels",
    show_default=True,
    help="The table --format csv prints (CSV is one table per call).",
)
@click.option(
    "--epoch",
    type=int,
    default=1,
    show_default=True,
    help="Which epoch of a multi-epoch inspect run to compare (evalscope has one answer each).",
)
@click.option("--plot", type=click.Path(dir_okay=False), help="Also write a PNG bar chart here.")
@click.option(
    "--flagged-wrong",
    is_flag=True,
    help="Also give the inspect run's accuracy with every sample flagged for reading an answer "
    "source counted wrong.",
)
def compare(
    inspect_log: str,
    evalscope_output_dir: str,
    fmt: str,
    table: str,
    epoch: int,
    plot: str | None,
    flagged_wrong: bool,
) -> None:
    """Join INSPECT_LOG and an evalscope GAIA run on task id and compare them per level.

    Per level: n, each harness's accuracy, both answers re-scored with inspect_gaia's scorer (so
    a scorer difference and an agent difference separate), the agreement rate of the verdicts,
    then the questions the two answered differently. --format json prints one document with both.

    Example: inspect-gaia compare logs/gaia.eval outputs/20260101_120000 --format markdown
    """
    ours = read_inspect_log(inspect_log)
    theirs = read_evalscope_run(evalscope_output_dir)
    epochs = sorted({s.epoch for s in ours.samples})
    if epoch not in epochs:
        raise GaiaError(
            f"{inspect_log} has no epoch {epoch} — its epochs are {', '.join(map(str, epochs))}"
        )
    mine = [s for s in ours.samples if s.epoch == epoch]
    summary, disagreements, only_one = compare_runs(mine, list(theirs.samples))
    if not summary:
        raise GaiaError("the two runs share no task id — are they of the same split?")
    contamination = contamination_block(mine, graded=ours.split != "test")
    flags = comparability_flags(comparable_settings(ours)) + (
        [contamination["note"]] if contamination["note"] else []
    )
    columns: tuple[str, ...] = SUMMARY_COLUMNS
    if flagged_wrong:
        joined = {s.task_id for s in theirs.samples}
        summary = compare_flagged_wrong(summary, mine, joined)
        columns = (*SUMMARY_COLUMNS[:3], COMPARE_FLAGGED_WRONG, *SUMMARY_COLUMNS[3:])
    if fmt == "json":
        document = {
            "schema_version": SCHEMA_VERSION,
            "inspect": {
                "source": ours.source,
                "model": ours.model,
                "epoch": epoch,
                "epochs": len(epochs),
                "flags": flags,
                "contamination": contamination,
            },
            "evalscope": {"source": theirs.source, "model": theirs.model},
            "levels": summary,
            "differences": disagreements,
            "only_in_one_run": only_one,
        }
        click.echo(dump_json(document))
    elif fmt == "csv":
        rows, columns = (
            (summary, columns) if table == "levels" else (disagreements, DISAGREEMENT_COLUMNS)
        )
        click.echo(render(rows, columns, "csv"), nl=False)
    else:
        title = f"{ours.model} (inspect_gaia) vs {theirs.model} (evalscope)"
        if len(epochs) > 1:
            title += f", epoch {epoch} of {len(epochs)}"
        note = f"⚠ {'; '.join(flags)}" if flags else ""
        click.echo(render(summary, columns, fmt, title=title, note=note), nl=False)
        click.echo("")
        click.echo(
            render(
                disagreements,
                DISAGREEMENT_COLUMNS,
                fmt,
                title="Answered differently",
                empty=NO_DIFFERENCES,
            ),
            nl=False,
        )
    if only_one:
        click.echo(f"\n{len(only_one)} task id(s) in one run only: {', '.join(only_one)}", err=True)
    if plot:
        from ._plot import plot_compare

        plot_compare(summary, plot)
        click.echo(f"plot written to {Path(plot)}", err=True)
