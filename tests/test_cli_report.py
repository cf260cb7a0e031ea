"""`inspect-gaia report`: score tables of logs."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from helpers import MODEL, MiniLogs, invoke


@pytest.mark.docker
def test_report_csv(mini_logs: MiniLogs) -> None:
    code, out, _ = invoke("report", str(mini_logs.validation), "--format", "csv")
    assert code == 0
    rows = {row["level"]: row for row in csv.DictReader(io.StringIO(out))}
    assert set(rows) == {"1", "2", "3", "all"}
    assert (rows["1"]["n"], rows["1"]["accuracy"]) == ("3", "1.0000")
    assert rows["3"]["accuracy"] == "0.6667" and rows["3"]["limit_hit"] == "1"
    assert rows["all"]["n"] == "9" and rows["all"]["accuracy"] == "0.8889"
    assert float(rows["all"]["stderr"]) == pytest.approx(1 / 9, abs=1e-4)
    assert rows["all"]["model"] == MODEL


@pytest.mark.docker
def test_report_several_logs_as_markdown_and_terminal(mini_logs: MiniLogs) -> None:
    code, out, _ = invoke(
        "report", str(mini_logs.validation), str(mini_logs.test), "--format", "markdown"
    )
    assert code == 0
    assert "| model | split | level | n | accuracy | stderr | errored | limit_hit |" in out
    assert "| validation | all | 9 |" in out and "| test | all | 4 |" in out
    code, out, _ = invoke("report", str(mini_logs.validation))
    assert code == 0 and "GAIA scores" in out and "0.8889" in out


def test_report_rejects_a_non_log(tmp_path: Path) -> None:
    bogus = tmp_path / "x.eval"
    bogus.write_text("not a log")
    code, _, err = invoke("report", str(bogus))
    assert code == 1 and err.startswith("inspect-gaia: cannot read inspect log")
