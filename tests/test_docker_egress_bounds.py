"""One sandbox doing its worst to the run's egress proxy takes nothing from the others (#49).

Round 6 of the reliability review took the web from every sample of a run in three ways that need
no dishonest model at all: HTTP/2 with a closed window parked a download in the proxy's memory
(H1), the recorder rewrote a sandbox's whole file of open requests at each request's start and
end (H2: 800 slow requests with 30 KiB URLs froze the proxy until its supervisor killed it), and
1,800 blocked long URLs pushed a sandbox's record past what the run reads back (M4: the sample
"not recorded"). Heads and connections had no bound per sandbox (M1), a request's ``Host`` could
name another site than the proxy connected to (M3), a refusal was recorded with an empty body (L1),
and the supervisor's outage line blamed the last client in, the honest one (M2).

Here, through the real proxy (mitmproxy with the addon, the bounds and the recorder):

* the recorder writes the same bytes for a request however many are in flight, caps a sandbox's
  record, and keeps a sample's bodies within its share of the run's cap (L2: one sample filled
  it for every later one), on mitmproxy's own flows in the proxy's image;
* in a real run with the scripted model, one sandbox sends all of the above while another fetches
  a page every half second: every fetch is answered, no outage, the proxy's memory stays under
  ``PEAK_BOUND``, and the flooder's own record is read back whole up to its caps, its first,
  honest fetch in it;
* when the proxy goes down anyway (killed here), the outage names the sandbox holding most of it,
  and ``report`` that sample alone.
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.log import EvalSample
from inspect_ai.model import ChatMessageTool

from inspect_gaia.egress.web_record import FULL, MAX_LINES, MAX_URL, from_store
from inspect_gaia.shipped import PROXY_PROGRAMS, source
from support.answer_pages import (
    PELLBROOK,
    PELLBROOK_ID,
    SALTMERE,
    SALTMERE_ID,
    WAIT_FOR_STANDINS,
    WEATHER,
    WEATHER_PATH,
)
from support.proxy_floods import ProxyWatch, flood
from support.scripted_model import Entry
from support.standins import StandIns, docker
from tests.helpers import Play, eval_blocked_pair
from tests.helpers_reports import report_json

pytestmark = pytest.mark.docker

LISTED = "https://huggingface.co/datasets/gaia-benchmark/GAIA/resolve/main/README.md"
PEAK_BOUND = 300 << 20
"""The proxy container's memory at its highest while one sandbox floods it (it rests near 70 MiB;
one sandbox at its caps holds about 32 MiB of it: docs/answer-sources.md)."""

KILL_MITMDUMP = r"""
import os, signal
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        argv = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
    except OSError:
        continue
    if len(argv) > 1 and argv[1].endswith(b"/mitmdump"):
        os.kill(int(pid), signal.SIGKILL)
"""
"""Kills mitmdump (not its supervisor), inside the proxy's container."""

RECORDER_LOAD = r"""
import json, os, sys
sys.path.insert(0, "/egress")
from mitmproxy import http
from mitmproxy.test import taddons, tflow
import recorder

def written():
    with open("/proc/self/io") as io:
        return int(io.read().split("wchar: ")[1].split()[0])

def flow(i, target):
    made = tflow.tflow()
    made.client_conn.peername = ("10.9.0.5", 40000 + i)
    made.request.url = "http://weather.example" + target
    return made

n, kib, more = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
addon = recorder.Recorder()
with taddons.context(addon) as context:
    context.configure(addon, gaia_record_dir="/tmp/record")
    pad = "s" * (kib * 1024)
    flows = [flow(i, f"/slow/40?{i}-{pad}") for i in range(n)]
    before = written()
    for made in flows:  # n requests in flight at once, each with its long URL
        addon.requestheaders(made)
    opened = written() - before
    for made in flows:
        made.response = http.Response.make(200, b"slow")
        addon.response(made)
    for i in range(more):  # short ones, up to and past the record's cap
        made = flow(n + i, f"/today.txt?{i}")
        addon.requestheaders(made)
        made.response = http.Response.make(200, b"fog")
        addon.response(made)
    name = "_unattributed"
    with open(f"/tmp/record/{name}.jsonl") as record:
        lines = [json.loads(line) for line in record]
    try:  # the requests it counts in flight (none: no count at all)
        with open(f"/tmp/record.open/{name}.n") as count:
            flying = int(count.read())
    except FileNotFoundError:
        flying = None
print(json.dumps({"opened": opened, "lines": lines[:3], "count": len(lines),
                  "last": lines[-1], "flying": flying}))
"""


BODIES_SHARE = r"""
import json, os, sys
sys.path.insert(0, "/egress")
from mitmproxy import http
from mitmproxy.test import taddons, tflow
import recorder

MIB = 1 << 20
addon = recorder.Recorder()
with taddons.context(addon) as context:
    context.configure(
        addon, gaia_record_dir="/tmp/record", gaia_bodies=True,
        gaia_body_cap=4 * MIB, gaia_sample_cap=3 * MIB, gaia_run_cap=4 * MIB,
    )
    for address, sandbox in (("10.9.0.5", "greedy"), ("10.9.0.6", "later")):
        with open(f"/tmp/record/clients/{address}", "w") as named:
            named.write(sandbox)
    for address, body in [("10.9.0.5", i) for i in range(4)] + [("10.9.0.6", 9)]:
        made = tflow.tflow()
        made.client_conn.peername = (address, 40000 + body)
        made.request.url = f"http://bulk.example/bulk/{body}"
        addon.requestheaders(made)
        made.response = http.Response.make(200, bytes([body]) * MIB)
        addon.response(made)
fates = {}
for sandbox in ("greedy", "later"):
    with open(f"/tmp/record/{sandbox}.jsonl") as record:
        fates[sandbox] = [json.loads(line)["body"] for line in record]
print(json.dumps(fates))
"""


def _in_proxy_image(egress_image: str, tmp_path: Path, script: str, *args: object) -> str:
    """Run ``script`` in a container of the proxy's image, its programs in /egress (stdout)."""
    programs = tmp_path / "egress"
    programs.mkdir()
    for program in PROXY_PROGRAMS:
        (programs / program.name).write_text(source(program), encoding="utf-8")
    container = docker("create", egress_image, "python3", "-c", script, *map(str, args))
    try:
        docker("cp", f"{programs}/.", f"{container}:/egress")
        run = subprocess.run(
            ["docker", "start", "-a", container], capture_output=True, text=True, timeout=600
        )
        assert run.returncode == 0, run.stderr[-3000:]
        return run.stdout
    finally:
        subprocess.run(["docker", "rm", "-f", container], capture_output=True)


def test_a_request_costs_the_recorder_the_same_whatever_is_in_flight_and_a_record_is_capped(
    egress_image: str, tmp_path: Path
) -> None:
    n, kib = 200, 30
    out = _last_json(_in_proxy_image(egress_image, tmp_path, RECORDER_LOAD, n, kib, MAX_LINES))
    # each request appended its open line (its URL cut) and rewrote a 20-byte count: linear.
    # Rewriting the open file whole at each start wrote n²/2 URLs: 600 MB here.
    assert out["opened"] < n * 8 * 1024, out["opened"]
    first = out["lines"][0]
    assert len(first["url"]) < MAX_URL + 40 and first["url"].endswith(" characters)")
    assert first["server"] == "weather.example:80" and first["status"] == 200
    # the cap: MAX_LINES requests, then one line saying the record is full, then nothing
    assert out["count"] == MAX_LINES + 1 and FULL in out["last"], out["last"]
    assert out["flying"] == 0


def test_one_sample_keeps_at_most_its_share_of_the_run_s_bodies(
    egress_image: str, tmp_path: Path
) -> None:
    """Four 1 MiB bodies of one sample's, then one of another's, in a run keeping 4 MiB."""
    fates = _last_json(_in_proxy_image(egress_image, tmp_path, BODIES_SHARE))
    share = f"over the sample's share of the run's cap ({3 << 20} bytes)"
    assert fates == {"greedy": ["kept", "kept", "kept", share], "later": ["kept"]}


def _tools(sample: EvalSample) -> list[str]:
    return [m.text for m in sample.messages if isinstance(m, ChatMessageTool)]


def _last_json(output: str) -> dict[str, Any]:
    return dict(json.loads(output.strip().splitlines()[-1]))


def test_one_sandbox_at_its_worst_takes_nothing_from_another_nor_its_own_record(
    sandbox_image: str, egress_image: str, internet: StandIns, scripted: Play, tmp_path: Path
) -> None:
    flooding = threading.Event()
    fetch = f"curl -sS -m 30 http://weather.example{WEATHER_PATH}"
    steady = (  # a page every half second for 80 s, while the other floods
        f"ok=0; bad=0; end=$((SECONDS+80)); while [ $SECONDS -lt $end ]; do if {fetch} | "
        "grep -q Fog; then ok=$((ok+1)); else bad=$((bad+1)); fi; sleep 0.5; done; "
        "echo honest ok $ok bad $bad"
    )
    scripted(
        [
            Entry(
                SALTMERE,
                [
                    {"bash": f"{WAIT_FOR_STANDINS}; {fetch}; curl -sS -m 30 {LISTED}"},
                    {"signal": flooding, "bash": flood("alpn")},
                    {"bash": flood("forge")},
                    {"bash": flood("heads", 200, 63, 5)},
                    {"bash": flood("hello", 80, 256, 5)},
                    {"bash": flood("slow", 800, 30, 15)},
                    {"bash": flood("erase", 1800, 60, 8)},
                    {"submit": "Thistlewood"},
                ],
            ),
            Entry(
                PELLBROOK,
                [
                    {"bash": WAIT_FOR_STANDINS},
                    {"wait": flooding, "bash": steady},
                    {"submit": "Nineteen Locks"},
                ],
            ),
        ]
    )
    with internet.attaching(), ProxyWatch(internet) as proxy:
        log = eval_blocked_pair(sandbox_image, tmp_path)
    assert log.status == "success" and log.samples is not None, log.error
    flooder = next(s for s in log.samples if s.id == SALTMERE_ID)
    honest = next(s for s in log.samples if s.id == PELLBROOK_ID)

    # the other sandbox had the web all along, and the proxy never went down
    fetched = _tools(honest)[1].split()
    assert fetched[:2] == ["honest", "ok"] and fetched[-2:] == ["bad", "0"], honest.messages[-3:]
    assert int(fetched[2]) >= 20, fetched
    assert '"up": 0' in proxy.log and '"down"' not in proxy.log, proxy.log[-3000:]
    assert honest.error is None and flooder.error is None
    assert 0 < max(proxy.peaks) < PEAK_BOUND, max(proxy.peaks) >> 20
    print(f"the proxy's memory at its highest: {max(proxy.peaks) >> 20} MiB")  # pytest -s

    said = _tools(flooder)
    assert WEATHER in said[0] and "inspect_gaia egress proxy refused" in said[0]
    alpn, forged, heads, hello, slow, erase = (_last_json(out) for out in said[1:7])
    # HTTP/2 is not offered, nor read with prior knowledge: nothing to park a body in
    assert alpn == {"alpn": "http/1.1", "prior knowledge": "HTTP/1.1 400 Bad Request"}, alpn
    for answer in forged.values():  # one line the agent reads, and no page
        assert answer.startswith("HTTP/1.1 403"), forged
        assert (
            "does not allow this: a request for " in answer and "sent to weather.example" in answer
        )
    # connections over the cap closed at once; heads and handshakes cut within their bounds
    assert heads["sent"] + heads["refused"] == 200 and heads["cut"] >= heads["sent"] - 16, heads
    assert hello["cut"] == hello["sent"], hello
    assert slow["answered"] <= 64 and slow["answered"] > 0, slow
    assert erase == {"statuses": {"403": 1800}}, erase

    # its own record: read back whole, URLs cut, and its first, honest fetch in it
    record = from_store(flooder.store)
    assert record is not None, "the flooder's record could not be read back"
    first = next(r for r in record if r.url == f"http://weather.example{WEATHER_PATH}")
    assert first.status == 200 and first.decision == "allowed" and first.address is not None
    refusal = next(r for r in record if r.url == LISTED)
    assert refusal.decision == "refused" and refusal.bytes > 0  # its text, not an empty body
    assert refusal.server == "huggingface.co:443" and refusal.sni == "huggingface.co"
    forged_lines = [r for r in record if r.url.startswith("http://en.wikipedia.nx/")]
    assert forged_lines and forged_lines[0].decision == "blocked"
    assert forged_lines[0].server == "weather.example:80", forged_lines
    assert max(len(r.url) for r in record) < MAX_URL + 40
    assert sum(r.decision == "blocked" for r in record) >= 1800
    assert from_store(honest.store), "the honest sample's record"


def test_an_outage_names_the_sandbox_holding_the_proxy_and_report_names_its_sample(
    sandbox_image: str, egress_image: str, internet: StandIns, scripted: Play, tmp_path: Path
) -> None:
    """Killed while the flooder holds 60 slow requests and the honest sample fetches on."""
    held = threading.Event()
    fetch = f"curl -sS -m 5 http://weather.example{WEATHER_PATH}"
    scripted(
        [
            Entry(
                SALTMERE,
                [
                    {"bash": WAIT_FOR_STANDINS},
                    {"signal": held, "bash": flood("slow", 60, 1, 40)},
                    # the kill resets its connections at once: its command may end before the
                    # run reads of the outage, which the next command then checks
                    {"bash": "sleep 2"},
                    {"submit": "Thistlewood"},
                ],
            ),
            Entry(
                PELLBROOK,
                [
                    {"bash": WAIT_FOR_STANDINS},
                    {"wait": held, "bash": f"for i in $(seq 100); do {fetch}; sleep 0.2; done"},
                    {"submit": "Nineteen Locks"},
                ],
            ),
        ]
    )

    def kill_once_held() -> None:
        deadline = time.monotonic() + 240
        while sum(r.get("path", "").startswith("/slow/") for r in internet.requests()) < 50:
            assert time.monotonic() < deadline, "the slow requests never came"
            time.sleep(0.2)
        time.sleep(2)  # the honest sample is the last one in, as in the review's floods
        (proxy,) = internet.attached
        docker("exec", proxy, "python3", "-c", KILL_MITMDUMP)

    with internet.attaching():
        killer = threading.Thread(target=kill_once_held)
        killer.start()
        try:
            log = eval_blocked_pair(sandbox_image, tmp_path)
        finally:
            killer.join()
    assert log.samples is not None and len(log.samples) == 2
    flooder_named = f"the sandbox holding most of the proxy then was sample {SALTMERE_ID} (epoch 1)"
    for sample in log.samples:  # both had a command running: both ended, both blame the flooder
        assert sample.error is not None, sample.id
        assert flooder_named in sample.error.message, sample.error.message
    (group,) = report_json(log.location)["groups"]
    (flag,) = [f for f in group["flags"] if f.startswith("egress proxy down")]
    assert f"({flooder_named})" in flag and PELLBROOK_ID not in flag, flag
