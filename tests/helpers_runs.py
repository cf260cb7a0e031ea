"""Running GAIA evals with the scripted model, in-process or by the CLIs; the tests' constants."""

from __future__ import annotations

import functools
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog, EvalSample, read_eval_log
from inspect_ai.model import get_model

from inspect_gaia import gaia
from support.answer_pages import GAIA_LEAK, PELLBROOK_ID, SALTMERE_ID
from support.scripted_model import Entry, ScriptedModel

REPO = Path(__file__).parent.parent
SANDBOX_IMAGE = os.environ.get("INSPECT_GAIA_TEST_IMAGE", "inspect-gaia/sandbox:bookworm")
"""Image the Docker tests run. CI builds it without a registry (`inspect-gaia image build --offline`)."""
MODEL = "openai-api/scripted/gaia-bot"


class Play(Protocol):
    """The ``scripted`` fixture: set the scenario the scripted model plays, and how it talks."""

    def __call__(self, entries: list[Entry], **options: Any) -> ScriptedModel: ...


# -- running evals ---------------------------------------------------------------------------------


@contextmanager
def model_active(model: str = MODEL) -> Iterator[None]:
    """Tasks made inside are made as ``inspect eval`` makes them: with the run's model active.

    ``gaia()`` reads the model when it is created (``model_check``, an agent's identity); called
    from Python before ``eval()``, no model is active yet. inspect has no public way to set one
    (its ``init_active_model`` sets the context variable this sets, for the block only).
    """
    from inspect_ai.model._model import active_model_context_var

    token = active_model_context_var.set(get_model(model))
    try:
        yield
    finally:
        active_model_context_var.reset(token)


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


@functools.cache
def _listener() -> socket.socket:
    return socket.create_server(("127.0.0.1", 0))  # kept open for the session by the cache


def silent_endpoint() -> str:
    """A base URL where a port listens and nothing answers: the task's check of the model's
    endpoint passes, and a run that must stop before any model call never gets a reply."""
    return f"http://127.0.0.1:{_listener().getsockname()[1]}/v1"


def run_eval_cli(
    task_args: list[str],
    workdir: Path,
    env: dict[str, str] | None = None,
    inspect: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run :func:`eval_command` in ``workdir`` (logs in ``workdir/logs``).

    The scripted model's variables default to a port that listens and never answers
    (``silent_endpoint``), for runs that must stop before any model call; the session's scripted
    server, when started, takes precedence.
    """
    return subprocess.run(
        eval_command(task_args, workdir / "logs", inspect),
        capture_output=True,
        text=True,
        cwd=workdir,
        env={
            "SCRIPTED_API_KEY": "x",
            "SCRIPTED_BASE_URL": silent_endpoint(),
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


def eval_task(task: Task, log_dir: Path, **options: Any) -> EvalLog:
    """Run ``task`` in-process with the scripted model; returns its one log."""
    (log,) = inspect_eval(task, model=MODEL, log_dir=str(log_dir), display="none", **options)
    return log


def eval_gaia(log_dir: Path, **params: Any) -> EvalLog:
    """Run ``gaia(**params)`` in-process with the scripted model; returns its one log."""
    return eval_task(gaia(**params), log_dir)


def eval_blocked_pair(image: str, log_dir: Path) -> EvalLog:
    """gaia-leak's Saltmere and Pellbrook questions at once, behind the run's blocking proxy."""
    task = gaia(
        dataset_path=str(GAIA_LEAK),
        image=image,
        block_answer_sources=True,
        ids=f"{SALTMERE_ID},{PELLBROOK_ID}",
    )
    return eval_task(task, log_dir, max_samples=2)


def sample_asking(samples: list[EvalSample], word: str) -> EvalSample:
    """The sample whose question holds ``word`` (a scenario's key word)."""
    return next(s for s in samples if word in str(s.input))


def metrics(log: EvalLog) -> dict[str, float]:
    """The gaia_scorer's metrics of a log, by name."""
    assert log.results is not None
    (scores,) = [s for s in log.results.scores if s.name == "gaia_scorer"]
    return {name: metric.value for name, metric in scores.metrics.items()}


@dataclass(frozen=True)
class MiniLogs:
    """Logs of real runs on gaia-mini, shared by the CLI tests."""

    validation: Path
    test: Path
    test_level2: Path


# -- the inspect-gaia CLI ------------------------------------------------------------------------


def invoke(*args: str) -> tuple[int, str, str]:
    """Run ``inspect-gaia ARGS`` in-process; exit code, stdout, stderr (no uncaught exception)."""
    from click.testing import CliRunner

    from inspect_gaia._cli.main import cli

    result = CliRunner().invoke(cli, list(args))
    assert not isinstance(result.exception, Exception) or isinstance(
        result.exception, SystemExit
    ), result.exception
    return result.exit_code, result.stdout, result.stderr
