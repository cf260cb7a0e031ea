"""``inspect-gaia tryout``: the README's first command, run as a newcomer runs it (issue #50).

The command runs in a process of its own, from an empty folder, with no model key, no dataset,
no ``openai`` import needed and no network: the scripted model is inspect's ``mockllm``, and an
empty ``tiktoken`` cache proves it counts no tokens with a downloaded encoding. Its log then
opens in ``inspect-gaia report`` and in ``inspect view``'s own server.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import quote

import pytest
from inspect_ai.log import read_eval_log
from inspect_ai.model import ChatMessageTool

from inspect_gaia.tryout import script
from tests.helpers import REPO, SANDBOX_IMAGE

README_IMAGE = "inspect-gaia/sandbox:bookworm"


def readme_tryout() -> list[str]:
    """The README's ``inspect-gaia tryout`` for a machine with no registry, as written there."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    (command,) = set(re.findall(r"`(inspect-gaia tryout --image [^`]+)`", text))
    return str(command).split()


def test_the_readme_names_the_tryout_first_and_says_what_it_checks() -> None:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    block = text.split("```bash\n", 1)[1].split("```", 1)[0]
    commands = [line.split("#")[0].strip() for line in block.splitlines()]
    assert commands[1] == "inspect-gaia tryout", "the first command after the install"
    assert "checks the\nmachine, not a model" in text
    assert readme_tryout() == ["inspect-gaia", "tryout", "--image", README_IMAGE]


def test_the_shipped_questions_are_invented_and_in_gaias_layout() -> None:
    folder = Path(script.__file__).parent / "questions" / "2023" / "validation"
    rows = [json.loads(line) for line in (folder / "metadata.jsonl").read_text().splitlines()]
    assert [row["Level"] for row in rows] == [1, 2, 3]
    for row in rows:
        assert "Invented for inspect-gaia tryout" in row["Annotator Metadata"]["Steps"]
        if row["file_name"]:
            assert (folder / row["file_name"]).is_file()
        assert any(steps.phrase in row["Question"] for steps in script.STEPS)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _get(url: str, deadline: float) -> bytes:
    while True:
        try:
            with urllib.request.urlopen(url, timeout=10) as answer:
                return bytes(answer.read())
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


@pytest.mark.docker
def test_the_readme_tryout_runs_scores_and_leaves_a_log_view_and_report_open(
    sandbox_image: str, tmp_path: Path
) -> None:
    command = readme_tryout()
    command[-1] = sandbox_image  # the README's image, unless CI was told another
    bin = Path(sys.executable).parent
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.endswith("_API_KEY") and not key.endswith("_BASE_URL")
    }
    env.update(TIKTOKEN_CACHE_DIR=str(tmp_path / "no-tiktoken"), PATH=f"{bin}:{env['PATH']}")
    run = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, env=env)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert (
        f"tryout: 3 of 3 invented questions right (accuracy 1.000), in sandboxes of {SANDBOX_IMAGE}"
        in (run.stdout.replace(sandbox_image, SANDBOX_IMAGE))
    )
    assert "not a model" in run.stdout
    assert "inspect view --log-dir logs-tryout" in run.stdout
    assert not list((tmp_path / "no-tiktoken").glob("*")), "no encoding fetched"

    (location,) = (tmp_path / "logs-tryout").glob("*.eval")
    log = read_eval_log(str(location))
    assert log.samples is not None and len(log.samples) == 3
    for sample in log.samples:
        # inspect view lists the question; the model was asked the prompt (issue #50)
        first = next(m for m in sample.messages if m.role == "user")
        assert isinstance(sample.input, str) and not sample.input.startswith("Please answer")
        assert first.text.startswith("Please answer the question below.")
        assert first.text.endswith(f"Here is the question:\n\n{sample.input}")
        # every answer came out of the sample's own sandbox, through the bash tool
        (result, _) = [m for m in sample.messages if isinstance(m, ChatMessageTool)]
        assert result.error is None and result.text.strip() == sample.target
        assert sample.scores is not None and sample.scores["gaia_scorer"].value == "C"

    report = subprocess.run(
        [str(bin / "inspect-gaia"), "report", "logs-tryout", "--format", "json"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
    )
    assert report.returncode == 0, report.stderr
    (group,) = json.loads(report.stdout)["groups"]
    overall = next(level for level in group["levels"] if level["level"] == "all")
    assert (overall["questions"], overall["correct"]) == (3, 3)

    port = _free_port()
    view = subprocess.Popen(
        [str(bin / "inspect"), "view", "--log-dir", "logs-tryout", "--port", str(port)],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        listing = json.loads(_get(f"http://127.0.0.1:{port}/api/log-files", time.monotonic() + 60))
        (name,) = [f["name"] for f in listing["files"]]
        assert name.endswith(f"/logs-tryout/{location.name}")
        shown = json.loads(_get(f"http://127.0.0.1:{port}/api/logs/{quote(name, safe='')}", 0))
        assert shown["status"] == "success" and len(shown["samples"]) == 3
        questions = {str(sample.input) for sample in log.samples}
        assert {sample["input"] for sample in shown["samples"]} == questions
    finally:
        view.terminate()
        view.wait(timeout=30)
