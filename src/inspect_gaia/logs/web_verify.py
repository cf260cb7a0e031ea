"""Whether the archive beside a log is the one it names, and whole (``web verify``).

Three checks, each a line when it fails:

* the file's SHA-256 and size are those the log's record names (``web_archive``, written once the
  archive closed; a log that names none is checked against the ``<archive>.sha256`` beside it, and
  says so);
* the archive reads whole as data (``egress/web_archive.py``: regular files under ``record/``,
  nothing hidden, every body the record kept the size it says and hashing to its name);
* every request a sample holds in the log that the archive recorded has the body hash the log
  has, and every body the record says it kept is there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..egress.replay_match import file_sha256
from ..egress.web_archive import ArchiveError, read_archive
from ..egress.web_record import UNANSWERED
from ..errors import GaiaError
from .read import read_inspect_log
from .web_export import NOT_NAMED, locate_archive, request_key


@dataclass
class Verdict:
    """What ``verify`` found."""

    archive: Path
    sha256: str
    named: bool
    """Whether the log's record named the archive (else its ``.sha256`` file was read)."""
    problems: list[str] = field(default_factory=list)
    bodies: int = 0
    requests: int = 0
    samples: int = 0


def verify(log: str | Path, archive: str | Path | None = None) -> Verdict:
    """Check the archive of ``log`` (``archive``: another file to check against the log).

    Raises:
        GaiaError: The log names no archive and none was given, or the file is missing.
    """
    run = read_inspect_log(log)
    path = locate_archive(run, log, archive)
    if path is None:
        raise GaiaError(NOT_NAMED, fix="give the archive with --archive")
    if not path.is_file():
        raise GaiaError(f"there is no archive {path} beside the log", fix="give it with --archive")
    record = run.provenance.web_archive if run.provenance is not None else None
    verdict = Verdict(path, file_sha256(str(path)), named=record is not None)
    if record is not None:
        if verdict.sha256 != record.sha256 or path.stat().st_size != record.bytes:
            verdict.problems.append(
                f"{path.name} is not the archive the log names: SHA-256 {verdict.sha256[:16]}…, "
                f"{path.stat().st_size} bytes; the log names {record.sha256[:16]}…, "
                f"{record.bytes} bytes"
            )
    else:
        sidecar = path.with_name(path.name + ".sha256")
        said = sidecar.read_text().split()[0] if sidecar.is_file() else None
        if said != verdict.sha256:
            verdict.problems.append(
                f"{path.name} is not the archive its {sidecar.name} names"
                if said
                else f"{NOT_NAMED}, and {sidecar.name} is missing"
            )
    try:
        archive_read = read_archive(str(path), servable_only=False)
    except ArchiveError as ex:
        verdict.problems.append(str(ex))
        return verdict
    verdict.bodies = len(archive_read.bodies)
    lines: dict[tuple[float, str, str], list[dict[str, object]]] = {}
    for line in archive_read.lines:
        lines.setdefault(request_key(line.data), []).append(line.data)
        if line.data.get("body") == "kept" and line.data.get("sha256") not in archive_read.bodies:
            verdict.problems.append(
                f"{line.data.get('url')}: the record kept its body, the archive does not hold it"
            )
    for sample in run.samples:
        if sample.web is None:
            continue
        verdict.samples += 1
        for request in sample.web:
            if request.error == UNANSWERED:
                continue
            verdict.requests += 1
            there = lines.get(request_key(request.as_dict()), [])
            if not there:
                verdict.problems.append(
                    f"sample {sample.task_id} (epoch {sample.epoch}): {request.method} "
                    f"{request.url} is not in the archive"
                )
            elif request.sha256 not in {x.get("sha256") for x in there}:
                verdict.problems.append(
                    f"sample {sample.task_id} (epoch {sample.epoch}): {request.url} hashes "
                    f"{str(request.sha256)[:16]}… in the log, "
                    f"{str(there[0].get('sha256'))[:16]}… in the archive"
                )
    return verdict
