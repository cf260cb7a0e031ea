"""A replay's proxy, started by the provider as a run starts it, answering real clients.

Reliability review round 6, M5 and item 1: a hostile archive ran its own replay.py in the proxy
(the host checked the tar, then Docker unpacked more of it), and the replay held every body whole
in memory (16 unread requests for a recorded 60 MiB body: +2 GB). Here the proxy receives only
what the host wrote, a large body streams from its file while its clients read nothing, and two
samples asking for the same URL each get the answer their own sandbox recorded, and a client that
does not accept a recorded response's content coding is served it decoded.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import brotli  # type: ignore[import-untyped,unused-ignore]
import pytest

from inspect_gaia.egress.spec import EgressSpec
from inspect_gaia.sandboxes.docker import archive, egress
from inspect_gaia.sandboxes.docker.cleanup import remove_run, run_state
from inspect_gaia.sandboxes.docker.egress_archive import name_sample
from tests.helpers import docker_leftovers
from tests.helpers_hostile import record_line, web_archive

pytestmark = pytest.mark.docker

MIB = 1 << 20
BIG = bytes(range(256)) * (60 * MIB // 256)
CLOCK = "http://clock.example/now"
CODED = "http://coded.example/page"
PAGE = b"<p>The reservoir holds 310 megalitres.</p>\n" * 50
BR = brotli.compress(PAGE)
UNREAD = """
import os, socket, time
host, port = os.environ["PROXY"].rsplit(":", 1)
held = []
for _ in range(16):  # 16 requests for the 60 MiB body, none of it read
    s = socket.create_connection((host, int(port)))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.sendall(b"GET http://bulk.example/big HTTP/1.1\\r\\nHost: bulk.example\\r\\n\\r\\n")
    assert s.recv(64).startswith(b"HTTP/1.1 200"), "no answer"
    held.append(s)
print("holding", flush=True)
time.sleep(600)
"""
RSS = """
import os
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        argv = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\\0")
        status = open(f"/proc/{pid}/status").read()
    except OSError:
        continue
    if len(argv) > 1 and argv[1].endswith(b"/mitmdump"):
        print(next(int(l.split()[1]) for l in status.splitlines() if l.startswith("VmRSS")))
"""


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _docker(*args: str) -> str:
    return subprocess.run(["docker", *args], capture_output=True, text=True, check=True).stdout


@pytest.fixture
def replaying(egress_image: str, tmp_path: Path) -> Iterator[egress.Egress]:
    """A replay's proxy for an archive of two samples' clocks and a 60 MiB body."""
    before = docker_leftovers()
    lines = {
        "box-a": [
            record_line(CLOCK, b"a's time"),
            record_line("http://bulk.example/big", BIG),
            record_line(CODED, BR, headers=[["Content-Encoding", "br"]]),
        ],
        "box-b": [record_line(CLOCK, b"b's time")],
    }
    files = {
        f"record/{box}.jsonl": "".join(json.dumps(x) + "\n" for x in found).encode()
        for box, found in lines.items()
    }
    for box, sample in (("box-a", "A"), ("box-b", "B")):
        files[f"record/samples/{box}"] = json.dumps({"id": sample, "epoch": 1}).encode()
    for body in (b"a's time", b"b's time", BIG, BR):
        files[f"record/bodies/{_sha(body)}"] = body
    path = web_archive(tmp_path / "web.tar", files)
    started = egress.ensure("gaia-replay-test", EgressSpec(replay=str(path)))
    try:
        yield started
    finally:
        egress.forget(egress.egress_state())
        remove_run(run_state().run_id)
        assert docker_leftovers() == before


def _client(proxy: egress.Egress, image: str, name: str, sample: str | None) -> str:
    """Start a client on the sandboxes' network, named to the proxy as ``sample``'s sandbox."""
    container = _docker(
        *("run", "-d", "--network", proxy.network, "--label", "inspect_gaia.test=replay"),
        *("-e", f"PROXY={proxy.address}:{egress.PORT}", "--name", name, image, "sleep", "600"),
    ).strip()
    address = _docker(
        "inspect", container, "-f", "{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}"
    ).strip()
    if sample is not None:
        name_sample(proxy.proxy, egress.RECORD_DIR, name, sample, 1)
        archive.put_file(proxy.proxy, f"{egress.RECORD_DIR}/clients/{address}", name.encode())
    return container


def _curl(container: str, proxy: egress.Egress, url: str, *args: str) -> bytes:
    via = f"http://{proxy.address}:{egress.PORT}"
    return subprocess.run(
        ["docker", "exec", container, "curl", "-sS", "-m", "60", "--proxy", via, *args, url],
        capture_output=True,
        check=True,
    ).stdout


def test_each_sample_gets_its_own_recording_and_a_large_body_streams(
    replaying: egress.Egress, sandbox_image: str
) -> None:
    proxy = replaying
    # what the proxy holds is what the host wrote: the index and the bodies, nothing else
    listed = _docker("exec", proxy.proxy, "find", egress.REPLAY_DIR).split()
    assert sorted(listed) == sorted(
        [egress.REPLAY_DIR, f"{egress.REPLAY_DIR}/index.jsonl", f"{egress.REPLAY_DIR}/bodies"]
        + [
            f"{egress.REPLAY_DIR}/bodies/{_sha(b)}"
            for b in (b"a's time", b"b's time", BIG, BR, PAGE)  # PAGE: BR's decoded twin
        ]
    )
    tag = uuid.uuid4().hex[:6]
    clients = [
        _client(proxy, sandbox_image, f"gaia-replay-{tag}-{who}", sample)
        for who, sample in (("a", "A"), ("b", "B"), ("c", None))
    ]
    try:
        a, b, other = clients
        assert _curl(a, proxy, CLOCK) == b"a's time"
        assert _curl(b, proxy, CLOCK) == b"b's time"
        assert _curl(other, proxy, CLOCK) == b"a's time"  # no sample's: the first recorded
        # a page recorded br-coded: as recorded to a client that accepts br, decoded to one that
        # does not (curl sends no Accept-Encoding; it was served the br bytes)
        assert _curl(a, proxy, CODED, "-H", "Accept-Encoding: br") == BR
        assert _curl(a, proxy, CODED) == PAGE
        assert _curl(other, proxy, CODED, "-H", "Accept-Encoding: gzip, deflate") == PAGE
        assert hashlib.sha256(_curl(other, proxy, "http://bulk.example/big")).hexdigest() == _sha(
            BIG
        )
        rss = int(_docker("exec", proxy.proxy, "python3", "-c", RSS).split()[0])
        subprocess.run(
            ["docker", "exec", "-i", other, "sh", "-c", "cat > /tmp/unread.py"],
            input=UNREAD.encode(),
            check=True,
        )
        _docker("exec", "-d", other, "sh", "-c", "python3 /tmp/unread.py > /tmp/held 2>&1")
        deadline = time.monotonic() + 120
        while "holding" not in _docker("exec", other, "cat", "/tmp/held"):
            assert time.monotonic() < deadline, _docker("exec", other, "cat", "/tmp/held")
            time.sleep(0.5)
        time.sleep(5)  # the 16 answers begun, their bodies stalled
        held = int(_docker("exec", proxy.proxy, "python3", "-c", RSS).split()[0])
        # 16 x 60 MiB asked for: the proxy holds buffers, not bodies (it held them all: +2 GB)
        assert held - rss < 150 * 1024, (rss, held)
        assert _curl(a, proxy, CLOCK) == b"a's time"  # and still answers
    finally:
        for container in clients:
            subprocess.run(["docker", "rm", "-f", container], capture_output=True)
