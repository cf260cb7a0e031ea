"""The probe's web routes: each listed answer source asked for every way a sandbox can ask.

Runs elsewhere: in the sample's sandbox, beside ``inside.py``; standard library only (``shipped``).

Each route takes the probe's configuration (``inside.Config``) and returns its findings, one per
URL tried: what answered (the proxy's refusal, the source itself, nothing) and the start of the
body, bounded. A route never decides whether a body holds an answer (the host does, in
``probe/scorer.py``); it says only how far the request got: ``refused`` (the run's proxy said no:
its body starts with one of the config's ``refusals``), ``unreachable`` (no answer at all: no
route, no name, a timeout, the proxy's 502), ``open`` (a listed source answered, through whatever
was in the way) or ``reached`` (an open page answered, as it should).
"""

from __future__ import annotations

import base64
import concurrent.futures
import json
import os
import shutil
import socket
import ssl
import subprocess
import tempfile
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import quote, urlsplit

Finding = dict[str, str]
TEXT = 2000
"""Characters of a body kept in a finding (the host scans them for answers)."""
TIMEOUT = 20
"""Seconds one request may take (a TLS handshake through a busy proxy on a loaded host: seconds)."""
BROWSER_TIMEOUT = 60
"""Seconds one page may take in the browser: Chromium's start alone takes seconds on a busy host."""
GATEWAY_ERRORS = (502, 503, 504)
PARALLEL = 8
"""Requests a route has in flight at once (the browser and the page reader: one)."""
"""A proxy's way of saying it could not reach the server: nothing answered."""


def targets(config: dict[str, Any], *, every: bool = False) -> Iterator[dict[str, Any]]:
    """The URLs a route tries: the first of each source (``every``: each one), the open pages."""
    for target in config["targets"]:
        if every or target.get("first") or target["kind"] == "open":
            yield target


def outcome(config: dict[str, Any], kind: str, status: int | None, body: str) -> str:
    """How far a request got, from what came back (the module docstring's outcomes)."""
    if any(marker in body for marker in config["refusals"]):
        return "refused"
    if status is None or status in GATEWAY_ERRORS:
        return "unreachable"
    return "open" if kind == "source" else "reached"


def finding(
    config: dict[str, Any], target: dict[str, Any], where: str, got: tuple[int | None, str]
) -> Finding:
    """One URL's finding: where, how far it got, the status and the start of the body."""
    status, body = got
    return {
        "where": where,
        "outcome": outcome(config, target["kind"], status, body),
        "source": target.get("name", ""),
        "text": (f"[{status}] " if status is not None else "") + body[:TEXT],
    }


def curl(url: str, *extra: str) -> tuple[int | None, str]:
    """``curl`` through the sandbox's own settings (its proxy variables); status and body."""
    if shutil.which("curl") is None:
        return None, "no curl in this image"
    command = ["curl", "-sS", "-m", str(TIMEOUT), "-o", "-", "-w", "\n%{http_code}", *extra, url]
    try:
        run = subprocess.run(command, capture_output=True, timeout=TIMEOUT + 5)
    except subprocess.TimeoutExpired:
        return None, "timed out"
    text = run.stdout.decode("utf-8", "replace")
    body, _, code = text.rpartition("\n")
    status = int(code) if code.isdigit() and code != "000" else None
    if status is None:
        return None, (run.stderr.decode("utf-8", "replace").strip() or body)[:TEXT]
    return status, body[: TEXT * 2]


def web_curl_https(config: dict[str, Any]) -> list[Finding]:
    """Every listed source's URL over HTTPS with curl, through the sandbox's proxy if any."""
    return _each(config, lambda t: curl(t["url"]), every=True)


def web_curl_http(config: dict[str, Any]) -> list[Finding]:
    """The same over plain HTTP (the proxy judges a request it can read whole)."""
    return _each(config, lambda t: curl(_scheme(t["url"], "http")))


def web_urllib(config: dict[str, Any]) -> list[Finding]:
    """Python's ``urllib`` (which reads the proxy variables itself)."""

    def fetch(target: dict[str, Any]) -> tuple[int | None, str]:
        try:
            with urllib.request.urlopen(target["url"], timeout=TIMEOUT) as answer:
                return answer.status, answer.read(TEXT * 2).decode("utf-8", "replace")
        except urllib.error.HTTPError as ex:
            return ex.code, ex.read(TEXT * 2).decode("utf-8", "replace")
        except Exception as ex:  # any failure to get an answer is the finding
            return None, f"{type(ex).__name__}: {ex}"[:TEXT]

    return _each(config, fetch)


def web_direct(config: dict[str, Any]) -> list[Finding]:
    """Curl told to ignore the proxy variables: straight to the source, by its name."""
    return _each(config, lambda t: curl(t["url"], "--noproxy", "*"))


def web_connect(config: dict[str, Any]) -> list[Finding]:
    """A raw tunnel: ``CONNECT host:443`` to the proxy, TLS inside, then a GET.

    Without a proxy: a socket to the source's port 80, and a GET written by hand.
    """
    return _each(config, _tunnel)


def web_relay(config: dict[str, Any]) -> list[Finding]:
    """Each source through each relay (a URL that fetches another URL for its caller)."""
    return _wrapped(config, "relays", lambda url: curl(url))


def web_redirect(config: dict[str, Any]) -> list[Finding]:
    """Each source behind each redirect (a URL that answers "go there"), followed by curl."""
    return _wrapped(config, "redirects", lambda url: curl(url, "-L", "--max-redirs", "3"))


def web_encodings(config: dict[str, Any]) -> list[Finding]:
    """Each source spelled oddly: case, a trailing dot, percent-encoded, doubled, a port, a user."""
    tried = [
        (target, url)
        for target in targets(config)
        if target["kind"] == "source"
        for url in _spellings(target["url"])
    ]
    return _tried(config, tried, lambda t, url: curl(url, "--path-as-is"))


def web_browser(config: dict[str, Any]) -> list[Finding] | None:
    """The image's Chromium, with the harness's arguments and the sandbox's proxy."""
    browser = config.get("browser")
    if not browser or not os.path.exists(browser["chromium"]):
        return None
    # beside the program: the filesystem walk leaves the probe's own files alone
    home = tempfile.mkdtemp(prefix="browser.", dir=os.path.dirname(os.path.abspath(__file__)))
    nss = os.path.join(home, ".pki", "nssdb")
    os.makedirs(nss)
    if os.path.exists(browser["ca"]) and shutil.which("certutil"):
        for args in (
            ["-N", "--empty-password"],
            ["-A", "-t", "C,,", "-n", "ca", "-i", browser["ca"]],
        ):
            subprocess.run(["certutil", "-d", f"sql:{nss}", *args], capture_output=True)
    proxy = os.environ.get("HTTPS_PROXY") or os.environ.get("https_proxy")
    flags = ["--headless", "--no-sandbox", *browser["args"], f"--user-data-dir={home}/profile"]
    flags += [f"--proxy-server={proxy}"] if proxy else []

    def fetch(target: dict[str, Any]) -> tuple[int | None, str]:
        command = [browser["chromium"], *flags, "--dump-dom", target["url"]]
        try:
            run = subprocess.run(
                command,
                capture_output=True,
                timeout=BROWSER_TIMEOUT,
                env={**os.environ, "HOME": home},
            )
        except subprocess.TimeoutExpired:
            return None, "timed out"
        dom = run.stdout.decode("utf-8", "replace")
        # an error page (no route, no name) is Chromium's own: its DOM names the error
        if "neterror" in dom or not dom.strip() or "ERR_" in dom[: TEXT * 4]:
            return None, dom[:TEXT]
        return 200, dom[: TEXT * 2]

    return _each(config, fetch, parallel=1)


def web_reader(config: dict[str, Any]) -> list[Finding] | None:
    """The image's page reader (mcp-server-fetch), spoken to over MCP as the harness does."""
    reader = config.get("reader")
    if not reader or not os.path.isdir(os.path.join(reader["dir"], "mcp_server_fetch")):
        return None
    env = {**os.environ, "PYTHONPATH": reader["dir"]}
    command = ["python3", "-m", "mcp_server_fetch", "--allow-private-ips"]
    server = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
    )
    try:
        _mcp(
            server,
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "gaia-probe", "version": "1"},
            },
        )
        _mcp(server, "notifications/initialized", None)

        def fetch(target: dict[str, Any]) -> tuple[int | None, str]:
            answer = _mcp(
                server, "tools/call", {"name": "fetch", "arguments": {"url": target["url"]}}
            )
            result = answer.get("result") or {}
            text = " ".join(str(c.get("text", "")) for c in result.get("content") or [])
            if result.get("isError") or not text:
                status = 403 if " 403" in text else None
                return status, text or json.dumps(answer)[:TEXT]
            return 200, text

        found = _each(config, fetch, parallel=1)
    finally:
        server.kill()
    for item in found:  # the reader shows a 403's status, never its body: the proxy's refusal
        if item["text"].startswith("[403]") and item["outcome"] in ("open", "reached"):
            item["outcome"] = "refused"
            item["text"] += " (a 403 with no body shown: the proxy's refusal, or the source's)"
    return found


def web_node(config: dict[str, Any]) -> list[Finding] | None:
    """Node.js's ``fetch``, the agents' and the browser's runtime.

    It reads no proxy variable: it goes straight to the source unless the network stops it.
    """
    if shutil.which("node") is None:
        return None
    script = (
        f"fetch(process.argv[1],{{signal:AbortSignal.timeout({TIMEOUT * 1000})}}).then(async r=>"
        f"console.log(r.status+'\\n'+(await r.text()).slice(0,{TEXT * 2})))"
        ".catch(e=>console.log('0\\n'+e+' '+(e.cause||'')))"
    )

    def fetch(target: dict[str, Any]) -> tuple[int | None, str]:
        try:
            run = subprocess.run(
                ["node", "-e", script, target["url"]], capture_output=True, timeout=TIMEOUT + 5
            )
        except subprocess.TimeoutExpired:
            return None, "timed out"
        code, _, body = run.stdout.decode("utf-8", "replace").partition("\n")
        return (int(code) if code.strip().isdigit() and code.strip() != "0" else None), body

    return _each(config, fetch)


# -- helpers ---------------------------------------------------------------------------------------


def _each(
    config: dict[str, Any],
    fetch: Callable[[dict[str, Any]], tuple[int | None, str]],
    *,
    every: bool = False,
    parallel: int = PARALLEL,
) -> list[Finding]:
    tried = [(t, t["url"]) for t in targets(config, every=every)]
    return _tried(config, tried, lambda t, url: fetch(t), parallel)


def _wrapped(
    config: dict[str, Any], kind: str, fetch: Callable[[str], tuple[int | None, str]]
) -> list[Finding]:
    tried = [
        (target, template.replace("{url}", target["url"]))
        for template in config[kind]
        for target in targets(config)
        if target["kind"] == "source"
    ]
    return _tried(config, tried, lambda t, url: fetch(url))


def _tried(
    config: dict[str, Any],
    tried: list[tuple[dict[str, Any], str]],
    fetch: Callable[[dict[str, Any], str], tuple[int | None, str]],
    parallel: int = PARALLEL,
) -> list[Finding]:
    """Each ``(target, url)`` fetched, ``parallel`` at a time; findings in the order given."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=parallel) as pool:
        got = list(pool.map(lambda pair: fetch(*pair), tried))
    return [finding(config, t, url, answer) for (t, url), answer in zip(tried, got, strict=True)]


def _scheme(url: str, scheme: str) -> str:
    return scheme + url[url.index(":") :]


def _spellings(url: str) -> list[str]:
    """Ways to write ``url`` that a careless rule would not read as the same page."""
    parts = urlsplit(url)
    host, path = parts.hostname or "", parts.path or "/"
    rest = parts.path + (f"?{parts.query}" if parts.query else "")
    encoded = "".join(f"%{ord(c):02X}" if c.isalpha() else c for c in path)
    doubled = "".join(f"%25{ord(c):02X}" if c.isalpha() else c for c in path)
    return [
        f"{parts.scheme}://{host.upper()}{rest}",
        f"{parts.scheme}://{host}.{rest}",
        f"{parts.scheme}://{host}{encoded}",
        f"{parts.scheme}://{host}{doubled}",
        f"{parts.scheme}://{host}:{443 if parts.scheme == 'https' else 80}{rest}",
        f"{parts.scheme}://probe@{host}{rest}",
        f"{parts.scheme}://{host}/.{path.replace('/', '//', 1)}",
        f"{parts.scheme}://{host}{quote(path, safe='/')}%3F",
    ]


def _tunnel(target: dict[str, Any]) -> tuple[int | None, str]:
    parts = urlsplit(target["url"])
    host, path = (
        parts.hostname or "",
        (parts.path or "/") + (f"?{parts.query}" if parts.query else ""),
    )
    request = f"GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode()
    proxy = os.environ.get("HTTPS_PROXY") or os.environ.get("https_proxy")
    try:
        if proxy:
            where = urlsplit(proxy)
            sock = socket.create_connection((where.hostname, where.port or 80), timeout=TIMEOUT)
            sock.sendall(f"CONNECT {host}:443 HTTP/1.1\r\nHost: {host}:443\r\n\r\n".encode())
            head = receive(sock, 4096)
            if not head.startswith(b"HTTP/1.1 200") and not head.startswith(b"HTTP/1.0 200"):
                return _status(head), head.decode("utf-8", "replace")
            context = ssl.create_default_context()
            context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
            sock = context.wrap_socket(sock, server_hostname=host)
        else:
            sock = socket.create_connection((host, 80), timeout=TIMEOUT)
        sock.sendall(request)
        answer = receive(sock, TEXT * 4)
    except Exception as ex:  # no way through is the finding
        return None, f"{type(ex).__name__}: {ex}"[:TEXT]
    return _status(answer), answer.decode("utf-8", "replace")


def receive(sock: socket.socket, limit: int) -> bytes:
    """What ``sock`` sends until it closes, stalls or reaches ``limit`` bytes."""
    data = b""
    try:
        while len(data) < limit:
            chunk = sock.recv(limit - len(data))
            if not chunk:
                break
            data += chunk
    except (OSError, ssl.SSLError):
        pass
    return data


def _status(head: bytes) -> int | None:
    words = head.split(b"\r\n", 1)[0].split()
    return int(words[1]) if len(words) > 1 and words[1].isdigit() else None


def _mcp(server: subprocess.Popen[bytes], method: str, params: Any) -> dict[str, Any]:
    assert server.stdin is not None and server.stdout is not None
    notification = method.startswith("notifications/")
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    if not notification:
        message["id"] = base64.b32encode(os.urandom(5)).decode()
    server.stdin.write(json.dumps(message).encode() + b"\n")
    server.stdin.flush()
    if notification:
        return {}
    while True:  # the answer to this request (notifications and logs in between are skipped)
        line = server.stdout.readline()
        if not line:
            return {"error": "the page reader ended"}
        try:
            answer = json.loads(line)
        except ValueError:
            continue
        if isinstance(answer, dict) and answer.get("id") == message["id"]:
            return answer
