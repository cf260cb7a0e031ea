"""A log's recorded web, with its archive's bodies, as HAR 1.2 (``inspect-gaia web export``).

The log holds each sample's requests (its store: ``web_record.STORE_KEY``); the archive beside it
(``-T web_record=bodies``) holds the response headers and bodies. Each request of the log is one
entry, joined to its archive line by when it was asked, its method and URL (the proxy wrote both
from one flow); a line of the archive no sample holds (a request between a sandbox's start and
its naming, ``_unattributed``) is an entry too, its sample the archive's own word when it has one.
Written by ``egress/har_write.py``, streamed.

**Memory.** The archive's record lines (their headers) and each sample's requests are held; each
body streams from the archive into the output in chunks of ``content_coding.CHUNK``, read twice (its
decoded size first, as HAR writes it after the text). ``benchmarks/web_archive.py`` measures a
1 GiB archive's export; docs/benchmarks.md has the figure.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import IO

from ..egress.har_write import Exchange, write_har
from ..egress.web_archive import Archive, ArchiveError, body_chunks, read_archive
from ..errors import GaiaError
from .read import read_inspect_log
from .results import RunResults

NOT_NAMED = (
    "the log names no web archive (a run without -T web_record=bodies, one from before schema 8, "
    "or one whose hash could not be written)"
)


def locate_archive(run: RunResults, log: str | Path, given: str | Path | None) -> Path | None:
    """The archive of ``run``: ``given``, else the one its record names, beside ``log``."""
    if given is not None:
        return Path(given)
    record = run.provenance.web_archive if run.provenance is not None else None
    return None if record is None else Path(log).parent / record.archive


def open_archive(path: Path, flag: str) -> Archive:
    """The archive at ``path``, checked (raises ``GaiaError`` naming ``flag``)."""
    try:
        return read_archive(str(path), servable_only=False)
    except ArchiveError as ex:
        raise GaiaError(str(ex), fix=f"name the run's archive with {flag}") from None


def read_web(log: str | Path, archive: str | Path | None) -> tuple[RunResults, Archive | None]:
    """The run of ``log`` and its archive (``None``: it kept none, and none was given).

    Raises:
        GaiaError: The log recorded no web, or the archive is missing or damaged.
    """
    run = read_inspect_log(log)
    if not any(s.web is not None for s in run.samples):
        raise GaiaError(
            f"{log} recorded no web (its samples hold no requests)",
            fix="export a run of -T web_record=true, bodies or block_answer_sources=true",
        )
    path = locate_archive(run, log, archive)
    if path is None:
        return run, None
    if not path.is_file():
        raise GaiaError(f"there is no archive {path} beside the log", fix="give it with --archive")
    return run, open_archive(path, "--archive")


def exchanges(
    run: RunResults, archive: Archive | None, sample: str | None = None
) -> Iterator[Exchange]:
    """Every recorded request of ``run`` (or of one ``sample``), in the order asked."""
    waiting: dict[tuple[float, str, str], list[int]] = {}
    lines = archive.lines if archive is not None else []
    for number, line in enumerate(lines):
        waiting.setdefault(request_key(line.data), []).append(number)
    used: set[int] = set()
    found: list[Exchange] = []
    for result in run.samples:
        for request in result.web or ():
            fields = request.as_dict()
            numbers = waiting.get(request_key(fields), [])
            mine = [
                n for n in numbers if n not in used and lines[n].sample in (None, result.task_id)
            ]
            if mine:
                used.add(mine[0])
                fields = {**lines[mine[0]].data, **fields}
            if sample is None or sample == result.task_id:
                found.append(_exchange(fields, result.task_id, result.epoch, archive))
    for number, line in enumerate(lines):
        if number not in used and (sample is None or sample == line.sample):
            found.append(_exchange(line.data, line.sample, line.epoch, archive))
    yield from sorted(found, key=lambda e: float(e.line.get("t") or 0))


def _exchange(
    fields: dict[str, object], sample: str | None, epoch: int | None, archive: Archive | None
) -> Exchange:
    sha256 = fields.get("sha256")
    kept = archive is not None and fields.get("body") == "kept" and sha256 in archive.bodies
    if not kept or archive is None or not isinstance(sha256, str):
        return Exchange(fields, sample, epoch)
    held = archive
    return Exchange(fields, sample, epoch, body=lambda: body_chunks(held, sha256))


def request_key(fields: dict[str, object]) -> tuple[float, str, str]:
    """When a request was asked (to the millisecond, as recorded), its method and URL."""
    t = fields.get("t")
    return (
        round(float(t), 3) if isinstance(t, int | float) else 0.0,
        str(fields.get("method")),
        str(fields.get("url")),
    )


def export(
    log: str | Path, out: IO[str], *, archive: str | Path | None = None, sample: str | None = None
) -> tuple[int, Archive | None]:
    """Write ``log``'s recorded web (or one ``sample``'s) to ``out`` as HAR; entries, archive.

    Raises:
        GaiaError: The log recorded no web, ``sample`` is none of its samples, or the archive is
            missing or damaged.
    """
    from importlib.metadata import version

    run, found = read_web(log, archive)
    if sample is not None and sample not in {s.task_id for s in run.samples}:
        raise GaiaError(
            f"{log} has no sample {sample}", fix="give a sample id the log holds, or no --sample"
        )
    return write_har(out, exchanges(run, found, sample), version("inspect-gaia")), found
