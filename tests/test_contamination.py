"""Contamination in `report` and `compare`: counts per level, evidence, the one line, and the
accuracy with flagged samples counted wrong, against values computed by hand."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest

from inspect_gaia.answer_sources.sources import load_answer_sources
from inspect_gaia.logs.evalscope import read_evalscope_run
from tests.helpers import gaia_record, invoke, write_log
from tests.scenario import EVALSCOPE_RUN, GAIA_MINI


def _flag(kind: str, where: str = "call", **evidence: Any) -> dict[str, Any]:
    return {"kind": kind, "tool": "bash", "message": 2, "where": where, **evidence}


MIRROR = _flag(
    "answer_source", url="https://hf.co/datasets/gaia-benchmark/GAIA", source="GAIA on Hugging Face"
)
LISTING = _flag("question_with_answer", "result", excerpt="… How many arches … Answer: 41")
TASK_ID = _flag("dataset_reference", excerpt="e-task-id", source="this sample's task id")
REFUSED = [
    _flag("refused", url="https://modelscope.cn/datasets/AI-ModelScope/GAIA"),
    _flag("refused", "result", url="https://modelscope.cn/datasets/AI-ModelScope/GAIA"),
    _flag("refused", "result", url="https://hf.co/datasets/gaia-benchmark/GAIA"),
]

# a: right, read a mirror        b: right, clean        c: wrong, read a listing
# d: right, refused twice        e: right, named its task id        f: wrong, clean
SAMPLES = [
    {"id": "a", "level": 1, "target": "1", "answer": "1", "value": "C", "contamination": [MIRROR]},
    {"id": "b", "level": 1, "target": "2", "answer": "2", "value": "C"},
    {"id": "c", "level": 1, "target": "3", "answer": "4", "value": "I", "contamination": [LISTING]},
    {"id": "d", "level": 2, "target": "x", "answer": "x", "value": "C", "contamination": REFUSED},
    {"id": "e", "level": 2, "target": "y", "answer": "y", "value": "C", "contamination": [TASK_ID]},
    {"id": "f", "level": 3, "target": "z", "answer": "q", "value": "I"},
]
# by hand: plain 2/3, 2/2, 0/1 and 4/6; flagged (a, c, e) counted wrong: 1/3, 1/2, 0/1 and 2/6
PLAIN = {"1": 2 / 3, "2": 1.0, "3": 0.0, "all": 4 / 6}
STRICT = {"1": 1 / 3, "2": 1 / 2, "3": 0.0, "all": 2 / 6}
FLAGGED = {"1": 2, "2": 1, "3": 0, "all": 3}
NOTE = (
    "3 samples read a known answer source or their answer off a page (1 a known answer source, "
    "1 their question with its answer on a page, 1 the dataset or their task id; evidence in "
    "--format json); the egress proxy refused 2 requests to answer sources in 1 sample"
)


def _report(path: Path, *args: str) -> tuple[int, str]:
    code, out, err = invoke("report", str(path), *args)
    assert code == 0, err
    return code, out


def test_report_counts_flagged_samples_per_level_with_their_evidence(tmp_path: Path) -> None:
    log = write_log(tmp_path / "run.eval", SAMPLES)
    (group,) = json.loads(_report(log, "--format", "json")[1])["groups"]
    block = group["contamination"]
    levels = {row["level"]: row for row in block["levels"]}
    assert {k: v["flagged"] for k, v in levels.items()} == FLAGGED
    assert {k: v["refused_requests"] for k, v in levels.items()} == {
        "1": 0,
        "2": 2,
        "3": 0,
        "all": 2,
    }
    for level, value in PLAIN.items():
        assert levels[level]["accuracy"] == pytest.approx(value)
        assert levels[level]["accuracy_flagged_wrong"] == pytest.approx(STRICT[level])
    listed = {s["task_id"]: s for s in block["samples"]}
    assert set(listed) == {"a", "c", "d", "e"}
    assert listed["a"]["flags"] == [MIRROR] and listed["a"]["flagged"] is True
    assert listed["d"]["flagged"] is False and len(listed["d"]["flags"]) == 3
    assert (listed["c"]["level"], listed["c"]["correct"]) == ("1", False)
    assert block["note"] == NOTE and NOTE in group["flags"]
    # the plain accuracy is untouched
    assert group["levels"][-1]["accuracy"] == pytest.approx(4 / 6)


def test_one_line_in_the_tables_and_the_flagged_wrong_column(tmp_path: Path) -> None:
    log = write_log(tmp_path / "run.eval", SAMPLES)
    _, plain = _report(log, "--format", "markdown")
    assert f"⚠ {NOTE}" in plain and "flagged wrong" not in plain
    _, strict = _report(log, "--format", "markdown", "--flagged-wrong")
    assert "| level | n | k | pass@1 | acc. (flagged wrong) | 95% CI |" in strict
    assert "| all | 6 | 1 | 0.6667 | 0.3333 |" in strict
    _, table = _report(log, "--flagged-wrong")
    assert "acc. (flagged wrong)" in table and "0.3333" in table
    _, out = _report(log, "--format", "csv", "--flagged-wrong")
    rows = {row["level"]: row for row in csv.DictReader(io.StringIO(out))}
    assert rows["2"]["flagged"] == "1" and rows["2"]["refused_requests"] == "2"
    assert float(rows["all"]["accuracy_flagged_wrong"]) == pytest.approx(2 / 6)
    _, out = _report(log, "--format", "csv")
    assert "accuracy_flagged_wrong" not in out.splitlines()[0]


def test_screenshots_the_detection_could_not_read_are_counted_not_flagged(tmp_path: Path) -> None:
    shots = [
        _flag("unscanned", "result", images=2, other=0),
        _flag("unscanned", "result", images=1),
    ]
    samples = [
        {**SAMPLES[1], "contamination": shots},  # b: right, clean, looked at three screenshots
        {**SAMPLES[5], "contamination": [_flag("unscanned", "result", images=0, other=1)]},
    ]
    log = write_log(tmp_path / "shots.eval", samples)
    (group,) = json.loads(_report(log, "--format", "json")[1])["groups"]
    block = group["contamination"]
    overall = block["levels"][-1]
    assert (overall["flagged"], overall["unscanned_samples"]) == (0, 2)
    assert overall["accuracy_flagged_wrong"] == overall["accuracy"] == pytest.approx(1 / 2)
    assert {s["task_id"] for s in block["samples"]} == {"b", "f"}
    note = "2 samples saw 4 screenshots or other media the detection cannot read (no OCR)"
    assert block["note"] == note and note in group["flags"]


def test_a_clean_group_says_nothing(tmp_path: Path) -> None:
    clean = [{k: v for k, v in s.items() if k != "contamination"} for s in SAMPLES]
    log = write_log(tmp_path / "clean.eval", clean)
    (group,) = json.loads(_report(log, "--format", "json")[1])["groups"]
    assert group["contamination"]["note"] is None and group["contamination"]["samples"] == []
    assert group["flags"] == []
    _, out = _report(log, "--format", "markdown")
    assert "answer source" not in out


def test_logs_written_before_flags_had_kinds(tmp_path: Path) -> None:
    """Such logs held the strings a call touched; they are dataset references."""
    old = [{**SAMPLES[1], "contamination": ["gaia-benchmark", "metadata.jsonl"]}]
    (group,) = json.loads(_report(write_log(tmp_path / "old.eval", old), "--format", "json")[1])[
        "groups"
    ]
    (sample,) = group["contamination"]["samples"]
    assert [f["excerpt"] for f in sample["flags"]] == ["gaia-benchmark", "metadata.jsonl"]
    assert group["contamination"]["levels"][-1]["accuracy_flagged_wrong"] == 0.0


def test_test_split_counts_without_accuracy(tmp_path: Path) -> None:
    test = [{**s, "target": "?", "value": "N"} for s in SAMPLES]
    log = write_log(tmp_path / "test.eval", test, params={"split": "test"})
    (group,) = json.loads(_report(log, "--format", "json")[1])["groups"]
    overall = group["contamination"]["levels"][-1]
    assert (overall["flagged"], overall["accuracy"], overall["accuracy_flagged_wrong"]) == (
        3,
        None,
        None,
    )


def test_compare_counts_and_the_flagged_wrong_accuracy(tmp_path: Path) -> None:
    snapshot = ("--dataset-path", str(GAIA_MINI))
    theirs = read_evalscope_run(EVALSCOPE_RUN)
    samples = [
        {
            "id": s.task_id,
            "level": s.level,
            "target": s.target,
            "answer": s.answer,
            "value": "C" if s.correct else "I",
            # the first two right answers of level 1 were read off a mirror
            "contamination": [MIRROR] if s.correct and s.level == 1 else [],
        }
        for s in theirs.samples
    ]
    right_l1 = sum(s.correct for s in theirs.samples if s.level == 1)
    n_l1 = sum(s.level == 1 for s in theirs.samples)
    right = sum(s.correct for s in theirs.samples)
    log = write_log(tmp_path / "ours.eval", samples)
    code, out, err = invoke(
        "compare", str(log), str(EVALSCOPE_RUN), *snapshot, "--format", "json", "--flagged-wrong"
    )
    assert code == 0, err
    document = json.loads(out)
    block = document["a"]["contamination"]
    assert block["levels"][-1]["flagged"] == right_l1 > 0
    assert block["note"] is not None and block["note"] in document["a"]["flags"]
    assert document["b"]["contamination"] is None  # evalscope records no flags
    rows = {row["level"]: row for row in document["levels"]}
    assert rows["1"]["a_accuracy"] == pytest.approx(right_l1 / n_l1)
    assert rows["1"]["a_accuracy_flagged_wrong"] == 0.0
    assert rows["all"]["a_accuracy_flagged_wrong"] == pytest.approx(
        (right - right_l1) / len(samples)
    )
    assert rows["all"]["b_accuracy_flagged_wrong"] is None
    code, out, _ = invoke(
        "compare", str(log), str(EVALSCOPE_RUN), *snapshot, "--format", "markdown"
    )
    assert block["note"] in out and "flagged wrong" not in out
    code, out, _ = invoke(
        "compare", str(log), str(EVALSCOPE_RUN), *snapshot, "--format", "csv", "--flagged-wrong"
    )
    assert out.startswith(
        "level,n,a_accuracy,b_accuracy,a_accuracy_flagged_wrong,b_accuracy_flagged_wrong,"
    )


def test_a_default_run_pools_with_older_logs_and_a_blocking_run_stands_apart(
    tmp_path: Path,
) -> None:
    clean = [{k: v for k, v in s.items() if k != "contamination"} for s in SAMPLES]
    before = gaia_record()  # a record written before the setting existed (schema 2)
    del before["answer_sources"]
    before["schema_version"] = 2
    older = write_log(tmp_path / "older.eval", clean, metadata={"gaia": before})
    default = write_log(
        tmp_path / "default.eval",
        [{**s, "id": f"new-{s['id']}"} for s in clean],  # other questions: one pool
    )
    blocking = write_log(tmp_path / "blocking.eval", clean, params={"block_answer_sources": True})
    code, out, err = invoke("report", str(older), str(default), str(blocking), "--format", "json")
    assert code == 0, err
    groups = json.loads(out)["groups"]
    assert sorted(len(g["logs"]) for g in groups) == [1, 2], groups
    pooled = next(g for g in groups if len(g["logs"]) == 2)
    apart = next(g for g in groups if len(g["logs"]) == 1)
    assert pooled["flags"] == []
    sha = load_answer_sources().sha256
    assert apart["flags"] == [
        f"answer sources blocked by the run's egress proxy (list sha256 {sha[:12]})"
    ]
