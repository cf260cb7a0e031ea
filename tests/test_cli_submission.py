"""`inspect-gaia submission`: the leaderboard file from test-split logs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log, write_eval_log

from tests.helpers import MiniLogs, invoke, write_log
from tests.scenario import GAIA_MINI

INSPECT_EVALS_LOG = Path(__file__).parent / "fixtures" / "inspect-evals-gaia" / "gaia-mini-4-C.eval"

MINI_TEST_IDS = {
    "d458266e-23df-591b-bd01-92ce51d255e9",
    "6d24cb8f-5443-5c24-9ac6-69bb97f0faf5",
    "f4b6e86d-4ee3-5950-8eb8-e53fe80d1f92",
    "419cdd18-608d-5453-8f6d-1d340a0b25fa",
}


@pytest.mark.docker
def test_submission_round_trip(mini_logs: MiniLogs, tmp_path: Path) -> None:
    out_file = tmp_path / "submission.jsonl"
    code, out, _ = invoke("submission", str(mini_logs.test), "-o", str(out_file))
    assert code == 0, out
    lines = [json.loads(line) for line in out_file.read_text().splitlines()]
    assert {line["task_id"] for line in lines} == MINI_TEST_IDS and len(lines) == 4
    for line in lines:
        assert set(line) == {"task_id", "model_answer", "reasoning_trace"}
        assert line["model_answer"] in {
            "0",
            "1",
        }  # files in /shared_files: its own attachment or none
        assert "[bash]" in line["reasoning_trace"] and "[submit]" in line["reasoning_trace"]


@pytest.mark.docker
def test_submission_checks_ids(mini_logs: MiniLogs, tmp_path: Path) -> None:
    out_file = tmp_path / "s.jsonl"
    code, _, err = invoke("submission", str(mini_logs.test_level2), "-o", str(out_file))
    assert code == 1 and "2 task id(s) of the test split missing" in err
    assert "d458266e-23df-591b-bd01-92ce51d255e9" in err and not out_file.exists()
    code, _, err = invoke(
        "submission", str(mini_logs.test), str(mini_logs.test_level2), "-o", str(out_file)
    )
    assert code == 1 and "answered in more than one log" in err
    code, _, err = invoke("submission", str(mini_logs.validation), "-o", str(out_file))
    assert code == 1 and "validation-split logs" in err and "--allow-validation" in err
    code, _, _ = invoke(
        "submission", str(mini_logs.validation), "-o", str(out_file), "--allow-validation"
    )
    assert code == 0 and len(out_file.read_text().splitlines()) == 9


def _test_split_log(tmp_path: Path) -> Path:
    return write_log(
        tmp_path / "test.eval",
        [{"id": "t1", "level": 1, "target": "?", "answer": "x", "value": "N"}],
        params={"split": "test"},
    )


def test_submission_refuses_oracle_retries(tmp_path: Path) -> None:
    """Issue #10 finding 5: a max_attempts=2 log was accepted without a word.

    Only a validation run can have oracle retries (the task refuses them on the test split).
    """
    log = write_log(
        tmp_path / "oracle.eval",
        [{"id": "t1", "level": 1, "target": "1", "answer": "1", "value": "C"}],
        params={"max_attempts": 2},
    )
    out_file = tmp_path / "s.jsonl"
    code, _, err = invoke("submission", str(log), "-o", str(out_file), "--allow-validation")
    assert code == 1 and err.count("\n") == 1
    assert "ran with max_attempts > 1" in err and "--allow-oracle-retries" in err
    assert not out_file.exists()


def test_submission_names_a_missing_output_directory(tmp_path: Path) -> None:
    """Issue #10 finding 7: `-o /nonexistent/dir/x.jsonl` was a traceback."""
    code, _, err = invoke(
        "submission", str(_test_split_log(tmp_path)), "-o", "/nonexistent/dir/x.jsonl"
    )
    assert code == 1
    assert err.strip() == (
        "inspect-gaia: cannot write /nonexistent/dir/x.jsonl: no directory /nonexistent/dir — "
        "create it first"
    )


def test_submission_names_a_multi_epoch_log(tmp_path: Path) -> None:
    log = write_log(
        tmp_path / "epochs.eval",
        [
            {"id": "t1", "level": 1, "target": "?", "answer": "x", "value": "N", "epoch": epoch}
            for epoch in (1, 2)
        ],
        params={"split": "test"},
    )

    multi = read_eval_log(str(log))
    multi.eval.config.epochs = 2
    write_eval_log(multi, str(log))
    code, _, err = invoke("submission", str(log), "-o", str(tmp_path / "s.jsonl"))
    assert code == 1 and "(2 epochs): the leaderboard takes one answer per question" in err


def test_submission_of_inspect_evals_logs_takes_the_ids_from_dataset_path(tmp_path: Path) -> None:
    """inspect_evals' gaia logs are read since compare (#19): they record no snapshot to check."""
    out_file = tmp_path / "s.jsonl"
    args = ("submission", str(INSPECT_EVALS_LOG), "-o", str(out_file), "--allow-validation")
    code, _, err = invoke(*args)
    assert code == 1 and err.count("\n") == 1 and not out_file.exists()
    assert "records no GAIA snapshot (a log of another harness) — pass --dataset-path" in err
    code, out, err = invoke(*args, "--dataset-path", str(GAIA_MINI))
    assert code == 0, err
    lines = [json.loads(line) for line in out_file.read_text().splitlines()]
    assert len(lines) == 9 and {"92 days"} <= {line["model_answer"] for line in lines}
    # an inspect_evals run with oracle retries is refused as ours is
    log = read_eval_log(str(INSPECT_EVALS_LOG))
    log.eval.task_args = {**log.eval.task_args, "max_attempts": 2}
    write_eval_log(log, str(tmp_path / "oracle.eval"))
    code, _, err = invoke(
        "submission", str(tmp_path / "oracle.eval"), "-o", str(out_file), "--allow-validation"
    )
    assert code == 1 and "ran with max_attempts > 1" in err
