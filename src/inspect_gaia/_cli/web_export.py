"""``inspect-gaia web export``: a log's recorded web as a HAR 1.2 file (``logs/web_export``)."""

from __future__ import annotations

import sys
from pathlib import Path

import click


@click.command()
@click.argument("log", type=click.Path(dir_okay=False))
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The HAR file to write (default: standard output).",
)
@click.option("--sample", help="Only this sample's requests (its id), every epoch.")
@click.option(
    "--archive",
    type=click.Path(dir_okay=False),
    help="The run's archive of bodies, when it is not beside the log under the name it records.",
)
def export(log: str, output: Path | None, sample: str | None, archive: str | None) -> None:
    """Write LOG's recorded web as HAR 1.2: every request, bodies from its archive.

    Opens in a browser's developer tools and in Playwright's routeFromHAR; each entry names its
    sample and epoch (_sample, _epoch) and how the proxy decided (_decision).
    """
    from ..errors import GaiaError
    from ..logs.web_export import export as write

    if output is not None and output.resolve() == Path(log).resolve():
        raise GaiaError(f"{output} is the log given", fix="name another file for the HAR (-o)")
    if output is None:
        entries, found = write(log, sys.stdout, archive=archive, sample=sample)
        return
    part = output.with_name(output.name + ".part")
    try:
        with part.open("w", encoding="utf-8") as out:
            entries, found = write(log, out, archive=archive, sample=sample)
        part.replace(output)
    finally:
        part.unlink(missing_ok=True)
    bodies = "no bodies (the run kept none)" if found is None else f"bodies from {found.path}"
    click.echo(f"{output}: {entries} requests as HAR 1.2, {bodies}", err=True)
