"""The browser and the page reader behind the run's egress proxy (``-T block_answer_sources=true``).

The stand-in web is a container whose network aliases carry the sites' names and
huggingface.co's (``helpers_web``), reachable only through the run's proxy. gaia-web's four
questions are answered by browsing through it, as without the proxy; a known answer source is
refused over HTTP and over HTTPS (Chromium trusts the run's CA, so it shows the proxy's refusal
instead of a certificate error), also at the end of a redirect and through the reader, and the
sample is flagged.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from inspect_ai.log import EvalSample
from inspect_ai.model import ChatMessageTool

from inspect_gaia.egress import PROXY_IMAGE
from inspect_gaia.egress.urlrules import REFUSAL_MARKER
from inspect_gaia.egress.web_record import from_store
from inspect_gaia.image_layout import OFFLINE_BROWSER_TAG
from inspect_gaia.sandboxes.docker.engine import local_image_id
from support.web_pages import MIRROR_URL, web_agent
from support.web_standin import WebStandIn, mine, web_standin
from tests.helpers import Play, eval_gaia, metrics

pytestmark = pytest.mark.docker

GAIA_WEB = Path(__file__).parent / "fixtures" / "gaia-web"
SITES = ("wrenfold", "cobblemere", "brackwater", "harrowgate")


@pytest.fixture(scope="module")
def images() -> str:
    """The browser image and the proxy's; missing, the test fails (CI builds both)."""
    for image, flag in ((OFFLINE_BROWSER_TAG, "--browser"), (PROXY_IMAGE, "--egress-proxy")):
        assert local_image_id(image) is not None, (
            f"{image} is missing — build it with `inspect-gaia image build --offline {flag}`"
        )
    return OFFLINE_BROWSER_TAG


@pytest.fixture
def standin(images: str) -> Iterator[WebStandIn]:
    with web_standin(images) as made:
        yield made


def _tools(sample: EvalSample) -> list[ChatMessageTool]:
    return [m for m in sample.messages if isinstance(m, ChatMessageTool)]


def _target(url: str) -> str:
    """A URL's request target, as the stand-in logs it: path and query."""
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def _said(message: ChatMessageTool) -> str:
    return message.error.message if message.error else message.text


def test_browsing_through_the_proxy_refuses_answer_sources(
    images: str, standin: WebStandIn, scripted: Play, tmp_path: Path
) -> None:
    entries = web_agent({site: f"{site}.example" for site in SITES})
    https_mirror = MIRROR_URL.replace("http://", "https://")
    refused = [
        {"call": "browser_navigate", "args": {"url": MIRROR_URL}},
        {"call": "browser_navigate", "args": {"url": https_mirror}},
        {"call": "browser_navigate", "args": {"url": "http://wrenfold.example/to-mirror"}},
        {"call": "fetch", "args": {"url": MIRROR_URL}},
    ]
    entries[0] = type(entries[0])(entries[0].match, [*refused, *entries[0].steps])
    scripted(entries)
    with standin.attaching():
        log = eval_gaia(
            tmp_path,
            dataset_path=str(GAIA_WEB),
            image=images,
            browser=True,
            web_reader=True,
            block_answer_sources=True,
        )
    assert log.status == "success" and log.samples is not None
    assert len(standin.attached) == 1, "one proxy for the run"
    # the four questions are answered by browsing through the proxy
    assert metrics(log)["accuracy"] == 1.0

    wrenfold = next(s for s in log.samples if "Wrenfold" in str(s.input))
    http, https, redirect, reader = (_said(m) for m in _tools(wrenfold)[:4])
    assert f"{REFUSAL_MARKER} {MIRROR_URL}" in http, http
    # over HTTPS: Chromium trusts the run's CA (no certificate error), and shows the refusal
    assert f"{REFUSAL_MARKER} {https_mirror}" in https, https
    assert "ERR_CERT" not in https
    assert REFUSAL_MARKER in redirect and "Page URL: " + MIRROR_URL in redirect
    assert REFUSAL_MARKER in reader and "status code 403" in reader
    flags = ((wrenfold.scores or {})["gaia_scorer"].metadata or {}).get("contamination", [])
    assert {"refused"} <= {f["kind"] for f in flags}
    others = [s for s in log.samples if s is not wrenfold]
    assert all(
        not ((s.scores or {})["gaia_scorer"].metadata or {}).get("contamination") for s in others
    )

    # what reached the stand-in came through the one proxy, and no refused page did
    seen = standin.requests()
    assert len({r["client"] for r in seen}) == 1, seen
    assert not any("gaia-benchmark" in r["path"] for r in seen)
    assert {"/wrenfold/bulletin", "/harrowgate/report.pdf"} <= {r["path"] for r in seen}
    assert log.eval.metadata is not None
    assert log.eval.metadata["gaia"]["answer_sources"]["blocked"] is True

    # the browser's and the reader's requests are in the record: each that reached the stand-in
    # once, in its own sample; the refused ones as refused, each in Wrenfold's
    records = {str(s.id): from_store(s.store) or () for s in log.samples}
    answered = Counter(
        _target(r.url)
        for found in records.values()
        for r in found
        if r.decision == "allowed" and r.status is not None
    )
    assert answered == Counter(r["path"] for r in seen)
    refusals = [r.url for r in records[str(wrenfold.id)] if r.decision == "refused"]
    assert {MIRROR_URL, https_mirror} <= set(refusals) and len(refusals) >= 4, refusals
    assert all(r.decision != "refused" for s in others for r in records[str(s.id)])
    assert mine() == [], "the run's sandboxes, proxy and networks left with it"
