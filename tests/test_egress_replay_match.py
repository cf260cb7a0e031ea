"""How a replayed request is matched to the recorded web (``egress/replay_match.py``), and the
recorded web an archive holds, read as data (``egress/web_archive.py``)."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest

from inspect_gaia import GaiaParameterError
from inspect_gaia.egress.replay_match import OWN, POOLED, Index, Recorded, accepts, match_key
from inspect_gaia.egress.spec import EgressSpec
from inspect_gaia.egress.web_archive import RECORD_CAP, ArchiveError, proxy_stream, read_archive
from inspect_gaia.logs.comparability import comparability_flags
from inspect_gaia.logs.provenance import GaiaProvenance, WebReplayRecord
from inspect_gaia.record import provenance_of
from tests.helpers import parse_params
from tests.helpers_hostile import HOSTILE_ARCHIVES, PAGE, record_line, web_archive

SHA = hashlib.sha256(PAGE).hexdigest()


def _lines(*lines: dict[str, object]) -> bytes:
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


def _sample(name: str, sample: str, epoch: int = 1) -> dict[str, bytes]:
    return {f"record/samples/{name}": json.dumps({"id": sample, "epoch": epoch}).encode()}


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


def _recorded(url: str, sha: str, sample: str | None, epoch: int | None = 1) -> Recorded:
    return Recorded("GET", url, 200, (), sha, 1, sample, epoch)


def test_a_sample_gets_the_exact_url_first_then_its_own_then_the_normalised_key() -> None:
    # newcomer review round 4, problem 5: today.txt (200, sample A) was answered with the 404 that
    # today.txt?_=123 got for sample B, as both normalise to one key
    index = Index()
    index.add(_recorded("http://w.example/today.txt?_=123", "4" * 64, "B"))
    index.add(_recorded("http://w.example/today.txt", "2" * 64, "A"))
    assert index.find("GET", "http://w.example/today.txt", "A", 1) == (
        index.by_key[match_key("GET", "http://w.example/today.txt")][1],
        OWN,
    )
    found = index.find("GET", "http://w.example/today.txt?_=123", "B", 1)
    assert found is not None and found[0].sha256 == "4" * 64 and found[1] == OWN
    # the exact URL, even another sample's, before a sample's own normalised one
    found = index.find("GET", "http://w.example/today.txt", "B", 1)
    assert found is not None and found[0].sha256 == "2" * 64 and found[1] == POOLED
    # no exact URL: the sample's own under the key, then anyone's (the first)
    found = index.find("GET", "http://w.example/today.txt?_=9", "A", 1)
    assert found is not None and found[0].sha256 == "2" * 64 and found[1] == OWN
    found = index.find("GET", "http://w.example/today.txt?_=9", "C", 1)
    assert found is not None and found[0].sha256 == "4" * 64 and found[1] == POOLED
    assert index.find("GET", "http://w.example/tomorrow.txt", "A", 1) is None


def test_a_page_a_sample_read_twice_replays_both_answers_in_turn_its_epoch_first() -> None:
    index = Index()
    for sha, epoch in (("1", 2), ("2", 1), ("3", 1)):
        index.add(_recorded("http://w.example/clock", sha * 64, "A", epoch))
    served = [index.find("GET", "http://w.example/clock", "A", 1) for _ in range(3)]
    assert [f[0].sha256[0] if f else None for f in served] == ["2", "3", "3"]
    found = index.find("GET", "http://w.example/clock", "A", 2)
    assert found is not None and found[0].sha256 == "1" * 64 and found[1] == OWN
    found = index.find("GET", "http://w.example/clock", "A", 3)  # another epoch: its question's
    assert found is not None and found[0].sha256 == "1" * 64 and found[1] == OWN


@pytest.mark.parametrize(
    ("accept_encoding", "codings", "read"),
    [
        (None, (), True),
        (None, ("gzip",), False),  # no header: curl without --compressed, wget
        ("", ("br",), False),
        ("gzip, deflate", ("br",), False),  # the page reader (httpx without brotli)
        ("gzip, deflate", ("gzip",), True),
        ("GZIP;q=0.5", ("gzip",), True),
        ("x-gzip", ("gzip",), True),
        ("gzip;q=0, *", ("gzip",), False),
        ("gzip;q=0, *", ("br",), True),
        ("*;q=0", (), True),  # an uncoded body is read by anyone
        ("br, gzip", ("gzip", "br"), True),
        ("br", ("gzip", "br"), False),  # coded twice: both needed
        ("gzip;q=high", ("gzip",), False),
    ],
)
def test_a_coding_is_read_by_a_request_that_accepts_it(
    accept_encoding: str | None, codings: tuple[str, ...], read: bool
) -> None:
    assert accepts(accept_encoding, codings) is read


def _page(sha: str, sample: str, coding: str | None = None, twin_of: str | None = None) -> Recorded:
    headers = (("Content-Type", "text/html"),) + ((("Content-Encoding", coding),) if coding else ())
    return Recorded("GET", ENCODED, 200, headers, sha * 64, 9, sample, 1, twin_of)


ENCODED = "https://web.example/encoded/auto"
READER, BROWSER = "gzip, deflate", "gzip, deflate, br, zstd"


def test_a_request_is_served_only_a_coding_it_accepts_and_else_a_decoded_twin() -> None:
    # the stand-in web's replay: the browser recorded the page br-coded, first in the archive, and
    # the replay served those bytes to the page reader, which does not accept br: it read binary
    index = Index()
    index.add(_page("1", "W", "br"))  # Wrenfold's browser
    index.add(_page("2", "H", "gzip"))  # Harrowgate's page reader

    def served(sample: str, accept_encoding: str | None) -> tuple[str, str] | None:
        found = index.find("GET", ENCODED, sample, 1, accept_encoding)
        return None if found is None else (found[0].sha256[0], found[1])

    assert served("C", READER) == ("2", POOLED), "the first recording it can read"
    assert served("C", BROWSER) == ("1", POOLED)
    assert served("W", READER) == ("2", POOLED), "its own is br: another's it can read"
    assert served("H", BROWSER) == ("2", OWN)
    assert served("C", None) is None, "no coding accepted, no twin: not served"
    assert index.codings("GET", ENCODED) == ["br", "gzip"]
    # with the decoded twins the host makes: a sample's own page, decoded, before another's
    index.add(_page("3", "W", twin_of="1" * 64))
    index.add(_page("3", "H", twin_of="2" * 64))
    assert served("W", READER) == ("3", OWN)
    assert served("W", BROWSER) == ("1", OWN), "a client that reads br gets what was recorded"
    assert served("H", READER) == ("2", OWN)
    found = index.find("GET", ENCODED, "C", 1, None)
    assert found is not None and found[1] == POOLED and found[0].decoded_from == "1" * 64
    assert found[0].codings == ()


def test_an_archive_serves_the_responses_whose_body_it_kept_each_with_its_sample(
    tmp_path: Path,
) -> None:
    box = _lines(
        record_line("http://weather.example/today.txt", t=2.0),
        record_line("http://weather.example/big", b"x", body="over the cap"),
        record_line("http://weather.example/gone", b"never kept"),
        record_line("http://weather.example/first", t=1.0),
    )
    path = web_archive(
        tmp_path / "web.tar",
        {
            "record/box.jsonl": box + b"not json\n",
            f"record/bodies/{SHA}": PAGE,
            "record/clients/172.18.0.3": b"box",
            "record/open/box.jsonl": b"",
            **_sample("box", "q1", 2),
        },
    )
    archive = read_archive(str(path))
    assert [(r.url.rsplit("/", 1)[1], r.sample, r.epoch) for r in archive.responses] == [
        ("first", "q1", 2),  # in the order asked
        ("today.txt", "q1", 2),
    ]
    assert archive.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert archive.blocked is None and len(archive.lines) == 4
    # the proxy receives the index and the bodies, written by the host: nothing of the archive's
    with tarfile.open(fileobj=io.BytesIO(b"".join(proxy_stream(archive, "egress/replay")))) as t:
        members = t.getmembers()
        assert [(m.name, m.isfile()) for m in members] == [
            ("egress/replay/index.jsonl", True),
            (f"egress/replay/bodies/{SHA}", True),
        ]
        index = (t.extractfile(members[0]) or io.BytesIO()).read().decode().splitlines()
    assert [Recorded.of(json.loads(line)) for line in index] == archive.responses


def test_a_body_that_is_not_what_its_record_says_is_refused(tmp_path: Path) -> None:
    wrong_size = web_archive(
        tmp_path / "size.tar",
        {
            "record/box.jsonl": _lines(record_line("http://w.example/a", bytes=3)),
            f"record/bodies/{SHA}": PAGE,
        },
    )
    with pytest.raises(
        ArchiveError, match=f"record/bodies/{SHA} is {len(PAGE)} bytes, its record says 3"
    ):
        read_archive(str(wrong_size))
    forged = web_archive(
        tmp_path / "forged.tar",
        {
            "record/box.jsonl": _lines(record_line("http://w.example/a")),
            f"record/bodies/{SHA}": b"X" * len(PAGE),
        },
    )
    with pytest.raises(ArchiveError, match="does not hash to its name"):
        read_archive(str(forged))


@pytest.mark.parametrize("kind", sorted(HOSTILE_ARCHIVES))
def test_a_hostile_archive_is_one_line_before_any_sandbox(kind: str, tmp_path: Path) -> None:
    # reliability review round 6, M5: the symlink and the hidden member were accepted, and Docker
    # then unpacked the archive's own replay.py into the proxy, or a 1 GiB sparse file
    make, said = HOSTILE_ARCHIVES[kind]
    path = make(tmp_path / f"{kind}.tar")
    with pytest.raises(GaiaParameterError) as caught:
        parse_params(web_replay=str(path))
    text = str(caught.value)
    assert said in text and "\n" not in text and text.startswith(f"-T web_replay={path}")


def test_a_record_past_its_cap_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import inspect_gaia.egress.web_archive as web_archive_module

    monkeypatch.setattr(web_archive_module, "RECORD_CAP", 1000)
    path = web_archive(
        tmp_path / "long.tar",
        {"record/a.jsonl": _lines(record_line("http://w.example/a")), "record/b.jsonl": b" " * 900},
    )
    with pytest.raises(ArchiveError, match="record/b.jsonl is 900 bytes, more than a record holds"):
        read_archive(str(path))
    assert RECORD_CAP == 256 << 20


def test_a_missing_truncated_or_foreign_archive_is_one_line_before_any_sandbox(
    tmp_path: Path,
) -> None:
    body = PAGE * 400
    whole = web_archive(
        tmp_path / "web.tar",
        {
            "record/box.jsonl": _lines(record_line("http://weather.example/x", body)),
            f"record/bodies/{hashlib.sha256(body).hexdigest()}": body,
        },
    )
    cut = tmp_path / "cut.tar"
    cut.write_bytes(whole.read_bytes()[:2500])
    foreign = tmp_path / "notes.tar"
    foreign.write_text("these are notes, not an archive\n")
    empty = web_archive(tmp_path / "empty.tar", {"record/box.jsonl": b""})
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / "gaia-web-run-abc.tar").write_bytes(whole.read_bytes())
    for path, said in (
        (tmp_path / "nowhere.tar", "there is no file"),
        (cut, "is cut short"),
        (foreign, "is not a whole web archive"),
        (empty, "holds no recorded response with its body"),
    ):
        with pytest.raises(GaiaParameterError) as caught:
            parse_params(web_replay=str(path))
        text = str(caught.value)
        assert said in text and "\n" not in text and "-T web_record=bodies run wrote" in text
    with pytest.raises(
        GaiaParameterError,
        match="is a folder holding 1 archive\\(s\\) — give one of them: "
        r"-T web_replay=.*gaia-web-run-abc.tar",
    ):
        parse_params(web_replay=str(folder))
    replayed = parse_params(web_replay=str(whole)).sources
    assert replayed.egress == EgressSpec(replay=str(whole)) and replayed.proxied
    with pytest.raises(GaiaParameterError, match="web_replay serves only the recorded web"):
        parse_params(web_replay=str(whole), block_answer_sources=True)


def _record(**params: object) -> GaiaProvenance:
    made = provenance_of(
        parse_params(**params), prompt="p", image_id="sha256:x", sandbox_provider="gaia-docker"
    )
    return GaiaProvenance.from_metadata({"gaia": made.as_metadata()}) or made


def test_a_folder_given_as_the_archive_names_the_archives_in_it(tmp_path: Path) -> None:
    """Issue #50: `-T web_replay=logs-web` said only `there is no file …/logs-web`."""
    folder = tmp_path / "logs-web"
    folder.mkdir()
    with pytest.raises(GaiaParameterError) as caught:
        parse_params(web_replay=str(folder))
    assert "is a folder, with no .tar in it" in str(caught.value)
    archive = web_archive(folder / "gaia-web-1.tar")
    (folder / "gaia-web-1.tar.sha256").write_text("x")
    with pytest.raises(GaiaParameterError) as caught:
        parse_params(web_replay=str(folder))
    assert str(caught.value) == (
        f"-T web_replay={folder} is a folder holding 1 archive(s) — give one of them: "
        f"-T web_replay={archive}"
    )


def test_a_replayed_run_says_so_in_its_record_and_is_never_pooled_with_a_live_one(
    tmp_path: Path,
) -> None:
    archive = web_archive(tmp_path / "web.tar")
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    replayed, live = _record(web_replay=str(archive)), _record(web_record=True)
    assert replayed.web_replay == WebReplayRecord(archive="web.tar", sha256=digest)
    assert live.web_replay is None and "web_replay" not in live.as_metadata()

    def settings(run: GaiaProvenance) -> dict[str, object]:
        return run.comparable_settings(model="m", task_version="1", epochs=1, run_config={})

    assert settings(replayed) != settings(live)
    assert settings(replayed)["web_replay"] == digest
    assert f"replayed web: archive sha256 {digest[:12]}" in comparability_flags(settings(replayed))
    assert not any("replayed" in flag for flag in comparability_flags(settings(live)))


Blocked = Callable[[Path], Path]


@pytest.mark.parametrize(
    ("manifest", "refusal", "blocked"),
    [
        ({"blocked_answer_sources": True}, False, True),
        ({"blocked_answer_sources": False}, False, False),
        (None, True, True),  # an older archive that refused an answer source
        (None, False, None),  # an older archive that says nothing
    ],
)
def test_the_replay_records_whether_the_archives_run_blocked_answer_sources(
    tmp_path: Path, manifest: dict[str, object] | None, refusal: bool, blocked: bool | None
) -> None:
    # reliability review round 6, L3: a replay's record did not say
    lines = [record_line("http://w.example/a")]
    if refusal:
        lines.append(
            record_line("https://huggingface.co/x", decision="refused", why="GAIA", body=None)
        )
    files = {"record/box.jsonl": _lines(*lines), f"record/bodies/{SHA}": PAGE}
    if manifest is not None:
        files["record/run.json"] = json.dumps(manifest).encode()
    record = _record(web_replay=str(web_archive(tmp_path / "web.tar", files)))
    assert record.web_replay is not None
    assert record.web_replay.blocked_answer_sources is blocked
    assert record.web_replay.format == "archive"


@pytest.mark.slow  # a new inspect process: seconds
def test_inspect_eval_refuses_a_hostile_archive_in_one_line(tmp_path: Path) -> None:
    from tests.helpers import run_eval_cli
    from tests.scenario import GAIA_TINY

    make, said = HOSTILE_ARCHIVES["symlink"]
    path = make(tmp_path / "symlink.tar")
    run = run_eval_cli([f"dataset_path={GAIA_TINY}", f"web_replay={path}"], tmp_path)
    said_all = " ".join((run.stdout + run.stderr).split())  # inspect wraps it to the terminal
    assert run.returncode != 0 and "Traceback" not in said_all
    assert f"-T web_replay={path}: {said}" in said_all
    assert not list(tmp_path.glob("**/*.eval")), "nothing may start"
