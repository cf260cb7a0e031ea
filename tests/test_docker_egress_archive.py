"""``-T web_record=bodies`` then ``-T web_replay``: one recorded run, one replayed run, and the
recorded web carried between them in the web's own format.

The record run on the stand-in "internet" (``support/standins.py``): Saltmere reads the same
small page twice (kept once), the clock (``/clock``: another answer each time), then 3 MiB (over
the 2 MiB per-body cap) and 1 MiB (kept), and, once the others are done, 2 MiB (over the run's
2.5 MiB cap); Orrindale reads ``today.txt?_=123`` (a 404: it normalises as Saltmere's 200 does)
and the clock; Pellbrook the clock twice around the weather. The archive lands beside the log,
its hash in the log's provenance (a post-eval edit), and ``web verify`` holds it to the log.

Its HAR export validates against HAR 1.2 and Playwright's ``routeFromHAR`` (in the browser
image, no network) serves its pages; in the same container Playwright records a page of its own
as HAR, which ``web merge`` adds to the run's archive. The replay of that merge, with the stand-in
web out of reach, serves each sample the bodies it recorded, in turn (newcomer review round 4,
problem 5: Saltmere's ``today.txt`` was served Orrindale's 404), the Playwright page from the
pool, and refuses what nobody recorded; ``report`` gives its coverage per level and sample.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import tarfile
from pathlib import Path

import jsonschema
import pytest
from inspect_ai.log import EvalSample, read_eval_log

from inspect_gaia.egress.replay_match import OWN, POOLED, REFUSAL
from inspect_gaia.egress.web_archive import read_archive
from inspect_gaia.egress.web_record import ARCHIVE_KEY, WebRequest, from_store
from inspect_gaia.image_layout import OFFLINE_BROWSER_TAG
from inspect_gaia.sandboxes.docker.egress_archive import BODY_CAP_ENV, RUN_CAP_ENV, SAMPLE_CAP_ENV
from support import answer_pages as web
from support.scripted_model import Entry
from support.standins import StandIns
from tests.helpers import Play, docker_leftovers, eval_gaia, invoke, sample_asking

pytestmark = pytest.mark.docker

MIB = 1 << 20
CLOCK = f"http://{web.WEATHER_HOST}/clock"
TODAY = f"http://{web.WEATHER_HOST}{web.WEATHER_PATH}"
FORECAST = "http://forecast.example/forecast.html"
FORECAST_TEXT = "Tomorrow: clear skies over Saltmere Reach."
SCHEMA = Path(__file__).parent / "fixtures" / "har-1.2.schema.json"
PLAYWRIGHT = r"""
// In the browser image, no network: Chromium serves the run's HAR export (routeFromHAR), then
// records a page of a server of its own as HAR (recordHar).
const { chromium } = require('playwright-core');
(async () => {
  const [exported, url, recorded, page_url] = process.argv.slice(2);
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--host-resolver-rules=MAP forecast.example 127.0.0.1'],
  });
  const replay = await browser.newContext();
  await replay.routeFromHAR(exported, { notFound: 'abort' });
  const page = await replay.newPage();
  const response = await page.goto(url);
  const served = { status: response.status(), text: await page.innerText('body') };
  await replay.close();
  const record = await browser.newContext({ recordHar: { path: recorded, content: 'embed' } });
  const other = await record.newPage();
  await other.goto(page_url);
  served.recorded = await other.innerText('body');
  await record.close();
  await browser.close();
  console.log(JSON.stringify(served));
})().catch(e => { console.error(String(e)); process.exit(1); });
"""


def _get(url: str) -> str:
    return f"curl -sS -m 20 {url}; echo"


def _bulk(mib: int) -> str:
    return (
        f"curl -s -m 60 -o /dev/null -w '%{{size_download}} ' http://{web.WEATHER_HOST}/bulk/{mib}"
    )


def _zeros(mib: int) -> str:
    return hashlib.sha256(bytes(mib * MIB)).hexdigest()


def _script(replay: bool) -> list[Entry]:
    """The three samples' fetches: the record's, and the replay's (the same, with others)."""
    saltmere_last = (
        [{"bash": f"{_get(f'http://{web.WEATHER_HOST}/never-read')}; {_get(FORECAST)}"}]
        if replay
        else [{"bash": f"sleep 10; {_bulk(2)}"}]  # the others done: the run's cap, last
    )
    return [
        Entry(
            web.SALTMERE,
            [
                {"bash": f"{web.WAIT_FOR_STANDINS}; {_get(TODAY)}; {_get(TODAY)}; {_get(CLOCK)}"},
                {"bash": f"{_bulk(3)}; {_bulk(1)}"},
                *saltmere_last,
                {"submit": "Thistlewood"},
            ],
        ),
        Entry(
            web.ORRINDALE,
            [
                {"bash": f"{web.WAIT_FOR_STANDINS}; {_get(TODAY + '?_=123')}; {_get(CLOCK)}"},
                {"submit": "41"},
            ],
        ),
        Entry(
            web.PELLBROOK,
            [
                {"bash": f"{web.WAIT_FOR_STANDINS}; {_get(CLOCK)}; {_get(TODAY)}; {_get(CLOCK)}"},
                {"submit": "Nineteen Locks"},
            ],
        ),
    ]


def _tools(sample: EvalSample) -> list[str]:
    return [m.text for m in sample.messages if m.role == "tool"]


def _fetched(requests: tuple[WebRequest, ...] | None) -> list[WebRequest]:
    """A sample's requests but the wait for the stand-ins, in the order asked."""
    return sorted((r for r in requests or () if not r.url.endswith("/whoami")), key=lambda r: r.t)


def test_a_recorded_run_replays_each_sample_its_own_web_and_travels_as_har(
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
    scripted(_script(replay=False))
    with internet.attaching():
        log = eval_gaia(
            tmp_path, dataset_path=str(web.GAIA_LEAK), image=sandbox_image, web_record="bodies"
        )
    assert log.status == "success" and log.samples is not None
    saltmere = sample_asking(log.samples, web.SALTMERE)
    # the sandbox got every byte, kept or not: the caps bound the archive, not the agent's web
    assert f"{3 * MIB} {MIB} " in _tools(saltmere)[1] and str(2 * MIB) in _tools(saltmere)[2]
    name = saltmere.store[ARCHIVE_KEY]
    archive = Path(log.location).parent / name  # beside the log, wherever --log-dir put it
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    assert (archive.parent / f"{name}.sha256").read_text() == f"{digest}  {name}\n"
    out = capfd.readouterr().out
    assert f"{archive}, SHA-256 {digest}" in out
    assert (
        "Response bodies not kept in the web archive (recorded, hashed): 1 over the per-body "
        f"cap ({2 * MIB} bytes); 1 over the run's cap ({5 * MIB // 2} bytes)"
    ) in out
    # the archive's hash in the provenance: written once it closed, by inspect's own edit
    header = read_eval_log(log.location, header_only=True)
    assert header.metadata["gaia"]["web_archive"] == {
        "archive": name,
        "sha256": digest,
        "bytes": archive.stat().st_size,
    }
    assert "web_archive" not in (header.eval.metadata or {})["gaia"]
    assert [u.provenance.author for u in header.log_updates or []] == ["inspect_gaia"]
    assert docker_leftovers() == before

    # -- the archive: each body once, each sandbox's sample named -------------------------------
    recorded = read_archive(str(archive))
    assert recorded.blocked is False  # the run recorded without refusing answer sources
    with tarfile.open(archive) as tar:
        bodies = {m.name.rsplit("/", 1)[1] for m in tar if m.name.startswith("record/bodies/")}
    kept = {str(x.data["sha256"]) for x in recorded.lines if x.data.get("body") == "kept"}
    assert bodies == kept and _zeros(1) in kept and not {_zeros(2), _zeros(3)} & kept
    assert {x.sample for x in recorded.lines if x.data["url"] == CLOCK} == {
        str(s.id) for s in log.samples
    }
    clocks = [
        r.sha256 for r in _fetched(from_store(sample_asking(log.samples, web.PELLBROOK).store))
    ]
    assert clocks[0] != clocks[2]  # the page changed between the two reads

    # -- web verify: the archive beside the log is the one it names; a tampered one is not ------
    code, said, err = invoke("web", "verify", str(log.location))
    assert code == 0 and f"✓ {archive}: the archive the log names" in said, err
    tampered = tmp_path / "tampered"
    tampered.mkdir()
    (tampered / Path(log.location).name).write_bytes(Path(log.location).read_bytes())
    data = archive.read_bytes()
    at = data.index(web.WEATHER.encode())
    (tampered / name).write_bytes(data[:at] + b"X" + data[at + 1 :])
    code, _, err = invoke("web", "verify", str(tampered / Path(log.location).name))
    assert code == 1 and "is not the archive the log names" in err and "does not hash" in err

    # -- HAR out, read by Playwright; HAR in, made by Playwright ---------------------------------
    exported = tmp_path / "browser" / "run.har"
    exported.parent.mkdir()
    code, _, err = invoke("web", "export", str(log.location), "-o", str(exported))
    assert code == 0, err
    har = json.loads(exported.read_text())
    validator = jsonschema.Draft7Validator(json.loads(SCHEMA.read_text()))
    assert [e.message for e in validator.iter_errors(har)] == []
    entries = har["log"]["entries"]
    assert {e["_sample"] for e in entries} == {str(s.id) for s in log.samples}
    page = next(e for e in entries if e["request"]["url"] == TODAY and e["_sample"] == saltmere.id)
    assert page["response"]["content"]["text"] == web.WEATHER
    site = tmp_path / "browser" / "site"
    site.mkdir()
    (site / "forecast.html").write_text(f"<html><body><p>{FORECAST_TEXT}</p></body></html>")
    (tmp_path / "browser" / "har.js").write_text(PLAYWRIGHT)
    served = subprocess.run(
        [
            *("docker", "run", "--rm", "--network", "none", "--label", "inspect_gaia.test=har"),
            *("-e", "NODE_PATH=/opt/playwright-mcp/node_modules"),
            *("-v", f"{tmp_path / 'browser'}:/w", OFFLINE_BROWSER_TAG, "sh", "-c"),
            "cd /w/site && (python3 -m http.server 80 >/dev/null 2>&1 &) && sleep 1 && "
            f"node /w/har.js /w/run.har {TODAY} /w/playwright.har {FORECAST}",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert served.returncode == 0, served.stderr[-2000:]
    shown = json.loads(served.stdout.strip().splitlines()[-1])
    assert shown == {"status": 200, "text": web.WEATHER, "recorded": FORECAST_TEXT}
    merged = tmp_path / "merged.tar"
    playwright_har = tmp_path / "browser" / "playwright.har"
    code, said, err = invoke("web", "merge", str(archive), str(playwright_har), "-o", str(merged))
    assert code == 0 and "0 recorded differently" in said, err

    # -- the replay of the merge, the stand-in web out of reach ---------------------------------
    scripted(_script(replay=True))
    again = eval_gaia(
        tmp_path / "replay",
        dataset_path=str(web.GAIA_LEAK),
        image=sandbox_image,
        web_replay=str(merged),
    )
    assert again.status == "success" and again.samples is not None
    assert [s.scores for s in again.samples] == [s.scores for s in log.samples]
    pages = (TODAY, TODAY + "?_=123", CLOCK)
    compared = 0
    for sample in log.samples:
        replayed = next(s for s in again.samples if s.id == sample.id)
        theirs = [r for r in _fetched(from_store(sample.store)) if r.url in pages]
        asked = [r for r in _fetched(from_store(replayed.store)) if r.url in pages]
        assert [r.url for r in asked] == [r.url for r in theirs], sample.id
        # each sample the bodies it recorded, in the order it read them: its own, not another's
        for mine, now in zip(theirs, asked, strict=True):
            if mine.sha256 in kept:
                assert (now.sha256, now.why) == (mine.sha256, OWN), (sample.id, mine.url)
                compared += 1
    assert compared >= 7  # Saltmere's three, Orrindale's two, Pellbrook's (three, unless capped)
    replayed_saltmere = sample_asking(again.samples, web.SALTMERE)
    told = _tools(replayed_saltmere)
    assert told[0] == _tools(saltmere)[0]  # the same pages, as the model read them recorded
    refused_size, served_size = told[1].split()[:2]
    assert served_size == str(MIB) and refused_size != str(3 * MIB)  # over the cap: not kept
    assert f"not in the recorded web: http://{web.WEATHER_HOST}/never-read" in told[2]
    assert FORECAST_TEXT in told[2]
    why = {r.url: r.why for r in from_store(replayed_saltmere.store) or ()}
    assert why[FORECAST] == POOLED and why[f"http://{web.WEATHER_HOST}/never-read"] == REFUSAL
    record = (again.eval.metadata or {})["gaia"]["web_replay"]
    assert record == {
        "archive": "merged.tar",
        "sha256": hashlib.sha256(merged.read_bytes()).hexdigest(),
        "format": "archive",
        "blocked_answer_sources": False,
    }
    code, out, _ = invoke("report", str(log.location), str(again.location), "--format", "json")
    groups = json.loads(out)["groups"]
    assert code == 0 and len(groups) == 2  # never pooled with the live run
    (replay_group,) = [g for g in groups if g["web"].get("replay")]
    coverage = replay_group["web"]["replay"]
    assert coverage["levels"][-1]["pooled"] == 1 and coverage["levels"][-1]["not_recorded"] == 2
    assert "its run did not block answer sources" in coverage["note"]
    assert {s["task_id"] for s in coverage["samples"]} == {str(s.id) for s in log.samples}
    assert docker_leftovers() == before
