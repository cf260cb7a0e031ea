"""The readers on logs that real runs wrote (``tests/fixtures/real-logs``), and the fixtures' age.

The fixtures are made by ``python -m support.real_logs`` (real Docker runs of the current code with
the scripted model on gaia-tiny; docs/development.md): the default agent, each packaged agent,
``web_record=bodies`` and its replay, the browser, a judged log and a cancelled run. They are
checked in, so these tests need no Docker. The first test fails when the code's log format, or the
generator, is no longer what made them, naming the command that makes them again.
"""

from __future__ import annotations

import hashlib
import importlib
import json
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.log import read_eval_log

from inspect_gaia.agents.mini_config import configuration
from inspect_gaia.images.agents import LABELS
from inspect_gaia.sandboxes.docker.config import known_to_inspect
from inspect_gaia.web import BROWSER_TOOLS
from support.real_logs import (
    AGENTS,
    COMMAND,
    FIXTURES,
    LOGS,
    MANIFEST,
    NAMES,
    fixture,
    generator_sha256,
    log_format,
)
from support.scripted_model import PROSE, Entry
from tests.helpers import REPO, Play, invoke, overall

TINY_TEST_IDS = {"a09cd452-3bc3-5b50-aee7-f9f87624bb9f", "7ec4b1d0-7687-5166-a877-1242918506cd"}
FOLDER = FIXTURES / LOGS


def _stale() -> list[str]:
    """Why the fixtures are not what the generator would write today (nothing: they are)."""
    manifest = json.loads((FIXTURES / MANIFEST).read_text(encoding="utf-8"))
    why = []
    if manifest["generator_sha256"] != generator_sha256():
        why.append("the generator (support/real_logs.py, real_logs_make.py) changed since")
    now = log_format()
    made = manifest["log_format"]
    why += [
        f"{key} {str(made.get(key))[:12]} then, {str(now[key])[:12]} now"
        for key in now
        if made.get(key) != now[key]
    ]
    files = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in FOLDER.iterdir()}
    if files != manifest["files"]:
        why.append(
            f"the files are not those it wrote ({sorted(set(files) ^ set(manifest['files']))})"
        )
    for name in NAMES:  # what each log says of itself, against what the code writes
        with known_to_inspect():  # as the readers read a gaia-docker log: not every entry point
            header = read_eval_log(str(fixture(name)), header_only=True)
        record = (header.eval.metadata or {})["gaia"]
        if header.version != now["inspect_log_version"]:
            why.append(f"{name}.eval is inspect log format {header.version}")
        if record["schema_version"] != now["gaia_schema_version"]:
            why.append(f"{name}.eval's gaia record is version {record['schema_version']}")
    return why


def test_the_fixtures_are_as_new_as_the_log_format_the_code_writes() -> None:
    """inspect's log format version, the ``gaia`` record's version and fields, a web request's
    fields, the generator's source, a file's hash: any changed, the fixtures are made again."""
    importlib.import_module("support.real_logs_make")  # the generator imports (CI never runs it)
    stale = _stale()
    seconds = json.loads((FIXTURES / MANIFEST).read_text(encoding="utf-8"))["seconds"]
    assert stale == [], (
        f"tests/fixtures/real-logs are older than the log format the code writes ({'; '.join(stale)})"
        f" — regenerate them with `{COMMAND}` (Docker and the sandbox images; it took {seconds} s)"
    )


# -- report ----------------------------------------------------------------------------------------


def _groups(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The report's groups by the fixture names of their logs (``default+judged``)."""
    return {"+".join(Path(log).stem for log in g["logs"]): g for g in document["groups"]}


def test_report_keeps_each_kind_of_real_run_apart_and_says_what_it_was() -> None:
    code, out, err = invoke("report", str(FOLDER), "--format", "json")
    assert code == 0, err
    assert "skipped" not in err  # the web archive beside its log is no log
    groups = _groups(json.loads(out))
    assert sorted(groups) == sorted(
        [*(n for n in NAMES if n not in ("default", "judged")), "default+judged"]
    )
    # the default agent over three levels (the judged copy of it is the same run, read once)
    default = groups["default+judged"]
    assert [(row["level"], row["questions"], row["accuracy"]) for row in default["levels"]] == [
        ("1", 2, 1.0),
        ("2", 1, 0.0),
        ("3", 1, 1.0),
        ("all", 4, 0.75),
    ]
    assert default["flags"] == [] and default["web"] is None and not default["partial"]
    assert groups["test"]["split"] == "test" and overall(groups["test"])["accuracy"] is None
    # each agent by its name and versions, its tools the agent alone
    for agent in AGENTS:
        group = groups[f"agent-{agent}"]
        version = LABELS[f"inspect_gaia.agents.{agent}"]
        told = {  # the record adds the name a CLI is told (any model's), mini's configuration
            "claude_code": ", told it is claude-sonnet-4-5",
            "gemini_cli": ", told it is gemini-2.5-pro",
            "mini_swe_agent": f", configuration {configuration(agent)}",
        }.get(agent, "")
        assert group["flags"] == [f"agent: {agent} {version} (inspect_swe 0.2.72){told}"]
        assert group["settings"]["tools"] == [f"agent:{agent}"]
        assert overall(group)["accuracy"] == 1.0
    # the recorded web: every request in the samples' stores, nothing refused
    recorded = groups["web-record"]
    assert recorded["web"]["record_only"] is True and recorded["web"]["note"] in recorded["flags"]
    everything = recorded["web"]["levels"][-1]
    assert (everything["recorded"], everything["refused"], everything["blocked"]) == (2, 0, 0)
    assert {r["url"] for r in recorded["web"]["requests"]} >= {"http://weather.example/today.txt"}
    # its replay: the archive named by its hash, the page never recorded refused
    replayed = groups["web-replay"]
    (archive,) = FOLDER.glob("*.tar.sha256")
    digest = archive.read_text().split()[0]
    assert replayed["flags"][0] == f"replayed web: archive sha256 {digest[:12]}"
    assert replayed["settings"]["web_replay"] == digest
    assert replayed["web"]["levels"][-1]["refused"] == 1
    assert [r["url"] for r in replayed["web"]["requests"] if r["decision"] == "refused"] == [
        "http://weather.example/never-read"
    ]
    browser = groups["browser"]
    assert browser["flags"] == [
        f"non-default tools: bash, submit, browser ({len(BROWSER_TOOLS)} tools)"
    ]
    # the cancelled run: what finished is counted, the run said incomplete
    cancelled = groups["cancelled"]
    assert cancelled["partial"] and overall(cancelled)["questions"] == 1
    (flag,) = cancelled["flags"]
    assert flag.startswith("incomplete run") and "(cancelled, 1 sample not finished)" in flag


@pytest.mark.parametrize("name", NAMES)
def test_each_real_log_reads_in_every_format(name: str, tmp_path: Path) -> None:
    """Named alone, each log reads in every format, its breakdown too, never a traceback."""
    for form in ("table", "markdown", "csv", "json"):
        code, out, err = invoke("report", str(fixture(name)), "--format", form, "--breakdown")
        assert code == 0 and out.strip(), (form, err)
        assert "Traceback" not in out + err


def test_the_terminal_report_shows_the_agents_the_web_and_the_stop() -> None:
    code, out, _ = invoke("report", str(FOLDER))
    text = " ".join(out.split())
    assert code == 0
    assert "What the samples requested on the web" in text
    for agent in AGENTS:
        assert f"agent: {agent} {LABELS[f'inspect_gaia.agents.{agent}']}" in text
    assert "replayed web: archive sha256" in text and "incomplete run" in text


def test_report_judge_takes_the_judged_logs_verdicts_and_asks_only_the_ungraded_one(
    scripted: Play, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``inspect score --scorer inspect_gaia/gaia_judge`` graded three answers and could not grade
    the fourth (``N``): ``report --judge`` takes the three from the log and asks the judge once."""
    model = scripted([Entry("heron or herons", [{"say": "The same count. GRADE: C"}])])
    monkeypatch.setenv("INSPECT_GAIA_CACHE_DIR", str(tmp_path / "cache"))
    judge = "openai-api/scripted/judge"
    code, out, err = invoke("report", str(fixture("judged")), "--judge", judge, "--format", "json")
    assert code == 0, err
    document = json.loads(out)
    assert (document["judge"]["cost"]["from_log"], document["judge"]["cost"]["calls"]) == (3, 1)
    assert model.calls == ["heron or herons"]


# -- compare ---------------------------------------------------------------------------------------


def _compare(a: str, b: str) -> dict[str, Any]:
    code, out, err = invoke("compare", str(fixture(a)), str(fixture(b)), "--format", "json")
    assert code == 0, err
    document = json.loads(out)
    assert isinstance(document, dict)
    return document


def test_compare_scores_real_runs_on_the_snapshot_their_record_names(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(REPO)  # the runs named gaia-tiny by a relative path, as a user would
    document = _compare("default", "web-record")
    assert document["answers"]["source"] == "snapshot tests/fixtures/gaia-tiny"
    everything = document["levels"][-1]
    assert (everything["n"], everything["a_lacks"], everything["b_lacks"]) == (2, 0, 2)
    assert document["differences"] == []


def test_compare_a_replay_beside_the_run_it_replays() -> None:
    document = _compare("web-record", "web-replay")
    everything = document["levels"][-1]
    assert (everything["n"], everything["a_accuracy"], everything["b_accuracy"]) == (2, 1.0, 1.0)
    assert any(f.startswith("replayed web") for f in document["b"]["flags"])
    assert not any(f.startswith("replayed web") for f in document["a"]["flags"])


def test_compare_says_a_cancelled_side_is_incomplete() -> None:
    document = _compare("default", "cancelled")
    assert (document["levels"][-1]["n"], document["levels"][-1]["b_lacks"]) == (1, 3)
    assert any(f.startswith("incomplete run") for f in document["b"]["flags"])


# -- submission ------------------------------------------------------------------------------------


def test_submission_of_a_real_test_split_run(tmp_path: Path) -> None:
    out_file = tmp_path / "submission.jsonl"
    code, _, err = invoke("submission", str(fixture("test")), "-o", str(out_file))
    assert code == 0, err
    lines = [json.loads(line) for line in out_file.read_text().splitlines()]
    assert {line["task_id"] for line in lines} == TINY_TEST_IDS
    by_answer = {line["model_answer"]: line["reasoning_trace"] for line in lines}
    assert set(by_answer) == {"2", "astrolabe"}
    trace = by_answer["2"].splitlines()  # the model's words beside each call, then the call
    assert trace[:2] == [PROSE["bash"], trace[1]] and trace[1].startswith(
        '[bash] {"command": "grep'
    )
    assert "[submit]" in by_answer["astrolabe"]
    note = (tmp_path / "submission.md").read_text()
    header = read_eval_log(str(fixture("test")), header_only=True)
    image_id = (header.eval.metadata or {})["gaia"]["image_id"]
    for line in (
        "- split: test, 2 questions (level 1 1, level 2 1)",
        "- scaffold: inspect_gaia's agent: inspect's basic_agent with bash+submit",
        "- settings other than the task's defaults: none",
        f"- image: inspect-gaia/sandbox:bookworm id {image_id[:19]}",
        f"local id {image_id}",
        "- sandbox: docker",
    ):
        assert line in note, line


def test_submission_refuses_real_validation_runs_and_runs_it_would_not_pool(
    tmp_path: Path,
) -> None:
    out_file = tmp_path / "s.jsonl"
    code, _, err = invoke("submission", str(fixture("default")), "-o", str(out_file))
    assert code == 1 and "validation-split logs" in err and "--allow-validation" in err
    agents = [str(fixture(f"agent-{agent}")) for agent in AGENTS]
    code, _, err = invoke("submission", *agents, "-o", str(out_file), "--allow-validation")
    assert code == 1 and f"{len(AGENTS)} runs that report would not pool" in err
    assert not out_file.exists()
