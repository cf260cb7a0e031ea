"""What a model can see or hear of a file: type detection, native content, and ``view_file``.

With ``-T multimodal=true`` a question whose attachment is an image, audio, video or PDF is asked
with the file itself in the first user message, as inspect content of its kind; with
``-T view_file=true`` (or ``multimodal``) the agent also gets ``view_file``, which reads any file
of its sandbox and returns it as such content (a chart it plotted, a frame it cut from a video).
``view_file`` first asks ``stat`` in the sandbox for the file (symbolic links followed there, as
inspect's sandboxes follow them when reading): a file over its kind's limit is refused unread, and
whatever makes a file unreadable (gone, a link loop, no permission, the engine's own refusal) is a
tool error naming the cause, for the agent to read.

The type is decided from the file's first bytes (magic numbers) and its extension together: a
file is sent as a kind only when both agree, so a renamed file or a wrong extension is not sent
under a false type. What inspect cannot carry natively is not sent: audio other than WAV and MP3
(inspect's ``ContentAudio`` formats), video other than MP4 and MOV (``ContentVideo``), and every
other file (spreadsheets, office documents, text, archives): the agent reads those in the sandbox
(the attachments image has ``markitdown``). Nothing here parses a file's contents beyond its first
bytes: no decoder runs on the host.
"""

from __future__ import annotations

import base64
import errno
import os
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Literal

from inspect_ai.model import (
    ContentAudio,
    ContentDocument,
    ContentImage,
    ContentText,
    ContentVideo,
)
from inspect_ai.tool import Tool, ToolError, ToolResult, tool
from inspect_ai.util import OutputLimitExceededError, SandboxUnavailableError, sandbox

Kind = Literal["image", "audio", "video", "document"]


@dataclass(frozen=True)
class MediaType:
    """A file type a model can be sent natively."""

    kind: Kind
    mime: str
    format: str
    """``ContentAudio``/``ContentVideo`` format, or the file extension for the other kinds."""


_TYPES: dict[str, MediaType] = {
    "png": MediaType("image", "image/png", "png"),
    "jpeg": MediaType("image", "image/jpeg", "jpeg"),
    "gif": MediaType("image", "image/gif", "gif"),
    "webp": MediaType("image", "image/webp", "webp"),
    "wav": MediaType("audio", "audio/wav", "wav"),
    "mp3": MediaType("audio", "audio/mpeg", "mp3"),
    "mp4": MediaType("video", "video/mp4", "mp4"),
    "mov": MediaType("video", "video/quicktime", "mov"),
    "pdf": MediaType("document", "application/pdf", "pdf"),
}
_EXTENSIONS: dict[str, str] = {
    "png": "png",
    "jpg": "jpeg",
    "jpeg": "jpeg",
    "gif": "gif",
    "webp": "webp",
    "wav": "wav",
    "mp3": "mp3",
    "mp4": "mp4",
    "m4v": "mp4",
    "mov": "mov",
    "pdf": "pdf",
}
NATIVE_EXTENSIONS = tuple(sorted(_EXTENSIONS))

LIMITS: dict[Kind, int] = {
    "image": 5 * 2**20,
    "audio": 20 * 2**20,
    "video": 50 * 2**20,
    "document": 32 * 2**20,
}
"""Largest file sent per kind. Images: 5 MiB, Anthropic's per-image ceiling (the lowest of the
common providers; OpenAI takes 20 MB). Audio: 20 MiB, under OpenAI's 25 MB input-audio ceiling.
Video: 50 MiB, well under Gemini's inline ceiling. Documents: 32 MiB, Anthropic's and OpenAI's PDF
ceiling. A larger file is refused with the limit named (the agent can downscale or cut it in the
sandbox with ffmpeg or Pillow) rather than resized on the host."""

HEAD_BYTES = 64
"""How many leading bytes type detection reads."""


def sniff(head: bytes) -> str | None:
    """The type that a file's first bytes announce (a key of ``_TYPES``), or ``None``."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "png"
    if head.startswith(b"\xff\xd8\xff"):
        return "jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "webp"
    if head[:4] == b"RIFF" and head[8:12] == b"WAVE":
        return "wav"
    if head.startswith(b"ID3") or (len(head) > 1 and head[0] == 0xFF and head[1] & 0xE0 == 0xE0):
        return "mp3"
    if head[4:8] == b"ftyp":
        brand = head[8:12]
        if brand == b"qt  ":
            return "mov"
        if brand not in (b"M4A ", b"M4B ", b"M4P "):  # audio-only MPEG-4 is not a video
            return "mp4"
        return None
    if head.startswith(b"%PDF-"):
        return "pdf"
    return None


def media_type(name: str, head: bytes) -> MediaType | None:
    """The native type of a file named ``name`` starting with ``head``, when both agree."""
    extension = PurePosixPath(name).suffix.lower().lstrip(".")
    sniffed = sniff(head)
    if sniffed is None or _EXTENSIONS.get(extension) != sniffed:
        return None
    return _TYPES[sniffed]


def why_not_native(name: str, head: bytes) -> str:
    """One line saying why a file is not sent natively (for metadata and tool errors)."""
    extension = PurePosixPath(name).suffix.lower().lstrip(".") or "no extension"
    sniffed = sniff(head)
    if sniffed is not None and _EXTENSIONS.get(extension) != sniffed:
        return f"its bytes are {sniffed} but its name says {extension}"
    if extension in _EXTENSIONS:
        return f"its bytes are not {extension}"
    return (
        f"{extension} files cannot be sent natively (only {', '.join(NATIVE_EXTENSIONS)}); read "
        "it in the sandbox (e.g. `markitdown FILE` in the attachments image)"
    )


def content_of(
    media: MediaType, source: str, filename: str
) -> ContentImage | ContentAudio | ContentVideo | ContentDocument:
    """Inspect content for a file: ``source`` is a data URI (or a path inspect reads)."""
    if media.kind == "image":
        return ContentImage(image=source)
    if media.kind == "audio":
        return ContentAudio(audio=source, format=media.format)  # type: ignore[arg-type]
    if media.kind == "video":
        return ContentVideo(video=source, format=media.format)  # type: ignore[arg-type]
    return ContentDocument(document=source, filename=filename, mime_type=media.mime)


def data_uri(media: MediaType, data: bytes) -> str:
    """``data:<mime>;base64,...`` for ``data``."""
    return f"data:{media.mime};base64,{base64.b64encode(data).decode()}"


def attachment_content(
    path: str, name: str
) -> tuple[ContentImage | ContentAudio | ContentVideo | ContentDocument | None, str]:
    """What a question's attachment is sent as, and a note for the sample's metadata.

    The file is read here, when the dataset is loaded, and sent as a data URI: given a host path,
    inspect would read it when the sample starts, and a file gone by then (a cache clean-up, a
    re-download) would end the sample unscored, with an error that does not name it. Only the
    first bytes are read of a file that is not sent.
    """
    with open(path, "rb") as handle:
        head = handle.read(HEAD_BYTES)
        size = os.fstat(handle.fileno()).st_size
        media = media_type(name, head)
        if media is None:
            return None, f"not attached: {why_not_native(name, head)}"
        if size > LIMITS[media.kind]:
            return None, f"not attached: {size} bytes, over the {_mib(LIMITS[media.kind])} limit"
        data = head + handle.read(LIMITS[media.kind] + 1 - len(head))
    if len(data) > LIMITS[media.kind]:  # it grew since the stat
        return None, f"not attached: over the {_mib(LIMITS[media.kind])} limit"
    return content_of(
        media, data_uri(media, data), name
    ), f"attached as {media.kind} ({media.mime})"


def _mib(size: int) -> str:
    return f"{size / 2**20:g} MiB"


_SOUND_OR_MOTION = (
    "{kind} attached ({name}, {size} bytes). If your input shows no {kind}, this model or "
    "provider cannot take it in a tool result: inspect it in the sandbox instead (e.g. ffmpeg)."
)


STAT_TIMEOUT = 30
"""Seconds the ``stat`` that precedes a ``view_file`` read may take."""


def extension_kind(name: str) -> Kind | None:
    """The kind a file named ``name`` can be sent as (its bytes must agree), or ``None``."""
    key = _EXTENSIONS.get(PurePosixPath(name).suffix.lower().lstrip("."))
    return None if key is None else _TYPES[key].kind


def _cause(ex: BaseException) -> str:
    """What an engine or sandbox error says went wrong, in one line."""
    explanation = getattr(ex, "explanation", None)  # docker-py's APIError: the engine's words
    text = explanation if isinstance(explanation, str) and explanation else None
    text = text or (ex.strerror if isinstance(ex, OSError) and ex.strerror else None) or str(ex)
    return (text.strip().splitlines() or [type(ex).__name__])[0][:300]


def _stat_problem(path: str, cause: str) -> ToolError:
    """The tool error for a ``stat`` (or read) failure that says why."""
    lowered = cause.lower()
    if "no such file or directory" in lowered:
        return ToolError(f"No such file: {path}")
    if "permission denied" in lowered:
        return ToolError(f"Permission denied: {path}")
    if "too many levels of symbolic links" in lowered or "too many links" in lowered:
        return ToolError(f"{path} cannot be read: too many levels of symbolic links (a loop)")
    return ToolError(f"{path} cannot be read: {cause}")


async def _stat(path: str) -> tuple[int, str] | None:
    """Size and type of ``path`` as the sandbox sees it, symlinks followed there.

    ``None`` when the sandbox has no ``stat`` command (the read's own limits then apply).

    Raises:
        ToolError: ``stat`` says why the file cannot be read (gone, a loop, no permission).
    """
    result = await sandbox().exec(["stat", "-L", "-c", "%s %F", "--", path], timeout=STAT_TIMEOUT)
    if result.returncode in (126, 127):  # no stat in this image
        return None
    if not result.success:
        line = (result.stderr.strip().splitlines() or [f"exit {result.returncode}"])[-1]
        raise _stat_problem(path, line.rsplit(": ", 1)[-1])
    size, _, kind = result.stdout.strip().partition(" ")
    return (int(size), kind) if size.isdigit() else None


async def _read(path: str) -> bytes:
    """The file's bytes; every way a read can fail is a tool error naming the cause."""
    try:
        return await sandbox().read_file(path, text=False)
    except SandboxUnavailableError:
        raise  # ends the sample (ending_on_sandbox_loss)
    except FileNotFoundError as ex:
        raise ToolError(f"No such file: {path}") from ex
    except IsADirectoryError as ex:
        raise ToolError(f"{path} is a directory; give a file") from ex
    except PermissionError as ex:
        raise ToolError(f"Permission denied: {path}") from ex
    except OutputLimitExceededError as ex:
        raise ToolError(f"{path} is too large to read ({ex.limit_str} at most)") from ex
    except OSError as ex:  # docker-py's API errors are OSErrors too
        if ex.errno == errno.EINVAL:
            raise ToolError(f"{path} is not a regular file") from ex
        raise _stat_problem(path, _cause(ex)) from ex
    except RuntimeError as ex:  # the compose sandbox's `docker compose cp` failures
        raise _stat_problem(path, _cause(ex)) from ex


def _too_large(path: str, size: int, kind: Kind) -> ToolError:
    return ToolError(
        f"{path} is {size} bytes; {kind} files are viewed up to {_mib(LIMITS[kind])} — make it "
        "smaller in the sandbox first (downscale, crop or cut it)"
    )


@tool
def view_file() -> Tool:
    """See (or hear) a file of the sandbox: images, audio, video and PDF documents."""

    async def execute(path: str) -> ToolResult:
        """Look at a file in the sandbox, as an image, audio, video or PDF the model perceives.

        Use it on images (png, jpg, gif, webp), audio (wav, mp3), video (mp4, mov) and PDF
        files: the attachment, a chart you plotted, a frame you cut from a video.

        Args:
            path: Path of the file in the sandbox.
        """
        name = PurePosixPath(path).name
        kind = extension_kind(name)
        # The file's size, from a stat in the sandbox, decides before any read: a file over its
        # kind's limit is never read (inspect reads up to 100 MiB).
        stat = await _stat(path)
        if stat is not None:
            size, file_type = stat
            if file_type == "directory":
                raise ToolError(f"{path} is a directory; give a file")
            if not file_type.startswith("regular"):
                raise ToolError(f"{path} is not a regular file")
            if kind is not None and size > LIMITS[kind]:
                raise _too_large(path, size, kind)
            if kind is None and size > min(LIMITS.values()):  # refused: say why from its name
                raise ToolError(f"{path} cannot be viewed: {why_not_native(name, b'')}")
        data = await _read(path)
        media = media_type(name, data[:HEAD_BYTES])
        if media is None:
            raise ToolError(f"{path} cannot be viewed: {why_not_native(name, data[:HEAD_BYTES])}")
        if len(data) > LIMITS[media.kind]:  # no stat in the sandbox, or the file grew
            raise _too_large(path, len(data), media.kind)
        content = content_of(media, data_uri(media, data), name)
        if media.kind in ("audio", "video"):
            note = _SOUND_OR_MOTION.format(kind=media.kind, name=name, size=len(data))
            return [ContentText(text=note), content]
        return content

    return execute
