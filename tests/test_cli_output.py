"""Terminal tables fit the terminal: columns wrap, then the rightmost are left out, with a note."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.cells import cell_len

from inspect_gaia._cli._output import fit_columns, render
from tests.helpers import invoke, write_log

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
