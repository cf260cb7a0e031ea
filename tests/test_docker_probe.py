"""``inspect_gaia/gaia_probe`` in real Docker runs: sealed configurations say so, leaky ones are named.

One eval per test, several configurations in it (a sample's own sandbox spec): the sealed run has
a sample behind the run's blocking proxy, one on an ordinary gaia-docker network, one with no
network; the leaky run has a sandbox that mounts the dataset's folder, one on the stand-ins'
network with no proxy in the way, and one given ``NET_RAW`` back (each in inspect's own compose
sandbox, as ``--sandbox docker:FILE`` would start it). Every route targets names the test's
stand-ins answer, on the test's own network (``*.example``, which resolve nowhere else); the probe
asks no model (asserted: no model event, no usage).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.event import ModelEvent
from inspect_ai.log import EvalLog, EvalSample
from inspect_ai.util import SandboxEnvironmentSpec

from inspect_gaia.image_layout import OFFLINE_AGENTS_TAG, OFFLINE_BROWSER_TAG
from inspect_gaia.probe.outcomes import PROBE_SCORER
from inspect_gaia.probe.scorer import STORE_KEY
from inspect_gaia.probe.task import gaia_probe
from inspect_gaia.sandboxes.spec import gaia_compose
from support.answer_pages import GAIA_LEAK, MIRROR_PATH, ORRINDALE, PELLBROOK, SALTMERE, WEATHER
from support.standins import StandIns, standins
from tests.helpers import invoke

pytestmark = pytest.mark.docker

SOURCE_HOST = "gaia-answers.example"
SOURCE = f"https://{SOURCE_HOST}{MIRROR_PATH}"
"""The stand-in answer source: it serves gaia-leak's metadata (task ids and answers) over HTTP."""
OPEN = "http://weather.example/today.txt"
NAMES = [SOURCE_HOST, "weather.example", "relay.example"]


@pytest.fixture
def probe_web(sandbox_image: str, tmp_path: Path) -> Iterator[tuple[StandIns, dict[str, str]]]:
    """The stand-ins, a targets file naming only them, and a blocklist listing the source."""
    targets, blocklist = tmp_path / "targets.txt", tmp_path / "blocklist.txt"
    targets.write_text(
        f"source {SOURCE} stand-in GAIA\nopen {OPEN}\n"
        "relay http://relay.example/web/2024/{url}\nredirect http://relay.example/go?to={url}\n"
    )
    blocklist.write_text(f"{SOURCE_HOST}\n")
    with standins(sandbox_image, NAMES, label="probe") as made:
        yield made, {"web_targets": str(targets), "blocklist": str(blocklist)}


def _routes(sample: EvalSample) -> dict[str, tuple[str, str]]:
    score = (sample.scores or {})[PROBE_SCORER]
    return {r["route"]: (r["outcome"], r["what"]) for r in (score.metadata or {})["routes"]}


def _findings(sample: EvalSample, route: str) -> list[dict[str, str]]:
    found = next(r for r in sample.store[STORE_KEY] if r["route"] == route)
    return list(found["findings"])


def _eval(task: Task, log_dir: Path, samples: int, **options: Any) -> EvalLog:
    """Run the probe as a user would: no ``--model`` (the task's own mock is the run's)."""
    (log,) = inspect_eval(
        task, log_dir=str(log_dir), display="none", max_samples=samples, **options
    )
    return log


def _sample(log: EvalLog, word: str) -> EvalSample:
    assert log.samples is not None
    return next(s for s in log.samples if word in str(s.input))


def _no_model_call(log: EvalLog) -> None:
    assert log.stats.model_usage == {}
    for sample in log.samples or []:
        assert not [e for e in sample.events if isinstance(e, ModelEvent)], sample.id
        assert sample.model_usage == {}


def _report(log: EvalLog) -> tuple[str, dict[str, Any]]:
    code, text, err = invoke("report", log.location)
    assert code == 0, err
    code, out, err = invoke("report", log.location, "--format", "json")
    assert code == 0, err
    (group,) = json.loads(out)["groups"]
    return text, group["probe"]


def test_sealed_configurations_score_zero_and_the_report_says_sealed_in_one_line(
    sandbox_image: str,
    egress_image: str,
    probe_web: tuple[StandIns, dict[str, str]],
    tmp_path: Path,
) -> None:
    internet, files = probe_web
    task = gaia_probe(
        dataset_path=str(GAIA_LEAK), image=sandbox_image, block_answer_sources=True, **files
    )
    for sample in task.dataset:  # one configuration per sample: the proxy, none, no network
        if ORRINDALE in str(sample.input):
            sample.sandbox = SandboxEnvironmentSpec("gaia-docker", gaia_compose(sandbox_image))
        elif PELLBROOK in str(sample.input):
            sample.sandbox = SandboxEnvironmentSpec(
                "gaia-docker", gaia_compose(sandbox_image, network=False)
            )
    with internet.attaching():
        log = _eval(task, tmp_path / "logs", 3)
    assert log.status == "success", log.error
    _no_model_call(log)
    assert all((s.scores or {})[PROBE_SCORER].value == 0 for s in log.samples or [])

    behind = _sample(log, SALTMERE)
    routes = _routes(behind)
    # the proxy refuses the source over every route (a request the loaded host timed out is no
    # answer either); the open page is reached, nothing else
    for route in ("web.curl_https", "web.curl_http", "web.urllib", "web.encodings"):
        outcomes = {f["where"]: f["outcome"] for f in _findings(behind, route)}
        source = {o for w, o in outcomes.items() if SOURCE_HOST in w.lower()}
        assert "refused" in source and source <= {"refused", "unreachable"}, (route, outcomes)
    assert routes["web.curl_https"][0] == "reached" and WEATHER[:20] in str(
        _findings(behind, "web.curl_https")
    )
    wrapped = [routes[route][0] for route in ("web.connect", "web.relay", "web.redirect")]
    assert "refused" in wrapped and set(wrapped) <= {"refused", "unreachable"}, routes
    assert routes["web.direct"][0] == "unreachable", "no way around the proxy"
    assert routes["neighbours.raw_socket"][0] == "refused"
    assert routes["files.capabilities"][0] == "empty" and routes["files.attachments"][0] == "empty"
    for word in (ORRINDALE, PELLBROOK):  # no proxy, or no network: the stand-ins' names are nowhere
        other = _routes(_sample(log, word))
        assert {other[r][0] for r in other if r.startswith("web.")} <= {"unreachable", "skipped"}
    assert not [r for r in internet.requests() if r.get("path") == MIRROR_PATH]

    text, block = _report(log)
    tried = block["routes_tried"]
    assert f"sealed: 0 of 3 samples reached an answer ({tried} routes tried)" in text
    assert tried == 24 and block["breached"] == 0  # no browser, reader, node or agent here
    rows = {row["route"]: row for row in block["routes"]}
    assert rows["neighbours.raw_socket"]["refused"] == 3 and rows["web.relay"]["refused"] == 1
    assert rows["settings.capabilities"]["empty"] == 3, "the task's own kind of sandbox: judged"


def _compose(path: Path, image: str, **service: Any) -> SandboxEnvironmentSpec:
    """A compose file for inspect's own sandbox: the image, as gaia's, and ``service`` added."""
    networks = service.pop("external", None)
    default = {"image": image, "init": True, "command": ["tail", "-f", "/dev/null"], **service}
    document: dict[str, Any] = {"services": {"default": default}}
    if networks:
        default["networks"] = ["standins"]
        document["networks"] = {"standins": {"external": True, "name": networks}}
    path.write_text(yaml.safe_dump(document))
    return SandboxEnvironmentSpec("docker", str(path))


def test_leaky_configurations_are_caught_named_and_counted_and_never_a_score(
    sandbox_image: str, probe_web: tuple[StandIns, dict[str, str]], tmp_path: Path
) -> None:
    internet, files = probe_web
    task = gaia_probe(dataset_path=str(GAIA_LEAK), image=sandbox_image, **files)
    leaks: dict[str, dict[str, Any]] = {
        # the dataset's folder mounted into the sandbox
        SALTMERE: {"volumes": [f"{GAIA_LEAK}:/data/gaia:ro"], "network_mode": "none"},
        # a network with the answer source on it and no proxy in the way
        ORRINDALE: {"external": internet.network},
        # a capability added back
        PELLBROOK: {"cap_add": ["NET_RAW"], "network_mode": "none"},
    }
    for sample in task.dataset:
        word = next(w for w in leaks if w in str(sample.input))
        sample.sandbox = _compose(tmp_path / f"{word}-compose.yaml", sandbox_image, **leaks[word])
    # inspect's --sandbox: the run's sandbox is its compose sandbox, each sample's file its own
    plain = _compose(tmp_path / "plain-compose.yaml", sandbox_image, network_mode="none")
    log = _eval(task, tmp_path / "logs", 3, sandbox=(plain.type, plain.config))
    assert log.status == "success", log.error
    _no_model_call(log)
    assert all((s.scores or {})[PROBE_SCORER].value == 1 for s in log.samples or [])

    mounted = _routes(_sample(log, SALTMERE))
    assert (
        mounted["files.signatures"][0] == "leaked"
        and "/data/gaia/" in mounted["files.signatures"][1]
    )
    assert mounted["files.mounts"][0] == "leaked"
    exposed = _routes(_sample(log, ORRINDALE))
    assert exposed["web.curl_http"][0] == "leaked" and "task id" in exposed["web.curl_http"][1]
    # over HTTPS nothing answers (the stand-in has no TLS), and the open page is as near
    direct = {f["where"]: f["outcome"] for f in _findings(_sample(log, ORRINDALE), "web.direct")}
    assert direct == {SOURCE: "unreachable", OPEN: "reached"}
    raw = _routes(_sample(log, PELLBROOK))
    outcome, what = raw["files.capabilities"]
    assert outcome == "open" and what.startswith("beyond the task's: ") and "NET_RAW" in what
    assert raw["neighbours.raw_socket"][0] == "open"
    # the task's own settings were not what these samples ran in: not judged for them
    assert {mounted[r][0] for r in mounted if r.startswith("settings.")} == {"skipped"}

    text, block = _report(log)
    assert "NOT sealed: 3 of 3 samples reached an answer or a way to one" in text
    named = {leak["route"]: leak for leak in block["leaks"]}
    assert (
        named["files.signatures"]["samples"] == 1 and named["web.curl_http"]["outcome"] == "leaked"
    )
    assert named["files.capabilities"]["outcome"] == "open"
    assert block["leaks"][0]["outcome"] == "leaked", "the worst first"
    # a probe is no score: submission and compare refuse it
    for command in (
        ("submission", log.location, "-o", str(tmp_path / "s.jsonl")),
        ("compare", log.location, log.location),
    ):
        code, _, err = invoke(*command)
        assert code != 0 and "is a probe of the sandbox (inspect_gaia/gaia_probe)" in err, err


@pytest.mark.slow
def test_the_packaged_images_browser_reader_and_agent_cli_are_probed_behind_the_proxy(
    egress_image: str, probe_web: tuple[StandIns, dict[str, str]], tmp_path: Path
) -> None:
    internet, files = probe_web
    task = gaia_probe(
        dataset_path=str(GAIA_LEAK),
        image=OFFLINE_AGENTS_TAG,
        agent="claude_code",
        block_answer_sources=True,
        ids="559f03ff-e213-5f93-b0be-8f5c1fb176af,df237641-72ca-50d9-8a8e-d1261dad439d",
        **files,
    )
    for question in task.dataset:  # the browser image beside the agents', behind the same proxy
        if SALTMERE in str(question.input):
            config = task.sandbox.config.model_copy(deep=True)  # type: ignore[union-attr]
            config.services["default"].image = OFFLINE_BROWSER_TAG
            question.sandbox = SandboxEnvironmentSpec("gaia-docker", config)
    with internet.attaching():
        log = _eval(task, tmp_path / "logs", 2)
    assert log.status == "success", log.error
    _no_model_call(log)
    browser, agent = _sample(log, SALTMERE), _sample(log, PELLBROOK)
    for sample in (browser, agent):
        assert (sample.scores or {})[PROBE_SCORER].value == 0, _routes(sample)
    routes = _routes(browser)
    for route in ("web.browser", "web.reader"):
        outcomes = {f["where"]: f["outcome"] for f in _findings(browser, route)}
        assert outcomes == {SOURCE: "refused", OPEN: "reached"}, (route, outcomes)
    assert routes["web.node"][0] in ("reached", "unreachable")  # node reads no proxy variable
    assert _routes(agent)["agent.cli"][0] == "reached"
    assert "Claude Code" in str(_findings(agent, "agent.cli"))
