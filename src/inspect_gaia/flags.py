"""How a fix names a task parameter: in the flags of the command the user ran.

The same problem (GAIA is gated, the hub is unreachable, an image is missing) is met under
``inspect eval``, whose flags are ``-T name=value``, and under ``inspect-gaia`` commands, which
have their own options (``download --hub``, ``submission --dataset-path``, ``doctor --image``)
or none at all for that parameter. Messages ask ``flag("hub", "modelscope")`` and get the
spelling of the command running now, or ``None`` when it has no such option (the clause is then
left out). Only click is imported here: the ``inspect-gaia`` entry point uses this module too.
"""

from __future__ import annotations

import click

_CLI = "inspect_gaia.cli"
"""``click.Context.meta`` key set by the ``inspect-gaia`` command group."""


def mark_cli(ctx: click.Context) -> None:
    """Say that commands under ``ctx`` are ``inspect-gaia``'s (their options name parameters)."""
    ctx.meta[_CLI] = True


def flag(name: str, value: str | None = None) -> str | None:
    """How the running command sets task parameter ``name`` (to ``value``), if it can.

    Args:
        name: The task parameter (``hub``, ``dataset_path``, ``image``...).
        value: The value to show, or ``None`` for the bare flag.

    Returns:
        ``-T name=value`` outside ``inspect-gaia`` (under ``inspect eval``); inside it, the
        command's own option (``--dataset-path``, ``--hub modelscope``); ``None`` when the
        command has no option for ``name``.
    """
    ctx = click.get_current_context(silent=True)
    if ctx is None or not ctx.meta.get(_CLI):
        return f"-T {name}={value or ''}"
    for param in ctx.command.params:
        if isinstance(param, click.Option) and param.name == name:
            option = max(param.opts, key=len)
            return option if value is None else f"{option} {value}"
    return None


def either(*clauses: str | None) -> str:
    """The clauses the running command can follow, joined with ", or " (``None`` left out)."""
    return ", or ".join(clause for clause in clauses if clause)
