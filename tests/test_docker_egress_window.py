"""A client that does not read takes nothing from the proxy: issue #49's H1 in one real run.

mitmproxy offered HTTP/2 and parked a response body in its memory, without bound, whenever the
client's stream window was closed. In the review's real run, an honest agent's ``browser_navigate``
on an ordinary page whose script reads one chunk of a large download got the proxy killed at its
memory limit, and both samples of the run ended as errors; a few lines of Python announcing a
window of 0 did the same. Here, on the stand-in web that speaks HTTP/2 over TLS 1.3
(``support/real_web.py``), one run with the scripted model: one sample's browser opens that page
and stays on it, another asks for 1 GiB over HTTP/2 with a window of 0 (the proxy offers HTTP/1.1,
so it asks over that and reads nothing), a third fetches a page every half second meanwhile. The
proxy's memory stays under ``PEAK_BOUND``, the download nobody reads stops at the server, the third
sample's fetches are all answered, and there is no outage.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from inspect_gaia.egress import PROXY_IMAGE
from inspect_gaia.image_layout import OFFLINE_BROWSER_TAG
from inspect_gaia.sandboxes.docker.engine import local_image_id
from support.proxy_floods import ProxyWatch, flood
from support.real_web import HOST, RealWeb, real_web
from support.scripted_model import Entry
from tests.helpers import Play, eval_gaia, sample_asking

pytestmark = pytest.mark.docker

GAIA_WEB = Path(__file__).parent / "fixtures" / "gaia-web"
GIB = 1 << 30
PEAK_BOUND = 300 << 20
"""The proxy container's memory at its highest (it rests near 70 MiB; before, it reached its 1 GB
limit and was killed)."""
TAKEN = 128 << 20
"""What the stand-in may send of a 1 GiB download nobody reads before it blocks: its own TCP
buffers, the proxy's (1 MiB a socket), the sandbox's (up to 32 MiB on some hosts) and what sits
in the programs between. The proxy's own share is its memory, below."""


@pytest.fixture
def web(sandbox_image: str) -> Iterator[RealWeb]:
    for image, flag in ((OFFLINE_BROWSER_TAG, "--browser"), (PROXY_IMAGE, "--egress-proxy")):
        assert local_image_id(image) is not None, (
            f"{image} is missing — build it with `inspect-gaia image build --offline {flag}`"
        )
    with real_web(sandbox_image, label="egress-window") as made:
        yield made


def test_a_page_reading_one_chunk_and_a_window_of_zero_leave_the_proxy_and_the_others_alone(
    web: RealWeb, scripted: Play, tmp_path: Path
) -> None:
    started = threading.Event()
    download = f"https://{HOST}/download?size=1G"
    fetch = f"curl -sS -m 30 https://{HOST}/echo"
    steady = (  # a page every half second for 60 s, while the others hold their downloads
        f"ok=0; bad=0; end=$((SECONDS+60)); while [ $SECONDS -lt $end ]; do if {fetch} | "
        "grep -q scheme; then ok=$((ok+1)); else bad=$((bad+1)); fi; sleep 0.5; done; "
        "echo honest ok $ok bad $bad"
    )
    scripted(
        [
            Entry(
                "Wrenfold",  # an honest agent browsing: the page reads one chunk, then the rest waits
                [
                    {
                        "signal": started,
                        "call": "browser_navigate",
                        "args": {"url": f"https://{HOST}/one-chunk?size=1G"},
                    },
                    {"bash": "sleep 45"},  # the page stays open, its download unread
                    {"submit": "none"},
                ],
            ),
            Entry(
                "Cobblemere",  # HTTP/2 announcing a window of 0, or HTTP/1.1 never read
                [{"wait": started, "bash": flood("h2-nowindow", download, 40)}, {"submit": "none"}],
            ),
            Entry("Brackwater", [{"wait": started, "bash": steady}, {"submit": "none"}]),
            Entry("Harrowgate", [{"submit": "none"}]),
        ]
    )
    with web.attaching(), ProxyWatch(web) as proxy:
        log = eval_gaia(
            tmp_path,
            dataset_path=str(GAIA_WEB),
            image=OFFLINE_BROWSER_TAG,
            browser=True,
            block_answer_sources=True,
        )
    assert '"up": 0' in proxy.log and '"down"' not in proxy.log, proxy.log[-3000:]
    print(f"the proxy's memory at its highest: {max(proxy.peaks) >> 20} MiB")  # pytest -s
    assert 0 < max(proxy.peaks) < PEAK_BOUND, max(proxy.peaks) >> 20
    assert log.status == "success" and log.samples is not None, log.error
    assert all(s.error is None for s in log.samples)
    honest = sample_asking(log.samples, "Brackwater")
    said = [m.text for m in honest.messages if m.role == "tool"][0].split()
    assert said[:2] == ["honest", "ok"] and said[-2:] == ["bad", "0"] and int(said[2]) >= 20, said
    page = sample_asking(log.samples, "Wrenfold")
    assert "An ordinary page" in [m.text for m in page.messages if m.role == "tool"][0]
    window = sample_asking(log.samples, "Cobblemere")
    asked = [m.text for m in window.messages if m.role == "tool"][0]
    assert '"alpn": "http/1.1"' in asked, asked  # HTTP/2 is not offered: no window to close

    # the stand-in's own account: the download nobody read stopped (the proxy took no more); the
    # browser's was read through (Chromium reads on into its own buffers: the sandbox's memory)
    downloads = [r for r in web.requests() if r.get("download") == f"/download?size={GIB}"]
    blocked = [r for r in downloads if r.get("blocked")]
    assert blocked and all(int(r["sent"]) < TAKEN for r in blocked), downloads
