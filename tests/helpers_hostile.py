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


# -- hostile web archives (``-T web_replay``; reliability review round 6, M5) ----------------------

PAGE = b"Fog over the harbour at dawn."
"""The one servable body of every archive below: an honest archive, made hostile around it."""


def record_line(url: str, content: bytes = PAGE, **fields: object) -> dict[str, object]:
    """One line of a proxy's record, its body kept (``fields`` override any field)."""
    import hashlib

    return {
        "t": 1.0,
        "method": "GET",
        "url": url,
        "status": 200,
        "bytes": len(content),
        "sha256": hashlib.sha256(content).hexdigest(),
        "type": "text/plain",
        "decision": "allowed",
        "why": None,
        "error": None,
        "body": "kept",
        "headers": [["Content-Type", "text/plain"], ["Content-Length", str(len(content))]],
        **fields,
    }


def web_archive(
    path: Path,
    files: dict[str, bytes] | None = None,
    *,
    close: bool = True,
) -> Path:
    """A tar of ``files`` (default: one sandbox's record line and its body), as the run writes."""
    import hashlib
    import io
    import json
    import tarfile

    files = files or {
        "record/box.jsonl": (
            json.dumps(record_line("http://weather.example/today.txt")) + "\n"
        ).encode(),
        f"record/bodies/{hashlib.sha256(PAGE).hexdigest()}": PAGE,
    }
    with path.open("wb") as out:
        tar = tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT)
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        if close:
            tar.close()
        else:  # no end-of-archive blocks: a caller appends members of its own
            tar.fileobj = io.BytesIO()
    return path


def _append(path: Path, *members: tuple[object, bytes]) -> Path:
    """Append ``members`` (a ``TarInfo`` and its data) to an archive written with ``close=False``."""
    import tarfile

    with path.open("ab") as out:
        for info, data in members:
            assert isinstance(info, tarfile.TarInfo)
            out.write(info.tobuf(tarfile.PAX_FORMAT))
            out.write(data + bytes(-len(data) % tarfile.BLOCKSIZE))
        out.write(bytes(2 * tarfile.BLOCKSIZE))
    return path


def symlink_archive(path: Path) -> Path:
    """``record/evil`` a link to ``/egress``, then ``record/evil/replay.py`` (Docker writes through)."""
    import tarfile

    link = tarfile.TarInfo("record/evil")
    link.type, link.linkname = tarfile.SYMTYPE, "/egress"
    program = b"print('SERVED BY THE ARCHIVE\\'S OWN CODE')\n"
    replaced = tarfile.TarInfo("record/evil/replay.py")
    replaced.size = len(program)
    return _append(web_archive(path, close=False), (link, b""), (replaced, program))


def sparse_member() -> tuple[object, bytes]:
    """A PAX GNU-1.0 sparse member of 1 GiB real size in 512 bytes."""
    import tarfile

    info = tarfile.TarInfo("record/bodies/GNUSparseFile.0/bomb")
    info.pax_headers = {
        "GNU.sparse.major": "1",
        "GNU.sparse.minor": "0",
        "GNU.sparse.name": "record/bodies/bomb",
        "GNU.sparse.realsize": str(1 << 30),
    }
    data = b"1\n1073741823\n1\n".ljust(512, b"\0") + b"x"
    info.size = len(data)
    return info, data


def sparse_archive(path: Path) -> Path:
    """The servable record, then a sparse bomb."""
    return _append(web_archive(path, close=False), sparse_member())


def hidden_archive(path: Path) -> Path:
    """The servable record, then a header whose checksum starts with NUL (Python stops there, Go
    reads on), then the sparse bomb behind it."""
    import tarfile

    web_archive(path, close=False)
    decoy = tarfile.TarInfo("record/bodies/decoy").tobuf(tarfile.USTAR_FORMAT)
    decoy = decoy[:148] + b"\0" + decoy[149:]  # the checksum field, as 'mk_hostile_archive' did
    with path.open("ab") as out:
        out.write(decoy)
    return _append(path, sparse_member())


def traversal_archive(path: Path) -> Path:
    """A member named ``record/../egress/replay.py``."""
    import tarfile

    program = b"print('escaped')\n"
    info = tarfile.TarInfo("record/../egress/replay.py")
    info.size = len(program)
    return _append(web_archive(path, close=False), (info, program))


def huge_archive(path: Path) -> Path:
    """A member whose header says 1 TiB, in a file of a few KiB."""
    import tarfile

    info = tarfile.TarInfo("record/big.jsonl")
    info.size = 1 << 40
    web_archive(path, close=False)
    with path.open("ab") as out:
        out.write(info.tobuf(tarfile.PAX_FORMAT) + b"{}\n".ljust(tarfile.BLOCKSIZE, b"\0"))
    return path


HOSTILE_ARCHIVES = {
    "symlink": (symlink_archive, "record/evil is a link: an archive holds regular files only"),
    "hidden": (hidden_archive, "holds data after the end Python reads"),
    "sparse": (sparse_archive, "is a sparse file"),
    "traversal": (traversal_archive, "is no file of a web archive's record/ folder"),
    "huge": (huge_archive, "record/big.jsonl is cut short"),
}
"""Each hostile archive's maker, and what its one line says."""
