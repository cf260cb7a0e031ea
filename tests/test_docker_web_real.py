"""gaia-web's four questions answered on the stand-in web that speaks like the real web, recorded
with bodies through the run's proxy, then replayed from the archive alone.

The stand-in (``support/real_web.py``) speaks HTTP/2 over TLS 1.3 with brotli; the run's proxy
verifies its certificate against the test CA. The scripted agent follows a cross-host redirect in
the browser, opens a page drawn by its own script, searches through a form (the result page echoes
the encoded query), reads brotli-coded pages with curl over HTTP/2 and with the page reader, and follows a redirect to a
listed answer source (refused, flagged). Each request that reached the stand-in is recorded once,
in its own sample, and the replay answers the same questions with the stand-in out of reach, each
client served a content coding it reads (a recording in another, decoded).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from inspect_ai.log import EvalLog, EvalSample

from inspect_gaia.egress import PROXY_IMAGE
from inspect_gaia.egress.urlrules import REFUSAL_MARKER
from inspect_gaia.egress.web_record import ARCHIVE_KEY, from_store
from inspect_gaia.image_layout import OFFLINE_BROWSER_TAG
from inspect_gaia.sandboxes.docker.engine import local_image_id
from support.real_web import ELSEWHERE, HOST, LISTED_URL, SEARCH, RealWeb, real_web
from support.scripted_model import Entry, ScriptedModel
from tests.helpers import eval_gaia, metrics, sample_asking

pytestmark = [pytest.mark.docker, pytest.mark.slow]

GAIA_WEB = Path(__file__).parent / "fixtures" / "gaia-web"
BR = f"curl -sS --http2 --compressed https://{HOST}/encoded/br"
MEGALITRES = "sed -n 's/.*holds \\([0-9]*\\) megalitres.*/\\1/p' | head -1"


def _agent(replay: bool = False) -> list[Entry]:
    """The scripted agent; in the replay, Harrowgate also reads pages as clients recorded in
    codings they do not accept: its own gzip page with curl (no ``Accept-Encoding``), the
    browser's br page with the page reader."""

    def go(url: str) -> dict[str, object]:
        return {"call": "browser_navigate", "args": {"url": url}}

    decoded: list[dict[str, object]] = [
        {"bash": f"curl -sS https://{HOST}/encoded/auto | {MEGALITRES}"},
        {"call": "fetch", "args": {"url": f"https://{HOST}/fetches"}},
    ]

    return [
        Entry(
            "Wrenfold",
            [
                go(f"https://{HOST}/redirect/cross-host"),
                go(f"https://{HOST}/fetches"),
                go(f"https://{HOST}/encoded/auto"),
                {"submit_found": r"The ([a-z ]+) stands on the old pier"},
            ],
        ),
        Entry(
            "Cobblemere",
            [
                go(f"https://{SEARCH}/search"),
                {
                    "call": "browser_type",
                    "args": {"ref": "{ref:Search}", "text": "Lantern Guild & co", "submit": True},
                },
                {"call": "browser_click", "args": {"ref": "{ref:The heron and the pier}"}},
                {"submit_found": r"lit the harbour road in (\d{4})"},
            ],
        ),
        Entry(
            "Brackwater",
            [{"bash": f"curl -sS -L https://{HOST}/redirect/listed"}, {"submit": "6"}],
        ),
        Entry(
            "Harrowgate",
            [
                *(decoded if replay else []),
                {"bash": f"{BR} | {MEGALITRES}"},
                {"call": "fetch", "args": {"url": f"https://{HOST}/encoded/auto"}},
                {"submit_found": r"holds (\d+) megalitres"},
            ],
        ),
    ]


def _texts(sample: EvalSample) -> list[str]:
    return [m.error.message if m.error else m.text for m in sample.messages if m.role == "tool"]


def _run(tmp_path: Path, **params: object) -> EvalLog:
    log = eval_gaia(
        tmp_path,
        dataset_path=str(GAIA_WEB),
        image=OFFLINE_BROWSER_TAG,
        browser=True,
        web_reader=True,
        **params,
    )
    assert log.status == "success" and log.samples is not None
    return log


@dataclass
class Live:
    """The live run on the stand-in web, and the stand-in (what it served)."""

    web: RealWeb
    log: EvalLog


@pytest.fixture(scope="module")
def live(
    sandbox_image: str, scripted_server: ScriptedModel, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Live]:
    for image, flag in ((OFFLINE_BROWSER_TAG, "--browser"), (PROXY_IMAGE, "--egress-proxy")):
        assert local_image_id(image) is not None, (
            f"{image} is missing — build it with `inspect-gaia image build --offline {flag}`"
        )
    _play(scripted_server)
    with real_web(sandbox_image, label="real-web-run") as web, web.attaching():
        log = _run(tmp_path_factory.mktemp("live"), block_answer_sources=True, web_record="bodies")
        assert len(web.attached) == 1
        yield Live(web, log)


def _play(model: ScriptedModel, replay: bool = False) -> None:
    """The scripted model plays ``_agent`` (as the ``scripted`` fixture sets a scenario)."""
    model.entries = _agent(replay)
    model.calls.clear()
    model.tools_offered.clear()
    model.requests.clear()


def _target(url: str) -> tuple[str | None, str]:
    parts = urlsplit(url)
    return parts.hostname, parts.path + (f"?{parts.query}" if parts.query else "")


def test_a_browsing_run_on_the_real_web_is_recorded_once_in_its_sample(live: Live) -> None:
    log = live.log
    assert log.samples is not None
    assert metrics(log)["accuracy"] == 1.0, [(s.input, s.output.completion) for s in log.samples]
    wrenfold, cobblemere, brackwater = (
        sample_asking(log.samples, word) for word in ("Wrenfold", "Cobblemere", "Brackwater")
    )
    landed, drawn, _ = _texts(wrenfold)[:3]
    assert f"Landed on {ELSEWHERE} from cross-host" in landed
    assert "protocol: " in drawn, "the page's script ran in the browser"
    results = _texts(cobblemere)[1]
    assert "Results for Lantern Guild & co" in results, results
    assert f"{REFUSAL_MARKER} {LISTED_URL}" in _texts(brackwater)[0]
    flags = ((brackwater.scores or {})["gaia_scorer"].metadata or {}).get("contamination", [])
    assert "refused" in {f["kind"] for f in flags}
    curled, read = _texts(sample_asking(log.samples, "Harrowgate"))[:2]
    assert curled.strip() == "310", "curl decoded brotli over HTTP/2 through the proxy"
    assert "holds 310 megalitres" in read, "the page reader read the coded page"

    # what reached the stand-in came through the one proxy, and each request is in the record
    # once, in its own sample: the redirect's two hops, the page script's own fetch, the search
    served = live.web.served()
    assert served and len({r["client"] for r in served}) == 1
    records = {str(s.id): from_store(s.store) or () for s in log.samples}
    answered = Counter(
        _target(r.url)
        for found in records.values()
        for r in found
        if r.decision == "allowed" and r.status is not None
    )
    assert answered == Counter((r["host"], r["path"]) for r in served)
    wrenfold_urls = [r.url for r in records[str(wrenfold.id)]]
    for url in (
        f"https://{HOST}/redirect/cross-host",
        f"https://{ELSEWHERE}/redirect/landed?from=cross-host",
        f"https://{HOST}/api/items.json",
    ):
        assert url in wrenfold_urls, wrenfold_urls
    searched = f"https://{SEARCH}/search?q=Lantern+Guild+%26+co"
    assert searched in [r.url for r in records[str(cobblemere.id)]]
    assert not any("/datasets/gaia-benchmark" in r["path"] for r in served)


def test_the_replay_answers_the_same_from_the_archive_alone(
    live: Live, scripted_server: ScriptedModel, tmp_path: Path
) -> None:
    assert live.log.samples is not None
    archive = Path(live.log.location).parent / live.log.samples[0].store[ARCHIVE_KEY]
    before = len(live.web.served())
    _play(scripted_server, replay=True)
    again = _run(tmp_path, web_replay=str(archive))
    assert again.samples is not None
    assert len(live.web.served()) == before, "the replay reached nothing live"
    replayed = sample_asking(again.samples, "Wrenfold")
    assert f"Landed on {ELSEWHERE} from cross-host" in _texts(replayed)[0]
    # each client is served a coding it reads: a recording in one it does not accept is served
    # decoded (curl without --compressed read gzip bytes, the page reader the browser's br)
    curled, fetched, _, read = _texts(sample_asking(again.samples, "Harrowgate"))[:4]
    assert curled.strip() == "310", curled[:300]
    assert "Drawn by its script" in fetched, fetched[:300]
    assert "holds 310 megalitres" in read, read[:300]
    assert metrics(again)["accuracy"] == 1.0
