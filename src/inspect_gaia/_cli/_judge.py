"""``--judge`` and ``--question-set`` beside the official score, for ``report`` and ``compare``.

The options (``judge_options``), running the judge with its failures on stderr (``run_judge``), and
the cells and notes the human tables show: a column ``judge`` (its full label, ``judge: <prompt
name>, <model>``, in the note under the table) with its own interval and the count of
disagreements, and ``official on <set>``; the columns a flag asked for are the last a narrow
terminal hides. Each comes after
the official pass@1 and its interval, which stay the score: the tables are still sorted by it, and
``submission`` never reads a judge.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import click

from ..errors import GaiaError
from ..logs.coverage import partial
from ..logs.judged import DEFAULT_CONCURRENCY, JudgeRun, judge_samples, judged_block
from ..logs.results import RunGroup, SampleResult
from ..logs.subset import check_on_set, set_block
from ..model_check import check_judge
from ..questions.named_sets import NamedSet
from ..scoring.judge import JudgePrompt, load_prompt
from ._output import MISSING
from ._sanitise import printable

F = TypeVar("F", bound=Callable[..., Any])
DISAGREE = "≠ official"
"""The column counting the answers judge and official scorer grade differently."""
JUDGE_COLUMN = "judge"
"""The judged accuracy's header in the human tables: short, so that a narrow terminal keeps it;
the judge's full label (prompt and model) is in the note under the table (``judge_note``)."""


def judge_options(command: F) -> F:
    """``--judge MODEL``, ``--judge-prompt FILE`` and ``--judge-concurrency N``."""
    command = click.option(
        "--judge-concurrency",
        type=click.IntRange(1, 64),
        default=DEFAULT_CONCURRENCY,
        show_default=True,
        help="Judge calls in flight at once.",
    )(command)
    command = click.option(
        "--judge-prompt",
        "judge_prompt_file",
        type=click.Path(exists=True, dir_okay=False),
        help="The judge's prompt: a template with {question}, {gold} and {answer} that asks for "
        "GRADE: C or GRADE: I (default: this project's own; docs/comparing.md).",
    )(command)
    return click.option(
        "--judge",
        "judge_model",
        metavar="MODEL",
        help="Also grade every answer with this LLM judge (any inspect model, e.g. openai/gpt-4.1)"
        ": a second opinion shown beside the official score, never instead of it. Verdicts are "
        "cached; a log's own gaia_judge verdicts are used first.",
    )(command)


def judge_prompt(judge_model: str | None, prompt_file: str | None) -> JudgePrompt | None:
    """The prompt to judge with, or None without ``--judge``; the judge checked as ``--model`` is.

    Both before any log is read: a judge that cannot be asked (no provider in its name, an
    unknown provider, no SDK or key, an endpoint where nothing listens) costs one line, not a
    read of the logs and a failure per answer (``model_check.check_judge``).

    Raises:
        GaiaError: ``--judge-prompt`` without ``--judge``, a template without placeholders, or a
            judge that cannot be asked.
    """
    if judge_model is None:
        if prompt_file is not None:
            raise GaiaError("--judge-prompt needs a judge", fix="add --judge MODEL")
        return None
    prompt = load_prompt(prompt_file)
    check_judge(judge_model)
    return prompt


def _own_gold(sample: SampleResult) -> tuple[str, str]:
    """``report`` judges against each log's own target (as its official score does)."""
    return sample.target, sample.question


def report_beside(
    groups: list[RunGroup],
    named: NamedSet | None,
    judge_model: str | None,
    prompt: JudgePrompt | None,
    concurrency: int,
) -> tuple[Callable[[RunGroup], dict[str, Any]] | None, JudgeRun | None]:
    """What each graded group gets beside its official score, and the judging that made it.

    The answers of every group are judged in one go (one cache, one bound on calls in flight).
    """
    graded = [g for g in groups if g.split != "test"]
    for group in graded if named is not None else []:
        assert named is not None
        complete = group.split == named.split and not partial(group.flags)
        check_on_set({s.task_id for s in group.samples}, named, complete, group.model)
    run = None
    if judge_model is not None and prompt is not None:
        samples = [s for g in graded for s in g.samples]
        run = judge_samples(samples, _own_gold, judge_model, prompt, concurrency)
    if run is None and named is None:
        return None, None

    def extra(group: RunGroup) -> dict[str, Any]:
        if group.split == "test":
            return {}
        block: dict[str, Any] = {}
        if run is not None:
            judged = judged_block(group.samples, _own_gold, lambda s: s.correct, run)
            block["judge"] = {"label": run.label, **judged}
        if named is not None:
            block["question_set"] = set_block(group.samples, named)
        return block

    return extra, run


def say_failures(run: JudgeRun) -> None:
    """One stderr line per answer the judge gave no verdict on (and per cache not written)."""
    for line in run.failures:
        click.echo(printable(line, one_line=True), err=True)


def _fraction(value: Any) -> str:
    return MISSING if value is None else f"{value:.3f}"


def _interval(row: Mapping[str, Any]) -> str:
    if row.get("ci_low") is None or row.get("ci_high") is None:
        return MISSING
    return f"{row['ci_low']:.3f}–{row['ci_high']:.3f}"


def _level(block: Mapping[str, Any], level: str) -> Mapping[str, Any]:
    """The row of ``level`` in a block's ``levels`` (empty when the block has none)."""
    rows: list[Mapping[str, Any]] = block["levels"]
    return next((r for r in rows if r["level"] == level), {})


def beside_cells(group: Mapping[str, Any], level: str) -> dict[str, str]:
    """The question-set and judged cells of one row of ``group`` (a report group)."""
    cells: dict[str, str] = {}
    on_set = group.get("question_set")
    if on_set:
        row = _level(on_set, level)
        cells[on_set["label"]] = _fraction(row.get("accuracy"))
        cells[f"{on_set['name']} 95% CI"] = _interval(row)
    judged = group.get("judge")
    if judged:
        row = _level(judged, level)
        cells[JUDGE_COLUMN] = _fraction(row.get("accuracy"))
        cells["judge 95% CI"] = _interval(row)
        cells[DISAGREE] = str(row.get("disagreements", MISSING))
    return cells


def with_beside(
    rows: list[dict[str, str]], group: Mapping[str, Any], after: str
) -> list[dict[str, str]]:
    """``rows`` with ``beside_cells`` inserted right after the column ``after`` (official CI)."""
    out = []
    for row in rows:
        cells = beside_cells(group, row.get("level", "all"))
        items = list(row.items())
        at = next((i + 1 for i, (k, _) in enumerate(items) if k == after), len(items))
        out.append(dict(items[:at] + list(cells.items()) + items[at:]))
    return out


CSV_FIELDS = ("judge_accuracy", "judge_ci_low", "judge_ci_high", "judge_unjudged", "judge_disagree")
SET_CSV_FIELDS = ("set_accuracy", "set_ci_low", "set_ci_high", "set_questions")


def csv_cells(group: Mapping[str, Any], level: str) -> dict[str, Any]:
    """The judged and question-set fields of one CSV row of ``group``."""
    cells: dict[str, Any] = {}
    judged = group.get("judge")
    if judged:
        row = _level(judged, level)
        values = ("accuracy", "ci_low", "ci_high", "unjudged", "disagreements")
        cells |= {f: row.get(v) for f, v in zip(CSV_FIELDS, values, strict=True)}
    on_set = group.get("question_set")
    if on_set:
        row = _level(on_set, level)
        kept = ("accuracy", "ci_low", "ci_high", "questions")
        cells |= {f: row.get(v) for f, v in zip(SET_CSV_FIELDS, kept, strict=True)}
    return cells


def judge_note(judge: Mapping[str, Any]) -> str:
    """What judged, its prompt's hash, and its cost: one line under the tables."""
    cost = judge["cost"]
    dollars = "" if cost["dollars"] is None else f", ${cost['dollars']:.4f}"
    return (
        f"{judge['label']} (prompt sha256 {judge['prompt']['sha256'][:12]}): a second opinion; "
        f"the official score is the score. Judge cost: {cost['calls']} call(s), "
        f"{cost['cached']} cached, {cost['from_log']} from the logs, "
        f"{cost['total_tokens']:,} tokens{dollars}; disagreements listed by --format json"
    )


def judged_rows(judge: Mapping[str, Any]) -> list[dict[str, str]]:
    """``compare``'s judged table: per level, each side's accuracy, interval and disagreements."""
    rows = []
    for a, b in zip(judge["a"]["levels"], judge["b"]["levels"], strict=True):
        rows.append(
            {
                "level": a["level"],
                "n": str(a["questions"]),
                "A judged": _fraction(a["accuracy"]),
                "A 95% CI": _interval(a),
                f"A {DISAGREE}": str(a["disagreements"]),
                "B judged": _fraction(b["accuracy"]),
                "B 95% CI": _interval(b),
                f"B {DISAGREE}": str(b["disagreements"]),
                "unjudged A/B": f"{a['unjudged']}/{b['unjudged']}",
            }
        )
    return rows
