"""Reading inspect_gaia's logs into runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import MODEL, write_log

from inspect_gaia import GaiaError
from inspect_gaia.inspect_logs import read_inspect_log, read_inspect_logs

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
    assert run.provenance is not None and run.provenance.limits.max_attempts == 1
    assert (run.task_version, run.epochs) == ("1.0.0", 1)


def test_read_usage_time_and_epochs(tmp_path: Path) -> None:
    samples = [
        {
            **SAMPLES[0],
            "epoch": epoch,
            "input_tokens": 1000,
            "output_tokens": 50,
            "reasoning_tokens": 30,
            "cache_read": 600,
            "cache_write": 20,
            "cost": 0.004,
            "working_time": 12.5,
        }
        for epoch in (1, 2)
    ]
    run = read_inspect_log(write_log(tmp_path / "x.eval", samples, epochs=2, run_id="t1"))
    first, second = run.samples
    assert (first.epoch, second.epoch, run.epochs, run.run_id) == (1, 2, 2, "t1")
    assert [first.tokens(k) for k in ("input", "output", "reasoning", "cache_read")] == [
        1000,
        50,
        30,
        600,
    ]
    assert (first.tokens("cache_write"), first.tokens("total"), first.cost) == (20, 1050, 0.004)
    assert first.working_time == 12.5


def test_oracle_retries_are_read_from_the_provenance(tmp_path: Path) -> None:
    run = read_inspect_log(write_log(tmp_path / "x.eval", SAMPLES, params={"max_attempts": 3}))
    assert run.provenance is not None and run.provenance.limits.max_attempts == 3


def test_read_a_directory_of_logs(tmp_path: Path) -> None:
    (tmp_path / "logs" / "nested").mkdir(parents=True)
    write_log(tmp_path / "logs" / "a.eval", SAMPLES[:2])
    write_log(tmp_path / "logs" / "nested" / "b.eval", SAMPLES[2:])
    runs = read_inspect_logs([tmp_path / "logs"])
    assert sorted(Path(run.source).name for run in runs) == ["a.eval", "b.eval"]
    assert all(Path(run.source).is_file() for run in runs)
    (tmp_path / "empty").mkdir()
    with pytest.raises(GaiaError, match="no inspect logs"):
        read_inspect_logs([tmp_path / "empty"])


def test_the_same_log_twice_is_read_once(tmp_path: Path) -> None:
    log = write_log(tmp_path / "logs" / "a.eval", SAMPLES)
    assert len(read_inspect_logs([log, tmp_path / "logs", str(log)])) == 1


def test_a_log_that_is_not_gaias_is_refused(tmp_path: Path) -> None:
    log = write_log(tmp_path / "x.eval", SAMPLES, metadata={}, task="other/task")
    with pytest.raises(GaiaError, match="is not an inspect_gaia log"):
        read_inspect_log(log)
    broken = tmp_path / "broken.eval"
    broken.write_text("not a log")
    with pytest.raises(GaiaError, match="cannot read inspect log"):
        read_inspect_log(broken)
