"""Runs as records: evalscope output directories read, runs merged into groups."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.log import EvalResults, read_eval_log, write_eval_log

from inspect_gaia import GaiaError
from inspect_gaia.logs.evalscope import read_evalscope_run
from inspect_gaia.logs.read import read_inspect_log, read_inspect_logs
from inspect_gaia.logs.results import by_task_id, group_runs
from inspect_gaia.logs.stats import summarise
from tests.helpers import MODEL, RUN_SAMPLES, invoke, write_log
from tests.scenario import EVALSCOPE_RUN, MINI_CREW, MINI_MEMO


def test_summaries_count_failures_as_wrong(tmp_path: Path) -> None:
    run = read_inspect_log(write_log(tmp_path / "x.eval", RUN_SAMPLES))
    rows = {row.level: row for row in summarise(run.samples)}
    assert list(rows) == ["1", "2", "3", "all"]
    overall = rows["all"]
    assert (overall.questions, overall.correct, overall.errored, overall.limit_hit) == (5, 2, 1, 1)
    assert rows["1"].accuracy == 0.5 and rows["3"].accuracy == 0.0


def test_read_the_evalscope_fixture() -> None:
    run = read_evalscope_run(EVALSCOPE_RUN)
    assert run.model == "fake-gaia" and len(run.samples) == 9
    by_id = {s.task_id: s for s in run.samples}
    assert not by_id[MINI_CREW].correct and by_id[MINI_CREW].level == 2
    assert by_id[MINI_MEMO].answer == "FINAL ANSWER: Harbour Mill Renovation"
    assert sum(s.correct for s in run.samples) == 6


def test_by_task_id_reports_duplicates(tmp_path: Path) -> None:
    first = read_inspect_log(write_log(tmp_path / "1.eval", RUN_SAMPLES[:2]))
    second = read_inspect_log(write_log(tmp_path / "2.eval", RUN_SAMPLES[1:3]))
    merged, duplicates = by_task_id([first, second])
    assert set(merged) == {"a", "b", "c"} and duplicates == ["b"]


# -- groups ----------------------------------------------------------------------------------------


def test_level_logs_of_one_model_merge_into_one_group(tmp_path: Path) -> None:
    levels = [
        read_inspect_log(
            write_log(
                tmp_path / f"l{level}.eval",
                [s for s in RUN_SAMPLES if s["level"] == level],
                run_id=f"t{level}",
                params={"level": level},
                task=f"inspect_gaia/gaia_level{level}",
            )
        )
        for level in (1, 2, 3)
    ]
    whole = read_inspect_log(write_log(tmp_path / "all.eval", RUN_SAMPLES, run_id="all"))
    (group,) = group_runs(levels)
    assert len(group.runs) == 3 and group.model == MODEL
    (single,) = group_runs([whole])
    assert summarise(group.samples) == summarise(single.samples)


def test_an_eval_retry_replaces_the_errored_sample(tmp_path: Path) -> None:
    original = write_log(tmp_path / "run.eval", RUN_SAMPLES, run_id="t1", status="error")
    retried = [
        {**s, "answer": "y", "value": "C", "error": None} if s["id"] == "d" else s
        for s in RUN_SAMPLES
    ]
    retry = write_log(
        tmp_path / "retry.eval", retried, run_id="t1", created="2026-12-04T00:00:00+00:00"
    )
    for order in ([original, retry], [retry, original]):
        (group,) = group_runs(read_inspect_logs(order).runs)
        by_id = {s.task_id: s for s in group.samples}
        assert len(group.samples) == 5 and by_id["d"].correct and by_id["d"].error is None
    # a retry that errored again does not replace a sample that had not errored
    worse = [{**s, "value": "I", "error": "again"} if s["id"] == "a" else s for s in RUN_SAMPLES]
    retry2 = write_log(
        tmp_path / "retry2.eval", worse, run_id="t1", created="2026-12-05T00:00:00+00:00"
    )
    (group,) = group_runs(read_inspect_logs([original, retry2]).runs)
    assert {s.task_id: s for s in group.samples}["a"].correct


def test_two_separate_runs_of_the_same_questions_are_refused(tmp_path: Path) -> None:
    first = write_log(tmp_path / "first.eval", RUN_SAMPLES, run_id="t1")
    second = write_log(tmp_path / "second.eval", RUN_SAMPLES[:1], run_id="t2")
    with pytest.raises(GaiaError) as raised:
        group_runs(read_inspect_logs([first, second]).runs)
    message = str(raised.value)
    assert (
        "question a (epoch 1) is in both" in message and "not a run and its eval-retry" in message
    )
    assert "first.eval" in message and "second.eval" in message and "\n" not in message


@pytest.mark.parametrize(
    ("options", "differs"),
    [
        ({"params": {"max_attempts": 2}}, "max_attempts"),
        ({"params": {"python": True}}, "tools"),
        ({"params": {"multimodal": True}}, "multimodal"),
        ({"params": {"image": "python:3.12"}}, "image"),
        ({"params": {"network": False}}, "network"),
        ({"params": {"sandbox": "compose"}}, "sandbox"),
        ({"params": {"memory": "2g"}}, "memory"),
        ({"params": {"disk": "10g"}}, "disk"),
        ({"task_version": "2.0.0"}, "task_version"),
        ({"message_limit": 40}, "message_limit"),
        ({"epochs": 3}, "epochs"),
        ({"model": "openai/gpt-4o"}, "model"),
        ({"params": {"split": "test"}}, "split"),
    ],
)
def test_runs_that_differ_are_not_merged(
    tmp_path: Path, options: dict[str, Any], differs: str
) -> None:
    default = read_inspect_log(write_log(tmp_path / "a.eval", RUN_SAMPLES[:2]))
    other = read_inspect_log(write_log(tmp_path / "b.eval", RUN_SAMPLES[2:], **options))
    groups = group_runs([default, other])
    assert len(groups) == 2
    changed = {
        key for key in groups[0].settings if groups[0].settings[key] != groups[1].settings.get(key)
    }
    assert differs in changed


def test_a_cancelled_run_is_incomplete_unless_retried(tmp_path: Path) -> None:
    cancelled = write_log(tmp_path / "run.eval", RUN_SAMPLES[:2], run_id="t1", status="cancelled")
    (group,) = group_runs(read_inspect_logs([cancelled]).runs)
    assert group.incomplete == [f"{cancelled} (cancelled)"]
    retry = write_log(
        tmp_path / "retry.eval", RUN_SAMPLES, run_id="t1", created="2026-12-04T00:00:00"
    )
    (group,) = group_runs(read_inspect_logs([cancelled, retry]).runs)
    assert group.incomplete == [] and len(group.samples) == 5


def test_a_drained_run_is_incomplete_unless_retried(tmp_path: Path) -> None:
    """`inspect ctl task drain` abandons queued samples, and the log still says success."""
    drained = write_log(tmp_path / "run.eval", RUN_SAMPLES[:3], run_id="t1")
    log = read_eval_log(str(drained))
    log.results = EvalResults(total_samples=len(RUN_SAMPLES), completed_samples=3)
    write_eval_log(log, str(drained))
    (group,) = group_runs(read_inspect_logs([drained]).runs)
    assert group.incomplete == [f"{drained} (success, 2 samples not run)"]
    retry = write_log(
        tmp_path / "retry.eval", RUN_SAMPLES, run_id="t1", created="2026-12-04T00:00:00"
    )
    (group,) = group_runs(read_inspect_logs([drained, retry]).runs)
    assert group.incomplete == [] and len(group.samples) == 5


def test_one_sample_not_run_is_one_sample(tmp_path: Path) -> None:
    """Issue #50: `report` flagged `1 samples not run`."""
    drained = write_log(tmp_path / "run.eval", RUN_SAMPLES[:4], run_id="t1")
    log = read_eval_log(str(drained))
    log.results = EvalResults(total_samples=len(RUN_SAMPLES), completed_samples=4)
    write_eval_log(log, str(drained))
    code, out, _ = invoke("report", str(drained), "--format", "json")
    (group,) = json.loads(out)["groups"]
    assert code == 0 and f"{drained} (success, 1 sample not run)" in group["flags"][-1]
