"""`inspect-gaia submission`: the leaderboard file from test-split logs."""

from __future__ import annotations

import json
import os
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


FLAG = {"kind": "answer_source", "where": "call", "tool": "bash", "excerpt": "x", "url": "u"}
TEST_RUN = [
    {"id": "t1", "level": 1, "target": "?", "answer": "x", "value": "N"},
    {"id": "t2", "level": 2, "target": "?", "answer": "y", "value": "N", "contamination": [FLAG]},
]


def _ids_of(ids: list[str], tmp_path: Path) -> Path:
    """A local snapshot's test split holding just ``ids`` (the split the run is checked against)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    split = tmp_path / "snapshot" / "2023" / "test"
    split.mkdir(parents=True)
    rows = [
        {
            "task_id": task_id,
            "Question": "q",
            "Level": str(level),
            "Final answer": "?",
            "file_name": "",
            "file_path": "",
            "Annotator Metadata": {
                "Steps": "",
                "Number of steps": "",
                "How long did this take?": "",
                "Tools": "",
                "Number of tools": "",
            },
        }
        for level, task_id in enumerate(ids, 1)
    ]
    pq.write_table(pa.Table.from_pylist(rows), split / "metadata.parquet")
    return tmp_path / "snapshot"


def test_submission_refuses_flagged_samples_and_lists_them(tmp_path: Path) -> None:
    """Issue #33: a sample the run flagged for reading a known answer source was packaged."""
    snapshot = _ids_of(["t1", "t2"], tmp_path)
    log = write_log(
        tmp_path / "test.eval", TEST_RUN, params={"split": "test", "dataset_path": str(snapshot)}
    )
    out_file = tmp_path / "submission.jsonl"
    code, _, err = invoke("submission", str(log), "-o", str(out_file))
    assert code == 1 and err.count("\n") == 1 and not out_file.exists()
    assert "1 sample(s) read a known answer source or their answer off a page: t2" in err
    assert "--allow-flagged" in err
    code, out, err = invoke("submission", str(log), "-o", str(out_file), "--allow-flagged")
    assert code == 0, err
    assert len(out_file.read_text().splitlines()) == 2
    assert "1 sample(s) flagged for reading an answer source packaged (--allow-flagged): t2" in err
    note = (tmp_path / "submission.md").read_text()
    assert (
        f"wrote 2 answers to {out_file}, and what produced them to {tmp_path / 'submission.md'}"
        in out
    )
    assert (
        "samples flagged for reading an answer source, packaged with --allow-flagged: 1 (t2)"
        in note
    )


def test_the_note_beside_the_submission_says_what_produced_it(tmp_path: Path) -> None:
    snapshot = _ids_of(["t1", "t2"], tmp_path)
    log = write_log(
        tmp_path / "test.eval",
        [{**sample, "contamination": []} for sample in TEST_RUN],
        params={"split": "test", "dataset_path": str(snapshot), "python": True, "memory": "8g"},
    )
    out_file = tmp_path / "gpt.jsonl"
    code, _, err = invoke("submission", str(log), "-o", str(out_file))
    assert code == 0, err
    note = (tmp_path / "gpt.md").read_text()
    for line in (
        "# GAIA leaderboard submission: gpt.jsonl",
        "- model: openai-api/scripted/gaia-bot",
        "- split: test, 2 questions (level 1 1, level 2 1)",
        "- scaffold: inspect_gaia's agent: inspect's basic_agent with bash+submit+python",
        "- settings other than the task's defaults: tools=bash+submit+python, memory=8g",
        "- image: python:3.11 (identity not recorded), a tag, not pinned by digest",
        "- sandbox: docker",
        "- answer sources: not blocked (the sandbox could reach them)",
        "- samples flagged for reading an answer source: none",
        "- prompt template (the first user message): inspect_evals' and EvalScope's GAIA prompt:",
        "- system prompt: inspect's basic_agent default system message (inspect_ai 0.",
        f"- logs: {log}",
    ):
        assert line in note, line
    assert "inspect_gaia " in note and ", inspect_ai 0." in note


def test_submission_never_writes_over_a_log_it_was_given(tmp_path: Path) -> None:
    log = _test_split_log(tmp_path)
    before = log.read_bytes()
    code, _, err = invoke("submission", str(log), "-o", str(log))
    assert code == 1 and err.count("\n") == 1
    assert err.strip() == (
        f"inspect-gaia: {log} is one of the logs given — name another file for the submission (-o)"
    )
    assert log.read_bytes() == before


def test_submission_never_writes_through_a_hard_link_to_a_log(tmp_path: Path) -> None:
    log = _test_split_log(tmp_path)
    before = log.read_bytes()
    linked = tmp_path / "linked.jsonl"
    os.link(log, linked)
    code, _, err = invoke("submission", str(log), "-o", str(linked))
    assert code == 1 and f"{linked} is one of the logs given" in err
    assert log.read_bytes() == before


def test_submission_refuses_a_run_whose_record_it_cannot_read(tmp_path: Path) -> None:
    log = write_log(
        tmp_path / "damaged.eval",
        [{"id": "t1", "level": 1, "target": "?", "answer": "x", "value": "N"}],
        metadata={"gaia": {"schema_version": 99}},
    )
    code, _, err = invoke("submission", str(log), "-o", str(tmp_path / "s.jsonl"))
    assert code == 1 and err.count("\n") == 1
    assert "gaia.schema_version is 99, newer than this inspect_gaia reads" in err


def test_submission_refuses_runs_report_would_not_pool(tmp_path: Path) -> None:
    snapshot = _ids_of(["t1", "t2"], tmp_path)
    params: dict[str, object] = {"split": "test", "dataset_path": str(snapshot)}
    one = write_log(tmp_path / "1.eval", TEST_RUN[:1], params=params)
    two = write_log(
        tmp_path / "2.eval", [TEST_RUN[0] | {"id": "t2"}], params=params | {"python": True}
    )
    code, _, err = invoke("submission", str(one), str(two), "-o", str(tmp_path / "s.jsonl"))
    assert code == 1 and "these logs are 2 runs that report would not pool" in err


def test_submission_takes_a_folder_as_report_does(tmp_path: Path) -> None:
    """Issue #40: `submission logs/gaia-test/` was refused ("is a directory")."""
    snapshot = _ids_of(["t1", "t2"], tmp_path)
    folder = tmp_path / "logs" / "gaia-test"
    folder.mkdir(parents=True)
    answered = [{**sample, "contamination": []} for sample in TEST_RUN]
    write_log(folder / "a.eval", answered, params={"split": "test", "dataset_path": str(snapshot)})
    out_file = tmp_path / "submission.jsonl"
    code, out, err = invoke("submission", str(folder), "-o", str(out_file))
    assert code == 0, err
    assert out.startswith(f"wrote 2 answers to {out_file}")
    assert [json.loads(line)["task_id"] for line in out_file.read_text().splitlines()] == [
        "t1",
        "t2",
    ]
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, err = invoke("submission", str(empty), "-o", str(tmp_path / "s.jsonl"))
    assert code == 1 and f"no inspect logs (*.eval, *.json) in directory {empty}" in err
