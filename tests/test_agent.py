from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from conftest import SANDBOX_IMAGE, eval_gaia
from inspect_ai.model import ChatMessageTool
from scenario import GAIA_TINY, LAGOON
from scripted_model import Entry, ScriptedModel

from inspect_gaia import gaia

Play = Callable[[list[Entry]], ScriptedModel]


@pytest.mark.docker
def test_command_timeout_and_tools(sandbox_image: str, scripted: Play, tmp_path: Path) -> None:
    model = scripted(
        [Entry("", [{"bash": "sleep 10; echo finished"}, {"submit": "Quillfeather Lagoon"}])]
    )
    log = eval_gaia(
        tmp_path, dataset_path=str(GAIA_TINY), image=sandbox_image, ids=LAGOON, command_timeout=2
    )
    assert log.samples is not None
    (sample,) = log.samples
    tools = [m for m in sample.messages if isinstance(m, ChatMessageTool)]
    assert tools[0].function == "bash"
    assert tools[0].error is not None and tools[0].error.type == "timeout"
    assert "finished" not in tools[0].text
    assert tools[-1].function == "submit"
    assert sample.scores is not None and sample.scores["gaia_scorer"].value == "C"
    assert len(model.calls) == 2


@pytest.mark.docker
def test_max_attempts_lets_the_agent_retry(
    sandbox_image: str, scripted: Play, tmp_path: Path
) -> None:
    # A wrong first submission is answered "incorrect"; the second is right.
    scripted([Entry("", [{"submit": "Quillfeather Bay"}, {"submit": "Quillfeather Lagoon"}])])
    runs = {}
    for attempts in (1, 2):
        log = eval_gaia(
            tmp_path,
            dataset_path=str(GAIA_TINY),
            image=sandbox_image,
            ids=LAGOON,
            max_attempts=attempts,
        )
        assert log.samples is not None and log.samples[0].scores is not None
        runs[attempts] = log.samples[0].scores["gaia_scorer"]
    assert (runs[1].value, runs[1].answer) == ("I", "Quillfeather Bay")
    assert (runs[2].value, runs[2].answer) == ("C", "Quillfeather Lagoon")


def test_mcp_servers_parse() -> None:
    from inspect_gaia.agent import MCP_SHORTCUTS, parse_mcp_servers

    assert parse_mcp_servers(None) == []
    assert parse_mcp_servers("fetch") == [MCP_SHORTCUTS["fetch"]]
    assert parse_mcp_servers(["fetch", "npx -y some-server --flag 'a b'"]) == [
        MCP_SHORTCUTS["fetch"],
        ["npx", "-y", "some-server", "--flag", "a b"],
    ]


def test_missing_mcp_package_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from inspect_gaia import GaiaError
    from inspect_gaia.agent import gaia_tools

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "mcp" else real(name, *a)
    )
    with pytest.raises(GaiaError, match=r"install it with `pip install 'inspect-gaia\[mcp\]'`"):
        gaia_tools(mcp_servers="fetch")


class _Page(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802
        if self.path == "/robots.txt":
            body, kind = b"User-agent: *\nAllow: /\n", "text/plain"
        else:
            body, kind = (
                b"<html><body><p>The lagoon is called Quillfeather Lagoon.</p></body></html>",
                "text/html",
            )
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        return


@pytest.mark.docker
def test_optional_tools_are_offered_and_mcp_fetch_is_callable(
    sandbox_image: str, scripted: Play, tmp_path: Path
) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/lagoon.html"
    model = scripted(
        [
            Entry(
                "",
                [
                    {"call": "python", "args": {"code": "print(6 * 7)"}},
                    {"call": "fetch", "args": {"url": url}},
                    {"submit": "Quillfeather Lagoon"},
                ],
            )
        ]
    )
    try:
        log = eval_gaia(
            tmp_path,
            dataset_path=str(GAIA_TINY),
            image=sandbox_image,
            ids=LAGOON,
            python=True,
            # the fetch server as a plain command line; it refuses loopback unless told
            mcp_servers=f"{sys.executable} -m mcp_server_fetch --allow-private-ips",
        )
    finally:
        server.shutdown()
        server.server_close()
    assert log.samples is not None
    (sample,) = log.samples
    assert {"bash", "python", "submit", "fetch"} <= set(model.tools_offered[0])
    tools = {m.function: m for m in sample.messages if isinstance(m, ChatMessageTool)}
    assert tools["python"].text.strip() == "42"
    assert "Quillfeather Lagoon" in tools["fetch"].text, tools["fetch"].error
    assert sample.scores is not None and sample.scores["gaia_scorer"].value == "C"
    assert log.eval.metadata is not None
    assert log.eval.metadata["gaia"]["tools"][:3] == ["bash", "submit", "python"]
    assert (
        log.eval.metadata["gaia"]["tools"][3].startswith("mcp:")
        and "mcp_server_fetch" in log.eval.metadata["gaia"]["tools"][3]
    )


def test_web_search_is_offered(gaia_tiny: Path) -> None:
    from inspect_ai._util.registry import registry_info

    from inspect_gaia.agent import gaia_tools

    names = [registry_info(t).name for t in gaia_tools(use_web_search=True)]
    assert names[0].endswith("bash") and names[1].endswith("web_search")
    task = gaia(dataset_path=str(gaia_tiny), web_search=True, image=SANDBOX_IMAGE)
    assert task.metadata is not None and task.metadata["gaia"]["tools"] == [
        "bash",
        "submit",
        "web_search",
    ]


@pytest.mark.docker
def test_a_refusal_ends_the_sample_at_once(
    sandbox_image: str, scripted: Play, tmp_path: Path
) -> None:
    model = scripted([Entry("", [{"bash": "true"}, {"refuse": True}])])
    log = eval_gaia(tmp_path, dataset_path=str(GAIA_TINY), image=sandbox_image, ids=LAGOON)
    assert log.samples is not None
    (sample,) = log.samples
    assert len(model.calls) == 2, "no loop of 'please proceed' after a content_filter stop"
    assert sample.error is not None and "refus" in sample.error.message.lower()
    assert sample.scores is not None
    score = sample.scores["gaia_scorer"]
    assert score.value == "I" and "refus" in str((score.metadata or {}).get("error", "")).lower()


@pytest.mark.docker
def test_empty_turns_end_the_sample_early(
    sandbox_image: str, scripted: Play, tmp_path: Path
) -> None:
    model = scripted([Entry("", [{"bash": "true"}, {"say": ""}])])
    log = eval_gaia(tmp_path, dataset_path=str(GAIA_TINY), image=sandbox_image, ids=LAGOON)
    assert log.samples is not None
    (sample,) = log.samples
    assert len(model.calls) == 1 + 3, "one bash turn, then three empty turns, then stop"
    assert sample.error is None and sample.limit is None
    notes = [e for e in sample.events if e.event == "info" and "GAIA agent stopped" in str(e.data)]
    assert len(notes) == 1
    assert sample.scores is not None
    assert sample.scores["gaia_scorer"].metadata == {"answer_source": "none"}


def test_idle_turns_are_counted_from_the_end() -> None:
    from inspect_ai.model import ChatMessageAssistant, ChatMessageUser
    from inspect_ai.tool import ToolCall

    from inspect_gaia.agent import _idle_turns

    call = ChatMessageAssistant(
        content="", tool_calls=[ToolCall(id="1", function="bash", arguments={})]
    )
    empty = ChatMessageAssistant(content="")
    nudge = ChatMessageUser(content="Please proceed")
    assert _idle_turns([call, empty, nudge, empty, nudge]) == 2
    assert _idle_turns([empty, ChatMessageAssistant(content="thinking"), empty]) == 1
    assert _idle_turns([call]) == 0
