"""``-T agent=``: the options refused beside another agent, the agents refused for a search they
cannot switch off, the agent's record (its identity) and its flag, mini-swe-agent's GAIA
configuration, the memory warning's line, and the agents image's recipe (the runs themselves:
``test_docker_swe_agents.py``)."""

from __future__ import annotations

import os
import re
from dataclasses import fields, replace
from pathlib import Path

import anyio
import pytest
import yaml
from inspect_ai.model import get_model
from inspect_swe._util.sandbox import SANDBOX_INSTALL_DIR

from inspect_gaia._compat import bridge_polling, codex_catalog_offline
from inspect_gaia.agents.mini_config import EXIT_COMMAND, configuration, mini_config
from inspect_gaia.agents.sizing import PEAK_MIB, at_once, memory_warning
from inspect_gaia.agents.swe import (
    CLAUDE_IDENTITY,
    GEMINI_IDENTITY,
    UNSEALABLE,
    identity,
    swe_agent,
)
from inspect_gaia.defaults import AGENTS
from inspect_gaia.errors import GaiaParameterError
from inspect_gaia.image_layout import (
    AGENT_CLIS,
    INSPECT_SWE_DIR,
    OFFLINE_AGENTS_TAG,
    OFFLINE_ATTACHMENTS_TAG,
    REGISTRY_AGENTS_TAG,
)
from inspect_gaia.images.agents import (
    LABELS,
    agents_dockerfile,
    agents_tag,
    mini_wheels,
    npm_packages,
)
from inspect_gaia.logs.comparability import comparability_flags
from inspect_gaia.logs.provenance import AgentRecord, GaiaProvenance
from inspect_gaia.options import AgentOptions
from inspect_gaia.record import provenance_of
from tests.helpers import parse_params


def _asked(option: str) -> object:
    """A value of ``option`` that asks for its tool, as a user types it."""
    return "fetch" if option == "mcp_servers" else True


@pytest.mark.parametrize(
    ("option", "value"),
    [(option, _asked(option)) for option in (*AgentOptions.tool_options(), "multimodal")],
)
def test_the_default_agents_tools_are_refused_beside_another_agent(
    option: str, value: object
) -> None:
    with pytest.raises(GaiaParameterError) as caught:
        parse_params(agent="claude_code", **{option: value})
    shown = option
    assert str(caught.value).startswith(f"-T {shown} is a tool of the default agent;")
    assert str(caught.value).endswith(f"— drop -T {shown}, or drop -T agent")


def test_hosted_search_is_refused_in_one_line_naming_why() -> None:
    with pytest.raises(GaiaParameterError) as caught:
        parse_params(agent="codex_cli", web_search=True)
    assert "hosted search stays off for every agent" in str(caught.value)
    assert "\n" not in str(caught.value)


def test_another_agent_answers_once() -> None:
    with pytest.raises(GaiaParameterError, match="^max_attempts counts"):
        parse_params(agent="mini_swe_agent", max_attempts=2)


def test_an_unknown_agent_is_refused_with_the_names() -> None:
    with pytest.raises(GaiaParameterError) as caught:
        parse_params(agent="aider")
    for name in AGENTS:
        assert name in str(caught.value)


@pytest.mark.parametrize("name", ["opencode", "kimi_code", "antigravity"])
def test_an_agent_whose_bridge_grants_search_is_refused_saying_why(name: str) -> None:
    with pytest.raises(GaiaParameterError) as caught:
        parse_params(agent=name)
    assert str(caught.value) == (
        f"-T agent={name} cannot be sealed: inspect_swe 0.2.72 runs it with the bridge's "
        "web_search=True: the model provider's own search, which neither the sandbox's network "
        "nor the run's proxy sees — use claude_code, codex_cli, gemini_cli or mini_swe_agent"
    )


def test_the_refused_agents_are_those_whose_bridge_always_grants_search() -> None:
    """Read from inspect_swe's own source: a new release that lets one be sealed shows here."""
    import inspect_swe

    root = os.path.dirname(inspect_swe.__file__)
    granted = set()
    for folder in os.listdir(root):
        path = os.path.join(root, folder, f"{folder.strip('_')}.py")
        if os.path.exists(path) and "web_search=True," in open(path).read():
            granted.add(folder.strip("_"))
    assert granted == set(UNSEALABLE)


def test_the_default_agent_is_unchanged() -> None:
    params = parse_params()
    assert params.agent.name == "basic" and params.agent.tools == ["bash", "submit"]
    assert parse_params(agent="claude_code").agent.tools == ["agent:claude_code"]


@pytest.fixture
def scripted_models(monkeypatch: pytest.MonkeyPatch) -> None:
    """Models the openai-api provider makes without a server (nothing is asked of them)."""
    monkeypatch.setenv("SCRIPTED_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("SCRIPTED_API_KEY", "unused")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "unused")


def test_each_agent_is_inspect_swes_with_the_cli_of_the_image(scripted_models: None) -> None:
    model = get_model("openai-api/scripted/m")
    for name in AGENT_CLIS:
        agent = swe_agent(name, command_timeout=60, model=model)
        assert callable(agent)
    with pytest.raises(ValueError, match="no such agent"):
        swe_agent("basic", command_timeout=60, model=model)
    # inspect_swe finds the image's Gemini CLI in its own install folder
    assert INSPECT_SWE_DIR == SANDBOX_INSTALL_DIR


def test_what_each_cli_is_told_its_model_is(scripted_models: None) -> None:
    other = get_model("openai-api/scripted/m")
    assert [identity(name, other) for name in AGENT_CLIS] == [
        CLAUDE_IDENTITY,  # Claude Code refuses a model id it does not know
        None,  # Codex: inspect_swe passes a name Codex does not know through
        GEMINI_IDENTITY,
        None,  # mini is told no name
    ]
    claude = get_model("anthropic/claude-opus-4-1")
    assert identity("claude_code", claude) is None and identity("gemini_cli", claude)


SWE_WORDS = re.compile(r"\b(issue|codebase|source code|repository|swe|fix|changes)\b", re.I)
"""mini's own template's words for a repository to fix (its ``mini.yaml``)."""


def test_minis_gaia_configuration_says_gaias_task_and_no_swe_benchs() -> None:
    config = yaml.safe_load(mini_config(123))
    agent = config["agent"]
    text = agent["system_template"] + agent["instance_template"]
    assert not SWE_WORDS.findall(text)
    assert "GAIA" in text and "FINAL ANSWER: <your answer>" in text and EXIT_COMMAND in text
    assert "{{task}}" in agent["instance_template"] and "{{timeout}}" in text
    assert config["environment"]["timeout"] == 123
    assert (agent["step_limit"], agent["cost_limit"]) == (0, 0)
    # the record names it: a mini run on its SWE-bench template (before) is not pooled with it
    named = configuration("mini_swe_agent")
    assert named is not None and re.fullmatch(r"gaia [0-9a-f]{12}", named)
    assert configuration("claude_code") is None


def test_the_record_names_the_agent_and_its_versions() -> None:
    params = parse_params(agent="codex_cli")
    record = provenance_of(
        params,
        prompt="p",
        image_id=None,
        sandbox_provider="gaia-docker",
        agent_version="0.171.0",
    )
    assert record.agent == AgentRecord(
        name="codex_cli", cli_version="0.171.0", inspect_swe_version="0.2.72"
    )
    again = GaiaProvenance.from_metadata({"gaia": record.as_metadata()})
    assert again == record
    default = provenance_of(
        parse_params(), prompt="p", image_id=None, sandbox_provider="gaia-docker"
    )
    assert default.agent is None and "agent" not in default.as_metadata()


def test_an_agents_run_is_its_own_group_and_flagged() -> None:
    settings = {}
    for agent in ("basic", "claude_code", "mini_swe_agent"):
        record = provenance_of(
            parse_params(agent=agent),
            prompt="p",
            image_id=None,
            sandbox_provider="gaia-docker",
            agent_version=None if agent == "basic" else "1.0",
        )
        settings[agent] = record.comparable_settings(
            model="m", task_version="1", epochs=1, run_config={}
        )
    assert len({str(sorted(s.items())) for s in settings.values()}) == 3
    assert comparability_flags(settings["basic"]) == []
    assert comparability_flags(settings["claude_code"]) == [
        "agent: claude_code 1.0 (inspect_swe 0.2.72)"
    ]


def test_the_identity_a_cli_is_told_is_recorded_and_flagged() -> None:
    record = provenance_of(
        parse_params(agent="claude_code"),
        prompt="p",
        image_id=None,
        sandbox_provider="gaia-docker",
        agent_version="2.1.332",
        agent_identity=CLAUDE_IDENTITY,
    )
    assert record.agent is not None and record.agent.identity == CLAUDE_IDENTITY
    assert GaiaProvenance.from_metadata({"gaia": record.as_metadata()}) == record
    settings = record.comparable_settings(model="m", task_version="1", epochs=1, run_config={})
    assert comparability_flags(settings) == [
        "agent: claude_code 2.1.332 (inspect_swe 0.2.72), told it is claude-sonnet-4-5"
    ]
    # a record of schema 6 or 7 (no identity) still reads
    older = {**record.as_metadata(), "schema_version": 7}
    older["agent"] = {k: v for k, v in older["agent"].items() if k != "identity"}
    read = GaiaProvenance.from_metadata({"gaia": older})
    assert read is not None and read.agent is not None and read.agent.identity is None


def test_the_memory_warning_names_the_figure_the_setting_and_the_fix() -> None:
    gib = 1024**3
    peak = PEAK_MIB["claude_code"]
    fit = int(16 * 1024 // peak)  # sandboxes of its measured peak in a 16 GiB engine
    assert memory_warning("claude_code", fit, f"--max-samples {fit}", 16 * gib) is None
    over = fit + 1
    line = memory_warning("claude_code", over, f"--max-samples {over}", 16 * gib)
    assert line == (
        f"-T agent=claude_code: {over} sandboxes at once (--max-samples {over}) × {peak:g} MiB "
        f"each (its measured peak, docs/benchmarks.md) is {over * peak / 1024:.1f} GiB, more "
        f"than the Docker engine's 16.0 GiB — pass --max-samples {fit} or fewer (docs/agents.md)"
    )
    assert at_once(64, 16) == (16, "--max-sandboxes 16")
    assert at_once(None, None)[0] == 100 and "adaptive" in at_once(None, None)[1]


def test_the_image_pins_every_cli_and_downloads_nothing_at_run_time() -> None:
    assert (agents_tag(True), agents_tag(False)) == (OFFLINE_AGENTS_TAG, REGISTRY_AGENTS_TAG)
    text = agents_dockerfile(OFFLINE_ATTACHMENTS_TAG)
    assert text.startswith(f"FROM {OFFLINE_ATTACHMENTS_TAG}\n")
    assert "npm install" not in text and "curl" not in text and "--no-index" in text
    for cli in AGENT_CLIS.values():
        assert f"/usr/local/bin/{cli}" in text
    # Gemini CLI's own web tools are excluded in its system settings
    assert '\\"exclude\\": [\\"google_web_search\\", \\"web_fetch\\"]' in text
    for key, value in LABELS.items():
        assert f'{key}="{value}"' in text
    wheels = mini_wheels()
    assert "mini-swe-agent==2.4.6" in wheels and all("==" in w for w in wheels)
    assert all("@" in spec[1:] for spec in npm_packages().values()), "every package pinned"
    assert "LITELLM_LOCAL_MODEL_COST_MAP=True" in text


def test_every_option_that_adds_a_tool_is_refused_beside_another_agent() -> None:
    """A new tool toggle forgotten in ``tool_options`` would be accepted and never offered."""
    default = AgentOptions()
    for option in fields(AgentOptions):
        if option.name == "name" or not isinstance(getattr(default, option.name), (bool, tuple)):
            continue  # the agent itself, and limits (numbers) another agent may take
        asked: object = True if option.type == "bool" else (("fetch",),)
        adds = replace(default, **{option.name: asked}).tools != default.tools  # type: ignore[arg-type]
        assert adds == (option.name in AgentOptions.tool_options()), option.name


@pytest.mark.parametrize("name", ["codex_cli", "gemini_cli"])
def test_a_command_timeout_an_agent_cannot_take_is_refused(name: str) -> None:
    """Issue #50: `-T command_timeout=60 -T agent=codex_cli` was accepted and did nothing."""
    with pytest.raises(GaiaParameterError) as caught:
        parse_params(agent=name, command_timeout=60)
    assert str(caught.value).startswith(f"-T command_timeout cannot be set for agent={name}")
    for timed in ("claude_code", "mini_swe_agent"):  # Claude's env, mini's GAIA configuration
        assert parse_params(agent=timed, command_timeout=60).agent.command_timeout == 60
    assert parse_params(agent=name).agent.name == name  # the default is no request


def test_the_bridge_and_codex_patches_hold_on_inspects_and_inspect_swes_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A release that moves either name fails here, not silently in every agent's run."""
    from inspect_ai.agent._bridge.sandbox import service
    from inspect_swe._codex_cli import codex_cli

    bridge_polling()
    wrapped = vars(service)["sandbox_service"]
    assert getattr(wrapped, "_gaia_polling", False)
    bridge_polling()  # once only
    assert vars(service)["sandbox_service"] is wrapped
    # Codex's catalog: the cache only, never GitHub (here, no cache: no catalog, at once)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    codex_catalog_offline()
    assert anyio.run(vars(codex_cli)["codex_version_models_catalog"], "0.171.0") is None
