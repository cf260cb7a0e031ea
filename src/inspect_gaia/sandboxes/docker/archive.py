"""Files in and out of a container through the engine's archive endpoint (``docker cp``'s).

Three internals of docker-py are used here (``client`` uses two others: ``get_connection``,
``trust_env``): ``APIClient._url``/``_get``/``_raise_for_status``, for an archive download whose
response must be closed on every path (an archive left unread holds the container's lock, and the
next exec waits for it).
"""

from __future__ import annotations

import base64
import errno
import io
import json
import posixpath
import stat as stat_module
import tarfile
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from inspect_ai.util import (
    OutputLimitExceededError,
    SandboxEnvironmentLimits,
    SandboxUnavailableError,
)

from .client import api, first_line, tar_of

if TYPE_CHECKING:
    from docker import APIClient

_GO_MODE_DIR = 1 << 31
"""The directory bit of the engine's file modes (Go's ``os.ModeDir``)."""
_GO_MODE_SYMLINK = 1 << 27
"""The symbolic link bit of the engine's file modes (Go's ``os.ModeSymlink``)."""


def put_file(container: str, path: str, data: bytes) -> None:
    """Write ``data`` at ``path`` as one archive upload (parents created by the engine).

    Raises:
        IsADirectoryError: ``path`` is a directory (the engine would replace it).
        PermissionError: The engine refused the write.
        SandboxUnavailableError: The container is gone.
    """
    from docker.errors import APIError, NotFound

    # The engine replaces whatever is at the path, a directory included; a local write would
    # refuse. One stat request (no process in the container) tells.
    client = api()
    probe = client.head(client._url("/containers/{0}/archive", container), params={"path": path})
    if probe.status_code == 200 and _is_directory(probe.headers):
        raise IsADirectoryError(errno.EISDIR, "Is a directory.", path)
    try:
        client.put_archive(container, "/", tar_of({path: data}))
    except NotFound as ex:
        raise SandboxUnavailableError(f"The sandbox is gone: {first_line(ex)}") from ex
    except APIError as ex:
        message = str(ex).lower()
        if "permission denied" in message or "read-only" in message:
            raise PermissionError(errno.EACCES, "Permission denied.", path) from ex
        raise


def get_file(container: str, path: str, original: str) -> bytes:
    """Read one regular file at ``path`` (``original`` is the name used in errors).

    A symbolic link is followed as ``docker cp -L`` (and so inspect's compose sandbox) follows
    it: to the target the engine resolved inside the container's filesystem (never the host's).

    Raises:
        FileNotFoundError, IsADirectoryError, PermissionError, OSError: As a local read would
            (``OSError`` with ``ELOOP`` for a symbolic link loop).
        OutputLimitExceededError: The file is larger than inspect's read limit.
    """
    client = api()
    limit = SandboxEnvironmentLimits.MAX_READ_FILE_SIZE
    response = _archive(client, container, path, original)
    try:
        target = _link_target(response.headers, path)
        if target is not None:
            response.close()
            response = _archive(client, container, target, original)
        if _is_directory(response.headers):
            raise IsADirectoryError(errno.EISDIR, "Is a directory.", original)
        if int(_path_stat(response.headers).get("size", 0)) > limit:
            raise _read_limit_error()
        archive = bytearray()
        for chunk in response.iter_content(chunk_size=1 << 16):
            archive += chunk
            if len(archive) > limit + (1 << 16):  # the tar headers are a few blocks
                raise _read_limit_error()
    finally:
        response.close()
    with tarfile.open(fileobj=io.BytesIO(bytes(archive)), mode="r:") as tar:
        member = tar.next()
        if member is None or not member.isreg() or tar.next() is not None:
            raise OSError(errno.EINVAL, "Not a regular file.", original)
        if member.size > limit:
            raise _read_limit_error()
        if not member.mode & stat_module.S_IRUSR:
            raise PermissionError(errno.EACCES, "Permission denied.", original)
        extracted = tar.extractfile(member)
        if extracted is None:
            raise OSError(errno.EINVAL, "Not a regular file.", original)
        return extracted.read()


def iter_file(container: str, path: str, limit: int, chunk: int = 1 << 16) -> Iterator[bytes]:
    """The regular file at ``path``, in chunks, up to ``limit`` bytes (the rest is never read).

    For a file whose size its writer does not bound (a proxy's record): memory is one chunk, and
    the engine's stream is closed whatever the reader does (see the module docstring). A symbolic
    link or any member but a regular file yields nothing.

    Raises:
        FileNotFoundError: There is no file at ``path``.
    """
    response = _archive(api(), container, path, path)
    try:
        response.raw.decode_content = True  # the engine may gzip the stream
        with tarfile.open(fileobj=response.raw, mode="r|") as tar:
            member = tar.next()
            extracted = tar.extractfile(member) if member is not None and member.isreg() else None
            left = limit
            while extracted is not None and left > 0:
                piece = extracted.read(min(chunk, left))
                if not piece:
                    return
                left -= len(piece)
                yield piece
    finally:
        response.close()


def _archive(client: APIClient, container: str, path: str, original: str) -> Any:
    """The streamed archive response for ``path`` (closed here when it is an error).

    ``APIClient.get_archive``, with the response closed on every path (see the module docstring).
    """
    from docker.errors import APIError, NotFound

    response = client._get(
        client._url("/containers/{0}/archive", container), params={"path": path}, stream=True
    )
    try:
        client._raise_for_status(response)
    except NotFound as ex:
        response.close()
        raise FileNotFoundError(errno.ENOENT, "No such file or directory.", original) from ex
    except APIError as ex:
        response.close()
        message = str(ex).lower()
        if "permission denied" in message:
            raise PermissionError(errno.EACCES, "Permission denied.", original) from ex
        if "too many links" in message or "too many levels of symbolic links" in message:
            raise OSError(errno.ELOOP, "Too many levels of symbolic links.", original) from ex
        raise
    return response


def _link_target(headers: Mapping[str, str], path: str) -> str | None:
    """Where a symbolic link at ``path`` leads (the engine's resolution), or ``None``."""
    stat = _path_stat(headers)
    target = str(stat.get("linkTarget") or "")
    if not int(stat.get("mode", 0)) & _GO_MODE_SYMLINK or not target:
        return None
    return posixpath.normpath(posixpath.join(posixpath.dirname(path), target))


def _read_limit_error() -> OutputLimitExceededError:
    # the file's contents may be large or binary: none of it goes into the error
    return OutputLimitExceededError(
        limit_str=SandboxEnvironmentLimits.MAX_READ_FILE_SIZE_STR, truncated_output=None
    )


def _path_stat(headers: Mapping[str, str]) -> dict[str, Any]:
    """The engine's stat of an archive path (name, size, mode, ...), sent as a header."""
    header = headers.get("X-Docker-Container-Path-Stat", "")
    return dict(json.loads(base64.b64decode(header))) if header else {}


def _is_directory(headers: Mapping[str, str]) -> bool:
    return bool(int(_path_stat(headers).get("mode", 0)) & _GO_MODE_DIR)
