"""Hostile files for the readers' tests: zip bombs named ``.eval``, deep JSON, escape sequences."""

from __future__ import annotations

import shutil
import struct
import zipfile
from pathlib import Path

MiB = 2**20

ESCAPES = "\x1b]0;pwned\x07\x1b[2J\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\\x9b31m"
"""A title change, a screen clear, an OSC-8 hyperlink and a C1 control sequence."""


ZSTD = 93
"""The ZIP method number of zstandard (what inspect writes; ``zipfile_zstd`` teaches zipfile it)."""


def zip_bomb(
    log: Path, out: Path, unpacked: int, *, says: int | None = None, method: int = ZSTD
) -> Path:
    """``log`` (an ``.eval``) with one more sample part: ``unpacked`` zero bytes, compressed.

    ``says``: the size the archive claims for that part (default: the truth), written into its
    local and central headers, as a bomb that lies about its size does.
    """
    import zipfile_zstd  # type: ignore[import-untyped]  # noqa: F401  (zipfile writes zstd)

    shutil.copyfile(log, out)
    name = "samples/bomb_epoch_1.json"
    with zipfile.ZipFile(out, "a") as archive:
        info = zipfile.ZipInfo(name)
        info.compress_type = method
        with archive.open(info, "w", force_zip64=unpacked > 2**31) as member:
            chunk = b"\0" * (4 * MiB)
            for _ in range(unpacked // len(chunk)):
                member.write(chunk)
            member.write(b"\0" * (unpacked % len(chunk)))
    if says is not None:
        _lie(out, name, says)
    return out


def _lie(path: Path, name: str, size: int) -> None:
    """Write ``size`` as the uncompressed size of ``name`` in both of its zip headers."""
    data = bytearray(path.read_bytes())
    encoded = name.encode()
    central = data.find(b"PK\x01\x02")
    while central >= 0:
        name_length = struct.unpack_from("<H", data, central + 28)[0]
        if data[central + 46 : central + 46 + name_length] == encoded:
            struct.pack_into("<I", data, central + 24, size)
            local = struct.unpack_from("<I", data, central + 42)[0]
            struct.pack_into("<I", data, local + 22, size)
            break
        central = data.find(b"PK\x01\x02", central + 4)
    path.write_bytes(bytes(data))


def deep_json(depth: int) -> str:
    """A JSON value nested ``depth`` lists deep."""
    return "[" * depth + "]" * depth
