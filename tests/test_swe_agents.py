"""``-T agent=``: the options refused beside another agent, the agent's record and its flag, and
the agents image's recipe (the runs themselves: ``test_docker_swe_agents.py``)."""

from __future__ import annotations

from dataclasses import fields, replace

import pytest

from inspect_gaia.agents.swe import swe_agent
from inspect_gaia.defaults import AGENTS
from inspect_gaia.errors import GaiaParameterError
from inspect_gaia.image_layout import (
    AGENT_CLIS,
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
        parse_params(agent="gemini_cli")
    for name in AGENTS:
        assert name in str(caught.value)


def test_the_default_agent_is_unchanged() -> None:
    params = parse_params()
    assert params.agent.name == "basic" and params.agent.tools == ["bash", "submit"]
    assert parse_params(agent="claude_code").agent.tools == ["agent:claude_code"]


def test_each_agent_is_inspect_swes_with_the_cli_of_the_image() -> None:
    for name in AGENT_CLIS:
        agent = swe_agent(name, command_timeout=60)
        assert callable(agent)
    with pytest.raises(ValueError, match="no such agent"):
        swe_agent("basic", command_timeout=60)


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


def test_the_image_pins_every_cli_and_downloads_nothing_at_run_time() -> None:
    assert (agents_tag(True), agents_tag(False)) == (OFFLINE_AGENTS_TAG, REGISTRY_AGENTS_TAG)
    text = agents_dockerfile(OFFLINE_ATTACHMENTS_TAG)
    assert text.startswith(f"FROM {OFFLINE_ATTACHMENTS_TAG}\n")
    assert "npm install" not in text and "curl" not in text and "--no-index" in text
    for cli in AGENT_CLIS.values():
        assert f"/usr/local/bin/{cli}" in text
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


@pytest.mark.parametrize("name", ["codex_cli", "mini_swe_agent"])
def test_a_command_timeout_an_agent_cannot_take_is_refused(name: str) -> None:
    """Issue #50: `-T command_timeout=60 -T agent=codex_cli` was accepted and did nothing."""
    with pytest.raises(GaiaParameterError) as caught:
        parse_params(agent=name, command_timeout=60)
    assert str(caught.value).startswith(f"-T command_timeout cannot be set for agent={name}")
    assert parse_params(agent="claude_code", command_timeout=60).agent.command_timeout == 60
    assert parse_params(agent=name).agent.name == name  # the default is no request
