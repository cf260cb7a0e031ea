"""Other agents end to end: each CLI of the agents image, driven by the scripted model through
inspect's bridge, in a real gaia-docker sandbox, on a gaia-tiny question with an attachment."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai import task_with
from inspect_ai.model import ChatMessageTool

from inspect_gaia import gaia
from inspect_gaia.defaults import AgentName
from inspect_gaia.egress.urlrules import REFUSAL_MARKER
from inspect_gaia.errors import GaiaParameterError
from inspect_gaia.images.agents import LABELS
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
from tests.helpers import MODEL, Play, eval_gaia, invoke, running_containers
from tests.scenario import CREW, GAIA_TINY, LAGOON, VISITS

HERONS = "08efad48-7b05-5662-b32c-3635fd01cd40"
"""gaia-tiny's txt question."""

pytestmark = [pytest.mark.docker, pytest.mark.slow]

AGENTS_IMAGE = "inspect-gaia/sandbox:bookworm-agents"
_FILES = "/shared_files"
# Each agent answers its own gaia-tiny question from its attachment: the three runs go at once.
QUESTIONS: dict[AgentName, tuple[str, str, str, str]] = {
    "mini_swe_agent": (
        VISITS,
        "visitors per gallery",
        "python3 -c \"import csv; print('answer=' + format(sum(int(r['visitors']) for r in "
        f"csv.DictReader(open('{_FILES}/{VISITS}.csv'))), ','))\"",
        "48,671",
    ),
    "claude_code": (
        CREW,
        "crew of a skiff",
        f"python3 -c \"import json; c=json.load(open('{_FILES}/{CREW}.json'))['crew']; "
        "print('answer=' + '; '.join(m['name'] for m in sorted(c, key=lambda m: m['joined'])))\"",
        "Marisol Vantreek; Odalys Pembury; Fenwick Astolar",
    ),
    "codex_cli": (
        HERONS,
        "heron or herons",
        f"echo answer=$(( $(grep -c heron {_FILES}/{HERONS}.txt) * 9173 ))",
        "27519",
    ),
}
"""Agent: its question's task id, words of it, the shell command that reads the attachment
(printing ``answer=``), and the right answer."""
FOUND = r"answer=([\w,; ]+)"
"""The answer in a tool result (mini-swe-agent's is JSON: its newline is ``\\n``)."""
_LIST = {"call": "exec_command", "args": {"cmd": "ls /"}}


def _steps(agent: str, command: str) -> list[dict[str, Any]]:
    """A shell command that reads the attachment, then the answer, as each CLI takes them."""
    if agent == "mini_swe_agent":  # every turn calls its bash tool; it ends on its exit command
        exit_command = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
        return [{"bash": command}, {"bash": exit_command, "answer_found": FOUND}]
    # Claude Code's Bash, Codex's exec_command; then a message with no tool call ends it
    if agent == "claude_code":
        call = {"call": "Bash", "args": {"command": command, "description": "read the file"}}
    else:
        call = {"call": "exec_command", "args": {"cmd": command}}
    return [call, {"answer_found": FOUND}]


def test_each_agent_reads_the_attachment_and_is_scored_right_and_a_limit_stops_one(
    scripted: Play, tmp_path: Path
) -> None:
    entries = [Entry(words, _steps(agent, cmd)) for agent, (_, words, cmd, _) in QUESTIONS.items()]
    # and one that never answers: every turn runs a command and says a provisional answer
    scripted([*entries, Entry("invented lagoon", [{**_LIST, "answer_found": r"\b(bin)\b"}])])
    tasks = [
        gaia(dataset_path=str(GAIA_TINY), ids=task_id, image=AGENTS_IMAGE, agent=agent)
        for agent, (task_id, *_) in QUESTIONS.items()
    ]
    endless = gaia(dataset_path=str(GAIA_TINY), ids=LAGOON, image=AGENTS_IMAGE, agent="codex_cli")
    tasks.append(task_with(endless, message_limit=8))
    *logs, limited = inspect_eval(
        tasks, model=MODEL, log_dir=str(tmp_path), display="none", max_tasks=len(tasks)
    )
    # the message limit stops it, and it is scored on what it said
    (sample,) = limited.samples or []
    assert sample.limit is not None and sample.limit.type == "message"
    score = (sample.scores or {})["gaia_scorer"]
    assert (score.answer, score.value) == ("bin", "I")
    Path(limited.location).unlink()  # the report below reads the three others

    for log, (agent, (_, _, _, answer)) in zip(logs, QUESTIONS.items(), strict=True):
        assert log.status == "success", (agent, log.error)
        (sample,) = log.samples or []
        assert sample.error is None, (agent, sample.error)
        score = (sample.scores or {})["gaia_scorer"]
        assert (score.answer, score.value) == (answer, "C"), agent
        assert score.metadata and score.metadata["answer_source"] == "final_answer_marker"
        assert "contamination" not in score.metadata, "reading its own attachment is no flag"
        record = (log.eval.metadata or {})["gaia"]
        assert record["agent"] == {
            "name": agent,
            "cli_version": LABELS[f"inspect_gaia.agents.{agent}"],
            "inspect_swe_version": "0.2.72",
        }
        assert record["tools"] == [f"agent:{agent}"]
    # report keeps each agent apart and names it
    code, out, _ = invoke("report", str(tmp_path), "--format", "json")
    assert code == 0
    flags = sorted(f for group in json.loads(out)["groups"] for f in group["flags"])
    assert flags == [
        f"agent: {agent} {LABELS[f'inspect_gaia.agents.{agent}']} (inspect_swe 0.2.72)"
        for agent in sorted(QUESTIONS)
    ]


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
    assert (
        code == 1 and not check["ok"] and "has no `claude` or `codex` or `mini`" in check["detail"]
    )
    _, out, _ = invoke("doctor", "--image", AGENTS_IMAGE, "--agents", "--json")
    check = next(c for c in json.loads(out) if c["name"] == "agents")
    assert check["ok"] and "claude_code 2.1.332" in check["detail"], check


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
