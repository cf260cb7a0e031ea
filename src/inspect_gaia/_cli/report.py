"""``inspect-gaia report``: accuracy, its spread and its cost per model and level, from logs.

The logs of one model and one set of settings are merged into one group (see
``results.group_runs``); groups are sorted by overall accuracy. ``--format json`` prints one
document (``report_document``), ``csv`` one table with a row per group and level.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import click

from ..errors import GaiaError
from ..logs.budget import command_budget, read_budget
from ..logs.contamination import FLAGGED_WRONG
from ..logs.latest import describe
from ..logs.latest import latest as newest_complete
from ..logs.read import read_inspect_logs
from ..logs.report import report_document
from ..logs.results import group_runs
from ..logs.stats import LevelStats, read_prices
from ..questions.named_sets import load_named_set
from ..record import default_settings
from . import _output
from ._failures import BREAKDOWN_COLUMNS, csv_rows, failures_text
from ._judge import (
    CSV_FIELDS as JUDGE_FIELDS,
)
from ._judge import (
    SET_CSV_FIELDS,
    beside_cells,
    csv_cells,
    judge_note,
    judge_options,
    judge_prompt,
    report_beside,
    say_failures,
    with_beside,
)
from ._output import MISSING, dump_json, echo_skipped, format_option, prices_option, render
from ._plot import plot_option
from ._probe import CSV_COLUMNS as PROBE_CSV_COLUMNS
from ._probe import is_probe_group, probe_csv_rows, probe_text
from ._sanitise import printable
from ._short import short_flags
from ._web import web_table

GROUP_COLUMNS = ("group", "model", "split", "task_version", "flags")
LEVEL_FIELDS = LevelStats.columns()
KEEP = ("n", "pass@1", "95% CI", "flags", "cost", "$/question", "$/correct")
"""Columns a narrow terminal drops last: how many questions, the verdict, its interval and flags,
and the cost."""
MIXED = (
    "note: the overview holds groups over different questions (n {counts}): the ones over part "
    "of their split (flagged) are ranked after the complete ones; --latest keeps the newest "
    "complete run of each"
)
NO_COST = (
    "no cost: the logs carry no prices — give them (dollars per million tokens) with "
    "`inspect-gaia report --model-cost-config prices.yaml`"
)

# -- human tables ----------------------------------------------------------------------------------


PASS_AT_1 = "pass@1"
"""The human tables' name for ``accuracy``: the mean over epochs of one answer per question."""
MAJ_AT_K = "maj@k (vote)"
"""maj@k beside pass@1, named so that a majority vote over epochs is never read as pass@1."""
VOTE_NOTE = (
    f"{PASS_AT_1}: mean over the k epochs; {MAJ_AT_K}: the most frequent answer, scored once"
)
FLAGGED_WRONG_COLUMN = "acc. (flagged wrong)"
"""``--flagged-wrong``'s column in the human tables, right after ``pass@1``."""
CSV_FIELDS = ("flagged", "refused_requests", FLAGGED_WRONG)
"""Columns ``--flagged-wrong`` adds to a CSV report."""


def with_flagged_wrong(
    rows: Sequence[dict[str, Any]], block: Mapping[str, Any], fmt: str
) -> list[dict[str, Any]]:
    """Table rows (one per level) with the flagged-wrong accuracy (and counts) added.

    Human tables get ``FLAGGED_WRONG_COLUMN`` right after ``pass@1``; CSV rows get the
    ``flagged``, ``refused_requests`` and ``FLAGGED_WRONG`` fields.
    """
    by_level = {level["level"]: level for level in block["levels"]}
    out = []
    for row in rows:
        level = by_level.get(str(row.get("level")), {})
        if fmt == "csv":
            out.append({**row, **{k: level.get(k) for k in CSV_FIELDS}})
            continue
        value = level.get(FLAGGED_WRONG)
        cell = _fraction(value)
        items = list(row.items())
        at = next((i + 1 for i, (k, _) in enumerate(items) if k == PASS_AT_1), len(items))
        out.append(dict(items[:at] + [(FLAGGED_WRONG_COLUMN, cell)] + items[at:]))
    return out


def _fraction(value: Any) -> str:
    return MISSING if value is None else f"{value:.4f}"


def _range(low: Any, high: Any) -> str:
    return MISSING if low is None or high is None else f"{low:.3f}–{high:.3f}"


def _dollars(value: Any) -> str:
    if value is None:
        return MISSING
    return f"${value:,.2f}" if value >= 10 else f"${value:.4f}"


def _number(value: Any, decimals: int = 0) -> str:
    return MISSING if value is None else f"{value:,.{decimals}f}"


def _accuracy_row(level: Mapping[str, Any]) -> dict[str, str]:
    return {
        "level": level["level"],
        "n": str(level["questions"]),
        "k": str(level["epochs"]),
        PASS_AT_1: _fraction(level["accuracy"]),
        "95% CI": _range(level["ci_low"], level["ci_high"]),
        MAJ_AT_K: _fraction(level["maj_at_k"]),
        # how samples ended, beside the accuracy they are part of: on a narrow terminal the last
        # to go
        "errored": str(level["errored"]),
        "limit_hit": str(level["limit_hit"]),
        "stderr": _fraction(level["stderr"]),
        "epoch min–max": _range(level["epoch_accuracy_min"], level["epoch_accuracy_max"]),
        "pass@k": _fraction(level["pass_at_k"]),
        "pass^k": _fraction(level["pass_hat_k"]),
        "consistent": _fraction(level["consistent"]),
    }


def _effort_row(level: Mapping[str, Any]) -> dict[str, str]:
    return {
        "level": level["level"],
        "input tokens": _number(level["input_tokens"]),
        "output tokens": _number(level["output_tokens"]),
        "reasoning": _number(level["reasoning_tokens"]),
        "cache read": _number(level["cache_read_tokens"]),
        "cache write": _number(level["cache_write_tokens"]),
        "tokens/question": _number(level["tokens_per_question"]),
        "s/question": _number(level["seconds_per_question"], 1),
        "cost": _dollars(level["cost"]),
        "$/question": _dollars(level["cost_per_question"]),
        "$/correct": _dollars(level["cost_per_correct"]),
    }


def _leaderboard_row(group: Mapping[str, Any]) -> dict[str, str]:
    overall = group["levels"][-1]
    return {
        "group": group["group"],
        "split": group["split"],
        "n": str(overall["questions"]),
        "k": str(overall["epochs"]),
        PASS_AT_1: _fraction(overall["accuracy"]),
        "95% CI": _range(overall["ci_low"], overall["ci_high"]),
        MAJ_AT_K: _fraction(overall["maj_at_k"]),
        # before the rest: on a narrow terminal, columns are dropped from the right; a few words
        # each (the sentences are under the group's own table)
        "flags": short_flags(group["flags"], group["group"]),
        "pass@k": _fraction(overall["pass_at_k"]),
        "pass^k": _fraction(overall["pass_hat_k"]),
        "tokens/question": _number(overall["tokens_per_question"]),
        "cost": _dollars(overall["cost"]),
        "$/correct": _dollars(overall["cost_per_correct"]),
    }


def _human(document: Mapping[str, Any], fmt: str, flagged_wrong: bool = False) -> str:
    probes = [g for g in document["groups"] if is_probe_group(g)]
    groups = [g for g in document["groups"] if not is_probe_group(g)]
    parts = [probe_text(group, fmt) for group in probes]
    if len(groups) > 1:
        rows = [with_beside([_leaderboard_row(g)], g, "95% CI")[0] for g in groups]
        widest: dict[str, str] = max(rows, key=len)  # a test-split group has no judge columns
        columns = list(widest)
        differ = (
            [f"groups differ in {', '.join(document['settings_differ'])}: not directly comparable"]
            if set(document["settings_differ"]) - {"model"}
            else []
        )
        judged = [document["judge"]["label"]] if document.get("judge") else []
        flagged = [c for g in groups for c in beside_cells(g, "all")]
        title = "GAIA overall, best first"
        note = "\n".join(differ + judged)
        parts.append(
            render(rows, columns, fmt, title, note, keep=KEEP, asked=flagged, score=[PASS_AT_1])
        )
    for group in groups:
        k = group["epochs"]
        title = (
            f"GAIA scores: {group['group']} — {group['split']}, {k} epoch{'s' * (k != 1)}, "
            f"{len(group['logs'])} log{'s' * (len(group['logs']) != 1)}"
        )
        rows = [_accuracy_row(level) for level in group["levels"]]
        if flagged_wrong:
            rows = with_flagged_wrong(rows, group["contamination"], fmt)
        rows = with_beside(rows, group, "95% CI")
        keep = (*KEEP, FLAGGED_WRONG_COLUMN)
        asked = tuple(beside_cells(group, "all"))  # the columns of --judge, --question-set
        beside = [group["question_set"]["note"]] if group.get("question_set") else []
        if document.get("judge"):
            beside.append(judge_note(document["judge"]))
        note = "\n".join(
            [f"⚠ {flag}" for flag in group["flags"]] + ([VOTE_NOTE] if k > 1 else []) + beside
        )
        parts.append(
            render(rows, list(rows[0]), fmt, title, note, keep=keep, asked=asked, score=[PASS_AT_1])
        )
        effort = [_effort_row(level) for level in group["levels"]]
        # in Markdown, on stderr instead (report): the document is for pasting as it is
        note = NO_COST if not group["cost_source"] and fmt == "table" else ""
        parts.append(
            render(effort, list(effort[0]), fmt, title="Cost and effort", note=note, keep=KEEP)
        )
        if group.get("web"):
            parts.append(web_table(group["web"], fmt))
    return "\n".join(parts)


def _csv_rows(document: Mapping[str, Any], flagged_wrong: bool = False) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for group in document["groups"]:
        if is_probe_group(group):
            continue
        own = [
            {**{c: group[c] for c in GROUP_COLUMNS}, **level, **csv_cells(group, level["level"])}
            for level in group["levels"]
        ]
        rows += with_flagged_wrong(own, group["contamination"], "csv") if flagged_wrong else own
    return rows


def _text(document: Mapping[str, Any], fmt: str, breakdown: bool, flagged_wrong: bool) -> str:
    """What stdout shows in ``fmt``: the JSON document, one CSV table, or the human tables."""
    if fmt == "json":
        return dump_json(document) + "\n"
    if fmt == "csv" and breakdown:
        return render(csv_rows(document), ("group", *BREAKDOWN_COLUMNS), "csv")
    if fmt == "csv" and all(is_probe_group(g) for g in document["groups"]):
        return render(probe_csv_rows(document), PROBE_CSV_COLUMNS, "csv")
    if fmt == "csv":
        columns = GROUP_COLUMNS + LEVEL_FIELDS + (CSV_FIELDS if flagged_wrong else ())
        columns += JUDGE_FIELDS if document.get("judge") else ()
        columns += SET_CSV_FIELDS if any(g.get("question_set") for g in document["groups"]) else ()
        return render(_csv_rows(document, flagged_wrong), columns, "csv")
    return _human(document, fmt, flagged_wrong) + (
        failures_text(document, fmt) if breakdown else ""
    )


@click.command()
@click.argument("logs", nargs=-1, required=True, type=click.Path(exists=True))
@format_option
@prices_option(
    "Prices in inspect's --model-cost-config format ($ per 1M tokens, per model); they "
    "replace the logs' cost for the models they name (and price --judge)."
)
@plot_option(
    "Also write a chart (PNG, SVG, PDF or JPEG, by the name's extension): accuracy per level "
    "with 95% intervals, and accuracy against cost (or tokens) with the frontier when there are "
    "several groups."
)
@click.option(
    "--breakdown",
    is_flag=True,
    help="Also show where each group fails: accuracy by attachment type, annotator steps and "
    "tools, and near misses (with --format csv: the breakdown table instead of the levels).",
)
@click.option(
    "--flagged-wrong",
    is_flag=True,
    help="Beside accuracy, also show it with every sample flagged for reading an answer source "
    "counted wrong (JSON always has it, under contamination).",
)
@click.option(
    "--latest",
    is_flag=True,
    help="Of separate runs of one model and settings in a folder, report only the newest complete "
    "one (finished, not a --limit look); each run left out is named on stderr.",
)
@click.option(
    "--question-set",
    "named_set",
    help="Also give each group's official score on a named question set (undisputed, text-103) "
    "or a set file, beside the full figure.",
)
@judge_options
@_output.max_read_option
def report(
    logs: tuple[str, ...],
    fmt: str,
    prices_file: str | None,
    plot: str | None,
    breakdown: bool,
    flagged_wrong: bool,
    latest: bool,
    named_set: str | None,
    judge_model: str | None,
    judge_prompt_file: str | None,
    judge_concurrency: int,
    max_read_gb: float | None,
) -> None:
    """Accuracy, its spread and its cost per model and level, from GAIA LOGS.

    LOGS are log files or directories of logs. Logs of one model with the same settings (three
    gaia_levelN runs, a run and its eval-retry) are merged into one table with an overall row; other
    models or settings (another solver, inspect_evals' own gaia task) are separate groups, sorted
    by overall accuracy. In a directory, separate runs of the same questions (a --limit look, then
    the full run) are separate groups labelled by run; --latest keeps the newest complete one.
    Errored samples count as wrong; a sample stopped by a limit is scored on its answer as any
    other (its submit, else its last FINAL ANSWER:); both are counted in their own columns.
    --breakdown adds accuracy by attachment type and annotator steps and tools, and the near misses
    (always in --format json). In a directory, files that are not GAIA logs (inspect_gaia's or
    inspect_evals'), or hold no finished sample, are skipped with a line on stderr.

    \b
    Example:
      inspect-gaia report logs/ --format markdown --plot gaia.png
    """
    if plot:  # before any log is read: a missing matplotlib is one line, not the end of the work
        from ._plot import require_matplotlib

        require_matplotlib()
    notes: list[str] = []
    prices = read_prices(prices_file, notes) if prices_file else None
    for line in notes:
        click.echo(printable(line, one_line=True), err=True)
    prompt = judge_prompt(judge_model, judge_prompt_file)
    named = load_named_set(named_set, "--question-set") if named_set else None
    with command_budget(read_budget(max_read_gb)):
        found = read_inspect_logs(logs)
    echo_skipped(found.skipped, found.notes)
    if not found.runs:
        raise GaiaError(
            f"no usable inspect_gaia log in {', '.join(logs)} "
            f"({len(found.skipped)} file(s) skipped)",
            fix="name inspect_gaia's logs, or the folder `inspect eval` wrote them to",
        )
    runs = found.runs
    groups = group_runs(runs, found.in_folder)
    if latest:
        groups, left_out = newest_complete(groups, key=lambda g: json.dumps(g.settings))
        for group in left_out:
            click.echo(
                printable(f"left out by --latest: {describe(group)}", one_line=True), err=True
            )
    extra, judged = report_beside(groups, named, judge_model, prompt, judge_concurrency)
    document = report_document(groups, prices, defaults=default_settings(), extra=extra)
    if judged is not None:
        say_failures(judged)
        document["judge"] = {**judged.describe(), "cost": judged.cost(prices)}
    if prices:
        called = {model for run in runs for s in run.samples for model in s.usage}
        for model in sorted(set(prices) - called):
            note = f"note: no log called {model}; its prices are unused"
            click.echo(printable(note, one_line=True), err=True)
    click.echo(_text(document, fmt, breakdown, flagged_wrong), nl=False)
    scored = [g for g in document["groups"] if not is_probe_group(g)]
    counts = sorted({g["levels"][-1]["questions"] for g in scored}, reverse=True)
    if fmt != "json" and len(counts) > 1:
        click.echo(MIXED.format(counts=", ".join(map(str, counts))), err=True)
    if fmt == "markdown" and not all(group["cost_source"] for group in scored):
        click.echo(NO_COST, err=True)
    if plot:
        from ._plot import plot_report

        plot_report({**document, "groups": scored}, plot)
        click.echo(printable(f"plot written to {Path(plot)}", one_line=True), err=True)
