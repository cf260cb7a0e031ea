"""The `inspect-gaia` command as a whole: help, usage errors and the installed console script."""

from __future__ import annotations

import fnmatch
import importlib
import inspect
import shlex
import subprocess
import sys
from pathlib import Path

import click
import pytest

from inspect_gaia._cli.main import COMMANDS, cli
from tests.helpers import invoke


def test_help_names_every_command_once_in_the_users_order() -> None:
    code, out, _ = invoke("--help")
    assert code == 0
    rows = out.split("Commands:")[1].splitlines()
    assert [
        row.split()[0] for row in rows if row.startswith("  ") and not row[2].isspace()
    ] == list(COMMANDS)
    assert invoke("image", "build", "--help")[0] == 0


def test_the_listed_help_is_each_commands_own() -> None:
    for name, line in COMMANDS.items():
        command = getattr(importlib.import_module(f"inspect_gaia._cli.{name}"), name)
        assert isinstance(command, click.Command)
        assert command.get_short_help_str(limit=1000) == line, name


def test_help_does_not_import_inspect_ai() -> None:
    # Every command imports inspect_ai (about 1.5 s): the listing must not.
    code = (
        "import sys\n"
        "from inspect_gaia._cli.main import cli\n"
        "try:\n"
        "    cli(['--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('LOADED', sorted(m for m in sys.modules if m.startswith('inspect_ai')))"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "Commands:" in run.stdout
    assert run.stdout.strip().endswith("LOADED []")


@pytest.mark.parametrize("args", [(), ("image",)])
def test_a_group_without_a_command_prints_its_help_and_exits_0(args: tuple[str, ...]) -> None:
    code, out, err = invoke(*args)
    assert code == 0 and out.startswith("Usage:") and err == ""


@pytest.mark.slow  # a new Python process: seconds each
def test_console_script_is_installed() -> None:
    script = Path(sys.executable).parent / "inspect-gaia"
    run = subprocess.run(
        [str(script), "report", "/nonexistent.eval"], capture_output=True, text=True
    )
    assert run.returncode != 0
    assert "Traceback" not in run.stderr and "does not exist" in run.stderr


COMMAND_PATHS = [
    ("doctor",),
    ("download",),
    ("image", "build"),
    ("report",),
    ("compare",),
    ("submission",),
]


def _command(path: tuple[str, ...]) -> click.Command:
    command: click.Command = cli
    for name in path:
        assert isinstance(command, click.Group)
        found = command.get_command(click.Context(command), name)
        assert found is not None, name
        command = found
    return command


def _options(command: click.Command) -> set[str]:
    return {opt for param in command.params for opt in param.opts if opt.startswith("-")}


@pytest.mark.parametrize("path", COMMAND_PATHS, ids=" ".join)
def test_help_examples_copy_paste_at_any_width(
    path: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    command = _command(path)
    text = inspect.cleandoc(command.help or "")
    assert "\b\nExample" in text, "examples in a \\b block"
    block = text.split("\b\n", 1)[1].split("\n\n")[0]
    examples = [line.strip() for line in block.splitlines() if line.startswith("  ")]
    assert examples
    monkeypatch.setenv("COLUMNS", "50")  # click would rewrap a plain paragraph at this width
    code, out, _ = invoke(*path, "--help")
    shown = {line.strip() for line in out.splitlines()}
    for example in examples:
        assert example in shown, example
        words = shlex.split(example)
        if "inspect-gaia" in words:
            own = words[words.index("inspect-gaia") + 1 + len(path) :]
            flags = {w.split("=")[0] for w in own if w.startswith("-")}
            assert flags <= _options(command), (example, flags - _options(command))


def test_submission_help_globs_match_inspects_log_names() -> None:
    from inspect_ai._util.log_layout import eval_log_name  # the name inspect gives a log

    _, out, _ = invoke("submission", "--help")
    globs = [
        shlex.split(line)[2]
        for line in out.splitlines()
        if line.strip().startswith("inspect-gaia submission")
    ]
    assert len(globs) == 2
    for task, glob in zip(("inspect_gaia/gaia", "inspect_gaia/gaia_level1"), globs, strict=True):
        name = eval_log_name(
            task=task, task_id="Vz3xQmN8", created="2026-12-01T10:15:00+00:00", model="m/x"
        )
        assert fnmatch.fnmatch(f"logs/test/{name}.eval", glob), (name, glob)
    # each glob takes only its own kind of run
    level = eval_log_name(task="inspect_gaia/gaia_level1", task_id="a", created="t", model="m")
    assert not fnmatch.fnmatch(f"logs/test/{level}.eval", globs[0])
