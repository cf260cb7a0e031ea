"""Other agents end to end: each CLI of the agents image, driven by the scripted model through
inspect's bridge, in a real gaia-docker sandbox, on a gaia-tiny question with an attachment:
scored right, mini-swe-agent on its GAIA configuration (no SWE-bench wording reaches the model),
the identity each CLI is told recorded, the memory warning, and the refusals before any sandbox.

``INSPECT_GAIA_TEST_AGENTS_IMAGE`` names another agents image (one built under a tag of one's
own while the agents change)."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai import task_with
from inspect_ai.model import ChatMessageTool

from inspect_gaia import gaia
from inspect_gaia.agents.mini_config import configuration
from inspect_gaia.agents.sizing import memory_warning
from inspect_gaia.agents.swe import CLAUDE_IDENTITY, GEMINI_IDENTITY
from inspect_gaia.defaults import AgentName
from inspect_gaia.egress.urlrules import REFUSAL_MARKER
from inspect_gaia.errors import GaiaParameterError
from inspect_gaia.image_layout import OFFLINE_AGENTS_TAG
from inspect_gaia.images.agents import LABELS
from inspect_gaia.sandboxes.docker import client
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
from tests.helpers_runs import model_active
from tests.scenario import CREW, GAIA_TINY, LAGOON, VISITS
from tests.test_swe_agents import SWE_WORDS

HERONS = "08efad48-7b05-5662-b32c-3635fd01cd40"
"""gaia-tiny's txt question."""
LANTERNS = "9f5ddf59-f099-5276-b702-dfa6abde1964"
"""gaia-tiny's xlsx question: the mean of three months' sales, to one decimal."""

pytestmark = [pytest.mark.docker, pytest.mark.slow]

AGENTS_IMAGE = os.environ.get(
    "INSPECT_GAIA_TEST_AGENTS_IMAGE", "inspect-gaia/sandbox:bookworm-agents"
)
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
    "gemini_cli": (
        LANTERNS,
        "lanterns were sold",
        "python3 -c \"import re, zipfile; v=[int(x) for x in re.findall('<v>([0-9]+)</v>', "
        f"zipfile.ZipFile('{_FILES}/{LANTERNS}.xlsx').read('xl/worksheets/sheet1.xml')"
        ".decode())]; print('answer=%.1f' % (sum(v) / len(v)))\"",
        "1204.7",
    ),
}
"""Agent: its question's task id, words of it, the shell command that reads the attachment
(printing ``answer=``), and the right answer."""
FOUND = r"answer=([\w,;. ]+)"
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
    elif agent == "gemini_cli":
        call = {"call": "run_shell_command", "args": {"command": command}}
    else:
        call = {"call": "exec_command", "args": {"cmd": command}}
    return [call, {"answer_found": FOUND}]


IDENTITIES = {"claude_code": CLAUDE_IDENTITY, "gemini_cli": GEMINI_IDENTITY}
"""What the CLIs are told their model is with the scripted model (none: its own name)."""


def test_each_agent_reads_the_attachment_and_is_scored_right_and_a_limit_stops_one(
    scripted: Play, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    entries = [Entry(words, _steps(agent, cmd)) for agent, (_, words, cmd, _) in QUESTIONS.items()]
    # and one that never answers: every turn runs a command and says a provisional answer
    model = scripted(
        [*entries, Entry("invented lagoon", [{**_LIST, "answer_found": r"\b(bin)\b"}])]
    )
    with model_active():  # as `inspect eval` makes them: the identity each CLI is told is known
        tasks = [
            gaia(dataset_path=str(GAIA_TINY), ids=task_id, image=AGENTS_IMAGE, agent=agent)
            for agent, (task_id, *_) in QUESTIONS.items()
        ]
        endless = gaia(
            dataset_path=str(GAIA_TINY), ids=LAGOON, image=AGENTS_IMAGE, agent="codex_cli"
        )
    tasks.append(task_with(endless, message_limit=8))
    # more samples at once than the engine holds agent sandboxes: one warning per task
    too_many = 100_000
    with caplog.at_level(logging.WARNING, logger="inspect_gaia.agents.sizing"):
        *logs, limited = inspect_eval(
            tasks,
            model=MODEL,
            log_dir=str(tmp_path),
            display="none",
            max_tasks=len(tasks),
            max_samples=too_many,
        )
    warned = sorted(r.getMessage() for r in caplog.records if r.name.endswith("sizing"))
    engine_bytes = int(client.info()["MemTotal"])
    how = f"--max-samples {too_many}"
    assert warned == sorted(
        str(memory_warning(agent, too_many, how, engine_bytes))
        for agent in [*QUESTIONS, "codex_cli"]
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
            "identity": IDENTITIES.get(agent),
            "configuration": configuration(agent),
        }
        assert record["tools"] == [f"agent:{agent}"]
    # mini-swe-agent ran on GAIA's configuration: no SWE-bench wording reached the model
    mini = [r for r in model.requests if "visitors per gallery" in json.dumps(r.get("messages"))]
    assert mini
    for request in mini:
        said = [m for m in request["messages"] if m["role"] in ("system", "user")]
        text = json.dumps(said)
        assert "GAIA benchmark" in text and "FINAL ANSWER: <your answer>" in text
        assert not SWE_WORDS.findall(text), SWE_WORDS.findall(text)
    # report keeps each agent apart and names it
    code, out, _ = invoke("report", str(tmp_path), "--format", "json")
    assert code == 0
    flags = sorted(f for group in json.loads(out)["groups"] for f in group["flags"])
    assert flags == [
        f"agent: {agent} {LABELS[f'inspect_gaia.agents.{agent}']} (inspect_swe 0.2.72)"
        + (f", told it is {IDENTITIES[agent]}" if agent in IDENTITIES else "")
        + (f", configuration {configuration(agent)}" if configuration(agent) else "")
        for agent in sorted(QUESTIONS)
    ]


def test_an_image_without_the_clis_stops_the_run_before_any_sandbox(sandbox_image: str) -> None:
    before = running_containers()
    # an agent whose bridge grants the provider's search: refused before anything starts
    with pytest.raises(GaiaParameterError, match="^-T agent=opencode cannot be sealed: "):
        gaia(dataset_path=str(GAIA_TINY), image=AGENTS_IMAGE, agent="opencode")  # type: ignore[arg-type]
    with pytest.raises(GaiaParameterError) as caught:
        gaia(dataset_path=str(GAIA_TINY), image=sandbox_image, agent="codex_cli")
    assert str(caught.value) == (
        f"-T agent=codex_cli: the sandbox image {sandbox_image} has no `codex` — build one with "
        f"`inspect-gaia image build --offline --agents` and pass `-T image={OFFLINE_AGENTS_TAG}`"
    )
    assert running_containers() == before
    # doctor --agents says the same, and passes the agents image with its versions
    code, out, _ = invoke("doctor", "--image", sandbox_image, "--agents", "--json")
    check = next(c for c in json.loads(out) if c["name"] == "agents")
    assert code == 1 and not check["ok"]
    assert "has no `claude` or `codex` or `gemini` or `mini`" in check["detail"]
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
