"""The stand-in web (``support/real_web.py``) tested itself: curl and Chromium, HTTP/2 and HTTP/1.1.

From a container beside it (its CA trusted) and from one behind a run's egress proxy (the run's
CA trusted, the proxy verifying the stand-in's certificate against the test CA): the protocol ALPN
chose as the client and the server each saw it, TLS 1.3, content codings, redirect chains,
cookies, chunking (never timing), a 1 GiB download, the search echo, and pages whose scripts fetch.
One stand-in, one client of each kind and one proxy serve the whole module.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from inspect_gaia.egress import PROXY_IMAGE
from inspect_gaia.egress.urlrules import REFUSAL_MARKER
from inspect_gaia.image_layout import OFFLINE_BROWSER_TAG
from inspect_gaia.sandboxes.docker.egress import Egress
from inspect_gaia.sandboxes.docker.engine import local_image_id
from support.real_web import ELSEWHERE, HOST, LISTED_URL, SEARCH, RealWeb, proxied, real_web
from support.real_web_browser import browse, seen

pytestmark = pytest.mark.docker

Run = Callable[[str], str]
GIB = 1 << 30


@pytest.fixture(scope="module")
def web(sandbox_image: str) -> Iterator[RealWeb]:
    with real_web(sandbox_image, label="real-web-self") as made:
        yield made


@pytest.fixture(scope="module")
def browser_image() -> str:
    for image, flag in ((OFFLINE_BROWSER_TAG, "--browser"), (PROXY_IMAGE, "--egress-proxy")):
        assert local_image_id(image) is not None, (
            f"{image} is missing — build it with `inspect-gaia image build --offline {flag}`"
        )
    return OFFLINE_BROWSER_TAG


@pytest.fixture(scope="module")
def beside(web: RealWeb, browser_image: str) -> Iterator[Run]:
    """A browser-image container on the stand-in's network (curl and Chromium), no proxy."""
    with web.client(browser_image) as run:
        yield run


@pytest.fixture(scope="module")
def behind(web: RealWeb, browser_image: str) -> Iterator[tuple[Egress, Run]]:
    """A run's proxy on the stand-in, and a browser-image container behind it, as a sandbox."""
    with proxied(web, browser_image) as made:
        yield made


def _served(web: RealWeb, marker: str) -> list[dict[str, str]]:
    return [r for r in web.served() if marker in r["path"]]


def _head(output: str) -> tuple[list[str], dict[str, str]]:
    """Status lines and the last response's headers (lower-case names) of ``curl -D-``."""
    statuses: list[str] = []
    headers: dict[str, str] = {}
    for line in output.splitlines():
        if line.startswith("HTTP/"):
            statuses.append(line.strip())
            headers = {}
        elif ":" in line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    return statuses, headers


def test_alpn_chooses_http2_or_http11_over_tls13_and_port_80_stays_http11(
    web: RealWeb, beside: Run
) -> None:
    url = web.url("/echo?alpn")
    h2 = beside(f"curl -sS -v --http2 -o /dev/null -w '%{{http_version}}' '{url}=h2' 2>&1")
    assert "SSL connection using TLSv1.3" in h2 and "ALPN: server accepted h2" in h2, h2
    assert h2.rstrip().endswith("2")
    h1 = beside(f"curl -sS -v --http1.1 -o /dev/null -w '%{{http_version}}' '{url}=h1' 2>&1")
    assert "ALPN: server accepted http/1.1" in h1 and h1.rstrip().endswith("1.1"), h1
    # port 80: HTTP/1.1 even when the client offers an h2c upgrade (the web's servers ignore it)
    plain = json.loads(beside(f"curl -sS --http2 '{web.url('/echo?alpn=plain', scheme='http')}'"))
    assert (plain["http"], plain["scheme"], plain["headers"]["upgrade"]) == ("1.1", "http", "h2c")
    # TLS 1.2 alone is refused: the stand-in speaks TLS 1.3
    old = beside(f"curl -sS --tls-max 1.2 -o /dev/null '{url}=tls12' 2>&1; echo exit $?")
    assert "exit 35" in old, old
    seen = {r["path"]: (r["http"], r["scheme"]) for r in _served(web, "alpn=")}
    assert seen == {
        "/echo?alpn=h2": ("2", "https"),
        "/echo?alpn=h1": ("1.1", "https"),
        "/echo?alpn=plain": ("1.1", "http"),
    }
    assert {"tls": HOST} in web.requests(), "each handshake is logged with its server name"


def test_content_codings_gzip_brotli_and_negotiated(web: RealWeb, beside: Run) -> None:
    def fetch(path: str, *options: str) -> tuple[dict[str, str], str]:
        out = beside(
            f"curl -sS --http2 -D /tmp/h {' '.join(options)} '{web.url(path)}' | sha256sum"
        )
        return _head(beside("cat /tmp/h"))[1], out.split()[0]

    plain_headers, plain = fetch("/encoded/auto")
    assert "content-encoding" not in plain_headers, "no Accept-Encoding: identity"
    for path, options, coding in (
        ("/encoded/auto", ["--compressed"], "br"),  # curl accepts br and gzip: brotli first
        ("/encoded/auto", ["--compressed", "-H 'Accept-Encoding: gzip'"], "gzip"),
        ("/encoded/gzip", ["--compressed"], "gzip"),
        ("/encoded/br", ["--compressed"], "br"),
    ):
        headers, digest = fetch(path, *options)
        assert headers["content-encoding"] == coding and headers["vary"] == "accept-encoding"
        assert int(headers["content-length"]) < 4000, "coded, the prose shrinks"
        if path == "/encoded/auto":
            assert digest == plain, f"{coding} decodes to the identity body"
    # undecoded, the bytes on the wire are the coding's: gzip's magic, brotli's are not HTML
    raw = beside(f"curl -sS '{web.url('/encoded/gzip')}' | head -c 2 | od -An -tx1")
    assert raw.split() == ["1f", "8b"]


def test_redirects_relative_absolute_cross_host_chain_and_listed(web: RealWeb, beside: Run) -> None:
    for kind, status, host in (
        ("relative", "302", HOST),
        ("root-relative", "302", HOST),
        ("absolute", "301", HOST),
        ("cross-host", "307", ELSEWHERE),
    ):
        out = beside(f"curl -sS -L -D- -o /dev/null '{web.url('/redirect/' + kind)}'")
        statuses, _ = _head(out)
        assert [s.split()[1] for s in statuses] == [status, "200"], out
        landed = beside(f"curl -sS -L '{web.url('/redirect/' + kind)}'")
        assert f"Landed on {host} from {kind}" in landed
    chain = beside(
        f"curl -sS -L -o /dev/null -w '%{{num_redirects}} %{{url_effective}}' "
        f"'{web.url('/redirect/chain?n=3')}'"
    )
    assert chain == f"3 https://{HOST}/redirect/landed?from=chain"
    # beside the proxy nothing refuses: the listed source's stand-in answers
    listed = beside(f"curl -sS -L -w '\\n%{{url_effective}}' '{web.url('/redirect/listed')}'")
    assert listed.endswith(LISTED_URL) and "gaia-benchmark/GAIA" in listed


def test_cookies_are_set_on_a_redirect_and_echoed(web: RealWeb, beside: Run) -> None:
    out = beside(
        f"rm -f /tmp/jar; curl -sS -L -c /tmp/jar -b /tmp/jar -D /tmp/h "
        f"'{web.url('/cookies/set?flavour=oat&batch=7')}'"
    )
    assert json.loads(out) == {"cookies": {"flavour": "oat", "batch": "7"}}
    set_cookies = [line for line in beside("cat /tmp/h").splitlines() if "set-cookie" in line]
    assert len(set_cookies) == 2 and all("Secure" in line for line in set_cookies)
    again = beside(f"curl -sS -b /tmp/jar '{web.url('/cookies', host=HOST)}'")
    assert json.loads(again)["cookies"] == {"flavour": "oat", "batch": "7"}
    other = beside(f"curl -sS -b /tmp/jar '{web.url('/cookies', host=ELSEWHERE)}'")
    assert json.loads(other)["cookies"] == {}, "a cookie stays with its host"


def _chunks(raw: bytes) -> list[int]:
    """The chunk sizes of an HTTP/1.1 chunked body as ``curl --raw`` gives it (the last is 0)."""
    sizes, rest = [], raw
    while rest:
        line, _, rest = rest.partition(b"\r\n")
        size = int(line, 16)
        sizes.append(size)
        if size == 0:
            break
        assert rest[size : size + 2] == b"\r\n"
        rest = rest[size + 2 :]
    return sizes


def _raw(run: Run, url: str) -> bytes:
    """``curl --http1.1 --raw``'s bytes (through base64: ``run`` reads text)."""
    return base64.b64decode(run(f"curl -sS --http1.1 --raw '{url}' | base64 -w0"))


def test_chunked_and_slow_bodies_come_in_pieces(web: RealWeb, beside: Run) -> None:
    chunked = web.url("/chunked?count=5&size=100", scheme="http")
    _, headers = _head(beside(f"curl -sS --http1.1 -D- -o /dev/null '{chunked}'"))
    assert headers["transfer-encoding"] == "chunked" and "content-length" not in headers
    assert _chunks(_raw(beside, chunked)) == [100] * 5 + [0]
    slow = web.url("/slow?size=512&rate=4096&chunk=64")
    assert _chunks(_raw(beside, slow)) == [64] * 8 + [0]
    # over HTTP/2: the same bytes, no length
    h2 = beside(f"curl -sS --http2 -D /tmp/h '{slow}' | wc -c")
    assert int(h2) == 512 and "content-length" not in _head(beside("cat /tmp/h"))[1]


def test_a_large_download_is_generated_and_streamed(web: RealWeb, beside: Run) -> None:
    out = beside(
        "curl -sS --http2 -o /dev/null -w '%{size_download} %{http_version}' "
        f"'{web.url('/download?size=256M')}'"
    )
    assert out == f"{256 << 20} 2"
    head = _head(beside(f"curl -sS -I '{web.url('/download?size=1G')}'"))[1]
    assert head["content-length"] == str(GIB), "1 GiB (or 64) is only a query away"
    endless = beside(
        f"curl -sS -D /tmp/h '{web.url('/download?size=3M&length=no')}' | sha256sum; cat /tmp/h"
    )
    expected = hashlib.sha256((bytes(range(256)) * 256 * 48)[: 3 << 20]).hexdigest()
    assert endless.split()[0] == expected and "content-length" not in endless.lower()
    ends = [r for r in web.requests() if r.get("download", "").startswith("/download?size=256M")]
    assert ends[-1] == {"download": "/download?size=256M", "sent": 256 << 20, "done": True}


def test_the_search_page_echoes_its_encoded_query(web: RealWeb, beside: Run) -> None:
    query = 'Lantern Guild & "co" 1742'
    encoded = "Lantern+Guild+%26+%22co%22+1742"
    page = beside(f"curl -sS '{web.url('/search?q=' + encoded, host=SEARCH)}'")
    assert "<h1>Results for Lantern Guild &amp; &quot;co&quot; 1742</h1>" in page
    assert f"value='{query.replace('&', '&amp;').replace(chr(34), '&quot;')}'" in page
    assert f"/search?q={encoded}&amp;start=10" in page
    assert _served(web, "/search?q=")[-1]["host"] == SEARCH


def test_chromium_speaks_http2_and_http11_and_runs_the_pages_scripts(
    web: RealWeb, beside: Run
) -> None:
    redirect, plain, drawn, one = seen(
        beside(
            browse(
                web.url("/redirect/cross-host?chromium"),
                web.url("/?chromium-plain", scheme="http"),
                web.url("/fetches"),
                # the honest page of issue #49's H1: one chunk read, the rest left; beside the
                # proxy the stand-in waits on HTTP/2's window and holds nothing
                web.url("/one-chunk?size=1G"),
            )
        )
    )
    assert redirect["chain"] == [
        web.url("/redirect/cross-host?chromium"),
        web.url("/redirect/landed?from=cross-host", host=ELSEWHERE),
    ]
    assert redirect["protocol"] == "protocol: h2" and redirect["tls"]["protocol"] == "TLS 1.3"
    assert redirect["tls"]["issuer"] == "inspect-gaia stand-in web test CA"
    assert plain["protocol"] == "protocol: http/1.1" and not plain["tls"]
    assert drawn["status_text"] == "drawn 3 items" and "The lantern guild" in drawn["text"]
    assert re.fullmatch(r"read one chunk of \d+ bytes", one["status_text"]), one
    assert _served(web, "/download?size=1073741824")[-1]["http"] == "2"
    (h1,) = seen(beside(browse(web.url("/?chromium-h1"), http1=True)))
    assert h1["protocol"] == "protocol: http/1.1" and h1["tls"]["protocol"] == "TLS 1.3"
    assert {r["path"]: r["http"] for r in _served(web, "?chromium")} == {
        "/redirect/cross-host?chromium": "2",
        "/?chromium-plain": "1.1",
        "/?chromium-h1": "1.1",
    }


def _addresses(container: str) -> set[str]:
    from support.standins import docker

    return set(
        docker(
            "inspect", container, "-f", "{{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}"
        ).split()
    )


def test_through_the_runs_proxy_curl_and_chromium_keep_their_protocol_brotli_and_refusals(
    web: RealWeb, behind: tuple[Egress, Run]
) -> None:
    """What the proxy offers its clients is its own choice (HTTP/1.1 since issue #49 item 1): each
    client is held to what was negotiated, and forcing HTTP/1.1 always works."""
    proxy, run = behind
    out = run(
        f"curl -sS -v --http2 -o /dev/null -w '%{{http_version}}' '{web.url('/echo?via=curl')}' 2>&1"
    )
    offered = "2" if "ALPN: server accepted h2" in out else "1.1"
    assert "SSL connection using TLSv1.3" in out and out.rstrip().endswith(offered), out
    assert "issuer: CN=mitmproxy" in out, "the run's CA re-signs; the proxy verified the stand-in"
    (upstream,) = _served(web, "via=curl")
    assert upstream["client"] in _addresses(proxy.proxy) and upstream["scheme"] == "https"
    coded = run(f"curl -sS --compressed -D- -o /dev/null '{web.url('/encoded/auto')}'")
    assert _head(coded)[1]["content-encoding"] == "br", "brotli passes through"
    before = len(_served(web, "/datasets/gaia-benchmark"))
    refused = run(f"curl -sS -L '{web.url('/redirect/listed')}'")
    assert f"{REFUSAL_MARKER} {LISTED_URL}" in refused
    chromium = "h2" if offered == "2" else "http/1.1"
    for http1, protocol in ((False, chromium), (True, "http/1.1")):
        pages = [web.url(f"/fetches?proxied={protocol}")]
        if not http1:
            pages.append(web.url("/redirect/listed"))
        drawn, *others = seen(run(browse(*pages, proxy=True, http1=http1)))
        assert drawn["protocol"] == f"protocol: {protocol}", drawn
        assert drawn["tls"]["issuer"] == "mitmproxy" and drawn["status_text"] == "drawn 3 items"
        if others:
            (listed,) = others
    assert listed["status"] == 403 and listed["chain"][-1] == LISTED_URL
    assert REFUSAL_MARKER in listed["text"]
    after = _served(web, "/datasets/gaia-benchmark")
    assert len(after) == before, "through the proxy the listed source was never reached"
    assert proxy.watch is not None and proxy.watch.outages == []


def _peak(proxy: Egress) -> int:
    """The proxy container's highest memory use so far (its cgroup's, v1 or v2), in bytes."""
    from support.standins import docker

    return int(
        docker(
            *("exec", proxy.proxy, "sh", "-c"),
            "cat /sys/fs/cgroup/memory.peak 2>/dev/null"
            " || cat /sys/fs/cgroup/memory/memory.max_usage_in_bytes",
        )
    )


def _download_settled(web: RealWeb, target: str, limit: float = 180.0) -> dict[str, Any]:
    """The stand-in's line for ``target`` once the download is done, or blocked (the client's
    proxy takes no more): how much the proxy took in from it."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        lines = [r for r in web.requests() if r.get("download") == target]
        if lines and ("done" in lines[-1] or lines[-1].get("blocked")):
            return lines[-1]
        time.sleep(0.5)
    raise AssertionError(f"the stand-in's {target} neither ended nor blocked in {limit:.0f} s")


PEAK_BOUND = 256 << 20
"""What the proxy may hold while a browser sits on a page that reads one chunk of 512 MiB."""


def test_a_browser_left_on_a_page_reading_one_chunk_keeps_the_proxy_small(
    web: RealWeb, behind: tuple[Egress, Run]
) -> None:
    proxy, run = behind
    page = browse(web.url("/one-chunk?size=512M"), proxy=True, stay_until="/tmp/leave")
    run(f"rm -f /tmp/leave /tmp/one.json; ({page}) >/tmp/one.json 2>/tmp/one.err &")
    taken = _download_settled(web, f"/download?size={512 << 20}")
    peak = _peak(proxy)
    run("touch /tmp/leave; for i in $(seq 600); do [ -s /tmp/one.json ] && break; sleep 0.1; done")
    (one,) = seen(run("cat /tmp/one.json"))
    assert one["status_text"].startswith("read one chunk"), one
    assert proxy.watch is not None and proxy.watch.outages == []
    assert peak < PEAK_BOUND, f"the proxy reached {peak >> 20} MiB, the stand-in sent it {taken}"
