"""One sandbox cannot touch another's network: no raw sockets, so no forged ARP (#49, item 3).

Sandboxes of a ``block_answer_sources`` run share one internal network with the run's proxy (the
proxy must be reachable, so traffic between containers stays on: ``sandboxes/docker/egress.py``).
With ``NET_RAW``, one sample's forged ARP replies ("the proxy is at a MAC nobody has") made another
sample's requests to the proxy fail, silently: no outage, both scored as usual. The sandboxes now
run with the capabilities the task needs only (``sandboxes/spec.py:CAPABILITIES``), so the forger's
raw socket is refused and its neighbour's fetches all come back.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalSample
from inspect_ai.model import ChatMessageTool

from inspect_gaia.probe.outcomes import PROBE_SCORER
from inspect_gaia.probe.scorer import STORE_KEY
from inspect_gaia.probe.task import gaia_probe
from inspect_gaia.sandboxes.spec import CAPABILITIES, capability_mask
from support.answer_pages import (
    GAIA_LEAK,
    PELLBROOK,
    PELLBROOK_ID,
    SALTMERE,
    SALTMERE_ID,
    WAIT_FOR_STANDINS,
    WEATHER_PATH,
)
from support.scripted_model import Entry
from support.standins import StandIns
from tests.helpers import Play, eval_blocked_pair

pytestmark = pytest.mark.docker

FETCHES = 12

FORGE = r"""python3 - <<'PY'
import os, socket, struct, time
proxy = os.environ["HTTP_PROXY"].rsplit("/", 1)[-1].split(":")[0]
fake = bytes.fromhex("020000000099")
try:
    raw = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0806))
    raw.bind(("eth0", 0))
except OSError as ex:
    print("raw socket refused:", type(ex).__name__, ex.errno)
    raise SystemExit(0)
ip = socket.inet_aton(proxy)
sent = 0
end = time.monotonic() + 15
while time.monotonic() < end:
    for op in (1, 2):  # a gratuitous request and reply: "the proxy is at a MAC nobody has"
        arp = struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, op, fake, ip, b"\xff" * 6, ip)
        raw.send(b"\xff" * 6 + fake + b"\x08\x06" + arp)
        sent += 1
    time.sleep(0.02)
print("forged", sent, "ARP frames")
PY"""
"""Broadcasts, for 15 s, that the run's proxy is at a MAC address no container has."""

FETCH = (
    f"sleep 1; for i in $(seq {FETCHES}); do curl -s -o /dev/null -w '%{{http_code}} ' -m 3 "
    f"http://weather.example{WEATHER_PATH}; sleep 0.5; done"
)
CAPS = "grep CapEff /proc/self/status"


def _outputs(sample: EvalSample) -> list[str]:
    return [m.text for m in sample.messages if isinstance(m, ChatMessageTool)]


def _cap_eff(output: str) -> int:
    return int(output.split("CapEff:")[1].split()[0], 16)


def test_a_sandbox_forging_arp_replies_leaves_its_neighbours_fetches_whole(
    sandbox_image: str, egress_image: str, internet: StandIns, scripted: Play, tmp_path: Path
) -> None:
    forging = threading.Event()
    scripted(
        [
            Entry(
                SALTMERE,
                [
                    {"bash": f"{WAIT_FOR_STANDINS}; {CAPS}"},
                    {"signal": forging, "bash": FORGE},
                    {"submit": "Thistlewood"},
                ],
            ),
            Entry(
                PELLBROOK,
                [
                    {"bash": f"{WAIT_FOR_STANDINS}; {CAPS}"},
                    {"wait": forging, "bash": FETCH},
                    {"submit": "Nineteen Locks"},
                ],
            ),
        ]
    )
    with internet.attaching():
        try:
            log = eval_blocked_pair(sandbox_image, tmp_path)
        finally:
            forging.set()
    assert log.status == "success" and log.samples is not None, log.error
    forger = next(s for s in log.samples if s.id == SALTMERE_ID)
    victim = next(s for s in log.samples if s.id == PELLBROOK_ID)
    for sample in (forger, victim):
        caps = _cap_eff(_outputs(sample)[0])
        assert caps == capability_mask(CAPABILITIES), f"{sample.id}: CapEff {caps:016x}"
        assert not caps & (1 << 13), "NET_RAW (bit 13) is dropped"
    assert "raw socket refused: PermissionError" in _outputs(forger)[1], _outputs(forger)[1]
    codes = _outputs(victim)[1].split()
    assert codes == ["200"] * FETCHES, f"the neighbour's fetches through the proxy: {codes}"


def test_inspects_compose_sandbox_has_the_same_capabilities_and_the_probe_finds_it_sealed(
    sandbox_image: str, tmp_path: Path
) -> None:
    """The probe on ``-T sandbox=compose``: its capabilities route reads ``CapEff``."""
    targets = tmp_path / "targets.txt"  # names that resolve nowhere: no request leaves the host
    targets.write_text(
        "source https://gaia-answers.example/metadata.jsonl\nopen http://weather.example/\n"
    )
    task = gaia_probe(
        dataset_path=str(GAIA_LEAK),
        image=sandbox_image,
        sandbox="compose",
        ids=PELLBROOK_ID,
        web_targets=str(targets),
    )
    (log,) = inspect_eval(task, log_dir=str(tmp_path), display="none")
    assert log.status == "success" and log.samples is not None, log.error
    (sample,) = log.samples
    (capabilities,) = [r for r in sample.store[STORE_KEY] if r["route"] == "files.capabilities"]
    assert _cap_eff(capabilities["findings"][0]["text"]) == capability_mask(CAPABILITIES)
    score = (sample.scores or {})[PROBE_SCORER]
    assert score.value == 0, score.explanation
    routes = {r["route"]: r["outcome"] for r in (score.metadata or {})["routes"]}
    assert (
        routes["neighbours.raw_socket"] == "refused" and routes["settings.capabilities"] == "empty"
    )
