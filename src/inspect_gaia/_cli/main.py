"""``inspect-gaia``: the commands around ``inspect eval inspect_gaia/gaia``.

Every command imports inspect_ai (about 1.5 s), so the group imports a command only to run it or
show its own help: ``inspect-gaia --help`` lists them from ``COMMANDS`` and imports none.
"""

from __future__ import annotations

import importlib
import sys
from typing import IO, Any

import click

from ..flags import mark_cli

COMMANDS: dict[str, str] = {
    "tryout": "Invented questions run in real sandboxes by a script: checks the machine, no key.",
    "doctor": "Check, before a long run, that it would start.",
    "download": "Fetch GAIA into the cache the task reads, so later runs work offline.",
    "image": "Build the sandbox image, with or without a registry.",
    "report": "Accuracy, its spread and its cost per model and level, from GAIA LOGS.",
    "compare": "Put two GAIA runs A and B side by side on the questions both answered.",
    "submission": "Write the GAIA leaderboard file for test-split LOGS, and a note beside it.",
    "web": "The recorded web: HAR out of a log, archives merged, an archive verified.",
}
"""Each command (module ``_cli/<name>.py``, function ``<name>``) and its one-line help, in the
order of a user's path; a test keeps the lines equal to the commands' own."""


class UsageLine(click.ClickException):
    """A click usage error (unknown option, bad value) as one line that names the command's help."""

    exit_code = 2

    def __init__(self, error: click.UsageError) -> None:
        """Keep the command path and click's message, on one line."""
        path = error.ctx.command_path if error.ctx is not None else "inspect-gaia"
        problem = " ".join(error.format_message().split()).rstrip(".")
        super().__init__(f"{path}: {problem[:1].lower()}{problem[1:]} — see `{path} --help`")

    def show(self, file: IO[Any] | None = None) -> None:
        """The one line, on stderr."""
        click.echo(self.message, err=True, file=file)


class _Group(click.Group):
    """Lazy commands; inspect_gaia's errors and click's usage errors as one line on stderr."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        command = getattr(importlib.import_module(f".{cmd_name}", __package__), cmd_name)
        assert isinstance(command, click.Command)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl(list(COMMANDS.items()))

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.UsageError as ex:
            raise UsageLine(ex) from ex

    def invoke(self, ctx: click.Context) -> Any:
        mark_cli(ctx)
        try:
            return super().invoke(ctx)
        except click.UsageError as ex:
            raise UsageLine(ex) from ex
        except Exception as ex:
            from ..errors import GaiaError  # imports inspect_ai: only on this path
            from ._sanitise import printable

            if not isinstance(ex, GaiaError):
                raise
            # a path or a value from a log: shown, never obeyed by the terminal
            click.echo(printable(f"inspect-gaia: {ex}", one_line=True), err=True)
            sys.exit(1)


@click.group(name="inspect-gaia", cls=_Group, invoke_without_command=True)
@click.version_option(package_name="inspect-gaia")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """GAIA for inspect_ai: checks and data before a run, reports and submissions after it.

    \b
    A run:   inspect eval inspect_gaia/gaia --model openai/gpt-4o -T level=1
    Then:    inspect-gaia report logs/
    """
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help())


def main() -> None:
    """Console-script entry point."""
    cli()
