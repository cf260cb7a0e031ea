"""Terminal tables fit the terminal: columns wrap, then columns are left out, with a note.

All-zero columns go first, verdict and cost columns last; an interval is never split; notes wrap at
spaces. `report` and `compare` are checked at 80 and 100 columns, the widths a person has.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from rich.cells import cell_len

from inspect_gaia._cli._output import fit_columns, render, wrap
from inspect_gaia.logs.evalscope import read_evalscope_run
from tests.helpers import invoke, write_log
from tests.scenario import EVALSCOPE_RUN, GAIA_MINI

COLUMNS = ["group", "accuracy", "95% CI", "tokens/question", "flags"]
ROWS = [
    {
        "group": "anthropic/claude-3-7-sonnet-latest [max_attempts=2]",
        "accuracy": 0.5333,
        "95% CI": "0.361–0.698",
        "tokens/question": "44,461",
        "flags": "oracle retries, not pass@1 (max_attempts=2)",
    },
    {"group": "openai/gpt-4o", "accuracy": 0.4, "95% CI": "0.246–0.577", "tokens/question": "9"},
]


def _lines(text: str) -> list[str]:
    return text.rstrip("\n").splitlines()


def test_a_table_that_fits_keeps_every_column_on_one_line_per_row() -> None:
    out = render(ROWS, COLUMNS, "table", width=200)
    assert "anthropic/claude-3-7-sonnet-latest [max_attempts=2]" in out
    assert "hidden" not in out and max(cell_len(line) for line in _lines(out)) < 200


@pytest.mark.parametrize("width", [100, 80, 60, 40])
def test_a_narrow_terminal_wraps_text_and_never_cuts_a_number(width: int) -> None:
    out = render(ROWS, COLUMNS, "table", title="GAIA overall", note="a note", width=width)
    assert max(cell_len(line) for line in _lines(out)) <= width
    assert "…" not in out  # nothing ellipsised
    for value in ("0.5333", "0.361–0.698", "0.4000"):
        assert value in out or "hidden at this width" in out


def test_columns_are_left_out_from_the_right_with_a_note() -> None:
    cells = [["model-name", "0.5333", "0.361–0.698", "44,461", "flagged"]]
    assert fit_columns(COLUMNS, cells, 200) == [10, 8, 11, 15, 7]
    # each cell's widest word, or its header's, is the least a column takes
    assert fit_columns(COLUMNS, cells, 40) == [10, 8, 11, None, None]
    out = render(ROWS, COLUMNS, "table", width=40)
    assert "hidden at this width: 95% CI, tokens/question, flags" in " ".join(out.split())
    # the first column stays, however narrow the terminal
    assert fit_columns(COLUMNS, cells, 5)[0] is not None


def test_report_fits_a_100_column_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    samples = [
        {
            "id": f"t{i}",
            "level": 1 + i % 3,
            "target": "4",
            "answer": "4",
            "value": "C" if i % 2 else "I",
            "input_tokens": 123456,
            "output_tokens": 7890,
        }
        for i in range(9)
    ]
    write_log(tmp_path / "a.eval", samples, model="anthropic/claude-3-7-sonnet-latest")
    write_log(tmp_path / "b.eval", samples, params={"multimodal": True})
    monkeypatch.setenv("COLUMNS", "100")
    code, out, _ = invoke("report", str(tmp_path))
    assert code == 0
    assert max(cell_len(line) for line in _lines(out)) <= 100
    assert "…" not in out
    assert "0.189–0.733" in out and "1,111,104" in out  # numbers whole


def test_all_zero_columns_go_first_and_kept_columns_last() -> None:
    columns = ["level", "accuracy", "reasoning", "cache read", "pass@k", "cost", "$/correct"]
    cells = [["1", "0.5000", "0", "0", "0.5000", "$0.2736", "$0.0912"]]
    natural = fit_columns(columns, cells, 200)
    assert None not in natural
    # at their narrowest (headers wrapped) the columns take 69: at 68 one must go
    assert fit_columns(columns, cells, 69) == [5, 8, 9, 5, 6, 7, 7]
    narrow = fit_columns(columns, cells, 68)
    assert narrow[3] is None and narrow[2] is not None  # a zero column, the rightmost, first
    keep = ("accuracy", "cost", "$/correct")
    hidden = [
        c for c, w in zip(columns, fit_columns(columns, cells, 45, keep), strict=True) if w is None
    ]
    assert hidden == ["reasoning", "cache read", "pass@k"]
    out = render([dict(zip(columns, cells[0], strict=True))], columns, "table", width=45, keep=keep)
    assert "hidden at this width: pass@k; all 0 or —: reasoning, cache read" in " ".join(
        out.split()
    )


def test_an_interval_is_one_word() -> None:
    columns = ["level", "95% CI", "notes"]
    rows = [{"level": "all", "95% CI": "[-0.56, +0.56]", "notes": "some words to wrap " * 4}]
    for width in (40, 60, 80):
        out = render(rows, columns, "table", width=width)
        assert "[-0.56, +0.56]" in out, out


def test_notes_wrap_at_spaces_to_the_width() -> None:
    line = "overall: A − B = +0.000 (95% CI -0.299 to +0.299), p = 1 over 9 questions (0 right)"
    text = wrap([line, "short"], width=40)
    lines = text.splitlines()
    assert all(cell_len(x) <= 40 for x in lines) and lines[-1] == "short"
    assert " ".join(" ".join(lines[:-1]).split()) == line  # every word whole, in order
    assert lines[1].startswith("  ")  # a continuation is indented


@pytest.mark.parametrize("width", [80, 100])
def test_report_keeps_verdicts_and_cost_at_terminal_widths(
    width: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    samples = [
        {
            "id": f"t{i}",
            "level": 1 + i % 3,
            "target": "4",
            "answer": "4",
            "value": "C" if i % 2 else "I",
            "input_tokens": 31234,
            "output_tokens": 1234,
            "cost": 0.0912,
            "working_time": 41.5,
        }
        for i in range(9)
    ]
    write_log(tmp_path / "a.eval", samples)
    write_log(tmp_path / "b.eval", samples, model="openai/gpt-4o", params={"max_attempts": 2})
    monkeypatch.setenv("COLUMNS", str(width))
    code, out, _ = invoke("report", str(tmp_path))
    assert code == 0 and max(cell_len(line) for line in _lines(out)) <= width
    effort = out.split("Cost and effort")[1].split("GAIA scores")[0]
    hidden = " ".join(effort.split("hidden at this width:")[1].split())
    assert "$0.8208" in effort and "$0.0912" in effort  # cost, $/question
    assert "cost" not in hidden and "$/" not in hidden, hidden
    assert hidden.startswith("all 0 or —: ") or "; all 0 or —: " in hidden
    assert "cache write" in hidden and "input tokens" not in hidden
    overall = out.split("GAIA scores")[0]
    assert "0.189–0.733" in overall and "$0.8208" in overall


@pytest.mark.parametrize("width", [80, 100])
def test_compare_keeps_the_verdicts_at_terminal_widths(
    width: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    theirs = read_evalscope_run(EVALSCOPE_RUN).samples
    samples = [
        {
            "id": s.task_id,
            "level": s.level,
            "target": s.target,
            "answer": s.target if i % 2 else f"probably {s.target} but I could not verify it",
            "value": "C" if i % 2 else "I",
        }
        for i, s in enumerate(theirs)
    ]
    log = write_log(tmp_path / "c.eval", samples)
    monkeypatch.setenv("COLUMNS", str(width))
    code, out, _ = invoke("compare", str(log), str(EVALSCOPE_RUN), "--dataset-path", str(GAIA_MINI))
    assert code == 0 and max(cell_len(line) for line in _lines(out)) <= width
    levels, differences = out.split("Answered differently")
    assert re.search(r"│ \[[-+]\d\.\d\d, [-+]\d\.\d\d\] +│", levels) and "at 5%" in levels
    header = differences.split("┡")[0]
    for column in ("a_answer", "a_score", "b_answer", "b_score"):
        assert column in header, differences
    notes = levels.split("┘")[-1]
    assert "right for A only" in " ".join(notes.split())  # wrapped at spaces, never mid-word
