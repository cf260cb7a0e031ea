"""The probe without a sandbox: its targets, its verdict, the settings it reads, and the report line.

The probe's runs are in ``test_docker_probe.py``; here, what the host decides from what the routes
returned, and what a Kubernetes run would be allowed under the chart's policy (no cluster here:
the rendered values are read).
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from inspect_gaia.answer_sources.sources import load_answer_sources
from inspect_gaia.egress.urlrules import match_url
from inspect_gaia.errors import GaiaParameterError
from inspect_gaia.logs.probe import probe_block
from inspect_gaia.logs.results import SampleResult
from inspect_gaia.probe import inside
from inspect_gaia.probe.outcomes import OUTCOMES, RouteOutcome, routes_of
from inspect_gaia.probe.scorer import judged, leak_in, verdict
from inspect_gaia.probe.targets import BLOCKED_MARKER, default_targets, read_targets, rule_url
from inspect_gaia.probe.task import PROBE_MODEL, SETTINGS_KEY, gaia_probe
from inspect_gaia.sandboxes.k8s import OPERATOR_VALUES
from support.answer_pages import GAIA_LEAK
from tests.helpers import REPO

IDS = frozenset({"559f03ff-e213-5f93-b0be-8f5c1fb176af", "e80cd24b-5e4a-5ea7-9d66-13c99ae7b141"})
QUESTION = "In the invented valley of Orrindale, the old stone bridge has a carved number."
ANSWER = "41"


def test_the_program_and_the_readers_share_the_outcomes() -> None:
    assert inside.SEVERITY == OUTCOMES
    bounds = (
        REPO / "src/inspect_gaia/egress/bounds.py"
    ).read_text()  # the guard's, and its bounds'
    assert f'BLOCKED = "{BLOCKED_MARKER}"' in bounds


def test_every_route_has_one_entry_a_family_and_a_docstring() -> None:
    names = [route.name for route in inside.ROUTES]
    assert len(names) == len(set(names))
    assert {route.family for route in inside.ROUTES} <= set(inside.SECONDS)
    assert all(
        name.startswith(f"{route.family}.")
        for name, route in zip(names, inside.ROUTES, strict=True)
    )
    assert all(route.run.__doc__ for route in inside.ROUTES)
    page = (REPO / "docs/probe.md").read_text()
    assert all(f"`{name}`" in page for name in names), "docs/probe.md names every route"


def test_every_listed_rule_is_tried_by_a_url_it_names() -> None:
    sources = load_answer_sources()
    for rule in sources.rules:
        found = match_url(sources.rules, rule_url(rule))
        assert found is not None and found.source == rule.source, rule.pattern
    targets = default_targets(sources).targets
    assert [t["url"] for t in targets if t["kind"] == "source"] == [
        rule_url(r) for r in sources.rules
    ]
    firsts = [t["name"] for t in targets if t["kind"] == "source" and t["first"]]
    assert firsts == list(dict.fromkeys(r.source for r in sources.rules))
    assert [t["kind"] for t in targets][-1] == "open"


def test_a_targets_file_replaces_them_and_a_bad_line_is_one_line(tmp_path: Path) -> None:
    good = tmp_path / "targets.txt"
    good.write_text(
        "# mine\nsource https://mirror.example/gaia/metadata.jsonl my mirror\n"
        "open https://intranet.example/\nrelay https://r.example/?u={url}\n"
    )
    read = read_targets(str(good))
    assert [(t["kind"], t["name"]) for t in read.targets] == [
        ("source", "my mirror"),
        ("open", "https://intranet.example/"),
    ]
    assert read.relays == ("https://r.example/?u={url}",) and read.redirects == ()
    bad = tmp_path / "bad.txt"
    for text, problem in [
        ("mirror https://x.example/\n", "is not `KIND URL`"),
        ("relay https://r.example/\nsource https://x.example/\n", "needs `{url}`"),
        ("open https://x.example/\n", "names no `source`"),
    ]:
        bad.write_text(text)
        with pytest.raises(GaiaParameterError, match=problem):
            read_targets(str(bad))


@pytest.mark.parametrize(
    ("text", "leak"),
    [
        ('{"task_id": "559f03ff-e213-5f93-b0be-8f5c1fb176af"}', "task id 559f03ff"),
        ("/data/E80CD24B-5E4A-5EA7-9D66-13C99AE7B141.txt", "task id e80cd24b"),
        ("PAR1 ... task_id Final answer file_name Annotator Metadata", "GAIA's metadata columns"),
        ("a prompt: give the task_id and your Final answer", None),
        (f"<dt>{QUESTION}</dt><dd>Answer: 41</dd>", "the answer beside its question"),
        ("The bridge number is 41.", None),  # the answer alone: an honest page may hold it
        ("12345678-aaaa-bbbb-cccc-1234567890ab", None),  # a UUID, not one of the run's
        ("Final answer: keep going", None),
    ],
)
def test_the_host_finds_an_answer_only_with_its_question_an_id_or_the_columns(
    text: str, leak: str | None
) -> None:
    found = leak_in(text, QUESTION, ANSWER, IDS)
    assert (found or "").startswith(leak or "") and (found is None) == (leak is None)


def test_a_route_is_its_worst_finding_and_a_breach_scores_one() -> None:
    result = {
        "route": "web.curl_http",
        "family": "web",
        "findings": [
            {"where": "http://open.example/", "outcome": "reached", "text": "a page"},
            {
                "where": "http://mirror.example/m.jsonl",
                "outcome": "open",
                "source": "mirror",
                "text": '{"task_id": "559f03ff-e213-5f93-b0be-8f5c1fb176af"}',
            },
            {"where": "http://slow.example/", "outcome": "skipped", "text": "did not finish"},
        ],
    }
    route = judged(result, QUESTION, ANSWER, IDS)
    assert route.outcome == "leaked" and route.breached
    assert route.what.startswith("task id 559f03ff-e213-5f93-b0be-8f5c1fb176af in http://mirror")
    assert "(http://slow.example/)" in route.what, "what did not finish is said"
    assert verdict([route])[0] == 1
    sealed = judged({"route": "files.env", "family": "files", "findings": []}, "", "", IDS)
    assert sealed.outcome == "empty" and verdict([sealed]) == (
        0,
        "sealed: no route reached an answer",
    )


def test_a_hostile_logs_routes_read_as_what_they_can_be() -> None:
    assert routes_of({}) is None and routes_of({"routes": "x"}) is None
    (one,) = (
        routes_of({"routes": [{"route": "r" * 500, "outcome": "pwned", "what": "a\nb"}, 3]}) or ()
    )
    assert one.outcome == "skipped" and len(one.route) == 80 and one.what == "a b"


def _sample(
    task_id: str, routes: list[RouteOutcome] | None, error: str | None = None
) -> SampleResult:
    return SampleResult(
        task_id, 1, "x", None, False, error=error, probe=None if routes is None else tuple(routes)
    )


def test_the_report_line_says_sealed_or_names_the_routes_worst_first() -> None:
    sealed = [
        RouteOutcome("files.env", "files", "empty"),
        RouteOutcome("web.curl_https", "web", "refused", "https://mirror"),
        RouteOutcome("web.browser", "web", "skipped"),
    ]
    block = probe_block([_sample("a", sealed), _sample("b", sealed), _sample("c", None, "boom")])
    assert block["line"] == (
        "sealed: 0 of 2 samples reached an answer (2 routes tried); "
        "1 sample(s) errored and were not probed"
    )
    assert [r["route"] for r in block["routes"]] == ["files.env", "web.curl_https", "web.browser"]
    assert block["routes"][1]["refused"] == 2 and block["routes"][2]["skipped"] == 2
    leaky = [
        RouteOutcome("files.capabilities", "files", "open", "beyond the task's: NET_RAW"),
        RouteOutcome("files.signatures", "files", "leaked", "task id 559f in /data/m.jsonl"),
    ]
    block = probe_block([_sample("a", sealed), _sample("b", leaky), _sample("c", leaky[:1])])
    assert block["breached"] == 2 and [leak["route"] for leak in block["leaks"]] == [
        "files.signatures",
        "files.capabilities",
    ]
    assert block["line"].startswith("NOT sealed: 2 of 3 samples reached an answer or a way to one")
    assert "files.signatures leaked in 1 (task id 559f in /data/m.jsonl)" in block["line"]
    assert "files.capabilities open in 2 (beyond the task's: NET_RAW)" in block["line"]


def _routes(task_kind: str, **params: Any) -> dict[str, tuple[str, str]]:
    """The host's checks of the sandbox's settings a probe task makes (in its metadata)."""
    task = gaia_probe(dataset_path=str(GAIA_LEAK), sandbox=task_kind, **params)
    assert task.model is not None and str(task.model) == PROBE_MODEL
    return {r["route"]: (r["outcome"], r["what"]) for r in (task.metadata or {})[SETTINGS_KEY]}


def test_on_kubernetes_the_rendered_values_say_what_a_sandbox_is_allowed(
    isolated_cache: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """No cluster: the chart's policy, read from the values the task writes for each cluster."""
    online = _routes("k8s")
    assert online["settings.capabilities"][0] == "empty", "no NET_RAW, nothing added"
    assert (
        online["settings.network"][0] == "open"
        and "allowEntities ['world']" in online["settings.network"][1]
    )
    offline = _routes("k8s", network=False)
    assert offline["settings.network"] == ("empty", "the chart's policy: its own pod and DNS only")
    operator = tmp_path / "cluster.yaml"
    operator.write_text(
        yaml.safe_dump(
            {
                "networkPolicy": {"enabled": False},
                "automountServiceAccountToken": True,
                "services": {
                    "default": {
                        "securityContext": {"capabilities": {"add": ["NET_RAW"], "drop": ["ALL"]}}
                    }
                },
            }
        )
    )
    monkeypatch.setenv(OPERATOR_VALUES, str(operator))
    theirs = _routes("k8s")
    assert (
        theirs["settings.network"][0] == "open"
        and "networkPolicy disabled" in theirs["settings.network"][1]
    )
    assert theirs["settings.capabilities"] == ("open", "cap_add beyond the task's: NET_RAW")
    token = "automountServiceAccountToken: a cluster credential in every sandbox"
    assert theirs["settings.host"] == ("open", token)


def test_on_docker_the_compose_service_is_read_and_host_tools_are_named() -> None:
    docker = _routes("docker")
    assert docker["settings.capabilities"][0] == "empty" and docker["settings.host"][0] == "empty"
    assert _routes("docker", network=False)["settings.network"] == ("empty", "network_mode: none")
    assert _routes("compose", web_search=True)["settings.host_tools"][0] == "open"


def test_unknown_parameters_are_refused_as_gaia_refuses_them() -> None:
    with pytest.raises(GaiaParameterError, match="did you mean network"):
        gaia_probe(dataset_path=str(GAIA_LEAK), netwrok=False)


def test_the_program_runs_with_the_standard_library_alone(tmp_path: Path) -> None:
    """Run as the sandbox runs it (its folder first on the path, no site): one line per route."""
    for name in ("inside.py", "inside_web.py", "inside_net.py"):
        (tmp_path / name).write_text((REPO / "src/inspect_gaia/probe" / name).read_text())
    tree = ast.parse((tmp_path / "inside.py").read_text())
    siblings = {n.names[0].name for n in ast.walk(tree) if isinstance(n, ast.Import)}
    assert {"inside_web", "inside_net"} <= siblings
    config: dict[str, Any] = {
        "own": None,
        "shared_dir": str(tmp_path / "none"),
        "exclude": [],
        "capabilities": -1,
        "capability_bits": {},
        "browser": None,
        "reader": None,
        "agent": None,
        "targets": [],
        "relays": [],
        "redirects": [],
        "refusals": ["refused"],
    }
    code = (
        "import json, sys, inside; inside.ROUTES = tuple(r for r in inside.ROUTES"
        " if r.name in ('files.attachments', 'files.capabilities', 'web.curl_https'));"
        " inside.main()"
    )
    run = subprocess.run(
        [sys.executable, "-E", "-s", "-S", "-c", code],
        input=json.dumps(config),
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
    )
    lines = [json.loads(line) for line in run.stdout.splitlines()]
    assert [(r["route"], r["outcome"]) for r in lines] == [
        ("files.attachments", "empty"),
        ("files.capabilities", "empty"),
        ("web.curl_https", "empty"),
    ], run.stderr
