"""The egress proxy survives what a sandbox sends through it, and the run watches it.

A response of any size streams through (the proxy held each whole body in memory, inside a 1 GB
limit: one 500 MB download killed it, and the run went on offline, scored as usual). When the
proxy dies or stops answering anyway, it comes back at the same address with the same CA, and a
sample whose command was running meanwhile ends as an error that ``inspect eval-retry`` reruns.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from inspect_ai.event import InfoEvent
from inspect_ai.log import EvalSample, resolve_sample_attachments
from inspect_ai.model import ChatMessageTool

from support.answer_pages import (
    GAIA_LEAK,
    PELLBROOK,
    PELLBROOK_ID,
    SALTMERE,
    SALTMERE_ID,
    WAIT_FOR_STANDINS,
    WEATHER,
    WEATHER_PATH,
)
from support.scripted_model import Entry
from support.standins import StandIns, docker
from tests.helpers import Play, eval_blocked_pair, eval_gaia

pytestmark = pytest.mark.docker

MIB = 1 << 20


def _outputs(sample: EvalSample) -> list[str]:
    return [m.text for m in sample.messages if isinstance(m, ChatMessageTool)]


def test_a_large_or_endless_download_streams_through_and_the_proxy_stays(
    sandbox_image: str, egress_image: str, internet: StandIns, scripted: Play, tmp_path: Path
) -> None:
    count = "curl -sS -m 300 {} | wc -c"
    scripted(
        [
            Entry(
                PELLBROOK,
                [
                    {
                        "bash": f"{WAIT_FOR_STANDINS}; {count.format('http://bulk.example/bulk/600')}"
                    },
                    # no length, no end: the client leaves after 700 MiB
                    {"bash": count.format("http://bulk.example/endless | head -c 734003200")},
                    {"bash": f"curl -sS -m 20 http://weather.example{WEATHER_PATH}"},
                    {"submit": "Nineteen Locks"},
                ],
            )
        ]
    )
    with internet.attaching():
        log = eval_gaia(
            tmp_path,
            dataset_path=str(GAIA_LEAK),
            image=sandbox_image,
            block_answer_sources=True,
            ids=PELLBROOK_ID,
        )
    assert log.status == "success" and log.samples is not None, log.error
    (sample,) = log.samples
    sized, endless, after = _outputs(sample)[:3]
    assert sized.split()[-1] == str(600 * MIB), sized[-500:]
    assert endless.split()[-1] == str(700 * MIB), endless[-500:]
    assert WEATHER in after, after[-500:]
    assert sample.error is None


MARKER = "http://weather.example/marker"
SIGNAL = r"""
import os, signal, sys
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        argv = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
    except OSError:
        continue
    if len(argv) > 1 and argv[1].endswith(b"/mitmdump"):
        os.kill(int(pid), getattr(signal, sys.argv[1]))
"""
"""Sends mitmdump (not its supervisor) the signal named in argv[1], inside the proxy's container."""


def _hurt_the_proxy(internet: StandIns, signum: str, restarted: threading.Event) -> None:
    """Once the first sample asked for /marker, signal mitmdump; set ``restarted`` once it is back."""
    deadline = time.monotonic() + 240
    while not any(r.get("path") == "/marker" for r in internet.requests()):
        assert time.monotonic() < deadline, "the marker request never came"
        time.sleep(0.2)
    (proxy,) = internet.attached
    docker("exec", proxy, "python3", "-c", SIGNAL, signum)
    while '"up": 1}' not in docker("logs", proxy):
        assert time.monotonic() < deadline, docker("logs", proxy)[-2000:]
        time.sleep(0.2)
    restarted.set()


@pytest.mark.parametrize(
    ("signum", "why"),
    [("SIGKILL", "killed by signal 9"), ("SIGSTOP", "stopped answering")],
    ids=["dies", "hangs"],
)
def test_a_proxy_that_dies_or_hangs_comes_back_and_the_sample_it_failed_ends_as_an_error(
    signum: str,
    why: str,
    sandbox_image: str,
    egress_image: str,
    internet: StandIns,
    scripted: Play,
    tmp_path: Path,
) -> None:
    set_up, restarted = threading.Event(), threading.Event()
    listed = "https://huggingface.co/datasets/gaia-benchmark/GAIA/resolve/main/README.md"
    scripted(
        [
            # a command runs while the proxy is down: its sample ends as an error (it starts once
            # the other sample, set up, asked the model for its first step: a hang is taken to
            # begin when the proxy last answered, up to a second before, and that sample's set-up
            # commands must be before that)
            Entry(
                SALTMERE,
                [
                    {
                        "wait": set_up,
                        "bash": f"{WAIT_FOR_STANDINS}; sleep 2; curl -sS {MARKER}; sleep 8",
                    },
                    {"bash": f"curl -sS -m 60 http://weather.example{WEATHER_PATH}"},
                    {"submit": "Thistlewood"},
                ],
            ),
            # started before, first command after: the same proxy address and CA still work
            Entry(
                PELLBROOK,
                [
                    {
                        "signal": set_up,
                        "wait": restarted,
                        "bash": f"curl -sS -m 20 http://weather.example{WEATHER_PATH}; "
                        f"curl -sS -m 20 -o /dev/null -w ' https %{{http_code}}' {listed}",
                    },
                    {"submit": "Nineteen Locks"},
                ],
            ),
        ]
    )
    with internet.attaching():
        hurt = threading.Thread(target=_hurt_the_proxy, args=(internet, signum, restarted))
        hurt.start()
        try:
            log = eval_blocked_pair(sandbox_image, tmp_path)
        finally:
            set_up.set()
            restarted.set()
            hurt.join()
    assert log.samples is not None and len(log.samples) == 2
    failed = next(s for s in log.samples if s.id == SALTMERE_ID)
    assert failed.error is not None, _outputs(failed)
    message = failed.error.message
    assert "The run's egress proxy stopped while this sample ran a command" in message
    assert why in message and "rerun the errored samples with `inspect eval-retry`" in message
    assert log.status == "error"

    went_on = next(s for s in log.samples if s.id == PELLBROOK_ID)
    assert went_on.error is None and went_on.scores is not None
    (fetched,) = _outputs(went_on)[:1]
    assert WEATHER in fetched and fetched.rstrip().endswith("https 403"), fetched
    events = resolve_sample_attachments(went_on).events
    infos = [e for e in events if isinstance(e, InfoEvent)]
    assert any(e.source == "inspect_gaia egress" and why in str(e.data) for e in infos), infos
