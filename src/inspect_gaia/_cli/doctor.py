"""``inspect-gaia doctor``: will a GAIA run start on this machine?

The checks themselves are in ``_checks``; this command picks them from its options (the
settings the run will use) and prints one line per check.
"""

from __future__ import annotations

import json
import os
import textwrap
from dataclasses import asdict

import click

from ..image_layout import AGENTS_LAYER, WEB_LAYER
from ..options import DEFAULT_IMAGE
from ..questions.dataset import DEFAULT_SPLIT, SPLITS
from ..questions.hub import DEFAULT_HUB, HUBS
from ..sandboxes.spec import size_bytes
from ._checks import (
    MIN_FREE_GB,
    Check,
    check_dataset,
    check_docker,
    check_free_disk,
    check_layer,
    check_local_dataset,
    check_networks,
    check_proxy_image,
)
from ._output import terminal_width

LAST_STEP = (
    "next, the last step before a run you publish: `inspect eval inspect_gaia/gaia_probe` with "
    "its -T settings (no model), then `inspect-gaia report` on its log must say sealed "
    "(docs/probe.md)"
)
"""What doctor names once every check passed: the probe of the run's own configuration."""


def _line(check: Check, width: int | None = None) -> str:
    """A check as a line: a mark (✓, ! for a warning, ✗), what was checked, and its fix.

    The fix is shown for a failed check or a warning; the line wraps to the terminal's width.
    """
    if not check.ok:
        mark = click.style("✗", fg="red")
    elif check.warning:
        mark = click.style("!", fg="yellow", bold=True)
    else:
        mark = click.style("✓", fg="green")
    fix = f" — {check.fix}" if (not check.ok or check.warning) and check.fix else ""
    lines = textwrap.wrap(
        f"{check.name}: {check.detail}{fix}",
        terminal_width(width),
        initial_indent="  ",  # the mark's place
        subsequent_indent="    ",
        break_long_words=False,
        break_on_hyphens=False,
    )
    return mark + "\n".join(lines)[1:]


def _size(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is not None and size_bytes(value) is None:
        raise click.BadParameter(f"{value!r} is not a size such as 512m or 4g")
    return value


@click.command()
@click.option(
    "--hub",
    type=click.Choice(HUBS),
    default=DEFAULT_HUB,
    show_default=True,
    help="The -T hub= you will run with: where the dataset comes from.",
)
@click.option(
    "--split",
    type=click.Choice(SPLITS),
    default=DEFAULT_SPLIT,
    show_default=True,
    help="The -T split= you will run with.",
)
@click.option("--revision", help="Dataset revision (default: the pinned one).")
@click.option(
    "--dataset-path",
    type=click.Path(exists=True, file_okay=False),
    help="A local snapshot: skips the hub and token checks.",
)
@click.option(
    "--image", default=DEFAULT_IMAGE, show_default=True, help="The sandbox image you will run."
)
@click.option(
    "--max-sandboxes",
    type=click.IntRange(min=1),
    default=2 * (os.cpu_count() or 1),
    show_default=True,
    help="Concurrent sandboxes you plan to run.",
)
@click.option("--no-network", is_flag=True, help="You will run with -T network=false.")
@click.option(
    "--sandbox",
    type=click.Choice(["docker", "compose"]),
    default="docker",
    show_default=True,
    help="The -T sandbox= you will run with.",
)
@click.option(
    "--disk",
    callback=_size,
    help="The -T disk= you will run with, such as 10g (checked to be enforceable).",
)
@click.option(
    "--min-free-gb",
    type=click.FloatRange(min=0),
    default=MIN_FREE_GB,
    show_default=True,
    help="Free disk space, in GB, below which the check fails.",
)
@click.option(
    "--browser",
    is_flag=True,
    help="You will run with -T browser=true or -T web_reader=true (the image must have them).",
)
@click.option(
    "--agents",
    is_flag=True,
    help="You will run with -T agent=claude_code, codex_cli, gemini_cli or mini_swe_agent (the "
    "image must have their CLIs).",
)
@click.option(
    "--egress-proxy",
    is_flag=True,
    help="You will run with -T block_answer_sources, -T web_record or -T web_replay (their "
    "egress proxy's image must be here).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the checks as JSON.")
def doctor(
    hub: str,
    split: str,
    revision: str | None,
    dataset_path: str | None,
    image: str,
    max_sandboxes: int,
    no_network: bool,
    sandbox: str,
    disk: str | None,
    min_free_gb: float,
    browser: bool,
    agents: bool,
    egress_proxy: bool,
    as_json: bool,
) -> None:
    """Check, before a long run, that it would start.

    Docker Engine (and Compose for --sandbox compose) versions, the sandbox image and whether it
    is pinned by digest (with the reference that pins this engine's copy), whether a disk
    limit can be enforced, sandboxes of other runs, the dataset (cached, or hub and token), free
    disk and Docker's address-pool headroom; with --egress-proxy, the image of the proxy that
    -T block_answer_sources, -T web_record (record) and -T web_replay (replay) run: ✓ passed,
    ! a warning (the run starts, but read it, such as no disk limit), ✗ failed with its fix.
    Exit status 0 only when nothing failed. When all pass, the last step before a run you
    publish is named: the probe of its sandboxes (inspect_gaia/gaia_probe, docs/probe.md).

    \b
    Example:
      inspect-gaia doctor --image inspect-gaia/sandbox:bookworm --max-sandboxes 16
    """
    checks = check_docker(image, disk, sandbox == "compose")
    if browser:
        checks.append(check_layer(image, WEB_LAYER))
    if agents:
        checks.append(check_layer(image, AGENTS_LAYER))
    if egress_proxy:
        checks.append(check_proxy_image())
    if dataset_path:
        checks.append(check_local_dataset(dataset_path, split))
    else:
        checks += check_dataset(hub, split, revision)
    checks += [
        check_free_disk(min_free_gb),
        check_networks(max_sandboxes, not no_network, sandbox),
    ]

    if as_json:
        click.echo(json.dumps([asdict(c) for c in checks], indent=2))
    else:
        for c in checks:
            click.echo(_line(c))
        if all(c.ok for c in checks):
            click.echo(LAST_STEP)
    if any(not c.ok for c in checks):
        raise SystemExit(1)
