"""`-T` names gaia does not take: typos and inspect's options refused, other tasks' names warned.

inspect hands every `-T` name to a task that takes `**kwargs`; the refusals are tested through
inspect's own `eval(task_args=...)`, so a release that filters the names again shows here.
"""

from __future__ import annotations

import logging
import subprocess
import sys
import time
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log

import inspect_gaia._param_names as param_names
from inspect_gaia import GaiaParameterError, gaia, gaia_level1
from inspect_gaia._param_names import check_unknown
from inspect_gaia.task import parameter_names
from support.scripted_model import Entry
from tests.helpers import MODEL, Play, eval_command, run_eval_cli
from tests.scenario import GAIA_TINY


def _create(task: str, **task_args: object) -> None:
    """What `inspect eval TASK -T ...` does first: create the task from its registered name."""
    inspect_eval(task, task_args=task_args, model="mockllm/model", display="none")


@pytest.mark.parametrize(
    ("typo", "meant"),
    [
        ("levle", "level"),
        ("lvel", "level"),
        ("splt", "split"),
        ("comand_timeout", "command_timeout"),
        ("netwrok", "network"),
        ("dataset_pth", "dataset_path"),
        ("max_attempt", "max_attempts"),
        ("multimodel", "multimodal"),
        ("memroy", "memory"),
    ],
)
def test_a_typo_is_refused_naming_the_parameter(typo: str, meant: str) -> None:
    with pytest.raises(GaiaParameterError) as raised:
        _create("inspect_gaia/gaia", **{typo: "1", "dataset_path": str(GAIA_TINY)})
    assert str(raised.value) == f"unknown parameter {typo} — did you mean {meant}?"


@pytest.mark.parametrize(
    ("name", "flag"), [("limit", "--limit"), ("epochs", "--epochs"), ("sample_id", "--sample-id")]
)
def test_an_inspect_option_as_a_parameter_is_refused_naming_the_option(
    name: str, flag: str
) -> None:
    with pytest.raises(GaiaParameterError) as raised:
        _create("inspect_gaia/gaia", **{name: "2", "dataset_path": str(GAIA_TINY)})
    assert str(raised.value) == f"unknown parameter {name} — did you mean inspect's {flag}?"


def test_another_tasks_parameter_is_ignored_with_a_warning(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(param_names, "_warned", set())
    with caplog.at_level(logging.WARNING, logger=param_names.__name__):
        task = gaia(difficulty="hard", dataset_path=str(GAIA_TINY))
        gaia_level1(difficulty="hard", dataset_path=str(GAIA_TINY))  # an eval-set's second
    assert len(task.dataset) == 7
    (warning,) = [r.getMessage() for r in caplog.records if r.name == param_names.__name__]
    assert (
        warning == "-T difficulty: gaia has no such parameter, so it is ignored (another task's?)"
    )


@pytest.mark.parametrize(
    ("args", "fix"),
    [
        ({"tools": "python"}, "did you mean -T python=true?"),
        ({"tools": "python,web_search"}, "did you mean -T python=true -T web_search=true?"),
        ({"difficulty": "hard"}, "drop it (the README's Parameters table lists the task's)"),
    ],
)
def test_with_one_task_any_unknown_name_is_refused(args: dict[str, str], fix: str) -> None:
    """Issue #40: `-T tools=python` ran without python; no other task could take the name."""
    (name,) = args
    with pytest.raises(GaiaParameterError) as raised:
        _create("inspect_gaia/gaia", **args, dataset_path=str(GAIA_TINY))
    assert str(raised.value) == f"unknown parameter {name}: gaia has no such parameter — {fix}"


def test_an_eval_set_of_gaias_level_tasks_refuses_what_none_of_them_takes() -> None:
    """Issue #50: `eval-set gaia_level1 gaia_level2 -T tools=python` only warned `(another
    task's?)`, without the `python=true` hint, though neither task takes it."""
    with pytest.raises(GaiaParameterError) as raised:
        inspect_eval(
            ["inspect_gaia/gaia_level1", "inspect_gaia/gaia_level2"],
            task_args={"tools": "python", "dataset_path": str(GAIA_TINY)},
            model="mockllm/model",
            display="none",
        )
    assert str(raised.value) == (
        "unknown parameter tools: gaia has no such parameter — did you mean -T python=true?"
    )


def test_beside_another_packages_task_the_warning_gives_the_hint(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(param_names, "_warned", set())
    with caplog.at_level(logging.WARNING, logger=param_names.__name__):
        gaia(tools="python", dataset_path=str(GAIA_TINY))  # not inspect's loader: maybe another's
    (warning,) = [r.getMessage() for r in caplog.records if r.name == param_names.__name__]
    assert warning == (
        "-T tools: gaia has no such parameter, so it is ignored (another task's?); for gaia, did "
        "you mean -T python=true?"
    )


def test_a_terminal_sees_the_warning_and_a_pause(monkeypatch: pytest.MonkeyPatch) -> None:
    """In a terminal the warning is printed before inspect's display takes the screen."""
    monkeypatch.setattr(param_names, "_warned", set())
    paused: list[float] = []
    monkeypatch.setattr(time, "sleep", paused.append)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    printed: list[str] = []
    monkeypatch.setattr("builtins.print", lambda text, **_: printed.append(str(text)))
    check_unknown({"difficulty": "hard", "shots": 3}, parameter_names(), "gaia")
    assert printed == [
        "WARNING -T difficulty, -T shots: gaia has no such parameter, so it is ignored (another "
        "task's?) — Ctrl-C to stop; starting in 5 s"
    ]
    assert paused == [param_names.PAUSE]


def test_a_level_task_refuses_another_level() -> None:
    with pytest.raises(GaiaParameterError) as raised:
        _create("inspect_gaia/gaia_level1", level=2, dataset_path=str(GAIA_TINY))
    assert str(raised.value) == (
        "gaia_level1 asks level 1 only — for -T level=2, run inspect_gaia/gaia"
    )
    with pytest.raises(GaiaParameterError, match="did you mean level"):
        _create("inspect_gaia/gaia_level2", levle=2, dataset_path=str(GAIA_TINY))


@pytest.mark.slow  # a new inspect process: seconds
def test_a_typo_on_the_command_line_stops_before_any_engine_is_asked(tmp_path: Path) -> None:
    """`-T levle=1`: one line, exit 1, no log; the engine (refused here) is never contacted."""
    run = run_eval_cli(
        [f"dataset_path={GAIA_TINY}", "levle=1"], tmp_path, env={"DOCKER_HOST": "tcp://127.0.0.1:9"}
    )
    lines = [line for line in (run.stdout + run.stderr).splitlines() if line.strip()]
    assert run.returncode == 1
    assert lines == ["unknown parameter levle — did you mean level?"]
    assert not (tmp_path / "logs").exists(), "nothing may start"


@pytest.mark.slow  # a new inspect process: seconds
def test_an_unknown_name_with_one_task_stops_before_any_engine_is_asked(tmp_path: Path) -> None:
    run = run_eval_cli(
        [f"dataset_path={GAIA_TINY}", "tools=python"],
        tmp_path,
        env={"DOCKER_HOST": "tcp://127.0.0.1:9", "COLUMNS": "300"},
    )
    lines = [line for line in (run.stdout + run.stderr).splitlines() if line.strip()]
    assert run.returncode == 1
    assert lines == [
        "unknown parameter tools: gaia has no such parameter — did you mean -T python=true?"
    ]
    assert not (tmp_path / "logs").exists(), "nothing may start"


OTHER_TASK = """
from inspect_ai import Task, task
from inspect_ai.dataset import Sample


@task
def other(difficulty: str = "easy") -> Task:
    return Task(dataset=[Sample(input=difficulty, target=difficulty)])
"""


@pytest.mark.slow
@pytest.mark.docker
def test_an_eval_set_gives_other_tasks_their_names(
    sandbox_image: str, scripted: Play, tmp_path: Path
) -> None:
    """`-T difficulty=` goes to both tasks of the set: the other task takes it, gaia warns and
    runs; inspect's own `--limit` reaches both as the option it is."""
    scripted([Entry("zanzibar", [{"say": "zanzibar"}]), Entry("", [{"submit": "x"}])])
    (tmp_path / "other.py").write_text(OTHER_TASK)
    command = eval_command(
        [f"dataset_path={GAIA_TINY}", f"image={sandbox_image}", "difficulty=zanzibar"],
        tmp_path / "logs",
    )
    command[1:3] = ["eval-set", "inspect_gaia/gaia", "other.py@other"]
    run = subprocess.run(
        [*command, "--limit", "1", "--retry-attempts", "0"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert "-T difficulty: gaia has no such parameter" in " ".join(
        (run.stdout + run.stderr).split()
    )
    logs = {
        log.eval.task: log
        for log in (read_eval_log(str(p)) for p in (tmp_path / "logs").glob("*.eval"))
    }
    assert set(logs) == {"inspect_gaia/gaia", "other"}
    assert logs["other"].eval.task_args["difficulty"] == "zanzibar"
    assert [len(log.samples or []) for log in logs.values()] == [1, 1]
    assert all(log.status == "success" for log in logs.values())
    assert logs["inspect_gaia/gaia"].eval.model == MODEL
