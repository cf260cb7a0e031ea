"""Attachments the model sees or hears: type detection, native content, the dataset's samples.

In real runs (the model's requests, view_file, markitdown) in ``test_media_runs.py``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from inspect_ai.model import (
    ChatMessageUser,
    ContentAudio,
    ContentDocument,
    ContentImage,
    ContentText,
    ContentVideo,
)

from inspect_gaia import gaia_dataset
from inspect_gaia.questions.media import (
    LIMITS,
    _stat_problem,
    attachment_content,
    extension_kind,
    media_type,
    sniff,
    why_not_native,
)
from tests.helpers import b64
from tests.scenario import GAIA_MEDIA, MEDIA_FILES

SPLIT = GAIA_MEDIA / "2023" / "validation"


def test_the_fixture_has_one_attachment_of_each_kind() -> None:
    assert set(MEDIA_FILES) == {"png", "wav", "mp3", "mp4", "pdf", "xlsx"}


@pytest.mark.parametrize(
    ("extension", "kind", "mime"),
    [
        ("png", "image", "image/png"),
        ("wav", "audio", "audio/wav"),
        ("mp3", "audio", "audio/mpeg"),
        ("mp4", "video", "video/mp4"),
        ("pdf", "document", "application/pdf"),
    ],
)
def test_native_types_are_told_by_bytes_and_name(extension: str, kind: str, mime: str) -> None:
    path = MEDIA_FILES[extension]
    media = media_type(path.name, path.read_bytes()[:64])
    assert media is not None and (media.kind, media.mime) == (kind, mime)


@pytest.mark.parametrize(
    ("head", "kind"),
    [
        (b"\xff\xd8\xff\xe0\x00\x10JFIF", "jpeg"),
        (b"GIF89a\x01\x00", "gif"),
        (b"RIFF\x00\x00\x00\x00WEBPVP8 ", "webp"),
        (b"ID3\x04\x00", "mp3"),
        (b"\x00\x00\x00\x18ftypqt  ", "mov"),
        (b"\x00\x00\x00\x18ftypM4A ", None),  # m4a audio: not a video, not native audio
        (b"\x1aE\xdf\xa3webm", None),
        (b"PK\x03\x04", None),
    ],
)
def test_magic_numbers(head: bytes, kind: str | None) -> None:
    assert sniff(head) == kind


def test_bytes_and_name_must_agree() -> None:
    png = MEDIA_FILES["png"].read_bytes()[:64]
    assert media_type("renamed.jpg", png) is None
    assert why_not_native("renamed.jpg", png) == "its bytes are png but its name says jpg"
    assert why_not_native("fake.png", b"not a png") == "its bytes are not png"
    assert "xlsx files cannot be sent natively" in why_not_native("a.xlsx", b"PK\x03\x04")
    assert "markitdown" in why_not_native("a.xlsx", b"PK\x03\x04")


def test_attachment_content_and_its_note(tmp_path: Path) -> None:
    content, note = attachment_content(str(MEDIA_FILES["png"]), MEDIA_FILES["png"].name)
    assert isinstance(content, ContentImage)
    assert content.image == f"data:image/png;base64,{b64(MEDIA_FILES['png'])}"
    assert note == "attached as image (image/png)"
    content, note = attachment_content(str(MEDIA_FILES["xlsx"]), MEDIA_FILES["xlsx"].name)
    assert content is None and note.startswith("not attached: xlsx files cannot be sent natively")
    big = tmp_path / "big.png"
    big.write_bytes(MEDIA_FILES["png"].read_bytes()[:64] + b"\x00" * LIMITS["image"])
    content, note = attachment_content(str(big), big.name)
    assert content is None and "over the 5 MiB limit" in note


def test_multimodal_puts_the_file_beside_the_unchanged_prompt() -> None:
    plain = {str(s.id): s for s in gaia_dataset(dataset_path=str(GAIA_MEDIA))}
    rich = {str(s.id): s for s in gaia_dataset(dataset_path=str(GAIA_MEDIA), multimodal=True)}
    kinds = {"png": ContentImage, "wav": ContentAudio, "mp3": ContentAudio}
    kinds |= {"mp4": ContentVideo, "pdf": ContentDocument}
    for task_id, sample in rich.items():
        extension = str((sample.metadata or {})["file_name"]).rsplit(".", 1)[-1]
        prompt = plain[task_id].input
        assert isinstance(prompt, str) and plain[task_id].files == sample.files
        assert "attachment_sent" not in (plain[task_id].metadata or {})
        if extension == "xlsx":
            assert sample.input == prompt
            assert str((sample.metadata or {})["attachment_sent"]).startswith("not attached")
            continue
        assert isinstance(sample.input, list)
        (message,) = sample.input
        assert isinstance(message, ChatMessageUser) and isinstance(message.content, list)
        text, attached = message.content
        assert isinstance(text, ContentText) and text.text == prompt
        assert isinstance(attached, kinds[extension])
        assert str((sample.metadata or {})["attachment_sent"]).startswith("attached as")


def test_multimodal_attachments_are_read_when_the_dataset_loads(tmp_path: Path) -> None:
    """Issue #17 finding 5: a host path in the input was read when the sample started; a file
    gone by then ended the sample unscored, with an error that did not name it."""
    root = tmp_path / "gaia"
    shutil.copytree(GAIA_MEDIA, root)
    copies = {p.suffix.lstrip("."): p for p in (root / "2023" / "validation").iterdir()}
    dataset = gaia_dataset(dataset_path=str(root), multimodal=True, ids=[MEDIA_FILES["png"].stem])
    copies["png"].unlink()
    (sample,) = dataset
    assert isinstance(sample.input, list) and isinstance(sample.input[0].content, list)
    image = sample.input[0].content[1]
    assert isinstance(image, ContentImage)
    assert image.image == f"data:image/png;base64,{b64(MEDIA_FILES['png'])}"
    assert str(root) not in json.dumps(sample.input[0].model_dump())


def test_view_file_names_the_cause_of_a_failed_stat_or_read() -> None:
    assert extension_kind("a.PNG") == "image" and extension_kind("a.m4v") == "video"
    assert extension_kind("a.xlsx") is None and extension_kind("plot") is None
    problems = {
        "No such file or directory": "No such file: /tmp/x.png",
        "Permission denied": "Permission denied: /tmp/x.png",
        "Too many levels of symbolic links": (
            "/tmp/x.png cannot be read: too many levels of symbolic links (a loop)"
        ),
        "evalSymlinksInScope: too many links in /tmp/x.png": (
            "/tmp/x.png cannot be read: too many levels of symbolic links (a loop)"
        ),
        "Not a directory": "/tmp/x.png cannot be read: Not a directory",
    }
    for cause, message in problems.items():
        assert _stat_problem("/tmp/x.png", cause).message == message
