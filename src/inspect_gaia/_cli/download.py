"""``inspect-gaia download``: fetch GAIA into the cache the task reads."""

from __future__ import annotations

import json
from typing import Literal

import click

from ..errors import counted
from ..questions.dataset import SPLITS, YEAR, Split, metadata_file, resolve_snapshot
from ..questions.hub import DEFAULT_HUB, HUBS, Hub
from ..questions.snapshot_files import read_records


@click.command()
@click.option(
    "--hub",
    type=click.Choice(HUBS),
    default=DEFAULT_HUB,
    show_default=True,
    help="Where to download from.",
)
@click.option(
    "--split",
    "splits",
    type=click.Choice((*SPLITS, "all")),
    default="all",
    show_default=True,
    help="Which split(s) to fetch.",
)
@click.option("--revision", help="Dataset revision (default: the task's pinned one).")
@click.option("--json", "as_json", is_flag=True, help="Print what was fetched as JSON.")
def download(hub: Hub, splits: Split | Literal["all"], revision: str | None, as_json: bool) -> None:
    """Fetch GAIA into the cache the task reads, so later runs work offline.

    Idempotent: a split already complete is not fetched again; an interrupted download is resumed
    and never taken for complete.

    \b
    Examples:
      HF_TOKEN=hf_... inspect-gaia download --split validation
      inspect-gaia download --hub modelscope
    """
    fetched = []
    for split in SPLITS if splits == "all" else (splits,):  # click checked both choices
        root, resolved = resolve_snapshot(split, hub, revision, None)
        records = read_records(metadata_file(root, split))
        fetched.append(
            {
                "hub": hub,
                "revision": resolved,
                "split": split,
                "path": str(root / YEAR / split),
                "questions": len(records),
                "attachments": sum(1 for r in records if r.get("file_name")),
            }
        )
    if as_json:
        click.echo(json.dumps(fetched, indent=2))
        return
    for item in fetched:
        click.echo(
            f"✓ {item['split']}: {counted(int(str(item['questions'])), 'question')}, "
            f"{counted(int(str(item['attachments'])), 'attachment')} "
            f"in {item['path']} ({item['hub']} @ {item['revision']})"
        )
