"""The recorded web of an archive, and how a request is matched to it (``egress/replay_match.py``)."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from pathlib import Path

import pytest

from inspect_gaia import GaiaParameterError
from inspect_gaia.egress.replay_match import archive_index, directory_index, match_key
from inspect_gaia.egress.spec import EgressSpec
from inspect_gaia.logs.comparability import comparability_flags
from inspect_gaia.logs.provenance import GaiaProvenance, WebReplayRecord
from inspect_gaia.record import provenance_of
from tests.helpers import parse_params

PAGE = b"Fog over the harbour at dawn."
SHA = hashlib.sha256(PAGE).hexdigest()


def _line(url: str, body: str | None = "kept", sha256: str = SHA, method: str = "GET") -> str:
    headers = [["Content-Type", "text/plain"], ["Content-Length", str(len(PAGE))]]
    return json.dumps(
        {
            "method": method,
            "url": url,
            "status": 200,
            "sha256": sha256,
            "body": body,
            "headers": headers,
            "decision": "allowed",
        }
    )


def _archive(path: Path, lines: list[str], bodies: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w") as tar:
        files = {"record/box.jsonl": "\n".join(lines).encode()} | {
            f"record/bodies/{name}": data for name, data in bodies.items()
        }
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


@pytest.mark.parametrize(
    ("asked", "recorded"),
    [
        ("http://Weather.Example:80/today.txt", "http://weather.example/today.txt"),
        ("https://weather.example/a?b=2&a=1", "https://weather.example:443/a?a=1&b=2"),
        ("http://weather.example/a?_=1712&x=1&cb=9", "http://weather.example/a?x=1&ts=5"),
        ("http://weather.example", "http://weather.example/#top"),
    ],
)
def test_what_changes_between_runs_without_changing_the_page_still_matches(
    asked: str, recorded: str
) -> None:
    assert match_key("get", asked) == match_key("GET", recorded)


@pytest.mark.parametrize(
    ("asked", "recorded"),
    [
        ("http://weather.example/today.txt", "https://weather.example/today.txt"),
        ("http://weather.example/a?x=1", "http://weather.example/a?x=2"),
        ("http://weather.example:8080/a", "http://weather.example/a"),
        ("http://weather.example/A", "http://weather.example/a"),
    ],
)
def test_another_page_does_not_match(asked: str, recorded: str) -> None:
    assert match_key("GET", asked) != match_key("GET", recorded)
    assert match_key("POST", recorded) != match_key("GET", recorded)


def test_an_archive_serves_the_responses_whose_body_it_kept(tmp_path: Path) -> None:
    lines = [
        _line("http://weather.example/today.txt"),
        _line(
            "http://weather.example/big", body="over the per-body cap (10 bytes)", sha256="b" * 64
        ),
        _line("http://weather.example/gone", sha256="c" * 64),  # kept, but not in the archive
        "not json",
    ]
    path = _archive(tmp_path / "web.tar", lines, {SHA: PAGE})
    found = archive_index(str(path))
    assert list(found) == [match_key("GET", "http://weather.example/today.txt")]
    assert found[match_key("GET", "http://weather.example/today.txt")]["sha256"] == SHA
    # the proxy reads the same record unpacked, and finds the same
    with tarfile.open(path) as tar:
        tar.extractall(tmp_path / "unpacked", filter="data")
    assert directory_index(str(tmp_path / "unpacked")) == found


def test_a_missing_truncated_or_foreign_archive_is_one_line_before_any_sandbox(
    tmp_path: Path,
) -> None:
    whole = _archive(tmp_path / "web.tar", [_line("http://weather.example/x")], {SHA: PAGE * 400})
    cut = tmp_path / "cut.tar"
    cut.write_bytes(whole.read_bytes()[:2000])
    foreign = tmp_path / "notes.tar"
    foreign.write_text("these are notes, not an archive\n")
    empty = _archive(tmp_path / "empty.tar", [], {})
    for path, said in (
        (tmp_path / "nowhere.tar", "there is no file"),
        (cut, "is not a whole web_record=bodies archive"),
        (foreign, "is not a whole web_record=bodies archive"),
        (empty, "holds no recorded response with its body"),
    ):
        with pytest.raises(GaiaParameterError) as caught:
            parse_params(web_replay=str(path))
        text = str(caught.value)
        assert said in text and "\n" not in text and "-T web_record=bodies run wrote" in text
    replayed = parse_params(web_replay=str(whole)).sources
    assert replayed.egress == EgressSpec(replay=str(whole)) and replayed.proxied
    with pytest.raises(GaiaParameterError, match="web_replay serves only the recorded web"):
        parse_params(web_replay=str(whole), block_answer_sources=True)


def test_a_replayed_run_says_so_in_its_record_and_is_never_pooled_with_a_live_one(
    tmp_path: Path,
) -> None:
    archive = _archive(tmp_path / "web.tar", [_line("http://weather.example/x")], {SHA: PAGE})
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()

    def record(**params: object) -> GaiaProvenance:
        made = provenance_of(
            parse_params(**params), prompt="p", image_id="sha256:x", sandbox_provider="gaia-docker"
        )
        return GaiaProvenance.from_metadata({"gaia": made.as_metadata()}) or made

    replayed, live = record(web_replay=str(archive)), record(web_record=True)
    assert replayed.web_replay == WebReplayRecord(archive="web.tar", sha256=digest)
    assert live.web_replay is None and "web_replay" not in live.as_metadata()

    def settings(run: GaiaProvenance) -> dict[str, object]:
        return run.comparable_settings(model="m", task_version="1", epochs=1, run_config={})

    assert settings(replayed) != settings(live)
    assert settings(replayed)["web_replay"] == digest
    assert f"replayed web: archive sha256 {digest[:12]}" in comparability_flags(settings(replayed))
    assert not any("replayed" in flag for flag in comparability_flags(settings(live)))
