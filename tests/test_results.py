"""Reading runs: inspect_gaia logs and evalscope output directories, and merging runs into groups."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from helpers import MODEL, write_log
from inspect_ai.log import EvalResults, read_eval_log, write_eval_log
from scenario import EVALSCOPE_RUN, MINI_CREW, MINI_MEMO

from inspect_gaia import GaiaError
from inspect_gaia.results import (
    by_task_id,
    comparability_flags,
    comparable_settings,
    group_runs,
    max_attempts,
    read_evalscope_run,
    read_inspect_log,
    read_inspect_logs,
)
from inspect_gaia.stats import summarise

SAMPLES = [
    {"id": "a", "level": 1, "target": "1", "answer": "1", "value": "C"},
    {"id": "b", "level": 1, "target": "2", "answer": "3", "value": "I"},
    {"id": "c", "level": 2, "target": "x", "answer": "x", "value": "C"},
    {"id": "d", "level": 2, "target": "y", "answer": "", "value": "I", "error": "boom"},
    {"id": "e", "level": 3, "target": "z", "answer": "", "value": "I", "limit": "message"},
]


def write_run(
    path: Path,
    samples: Sequence[dict[str, Any]],
    *,
    run_id: str = "",
    created: str = "2026-12-03T00:00:00+00:00",
    epochs: int = 1,
    message_limit: int | None = None,
    status: str = "success",
    **options: Any,
) -> Path:
    """``write_log`` plus what it does not write: inspect's task id (kept by eval-retry), the
    creation time, epochs, a --message-limit, the status, and per sample ``reasoning_tokens``,
    ``cache_read``, ``cache_write`` and ``cost`` (dollars, as inspect records a priced call).
    """
    write_log(path, samples, **options)
    log = read_eval_log(str(path))
    log.eval.task_id = run_id
    log.eval.created = created
    log.eval.config.epochs = epochs
    log.eval.config.message_limit = message_limit
    log.status = status  # type: ignore[assignment]
    for written, given in zip(log.samples or [], samples, strict=True):
        for usage in written.model_usage.values():
            usage.reasoning_tokens = given.get("reasoning_tokens")
            usage.input_tokens_cache_read = given.get("cache_read")
            usage.input_tokens_cache_write = given.get("cache_write")
            usage.total_cost = given.get("cost")
    write_eval_log(log, str(path))
    return path


def test_read_inspect_log(tmp_path: Path) -> None:
    run = read_inspect_log(write_log(tmp_path / "x.eval", SAMPLES))
    assert (run.model, run.split) == (MODEL, "validation")
    by_id = {s.task_id: s for s in run.samples}
    assert by_id["a"].correct and not by_id["b"].correct
    assert by_id["d"].error == "boom" and by_id["d"].failed
    assert by_id["e"].limit == "message" and by_id["e"].failed
    assert (by_id["c"].level, by_id["c"].answer, by_id["c"].target) == (2, "x", "x")
    assert max_attempts(run) == 1
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
    run = read_inspect_log(write_run(tmp_path / "x.eval", samples, epochs=2, run_id="t1"))
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


def test_a_log_that_is_not_gaias_is_refused(tmp_path: Path) -> None:
    log = write_log(tmp_path / "x.eval", SAMPLES, task="other/task")
    other = read_eval_log(str(log))
    other.eval.metadata = {}
    write_eval_log(other, str(log))
    with pytest.raises(GaiaError, match="is not an inspect_gaia log"):
        read_inspect_log(log)
    broken = tmp_path / "broken.eval"
    broken.write_text("not a log")
    with pytest.raises(GaiaError, match="cannot read inspect log"):
        read_inspect_log(broken)


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
    runs = read_inspect_logs([log, tmp_path / "logs", str(log)])
    assert len(runs) == 1


def test_summaries_count_failures_as_wrong(tmp_path: Path) -> None:
    run = read_inspect_log(write_log(tmp_path / "x.eval", SAMPLES))
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
    first = read_inspect_log(write_log(tmp_path / "1.eval", SAMPLES[:2]))
    second = read_inspect_log(write_log(tmp_path / "2.eval", SAMPLES[1:3]))
    merged, duplicates = by_task_id([first, second])
    assert set(merged) == {"a", "b", "c"} and duplicates == ["b"]


def test_oracle_retries_are_read_from_the_provenance(tmp_path: Path) -> None:
    run = read_inspect_log(
        write_log(tmp_path / "x.eval", SAMPLES, settings={"limits": {"max_attempts": 3}})
    )
    assert max_attempts(run) == 3


# -- groups ----------------------------------------------------------------------------------------


def test_level_logs_of_one_model_merge_into_one_group(tmp_path: Path) -> None:
    levels = [
        read_inspect_log(
            write_run(
                tmp_path / f"l{level}.eval",
                [s for s in SAMPLES if s["level"] == level],
                run_id=f"t{level}",
                settings={"levels": [level]},
                task=f"inspect_gaia/gaia_level{level}",
            )
        )
        for level in (1, 2, 3)
    ]
    whole = read_inspect_log(write_run(tmp_path / "all.eval", SAMPLES, run_id="all"))
    (group,) = group_runs(levels)
    assert len(group.runs) == 3 and group.model == MODEL
    (single,) = group_runs([whole])
    assert summarise(group.samples) == summarise(single.samples)


def test_an_eval_retry_replaces_the_errored_sample(tmp_path: Path) -> None:
    original = write_run(tmp_path / "run.eval", SAMPLES, run_id="t1", status="error")
    retried = [
        {**s, "answer": "y", "value": "C", "error": None} if s["id"] == "d" else s for s in SAMPLES
    ]
    retry = write_run(
        tmp_path / "retry.eval", retried, run_id="t1", created="2026-12-04T00:00:00+00:00"
    )
    for order in ([original, retry], [retry, original]):
        (group,) = group_runs(read_inspect_logs(order))
        by_id = {s.task_id: s for s in group.samples}
        assert len(group.samples) == 5 and by_id["d"].correct and by_id["d"].error is None
    # a retry that errored again does not replace a sample that had not errored
    worse = [{**s, "value": "I", "error": "again"} if s["id"] == "a" else s for s in SAMPLES]
    retry2 = write_run(
        tmp_path / "retry2.eval", worse, run_id="t1", created="2026-12-05T00:00:00+00:00"
    )
    (group,) = group_runs(read_inspect_logs([original, retry2]))
    assert {s.task_id: s for s in group.samples}["a"].correct


def test_two_separate_runs_of_the_same_questions_are_refused(tmp_path: Path) -> None:
    first = write_run(tmp_path / "first.eval", SAMPLES, run_id="t1")
    second = write_run(tmp_path / "second.eval", SAMPLES[:1], run_id="t2")
    with pytest.raises(GaiaError) as raised:
        group_runs(read_inspect_logs([first, second]))
    message = str(raised.value)
    assert (
        "question a (epoch 1) is in both" in message and "not a run and its eval-retry" in message
    )
    assert "first.eval" in message and "second.eval" in message and "\n" not in message


@pytest.mark.parametrize(
    ("options", "differs"),
    [
        ({"settings": {"limits": {"max_attempts": 2, "message_limit": 100}}}, "max_attempts"),
        ({"settings": {"tools": ["bash", "submit", "python"]}}, "tools"),
        ({"settings": {"multimodal": True}}, "multimodal"),
        ({"settings": {"image": "python:3.12"}}, "image"),
        ({"settings": {"network": False}}, "network"),
        ({"settings": {"sandbox": "compose"}}, "sandbox"),
        ({"task_version": "2.0.0"}, "task_version"),
        ({"message_limit": 40}, "message_limit"),
        ({"epochs": 3}, "epochs"),
        ({"model": "openai/gpt-4o"}, "model"),
        ({"settings": {"split": "test"}}, "split"),
    ],
)
def test_runs_that_differ_are_not_merged(
    tmp_path: Path, options: dict[str, Any], differs: str
) -> None:
    limits = {"max_attempts": 1, "message_limit": 100}
    default = read_inspect_log(
        write_run(tmp_path / "a.eval", SAMPLES[:2], settings={"limits": limits})
    )
    other = read_inspect_log(write_run(tmp_path / "b.eval", SAMPLES[2:], **options))
    groups = group_runs([default, other])
    assert len(groups) == 2
    changed = {
        key for key in groups[0].settings if groups[0].settings[key] != groups[1].settings.get(key)
    }
    assert differs in changed


def test_comparability_flags(tmp_path: Path) -> None:
    def flags(**options: Any) -> list[str]:
        run = read_inspect_log(write_run(tmp_path / "x.eval", SAMPLES, **options))
        return comparability_flags(comparable_settings(run))

    assert flags() == []
    assert flags(settings={"limits": {"max_attempts": 2}}) == [
        "oracle retries, not pass@1 (max_attempts=2)"
    ]
    assert flags(settings={"tools": ["bash", "submit", "web_search"]}) == [
        "non-default tools: bash, submit, web_search"
    ]
    assert flags(settings={"multimodal": True}) == ["multimodal: true"]
    assert flags(message_limit=30) == ["message limit 30 (default 100)"]


def test_a_cancelled_run_is_incomplete_unless_retried(tmp_path: Path) -> None:
    cancelled = write_run(tmp_path / "run.eval", SAMPLES[:2], run_id="t1", status="cancelled")
    (group,) = group_runs(read_inspect_logs([cancelled]))
    assert group.incomplete == [f"{cancelled} (cancelled)"]
    retry = write_run(tmp_path / "retry.eval", SAMPLES, run_id="t1", created="2026-12-04T00:00:00")
    (group,) = group_runs(read_inspect_logs([cancelled, retry]))
    assert group.incomplete == [] and len(group.samples) == 5


def test_a_drained_run_is_incomplete_unless_retried(tmp_path: Path) -> None:
    """`inspect ctl task drain` abandons queued samples, and the log still says success."""
    drained = write_run(tmp_path / "run.eval", SAMPLES[:3], run_id="t1")
    log = read_eval_log(str(drained))
    log.results = EvalResults(total_samples=len(SAMPLES), completed_samples=3)
    write_eval_log(log, str(drained))
    (group,) = group_runs(read_inspect_logs([drained]))
    assert group.incomplete == [f"{drained} (success, 2 samples not run)"]
    retry = write_run(tmp_path / "retry.eval", SAMPLES, run_id="t1", created="2026-12-04T00:00:00")
    (group,) = group_runs(read_inspect_logs([drained, retry]))
    assert group.incomplete == [] and len(group.samples) == 5
