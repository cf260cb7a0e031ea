"""``inspect-gaia web merge``: archives and HARs into one archive (``egress/web_merge``)."""

from __future__ import annotations

from pathlib import Path

import click

SHOWN = 10
"""Conflicts listed on the terminal (``run.json`` in the output has them all)."""


@click.command()
@click.argument("inputs", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The archive to write (a tar, as -T web_replay reads it).",
)
def merge(inputs: tuple[str, ...], output: Path) -> None:
    """Combine archives (and HAR files) INPUTS into one archive, for -T web_replay.

    The same request recorded differently (status or body) is kept as the first input named has
    it; each one left out is listed.
    """
    from ..egress.web_archive import ArchiveError
    from ..egress.web_merge import merge as combine
    from ..errors import GaiaError
    from ._sanitise import printable

    if any(output.resolve() == Path(i).resolve() for i in inputs):
        raise GaiaError(f"{output} is one of the inputs", fix="name another file (-o)")
    try:
        merged = combine(inputs, output)
    except ArchiveError as ex:
        raise GaiaError(str(ex), fix="name web_record=bodies archives or HAR files") from None
    click.echo(
        printable(
            f"{output}: {merged.responses} responses ({merged.bodies} bodies, {merged.samples} "
            f"samples) from {len(inputs)} inputs; {merged.duplicates} recorded alike in several, "
            f"{len(merged.conflicts)} recorded differently (the first input's kept)",
            one_line=True,
        )
    )
    for conflict in merged.conflicts[:SHOWN]:
        who = f"sample {conflict['sample']}" if conflict["sample"] else "no sample"
        click.echo(
            printable(
                f"  {conflict['method']} {conflict['url']} ({who}): kept "
                f"{conflict['kept']['input']}'s, left out {conflict['left_out']['input']}'s",
                one_line=True,
            )
        )
    if len(merged.conflicts) > SHOWN:
        click.echo(f"  and {len(merged.conflicts) - SHOWN} more (all in record/run.json)")
