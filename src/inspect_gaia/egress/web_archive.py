"""A web archive read on the host, trusting none of it: data, never code (``-T web_replay``).

An archive (``-T web_record=bodies``'s tar, or one ``inspect-gaia web merge`` wrote) is read here
with Python's ``tarfile`` and nothing else, before any sandbox starts, and refused in one line
(``ArchiveError``) unless:

* every member is a regular file or a folder under ``record/`` (no link, device, FIFO or sparse
  file; no absolute name, no ``..``, no name twice);
* every member lies whole within the file, and Python reads the file to its end: what follows
  its last member is zeros only (a header Python stops at, hiding members another reader would
  unpack, is refused);
* the record's files are within ``RECORD_CAP`` bytes together, and every body the record says
  was kept has the size the record gives and hashes to its name.

What the proxy then receives is not the archive: it is a tar the host writes (``proxy_stream``)
of the servable responses (``replay_match.INDEX``, one line each, and the decoded twins of the
content-coded ones, ``replay_decoded``) and their bodies, each read again from the archive and
hashed again on its way (an archive changed since its check stops the
proxy's start). The replay's program is the package's (``shipped``), copied after it. So nothing
in an archive can place a file where the proxy runs code, or unpack to more than it holds.

The layout this reads: ``record/<sandbox>.jsonl`` (the recorder's lines, ``egress/recorder.py``),
``record/bodies/<sha256>``, ``record/samples/<sandbox>`` (which sample a sandbox was, JSON
``{"id", "epoch"}``, written by the run at each sample's start), ``record/run.json``
(``MANIFEST``: whether the run blocked answer sources) and, in a merged archive, lines that name
their ``sample``, ``epoch`` and ``source`` (the input's rank) themselves. Anything else under
``record/`` (the recorder's ``open/`` and ``clients/``) is read past and never sent.
"""

from __future__ import annotations

import io
import json
import os
import re
import tarfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from .content_coding import decode
from .replay_match import BODIES, INDEX, Recorded, file_sha256

RECORD = "record/"
MANIFEST = "record/run.json"
"""The run's own words about its archive: ``{"blocked_answer_sources": bool, ...}``."""
SAMPLES = "record/samples/"
RECORD_CAP = 256 << 20
"""The record's lines (all its ``.jsonl`` files) read at most, in bytes; more is refused."""
SMALL_CAP = 64 << 10
"""A sample's or the manifest's file, at most."""
CHUNK = 1 << 20
_LINES = re.compile(r"record/[^/]+\.jsonl")
_BODY = re.compile(r"record/bodies/([0-9a-f]{64})")
_SAMPLE = re.compile(r"record/samples/([^/]+)")
_CONTROL = re.compile(r"[\x00-\x1f\x7f\\]")


class ArchiveError(ValueError):
    """An archive that cannot be replayed, exported or merged: one line, what is wrong."""


@dataclass(frozen=True)
class Line:
    """One request of the record: its fields as written, and whose sandbox wrote it."""

    data: dict[str, Any]
    sandbox: str
    sample: str | None = None
    epoch: int | None = None
    source: int = 0
    """In a merged archive, the rank of the input it came from (0 first)."""


@dataclass
class Archive:
    """What a check found: the file's hash, every request, the servable responses and bodies."""

    path: str
    sha256: str
    kind: str
    """``archive`` (a tar) or ``har``."""
    lines: list[Line] = field(default_factory=list)
    responses: list[Recorded] = field(default_factory=list)
    """Servable, in the archive's order (its input's rank, then the time asked)."""
    bodies: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Each servable body's SHA-256: its offset in the file and its size (a HAR: 0, size)."""
    blocked: bool | None = None
    """Whether the run that recorded it refused answer sources; ``None``: it does not say."""
    manifest: dict[str, Any] = field(default_factory=dict)
    load_bodies: Callable[[], dict[str, bytes]] | None = None
    """Every servable body, read again at once (a HAR's come from its JSON); ``None``: each is
    read from the tar (``body_chunks``)."""
    twins: list[Recorded] = field(default_factory=list)
    """The decoded twins of its content-coded responses a replay serves a client that does not
    accept their coding (``replay_decoded.add_twins``); none until a replay's check made them."""
    decoded: dict[str, tuple[str, tuple[str, ...], int]] = field(default_factory=dict)
    """Each twin's body by its SHA-256: the coded body it decodes, the codings, its size."""


def read_archive(path: str, servable_only: bool = True) -> Archive:
    """Check the tar at ``path`` whole (see the module docstring) and say what it holds.

    Args:
        path: The archive.
        servable_only: Refuse one with no response a replay could serve (``web export`` and
            ``web verify`` read any).

    Raises:
        ArchiveError: It is missing, no tar, cut short, hostile, or holds nothing servable.
    """
    if not os.path.isfile(path):
        raise ArchiveError(f"there is no file {path}")
    size = os.path.getsize(path)
    digest = file_sha256(path)
    texts: dict[str, bytes] = {}
    bodies: dict[str, tuple[int, int]] = {}
    read = 0
    with open(path, "rb") as f:
        try:
            tar = tarfile.open(fileobj=f, mode="r:")
            seen: set[str] = set()
            for member in tar:
                _check_member(member, size, seen)
                if not member.isfile():
                    continue
                body = _BODY.fullmatch(member.name)
                if body is not None:
                    bodies[body.group(1)] = (member.offset_data, member.size)
                    continue
                wanted = _LINES.fullmatch(member.name) or member.name == MANIFEST
                if not (wanted or _SAMPLE.fullmatch(member.name)):
                    continue  # the recorder's own bookkeeping (open/, clients/): never sent
                cap = RECORD_CAP - read if _LINES.fullmatch(member.name) else SMALL_CAP
                if member.size > cap:
                    raise ArchiveError(
                        f"{path}: {member.name} is {member.size} bytes, more than a record holds "
                        f"({cap} left of {RECORD_CAP})"
                    )
                read += member.size if _LINES.fullmatch(member.name) else 0
                got = tar.extractfile(member)
                texts[member.name] = got.read() if got else b""
            end = tar.offset
        except (tarfile.TarError, EOFError) as ex:
            raise ArchiveError(f"{path} is not a whole web archive ({ex})") from ex
        _check_end(f, path, end)
    archive = Archive(path=path, sha256=digest, kind="archive")
    _read_record(archive, texts)
    with open(path, "rb") as f:
        for sha256, (offset, length) in _servable_bodies(archive, bodies).items():
            for _ in _body_chunks(f, path, sha256, offset, length):
                pass
            archive.bodies[sha256] = (offset, length)
    archive.responses = servable(archive.lines, archive.bodies)
    if servable_only and not archive.responses:
        raise ArchiveError(f"{path} holds no recorded response with its body")
    return archive


def _check_member(member: tarfile.TarInfo, size: int, seen: set[str]) -> None:
    name = member.name
    parts = name.split("/")
    if (
        (not name.startswith(RECORD) and name != RECORD.rstrip("/"))
        or any(part in ("", ".", "..") for part in parts[1:])
        or _CONTROL.search(name)
    ):
        raise ArchiveError(f"{name!r} is no file of a web archive's record/ folder")
    if member.issparse() or any(k.startswith("GNU.sparse") for k in member.pax_headers):
        raise ArchiveError(f"{name} is a sparse file (it would unpack to more than it holds)")
    if not (member.isfile() or member.isdir()):
        kind = "a link" if member.issym() or member.islnk() else "no regular file"
        raise ArchiveError(f"{name} is {kind}: an archive holds regular files only")
    if member.offset_data + member.size > size:
        raise ArchiveError(f"{name} is cut short ({member.size} bytes said, the file ends first)")
    if name in seen:
        raise ArchiveError(f"{name} is in the archive twice")
    seen.add(name)


def _check_end(f: io.BufferedReader, path: str, end: int) -> None:
    """What follows the last member Python read must be zeros: no member hidden from it."""
    f.seek(end)
    while chunk := f.read(CHUNK):
        if chunk.count(0) != len(chunk):
            raise ArchiveError(
                f"{path} holds data after the end Python reads (at byte {end}): members "
                "hidden from this check"
            )
        end += len(chunk)


def _read_record(archive: Archive, texts: dict[str, bytes]) -> None:
    """The lines, each with its sandbox's sample; the manifest."""
    samples: dict[str, tuple[str, int | None]] = {}
    for name, text in texts.items():
        found = _SAMPLE.fullmatch(name)
        if found is not None:
            who = _json(text)
            if isinstance(who, dict) and isinstance(who.get("id"), str | int):
                epoch = who.get("epoch")
                samples[found.group(1)] = (str(who["id"]), epoch if _is_int(epoch) else None)
    manifest = _json(texts.get(MANIFEST, b"{}"))
    archive.manifest = manifest if isinstance(manifest, dict) else {}
    blocked = archive.manifest.get("blocked_answer_sources")
    archive.blocked = blocked if isinstance(blocked, bool) else None
    for name in sorted(n for n in texts if _LINES.fullmatch(n)):
        sandbox = name[len(RECORD) : -len(".jsonl")]
        sample, epoch = samples.get(sandbox, (None, None))
        for raw in texts[name].decode("utf-8", "replace").splitlines():
            data = _json(raw.encode())
            if not isinstance(data, dict):
                continue
            own_sample = data.get("sample")
            archive.lines.append(
                Line(
                    data=data,
                    sandbox=sandbox,
                    sample=str(own_sample) if isinstance(own_sample, str | int) else sample,
                    epoch=data["epoch"] if _is_int(data.get("epoch")) else epoch,
                    source=data["source"] if _is_int(data.get("source")) else 0,
                )
            )
    if archive.blocked is None and any(
        line.data.get("decision") == "refused" and line.data.get("why") != "not in the recorded web"
        for line in archive.lines
    ):
        archive.blocked = True  # an older archive: it refused an answer source, so it blocked


def _servable_bodies(
    archive: Archive, bodies: dict[str, tuple[int, int]]
) -> dict[str, tuple[int, int]]:
    """The bodies some kept line names, whose size is what every such line says."""
    wanted: dict[str, int] = {}
    for line in archive.lines:
        data = line.data
        sha256, size = data.get("sha256"), data.get("bytes")
        if data.get("body") != "kept" or not isinstance(sha256, str) or sha256 not in bodies:
            continue
        if not _is_int(size) or size != bodies[sha256][1] or wanted.get(sha256, size) != size:
            raise ArchiveError(
                f"{archive.path}: record/bodies/{sha256} is {bodies[sha256][1]} bytes, its "
                f"record says {size}"
            )
        wanted[sha256] = size
    return {sha256: bodies[sha256] for sha256 in wanted}


def servable(lines: list[Line], bodies: dict[str, Any]) -> list[Recorded]:
    """The responses of ``lines`` whose body is in ``bodies``, in the archive's order."""
    found = []
    for line in sorted(lines, key=lambda x: (x.source, _time(x.data))):
        if line.data.get("body") != "kept":
            continue
        data = {**line.data, "sample": line.sample, "epoch": line.epoch, "decoded_from": None}
        recorded = Recorded.of(data)  # no line names itself a twin: the host makes those
        if recorded is not None and recorded.sha256 in bodies:
            found.append(recorded)
    return found


def _body_chunks(
    f: io.BufferedReader, path: str, sha256: str, offset: int, length: int
) -> Iterator[bytes]:
    """A body's bytes from the tar, hashed on the way: a body that is not its name is refused."""
    import hashlib

    digest = hashlib.sha256()
    f.seek(offset)
    left = length
    while left > 0:
        chunk = f.read(min(CHUNK, left))
        if not chunk:
            break
        left -= len(chunk)
        digest.update(chunk)
        yield chunk
    if left or digest.hexdigest() != sha256:
        raise ArchiveError(f"{path}: record/bodies/{sha256} does not hash to its name")


def body_chunks(archive: Archive, sha256: str) -> Iterator[bytes]:
    """One servable body's bytes from a tar, checked again against its hash as they are read."""
    offset, length = archive.bodies[sha256]
    with open(archive.path, "rb") as f:
        yield from _body_chunks(f, archive.path, sha256, offset, length)


def body_reader(archive: Archive) -> Callable[[str], Iterator[bytes]]:
    """Each servable body's chunks by its SHA-256, checked again (a HAR's read once, at first)."""
    loaded: list[dict[str, bytes]] = []

    def chunks(sha256: str) -> Iterator[bytes]:
        if archive.load_bodies is None:
            return body_chunks(archive, sha256)
        if not loaded:
            loaded.append(archive.load_bodies())
        return iter([loaded[0][sha256]])

    return chunks


def proxy_stream(archive: Archive, folder: str) -> Iterator[bytes]:
    """The tar the proxy receives: ``folder/INDEX`` and ``folder/BODIES/<sha256>``.

    Nothing of the archive's: the index from the lines checked (the decoded twins after the
    responses), each body read (and hashed) again, each twin's decoded again from its body and
    hashed. ``folder`` is relative to where it is unpacked.
    """
    served = [*archive.responses, *archive.twins]
    index = "".join(json.dumps(r.as_json()) + "\n" for r in served).encode()
    yield from tar_member(f"{folder}/{INDEX}", len(index), iter([index]))
    body = body_reader(archive)
    for sha256, (_, length) in archive.bodies.items():
        yield from tar_member(f"{folder}/{BODIES}/{sha256}", length, body(sha256))
    for sha256, (source, codings, length) in archive.decoded.items():
        if sha256 not in archive.bodies:  # else the same bytes were recorded uncoded too
            chunks = _hashed(decode(body(source), codings), sha256, f"the twin of {source}")
            yield from tar_member(f"{folder}/{BODIES}/{sha256}", length, chunks)
    yield bytes(2 * tarfile.BLOCKSIZE)


def _hashed(chunks: Iterator[bytes], sha256: str, what: str) -> Iterator[bytes]:
    """``chunks``, then a refusal unless they hash to ``sha256``."""
    import hashlib

    digest = hashlib.sha256()
    for chunk in chunks:
        digest.update(chunk)
        yield chunk
    if digest.hexdigest() != sha256:
        raise ArchiveError(f"{what} changed since it was checked")


def tar_member(name: str, size: int, chunks: Iterator[bytes]) -> Iterator[bytes]:
    """One regular file of a tar (mode 0644, now): header, data, padding; its size checked."""
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime = size, 0o644, int(time.time())
    yield info.tobuf(tarfile.USTAR_FORMAT)
    sent = 0
    for chunk in chunks:
        sent += len(chunk)
        yield chunk
    if sent != size:
        raise ArchiveError(f"{name} changed since it was checked")
    yield bytes(-size % tarfile.BLOCKSIZE)


def _json(text: bytes) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _time(data: dict[str, Any]) -> float:
    t = data.get("t")
    return float(t) if isinstance(t, int | float) and not isinstance(t, bool) else 0.0
