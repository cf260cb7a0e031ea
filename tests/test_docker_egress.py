"""A run that cannot look its answers up (``-T block_answer_sources=true``): the egress proxy
refuses the answer sources over HTTP and HTTPS and passes the rest, sandboxes have no other way
out, and the proxy and its networks leave with the run, whatever ends it.

The "internet" is a stand-in container on an internal network of the test's own, which Docker
network aliases give the names of real hosts (huggingface.co among them); each run's proxy is
connected to it as soon as it exists (``support/standins.py``). Nothing can leave the host.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from inspect_ai.log import EvalSample, read_eval_log
from inspect_ai.model import ChatMessageTool

from inspect_gaia.answer_sources.sources import load_answer_sources
from inspect_gaia.egress.urlrules import REFUSAL_MARKER
from inspect_gaia.egress.web_record import WebRequest, from_store
from support.answer_pages import (
    GAIA_LEAK,
    MIRROR_HOST,
    MIRROR_PATH,
    NOTES_PATH,
    ORRINDALE,
    PELLBROOK,
    SALTMERE,
    WAIT_FOR_STANDINS,
    WEATHER,
    WEATHER_PATH,
    blocking_agent,
    bridge_address,
    notes_body,
    serve_pages,
)
from support.scripted_model import Entry
from support.standins import StandIns
from tests.helpers import (
    Play,
    docker_leftovers,
    eval_command,
    eval_gaia,
    inspect_cli,
    invoke,
    started_as,
    wait_for_containers,
)

pytestmark = pytest.mark.docker


def requests_of(sample: EvalSample) -> tuple[WebRequest, ...]:
    """The sample's record of the web (the run's proxy was on its path: it has one)."""
    found = from_store(sample.store)
    assert found is not None, f"no record in {sample.id}'s store"
    return found


def sha256(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


def _sample(samples: list[EvalSample], word: str) -> EvalSample:
    return next(s for s in samples if word in str(s.input))


def _outputs(sample: EvalSample) -> list[str]:
    return [m.text for m in sample.messages if isinstance(m, ChatMessageTool)]


def _flags(sample: EvalSample) -> list[dict[str, str]]:
    return list(((sample.scores or {})["gaia_scorer"].metadata or {}).get("contamination", []))


def test_answer_sources_are_refused_everything_else_passes_and_there_is_no_way_around(
    sandbox_image: str, egress_image: str, internet: StandIns, scripted: Play, tmp_path: Path
) -> None:
    before = docker_leftovers()
    address = bridge_address()
    with serve_pages(address) as (port, host_seen), internet.attaching():
        scripted(blocking_agent(f"http://{address}:{port}{WEATHER_PATH}"))
        log = eval_gaia(
            tmp_path,
            dataset_path=str(GAIA_LEAK),
            image=sandbox_image,
            block_answer_sources=True,
        )
    assert log.status == "success" and log.samples is not None
    assert len(internet.attached) == 1, "one proxy for the run"

    # HTTP and HTTPS to the mirror: refused, and the agent reads why
    mirror = _sample(log.samples, SALTMERE)
    http, https, raw = _outputs(mirror)[:3]
    assert f"{REFUSAL_MARKER} http://{MIRROR_HOST}{MIRROR_PATH}" in http
    assert f"{REFUSAL_MARKER} https://{MIRROR_HOST}{MIRROR_PATH}" in https
    assert "GAIA on Hugging Face is a known GAIA answer source" in https
    # a raw tunnel to a listed host (no path to judge it by) is closed before it reaches it
    assert "proxy: HTTP/1.1 200" in raw and ("tunnel answered b''" in raw or "tunnel failed" in raw)
    assert {(f["kind"], f["where"]) for f in _flags(mirror)} == {
        ("refused", "call"),
        ("refused", "result"),
    }
    # an innocent host passes (the page that lists the question is the detection's to flag)
    listing = _sample(log.samples, ORRINDALE)
    assert "Answer: 41" in _outputs(listing)[0]
    assert [f["kind"] for f in _flags(listing)] == ["question_with_answer"]
    own = _sample(log.samples, PELLBROOK)
    attachment, weather, direct = _outputs(own)[:3]
    assert WEATHER in weather and _flags(own) == []
    # by its address, around the proxy: no route; nor to the host, which ordinary runs reach
    assert "stand-in at " in direct and "direct exit 0" not in direct and "direct exit" in direct
    assert "host exit 0" not in direct and "host exit" in direct and host_seen == []

    # nothing refused reached the stand-in, over HTTP or TLS; everything that did came by the proxy
    seen = internet.requests()
    paths = [r.get("path") for r in seen]
    assert MIRROR_PATH not in paths and not any("tls" in r for r in seen), seen
    assert NOTES_PATH in paths and WEATHER_PATH in paths
    assert len({r["client"] for r in seen}) == 1, "one client: the proxy"

    # every request through the proxy is in its own sample's record, once, with what was decided
    saltmere = requests_of(mirror)
    refused = [r for r in saltmere if r.decision == "refused"]
    assert [(r.url, r.status, r.why) for r in refused] == [
        (f"{scheme}://{MIRROR_HOST}{MIRROR_PATH}", 403, "GAIA on Hugging Face")
        for scheme in ("http", "https")
    ]
    assert [r.url for r in saltmere if r.decision == "blocked"] == ["modelscope.cn:443"]
    notes = [r for r in requests_of(listing) if r.url.endswith(NOTES_PATH)]
    assert [(r.status, r.sha256, r.bytes) for r in notes] == [
        (200, sha256(notes_body()), len(notes_body()))
    ]
    fetched = [r for r in requests_of(own) if r.url.endswith(WEATHER_PATH)]
    assert [(r.decision, r.sha256) for r in fetched] == [("allowed", sha256(WEATHER.encode()))]
    assert all(r.url.startswith("http://weather.example/") for r in requests_of(own))

    recorded = (log.eval.metadata or {})["gaia"]["answer_sources"]
    assert recorded == {
        "list_sha256": load_answer_sources().sha256,
        "blocklist": None,
        "blocked": True,
    }
    code, out, _ = invoke("report", str(log.location), "--format", "json")
    (group,) = json.loads(out)["groups"]
    assert any(
        f.startswith("answer sources blocked by the run's egress proxy") for f in group["flags"]
    )
    assert group["contamination"]["levels"][-1]["refused_requests"] == 2
    assert "refused 2 requests to answer sources in 1 sample" in group["contamination"]["note"]
    web = group["web"]
    assert (web["levels"][-1]["recorded"], web["record_only"]) == (3, False)
    assert (web["levels"][-1]["refused"], web["levels"][-1]["blocked"]) == (2, 1)
    assert len(web["requests"]) == sum(len(requests_of(s)) for s in log.samples)
    assert {r["task_id"] for r in web["requests"]} == {str(s.id) for s in log.samples}
    assert docker_leftovers() == before, "the proxy and its networks left with the run"


def test_a_failed_sample_leaves_no_proxy(
    sandbox_image: str, egress_image: str, scripted: Play, tmp_path: Path
) -> None:
    before = docker_leftovers()
    scripted([Entry(SALTMERE, [{"http_error": 400}]), Entry("", [{"submit": "x"}])])
    log = eval_gaia(
        tmp_path, dataset_path=str(GAIA_LEAK), image=sandbox_image, block_answer_sources=True
    )
    assert log.status == "error"
    assert docker_leftovers() == before


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_stop_signal_mid_run_leaves_no_proxy(
    signum: signal.Signals,
    sandbox_image: str,
    egress_image: str,
    scripted: Play,
    tmp_path: Path,
) -> None:
    """Ctrl-C (SIGINT to the process group, as a terminal sends it) and SIGTERM."""
    before = docker_leftovers()
    scripted([Entry("", [{"bash": "sleep 120"}, {"submit": "x"}])])
    args = [f"dataset_path={GAIA_LEAK}", f"image={sandbox_image}", "block_answer_sources=true"]
    run = subprocess.Popen(
        eval_command(args, tmp_path / "logs"),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=tmp_path,
        start_new_session=True,
        preexec_fn=started_as("terminal"),
    )
    try:
        wait_for_containers(4, besides=before)  # three sandboxes and the proxy
        time.sleep(2)
        if signum == signal.SIGINT:
            os.killpg(run.pid, signum)
        else:
            os.kill(run.pid, signum)
        output, _ = run.communicate(timeout=120)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
    assert "Traceback" not in output
    assert docker_leftovers() == before, output[-2000:]
    (log_file,) = (tmp_path / "logs").glob("*.eval")
    assert read_eval_log(str(log_file), header_only=True).status == "cancelled"


def test_a_kept_proxy_goes_with_inspect_sandbox_cleanup(
    sandbox_image: str, egress_image: str, scripted: Play, tmp_path: Path
) -> None:
    before = docker_leftovers()
    scripted([Entry("", [{"submit": "x"}])])
    args = [f"dataset_path={GAIA_LEAK}", f"image={sandbox_image}", "block_answer_sources=true"]
    run = subprocess.run(
        [*eval_command(args, tmp_path / "logs"), "--no-sandbox-cleanup"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    kept = docker_leftovers() - before
    assert sum(k.startswith("container:") for k in kept) == 4, kept  # three sandboxes, the proxy
    assert sum(k.startswith("network:") for k in kept) == 2, kept  # internal, and the way out
    cleanup = subprocess.run(
        [inspect_cli(), "sandbox", "cleanup", "gaia-docker"], capture_output=True, text=True
    )
    assert cleanup.returncode == 0, cleanup.stderr
    assert docker_leftovers() <= before


def test_two_runs_at_once_each_have_their_own_proxy(
    sandbox_image: str, egress_image: str, internet: StandIns, scripted: Play, tmp_path: Path
) -> None:
    before = docker_leftovers()
    scripted(
        [
            Entry(
                "",
                [
                    {"bash": f"{WAIT_FOR_STANDINS}; echo proxy=$HTTPS_PROXY; sleep 4"},
                    {"submit": "x"},
                ],
            )
        ]
    )
    pellbrook = "df237641-72ca-50d9-8a8e-d1261dad439d"
    args = [
        f"dataset_path={GAIA_LEAK}",
        f"image={sandbox_image}",
        "block_answer_sources=true",
        f"ids={pellbrook}",
    ]
    with internet.attaching():
        runs = [
            subprocess.Popen(
                eval_command(args, tmp_path / f"logs{n}"),
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                cwd=tmp_path,
            )
            for n in (1, 2)
        ]
        outputs = [run.communicate(timeout=300)[0] for run in runs]
    for run, output in zip(runs, outputs, strict=True):
        assert run.returncode == 0, output[-2000:]
    assert len(internet.attached) == 2, "two proxies"
    proxies = set()
    for n in (1, 2):
        (log_file,) = (tmp_path / f"logs{n}").glob("*.eval")
        (sample,) = read_eval_log(str(log_file)).samples or []
        (line,) = [x for x in _outputs(sample)[0].splitlines() if x.startswith("proxy=")]
        proxies.add(line)
    assert len(proxies) == 2, proxies
    clients = {r["client"] for r in internet.requests()}
    assert len(clients) == 2, "each run's sandbox reached the stand-ins through its own proxy"
    assert docker_leftovers() == before
