"""A replay's decoded twins (``egress/replay_decoded.py``), from an archive and from a HAR, as the
proxy receives them (``web_archive.proxy_stream``) and matches them (``replay_match.Index``)."""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import json
import tarfile
from pathlib import Path

import brotli  # type: ignore[import-untyped,unused-ignore]
import pytest

from inspect_gaia.egress import replay_decoded
from inspect_gaia.egress.replay_match import POOLED, Index, Recorded
from inspect_gaia.egress.replay_source import checked
from inspect_gaia.egress.web_archive import Archive, proxy_stream
from tests.helpers_hostile import record_line, web_archive

PAGE = b"<h1>The reservoir</h1><p>It holds 310 megalitres.</p>" * 40
URL = "https://web.example/encoded/auto"
BROWSER, READER = "gzip, deflate, br, zstd", "gzip, deflate"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _coded(url: str, body: bytes, coding: str | None) -> dict[str, object]:
    line = record_line(url, body)
    if coding:
        line["headers"] = [["Content-Type", "text/html"], ["Content-Encoding", coding]]
    return line


def _archive(tmp_path: Path, boxes: dict[str, list[tuple[str, bytes, str | None]]]) -> Path:
    files: dict[str, bytes] = {}
    for number, (box, lines) in enumerate(boxes.items()):
        records = [_coded(url, body, coding) | {"t": float(number)} for url, body, coding in lines]
        files[f"record/{box}.jsonl"] = "".join(json.dumps(r) + "\n" for r in records).encode()
        files[f"record/samples/{box}"] = json.dumps({"id": box.upper(), "epoch": 1}).encode()
        for _, body, _ in lines:
            files[f"record/bodies/{_sha(body)}"] = body
    return web_archive(tmp_path / "web.tar", files)


def _proxy(archive: Archive) -> tuple[Index, dict[str, bytes]]:
    """What the replay's proxy holds: its index, and each body by its name."""
    with tarfile.open(fileobj=io.BytesIO(b"".join(proxy_stream(archive, "r")))) as tar:
        files = {m.name: (tar.extractfile(m) or io.BytesIO()).read() for m in tar.getmembers()}
    index = Index()
    for line in files.pop("r/index.jsonl").decode().splitlines():
        recorded = Recorded.of(json.loads(line))
        assert recorded is not None
        index.add(recorded)
    return index, {name.rsplit("/", 1)[1]: data for name, data in files.items()}


def test_an_archives_coded_page_is_served_decoded_to_a_client_that_does_not_accept_it(
    tmp_path: Path,
) -> None:
    br, zipped = brotli.compress(PAGE), gzip.compress(PAGE, mtime=0)
    damaged = brotli.compress(PAGE + b"!")[:-9]
    path = _archive(
        tmp_path,
        {
            "w": [(URL, br, "br"), ("https://web.example/damaged", damaged, "br")],
            "h": [(URL, zipped, "gzip"), ("https://web.example/plain", PAGE, None)],
        },
    )
    archive = checked(str(path))
    # two twins of one page: one body, and none made again for the page recorded uncoded
    assert [(t.sample, t.decoded_from) for t in archive.twins] == [
        ("W", _sha(br)),
        ("H", _sha(zipped)),
    ]
    assert list(archive.decoded) == [_sha(PAGE)]
    index, bodies = _proxy(archive)
    assert sorted(bodies) == sorted({_sha(b) for b in (br, zipped, damaged, PAGE)})

    def served(sample: str | None, accept_encoding: str | None, url: str = URL) -> bytes | None:
        found = index.find("GET", url, sample, 1, accept_encoding)
        if found is None:
            return None
        recorded, _ = found
        coding = dict((k.lower(), v) for k, v in recorded.headers).get("content-encoding")
        assert coding == (", ".join(recorded.codings) or None)
        return bodies[recorded.sha256] if coding is None else (coding.encode() + b":")

    assert served("W", BROWSER) == b"br:"
    assert served("W", READER) == PAGE, "its own page decoded, before another's it could read"
    assert served("W", None) == PAGE, "curl without --compressed"
    assert served("C", READER) == b"gzip:", "the pool: a recording it reads, before any twin"
    assert served(None, "identity") == PAGE
    assert served("H", READER) == b"gzip:"
    assert served("W", None, "https://web.example/damaged") is None, "no twin: not recorded"
    assert index.codings("GET", "https://web.example/damaged") == ["br"]


def test_twins_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    big = bytes(4096)
    path = _archive(
        tmp_path,
        {
            "w": [
                (URL, gzip.compress(PAGE), "gzip"),
                ("https://web.example/big", gzip.compress(big), "gzip"),
            ]
        },
    )
    monkeypatch.setattr(replay_decoded, "BODY_CAP", 4000)
    archive = checked(str(path))
    assert [t.url for t in archive.twins] == [URL], "a body over the cap has no twin"
    monkeypatch.setattr(replay_decoded, "TOTAL_CAP", len(PAGE) - 1)
    archive.twins.clear()
    archive.decoded.clear()
    replay_decoded.add_twins(archive)
    assert archive.twins == [] and archive.decoded == {}


def _har(tmp_path: Path, entries: list[dict[str, object]]) -> Path:
    path = tmp_path / "pages.har"
    path.write_text(json.dumps({"log": {"version": "1.2", "entries": entries}}))
    return path


def _entry(url: str, content: dict[str, object], coding: str = "br") -> dict[str, object]:
    headers = [{"name": "Content-Type", "value": "text/html"}]
    headers.append({"name": "Content-Encoding", "value": coding})
    return {
        "startedDateTime": "2026-12-06T10:00:00.000Z",
        "request": {"method": "GET", "url": url, "headers": []},
        "response": {"status": 200, "headers": headers, "content": content},
    }


def test_a_har_replays_by_the_same_rule(tmp_path: Path) -> None:
    # a browser's HAR: the body decoded, its Content-Encoding header left as the server sent it
    text = PAGE.decode()
    stuck = brotli.compress(PAGE)
    path = _har(
        tmp_path,
        [
            _entry(URL, {"mimeType": "text/html", "text": text}),
            # web export's body it could not decode, given as sent: it says its coding
            _entry(
                "https://web.example/as-sent",
                {"text": base64.b64encode(stuck).decode(), "encoding": "base64", "_encoded": "br"},
            ),
        ],
    )
    index, bodies = _proxy(checked(str(path)))
    for accept_encoding in (None, READER, BROWSER):
        found = index.find("GET", URL, None, None, accept_encoding)
        assert found is not None and found[1] == POOLED and found[0].codings == ()
        assert bodies[found[0].sha256] == PAGE
    found = index.find("GET", "https://web.example/as-sent", "S", 1, BROWSER)
    assert found is not None and found[0].codings == ("br",)
    assert bodies[found[0].sha256] == stuck
    found = index.find("GET", "https://web.example/as-sent", "S", 1, READER)
    assert found is not None and found[0].decoded_from == _sha(stuck)
    assert bodies[found[0].sha256] == PAGE and found[1] == POOLED
