"""The egress proxy fails closed, and one sandbox cannot take it from the others.

A request target holding a byte that is not UTF-8 made the addon raise while it built the refusal
text; mitmproxy logged "Addon error" and forwarded the request, and the listed page came back with
a 200. A request head that never ends was held whole (400 MB of head, 400 MB of proxy memory, in a
1 GB limit). Here one sandbox sends both, raw, through the real proxy while four others fetch pages:
nothing refused reaches the stand-in "internet", the head is cut, and the four finish, scored right.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest
from inspect_ai.model import ChatMessageTool
from inspect_ai.scorer import CORRECT

from benchmarks.fixture import task_id, write_dataset
from inspect_gaia import gaia
from support.answer_pages import (
    MIRROR_PATH,
    WAIT_FOR_STANDINS,
    WEATHER,
    WEATHER_PATH,
)
from support.scripted_model import Entry
from support.standins import StandIns, docker
from tests.helpers import Play, eval_task

pytestmark = pytest.mark.docker

OTHERS = 4
"""Samples fetching a page every second while one floods the proxy."""
FLOOD_MB = 300
KILLED = ("closed", "ConnectionResetError", "BrokenPipeError")
"""What the probe sees of a connection the proxy ended without an answer."""
PEAK_BOUND = 250 << 20
"""The proxy container's memory peak while the flood runs (it rests near 70 MiB; docs say so)."""

PROBE = r"""
import json, os, socket, ssl, sys
proxy = os.environ["HTTP_PROXY"].rsplit("/", 1)[-1].split(":")
PROXY = (proxy[0], int(proxy[1]))
LISTED, FLOOD_MB = sys.argv[1].encode(), int(sys.argv[2])

def exchange(data, connect=None, tls=False):
    try:
        s = socket.create_connection(PROXY, timeout=30)
        if connect:
            s.sendall(b"CONNECT " + connect + b" HTTP/1.1\r\nHost: " + connect + b"\r\n\r\n")
            head = s.recv(65536)
            if b" 200 " not in head.split(b"\r\n")[0]:
                return head.split(b"\r\n")[0].decode()
            if tls:
                context = ssl.create_default_context(cafile=os.environ["SSL_CERT_FILE"])
                s = context.wrap_socket(s, server_hostname=connect.split(b":")[0].decode())
        for chunk in data:
            s.sendall(chunk)
        out = b""
        while b"\r\n" not in out:
            more = s.recv(65536)
            if not more:
                break
            out += more
        return out.split(b"\r\n")[0].decode(errors="replace") or "closed"
    except OSError as ex:
        return f"{type(ex).__name__}"

def get(target, host=b"huggingface.co", extra=b""):
    return [b"GET " + target + b" HTTP/1.1\r\nHost: " + host + b"\r\n" + extra
            + b"Connection: close\r\n\r\n"]

results = {
    "target over CONNECT :80": exchange(get(LISTED + b"?\xff"), b"huggingface.co:80"),
    "target over TLS": exchange(get(LISTED + b"?\xff"), b"huggingface.co:443", tls=True),
    "host": exchange(get(LISTED, b"huggingface.co\xff"), b"huggingface.co:80"),
    "header": exchange(get(LISTED, extra=b"X-Note: \xff\xfe\r\n"), b"huggingface.co:80"),
    "absolute form": exchange(get(b"http://huggingface.co" + LISTED + b"?\xff")),
    "target of 40 KiB": exchange(get(b"/" + b"a" * 40960, b"weather.example"), b"weather.example:80"),
    "two Host headers": exchange(
        get(LISTED, b"weather.example", b"Host: huggingface.co\r\n"), b"weather.example:80"
    ),
    "port 8080": exchange(get(b"http://weather.example:8080/today.txt", b"weather.example:8080")),
}
pad = b"X-Pad: " + b"a" * 65536 + b"\r\n"
flood = [b"GET /flood HTTP/1.1\r\nHost: weather.example\r\n"] + [pad] * (FLOOD_MB * 16)
results["head flood"] = exchange(flood, b"weather.example:80")
print(json.dumps(results))
"""


def _asking(i: int) -> str:
    """What the scripted model matches question ``i`` of the synthetic dataset by."""
    return f"Benchmark question {i}:"


def _outputs(messages: Sequence[object]) -> list[str]:
    return [m.text for m in messages if isinstance(m, ChatMessageTool)]


def _watch(internet: StandIns, stop: threading.Event, peaks: list[int], logs: list[str]) -> None:
    """The proxy container's memory peak (cgroup v2 or v1) and its log, read until ``stop``."""
    read = "cat /sys/fs/cgroup/memory.peak /sys/fs/cgroup/memory/memory.max_usage_in_bytes"
    while not stop.wait(0.5):
        for proxy in internet.attached:
            try:
                peaks.append(int(docker("exec", proxy, "sh", "-c", f"{read} 2>/dev/null || true")))
                logs.append(docker("logs", proxy))
            except Exception:  # not yet started, or already gone
                continue


def test_nothing_refused_is_forwarded_and_a_flood_leaves_the_others_the_web(
    sandbox_image: str, egress_image: str, internet: StandIns, scripted: Play, tmp_path: Path
) -> None:
    dataset = write_dataset(tmp_path / "GAIA", 1 + OTHERS, 0)  # answers "20"
    fetch = f"curl -sS -m 20 http://weather.example{WEATHER_PATH}"
    steady = f"{WAIT_FOR_STANDINS}; for i in $(seq 8); do {fetch}; echo; sleep 1; done"
    probe = f"{WAIT_FOR_STANDINS}; python3 - {MIRROR_PATH} {FLOOD_MB} <<'PY'\n{PROBE}\nPY"
    scripted(
        [Entry(_asking(0), [{"bash": probe}, {"bash": fetch}, {"submit": "20"}])]
        + [Entry(_asking(i), [{"bash": steady}, {"submit": "20"}]) for i in range(1, 1 + OTHERS)]
    )
    stop, peaks, logs = threading.Event(), [0], [""]
    with internet.attaching():
        watch = threading.Thread(target=_watch, args=(internet, stop, peaks, logs))
        watch.start()
        try:
            log = eval_task(
                gaia(dataset_path=str(dataset), image=sandbox_image, block_answer_sources=True),
                tmp_path,
                max_samples=1 + OTHERS,
            )
        finally:
            stop.set()
            watch.join()
    assert log.status == "success" and log.samples is not None, log.error
    flooding = next(s for s in log.samples if s.id == task_id(0))
    results = json.loads(_outputs(flooding.messages)[0].strip().splitlines()[-1])
    # each refused (a 403) or killed (the connection closed with no answer: a hook that failed
    # closed, or a refusal whose connection went before the client read it) — never forwarded,
    # which the stand-in's own list of requests proves below
    for probe_name in (
        "target over CONNECT :80",
        "target over TLS",
        "header",
        "target of 40 KiB",
        "two Host headers",
        "port 8080",
    ):
        status = results[probe_name]
        assert status.endswith("403 Forbidden") or status in KILLED, (probe_name, results)
    assert results["head flood"].endswith("431 ") or results["head flood"] in KILLED, results
    assert not any(" 200 " in status for status in results.values()), results
    reached = [r.get("path", "") for r in internet.requests()]
    assert not any(p.startswith(MIRROR_PATH) or p.startswith("/aaaa") for p in reached), reached
    assert "/flood" not in reached
    assert len(log.samples) == 1 + OTHERS
    for sample in log.samples:  # every sample had the web, and the four fetching are scored right
        assert sample.error is None and sample.scores is not None
        assert any(WEATHER in out for out in _outputs(sample.messages)), sample.messages
        assert sample.scores["gaia_scorer"].value == CORRECT, sample.id
    assert '"blocked": "a request head"' in logs[-1] and '"down"' not in logs[-1], logs[-1]
    assert 0 < max(peaks) < PEAK_BOUND, max(peaks)
