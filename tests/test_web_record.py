"""The record of a sample's web as a log holds it: lines read back trusting no field, counts, and
the info event ``inspect view`` shows."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest

import inspect_gaia.egress
from inspect_gaia.egress.web_record import (
    FULL,
    MAX_BYTES,
    MAX_LINES,
    MAX_URL,
    OPEN_SUFFIX,
    SHOWN,
    STORE_KEY,
    UNANSWERED,
    WebRequest,
    counts,
    from_store,
    hosts,
    parse_lines,
    summary,
)


def line(**changes: Any) -> dict[str, Any]:
    """A request line as the proxy writes it (``egress/recorder.py``)."""
    return {
        "t": 1700000000.5,
        "method": "GET",
        "url": "https://Example.org/a?b=1",
        "status": 200,
        "bytes": 12,
        "sha256": "ab" * 32,
        "type": "text/html",
        "decision": "allowed",
        "why": None,
        "error": None,
        "server": "example.org:443",
        "sni": "example.org",
        "address": "93.184.215.14",
        **changes,
    }


def test_a_line_reads_back_as_it_was_written() -> None:
    request = WebRequest.of(line())
    assert request is not None and request.as_dict() == line()
    assert request.host == "example.org"
    tunnel = WebRequest.of(line(method="TCP", url="modelscope.cn:443", decision="blocked"))
    assert tunnel is not None and tunnel.host == "modelscope.cn"


@pytest.mark.parametrize(
    "damaged",
    [
        line(decision="maybe"),
        line(status="200"),
        line(status=True),
        line(bytes=-0.5),
        line(url=None),
        line(why=3),
        line(server=443),
        {"t": 1},
        ["GET"],
        "GET /",
    ],
    ids=lambda d: str(d)[:40],
)
def test_a_line_that_is_not_a_request_is_skipped(damaged: object) -> None:
    assert WebRequest.of(damaged) is None
    text = "\n".join([json.dumps(line()), json.dumps(damaged), "{not json", json.dumps(line())])
    assert len(parse_lines(text)) == 2


def test_the_store_tells_recorded_from_not_recorded() -> None:
    assert from_store({}) is None and from_store(None) is None
    assert from_store({STORE_KEY: "junk"}) is None
    assert from_store({STORE_KEY: []}) == ()
    (request,) = from_store({STORE_KEY: [line(), {"t": "x"}]}) or ()
    assert request.url == "https://Example.org/a?b=1"


def test_counts_and_hosts() -> None:
    requests = [
        WebRequest.of(line()),
        WebRequest.of(line(url="http://example.org/other")),
        WebRequest.of(line(url="http://mirror.example/x", decision="refused", status=403)),
        WebRequest.of(line(url="http://10.0.0.1/", decision="blocked", why="private", status=403)),
    ]
    known = [r for r in requests if r is not None]
    assert hosts(known) == ["10.0.0.1", "example.org", "mirror.example"]
    assert counts(known) == {
        "requests": 4,
        "allowed": 2,
        "refused": 1,
        "blocked": 1,
        "hosts": 3,
    }


def test_the_info_event_lists_requests_in_a_table_that_a_url_cannot_break() -> None:
    piped = WebRequest.of(line(url="http://a.example/x|y", decision="blocked", why="a | b"))
    assert piped is not None
    text = summary([piped])
    assert "1 request(s) to 1 host(s); 0 refused (answer source), 1 blocked" in text
    assert "| GET | http://a.example/x%7Cy | 200 | 12 | blocked: a / b |" in text
    many = [piped] * (SHOWN + 3)
    assert summary(many).count("| GET |") == SHOWN and "3 more in the store" in summary(many)
    assert "| method |" not in summary([])


def test_a_replayed_samples_info_event_says_what_the_replay_served() -> None:
    from inspect_gaia.egress.replay_match import OWN, POOLED, REFUSAL

    served = [
        WebRequest.of(line(why=OWN)),
        WebRequest.of(line(why=OWN)),
        WebRequest.of(line(why=POOLED)),
        WebRequest.of(line(decision="refused", status=403, why=REFUSAL)),
    ]
    text = summary([r for r in served if r is not None])
    assert (
        "Replayed: 2 served from the sample's own recording, 1 from the pool (another sample's or "
        "none's), 1 refused as not in the recorded web."
    ) in text
    live = WebRequest.of(line())
    assert live is not None and "Replayed" not in summary([live])  # a live run's says nothing


def _constants(program: str) -> dict[str, object]:
    """A proxy program's constants (it runs in the proxy's container: read, never imported)."""
    source = Path(inspect_gaia.egress.__file__).with_name(program).read_text(encoding="utf-8")
    return {  # literals, and the shifts of sizes (16 << 20)
        target.id: eval(compile(ast.Expression(node.value), program, "eval"), {"__builtins__": {}})
        for node in ast.parse(source).body
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name)
        and target.id.isupper()
        and isinstance(node.value, ast.Constant | ast.BinOp)
    }


def test_the_proxy_writes_the_record_where_and_as_the_host_reads_it() -> None:
    files = _constants("record_files.py")
    assert (files["OPEN"], files["FULL"]) == (OPEN_SUFFIX, FULL)
    assert (files["MAX_URL"], files["MAX_LINES"], files["MAX_BYTES"]) == (
        MAX_URL,
        MAX_LINES,
        MAX_BYTES,
    )
    assert _constants("recorder.py")["UNANSWERED"] == UNANSWERED
