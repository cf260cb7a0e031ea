"""The agent: basic_agent with bash and submit, opt-in tools, refusals and idle turns."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from inspect_ai.model import ChatMessageAssistant, ChatMessageTool

from inspect_gaia import gaia
from support.scripted_model import Entry
from tests.helpers import SANDBOX_IMAGE, Play, eval_gaia, quiet_handler, serve_http
from tests.scenario import GAIA_TINY, LAGOON


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


PAGE = quiet_handler(
    {
        "/robots.txt": (200, "text/plain", b"User-agent: *\nAllow: /\n"),
        "/lagoon.html": (
            200,
            "text/html",
            b"<html><body><p>The lagoon is called Quillfeather Lagoon.</p></body></html>",
        ),
    }
)


@pytest.mark.docker
def test_optional_tools_are_offered_and_mcp_fetch_is_callable(
    sandbox_image: str, scripted: Play, tmp_path: Path
) -> None:
    with serve_http(PAGE) as base:
        model = scripted(
            [
                Entry(
                    "",
                    [
                        {"call": "python", "args": {"code": "print(6 * 7)"}},
                        {"call": "fetch", "args": {"url": f"{base}/lagoon.html"}},
                        {"submit": "Quillfeather Lagoon"},
                    ],
                )
            ]
        )
        log = eval_gaia(
            tmp_path,
            dataset_path=str(GAIA_TINY),
            image=sandbox_image,
            ids=LAGOON,
            python=True,
            # the fetch server as a plain command line; it refuses loopback unless told
            mcp_servers=f"{sys.executable} -m mcp_server_fetch --allow-private-ips",
        )
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
    from inspect_ai.util import registry_info

    from inspect_gaia.agents.basic import gaia_tools
    from inspect_gaia.options import AgentOptions

    names = [registry_info(t).name for t in gaia_tools(AgentOptions(web_search=True))]
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


@pytest.mark.docker
def test_a_final_answer_in_plain_text_ends_the_sample(
    sandbox_image: str, scripted: Play, tmp_path: Path
) -> None:
    """A model that answers `FINAL ANSWER: x` without `submit` costs two calls, not 50."""
    answer = "The lagoon is the Quillfeather one.\nFINAL ANSWER: Quillfeather Lagoon"
    scripted([Entry("", [{"bash": "true"}, {"say": answer}])])
    log = eval_gaia(tmp_path, dataset_path=str(GAIA_TINY), image=sandbox_image, ids=LAGOON)
    assert log.status == "success" and log.samples is not None
    (sample,) = log.samples
    calls = [e for e in sample.events if e.event == "model"]
    assert len(calls) == 2, "one bash turn, then the answer: no 'please proceed' after it"
    assert sample.limit is None and sample.error is None
    assert isinstance(sample.messages[-1], ChatMessageAssistant)
    assert sum(u.total_tokens for u in sample.model_usage.values()) == 2 * 15
    assert sample.scores is not None
    score = sample.scores["gaia_scorer"]
    assert (score.value, score.answer) == ("C", "Quillfeather Lagoon")
    assert score.metadata == {"answer_source": "final_answer_marker"}
    notes = [str(e.data) for e in sample.events if e.event == "info"]
    assert any("GAIA agent stopped: a final answer in plain text" in n for n in notes)
    assert (log.eval.metadata or {})["gaia"]["final_answer_ends"] is True


def test_a_final_answer_in_plain_text_is_told_from_other_replies() -> None:
    from inspect_ai.model import ChatMessageUser
    from inspect_ai.tool import ToolCall

    from inspect_gaia.agents.basic import _answered_in_text

    said = ChatMessageAssistant(content="Done.\nfinal answer : 7")
    called = ChatMessageAssistant(
        content="FINAL ANSWER: 7", tool_calls=[ToolCall(id="1", function="bash", arguments={})]
    )
    nudge = ChatMessageUser(content="Please proceed")
    assert _answered_in_text([said, nudge]) and _answered_in_text([called, said])
    assert not _answered_in_text([called, nudge])  # it also called a tool: the loop goes on
    assert not _answered_in_text([said, ChatMessageAssistant(content="let me check"), nudge])
    assert not _answered_in_text([nudge])


def test_idle_turns_are_counted_from_the_end() -> None:
    from inspect_ai.model import ChatMessageAssistant, ChatMessageUser
    from inspect_ai.tool import ToolCall

    from inspect_gaia.agents.basic import _idle_turns

    call = ChatMessageAssistant(
        content="", tool_calls=[ToolCall(id="1", function="bash", arguments={})]
    )
    empty = ChatMessageAssistant(content="")
    nudge = ChatMessageUser(content="Please proceed")
    assert _idle_turns([call, empty, nudge, empty, nudge]) == 2
    assert _idle_turns([empty, ChatMessageAssistant(content="thinking"), empty]) == 1
    assert _idle_turns([call]) == 0
