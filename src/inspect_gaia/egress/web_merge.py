"""Archives and HARs combined into one: a frozen web that grows (``inspect-gaia web merge``).

Each input is checked as a replay checks it (``replay_source.read_source``: an archive as data, a
HAR within its bounds); the output is an archive in the same layout, which ``-T web_replay`` and
this command read again: ``record/merged.jsonl`` (every servable response, each line naming its
``sample``, ``epoch``, ``sandbox`` and ``source``, the rank of its input), ``record/bodies/`` (each
distinct body once) and ``record/run.json`` (the inputs with their SHA-256, whether each one's
run blocked answer sources, and the conflicts).

**The rule for the same request recorded differently.** A request is its method, its exact URL
and whose it is (sample and epoch; a HAR's entries are no sample's). When two inputs hold it with
different answers (status or body), the first input named keeps it and the later one's is left
out, listed in the command's output and in ``run.json``'s ``conflicts``; when they hold the same
answers, it is kept once. Within one input nothing is left out (a page a sample polled keeps each
answer, replayed in turn). Different samples' answers for one URL are no conflict: a replay serves
each sample its own (``replay_match``), and among the others the first input's first.

What is not servable (a refused or blocked request, a body not kept) is not carried over: the
merged archive is the web a replay can serve. ``blocked_answer_sources`` is true when every input
says it blocked, false when one says it did not, and unknown (``null``) otherwise.
"""

from __future__ import annotations

import json
import os
import tarfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .replay_source import read_source
from .web_archive import MANIFEST, Archive, body_chunks, tar_member

LINES = "record/merged.jsonl"


@dataclass
class Merged:
    """What ``merge`` wrote."""

    inputs: list[Archive]
    responses: int = 0
    bodies: int = 0
    samples: int = 0
    duplicates: int = 0
    conflicts: list[dict[str, Any]] = field(default_factory=list)


def merge(paths: Sequence[str], out: Path) -> Merged:
    """Combine the archives and HARs at ``paths`` (first wins) into the archive ``out``.

    Raises:
        web_archive.ArchiveError: An input cannot be read as data (its one line).
    """
    inputs = [read_source(path) for path in paths]
    merged = Merged(inputs)
    kept: dict[tuple[str, str, str | None, int | None], tuple[int, list[tuple[int, str]]]] = {}
    lines: list[dict[str, Any]] = []
    for rank, archive in enumerate(inputs):
        mine: dict[tuple[str, str, str | None, int | None], list[dict[str, Any]]] = {}
        for line in archive.lines:
            data = line.data
            if data.get("body") != "kept" or data.get("sha256") not in archive.bodies:
                continue
            key = (str(data.get("method")), str(data.get("url")), line.sample, line.epoch)
            mine.setdefault(key, []).append(
                {**data, "sample": line.sample, "epoch": line.epoch, "sandbox": line.sandbox}
            )
        for key, found in mine.items():
            answers = [(int(x["status"]), str(x["sha256"])) for x in found]
            if key in kept:
                first, theirs = kept[key]
                if theirs == answers:
                    merged.duplicates += 1
                else:
                    merged.conflicts.append(_conflict(key, inputs, first, theirs, rank, answers))
                continue
            kept[key] = (rank, answers)
            lines += [{**x, "source": rank} for x in found]
    sources: dict[str, int] = {}
    for data in lines:
        sources.setdefault(str(data["sha256"]), int(data["source"]))
    merged.responses = len(lines)
    merged.bodies = len(sources)
    merged.samples = len({(x["sample"], x["epoch"]) for x in lines if x["sample"] is not None})
    _write(out, inputs, lines, sources, _manifest(merged))
    return merged


def _conflict(
    key: tuple[str, str, str | None, int | None],
    inputs: list[Archive],
    first: int,
    kept: list[tuple[int, str]],
    rank: int,
    dropped: list[tuple[int, str]],
) -> dict[str, Any]:
    method, url, sample, epoch = key
    return {
        "method": method,
        "url": url,
        "sample": sample,
        "epoch": epoch,
        "kept": {"input": os.path.basename(inputs[first].path), "answers": kept},
        "left_out": {"input": os.path.basename(inputs[rank].path), "answers": dropped},
    }


def _manifest(merged: Merged) -> dict[str, Any]:
    said = [archive.blocked for archive in merged.inputs]
    blocked = False if False in said else (True if all(said) else None)
    return {
        "format": "inspect_gaia web archive",
        "blocked_answer_sources": blocked,
        "merged_from": [
            {
                "name": os.path.basename(a.path),
                "sha256": a.sha256,
                "kind": a.kind,
                "blocked_answer_sources": a.blocked,
            }
            for a in merged.inputs
        ],
        "conflicts": merged.conflicts,
    }


def _write(
    out: Path,
    inputs: list[Archive],
    lines: list[dict[str, Any]],
    sources: dict[str, int],
    manifest: dict[str, Any],
) -> None:
    """The output archive, written beside ``out`` and renamed over it once whole."""
    part = out.with_name(out.name + ".part")
    record = "".join(json.dumps(x) + "\n" for x in lines).encode()
    about = json.dumps(manifest, indent=1).encode()
    try:
        with part.open("wb") as f:
            for chunk in tar_member(LINES, len(record), iter([record])):
                f.write(chunk)
            for chunk in tar_member(MANIFEST, len(about), iter([about])):
                f.write(chunk)
            for rank, archive in enumerate(inputs):
                loaded = archive.load_bodies() if archive.load_bodies is not None else None
                for sha256, source in sources.items():
                    if source != rank:
                        continue
                    size = archive.bodies[sha256][1]
                    body: Iterator[bytes] = (
                        iter([loaded[sha256]])
                        if loaded is not None
                        else body_chunks(archive, sha256)
                    )
                    for chunk in tar_member(f"record/bodies/{sha256}", size, body):
                        f.write(chunk)
                del loaded
            f.write(bytes(2 * tarfile.BLOCKSIZE))
        part.replace(out)
    except BaseException:
        part.unlink(missing_ok=True)
        raise
