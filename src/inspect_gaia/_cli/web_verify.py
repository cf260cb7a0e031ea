"""``inspect-gaia web verify``: the archive beside a log is the one it names (``logs/web_verify``).

One line when it is, one per problem when not (exit 1).
"""

from __future__ import annotations

import sys

import click


@click.command()
@click.argument("log", type=click.Path(dir_okay=False))
@click.option(
    "--archive",
    type=click.Path(dir_okay=False),
    help="Check this file against the log, instead of the archive it names beside it.",
)
def verify(log: str, archive: str | None) -> None:
    """Check that LOG's archive is the one its record names, and every body its hash.

    Exits 1 with one line per problem when it is not.
    """
    from ..logs.web_verify import verify as check
    from ._sanitise import printable

    verdict = check(log, archive)
    if verdict.problems:
        for problem in verdict.problems:
            click.echo(printable(f"✗ {problem}", one_line=True), err=True)
        sys.exit(1)
    named = "the archive the log names" if verdict.named else "the archive its .sha256 names"
    click.echo(
        printable(
            f"✓ {verdict.archive}: {named} (SHA-256 {verdict.sha256}); {verdict.bodies} bodies, "
            f"each its hash; {verdict.requests} requests of {verdict.samples} samples as the log "
            "has them",
            one_line=True,
        )
    )
