"""Eight samples browsing and curling the stand-in web at once through the run's proxy (#49).

About two minutes of the run's proxy at work on the stand-in web that speaks like the real one
(``support/real_web.py``: HTTP/2 and HTTP/1.1 over TLS 1.3, brotli, redirects, slow and chunked
bodies, a large download, pages whose scripts fetch, one that reads one chunk of a download and
leaves the rest): four samples browse page after page with the browser tool, four curl in a loop.
Every curl is answered, the proxy never goes down, every request that reached the stand-in is in
the record once, in its own sample, and the proxy's memory at its highest is reported (``-s``)
and held under ``PEAK_BOUND``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from inspect_ai.model import ChatMessageTool

from benchmarks.fixture import task_id, write_dataset
from inspect_gaia import gaia
from inspect_gaia.egress import PROXY_IMAGE
from inspect_gaia.egress.web_record import UNANSWERED, from_store
from inspect_gaia.image_layout import OFFLINE_BROWSER_TAG
from inspect_gaia.sandboxes.docker.engine import local_image_id
from support.proxy_floods import ProxyWatch
from support.real_web import ELSEWHERE, HOST, SEARCH, RealWeb, real_web
from support.scripted_model import Entry
from tests.helpers import Play, eval_task

pytestmark = [pytest.mark.docker, pytest.mark.slow]

BROWSING = 4
CURLING = 4
SECONDS = 120
"""How long each curling sample loops (the browsing ones take about as long, page after page)."""
PEAK_BOUND = 400 << 20
"""The proxy container's memory at its highest (it rests near 70 MiB, of its 1 GB limit)."""
PAGES = [
    f"https://{HOST}/",
    f"https://{HOST}/fetches",
    f"https://{HOST}/redirect/chain?n=3",
    f"https://{HOST}/redirect/cross-host",
    f"https://{SEARCH}/search?q=lantern+guild",
    f"https://{HOST}/encoded/auto",
    f"https://{HOST}/one-chunk?size=64M",
    f"https://{ELSEWHERE}/",
    f"http://{HOST}/fetches",
]
CURLS = [
    ("", f"https://{HOST}/echo"),
    ("--compressed", f"https://{HOST}/encoded/br"),
    ("", f"https://{HOST}/download?size=8M"),
    ("", f"https://{HOST}/download?size=2M&length=no"),
    ("", f"https://{HOST}/chunked?count=20&size=4096"),
    ("", f"https://{HOST}/slow?size=2048&rate=8192&chunk=512"),
    ("-L", f"https://{HOST}/redirect/chain?n=2"),
    ("", f"http://{HOST}/echo"),
]
"""Each curling sample's loop: curl's options, and the URL."""


@pytest.fixture
def web(sandbox_image: str) -> Iterator[RealWeb]:
    for image, flag in ((OFFLINE_BROWSER_TAG, "--browser"), (PROXY_IMAGE, "--egress-proxy")):
        assert local_image_id(image) is not None, (
            f"{image} is missing — build it with `inspect-gaia image build --offline {flag}`"
        )
    with real_web(sandbox_image, label="egress-soak") as made:
        yield made


def _curling() -> str:
    each = "; ".join(
        f"if [ \"$(curl -sS -m 60 -o /dev/null -w '%{{http_code}}' {options} '{url}')\" = 200 ]; "
        "then ok=$((ok+1)); else bad=$((bad+1)); fi"
        for options, url in CURLS
    )
    return (
        f"ok=0; bad=0; end=$((SECONDS+{SECONDS})); while [ $SECONDS -lt $end ]; do {each}; "
        "done; echo curled ok $ok bad $bad"
    )


def _browsing(offset: int) -> list[dict[str, object]]:
    turn = PAGES[offset:] + PAGES[:offset]
    pages: list[dict[str, object]] = [
        {"call": "browser_navigate", "args": {"url": url}} for url in turn * 2
    ]
    return [*pages, {"submit": "20"}]


def _target(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.hostname or "", parts.path + (f"?{parts.query}" if parts.query else "")


def test_eight_samples_browse_and_curl_through_the_proxy_for_two_minutes(
    web: RealWeb, scripted: Play, tmp_path: Path
) -> None:
    samples = BROWSING + CURLING
    dataset = write_dataset(tmp_path / "GAIA", samples, 0)  # answers "20"
    scripted(
        [
            Entry(f"Benchmark question {i}:", _browsing(i))
            if i < BROWSING
            else Entry(f"Benchmark question {i}:", [{"bash": _curling()}, {"submit": "20"}])
            for i in range(samples)
        ]
    )
    with web.attaching(), ProxyWatch(web) as proxy:
        log = eval_task(
            gaia(
                dataset_path=str(dataset),
                image=OFFLINE_BROWSER_TAG,
                browser=True,
                block_answer_sources=True,
            ),
            tmp_path,
            max_samples=samples,
        )
    peak = max(proxy.peaks)
    print(f"the proxy's memory at its highest: {peak >> 20} MiB; at rest near 70")  # pytest -s
    assert log.status == "success" and log.samples is not None, log.error
    assert len(log.samples) == samples and all(s.error is None for s in log.samples)
    assert '"up": 0' in proxy.log and '"down"' not in proxy.log, proxy.log[-3000:]
    assert len(web.attached) == 1 and 0 < peak < PEAK_BOUND, peak >> 20
    for i in range(BROWSING, samples):
        (sample,) = [s for s in log.samples if s.id == task_id(i)]
        said = [m.text for m in sample.messages if isinstance(m, ChatMessageTool)][0].split()
        assert said[:2] == ["curled", "ok"] and said[-2:] == ["bad", "0"], said
        assert int(said[2]) >= len(CURLS), said
    # every request that reached the stand-in is in the record once, in the sample that made it
    records = {str(s.id): from_store(s.store) or () for s in log.samples}
    recorded = Counter(
        _target(r.url)
        for found in records.values()
        for r in found
        if r.decision == "allowed" and (r.address is not None or r.error == UNANSWERED)
    )
    served = Counter((r["host"], r["path"]) for r in web.served())
    assert recorded == served, (recorded - served, served - recorded)
    assert all(records[task_id(i)] for i in range(samples)), "every sample has its own record"
