"""`inspect-gaia compare`: an inspect_gaia log beside an evalscope run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers import MiniLogs, dumps, invoke, write_log
from scenario import EVALSCOPE_RUN, MINI_CREW, MINI_MEMO


@pytest.mark.docker
def test_compare_with_evalscope(mini_logs: MiniLogs, tmp_path: Path) -> None:
    code, out, _ = invoke(
        "compare",
        str(mini_logs.validation),
        str(EVALSCOPE_RUN),
        "--format",
        "json",
        "--plot",
        str(tmp_path / "c.png"),
    )
    assert code == 0
    summary_text, disagreements_text = out.split("\n]\n", 1)
    summary = {row["level"]: row for row in json.loads(summary_text + "\n]")}
    disagreements = json.loads(disagreements_text)
    assert summary["2"]["inspect_acc"] == 1.0
    assert summary["2"]["evalscope_acc"] == pytest.approx(2 / 3)
    assert summary["3"]["inspect_acc"] == pytest.approx(2 / 3)
    assert summary["3"]["evalscope_acc"] == pytest.approx(1 / 3)
    assert summary["all"]["n"] == 9 and summary["all"]["agreement"] == pytest.approx(7 / 9)
    # evalscope's answers re-scored with our scorer give its own verdicts: the gaps are the agents'
    # (the crew order) and the answer extraction (FINAL ANSWER: taken from a plain message).
    assert summary["all"]["evalscope_rescored"] == summary["all"]["evalscope_acc"]
    assert summary["all"]["inspect_rescored"] == summary["all"]["inspect_acc"]
    by_id = {d["task_id"]: d for d in disagreements}
    assert set(by_id) == {MINI_CREW, MINI_MEMO}
    assert by_id[MINI_CREW]["evalscope_answer"] == "Bartholomew, Ilse, Osric, Quentin"
    assert by_id[MINI_MEMO]["inspect_answer"] == "Harbour Mill Renovation"
    assert by_id[MINI_MEMO]["evalscope_answer"] == "FINAL ANSWER: Harbour Mill Renovation"
    assert (tmp_path / "c.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.docker
def test_compare_markdown_and_csv(mini_logs: MiniLogs) -> None:
    code, out, _ = invoke(
        "compare", str(mini_logs.validation), str(EVALSCOPE_RUN), "--format", "markdown"
    )
    assert code == 0
    assert (
        "| level | n | inspect_acc | evalscope_acc | inspect_rescored | evalscope_rescored | agreement |"
        in out
    )
    assert f"| {MINI_CREW} | 2 |" in out
    code, out, _ = invoke(
        "compare", str(mini_logs.validation), str(EVALSCOPE_RUN), "--format", "csv"
    )
    assert code == 0 and out.startswith("level,n,inspect_acc,")


def _log(tmp_path: Path) -> Path:
    return write_log(
        tmp_path / "ours.eval",
        [{"id": MINI_CREW, "level": 2, "target": "a", "answer": "a", "value": "C"}],
    )


def test_compare_rejects_a_non_evalscope_dir(tmp_path: Path) -> None:
    """The log is a real one, so it is the evalscope directory that is refused."""
    empty = tmp_path / "not-evalscope"
    empty.mkdir()
    code, _, err = invoke("compare", str(_log(tmp_path)), str(empty))
    assert code == 1
    assert err.strip() == (
        f"inspect-gaia: {empty} is not an evalscope GAIA output directory: no "
        "reviews/<model>/gaia_*.jsonl"
    )


def _evalscope_dir(tmp_path: Path, line: str) -> Path:
    """A copy of the evalscope fixture whose level-1 review file ends with ``line``."""
    copy = tmp_path / "evalscope"
    shutil.copytree(EVALSCOPE_RUN, copy)
    reviews = copy / "reviews" / "fake-gaia" / "gaia_2023_level1.jsonl"
    reviews.write_text(reviews.read_text() + line + "\n")
    return copy


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"index": 9, "sample_score": {"score"', "line 4: not JSON"),
        (dumps({"index": 9}), "line 4: not an evalscope GAIA review (no usable 'sample_score')"),
        (
            dumps({"index": 9, "target": "1", "sample_score": {"score": {"value": {}}}}),
            "line 4: not an evalscope GAIA review (no usable 'task_id')",
        ),
    ],
)
def test_compare_names_a_broken_evalscope_line(tmp_path: Path, line: str, message: str) -> None:
    """Issue #10 finding 7: a corrupt or key-less line was a traceback."""
    code, _, err = invoke("compare", str(_log(tmp_path)), str(_evalscope_dir(tmp_path, line)))
    assert code == 1 and err.count("\n") == 1
    assert "gaia_2023_level1.jsonl, " + message in err
