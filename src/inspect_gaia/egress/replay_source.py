"""What ``-T web_replay`` names, read once: a web archive (a tar) or a HAR, told apart by its bytes.

The parameters check it before any sandbox starts, the record hashes it, the proxy's start sends
what was checked; ``checked`` reads each version of the file once per process for all three, and
makes the decoded twins of its content-coded responses then (``replay_decoded``).
"""

from __future__ import annotations

import os

from .har_read import is_har, read_har
from .replay_decoded import add_twins
from .web_archive import Archive, read_archive

_CHECKED: dict[tuple[str, int, int, int], Archive] = {}


def read_source(path: str) -> Archive:
    """The archive or HAR at ``path``, checked whole (raises ``web_archive.ArchiveError``)."""
    return read_har(path) if is_har(path) else read_archive(path)


def checked(path: str) -> Archive:
    """``read_source(path)`` with its twins, once per version of the file (size, time, inode)."""
    if not os.path.isfile(path):
        return read_source(path)  # which says so
    stat = os.stat(path)
    key = (os.path.abspath(path), stat.st_size, stat.st_mtime_ns, stat.st_ino)
    if key not in _CHECKED:
        archive = read_source(path)
        add_twins(archive)
        _CHECKED[key] = archive
    return _CHECKED[key]
