"""Every -T value parsed and validated once: spellings accepted, one-line refusals."""

from __future__ import annotations

import ast
import importlib.util
import inspect
import os
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from inspect_gaia import GaiaParameterError, gaia
from inspect_gaia._params import parse_params as parse_raw
from inspect_gaia._values import MCP_SHORTCUTS, parse_ids, parse_levels, parse_mcp_servers
from inspect_gaia.egress.spec import EgressSpec
from inspect_gaia.options import GaiaParams, SandboxLimits
from inspect_gaia.task import parameter_names
from tests.helpers import parse_params, run_eval_cli
from tests.scenario import GAIA_TINY


@pytest.mark.parametrize(
    ("value", "levels"),
    [
        (None, (1, 2, 3)),
        (1, (1,)),
        ("2", (2,)),
        ("1,3", (1, 3)),
        ("[3, 1]", (1, 3)),
        ([2, 1], (1, 2)),
        ((1, 2, 3), (1, 2, 3)),
        (2.0, (2,)),
        ("3.0", (3,)),
    ],
)
def test_parse_levels(value: Any, levels: tuple[int, ...]) -> None:
    assert parse_levels(value) == levels


@pytest.mark.parametrize("value", [4, 0, "4", "one", [1, 5], "", [], True, 2.5, "1.5", [None]])
def test_parse_levels_rejects(value: Any) -> None:
    with pytest.raises(GaiaParameterError, match="level must"):
        parse_levels(value)


def test_parse_ids() -> None:
    assert parse_ids(None) is None
    assert parse_ids("a") == ("a",)
    assert parse_ids("a, b,a") == ("a", "b")
    assert parse_ids(["x", "y"]) == ("x", "y")
    with pytest.raises(GaiaParameterError, match="ids is empty"):
        parse_ids([])


def test_parse_mcp_servers() -> None:
    assert parse_mcp_servers(None) == ()
    assert parse_mcp_servers("fetch") == (MCP_SHORTCUTS["fetch"],)
    assert parse_mcp_servers(["fetch", f"{sys.executable} -m some_server --flag 'a b'"]) == (
        MCP_SHORTCUTS["fetch"],
        (sys.executable, "-m", "some_server", "--flag", "a b"),
    )
    assert parse_mcp_servers("sh -c 'exec true'") == (("sh", "-c", "exec true"),)  # on PATH


def test_gaia_and_parse_take_the_same_parameters() -> None:
    parse = inspect.signature(parse_raw).parameters
    assert list(parameter_names()) == list(parse)
    # besides them, gaia() takes every other name, to refuse typos itself (_param_names)
    (rest,) = set(inspect.signature(gaia).parameters) - set(parse)
    assert inspect.signature(gaia).parameters[rest].kind is inspect.Parameter.VAR_KEYWORD
    # no default in parse: one gaia() does not pass on is a type error, not a silent default
    assert all(p.kind is p.KEYWORD_ONLY and p.default is p.empty for p in parse.values())


def test_gaia_passes_each_parameter_on_as_itself() -> None:
    source = textwrap.dedent(inspect.getsource(inspect.unwrap(gaia)))
    (call,) = [
        node
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call) and ast.unparse(node.func) == "parse_params"
    ]
    assert [(k.arg, ast.unparse(k.value)) for k in call.keywords] == [
        (name, name) for name in parameter_names()
    ]


def test_defaults() -> None:
    params = parse_params()
    # gaia()'s defaults, parsed, are GaiaParams' own: the two cannot drift apart
    assert params == GaiaParams()
    assert (
        params.dataset.levels,
        params.dataset.split,
        params.dataset.hub,
        params.sandbox.kind,
    ) == (
        (1, 2, 3),
        "validation",
        "huggingface",
        "docker",
    )
    assert params.sandbox.limits == SandboxLimits(cpus=2.0, memory="4g", pids=1024, disk=None)
    assert params.agent.tools == ["bash", "submit"]
    assert not params.dataset.multimodal and not params.agent.view_file


# (-T values, what the one line must say): each is one of the refusals `inspect eval` prints.
REFUSALS: list[tuple[dict[str, Any], str]] = [
    ({"level": 4}, "level must be 1, 2 or 3"),
    ({"level": "one"}, "level must be 1, 2 or 3"),
    ({"level": [1, 7]}, "level must be 1, 2 or 3"),
    ({"split": "dev"}, "split must be one of validation, test"),
    ({"hub": "kaggle"}, "hub must be one of huggingface, modelscope"),
    ({"ids": []}, "ids is empty"),
    ({"dataset_path": ""}, "dataset_path must be a non-empty string"),
    ({"command_timeout": 0}, "command_timeout must be a whole number ≥ 1"),
    ({"command_timeout": "soon"}, "command_timeout must be a whole number ≥ 1"),
    ({"max_attempts": -1}, "max_attempts must be a whole number ≥ 1"),
    ({"network": "maybe"}, "network must be true or false"),
    ({"python": 1}, "python must be true or false"),
    ({"multimodal": "yes"}, "multimodal must be true or false"),
    ({"image": ""}, "image must name a Docker image"),
    ({"memory": "lots"}, "-T memory=lots is not a size Docker accepts — give one from 6m"),
    ({"disk": "big"}, "-T disk=big is not a size Docker accepts — give one up to 8388607t"),
    ({"cpus": 0}, "-T cpus=0 is not a CPU limit Docker accepts — give a number of CPUs from 0.01"),
    ({"cpus": True}, "-T cpus=True is not a CPU limit Docker accepts"),
    ({"pids": 2}, "-T pids=2 is not a process limit Linux accepts — give a whole number from 16"),
    ({"sandbox": "podman"}, "sandbox must be one of docker, compose, k8s"),
    ({"mcp_servers": [""]}, "mcp_servers has an empty entry"),
    # Issue #17 finding 8: a command that does not exist failed every sample without its name.
    (
        {"mcp_servers": "no-such-mcp-server --port 1"},
        "-T mcp_servers=no-such-mcp-server --port 1: no executable command "
        "'no-such-mcp-server' on PATH — install it, give its full path",
    ),
    ({"mcp_servers": ["fetch", "/no/such/server"]}, "no executable command '/no/such/server'"),
    ({"mcp_servers": "server 'unclosed"}, "is not a command line (No closing quotation)"),
    # Issue #10 finding 5: the test split has no answers to check a second attempt against.
    (
        {"split": "test", "max_attempts": 2},
        "max_attempts=2 needs answers to check each attempt against",
    ),
    # Issue #10 finding 9: MCP servers run on the host, with its network.
    ({"network": False, "mcp_servers": "fetch"}, "mcp_servers run on the host"),
    ({"network": False, "web_search": True}, "web_search reaches the internet"),
    # Issue #33: a digest that is not one would fail every sample's start, far from its cause.
    ({"image": "python@sha256:abc"}, "-T image=python@sha256:abc is not an image reference"),
    ({"image": "python:3.11 slim"}, "an image reference has no spaces"),
    ({"image": "python:3.11@sha256:" + "A" * 64}, "64 lower-case hex digits"),
    ({"browser": "yes"}, "browser must be true or false"),
    ({"network": False, "browser": True}, "browser reaches the web through the sandbox's network"),
    ({"network": False, "web_reader": True}, "web_reader reaches the web through the sandbox"),
    ({"web_reader": True, "mcp_servers": "fetch"}, "both offer a tool named fetch"),
    ({"web_record": "body"}, "web_record must be true, false or bodies"),
    ({"network": False, "web_record": "bodies"}, "web_record needs network=true"),
]


@pytest.mark.parametrize(("raw", "message"), REFUSALS, ids=[str(r) for r, _ in REFUSALS])
def test_refusals_are_one_line(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(GaiaParameterError) as caught:
        parse_params(**raw)
    text = str(caught.value)
    assert message in text and "\n" not in text


# Issue #17 finding 4: limits that passed validation but Docker refuses failed every sample at
# its start. (-T name, value as typed, what reaches Docker or None when refused); the values
# Docker itself refuses are checked against a real engine in test_sandbox.py.
DOCKER_LIMITS: list[tuple[str, object, object]] = [
    ("memory", "1k", None),  # Docker: "Minimum memory limit allowed is 6MB"
    ("memory", "5m", None),
    ("memory", "6291455", None),  # one byte short of 6 MiB
    ("memory", "6m", "6m"),
    ("memory", "6291456b", "6m"),
    ("memory", "512M", "512m"),
    ("memory", "1.5g", "1536m"),
    ("memory", "5000t", "5120000g"),  # docker-py has no `t`: it gets gigabytes
    ("memory", "8388608t", None),  # past a signed 64-bit byte count
    ("memory", "1e3", None),  # docker compose has no exponents
    ("memory", "1_000m", None),
    ("memory", 512, None),  # YAML's 512 is bytes
    ("disk", "10GB", "10g"),
    ("disk", "1536k", "1536k"),
    ("disk", "0", None),
    ("cpus", 0.001, None),  # the kernel refuses the CFS quota: no sample starts
    ("cpus", 0.009, None),
    ("cpus", 0.01, 0.01),
    ("cpus", 1, 1.0),
    ("cpus", float("nan"), None),
    ("cpus", float("inf"), None),
    ("pids", 15, None),  # ours: too few for the sandbox's own shell
    ("pids", 16, 16),
    ("pids", 4_194_304, 4_194_304),
    ("pids", 4_194_305, None),  # Linux's PID_MAX_LIMIT: the kernel refuses pids.max
]


@pytest.mark.parametrize(("name", "value", "docker"), DOCKER_LIMITS)
def test_limits_are_checked_against_what_docker_accepts(
    name: str, value: object, docker: object
) -> None:
    if docker is None:
        with pytest.raises(GaiaParameterError) as caught:
            parse_params(**{name: value})
        text = str(caught.value)
        assert text.startswith(f"-T {name}={value} is not a ") and "\n" not in text
        assert "give " in text and "or null for none" in text
    else:
        assert getattr(parse_params(**{name: value}).sandbox.limits, name) == docker


DOCKER_REFUSES: set[tuple[str, object]] = {
    ("memory", "1k"),
    ("memory", "5m"),
    ("memory", "6291455"),
    ("memory", "5000t"),
    ("cpus", 0.001),
    ("cpus", 0.009),
    ("pids", 4_194_305),
}
"""The rows refused above because Docker (or the kernel under it) refuses them, as typed."""


@pytest.mark.docker
def test_the_limits_table_is_what_docker_does(sandbox_image: str) -> None:
    """Each value refused for Docker's sake fails to start a container as typed; each value
    accepted starts one as it reaches Docker (the path gaia-docker's containers take)."""
    from inspect_gaia.sandboxes.docker import client
    from inspect_gaia.sandboxes.docker.service import create_kwargs, service_config
    from inspect_gaia.sandboxes.spec import gaia_compose

    def starts(limits: SandboxLimits) -> bool:
        kwargs = create_kwargs(service_config(gaia_compose(sandbox_image, limits=limits)), None)
        try:
            container = client.start_container(
                f"gaia-test-limits-{os.getpid()}", kwargs, {"inspect_gaia.test": "limits"}
            )
        except Exception:
            return False
        client.remove_container(container)
        return True

    for name, value, docker in DOCKER_LIMITS:
        if docker is not None and name != "disk":  # disk: test_docker_engine, test_sandbox
            assert starts(parse_params(**{name: value}).sandbox.limits), (name, value)
        elif (name, value) in DOCKER_REFUSES:
            assert not starts(SandboxLimits(**{name: value})), (name, value)  # type: ignore[arg-type]


def test_max_attempts_above_one_is_fine_on_validation() -> None:
    assert parse_params(max_attempts=2).agent.max_attempts == 2


def test_missing_optional_packages_name_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name in ("mcp", "k8s_sandbox") else real(name, *a),
    )
    with pytest.raises(GaiaParameterError, match=r"pip install 'inspect-gaia\[mcp\]'"):
        parse_params(mcp_servers="fetch")
    with pytest.raises(GaiaParameterError, match=r"pip install 'inspect-gaia\[k8s\]'"):
        parse_params(sandbox="k8s")
    # the in-sandbox tools are reached through the relay in the sandbox: no host MCP client
    assert "browser_navigate" in parse_params(browser=True, web_reader=True).agent.tools


def test_the_in_sandbox_web_tools_go_with_blocking() -> None:
    """Unlike the host-side mcp_servers and the provider's web_search, the browser and the
    reader run in the sandbox, behind the run's proxy: allowed with block_answer_sources."""
    params = parse_params(browser=True, web_reader=True, block_answer_sources=True)
    assert params.agent.tools[:2] == ["bash", "submit"] and params.agent.tools[-1] == "fetch"
    assert "browser_navigate" in params.agent.tools and params.sources.egress is not None


def test_web_record_bodies_records_and_keeps_the_bodies() -> None:
    """``-T web_record=bodies``: the record-only proxy, told to keep the bodies (issue #41 item 3)."""
    bodies = parse_params(web_record="bodies").sources
    assert bodies.web_record and bodies.web_bodies and bodies.proxied
    assert bodies.egress == EgressSpec(bodies=True)
    plain = parse_params(web_record=True).sources
    assert plain.egress == EgressSpec() and not plain.web_bodies


def test_limits_can_be_lifted() -> None:
    params = parse_params(cpus=None, memory=None, pids=None)
    assert params.sandbox.limits == SandboxLimits(cpus=None, memory=None, pids=None)
    assert params.sandbox.limits.effective_cpus() is None
    assert parse_params(cpus=1000).sandbox.limits.effective_cpus() == float(os.cpu_count() or 1)


NOT_INSTALLED = '''
"""As if the [agents] extra were not installed: inspect_swe cannot be imported."""
import sys


class NotInstalled:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "inspect_swe":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)


sys.meta_path.insert(0, NotInstalled())
'''
"""A ``sitecustomize`` that hides inspect_swe from an ``inspect`` process (installed in the venv)."""


@pytest.mark.parametrize("agent", ["codex_cli", "claude_code", "mini_swe_agent"])
def test_each_other_agent_needs_the_agents_extra(
    agent: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "inspect_swe" else real(name, *a),
    )
    with pytest.raises(GaiaParameterError, match=r'pip install "\.\[agents\]"'):
        parse_params(agent=agent)
    parse_params()  # the default agent needs nothing more


@pytest.mark.slow  # a new inspect process: seconds
def test_another_agent_without_the_agents_extra_is_refused_in_one_line(tmp_path: Path) -> None:
    """``-T agent=`` without inspect_swe used to run every question (each a ModuleNotFoundError,
    exit 0, 0.000): refused when the task is created, before any sandbox, with the install."""
    hidden = tmp_path / "hidden"
    hidden.mkdir()
    (hidden / "sitecustomize.py").write_text(NOT_INSTALLED)
    path = os.pathsep.join([str(hidden), os.environ.get("PYTHONPATH", "")])
    run = run_eval_cli(
        [f"dataset_path={GAIA_TINY}", "agent=codex_cli"],
        tmp_path,
        env={"PYTHONPATH": path, "DOCKER_HOST": "tcp://127.0.0.1:9", "COLUMNS": "300"},
    )
    lines = [
        line
        for line in (run.stdout + run.stderr).splitlines()
        # the stand-in's own trace: inspect_swe's entry point is still registered in this venv
        if line.strip() and "loading entrypoints from 'inspect_swe" not in line
    ]
    assert run.returncode == 1
    assert lines == [
        "-T agent=codex_cli needs inspect_swe, the [agents] extra — install it with "
        '`pip install ".[agents]"` in your inspect-gaia clone'
    ]
    assert not (tmp_path / "logs").exists(), "no sample, no sandbox, no log"
