"""`inspect-gaia compare`: an inspect_gaia log beside an evalscope run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from helpers import MiniLogs, dumps, invoke, write_log
from scenario import EVALSCOPE_RUN, MINI_CREW, MINI_MEMO

from inspect_gaia._cli.compare import DISAGREEMENT_COLUMNS
from inspect_gaia.results import read_evalscope_run


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
    document = json.loads(out)  # one document
    assert document["inspect"]["flags"] == [] and document["evalscope"]["model"] == "fake-gaia"
    summary = {row["level"]: row for row in document["levels"]}
    disagreements = document["differences"]
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
    assert by_id[MINI_CREW]["level"] == "2"
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
    assert code == 0 and out.startswith("level,n,inspect_acc,") and "task_id" not in out
    code, out, _ = invoke(
        "compare",
        *(str(mini_logs.validation), str(EVALSCOPE_RUN), "--format", "csv"),
        *("--table", "differences"),
    )
    assert code == 0 and out.startswith("task_id,level,target,") and "inspect_acc" not in out
    assert len(out.splitlines()) == 3


def _evalscope_as_inspect_log(path: Path, **options: Any) -> Path:
    """An inspect log answering exactly as the evalscope fixture did (the same verdicts)."""
    theirs = read_evalscope_run(EVALSCOPE_RUN)
    samples = [
        {
            "id": s.task_id,
            "level": s.level,
            "target": s.target,
            "answer": s.answer,
            "value": "C" if s.correct else "I",
        }
        for s in theirs.samples
    ]
    return write_log(path, samples, **options)


@pytest.mark.parametrize("fmt", ["table", "markdown"])
def test_no_difference_is_said_in_words(tmp_path: Path, fmt: str) -> None:
    log = _evalscope_as_inspect_log(tmp_path / "same.eval")
    code, out, _ = invoke("compare", str(log), str(EVALSCOPE_RUN), "--format", fmt)
    assert code == 0 and "no question answered differently" in out
    code, out, _ = invoke("compare", str(log), str(EVALSCOPE_RUN), "--format", "json")
    document = json.loads(out)
    assert document["differences"] == [] and document["only_in_one_run"] == []
    assert all(isinstance(row["level"], str) for row in document["levels"])
    code, out, _ = invoke(
        "compare", str(log), str(EVALSCOPE_RUN), "--format", "csv", "--table", "differences"
    )
    assert code == 0 and out.splitlines() == [",".join(DISAGREEMENT_COLUMNS)]


def test_compare_flags_oracle_retries_and_other_tools(tmp_path: Path) -> None:
    log = _evalscope_as_inspect_log(
        tmp_path / "oracle.eval",
        params={"max_attempts": 2, "python": True},
    )
    code, out, _ = invoke("compare", str(log), str(EVALSCOPE_RUN), "--format", "json")
    assert code == 0
    assert json.loads(out)["inspect"]["flags"] == [
        "oracle retries, not pass@1 (max_attempts=2)",
        "non-default tools: bash, submit, python",
    ]
    for fmt in ("table", "markdown"):
        code, out, _ = invoke("compare", str(log), str(EVALSCOPE_RUN), "--format", fmt)
        assert code == 0 and "oracle retries, not pass@1" in out


def test_compare_one_epoch_of_several(tmp_path: Path) -> None:
    theirs = read_evalscope_run(EVALSCOPE_RUN)
    samples = [
        {
            "id": s.task_id,
            "level": s.level,
            "target": s.target,
            "answer": s.answer if epoch == 1 else "something else",
            "value": ("C" if s.correct else "I") if epoch == 1 else "I",
            "epoch": epoch,
        }
        for s in theirs.samples
        for epoch in (1, 2)
    ]
    log = write_log(tmp_path / "epochs.eval", samples)
    code, out, _ = invoke("compare", str(log), str(EVALSCOPE_RUN), "--format", "json")
    document = json.loads(out)
    assert document["differences"] == [] and document["inspect"]["epochs"] == 2
    code, out, _ = invoke(
        "compare", str(log), str(EVALSCOPE_RUN), "--format", "json", "--epoch", "2"
    )
    assert len(json.loads(out)["differences"]) == 9
    code, out, _ = invoke("compare", str(log), str(EVALSCOPE_RUN), "--format", "markdown")
    assert "epoch 1 of 2" in out
    code, _, err = invoke("compare", str(log), str(EVALSCOPE_RUN), "--epoch", "3")
    assert code == 1 and err.strip() == f"inspect-gaia: {log} has no epoch 3 — its epochs are 1, 2"


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
