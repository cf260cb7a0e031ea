"""What the samples read on the web, in ``report`` and ``compare``: a log's store read back into
counts per level and sample, every request in JSON, and the questions two sides read differently."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from inspect_gaia._cli._web import host_lines
from inspect_gaia.egress.web_record import STORE_KEY, WebRequest
from inspect_gaia.logs.comparison import compare_document
from inspect_gaia.logs.results import SampleResult
from inspect_gaia.logs.sides import AnswerKey, Question, Side
from inspect_gaia.logs.web_reads import RECORD_ONLY, host_differences, read_nothing, web_block
from support.real_logs import fixture
from tests.helpers import invoke, write_log


def request(url: str, decision: str = "allowed", status: int | None = 200) -> dict[str, Any]:
    return {
        "t": 1.0,
        "method": "GET",
        "url": url,
        "status": status,
        "bytes": 3,
        "sha256": "00" * 32,
        "type": "text/plain",
        "decision": decision,
        "why": None if decision == "allowed" else "why",
        "error": None,
    }


def web(*requests: dict[str, Any]) -> tuple[WebRequest, ...]:
    return tuple(r for r in map(WebRequest.of, requests) if r is not None)


def test_a_sample_that_was_refused_blocked_or_failed_only_read_nothing() -> None:
    assert read_nothing(())
    assert read_nothing(web(request("http://m.example/", "refused", 403)))
    assert read_nothing(web(request("http://a.example/", status=None)))
    assert not read_nothing(web(request("http://a.example/", status=404)))


def test_report_counts_requests_and_hosts_per_level_and_lists_every_request(
    tmp_path: Path,
) -> None:
    samples = [
        {"id": "a", "level": 1, "target": "1", "answer": "1", "value": "C"},
        {"id": "b", "level": 1, "target": "2", "answer": "3", "value": "I"},
        {"id": "c", "level": 2, "target": "x", "answer": "x", "value": "C"},
    ]
    samples[0]["store"] = {
        STORE_KEY: [
            request("https://a.example/1"),
            request("https://a.example/2"),
            request("http://m.example/x", "refused", 403),
        ]
    }
    samples[1]["store"] = {STORE_KEY: [request("http://10.0.0.1/", "blocked", 403)]}
    samples[2]["store"] = {STORE_KEY: [request("https://b.example/")]}
    log = write_log(tmp_path / "run.eval", samples, params={"web_record": True})
    code, out, err = invoke("report", str(log), "--format", "json")
    assert code == 0, err
    (group,) = json.loads(out)["groups"]
    block = group["web"]
    assert block["record_only"] is True
    levels = {row["level"]: row for row in block["levels"]}
    assert levels["1"] == {
        "level": "1",
        "samples": 2,
        "recorded": 2,
        "requests": 4,
        "hosts": 3,
        "refused": 1,
        "blocked": 1,
        "read_nothing": 1,
    }
    assert (levels["all"]["requests"], levels["all"]["hosts"]) == (5, 4)
    assert [(r["task_id"], r["url"]) for r in block["requests"]][-1] == ("c", "https://b.example/")
    (idle,) = [s for s in block["samples"] if s["read_nothing"]]
    assert (idle["task_id"], idle["host_names"]) == ("b", ["10.0.0.1"])
    assert block["note"].startswith("web recorded by the run's proxy: 5 requests to 4 hosts")
    assert RECORD_ONLY in block["note"] and block["note"] in group["flags"]

    code, text, _ = invoke("report", str(log))
    assert code == 0
    assert "What the samples requested on the web" in text and "read nothing: b (epoch 1)" in text


def test_a_run_without_a_proxy_has_no_web_block() -> None:
    log = fixture("default")  # a real default run's log (tests/fixtures/real-logs)
    code, out, _ = invoke("report", str(log), "--format", "json")
    (group,) = json.loads(out)["groups"]
    assert code == 0 and group["web"] is None
    assert web_block([SampleResult("a", 1, "1", "1", True)]) is None


def test_a_blocking_run_is_recorded_but_not_record_only(tmp_path: Path) -> None:
    samples = [
        {"id": "a", "level": 1, "target": "1", "value": "C", "store": {STORE_KEY: []}},
    ]
    log = write_log(tmp_path / "run.eval", samples, params={"block_answer_sources": True})
    code, out, _ = invoke("report", str(log), "--format", "json")
    (group,) = json.loads(out)["groups"]
    assert group["web"]["record_only"] is False and RECORD_ONLY not in group["web"]["note"]
    assert group["web"]["levels"][-1]["read_nothing"] == 1


KEY = AnswerKey(
    questions={"q1": Question(1, "4"), "q2": Question(1, "x"), "q3": Question(2, "y")},
    split_ids=frozenset({"q1", "q2", "q3"}),
    source="a test key",
)


def sample(task_id: str, *urls: str, epoch: int = 1, recorded: bool = True) -> SampleResult:
    requests = web(*(request(u) for u in urls)) if recorded else None
    return SampleResult(task_id, 1, "", "4", True, epoch=epoch, web=requests)


def test_compare_names_the_questions_whose_sides_read_different_hosts() -> None:
    a = [
        sample("q1", "https://wiki.example/a", "https://x.example/"),
        sample("q2", "https://wiki.example/b"),
        sample("q3", recorded=False),
    ]
    b = [
        sample("q1", "https://wiki.example/c", epoch=1),
        sample("q1", "https://y.example/", epoch=2),
        sample("q2", "https://wiki.example/other-page"),
        sample("q3", "https://z.example/"),
    ]
    differing = host_differences(a, b, ["q1", "q2", "q3"])
    assert differing == [{"task_id": "q1", "a_only": ["x.example"], "b_only": ["y.example"]}]
    assert host_differences(a, [sample("q1", recorded=False)], ["q1"]) is None

    document = compare_document(
        Side("A", "inspect_gaia", "m", tuple(a)), Side("B", "inspect_gaia", "m", tuple(b)), KEY
    )
    assert document["web_hosts_differ"] == differing
    (line,) = host_lines(document["web_hosts_differ"])
    assert line == (
        "⚠ the sides read from different hosts for 1 question(s): "
        "q1 (A only: x.example; B only: y.example)"
    )
    assert host_lines(None) == [] and host_lines([]) == []
