"""The parsed parameters' records: a tool toggle's path from ``gaia`` to the tools the agent gets.

A toggle is written in ``gaia()`` (signature, docstring, pass-through), ``_params.parse_params``,
one field of ``options.AgentOptions`` (marked a tool option), the tool list
(``agents/basic.gaia_tools`` and ``AgentOptions.tools``) and the README: these tests hold the path
between them.
"""

from __future__ import annotations

import dataclasses
import inspect
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.util import registry_info

from inspect_gaia import gaia
from inspect_gaia.agents.basic import gaia_agent, gaia_tools
from inspect_gaia.image_layout import OFFLINE_BROWSER_TAG
from inspect_gaia.options import AgentOptions
from tests.helpers import SANDBOX_IMAGE, parse_params

TOGGLES = {
    "python": ["python"],
    "web_search": ["web_search"],
    "view_file": ["view_file"],
    "multimodal": ["view_file"],  # implies view_file
    "browser": ["browser_navigate", "browser_download"],
    "web_reader": ["fetch"],
}
"""Each tool toggle of ``gaia()``, and tools it adds (the browser: its first and last)."""


def test_every_boolean_tool_option_has_its_toggle_here() -> None:
    """A new tool option of ``AgentOptions`` (``tool_options``) is tested through ``gaia()`` too."""
    booleans = {o for o in AgentOptions.tool_options() if o != "mcp_servers"}
    assert set(TOGGLES) - {"multimodal"} == booleans


def _names(options: AgentOptions) -> list[str]:
    """The tools ``gaia_tools`` really builds for ``options``, by name (``inspect_ai/`` dropped)."""
    return [registry_info(tool).name.rpartition("/")[2] for tool in gaia_tools(options)]


@pytest.mark.parametrize("toggle", sorted(TOGGLES))
def test_a_tool_toggle_goes_from_gaia_through_the_parser_to_the_agents_tools(
    toggle: str, gaia_tiny: Path
) -> None:
    image = OFFLINE_BROWSER_TAG if toggle in ("browser", "web_reader") else SANDBOX_IMAGE
    asked: dict[str, Any] = {toggle: True}
    task = gaia(dataset_path=str(gaia_tiny), image=image, **asked)
    params = parse_params(dataset_path=str(gaia_tiny), image=image, **asked)
    built = _names(params.agent)
    # the parser put it in the agent's record, the builder made the tools, the log records them
    assert built == [name for name in params.agent.tools if name != "submit"]
    assert task.metadata is not None and task.metadata["gaia"]["tools"] == params.agent.tools
    added = [name for name in built if name not in _names(AgentOptions())]
    assert added[0] == TOGGLES[toggle][0] and added[-1] == TOGGLES[toggle][-1]


def test_gaia_agent_takes_the_agent_record_field_by_field() -> None:
    # the public gaia_agent(**kw) keeps its signature: one keyword per AgentOptions field
    keywords = inspect.signature(gaia_agent).parameters
    fields = {field.name: field.default for field in dataclasses.fields(AgentOptions)}
    assert fields.pop("name") == "basic", "gaia_agent is the basic agent: -T agent picks another"
    assert {name: p.default for name, p in keywords.items()} == fields
