"""inspect_evals' own gaia logs: recognised per task version, read, and reported as their own group.

The fixture is a real log of inspect_evals 0.28.0's gaia task (version 4-C) run offline on gaia-mini
by ``support/inspect_evals_gaia.py``; older task versions are that log with the header fields
those versions wrote.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.log import read_eval_log, write_eval_log

from inspect_gaia import GaiaError
from inspect_gaia.logs.comparability import comparability_flags
from inspect_gaia.logs.foreign import default_agent, is_inspect_evals_gaia, task_version
from inspect_gaia.logs.read import read_inspect_log, read_inspect_logs
from inspect_gaia.logs.results import comparable_settings
from tests.helpers import MODEL, invoke, write_log

FIXTURE = Path(__file__).parent / "fixtures" / "inspect-evals-gaia" / "gaia-mini-4-C.eval"


def as_version(tmp_path: Path, version: str, task: str = "inspect_evals/gaia", **args: Any) -> Path:
    """The fixture as an older task version wrote its header."""
    log = read_eval_log(str(FIXTURE))
    log.eval.task = task
    if "-" in version:
        log.eval.task_version = int(version.split("-")[0])
        log.eval.metadata = {"full_task_version": version}
    else:
        log.eval.task_version = version
        log.eval.metadata = None
    log.eval.task_args = args
    path = tmp_path / f"{version}.eval"
    write_eval_log(log, str(path))
    return path


def test_the_fixture_is_inspect_evals_4c() -> None:
    log = read_eval_log(str(FIXTURE))
    assert is_inspect_evals_gaia(log) and task_version(log) == "4-C"
    assert log.eval.task == "inspect_evals/gaia"
    assert log.eval.packages.get("inspect_evals") == "0.28.0"
    run = read_inspect_log(FIXTURE)
    assert run.provenance is None and run.foreign is not None, "no gaia record is faked"
    assert run.foreign.harness == "inspect_evals" and run.task_version == "4-C"
    assert (run.foreign.agent, run.foreign.package_version) == ("react", "0.28.0")
    # what the model was offered, read from the model calls
    assert run.foreign.tools == ("bash", "python", "web_search", "submit")
    settings = comparable_settings(run)
    assert settings["harness"] == "inspect_evals" and settings["tools"] == list(run.foreign.tools)
    assert settings["sandbox"] is None and settings["solver"] is None
    by_id = {s.task_id: s for s in run.samples}
    assert len(by_id) == 9 and sum(s.correct for s in run.samples) == 5
    days = by_id["9089766c-0197-5e6b-b154-0439efea3ee3"]
    assert (days.answer, days.target, days.level, days.correct) == ("92 days", "92", 1, False)
    # the attachment is named only in the prompt; the annotator metadata is the dataset's own key
    tickets = by_id["9dcbad2c-f058-5be0-ad65-b075a7d02807"]
    assert tickets.metadata["file_name"] == "9dcbad2c-f058-5be0-ad65-b075a7d02807.csv"
    assert tickets.metadata["Annotator Metadata"]["Number of tools"] == "2"
    assert days.metadata["file_name"] == ""


@pytest.mark.parametrize(
    ("version", "task", "agent"),
    [
        ("1.1.0", "inspect_evals/gaia", "basic_agent"),
        ("1.0.1", "inspect_evals/gaia_level1", "basic_agent"),
        ("2-A", "inspect_evals/gaia", "basic_agent"),
        ("3-A", "inspect_evals/gaia_level3", "react"),
        ("3-B", "inspect_evals/gaia", "react"),
        ("4-C", "inspect_evals/gaia", "react"),
    ],
)
def test_every_task_version_is_read(tmp_path: Path, version: str, task: str, agent: str) -> None:
    run = read_inspect_log(as_version(tmp_path, version, task))
    assert run.task_version == version and default_agent(version) == agent
    assert run.foreign is not None and run.foreign.harness == "inspect_evals"
    assert run.foreign.levels == ((int(task[-1]),) if task[-1].isdigit() else (1, 2, 3))
    assert sum(s.correct for s in run.samples) == 5


def test_task_args_are_read(tmp_path: Path) -> None:
    run = read_inspect_log(as_version(tmp_path, "4-C", subset="2023_level2", max_attempts=3))
    assert run.foreign is not None
    assert run.foreign.levels == (2,) and run.foreign.max_attempts == 3
    assert comparability_flags(comparable_settings(run))[:2] == [
        "another harness: inspect_evals gaia 4-C",
        "oracle retries, not pass@1 (max_attempts=3)",
    ]


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        ({"max_attempts": "3"}, "task_args.max_attempts is '3', not a whole number >= 1"),
        ({"split": "dev"}, "task_args.split is 'dev', not 'validation' or 'test'"),
    ],
)
def test_damaged_task_args_are_one_line(tmp_path: Path, args: dict[str, Any], problem: str) -> None:
    path = as_version(tmp_path, "4-C", **args)
    with pytest.raises(GaiaError) as raised:
        read_inspect_log(path)
    assert str(raised.value).startswith(f"{path}: an inspect_evals gaia log whose {problem} — ")
    assert "\n" not in str(raised.value)


def test_levels_written_as_text_are_read_only_from_inspect_evals(tmp_path: Path) -> None:
    log = read_eval_log(str(FIXTURE))
    assert {type((s.metadata or {})["level"]) for s in log.samples or []} == {str}
    log.samples[0].metadata["level"] = "4"  # type: ignore[index]
    write_eval_log(log, str(tmp_path / "four.eval"))
    with pytest.raises(GaiaError, match="metadata.level is '4', not a GAIA level"):
        read_inspect_log(tmp_path / "four.eval")


def test_other_logs_are_still_refused(tmp_path: Path) -> None:
    log = read_eval_log(str(FIXTURE))
    log.eval.task = "inspect_evals/gsm8k"
    path = tmp_path / "other.eval"
    write_eval_log(log, str(path))
    with pytest.raises(GaiaError, match="not an inspect_gaia log"):
        read_inspect_log(path)
    # in a folder, it is skipped with its reason, and inspect_evals' gaia log beside it is kept
    (tmp_path / FIXTURE.name).write_bytes(FIXTURE.read_bytes())
    found = read_inspect_logs([tmp_path])
    assert [run.source for run in found.runs] == [str(tmp_path / FIXTURE.name)]
    assert [(s.path, s.reason.split(" (")[0]) for s in found.skipped] == [
        (str(path), "not an inspect_gaia log")
    ]


def test_report_gives_inspect_evals_its_own_labelled_group(tmp_path: Path) -> None:
    ours = write_log(
        tmp_path / "ours.eval",
        [
            {
                "id": "9089766c-0197-5e6b-b154-0439efea3ee3",
                "level": 1,
                "target": "92",
                "answer": "92",
                "value": "C",
            }
        ],
    )
    code, out, err = invoke("report", str(ours), str(FIXTURE), "--format", "json")
    assert code == 0, err
    groups = {g["group"]: g for g in json.loads(out)["groups"]}
    assert set(groups) == {MODEL, f"{MODEL} [harness=inspect_evals 4-C]"}
    theirs = groups[f"{MODEL} [harness=inspect_evals 4-C]"]
    assert theirs["flags"] == [
        "another harness: inspect_evals gaia 4-C",
        "non-default tools: bash, python, web_search, submit",
    ]
    levels = {level["level"]: level["accuracy"] for level in theirs["levels"]}
    assert levels == pytest.approx({"1": 2 / 3, "2": 2 / 3, "3": 1 / 3, "all": 5 / 9})
    # its wrong answers are near misses of three kinds, one per level
    misses = theirs["near_misses"]
    assert [(m["level"], m["rule"]) for m in misses["items"]] == [
        (1, "units_currency"),
        (2, "list_order"),
        (3, "articles"),
    ]
    attachment = {row["category"]: row["questions"] for row in theirs["breakdown"]["attachment"]}
    assert attachment == {"none": 5, "spreadsheet": 2, "pdf": 1, "text/code": 1}
    code, out, _ = invoke("report", str(FIXTURE), "--format", "markdown")
    assert code == 0 and f"{MODEL} [harness=inspect_evals 4-C]" in out


def test_report_reads_a_folder_of_both(tmp_path: Path) -> None:
    """A shared folder keeps inspect_evals' gaia logs beside ours; other tasks' are skipped."""
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / FIXTURE.name).write_bytes(FIXTURE.read_bytes())
    sample = {"id": "9089766c-0197-5e6b-b154-0439efea3ee3", "level": 1, "target": "92"}
    write_log(logs / "ours.eval", [{**sample, "answer": "92", "value": "C"}])
    write_log(logs / "toy.eval", [{**sample, "answer": "1", "value": "I"}], metadata={}, task="toy")
    code, out, err = invoke("report", str(logs), "--format", "json")
    assert code == 0, err
    harnesses = {g["settings"]["harness"]: g["group"] for g in json.loads(out)["groups"]}
    assert harnesses == {
        "inspect_gaia": MODEL,
        "inspect_evals": f"{MODEL} [harness=inspect_evals 4-C]",
    }
    toy = f"skipped {logs / 'toy.eval'}: not an inspect_gaia log (a log of toy, with no gaia"
    assert err.splitlines() == [f"{toy} task metadata)"]
