"""``inspect-gaia web``: HAR out of a log (schema-valid, bodies decoded, each entry its sample),
HAR in as a replay's source (hostile ones one line), archives merged with a stated rule, an archive
verified against its log, and a replay's coverage in ``report``. Logs written without a run; the
Docker run of all of it is tests/test_docker_egress_archive.py."""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from inspect_gaia import GaiaParameterError
from inspect_gaia.egress import har_read
from inspect_gaia.egress.replay_match import OWN, POOLED, REFUSAL, Index
from inspect_gaia.egress.web_archive import read_archive
from inspect_gaia.egress.web_record import STORE_KEY
from tests.helpers import gaia_record, invoke, parse_params, write_log
from tests.helpers_hostile import PAGE, record_line, web_archive

SCHEMA = json.loads((Path(__file__).parent / "fixtures" / "har-1.2.schema.json").read_text())
HTML = "<html><body><p>Tides at Saltmere: 04:12 and 16:40 — “spring”.</p></body></html>"
PNG = bytes(range(256)) * 4
GZ = gzip.compress(HTML.encode(), mtime=0)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _valid(har: dict[str, Any]) -> None:
    jsonschema.Draft7Validator.check_schema(SCHEMA)
    errors = [
        f"{list(e.path)}: {e.message}" for e in jsonschema.Draft7Validator(SCHEMA).iter_errors(har)
    ]
    assert errors == []


def _recorded_run(tmp_path: Path) -> tuple[Path, Path, dict[str, list[dict[str, Any]]]]:
    """A log of two samples and the archive beside it: a gzip page, an image, a refusal."""
    gz = GZ
    page = record_line(
        "http://tides.example/today.html",
        gz,
        t=10.0,
        type="text/html; charset=utf-8",
        headers=[["Content-Type", "text/html; charset=utf-8"], ["Content-Encoding", "gzip"]],
    )
    image = record_line("https://tides.example/chart.png", PNG, t=11.0, type="image/png")
    refused = record_line(
        "https://huggingface.co/datasets/gaia-benchmark/GAIA",
        b"refused",
        t=12.0,
        status=403,
        decision="refused",
        why="GAIA dataset",
        body=None,
        headers=None,
    )
    other = record_line("http://tides.example/today.html", PAGE, t=13.0)  # another sample's
    files = {
        "record/box-a.jsonl": "".join(
            json.dumps(x) + "\n" for x in (page, image, refused)
        ).encode(),
        "record/box-b.jsonl": (json.dumps(other) + "\n").encode(),
        "record/samples/box-a": b'{"id": "a", "epoch": 1}',
        "record/samples/box-b": b'{"id": "b", "epoch": 1}',
        f"record/bodies/{_sha(gz)}": gz,
        f"record/bodies/{_sha(PNG)}": PNG,
        f"record/bodies/{_sha(PAGE)}": PAGE,
        "record/run.json": b'{"blocked_answer_sources": true}',
    }
    archive = web_archive(tmp_path / "gaia-web-run-1.tar", files)
    store_fields = ("t", "method", "url", "status", "bytes", "sha256", "type", "decision", "why")
    stores = {
        "a": [{**{k: x[k] for k in store_fields}, "error": None} for x in (page, image, refused)],
        "b": [{**{k: other[k] for k in store_fields}, "error": None}],
    }
    record = gaia_record(web_record="bodies")
    record["web_archive"] = {
        "archive": archive.name,
        "sha256": _sha(archive.read_bytes()),
        "bytes": archive.stat().st_size,
    }
    samples = [
        {"id": sid, "level": 1, "target": "1", "answer": "1", "value": "C", "store": {STORE_KEY: s}}
        for sid, s in stores.items()
    ]
    log = write_log(tmp_path / "run.eval", samples, metadata={"gaia": record})
    return log, archive, stores


def test_a_log_exports_as_har_with_its_bodies_decoded_and_each_entry_its_sample(
    tmp_path: Path,
) -> None:
    log, archive, _ = _recorded_run(tmp_path)
    out = tmp_path / "web.har"
    code, _, err = invoke("web", "export", str(log), "-o", str(out))
    assert code == 0, err
    assert f"{out}: 4 requests as HAR 1.2, bodies from {archive}" in err
    har = json.loads(out.read_text())
    _valid(har)
    entries = har["log"]["entries"]
    assert [(e["_sample"], e["request"]["url"].rsplit("/", 1)[1]) for e in entries] == [
        ("a", "today.html"),
        ("a", "chart.png"),
        ("a", "GAIA"),
        ("b", "today.html"),
    ]
    page, image, refused, other = entries
    # as a browser shows it: gzip undone, text in its charset; the headers as they were sent
    assert page["response"]["content"]["text"] == HTML
    assert page["response"]["content"]["size"] == len(HTML.encode())
    assert {"name": "Content-Encoding", "value": "gzip"} in page["response"]["headers"]
    assert image["response"]["content"]["encoding"] == "base64"
    assert base64.b64decode(image["response"]["content"]["text"]) == PNG
    assert refused["_decision"] == "refused" and refused["_why"] == "GAIA dataset"
    assert "text" not in refused["response"]["content"] and refused["response"]["status"] == 403
    assert other["response"]["content"]["text"] == PAGE.decode()
    assert all(e["_epoch"] == 1 and e["startedDateTime"].endswith("Z") for e in entries)
    # one sample, to standard output
    code, text, _ = invoke("web", "export", str(log), "--sample", "b")
    assert code == 0 and [e["_sample"] for e in json.loads(text)["log"]["entries"]] == ["b"]
    code, _, err = invoke("web", "export", str(log), "--sample", "nobody")
    assert code == 1 and "has no sample nobody" in err and err.count("\n") == 1


def test_a_har_from_elsewhere_replays_as_an_archive_does(tmp_path: Path) -> None:
    log, _, _ = _recorded_run(tmp_path)
    out = tmp_path / "web.har"
    assert invoke("web", "export", str(log), "-o", str(out))[0] == 0
    archive = har_read.read_har(str(out))
    # a refused entry is never served; a decoded body is served without its Content-Encoding
    assert [(r.url.rsplit("/", 1)[1], r.sample) for r in archive.responses] == [
        ("today.html", "a"),
        ("chart.png", "a"),
        ("today.html", "b"),
    ]
    page = archive.responses[0]
    assert page.sha256 == _sha(HTML.encode()) and page.bytes == len(HTML.encode())
    assert [k for k, _ in page.headers] == ["Content-Type"]
    index = Index()
    for response in archive.responses:
        index.add(response)
    found = index.find("GET", "http://tides.example/today.html", "b", 1)
    assert found is not None and found[0].sha256 == _sha(PAGE) and found[1] == OWN
    replayed = parse_params(web_replay=str(out)).sources
    assert replayed.web_replay == str(out)
    record = gaia_record(web_replay=str(out))["web_replay"]
    assert record == {
        "archive": "web.har",
        "sha256": _sha(out.read_bytes()),
        "format": "har",
        "blocked_answer_sources": None,
    }


HOSTILE_HARS = {
    "not json": (b"{not json", "is no JSON document"),
    "deep": (b'{"log": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "is no JSON document"),
    "no entries": (b'{"log": {"version": "1.2"}}', "is not a HAR: no log.entries list"),
    "not an entry": (b'{"log": {"entries": [7]}}', "entry 0 is not a HAR entry"),
    "bad base64": (
        json.dumps(
            {
                "log": {
                    "entries": [
                        {
                            "request": {"method": "GET", "url": "http://a.example/"},
                            "response": {
                                "status": 200,
                                "content": {"text": "!!!", "encoding": "base64"},
                            },
                        }
                    ]
                }
            }
        ).encode(),
        "entry 0's content is not base64",
    ),
    "a body elsewhere": (
        json.dumps(
            {
                "log": {
                    "entries": [
                        {
                            "request": {"method": "GET", "url": "http://a.example/"},
                            "response": {
                                "status": 200,
                                "content": {"_file": "/etc/passwd", "size": 9},
                            },
                        }
                    ]
                }
            }
        ).encode(),
        "holds no response with its body",
    ),
}


@pytest.mark.parametrize("kind", sorted(HOSTILE_HARS))
def test_a_hostile_har_is_one_line_before_any_sandbox(kind: str, tmp_path: Path) -> None:
    data, said = HOSTILE_HARS[kind]
    path = tmp_path / "web.har"
    path.write_bytes(data)
    with pytest.raises(GaiaParameterError) as caught:
        parse_params(web_replay=str(path))
    assert said in str(caught.value) and "\n" not in str(caught.value)


def test_a_har_over_its_bound_is_refused_unread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(har_read, "HAR_CAP", 100)
    path = tmp_path / "big.har"
    path.write_text(json.dumps({"log": {"entries": []}, "pad": "x" * 200}))
    with pytest.raises(GaiaParameterError, match="more than a HAR read here \\(100\\)"):
        parse_params(web_replay=str(path))


def test_archives_and_hars_merge_with_the_first_input_kept_and_each_conflict_listed(
    tmp_path: Path,
) -> None:
    log, first, _ = _recorded_run(tmp_path)
    changed = b"Tides at Saltmere: moved."
    second = web_archive(
        tmp_path / "second.tar",
        {
            "record/box.jsonl": "".join(
                json.dumps(x) + "\n"
                for x in (
                    record_line("http://tides.example/today.html", changed, t=20.0),  # a's, again
                    record_line("https://tides.example/chart.png", PNG, t=21.0),  # the same
                    record_line("http://tides.example/tomorrow.html", changed, t=22.0),  # new
                )
            ).encode(),
            "record/samples/box": b'{"id": "a", "epoch": 1}',
            f"record/bodies/{_sha(changed)}": changed,
            f"record/bodies/{_sha(PNG)}": PNG,
            "record/run.json": b'{"blocked_answer_sources": false}',
        },
    )
    har = tmp_path / "web.har"
    assert invoke("web", "export", str(log), "-o", str(har))[0] == 0
    merged = tmp_path / "merged.tar"
    code, out, err = invoke("web", "merge", str(first), str(second), str(har), "-o", str(merged))
    assert code == 0, err
    # the HAR holds a's page decoded (no gzip left on it): another body, so another answer
    assert "3 recorded alike in several, 2 recorded differently (the first input's kept)" in out
    for later in ("second.tar", "web.har"):
        assert (
            "GET http://tides.example/today.html (sample a): kept gaia-web-run-1.tar's, left out "
            f"{later}'s"
        ) in out
    archive = read_archive(str(merged))
    assert archive.blocked is False  # one input's run did not block
    index = Index()
    for response in archive.responses:
        index.add(response)
    found = index.find("GET", "http://tides.example/today.html", "a", 1, "gzip, deflate")
    assert found is not None and found[0].sha256 == _sha(GZ)
    found = index.find("GET", "http://tides.example/tomorrow.html", "c", 1)
    assert found is not None and found[0].sha256 == _sha(changed) and found[1] == POOLED
    manifest = json.loads(_member(merged, "record/run.json"))
    assert [m["name"] for m in manifest["merged_from"]] == [
        "gaia-web-run-1.tar",
        "second.tar",
        "web.har",
    ]
    assert len(manifest["conflicts"]) == 2
    code, _, err = invoke("web", "merge", str(first), "-o", str(first))
    assert code == 1 and "is one of the inputs" in err


def _member(path: Path, name: str) -> str:
    import tarfile

    with tarfile.open(path) as tar:
        got = tar.extractfile(name)
        assert got is not None
        return got.read().decode()


def test_verify_says_whether_the_archive_beside_a_log_is_the_one_it_names(tmp_path: Path) -> None:
    log, archive, _ = _recorded_run(tmp_path)
    code, out, err = invoke("web", "verify", str(log))
    assert code == 0, err
    assert f"✓ {archive}: the archive the log names" in out and "3 bodies, each its hash" in out
    assert "4 requests of 2 samples as the log has them" in out
    # a body changed in place: the file is not the one named, and the body not its hash
    tampered = tmp_path / "tampered"
    tampered.mkdir()
    shutil.copy(log, tampered / log.name)
    data = archive.read_bytes()
    at = data.index(PNG)
    (tampered / archive.name).write_bytes(data[:at] + b"X" + data[at + 1 :])
    code, _, err = invoke("web", "verify", str(tampered / log.name))
    assert code == 1
    assert f"✗ {archive.name} is not the archive the log names" in err
    assert f"record/bodies/{_sha(PNG)} does not hash to its name" in err
    # another run's archive under its name
    other = tmp_path / "other"
    other.mkdir()
    shutil.copy(log, other / log.name)
    web_archive(other / archive.name)
    code, _, err = invoke("web", "verify", str(other / log.name))
    assert code == 1 and "is not the archive the log names" in err
    assert "sample a (epoch 1): GET http://tides.example/today.html is not in the archive" in err


def test_a_replayed_runs_report_says_what_it_served_per_level_and_sample(tmp_path: Path) -> None:
    archive = web_archive(
        tmp_path / "web.tar",
        {
            "record/box.jsonl": (json.dumps(record_line("http://w.example/a")) + "\n").encode(),
            f"record/bodies/{_sha(PAGE)}": PAGE,
            "record/run.json": b'{"blocked_answer_sources": false}',
        },
    )

    def served(url: str, why: str) -> dict[str, Any]:
        refused = why == REFUSAL
        return {
            **{k: v for k, v in record_line(url).items() if k not in ("body", "headers")},
            "status": 403 if refused else 200,
            "decision": "refused" if refused else "allowed",
            "why": why,
        }

    samples = [
        {
            "id": "a",
            "level": 1,
            "target": "1",
            "answer": "1",
            "value": "C",
            "store": {
                STORE_KEY: [
                    served("http://w.example/a", OWN),
                    served("http://w.example/b", REFUSAL),
                ]
            },
        },
        {
            "id": "b",
            "level": 2,
            "target": "1",
            "answer": "1",
            "value": "C",
            "store": {STORE_KEY: [served("http://w.example/a", POOLED)]},
        },
    ]
    log = write_log(tmp_path / "run.eval", samples, params={"web_replay": str(archive)})
    code, out, err = invoke("report", str(log), "--format", "json")
    assert code == 0, err
    (group,) = json.loads(out)["groups"]
    replay = group["web"]["replay"]
    assert [
        (x["level"], x["own"], x["pooled"], x["not_recorded"], x["coverage"])
        for x in replay["levels"]
    ] == [
        ("1", 1, 0, 1, 0.5),
        ("2", 0, 1, 0, 1.0),
        ("all", 1, 1, 1, 0.6667),
    ]
    assert [(s["task_id"], s["coverage"]) for s in replay["samples"]] == [("a", 0.5), ("b", 1.0)]
    assert (
        "its run did not block answer sources): 2 of 3 requests served (1 from the pool"
        in replay["note"]
    )
    assert replay["note"] in group["flags"]
    code, text, _ = invoke("report", str(log))
    assert code == 0 and "What the replay served" in text and "67%" in text
