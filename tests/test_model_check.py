"""The run's model checked when the task is created: no model, or an endpoint where nothing
listens, stops the run in one line before any sandbox; a model that answers is left to the run."""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

import pytest

from inspect_gaia import gaia
from inspect_gaia.model_check import GaiaModelError, check_endpoint
from support.scripted_model import Entry
from tests.helpers import (
    MODEL,
    Play,
    eval_command,
    eval_gaia,
    eval_task,
    report_json,
    run_eval_cli,
)
from tests.scenario import GAIA_TINY, LAGOON, VISITS

NO_ENGINE = {"DOCKER_HOST": "tcp://127.0.0.1:9"}
"""An engine address nothing answers at: a run that got as far as a sandbox would say so."""
WIDE = {**NO_ENGINE, "COLUMNS": "300"}
"""A terminal wide enough that inspect's console does not wrap the one line."""


def _closed_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as probe:
        return int(probe.getsockname()[1])


def _lines(run_output: str) -> list[str]:
    return [line for line in run_output.splitlines() if line.strip()]


@pytest.mark.slow  # a new inspect process: seconds
def test_an_endpoint_on_a_closed_port_stops_the_run_in_one_line(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    run = run_eval_cli(
        [f"dataset_path={GAIA_TINY}"], tmp_path, env={**WIDE, "SCRIPTED_BASE_URL": url}
    )
    assert run.returncode == 1
    assert _lines(run.stdout + run.stderr) == [
        f"cannot reach the model {MODEL} at {url} (connection refused) — start the endpoint or "
        "fix its address (--model-base-url or the provider's *_BASE_URL), then rerun"
    ]
    assert not (tmp_path / "logs").exists(), "no sample, no sandbox, no log"


@pytest.mark.slow  # a new inspect process: seconds
def test_no_model_stops_the_run_in_one_line(tmp_path: Path) -> None:
    command = eval_command([f"dataset_path={GAIA_TINY}"], tmp_path / "logs")
    at = command.index("--model")
    del command[at : at + 2]
    env = {k: v for k, v in os.environ.items() if k != "INSPECT_EVAL_MODEL"}
    run = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, env={**env, **WIDE})
    assert run.returncode == 1
    assert _lines(run.stdout + run.stderr) == [
        "no model to run (inspect's none/none) — pass --model provider/name (e.g. --model "
        "openai/gpt-4o) or set INSPECT_EVAL_MODEL"
    ]
    assert not (tmp_path / "logs").exists()


def test_an_unknown_host_is_named() -> None:
    with pytest.raises(GaiaModelError) as raised:
        check_endpoint("openai-api/x/m", "http://no-such-host.invalid:8000/v1")
    assert str(raised.value).startswith(
        "cannot reach the model openai-api/x/m at http://no-such-host.invalid:8000/v1 "
        "(name not known) — "
    )


def test_an_endpoint_that_listens_passes_and_a_proxied_one_is_left_to_the_proxy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with socket.create_server(("127.0.0.1", 0)) as listening:
        check_endpoint("m", f"http://127.0.0.1:{listening.getsockname()[1]}/v1")
    closed = f"http://127.0.0.1:{_closed_port()}/v1"
    with pytest.raises(GaiaModelError, match="connection refused"):
        check_endpoint("m", closed)
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.invalid:3128")
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.invalid:3128")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    check_endpoint("m", "http://no-such-host.invalid/v1")  # the proxy resolves it, not us


@pytest.mark.docker
def test_a_refusal_is_about_one_question_the_run_goes_on(
    sandbox_image: str, scripted: Play, tmp_path: Path
) -> None:
    """A model that answers is reached: its refusal of one question scores that one wrong."""
    scripted(
        [
            Entry("invented lagoon", [{"refuse": True}]),
            Entry("visitors per gallery", [{"submit": "48671"}]),
        ]
    )
    log = eval_gaia(
        tmp_path, dataset_path=str(GAIA_TINY), image=sandbox_image, ids=[LAGOON, VISITS]
    )
    scores = {s.id: s.scores["gaia_scorer"].value for s in log.samples or [] if s.scores}
    assert scores == {LAGOON: "I", VISITS: "C"}
    refused = next(s for s in log.samples or [] if s.id == LAGOON)
    assert refused.error is not None and "refus" in refused.error.message.lower()


@pytest.mark.docker
def test_a_server_that_answers_only_errors_is_flagged_by_report(
    sandbox_image: str, scripted: Play, tmp_path: Path
) -> None:
    """A 501 from the wrong server on the port: reached, so the run goes on (each sample's call
    fails); ``report`` flags the group with the first error's line, not a 0.000 of the model."""
    scripted([Entry("", [{"http_error": 501}])])
    task = gaia(dataset_path=str(GAIA_TINY), image=sandbox_image, ids=[LAGOON, VISITS])
    log = eval_task(task, tmp_path, max_retries=0)
    assert [s.error is not None for s in log.samples or []] == [True, True]
    (group,) = report_json(log.location)["groups"]
    assert group["flags"] == [
        "model calls failed: 2 of 2 samples errored on their model call (openai."
        f"InternalServerError: Error code: 501 - scripted failure 501) — inspect eval-retry "
        f"{log.location}"
    ]
