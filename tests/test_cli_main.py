"""The `inspect-gaia` command as a whole: help, usage errors and the installed console script."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import click
import pytest
from helpers import invoke

from inspect_gaia._cli.main import COMMANDS


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


def test_console_script_is_installed() -> None:
    script = Path(sys.executable).parent / "inspect-gaia"
    run = subprocess.run(
        [str(script), "report", "/nonexistent.eval"], capture_output=True, text=True
    )
    assert run.returncode != 0
    assert "Traceback" not in run.stderr and "does not exist" in run.stderr
