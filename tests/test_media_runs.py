"""Attachments in real runs (Docker): what reaches the model, view_file in the sandbox, and
markitdown for text-only models.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.event import SandboxEvent
from inspect_ai.model import ChatMessageTool

from inspect_gaia.defaults import SandboxKind
from support.scripted_model import Entry
from tests.helpers import Play, b64, eval_gaia
from tests.scenario import GAIA_MEDIA, GAIA_MINI, MEDIA_FILES

# -- through inspect's openai-api provider, to the scripted server ----------------------------------


def _first_user_parts(requests: list[dict[str, Any]], question: str) -> list[dict[str, Any]]:
    for request in requests:
        first = next(m for m in request["messages"] if m["role"] == "user")
        content = first["content"]
        parts = content if isinstance(content, list) else [{"type": "text", "text": content}]
        if any(question in str(p.get("text", "")) for p in parts):
            return parts
    raise AssertionError(f"no request asked {question!r}")


QUESTION = {
    "png": "number written in the attached image",
    "wav": "tone in the attached recording",
    "mp3": "tone in the attached MP3",
    "mp4": "last frame of the attached clip",
    "pdf": "according to the attached memo",
    "xlsx": "jars on the shelves",
}


@pytest.mark.docker
def test_each_attachment_reaches_the_model_as_its_own_kind(
    sandbox_image: str, scripted: Play, tmp_path: Path
) -> None:
    model = scripted([Entry("", [{"submit": "x"}])])
    log = eval_gaia(tmp_path, dataset_path=str(GAIA_MEDIA), image=sandbox_image, multimodal=True)
    assert log.samples is not None and len(log.samples) == 6
    assert log.eval.metadata is not None
    assert log.eval.metadata["gaia"]["multimodal"] is True
    assert log.eval.metadata["gaia"]["view_file"] is True
    assert "view_file" in log.eval.metadata["gaia"]["tools"]

    image = [p for p in _first_user_parts(model.requests, QUESTION["png"]) if p["type"] != "text"]
    assert image == [
        {
            "type": "image_url",
            "image_url": {
                "url": f"data:image/png;base64,{b64(MEDIA_FILES['png'])}",
                "detail": "auto",
            },
        }
    ]
    for extension in ("wav", "mp3"):
        parts = _first_user_parts(model.requests, QUESTION[extension])
        (audio,) = [p for p in parts if p["type"] != "text"]
        assert audio == {
            "type": "input_audio",
            "input_audio": {"data": b64(MEDIA_FILES[extension]), "format": extension},
        }
    (document,) = [
        p for p in _first_user_parts(model.requests, QUESTION["pdf"]) if p["type"] != "text"
    ]
    assert document["type"] == "file"
    assert document["file"]["file_data"] == f"data:application/pdf;base64,{b64(MEDIA_FILES['pdf'])}"
    assert [p["type"] for p in _first_user_parts(model.requests, QUESTION["xlsx"])] == ["text"]

    # The OpenAI chat format has no video part: inspect's openai-api provider refuses it before
    # any request, so that sample is an error (scored, retryable), and the others are unaffected.
    by_question = {
        next(k for k, q in QUESTION.items() if q in str(s.input)): s for s in log.samples
    }
    video = by_question["mp4"]
    assert (
        video.error is not None
        and "Video content is not currently supported" in video.error.message
    )
    assert video.scores is not None and video.scores["gaia_scorer"].value == "I"
    for extension, sample in by_question.items():
        if extension != "mp4":
            assert sample.error is None and sample.scores is not None
    assert not any(QUESTION["mp4"] in json.dumps(r) for r in model.requests)


@pytest.mark.docker
def test_without_multimodal_no_request_carries_file_bytes(
    sandbox_image: str, scripted: Play, tmp_path: Path
) -> None:
    model = scripted([Entry("", [{"submit": "x"}])])
    log = eval_gaia(tmp_path, dataset_path=str(GAIA_MEDIA), image=sandbox_image)
    assert log.status == "success" and log.eval.metadata is not None
    assert log.eval.metadata["gaia"]["multimodal"] is False
    sent = json.dumps(model.requests)
    assert len(model.requests) == 6 and "base64" not in sent
    for path in MEDIA_FILES.values():
        assert b64(path)[:40] not in sent
    assert all("view_file" not in tools for tools in model.tools_offered)


# -- view_file ---------------------------------------------------------------------------------------

PNG_B64 = base64.b64encode(MEDIA_FILES["png"].read_bytes()).decode()
MADE = "/tmp/made.png"
VIEWS: list[dict[str, Any]] = [
    {"call": "view_file", "args": {"path": f"/shared_files/{MEDIA_FILES['png'].name}"}},
    {"bash": f"echo {PNG_B64} | base64 -d > {MADE} && mkdir -p /tmp/dir && printf 'PK\\003\\004' > /tmp/sheet.xlsx && (head -c 64 {MADE}; head -c 6291456 /dev/zero) > /tmp/big.png && echo made"},
    {"call": "view_file", "args": {"path": MADE}},
    {"call": "view_file", "args": {"path": "/tmp/none.png"}},
    {"call": "view_file", "args": {"path": "/tmp/dir"}},
    {"call": "view_file", "args": {"path": "/tmp/sheet.xlsx"}},
    {"call": "view_file", "args": {"path": "/tmp/big.png"}},
    {"submit": "30416879"},
]  # fmt: skip


@pytest.mark.docker
def test_view_file_shows_images_and_says_what_it_cannot(
    sandbox_image: str, scripted: Play, tmp_path: Path
) -> None:
    model = scripted([Entry(QUESTION["png"], VIEWS)])
    png = MEDIA_FILES["png"]
    log = eval_gaia(
        tmp_path,
        dataset_path=str(GAIA_MEDIA),
        image=sandbox_image,
        ids=png.stem,
        view_file=True,
    )
    assert log.samples is not None
    (sample,) = log.samples
    assert sample.error is None
    assert sample.scores is not None and sample.scores["gaia_scorer"].value == "C"
    assert log.eval.metadata is not None
    assert log.eval.metadata["gaia"]["view_file"] is True
    assert log.eval.metadata["gaia"]["multimodal"] is False
    # the request after each successful view carries the image's bytes as image content
    # (inspect moves a tool result's image into a user message for the chat format)
    url = f"data:image/png;base64,{b64(png)}"
    for turn in (1, 3):
        after = model.requests[turn]["messages"]
        images = [
            part
            for message in after
            if message["role"] == "user" and isinstance(message["content"], list)
            for part in message["content"]
            if part.get("type") == "image_url"
        ]
        assert images and images[-1]["image_url"]["url"] == url, turn
    errors = [
        m.error.message
        for m in sample.messages
        if isinstance(m, ChatMessageTool) and m.function == "view_file" and m.error
    ]
    assert errors == [
        "No such file: /tmp/none.png",
        "/tmp/dir is a directory; give a file",
        "/tmp/sheet.xlsx cannot be viewed: xlsx files cannot be sent natively (only gif, "
        "jpeg, jpg, m4v, mov, mp3, mp4, pdf, png, wav, webp); read it in the sandbox (e.g. "
        "`markitdown FILE` in the attachments image)",
        "/tmp/big.png is 6291520 bytes; image files are viewed up to 5 MiB — make it smaller in "
        "the sandbox first (downscale, crop or cut it)",
    ]


LINKED: list[dict[str, Any]] = [
    {"bash": f"echo {PNG_B64} | base64 -d > {MADE} && ln -s made.png /tmp/link.png && ln -s /tmp/loop-b /tmp/loop-a && ln -s /tmp/loop-a /tmp/loop-b && ln -s loop-a /tmp/loop.png && (head -c 64 {MADE}; head -c 6291456 /dev/zero) > /tmp/big.png && ln -s big.png /tmp/big-link.png && echo made"},
    {"call": "view_file", "args": {"path": "/tmp/link.png"}},
    {"call": "view_file", "args": {"path": "/tmp/loop.png"}},
    {"call": "view_file", "args": {"path": "/tmp/big.png"}},
    {"call": "view_file", "args": {"path": "/tmp/big-link.png"}},
    {"submit": "30416879"},
]  # fmt: skip


@pytest.mark.docker
def test_view_file_follows_links_in_the_sandbox_and_stats_before_reading(
    sandbox_image: str, sandbox_kind: SandboxKind, scripted: Play, tmp_path: Path
) -> None:
    """Issue #17 finding 6: a link loop ended the sample (gaia-docker: a Docker API 500),
    gaia-docker refused a linked image that compose showed, and a file over the image limit was
    read whole (up to 100 MiB) before being refused."""
    model = scripted([Entry(QUESTION["png"], LINKED)])
    png = MEDIA_FILES["png"]
    log = eval_gaia(
        tmp_path,
        dataset_path=str(GAIA_MEDIA),
        image=sandbox_image,
        ids=png.stem,
        view_file=True,
        sandbox=sandbox_kind,
    )
    assert log.samples is not None
    (sample,) = log.samples
    assert sample.error is None, sample.error
    assert sample.scores is not None and sample.scores["gaia_scorer"].value == "C"
    after_link = [
        part
        for message in model.requests[2]["messages"]
        if message["role"] == "user" and isinstance(message["content"], list)
        for part in message["content"]
        if part.get("type") == "image_url"
    ]
    assert after_link and after_link[-1]["image_url"]["url"] == f"data:image/png;base64,{PNG_B64}"
    errors = [
        m.error.message
        for m in sample.messages
        if isinstance(m, ChatMessageTool) and m.function == "view_file" and m.error
    ]
    too_big = (
        "is 6291520 bytes; image files are viewed up to 5 MiB — make it smaller in the sandbox "
        "first (downscale, crop or cut it)"
    )
    assert errors == [
        "/tmp/loop.png cannot be read: too many levels of symbolic links (a loop)",
        f"/tmp/big.png {too_big}",
        f"/tmp/big-link.png {too_big}",
    ]
    reads = [
        e.file for e in sample.events if isinstance(e, SandboxEvent) and e.action == "read_file"
    ]
    assert reads == ["/tmp/link.png"], "a file over the limit is never read"


# -- documents for text-only models, converted inside the sandbox --------------------------------------

MARKITDOWN = (
    'for f in /shared_files/*; do echo "== $f"; markitdown "$f" 2>/dev/null | head -c 400; done'
)


@pytest.mark.docker
def test_markitdown_converts_documents_inside_the_attachments_image(
    sandbox_image: str, scripted: Play, tmp_path: Path
) -> None:
    from inspect_gaia.image_layout import OFFLINE_ATTACHMENTS_TAG

    scripted([Entry("", [{"bash": MARKITDOWN}, {"submit_output": True}])])
    seen = {}
    for root, ids, split in (
        (GAIA_MEDIA, MEDIA_FILES["pdf"].stem, "validation"),
        (GAIA_MEDIA, MEDIA_FILES["xlsx"].stem, "validation"),
        (GAIA_MINI, "6d24cb8f-5443-5c24-9ac6-69bb97f0faf5", "test"),  # gaia-mini's .docx
    ):
        log = eval_gaia(
            tmp_path, dataset_path=str(root), image=OFFLINE_ATTACHMENTS_TAG, ids=ids, split=split
        )
        assert log.samples is not None and log.samples[0].scores is not None
        seen[ids] = str(log.samples[0].scores["gaia_scorer"].answer)
    assert "The ferry leaves from pier Dunholm." in seen[MEDIA_FILES["pdf"].stem]
    assert (
        "| shelf | jars |" in seen[MEDIA_FILES["xlsx"].stem]
        and "| south | 19 |" in seen[MEDIA_FILES["xlsx"].stem]
    )
    docx = seen["6d24cb8f-5443-5c24-9ac6-69bb97f0faf5"]
    assert docx.startswith("== /shared_files/6d24cb8f") and len(docx.splitlines()) > 1
