"""``--judge`` and ``--question-set`` beside the official score, in ``report`` and ``compare``.

Logs are written here without a run; the scripted model on 127.0.0.1 plays the judge. Compare runs
on gaia-mini with the EvalScope fixture as side B, both judged against the snapshot's answers.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from inspect_gaia.logs.evalscope import read_evalscope_run
from inspect_gaia.questions.named_sets import load_named_set
from inspect_gaia.scoring.judge import DEFAULT_PROMPT_NAME, load_prompt
from support.scripted_model import Entry, ScriptedModel
from tests.helpers import RUN_SAMPLES, invoke, write_log
from tests.scenario import EVALSCOPE_RUN, GAIA_MINI, MINI_MEMO

JUDGE = "openai-api/scripted/judge"
LABEL = f"judge: {DEFAULT_PROMPT_NAME}, {JUDGE}"
Play = Callable[[list[Entry]], ScriptedModel]
DISPUTED = load_named_set("undisputed").exclude[0]
"""A task id the undisputed set leaves out (a sample of a log written here carries it)."""

SAMPLES = [
    {"id": "t1", "level": 1, "target": "12,500", "answer": "12500 people", "value": "I"},
    {"id": "t2", "level": 1, "target": "Oslo", "answer": "Oslo", "value": "C"},
    {"id": DISPUTED, "level": 2, "target": "9", "answer": "perhaps", "value": "I"},
]
"""Official: right once in three; the judge takes `12500 people`, and cannot read its third reply."""
VERDICTS = [
    Entry("12500 people", [{"say": "Same count. GRADE: C"}]),
    Entry("[Submitted answer]\n```\nOslo\n```", [{"say": "GRADE: C"}]),
    Entry("perhaps", [{"say": "Unclear."}]),
]


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INSPECT_GAIA_CACHE_DIR", str(tmp_path / "cache"))


def _json(*args: str) -> tuple[dict[str, Any], str]:
    code, out, err = invoke(*args, "--format", "json")
    assert code == 0, err
    document = json.loads(out)
    assert isinstance(document, dict)
    return document, err


def test_report_judge_is_a_labelled_second_opinion_and_the_second_report_is_free(
    tmp_path: Path, scripted: Play
) -> None:
    server = scripted(VERDICTS)
    log = write_log(tmp_path / "run.eval", SAMPLES)
    document, err = _json("report", str(log), "--judge", JUDGE)
    (group,) = document["groups"]
    assert group["levels"][-1]["accuracy"] == pytest.approx(1 / 3)  # the official score, as it was
    judged = group["judge"]
    assert judged["label"] == LABEL
    overall = judged["levels"][-1]
    assert (overall["judged"], overall["unjudged"], overall["accuracy"]) == (2, 1, 1.0)
    assert overall["disagreements"] == 1 and overall["ci_low"] < 1.0
    (difference,) = judged["disagreements"]
    assert (difference["task_id"], difference["official"], difference["judge"]) == (
        "t1",
        False,
        True,
    )
    judge = document["judge"]
    assert judge["model"] == JUDGE and judge["prompt"]["sha256"] == load_prompt(None).sha256
    assert judge["cost"]["calls"] == 3 and judge["cost"]["total_tokens"] == 45
    assert err.count("judge gave no verdict") == 1 and "'perhaps'" in err
    assert len(server.requests) == 3
    # the second report: every reply from the cache, the one without a verdict too: no request
    server.requests.clear()
    again, err = _json("report", str(log), "--judge", JUDGE)
    assert again["judge"]["cost"]["cached"] == 3 and again["judge"]["cost"]["calls"] == 0
    assert server.requests == [] and "'perhaps'" in err and "(its reply, cached)" in err
    assert again["groups"][0]["judge"]["levels"][-1] == judged["levels"][-1]
    # a run whose every answer got a verdict: its second report asks the judge nothing at all
    clean = write_log(tmp_path / "clean.eval", SAMPLES[:2])
    _json("report", str(clean), "--judge", JUDGE)
    server.requests.clear()
    free, _ = _json("report", str(clean), "--judge", JUDGE)
    assert server.requests == [] and free["judge"]["cost"]["calls"] == 0


def test_the_tables_show_official_first_then_the_judge(tmp_path: Path, scripted: Play) -> None:
    scripted(VERDICTS)
    log = write_log(tmp_path / "run.eval", SAMPLES)
    code, out, _ = invoke("report", str(log), "--judge", JUDGE, "--format", "markdown")
    assert code == 0
    header = next(line for line in out.splitlines() if line.startswith("| level | n | k |"))
    cells = [c.strip() for c in header.strip("|").split("|")]
    assert cells.index("pass@1") < cells.index("judge") < cells.index("≠ official")
    assert f"{LABEL} (prompt sha256" in out  # the full label, under the table
    assert "a second opinion; the official score is the score" in out
    assert "| all | 3 | 1 | 0.3333 |" in out  # pass@1 untouched
    code, out, _ = invoke("report", str(log), "--judge", JUDGE, "--format", "csv")
    assert code == 0 and "judge_accuracy" in out.splitlines()[0]


def test_a_prompt_without_a_judge_is_one_line(tmp_path: Path) -> None:
    prompt = tmp_path / "p.txt"
    prompt.write_text("{question} {gold} {answer}")
    log = write_log(tmp_path / "run.eval", SAMPLES)
    code, _, err = invoke("report", str(log), "--judge-prompt", str(prompt))
    assert code != 0 and "--judge-prompt needs a judge — add --judge MODEL" in err
    assert "Traceback" not in err


def test_report_gives_official_on_undisputed_beside_the_full_figure(tmp_path: Path) -> None:
    # a --limit look at the validation split: which of the set's questions it lacks is no news
    log = write_log(tmp_path / "run.eval", SAMPLES, limit=3, questions=165)
    document, _ = _json("report", str(log), "--question-set", "undisputed")
    (group,) = document["groups"]
    on_set = group["question_set"]
    named = load_named_set("undisputed")
    assert on_set["label"] == "official on undisputed" and on_set["sha256"] == named.sha256
    assert on_set["note"] == "question set undisputed: 2 of 3"
    assert group["levels"][-1]["accuracy"] == pytest.approx(1 / 3)
    assert on_set["levels"][-1]["accuracy"] == pytest.approx(1 / 2)
    code, out, _ = invoke(
        "report", str(log), "--question-set", "undisputed", "--format", "markdown"
    )
    assert code == 0 and "official on undisputed" in out


def test_report_refuses_a_set_whose_questions_a_complete_run_did_not_ask(tmp_path: Path) -> None:
    """Issue #50: on gaia-mini, `-T question_set=undisputed` is refused (`names 4 task id(s) not
    in the validation split`), and `report --question-set undisputed` said `9 of 9` silently."""
    log = write_log(tmp_path / "run.eval", RUN_SAMPLES)  # all of an invented split
    code, out, err = invoke("report", str(log), "--question-set", "undisputed")
    assert code == 1 and out == "" and err.count("\n") == 1, err
    assert err.startswith("inspect-gaia: --question-set undisputed names ")
    assert "task id(s) not among the 5 questions of " in err and "complete validation run" in err
    assert err.rstrip().endswith("or drop --question-set")


def test_compare_judges_both_sides_on_one_key(tmp_path: Path, scripted: Play) -> None:
    """An inspect_gaia run and an EvalScope run, judged against the snapshot's answers."""
    server = scripted([Entry("[Submitted answer]", [{"say": "GRADE: C"}])])
    theirs = read_evalscope_run(EVALSCOPE_RUN)
    ours = [
        {"id": s.task_id, "level": s.level, "target": s.target, "answer": s.target, "value": "C"}
        for s in theirs.samples
    ]
    log = write_log(tmp_path / "ours.eval", ours)
    document, _ = _json(
        "compare", str(log), str(EVALSCOPE_RUN), "--dataset-path", str(GAIA_MINI), "--judge", JUDGE
    )
    judge = document["judge"]
    assert judge["label"] == LABEL
    a, b = judge["a"]["levels"][-1], judge["b"]["levels"][-1]
    assert a["questions"] == b["questions"] == document["levels"][-1]["n"]
    assert a["accuracy"] == b["accuracy"] == 1.0 and a["disagreements"] == 0
    # official wrong, judge right: EvalScope's memo answer kept its "FINAL ANSWER:" prefix
    assert MINI_MEMO in {d["task_id"] for d in judge["b"]["disagreements"]}
    assert b["disagreements"] == round((1 - document["levels"][-1]["b_accuracy"]) * b["questions"])
    # one call per distinct answer: the sides' equal answers are judged once
    answers = {s.answer for s in theirs.samples} | {s.target for s in theirs.samples}
    assert len(server.requests) <= len(answers)
    code, out, _ = invoke(
        "compare", str(log), str(EVALSCOPE_RUN), "--dataset-path", str(GAIA_MINI), "--judge", JUDGE
    )
    assert code == 0 and f"Second opinion, {LABEL}" in out


def test_groups_stay_ranked_by_the_official_score(tmp_path: Path, scripted: Play) -> None:
    """A run the judge likes better does not move up: the official score ranks the groups."""
    scripted([*VERDICTS, Entry("[Submitted answer]\n```\nBergen\n```", [{"say": "GRADE: I"}])])
    logs = tmp_path / "logs"
    logs.mkdir()
    write_log(logs / "a.eval", SAMPLES, model="openai-api/scripted/a")  # official 1/3, judged 1
    other = [
        {"id": "t2", "level": 1, "target": "Oslo", "answer": "Oslo", "value": "C"},
        {"id": "t4", "level": 1, "target": "Oslo", "answer": "Bergen", "value": "I"},
    ]
    write_log(logs / "b.eval", other, model="openai-api/scripted/b")  # official 1/2, judged 1/2
    document, _ = _json("report", str(logs), "--judge", JUDGE)
    assert [g["model"] for g in document["groups"]] == [
        "openai-api/scripted/b",
        "openai-api/scripted/a",
    ]
    judged = [g["judge"]["levels"][-1]["accuracy"] for g in document["groups"]]
    assert judged == [0.5, 1.0]


@pytest.mark.parametrize(
    ("judge", "unset", "line"),
    [
        (
            "gpt-4.1",
            "",
            "--judge gpt-4.1: the name says no provider — write it provider/model, e.g. --judge "
            "openai/gpt-4.1",
        ),
        (
            "nosuch/model",
            "",
            "--judge nosuch/model: Model API nosuch of model 'nosuch/model' not recognized — name "
            "one of inspect's providers (https://inspect.aisi.org.uk/providers.html), e.g. --judge "
            "openai/gpt-4.1",
        ),
        (
            "openai/gpt-4.1",
            "OPENAI_API_KEY",
            "--judge openai/gpt-4.1: Unable to initialise OpenAI client; No OPENAI_API_KEY, "
            "AZUREAI_OPENAI_API_KEY, or managed identity (Entra ID) defined in the environment — "
            "set OPENAI_API_KEY in the environment, or pick another --judge",
        ),
        (
            "openai-api/judge/m",
            "JUDGE_API_KEY",
            "--judge openai-api/judge/m: Unable to initialise judge client; No JUDGE_API_KEY "
            "defined in the environment — set JUDGE_API_KEY in the environment, or pick another "
            "--judge",
        ),
    ],
    ids=["no-provider", "unknown-provider", "no-key", "no-key-markup"],
)
def test_a_judge_that_cannot_be_asked_is_one_line_before_any_log_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, judge: str, unset: str, line: str
) -> None:
    """``--judge`` is checked as ``--model`` is: no traceback, no raw ``[bold][blue]`` markup."""
    for name in ("OPENAI_API_KEY", "AZUREAI_OPENAI_API_KEY", unset):
        if name:
            monkeypatch.delenv(name, raising=False)
    logs = tmp_path / "logs"
    logs.mkdir()
    write_log(logs / "run.eval", SAMPLES)
    (logs / "notes.eval").write_text("not a log")  # read, it would be a `skipped` line
    code, out, err = invoke("report", str(logs), "--judge", judge)
    assert code == 1 and out == ""
    assert [e for e in err.splitlines() if e.strip()] == [f"inspect-gaia: {line}"]


def _closed_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as probe:
        return int(probe.getsockname()[1])


def test_an_unreachable_judge_is_one_line_with_its_url(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Eight answers at the command's default ``--judge-concurrency``: eight lines of
    ``RetryError[<Future …>]`` after 38 s before; one line, before any log is read, now."""
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    monkeypatch.setenv("UNREACHABLE_BASE_URL", url)
    monkeypatch.setenv("UNREACHABLE_API_KEY", "x")
    samples = [
        {"id": f"t{n}", "level": 1, "target": "7", "answer": f"{n} people", "value": "I"}
        for n in range(8)
    ]
    log = write_log(tmp_path / "run.eval", samples)
    line = (
        f"inspect-gaia: cannot reach the judge openai-api/unreachable/m at {url} (connection "
        "refused) — start the endpoint or fix its address (UNREACHABLE_BASE_URL), then rerun"
    )
    code, out, err = invoke("report", str(log), "--judge", "openai-api/unreachable/m")
    assert code == 1 and out == ""
    assert [e for e in err.splitlines() if e.strip()] == [line]
    # compare checks it as report does, before either side is read
    code, out, err = invoke("compare", str(log), str(log), "--judge", "openai-api/unreachable/m")
    assert code == 1 and out == "" and [e for e in err.splitlines() if e.strip()] == [line]


def test_a_judge_that_answers_only_errors_is_asked_once_and_said_once(
    tmp_path: Path, scripted: Play
) -> None:
    """A judge that listens but refuses (404, an unknown model): at the default concurrency the
    eight answers were asked at once, eight stderr lines; now the first is the probe."""
    server = scripted([Entry("[Submitted answer]", [{"http_error": 404}])])
    samples = [
        {"id": f"t{n}", "level": 1, "target": "7", "answer": f"{n} people", "value": "I"}
        for n in range(8)
    ]
    log = write_log(tmp_path / "run.eval", samples)
    document, err = _json("report", str(log), "--judge", JUDGE)
    assert len(server.requests) == 1
    lines = [e for e in err.splitlines() if e.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"judge {JUDGE} at http://127.0.0.1:")
    assert "failed as a whole: NotFoundError: Error code: 404" in lines[0]
    assert "8 answers unjudged" in lines[0]
    assert document["groups"][0]["judge"]["levels"][-1]["unjudged"] == 8


def test_at_80_columns_the_judge_asked_for_is_the_last_column_hidden(
    tmp_path: Path, scripted: Play, monkeypatch: pytest.MonkeyPatch
) -> None:
    scripted(VERDICTS)
    log = write_log(tmp_path / "run.eval", SAMPLES, limit=3, questions=165)  # a --limit look
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = invoke("report", str(log), "--judge", JUDGE, "--question-set", "undisputed")
    assert code == 0
    scores = out.split("Cost and effort")[0]
    lines = scores.splitlines()
    top = next(i for i, line in enumerate(lines) if line.lstrip().startswith("┏"))
    bottom = next(i for i, line in enumerate(lines) if line.lstrip().startswith("┡"))
    header = " ".join(" ".join(lines[top + 1 : bottom]).replace("┃", " ").split())
    assert "pass@1" in header and "judge" in header and "official on" in header, scores
    hidden = next(line for line in scores.splitlines() if "hidden at this width" in line)
    assert "judge" not in hidden.split("—")[0] and "official on" not in hidden, hidden
    assert LABEL in scores  # the full label, in the note under the table
    assert all(len(line) <= 80 for line in out.splitlines())
