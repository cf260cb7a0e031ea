"""Reading runs: inspect_gaia logs and evalscope output directories, and summarising them."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from helpers import MODEL, write_log
from scenario import EVALSCOPE_RUN, MINI_CREW, MINI_MEMO

from inspect_gaia import GaiaError
from inspect_gaia.results import (
    by_task_id,
    max_attempts,
    read_evalscope_run,
    read_inspect_log,
    summarise,
)

SAMPLES = [
    {"id": "a", "level": 1, "target": "1", "answer": "1", "value": "C"},
    {"id": "b", "level": 1, "target": "2", "answer": "3", "value": "I"},
    {"id": "c", "level": 2, "target": "x", "answer": "x", "value": "C"},
    {"id": "d", "level": 2, "target": "y", "answer": "", "value": "I", "error": "boom"},
    {"id": "e", "level": 3, "target": "z", "answer": "", "value": "I", "limit": "message"},
]


def test_read_inspect_log(tmp_path: Path) -> None:
    run = read_inspect_log(write_log(tmp_path / "x.eval", SAMPLES))
    assert (run.model, run.split) == (MODEL, "validation")
    by_id = {s.task_id: s for s in run.samples}
    assert by_id["a"].correct and not by_id["b"].correct
    assert by_id["d"].error == "boom" and by_id["d"].failed
    assert by_id["e"].limit == "message" and by_id["e"].failed
    assert (by_id["c"].level, by_id["c"].answer, by_id["c"].target) == (2, "x", "x")
    assert max_attempts(run) == 1


def test_a_log_that_is_not_gaias_is_refused(tmp_path: Path) -> None:
    log = write_log(tmp_path / "x.eval", SAMPLES, task="other/task")
    from inspect_ai.log import read_eval_log, write_eval_log

    other = read_eval_log(str(log))
    other.eval.metadata = {}
    write_eval_log(other, str(log))
    with pytest.raises(GaiaError, match="is not an inspect_gaia log"):
        read_inspect_log(log)
    broken = tmp_path / "broken.eval"
    broken.write_text("not a log")
    with pytest.raises(GaiaError, match="cannot read inspect log"):
        read_inspect_log(broken)


def test_summarise_counts_failures_as_wrong(tmp_path: Path) -> None:
    run = read_inspect_log(write_log(tmp_path / "x.eval", SAMPLES))
    rows = {row.label: row for row in summarise(run.samples)}
    assert list(rows) == ["1", "2", "3", "all"]
    assert (rows["all"].n, rows["all"].correct, rows["all"].errored, rows["all"].limited) == (
        5,
        2,
        1,
        1,
    )
    assert rows["1"].accuracy == 0.5 and rows["3"].accuracy == 0.0
    # inspect's stderr: the sample standard deviation (ddof=1) over sqrt(n)
    p = 2 / 5
    expected = math.sqrt((2 * (1 - p) ** 2 + 3 * p**2) / 4 / 5)
    assert rows["all"].stderr == pytest.approx(expected)


def test_read_the_evalscope_fixture() -> None:
    run = read_evalscope_run(EVALSCOPE_RUN)
    assert run.model == "fake-gaia" and len(run.samples) == 9
    by_id = {s.task_id: s for s in run.samples}
    assert not by_id[MINI_CREW].correct and by_id[MINI_CREW].level == 2
    assert by_id[MINI_MEMO].answer == "FINAL ANSWER: Harbour Mill Renovation"
    assert sum(s.correct for s in run.samples) == 6


def test_by_task_id_reports_duplicates(tmp_path: Path) -> None:
    first = read_inspect_log(write_log(tmp_path / "1.eval", SAMPLES[:2]))
    second = read_inspect_log(write_log(tmp_path / "2.eval", SAMPLES[1:3]))
    merged, duplicates = by_task_id([first, second])
    assert set(merged) == {"a", "b", "c"} and duplicates == ["b"]


def test_oracle_retries_are_read_from_the_provenance(tmp_path: Path) -> None:
    run = read_inspect_log(
        write_log(tmp_path / "x.eval", SAMPLES, settings={"limits": {"max_attempts": 3}})
    )
    assert max_attempts(run) == 3
