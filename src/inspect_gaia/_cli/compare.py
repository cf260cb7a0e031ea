"""``inspect-gaia compare``: any two GAIA runs side by side, scored alike, with a paired test.

The reading, scoring and statistics are in ``sides``, ``comparison`` (``compare_document``, the
whole comparison as one document) and ``paired``; this module is the command and its renderers.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click

from ..errors import counted, few
from ..logs.budget import command_budget, read_budget
from ..logs.comparison import compare_document, judge_sides
from ..logs.sides import COMPARE_FLAGS, answer_key, read_side
from ..logs.stats import read_prices
from ..questions.questionset import parse_question_set
from ._judge import judge_note, judge_options, judge_prompt, judged_rows, say_failures
from ._output import (
    MISSING,
    dump_json,
    echo_skipped,
    format_option,
    max_read_option,
    prices_option,
    render,
    wrap,
)
from ._plot import plot_option
from ._sanitise import printable
from ._web import host_lines

NO_DIFFERENCES = "no question answered differently"
LEVEL_COLUMNS = (
    "level",
    "n",
    "a_accuracy",
    "b_accuracy",
    "difference",
    "ci_low",
    "ci_high",
    "p_value",
    "significant",
    "verdict",
    "test",
    "a_only",
    "b_only",
    "a_reported",
    "b_reported",
    "agreement",
    "a_lacks",
    "b_lacks",
)
FLAGGED_WRONG_COLUMNS = ("a_accuracy_flagged_wrong", "b_accuracy_flagged_wrong")
"""Columns ``--flagged-wrong`` adds after B's accuracy (JSON always has them)."""
DISAGREEMENT_COLUMNS = (
    "task_id",
    "level",
    "target",
    "a_answer",
    "a_score",
    "b_answer",
    "b_score",
)
_METHODS = {
    "mcnemar-exact": "p: exact McNemar test over the discordant questions",
    "tango-score": "95% CI: Tango's score interval for A − B",
    "paired-t": "p and 95% CI: paired t-test of the per-question differences of epoch means",
}


def _number(value: Any, signed: bool = False) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return MISSING
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def _interval(low: Any, high: Any) -> str:
    """``[-0.56, +0.56]``: compact, and one word to the table (never split over two lines)."""
    if _number(low) == MISSING or _number(high) == MISSING:
        return MISSING
    return f"[{low:+.2f}, {high:+.2f}]"


def _table_row(row: Mapping[str, Any], flagged_wrong: bool) -> dict[str, str]:
    clean = {
        "A (flagged wrong)": _number(row["a_accuracy_flagged_wrong"]),
        "B (flagged wrong)": _number(row["b_accuracy_flagged_wrong"]),
    }
    return {
        "level": row["level"],
        "n": str(row["n"]),
        "A": _number(row["a_accuracy"]),
        "B": _number(row["b_accuracy"]),
        **(clean if flagged_wrong else {}),
        "A − B": _number(row["difference"], signed=True),
        "95% CI": _interval(row["ci_low"], row["ci_high"]),
        "p": MISSING if math.isnan(row["p_value"]) else f"{row['p_value']:.3g}",
        "at 5%": row["at_5pct"],
        "A only": str(row["a_only"]),
        "B only": str(row["b_only"]),
        "A own": _number(row["a_reported"]),
        "B own": _number(row["b_reported"]),
        "agree": _number(row["agreement"]),
        "A lacks": str(row["a_lacks"]),
        "B lacks": str(row["b_lacks"]),
    }


def _notes(document: Mapping[str, Any]) -> list[str]:
    method = document["method"]
    everything = document["levels"][-1]
    lines = [
        f"overall: {document['verdict']}",
        "; ".join(_METHODS[name] for name in dict.fromkeys((method["test"], method["interval"]))),
        f"answers: {document['answers']['source']}; both sides re-scored with the official "
        "scorer (A own, B own: each harness's own verdicts)",
        f"compared on {counted(everything['n'], 'question')} both answered; "
        f"A lacks {everything['a_lacks']}, "
        f"B lacks {everything['b_lacks']}",
    ]
    if document["answers"]["question_set"]:
        lines.append(document["answers"]["question_set"])
    images = document["a"].get("image"), document["b"].get("image")
    if None not in images and images[0] != images[1]:
        lines.append(f"⚠ the runs used different images: A {images[0]}; B {images[1]}")
    for name in ("a", "b"):
        if document[name]["flags"]:
            lines.append(f"⚠ {name.upper()}: {'; '.join(document[name]['flags'])}")
    return lines + host_lines(document.get("web_hosts_differ"))


def _human(document: Mapping[str, Any], fmt: str, flagged_wrong: bool) -> str:
    a, b = document["a"], document["b"]
    title = f"A: {a['label']} vs B: {b['label']}"
    for side, name in ((a, "A"), (b, "B")):
        if side["epochs"] > 1:
            which = f"epoch {side['epoch']}" if side["epoch"] else "mean"
            title += f", {name}: {which} of {side['epochs']} epochs"
    rows = [_table_row(row, flagged_wrong) for row in document["levels"]]
    notes = _notes(document)
    keep = ("A", "B", "A − B", "95% CI", "p", "at 5%")
    if fmt == "markdown":
        levels = render(rows, list(rows[0]), fmt, title=title, note="\n\n".join(notes))
    else:  # below the terminal table, wrapped at spaces: the verdict must read as one sentence
        levels = render(rows, list(rows[0]), fmt, title=title, keep=keep) + wrap(
            printable(note) for note in notes
        )
    title = "Answered differently (scores re-scored; answers: the majority over epochs)"
    differences = document["differences"]
    if fmt == "table":  # the answers and verdicts fit 80 columns; the whole id: --format markdown
        differences = [_difference_cells(row) for row in differences]
        # of the ids shown: said only where there is a table (it ended "no question answered
        # differently" with "task ids: the first 8")
        title += f"; task ids: the first {SHORT_ID} characters" if differences else ""
    differences_table = render(
        differences,
        DISAGREEMENT_COLUMNS,
        fmt,
        title=title,
        empty=NO_DIFFERENCES,
        keep=("target", "a_answer", "a_score", "b_answer", "b_score"),
    )
    judged = ""
    if document.get("judge"):
        judge = document["judge"]
        rows = judged_rows(judge)
        note = judge_note(judge)
        title = f"Second opinion, {judge['label']} (the official scores above are the scores)"
        judged = "\n" + render(rows, list(rows[0]), fmt, title=title, note=printable(note))
    return levels + "\n" + differences_table + judged


SHORT_ID = 8
"""Characters of a task id in the terminal's differences table: enough to find it."""


def _difference_cells(row: Mapping[str, Any]) -> dict[str, Any]:
    score = {k: "" if row[k] is None else f"{row[k]:.3g}" for k in ("a_score", "b_score")}
    return {**row, "task_id": str(row["task_id"])[:SHORT_ID], **score}


def _csv(document: Mapping[str, Any], table: str, flagged_wrong: bool) -> str:
    """The one table ``--table`` names, as CSV."""
    if table != "levels":
        return render(document["differences"], DISAGREEMENT_COLUMNS, "csv")
    levels = LEVEL_COLUMNS[:4] + FLAGGED_WRONG_COLUMNS + LEVEL_COLUMNS[4:]
    return render(document["levels"], levels if flagged_wrong else LEVEL_COLUMNS, "csv")


def _text(document: Mapping[str, Any], fmt: str, table: str, flagged_wrong: bool) -> str:
    """What stdout shows in ``fmt``: the JSON document, one CSV table, or the human tables."""
    if fmt == "json":
        return dump_json(document) + "\n"
    if fmt == "csv":
        return _csv(document, table, flagged_wrong)
    return _human(document, fmt, flagged_wrong)


def _lacking(document: Mapping[str, Any]) -> list[str]:
    """A line (for stderr) per side that lacks questions the other side answered."""
    lines = []
    for name, other in (("a", "b"), ("b", "a")):
        lacking = document["only_in_one"][other]
        if lacking:
            lines.append(
                f"{name.upper()} lacks {len(lacking)} question(s) the other answered: "
                + few(lacking)
            )
    return lines


@click.command()
@click.argument("run_a", metavar="A")
@click.argument("run_b", metavar="B")
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
    default=None,
    help="Compare this epoch of multi-epoch runs (default: each question's mean over epochs).",
)
@click.option(
    "--dataset-path",
    type=click.Path(exists=True, file_okay=False),
    help="GAIA snapshot (the folder holding 2023/) whose answers score both sides (default: the "
    "snapshot a run used, else the cache of `inspect-gaia download`).",
)
@click.option(
    "--question-set",
    "named_set",
    help="A named question set (text-103) or a set file: score both sides on its questions.",
)
@click.option("--exclude", help="Task ids to leave out: a,b or a file with one id per line.")
@click.option(
    "--answers",
    type=click.Path(exists=True, dir_okay=False),
    help="Corrected answers: JSON {task_id: answer} or JSON lines; they replace the snapshot's.",
)
@plot_option(
    "Also write a chart here (PNG, SVG, PDF or JPEG, by the name's extension): accuracy per "
    "level, each with its 95% interval and n, and A − B with its interval."
)
@click.option(
    "--flagged-wrong",
    is_flag=True,
    help="Also give each inspect_gaia side's accuracy with every sample flagged for reading an "
    "answer source counted wrong (JSON always has it).",
)
@judge_options
@prices_option(
    "The judge's prices in inspect's --model-cost-config format ($ per 1M tokens), for "
    "--judge's cost in dollars."
)
@max_read_option
def compare(
    run_a: str,
    run_b: str,
    fmt: str,
    table: str,
    epoch: int | None,
    dataset_path: str | None,
    named_set: str | None,
    exclude: str | None,
    answers: str | None,
    plot: str | None,
    flagged_wrong: bool,
    judge_model: str | None,
    judge_prompt_file: str | None,
    judge_concurrency: int,
    prices_file: str | None,
    max_read_gb: float | None,
) -> None:
    """Put two GAIA runs A and B side by side on the questions both answered.

    A and B may each be: inspect_gaia logs (a file, or a folder of one model's logs, merged as
    report merges them; of several runs there, the newest complete one, named on stderr), an
    inspect_evals `gaia` log, an evalscope GAIA output folder, or a JSONL file in the leaderboard
    format (task_id, model_answer). Both are re-scored with the official
    GAIA scorer against one answer key, per level and overall; with the exact McNemar p-value and
    a 95% interval of the difference (a paired t-test with epochs), and the questions answered
    differently. --format json prints one document.

    \b
    Example:
      inspect-gaia compare logs/gaia.eval outputs/20261201_101500 --format markdown
    """
    if plot:  # before any log is read: a missing matplotlib is one line, not the end of the work
        from ._plot import require_matplotlib

        require_matplotlib()
    question_set = parse_question_set(exclude, answers, COMPARE_FLAGS, named=named_set)
    prompt = judge_prompt(judge_model, judge_prompt_file)
    prices = read_prices(prices_file) if prices_file else None
    with command_budget(read_budget(max_read_gb)):  # one for both sides
        sides = read_side(run_a), read_side(run_b)
    for name, side in zip("AB", sides, strict=True):
        echo_skipped(side.skipped)
        for line in side.chosen:  # a folder of several runs: which one this side is
            click.echo(printable(f"{name}: {line}", one_line=True), err=True)
    key = answer_key(sides, dataset_path, question_set)
    document = compare_document(*sides, key, epoch)
    if judge_model is not None and prompt is not None:
        block, run = judge_sides(*sides, key, epoch, judge_model, prompt, judge_concurrency)
        say_failures(run)
        document["judge"] = {**block, "cost": run.cost(prices)}
    click.echo(_text(document, fmt, table, flagged_wrong), nl=False)
    for line in _lacking(document):
        click.echo(printable(line, one_line=True), err=True)
    if plot:
        from ._plot import plot_compare

        plot_compare(document, plot)
        click.echo(printable(f"plot written to {Path(plot)}", one_line=True), err=True)
