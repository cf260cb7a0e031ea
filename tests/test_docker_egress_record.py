"""``-T web_record=true``: the run's proxy on the path, refusing no answer source, recording every
request into the sample that made it; the network policy still holds; ``report`` says so.

One run of three samples on the stand-in "internet" (``support/standins.py``): Saltmere reads the
mirror (an answer source, not refused here) and tries a link-local address through the proxy;
Orrindale and Pellbrook fetch the same page at the same time, 3 and 5 times at once each;
Orrindale submits while a request it started in the background is still unanswered (as Chromium
asks for a favicon after a page has loaded), and one more starts after.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from pathlib import Path

import pytest
from inspect_ai.event import InfoEvent
from inspect_ai.log import EvalSample, resolve_sample_attachments

from inspect_gaia.egress.web_record import INFO_SOURCE, UNANSWERED, WebRequest, from_store
from inspect_gaia.logs.web_reads import RECORD_ONLY
from support.answer_pages import (
    GAIA_LEAK,
    MIRROR_HOST,
    MIRROR_PATH,
    ORRINDALE,
    PELLBROOK,
    SALTMERE,
    WAIT_FOR_STANDINS,
    WEATHER,
    WEATHER_HOST,
    WEATHER_PATH,
    fetch,
    mirror_body,
)
from support.scripted_model import Entry
from support.standins import StandIns
from tests.helpers import Play, docker_leftovers, eval_gaia, invoke, sample_asking

pytestmark = pytest.mark.docker

PAGE = f"http://{WEATHER_HOST}{WEATHER_PATH}"


def _at_once(times: int) -> str:
    """Fetch ``PAGE`` ``times`` times in parallel, once every sample is up."""
    fetches = " ".join(f"curl -s -m 20 -o /dev/null {PAGE} &" for _ in range(times))
    return f"{WAIT_FOR_STANDINS}; sleep 2; {fetches} wait; echo fetched"


def _behind(marker: str) -> str:
    """Requests that outlive their command: one answered in 6 s, one more a second later."""
    slow = f"curl -s -m 20 -o /dev/null 'http://{WEATHER_HOST}/slow/6?{marker}-slow'"
    later = f"sleep 1.5; curl -s -m 20 -o /dev/null '{PAGE}?{marker}-later'"
    jobs = " ".join(f'setsid nohup sh -c "{job}" >/dev/null 2>&1 &' for job in (slow, later))
    return f"{jobs} sleep 0.5; echo left behind"


def _requests(sample: EvalSample) -> tuple[WebRequest, ...]:
    found = from_store(sample.store)
    assert found is not None, f"no record in {sample.id}'s store"
    return found


def test_record_only_refuses_nothing_records_everything_and_keeps_the_network_policy(
    sandbox_image: str, egress_image: str, internet: StandIns, scripted: Play, tmp_path: Path
) -> None:
    before = docker_leftovers()
    late = f"late-{uuid.uuid4().hex[:8]}"
    scripted(
        [
            Entry(
                SALTMERE,
                [
                    {"bash": f"{WAIT_FOR_STANDINS}; {fetch(MIRROR_HOST, MIRROR_PATH)}"},
                    {"bash": "curl -sS -m 5 http://169.254.169.254/latest/ 2>&1 | head -c 300"},
                    {"submit": "Thistlewood"},
                ],
            ),
            Entry(ORRINDALE, [{"bash": _at_once(3)}, {"bash": _behind(late)}, {"submit": "41"}]),
            Entry(PELLBROOK, [{"bash": _at_once(5)}, {"submit": "Nineteen Locks"}]),
        ]
    )
    with internet.attaching():
        log = eval_gaia(tmp_path, dataset_path=str(GAIA_LEAK), image=sandbox_image, web_record=True)
    assert log.status == "success" and log.samples is not None
    assert (log.eval.metadata or {})["gaia"]["web_record"] is True
    assert (log.eval.metadata or {})["gaia"]["answer_sources"]["blocked"] is False

    # the mirror is read (nothing refused), its body hashed as it streamed
    mirror = sample_asking(log.samples, SALTMERE)
    (read,) = [r for r in _requests(mirror) if r.url.endswith(MIRROR_PATH)]
    body = mirror_body()
    assert (read.decision, read.status, read.bytes) == ("allowed", 200, len(body))
    assert read.sha256 == hashlib.sha256(body).hexdigest()
    assert read.type == "application/jsonl"
    # the network policy holds: a link-local address is blocked, and recorded as such
    (blocked,) = [r for r in _requests(mirror) if r.decision == "blocked"]
    assert blocked.url.startswith("http://169.254.169.254/") and blocked.status == 403
    assert "link-local" in str(blocked.why)

    # the same page fetched at once by two samples: each request in its own sample's record
    for word, times in ((ORRINDALE, 3), (PELLBROOK, 5)):
        sample = sample_asking(log.samples, word)
        pages = [r for r in _requests(sample) if r.url == PAGE]  # (those left behind: a query)
        assert len(pages) == times, (word, pages)
        assert {r.sha256 for r in pages} == {hashlib.sha256(WEATHER.encode()).hexdigest()}
        assert {r.host for r in _requests(sample)} == {WEATHER_HOST}
        events = resolve_sample_attachments(sample).events
        (event,) = [e for e in events if isinstance(e, InfoEvent) and e.source == INFO_SOURCE]
        assert f"| GET | {PAGE} | 200 |" in str(event.data)

    # what was left behind is in Orrindale's record, each request that reached the stand-in: the
    # record is read once the sandbox can start none, and one still unanswered is said so
    behind = [r for r in _requests(sample_asking(log.samples, ORRINDALE)) if late in r.url]
    reached = [r for r in internet.requests() if late in r.get("path", "")]
    assert sorted(r.url.rsplit("-", 1)[1] for r in behind) == sorted(
        r["path"].rsplit("-", 1)[1] for r in reached
    )
    (slow,) = [r for r in behind if r.url.endswith("-slow")]
    assert slow.status is None and slow.error == UNANSWERED, slow

    code, out, _ = invoke("report", str(log.location), "--format", "json")
    assert code == 0
    (group,) = json.loads(out)["groups"]
    web = group["web"]
    assert web["record_only"] is True and RECORD_ONLY in web["note"]
    assert any(RECORD_ONLY in flag for flag in group["flags"])
    everything = web["levels"][-1]
    assert (everything["recorded"], everything["refused"], everything["blocked"]) == (3, 0, 1)
    assert everything["requests"] == sum(len(_requests(s)) for s in log.samples)
    code, text, _ = invoke("report", str(log.location))
    assert code == 0 and "What the samples requested on the web" in text
    assert docker_leftovers() == before
