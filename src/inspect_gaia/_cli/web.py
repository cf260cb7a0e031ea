"""``inspect-gaia web``: a run's recorded web out of the log, in the web's own formats.

The group; each command is its own module: ``web_export`` (HAR 1.2 from a log and its archive),
``web_merge`` (archives and HARs into one archive) and ``web_verify`` (the archive beside a log is
the one it names, whole). docs/web-record.md describes them.
"""

from __future__ import annotations

import click

from .web_export import export
from .web_merge import merge
from .web_verify import verify


@click.group(invoke_without_command=True)
@click.pass_context
def web(ctx: click.Context) -> None:
    """The recorded web: HAR out of a log, archives merged, an archive verified."""
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help())


web.add_command(export)
web.add_command(merge)
web.add_command(verify)
