"""Other agents end to end: each CLI of the agents image, driven by the scripted model through
inspect's bridge, in a real gaia-docker sandbox, on a gaia-tiny question with an attachment."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from inspect_ai.log import EvalLog

from inspect_gaia.agents_image import LABELS
from support.scripted_model import Entry
from tests.helpers import Play, eval_gaia
from tests.scenario import GAIA_TINY, VISITS

pytestmark = [pytest.mark.docker, pytest.mark.slow]

AGENTS_IMAGE = "inspect-gaia/sandbox:bookworm-agents"
SUM = (
    "python3 -c \"import csv; print('sum=' + format(sum(int(r['visitors']) for r in "
    "csv.DictReader(open('/shared_files/9410e454-b071-52ff-ac24-dce9845bebd0.csv'))), ','))\""
)
"""The shell command that reads the attachment: the answer is printed after ``sum=``."""
FOUND = r"sum=([\d,]+)"
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
