"""Opening files a model or a stranger may have written: regular files only, in bounded sizes.

``report``, ``compare`` and ``submission`` read logs, EvalScope folders and leaderboard files
that someone else may have made. Such a file must not hang a reader (a FIFO, a device, a symlink
to ``/dev/zero``), nor make it decompress or hold more than a log can sensibly be (a zip bomb
named ``.eval``). So before anything is read:

* the path must be a regular file (after its symlinks), of at most a limit for its kind
  (``check_file``); text is read through ``read_text``, which opens without blocking and
  re-checks what it opened;
* an ``.eval`` archive (``check_archive``) may hold at most ``MAX_HEADER`` in each header part,
  ``MAX_SAMPLE`` in each sample, and ``max_unpacked`` of the file's size in all. The sizes are
  first read from the archive's directory (free), then each member is decompressed in bounded
  chunks and thrown away, counting, so a member that holds more than it says is caught too: inspect
  decompresses a member whole, without looking at the size it claims;
* a ``.json`` log may be ``MAX_JSON_LOG``: inspect reads one whole, where an ``.eval``'s samples
  are read one at a time (``read``), so a larger one is refused with the way to convert it.

What all the files of one command add up to is ``budget``'s: each check here tells its ``count``.
A sample part's JSON is tokenized in the same pass, so what parsing it will build is known before
inspect parses it (``parsed``).

The limits are far above any real GAIA log (a sample is a few MB even with images, and a whole run
is seldom over a GB, compressed about tenfold) and far below what hurts a machine. The price is
one more decompression of a log before inspect reads it, without keeping anything.
"""

from __future__ import annotations

import io
import os
import stat
import struct
import zipfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path

import zstandard

from .parsed import count_values

MiB = 2**20
MAX_HEADER = 64 * MiB
"""Bytes a header part of an ``.eval`` (``header.json``, the journal, reductions) may unpack to."""
MAX_SAMPLE = 256 * MiB
"""Bytes one sample of an ``.eval`` may unpack to."""
MAX_LOG = 4096 * MiB
"""Bytes all of an ``.eval`` may unpack to."""
MAX_JSON_LOG = 256 * MiB
"""Bytes of a ``.json`` log: inspect reads one whole (its header comes with its samples), at about
1.5 times its size in memory, where an ``.eval``'s samples are read one at a time."""
CONVERT = "convert it with `inspect log convert --to eval --output-dir DIR LOG` and name that"
"""The fix of a ``.json`` log over ``MAX_JSON_LOG``: the same log as an ``.eval``."""
MAX_RATIO = 200
"""An ``.eval`` may unpack to this many times its size (inspect's logs: about ten) …"""
FLOOR = 256 * MiB
"""… or to this, whichever is more."""
MAX_TEXT = 256 * MiB
"""Bytes of a leaderboard or EvalScope review file."""
_CHUNK = MiB
_ZSTD = 93  # the ZIP method number of zstandard, which inspect writes
_LOCAL_HEADER = struct.Struct("<4sHHHHHIIIHH")

Count = Callable[[int], None]
"""Told each count of bytes read or unpacked (``budget.counter``); it raises to stop the read."""


def _uncounted(size: int) -> None:
    """A ``Count`` that counts nothing."""


class UnsafeFile(Exception):
    """A file that is not read; ``reason`` says why in a few words, without the path."""

    def __init__(self, reason: str, fix: str | None = None) -> None:
        """The reason, and a fix of its own if the reader's general one does not fit."""
        super().__init__(reason)
        self.reason = reason
        self.fix = fix


def size_text(size: float) -> str:
    """Bytes in KB, MB or GB, as a reader says them."""
    if size >= 2**30:
        return f"{size / 2**30:.1f} GB"
    return f"{size / 2**20:.0f} MB" if size >= 2**20 else f"{size / 2**10:.0f} KB"


def check_file(path: str | Path, limit: int) -> int:
    """The size of ``path``, a regular file (its symlinks followed) of at most ``limit`` bytes.

    Raises:
        UnsafeFile: Anything else: a FIFO, a device, a socket, a directory, a larger file.
        FileNotFoundError: Nothing is there.
    """
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise
    except OSError as ex:
        raise UnsafeFile(f"cannot be read ({ex.strerror or ex})") from ex
    return _checked(info, limit)


def _checked(info: os.stat_result, limit: int) -> int:
    if not stat.S_ISREG(info.st_mode):
        raise UnsafeFile(f"not a regular file but {_kind(info.st_mode)}")
    if info.st_size > limit:
        raise UnsafeFile(
            f"{size_text(info.st_size)}, over the {size_text(limit)} such a file may be"
        )
    return info.st_size


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISDIR, "a directory"),
    ):
        if test(mode):
            return name
    return "something else"


def read_text(path: str | Path, limit: int = MAX_TEXT, count: Count = _uncounted) -> str:
    """The UTF-8 text of a regular file of at most ``limit`` bytes (told to ``count``).

    Opened without blocking (a FIFO that appeared since a check does not hang), then checked again.

    Raises:
        UnsafeFile: Not a regular file, too large, or not UTF-8.
        OSError: It cannot be opened.
    """
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    with os.fdopen(descriptor, "rb") as file:
        count(_checked(os.fstat(descriptor), limit))
        data = file.read(limit + 1)
    if len(data) > limit:
        raise UnsafeFile(f"larger than the {size_text(limit)} such a file may be")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as ex:
        raise UnsafeFile(f"not UTF-8 text (byte {ex.start})") from ex


def check_log(
    path: str | Path, name: str | Path | None = None, count: Count = _uncounted
) -> dict[str, dict[str, int]]:
    """A log file that inspect may read: regular, and within the sizes above.

    ``name``: the file's own name, whose suffix says its format, when ``path`` is another name
    for it (``/proc/self/fd/N``: the file the reader holds open). ``count`` is told the bytes an
    ``.eval`` unpacks to as they are counted, or a ``.json`` log's size.

    Returns:
        An ``.eval``'s sample parts, each with the JSON values under each of its fields
        (``parsed.count_values``): what parsing it will build; ``{}`` for a ``.json`` log.

    Raises:
        UnsafeFile: It is not.
        FileNotFoundError: Nothing is there.
    """
    if Path(name or path).suffix == ".eval":
        return check_archive(path, max_unpacked(check_file(path, MAX_LOG)), count)
    size = check_file(path, MAX_LOG)
    if size > MAX_JSON_LOG:
        limit = size_text(MAX_JSON_LOG)
        raise UnsafeFile(f"a JSON log of {size_text(size)}, over the {limit} read whole", CONVERT)
    count(size)
    return {}


def said_size(path: str | Path) -> int:
    """What a log says it unpacks to (an ``.eval``'s directory, free), or its size; 0: not a file.

    At most what the file may unpack to (``check_log`` refuses one that says more). Opened without
    blocking and read only if a regular file: a first look, before the reader's own check counts
    what the file really holds.
    """
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return 0
    with os.fdopen(descriptor, "rb") as file:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            return 0
        if Path(path).suffix != ".eval":
            return min(info.st_size, MAX_JSON_LOG)
        try:
            with zipfile.ZipFile(file) as archive:
                said = sum(member.file_size for member in archive.infolist())
        except (zipfile.BadZipFile, OSError, EOFError, ValueError):
            return info.st_size
        return min(said, max_unpacked(info.st_size))


def max_unpacked(size: int) -> int:
    """Bytes an ``.eval`` of ``size`` bytes may unpack to."""
    return min(MAX_LOG, max(FLOOR, MAX_RATIO * size))


def check_archive(
    path: str | Path, allowed: int, count: Count = _uncounted
) -> dict[str, dict[str, int]]:
    """Every member of the zip archive at ``path`` within its limit, and all within ``allowed``.

    ``count`` is told each chunk's size as it is decompressed. Returns each sample part's JSON
    values per field, counted in the same pass (``parsed.count_values``).

    Not a zip archive at all is not this check's business (inspect says so).

    Raises:
        UnsafeFile: A member unpacks, or says it unpacks, to more than its limit, or to more
            than it says; or the members together to more than ``allowed``.
    """
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError):
        return {}
    values: dict[str, dict[str, int]] = {}
    with archive:
        members = archive.infolist()
        said = sum(m.file_size for m in members)
        if said > allowed:
            raise UnsafeFile(_too_much(said, allowed))
        for member in members:
            limit = min(_limit(member.filename), member.file_size)
            if member.file_size > _limit(member.filename):
                raise UnsafeFile(_member_over(member, member.file_size))
            counted = _count(path, member, limit, count)
            if member.filename.startswith("samples/"):
                values[member.filename] = counted
    return values


def _limit(name: str) -> int:
    return MAX_SAMPLE if name.startswith("samples/") else MAX_HEADER


def _too_much(size: int, allowed: int) -> str:
    return (
        f"unpacks to {size_text(size)}, more than the {size_text(allowed)} a log of its size may "
        "(a zip bomb?)"
    )


def _member_over(member: zipfile.ZipInfo, size: int) -> str:
    limit = size_text(_limit(member.filename))
    return f"its part {member.filename} unpacks to {size_text(size)}, over the {limit} allowed"


def _count(path: str | Path, member: zipfile.ZipInfo, limit: int, count: Count) -> dict[str, int]:
    """Decompress ``member`` in chunks, keeping nothing; more than ``limit`` bytes is refused.

    A sample part's JSON values are counted per field as it goes (``parsed``); ``{}`` for others.
    """
    with open(path, "rb") as file:
        file.seek(member.header_offset)
        header = file.read(_LOCAL_HEADER.size)
        if len(header) < _LOCAL_HEADER.size:
            return {}  # a damaged archive: inspect says what is wrong with it
        *_, name_length, extra_length = _LOCAL_HEADER.unpack(header)
        file.seek(member.header_offset + _LOCAL_HEADER.size + name_length + extra_length)
        chunks = _bounded(
            _unpacked(_Slice(file, member.compress_size), member.compress_type),
            member,
            limit,
            count,
        )
        if member.filename.startswith("samples/"):
            return count_values(chunks)
        for _ in chunks:
            pass
        return {}


def _bounded(
    chunks: Iterator[bytes], member: zipfile.ZipInfo, limit: int, count: Count
) -> Iterator[bytes]:
    """``chunks``, each told to ``count``; more than ``limit`` bytes in all is refused."""
    total = 0
    for chunk in chunks:
        total += len(chunk)
        count(len(chunk))
        if total > limit:
            raise UnsafeFile(
                f"its part {member.filename} unpacks to more than the "
                f"{size_text(member.file_size)} it says (a zip bomb?)"
            )
        yield chunk


class _Slice(io.RawIOBase):
    """The next ``size`` bytes of a file, as a stream."""

    def __init__(self, file: io.BufferedReader, size: int) -> None:
        self.file, self.left = file, size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def read(self, size: int | None = -1) -> bytes:
        wanted = self.left if size is None or size < 0 else min(size, self.left)
        data = self.file.read(wanted)
        self.left -= len(data)
        return data


def _unpacked(data: _Slice, method: int) -> Iterator[bytes]:
    """A member's decompressed bytes, ``_CHUNK`` at most at a time."""
    if method == zipfile.ZIP_STORED:
        yield from iter(lambda: data.read(_CHUNK), b"")
    elif method == zipfile.ZIP_DEFLATED:
        inflate = zlib.decompressobj(-15)
        for compressed in iter(lambda: data.read(_CHUNK), b""):
            pending = compressed
            while pending and not inflate.eof:
                yield inflate.decompress(pending, _CHUNK)
                pending = inflate.unconsumed_tail
    elif method == _ZSTD:
        frames = io.BufferedReader(data)
        reader = zstandard.ZstdDecompressor().stream_reader(frames, read_across_frames=True)
        yield from iter(lambda: reader.read(_CHUNK), b"")
    else:
        raise UnsafeFile(f"compressed with ZIP method {method}, which inspect never writes")
