"""Other agents end to end: each CLI of the agents image, driven by the scripted model through
inspect's bridge, in a real gaia-docker sandbox, on a gaia-tiny question with an attachment."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.log import EvalLog
from inspect_ai.model import ChatMessageTool

from inspect_gaia import gaia
from inspect_gaia._egress.urlrules import REFUSAL_MARKER
from inspect_gaia.agents_image import LABELS
from inspect_gaia.errors import GaiaParameterError
from support.answer_pages import (
    GAIA_LEAK,
    MIRROR_HOST,
    MIRROR_PATH,
    SALTMERE,
    WAIT_FOR_STANDINS,
    fetch,
    question_id,
)
from support.scripted_model import Entry
from support.standins import StandIns
from tests.helpers import Play, eval_gaia, eval_task, invoke, running_containers
from tests.scenario import GAIA_TINY, VISITS

pytestmark = [pytest.mark.docker, pytest.mark.slow]

AGENTS_IMAGE = "inspect-gaia/sandbox:bookworm-agents"
SUM = (
    "python3 -c \"import csv; print('sum=' + format(sum(int(r['visitors']) for r in "
    "csv.DictReader(open('/shared_files/9410e454-b071-52ff-ac24-dce9845bebd0.csv'))), ','))\""
)
"""The shell command that reads the attachment: the answer is printed after ``sum=``."""
FOUND = r"sum=([\d,]+)"
_LIST = {"call": "exec_command", "args": {"cmd": "ls /"}}
STEPS: dict[str, list[dict[str, Any]]] = {
    # mini-swe-agent: every turn calls its bash tool; it ends on its exit command
    "mini_swe_agent": [
        {"bash": SUM},
        {"bash": "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT", "answer_found": FOUND},
    ],
    # Claude Code: its Bash tool, then a message with no tool call ends it
    "claude_code": [
        {"call": "Bash", "args": {"command": SUM, "description": "sum the visitors"}},
        {"answer_found": FOUND},
    ],
    # Codex CLI: its exec_command tool, then a message with no tool call
    "codex_cli": [{"call": "exec_command", "args": {"cmd": SUM}}, {"answer_found": FOUND}],
}


def _run(agent: str, play: Play, tmp_path: Path, **params: Any) -> EvalLog:
    play([Entry("visitors per gallery", STEPS[agent])])
    return eval_gaia(
        tmp_path,
        dataset_path=str(GAIA_TINY),
        ids=VISITS,
        image=AGENTS_IMAGE,
        agent=agent,
        **params,
    )


@pytest.mark.parametrize("agent", ["mini_swe_agent", "claude_code", "codex_cli"])
def test_agent_reads_the_attachment_and_is_scored_right(
    agent: str, scripted: Play, tmp_path: Path
) -> None:
    log = _run(agent, scripted, tmp_path)
    assert log.status == "success", log.error
    (sample,) = log.samples or []
    assert sample.error is None
    score = (sample.scores or {})["gaia_scorer"]
    assert (score.answer, score.value) == ("48,671", "C")
    assert score.metadata and score.metadata["answer_source"] == "final_answer_marker"
    record = (log.eval.metadata or {})["gaia"]
    assert record["agent"]["name"] == agent
    assert record["agent"]["cli_version"] == LABELS[f"inspect_gaia.agents.{agent}"]
    assert record["agent"]["inspect_swe_version"] == "0.2.72"
    assert record["tools"] == [f"agent:{agent}"]


def test_an_image_without_the_clis_stops_the_run_before_any_sandbox(sandbox_image: str) -> None:
    before = running_containers()
    with pytest.raises(GaiaParameterError) as caught:
        gaia(dataset_path=str(GAIA_TINY), image=sandbox_image, agent="codex_cli")
    assert str(caught.value) == (
        f"-T agent=codex_cli: the sandbox image {sandbox_image} has no `codex` — build one with "
        f"`inspect-gaia image build --offline --agents` and pass `-T image={AGENTS_IMAGE}`"
    )
    assert running_containers() == before
    # doctor --agents says the same, and passes the agents image with its versions
    code, out, _ = invoke("doctor", "--image", sandbox_image, "--agents", "--json")
    check = next(c for c in json.loads(out) if c["name"] == "agents")
    assert code == 1 and not check["ok"] and "has no `claude`, `codex`, `mini`" in check["detail"]
    _, out, _ = invoke("doctor", "--image", AGENTS_IMAGE, "--agents", "--json")
    check = next(c for c in json.loads(out) if c["name"] == "agents")
    assert check["ok"] and "claude_code 2.1.332" in check["detail"], check


def test_the_message_limit_stops_an_agent_that_never_answers(
    scripted: Play, tmp_path: Path
) -> None:
    # every turn runs a command (and says a provisional answer): only the limit ends it
    scripted([Entry("visitors per gallery", [{**_LIST, "answer_found": r"(shared_files)"}])])
    log = eval_task(
        gaia(dataset_path=str(GAIA_TINY), ids=VISITS, image=AGENTS_IMAGE, agent="codex_cli"),
        tmp_path,
        message_limit=8,
    )
    (sample,) = log.samples or []
    assert sample.limit is not None and sample.limit.type == "message"
    score = (sample.scores or {})["gaia_scorer"]
    assert score.answer == "shared_files" and score.value == "I", "scored on what it said"


def test_the_agents_shell_goes_through_the_proxy_and_its_reads_are_flagged(
    egress_image: str, internet: StandIns, scripted: Play, tmp_path: Path
) -> None:
    https = fetch(MIRROR_HOST, MIRROR_PATH, scheme="https")
    scripted(
        [
            Entry(
                SALTMERE,
                [
                    {"call": "exec_command", "args": {"cmd": f"{WAIT_FOR_STANDINS}; {https}"}},
                    {"say": "FINAL ANSWER: Thistlewood"},
                ],
            )
        ]
    )
    with internet.attaching():
        log = eval_gaia(
            tmp_path,
            dataset_path=str(GAIA_LEAK),
            ids=question_id(SALTMERE),
            image=AGENTS_IMAGE,
            agent="codex_cli",
            block_answer_sources=True,
        )
    (sample,) = log.samples or []
    assert sample.error is None, sample.error
    (output,) = [m.text for m in sample.messages if isinstance(m, ChatMessageTool)]
    assert f"{REFUSAL_MARKER} https://{MIRROR_HOST}{MIRROR_PATH}" in output
    flags = ((sample.scores or {})["gaia_scorer"].metadata or {})["contamination"]
    assert {(f["kind"], f["where"], f["tool"]) for f in flags} == {
        ("refused", "call", "exec_command"),
        ("refused", "result", "exec_command"),
    }
    assert MIRROR_PATH not in [r.get("path") for r in internet.requests()]
