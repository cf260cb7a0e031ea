"""``-T web_record=bodies``: the bodies the samples read, kept by their hash within two caps, in an
archive written beside the log at the run's end; a body over a cap is recorded, not kept, said in
one line, and the run goes on.

One run on the stand-in "internet" (``support/standins.py``): Saltmere reads the same small page
twice (kept once), then 3 MiB (over the 2 MiB per-body cap), 1 MiB (kept), and 2 MiB (over the
run's 2.5 MiB cap); the other two samples submit at once.
"""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from pathlib import Path

import pytest

from inspect_gaia.egress.web_record import ARCHIVE_KEY, from_store
from inspect_gaia.sandboxes.docker.egress_archive import BODY_CAP_ENV, RUN_CAP_ENV, SAMPLE_CAP_ENV
from support import answer_pages as web
from support.scripted_model import Entry
from support.standins import StandIns
from tests.helpers import Play, docker_leftovers, eval_gaia, invoke, sample_asking

pytestmark = pytest.mark.docker

MIB = 1 << 20


def _bulk(mib: int) -> str:
    return (
        f"curl -s -m 60 -o /dev/null -w '%{{size_download}} ' http://{web.WEATHER_HOST}/bulk/{mib}"
    )


def _zeros(mib: int) -> str:
    return hashlib.sha256(bytes(mib * MIB)).hexdigest()


def test_bodies_are_kept_by_hash_beside_the_log_within_their_caps(
    sandbox_image: str,
    egress_image: str,
    internet: StandIns,
    scripted: Play,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    before = docker_leftovers()
    monkeypatch.setenv("INSPECT_LOG_DIR", str(tmp_path / "elsewhere"))  # not --log-dir
    monkeypatch.setenv(BODY_CAP_ENV, str(2 * MIB))
    monkeypatch.setenv(RUN_CAP_ENV, str(5 * MIB // 2))
    monkeypatch.setenv(SAMPLE_CAP_ENV, str(5 * MIB // 2))  # the run's cap, not a sample's share
    page = web.fetch(web.WEATHER_HOST, web.WEATHER_PATH)
    pages = f"{web.WAIT_FOR_STANDINS}; {page}; {page}"
    bulk = f"{_bulk(3)}; {_bulk(1)}; {_bulk(2)}"
    scripted(
        [
            Entry(web.SALTMERE, [{"bash": pages}, {"bash": bulk}, {"submit": "Thistlewood"}]),
            Entry(web.ORRINDALE, [{"submit": "41"}]),
            Entry(web.PELLBROOK, [{"submit": "Nineteen Locks"}]),
        ]
    )
    with internet.attaching():
        log = eval_gaia(
            tmp_path, dataset_path=str(web.GAIA_LEAK), image=sandbox_image, web_record="bodies"
        )
    assert log.status == "success" and log.samples is not None
    saltmere = sample_asking(log.samples, web.SALTMERE)
    # the sandbox got every byte, kept or not: the caps bound the archive, not the agent's web
    tools = [m.text for m in saltmere.messages if m.role == "tool"]
    assert web.WEATHER in tools[0] and f"{3 * MIB} {MIB} {2 * MIB}" in tools[1], tools
    assert saltmere.error is None and saltmere.scores
    name = saltmere.store[ARCHIVE_KEY]
    archives = Path(log.location).parent  # beside the log, wherever --log-dir put it
    archive = archives / name
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    assert (archives / f"{name}.sha256").read_text() == f"{digest}  {name}\n"
    out = capfd.readouterr().out
    assert f"{archive}, SHA-256 {digest}" in out
    assert (
        "Response bodies not kept in the web archive (recorded, hashed): 1 over the per-body "
        f"cap ({2 * MIB} bytes); 1 over the run's cap ({5 * MIB // 2} bytes)"
    ) in out

    with tarfile.open(archive) as tar:
        files = {m.name: m for m in tar.getmembers() if m.isfile()}
        bodies = {Path(n).name for n in files if n.startswith("record/bodies/")}
        weather = hashlib.sha256(web.WEATHER.encode()).hexdigest()
        got = tar.extractfile(files[f"record/bodies/{weather}"])
        assert got is not None and got.read() == web.WEATHER.encode()
        lines = [
            json.loads(line)
            for n in files
            if n.endswith(".jsonl")
            for line in io.TextIOWrapper(tar.extractfile(n) or io.BytesIO())
        ]
    # every body kept is there once (the page read twice too), no part file left
    assert bodies == {x["sha256"] for x in lines if x["body"] == "kept"}
    fate = {
        (x["url"].rsplit("/", 1)[1], x["sha256"]): x["body"]
        for x in lines
        if not x["url"].endswith("/whoami")  # the wait for the stand-ins
    }
    assert fate == {
        ("today.txt", weather): "kept",
        ("3", _zeros(3)): f"over the per-body cap ({2 * MIB} bytes)",
        ("1", _zeros(1)): "kept",
        ("2", _zeros(2)): f"over the run's cap ({5 * MIB // 2} bytes)",
    }
    fetched = [x for x in lines if x["url"].endswith(web.WEATHER_PATH)]
    assert len(fetched) == 2
    assert all(
        ["content-type", "text/plain"] in [[k.lower(), v] for k, v in x["headers"]] for x in fetched
    )
    # the sample's store holds every body's hash, as the archive holds them
    requests = from_store(saltmere.store)
    assert requests is not None and {r.sha256 for r in requests} == {x["sha256"] for x in lines}
    assert (
        sample_asking(log.samples, web.ORRINDALE).store[ARCHIVE_KEY] == name
    )  # every sample names it
    # the proxy went after the archive came out of it, with the run's other resources
    assert docker_leftovers() == before

    # -- replay, the stand-in web gone from the proxy's reach: the recorded web alone --------
    scripted(
        [
            Entry(
                web.SALTMERE,
                [
                    {"bash": pages},
                    {"bash": f"curl -sS -m 20 http://{web.WEATHER_HOST}/never-read"},
                    {"submit": "Thistlewood"},
                ],
            ),
            Entry(web.ORRINDALE, [{"submit": "41"}]),
            Entry(web.PELLBROOK, [{"submit": "Nineteen Locks"}]),
        ]
    )
    again = eval_gaia(
        tmp_path / "replay",
        dataset_path=str(web.GAIA_LEAK),
        image=sandbox_image,
        web_replay=str(archive),
    )
    assert again.status == "success" and again.samples is not None
    replayed = sample_asking(again.samples, web.SALTMERE)
    told = [m.text for m in replayed.messages if m.role == "tool"]
    assert told[0] == tools[0]  # the same page, as the model read it when it was recorded
    assert "not in the recorded web: http://weather.example/never-read" in told[1]
    assert [s.scores for s in again.samples] == [s.scores for s in log.samples]
    assert (again.eval.metadata or {})["gaia"]["web_replay"] == {"archive": name, "sha256": digest}
    refused = [r for r in from_store(replayed.store) or () if r.decision == "refused"]
    assert [r.url for r in refused] == [f"http://{web.WEATHER_HOST}/never-read"]
    code, out, _ = invoke("report", str(log.location), str(again.location), "--format", "json")
    groups = json.loads(out)["groups"]
    assert code == 0 and len(groups) == 2  # never pooled with the live run
    assert docker_leftovers() == before
    (replay_group,) = [g for g in groups if any("replayed web" in f for f in g["flags"])]
    assert replay_group["web"]["record_only"] is False  # its flag says what it read, not the note
