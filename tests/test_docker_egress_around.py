"""No way around the egress proxy: relays, odd ports, raw tunnels, TLS names, spellings servers
read alike, the host and private networks.

One sandbox sends each attempt straight to the proxy (a Python client in the sandbox, so every
byte is the test's) and prints what came back; the stand-in "internet" (``support/standins.py``)
logs everything that reached it, and nothing refused may be there. The stand-ins' own private
network is reachable only through the test-only allowance the fixture sets.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from inspect_ai.model import ChatMessageTool

from inspect_gaia.egress.urlrules import REFUSAL_MARKER
from support.answer_pages import (
    GAIA_LEAK,
    PELLBROOK,
    PELLBROOK_ID,
    WAIT_FOR_STANDINS,
    WEATHER,
    bridge_address,
    serve_pages,
)
from support.scripted_model import Entry
from support.standins import StandIns
from tests.helpers import Play, eval_gaia

pytestmark = pytest.mark.docker

LISTED = "/datasets/gaia-benchmark/GAIA/resolve/main/2023/validation/metadata.jsonl"

PROBE = r"""
import json, os, socket, ssl, sys
proxy = os.environ["HTTP_PROXY"].rsplit("/", 1)[-1].split(":")
PROXY = (proxy[0], int(proxy[1]))
HOST_PAGE, LISTED = sys.argv[1], sys.argv[2]

def request(target, host, method="GET", body=b"", extra=""):
    head = f"{method} {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n{extra}"
    if body:
        head += f"Content-Length: {len(body)}\r\n"
    return head.encode() + b"\r\n" + body

def exchange(data, connect=None, tls_name=None):
    out = b""
    try:
        s = socket.create_connection(PROXY, timeout=20)
        if connect:
            s.sendall(f"CONNECT {connect} HTTP/1.1\r\nHost: {connect}\r\n\r\n".encode())
            head = s.recv(65536)
            while b"\r\n\r\n" not in head:
                head += s.recv(65536)
            if b" 200 " not in head.split(b"\r\n")[0]:
                length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
                while len(head.split(b"\r\n\r\n", 1)[1]) < length:
                    head += s.recv(65536)
                return head
            if tls_name:
                context = ssl.create_default_context(cafile=os.environ["SSL_CERT_FILE"])
                s = context.wrap_socket(s, server_hostname=tls_name)
        try:
            s.sendall(data)
        except OSError:
            pass
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            out += chunk
    except OSError as ex:
        out += f"[{type(ex).__name__}: {ex}]".encode()
    return out

standin = exchange(request("http://weather.example/whoami", "weather.example"))
standin = standin.rsplit(b"\r\n\r\n", 1)[-1].decode()
cases = {
    "weather": exchange(request("http://weather.example/today.txt", "weather.example")),
    "archive": exchange(request("http://weather.example/web/2024/https://huggingface.co" + LISTED, "weather.example")),
    "archive-bare": exchange(request("http://weather.example/web/2024id_/huggingface.co" + LISTED, "weather.example")),
    "jina": exchange(request("http://weather.example/https://huggingface.co" + LISTED, "weather.example")),
    "fetch-query": exchange(request("http://weather.example/fetch?url=https%3A%2F%2Fhuggingface.co" + LISTED.replace("/", "%2F"), "weather.example")),
    "parameter": exchange(request("http://huggingface.co/datasets;v=1/gaia-benchmark/GAIA", "huggingface.co")),
    "backslash": exchange(request("http://huggingface.co/datasets\\gaia-benchmark\\GAIA", "huggingface.co")),
    "double-encoded": exchange(request("http://huggingface.co/x/%252e%252e/datasets/gaia-benchmark/GAIA", "huggingface.co")),
    "post-body": exchange(request("http://huggingface.co" + LISTED, "huggingface.co", "POST", bytes(1 << 20))),
    "connect-22": exchange(b"SSH-2.0-OpenSSH_9.2\r\n", connect="weather.example:22"),
    "raw-on-80": exchange(b"SSH-2.0-OpenSSH_9.2\r\n", connect="weather.example:80"),
    "absolute-in-tunnel": exchange(request("http://huggingface.co" + LISTED, "weather.example"), connect="weather.example:80"),
    "sni": exchange(request(LISTED, standin), connect=f"{standin}:443", tls_name="huggingface.co"),
    "host-page": exchange(request(HOST_PAGE, HOST_PAGE.split("/")[2])),
    "loopback": exchange(request("http://127.0.0.1:3128/", "127.0.0.1:3128")),
    "localhost": exchange(request("http://localhost/", "localhost")),
    "metadata-service": exchange(request("http://169.254.169.254/latest/", "169.254.169.254")),
}
print("STANDIN", standin)
for name, answer in cases.items():
    print("CASE", json.dumps([name, answer[:2000].decode("utf-8", "replace")]))
"""


def test_no_relay_port_tunnel_name_or_spelling_gets_around_the_proxy(
    sandbox_image: str, egress_image: str, internet: StandIns, scripted: Play, tmp_path: Path
) -> None:
    address = bridge_address()
    with serve_pages(address) as (port, host_seen), internet.attaching():
        host_page = f"http://{address}:{port}/today.txt"
        command = f"{WAIT_FOR_STANDINS}; python3 - {host_page} {LISTED} <<'PY'\n{PROBE}\nPY"
        scripted([Entry(PELLBROOK, [{"bash": command}, {"submit": "Nineteen Locks"}])])
        log = eval_gaia(
            tmp_path,
            dataset_path=str(GAIA_LEAK),
            image=sandbox_image,
            block_answer_sources=True,
            ids=PELLBROOK_ID,
        )
    assert log.status == "success" and log.samples is not None, log.error
    (sample,) = log.samples
    output = next(m.text for m in sample.messages if isinstance(m, ChatMessageTool))
    cases = dict(json.loads(line[5:]) for line in output.splitlines() if line.startswith("CASE "))
    assert WEATHER in cases.pop("weather"), output[-3000:]

    refused = ["archive", "archive-bare", "jina", "fetch-query", "parameter", "backslash"]
    refused += ["double-encoded", "absolute-in-tunnel", "sni"]
    for name in refused:
        assert cases[name].startswith("HTTP/1.1 403"), (name, cases[name])
        assert REFUSAL_MARKER in cases[name], (name, cases[name])
    # a refused request with a body: the same text, in mitmproxy's error page
    assert cases["post-body"].startswith("HTTP/1.1 502"), cases["post-body"]
    assert REFUSAL_MARKER in cases["post-body"], cases["post-body"]
    blocked = "inspect_gaia egress proxy does not allow this"
    for name in ("connect-22", "host-page", "loopback", "metadata-service"):
        assert cases[name].startswith("HTTP/1.1 403") and blocked in cases[name], (name, cases)
    assert f"{blocked}: CONNECT to port 22 (only 80 and 443)" in cases["connect-22"]
    # a name that resolves to loopback: refused after resolution, in the error page
    assert cases["localhost"].startswith("HTTP/1.1 502"), cases["localhost"]
    assert "resolves to no public address" in cases["localhost"], cases["localhost"]
    # a raw tunnel is closed before anything reaches the server
    assert cases["raw-on-80"] == "", cases["raw-on-80"]

    # nothing refused reached the stand-in or the host
    seen = internet.requests()
    assert {r.get("path") for r in seen} == {"/whoami", "/today.txt"}, seen
    assert host_seen == []

    # the proxy was told the host's addresses (every bridge's gateway, its own way out's, the
    # test network's) and may reach the test network alone
    (proxy,) = internet.attached
    args = internet.commands[proxy]
    deny = _option(args, "gaia_deny").split(",")
    assert address in deny and _network(internet.network, "Gateway") in deny, deny
    assert set(internet.gateways[proxy]) <= set(deny), (internet.gateways, deny)
    assert _option(args, "gaia_allow") == _network(internet.network, "Subnet")


def _option(command: list[str], name: str) -> str:
    return next(a for a in command if a.startswith(f"{name}=")).split("=", 1)[1]


def _network(network: str, field: str) -> str:
    found = "{{range .IPAM.Config}}{{." + field + "}}{{end}}"
    inspect = ["docker", "network", "inspect", network, "-f", found]
    return subprocess.run(inspect, capture_output=True, text=True, check=True).stdout.strip()
