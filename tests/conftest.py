"""Shared fixtures: the scripted model server, the sandbox image, Docker bookkeeping."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog, read_eval_log
from scenario import GAIA_TINY, TEST, VALIDATION
from scripted_model import Entry, ScriptedModel, serve

from inspect_gaia import gaia

SANDBOX_IMAGE = os.environ.get("INSPECT_GAIA_TEST_IMAGE", "inspect-gaia/sandbox:bookworm")
"""Image the Docker tests run. CI builds it without a registry (`inspect-gaia image build --offline`)."""

MODEL = "openai-api/scripted/gaia-bot"


@pytest.fixture
def gaia_tiny() -> Path:
    return GAIA_TINY


@pytest.fixture(scope="session")
def sandbox_image() -> str:
    """The sandbox image; a missing engine or image fails the test, it never skips it."""
    info = subprocess.run(["docker", "info"], capture_output=True, text=True)
    assert info.returncode == 0, (
        "Docker Engine not running — start it with `bash .ci/docker-engine.sh` (or your "
        f"platform's Docker service): {info.stderr.strip()[-300:]}"
    )
    image = subprocess.run(["docker", "image", "inspect", SANDBOX_IMAGE], capture_output=True)
    assert image.returncode == 0, (
        f"sandbox image {SANDBOX_IMAGE} is missing — build it with "
        "`inspect-gaia image build --offline` or set INSPECT_GAIA_TEST_IMAGE"
    )
    return SANDBOX_IMAGE


@pytest.fixture(scope="session")
def scripted_server() -> Iterator[ScriptedModel]:
    """One scripted model server for the whole session (env vars set), scenario swapped per test.

    One server, not one per test: inspect caches model clients, so a second server on another port
    would leave later evals talking to a closed one.
    """
    model = ScriptedModel([])
    with serve(model) as url, pytest.MonkeyPatch.context() as patch:
        patch.setenv("SCRIPTED_BASE_URL", url)
        patch.setenv("SCRIPTED_API_KEY", "scripted")
        yield model


@pytest.fixture
def scripted(scripted_server: ScriptedModel) -> Callable[[list[Entry]], ScriptedModel]:
    """Set the scenario the scripted model plays in this test."""

    def play(entries: list[Entry]) -> ScriptedModel:
        scripted_server.entries = entries
        scripted_server.calls.clear()
        scripted_server.tools_offered.clear()
        return scripted_server

    return play


@pytest.fixture
def scripted_validation(scripted: Callable[[list[Entry]], ScriptedModel]) -> ScriptedModel:
    """The scripted model answering gaia-tiny's validation questions."""
    return scripted(VALIDATION)


@pytest.fixture
def scripted_test_split(scripted: Callable[[list[Entry]], ScriptedModel]) -> ScriptedModel:
    """The scripted model answering gaia-tiny's test questions."""
    return scripted(TEST)


SANDBOX_KINDS = ["docker", "compose"]
"""Both Docker sandboxes: gaia-docker (the default) and inspect's compose sandbox."""


@pytest.fixture(params=SANDBOX_KINDS)
def sandbox_kind(request: pytest.FixtureRequest) -> str:
    """Run a cleanup, fault or leak test against each Docker sandbox (``-T sandbox=...``)."""
    return str(request.param)


def docker_leftovers() -> set[str]:
    """Containers, networks and volumes of either Docker sandbox.

    gaia-docker labels its own ``inspect_gaia.sandbox``; inspect's compose sandbox names its
    compose projects ``inspect-*``. Counted by label, never by deleting anything.
    """
    labels = '{{.Label "inspect_gaia.sandbox"}}\t{{.Label "com.docker.compose.project"}}'
    found: set[str] = set()
    for kind, listing, name_field in (
        ("container", ["docker", "ps", "-a"], "{{.Names}}"),
        ("network", ["docker", "network", "ls"], "{{.Name}}"),
        ("volume", ["docker", "volume", "ls"], "{{.Name}}"),
    ):
        out = subprocess.run(
            [*listing, "--format", f"{name_field}\t{labels}"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for line in out.splitlines():
            name, ours, project = (line.split("\t") + ["", ""])[:3]
            if ours or project.startswith("inspect-"):
                found.add(f"{kind}:{name}")
    return found


@pytest.fixture
def isolated_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point the snapshot cache at an empty temporary directory."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("INSPECT_GAIA_CACHE_DIR", str(cache))
    return cache


def inspect_cli() -> str:
    """The ``inspect`` CLI of the interpreter running the tests."""
    found = Path(sys.executable).parent / "inspect"
    assert found.is_file(), f"no inspect CLI beside {sys.executable}; install the package first"
    return str(found)


def eval_command(task_args: list[str], log_dir: Path, inspect: str | None = None) -> list[str]:
    """``inspect eval inspect_gaia/gaia -T ...`` with the scripted model, logging to ``log_dir``."""
    args = [arg for value in task_args for arg in ("-T", value)]
    return [inspect or inspect_cli(), "eval", "inspect_gaia/gaia", *args, "--model", MODEL] + [
        "--log-dir",
        str(log_dir),
        "--display",
        "plain",
    ]


def run_eval_cli(
    task_args: list[str],
    workdir: Path,
    env: dict[str, str] | None = None,
    inspect: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run :func:`eval_command` in ``workdir`` (logs in ``workdir/logs``).

    The scripted model's variables default to a closed port, for runs that must stop before any
    model call; the session's scripted server, when started, takes precedence.
    """
    return subprocess.run(
        eval_command(task_args, workdir / "logs", inspect),
        capture_output=True,
        text=True,
        cwd=workdir,
        env={
            "SCRIPTED_API_KEY": "x",
            "SCRIPTED_BASE_URL": "http://127.0.0.1:9/v1",
            **os.environ,
            **(env or {}),
        },
    )


def cli_eval(task_args: list[str], workdir: Path, inspect: str | None = None) -> EvalLog:
    """Run ``inspect eval inspect_gaia/gaia -T ...`` with the scripted model in ``workdir``.

    Returns the one log it wrote; fails with the CLI's output when the run fails.
    """
    run = run_eval_cli(task_args, workdir, inspect=inspect)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    (log_file,) = (workdir / "logs").glob("*.eval")
    return read_eval_log(str(log_file))


_skipped: list[str] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Remember skips: in CI a skipped test (a Docker test above all) is a failure.

    An expected failure (strict xfail, with its reason) is reported as skipped too; it is not one.
    """
    if report.skipped and not hasattr(report, "wasxfail"):
        _skipped.append(report.nodeid)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail a CI run (``CI`` set) that skipped anything."""
    if os.environ.get("CI") and _skipped and exitstatus == 0:
        print(f"\nCI: {len(_skipped)} test(s) skipped, which CI does not allow: {_skipped}")
        session.exitstatus = 1


def eval_task(task: Task, log_dir: Path) -> EvalLog:
    """Run ``task`` in-process with the scripted model; returns its one log."""
    (log,) = inspect_eval(task, model=MODEL, log_dir=str(log_dir), display="none")
    return log


def eval_gaia(log_dir: Path, **params: Any) -> EvalLog:
    """Run ``gaia(**params)`` in-process with the scripted model; returns its one log."""
    return eval_task(gaia(**params), log_dir)
