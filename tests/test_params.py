"""Every -T value parsed and validated once: spellings accepted, one-line refusals."""

from __future__ import annotations

import importlib.util
import os
from typing import Any

import pytest

from inspect_gaia import GaiaParameterError
from inspect_gaia._params import (
    MCP_SHORTCUTS,
    GaiaParams,
    parse_ids,
    parse_levels,
    parse_mcp_servers,
)
from inspect_gaia.sandbox import SandboxLimits


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
    assert parse_mcp_servers(["fetch", "npx -y some-server --flag 'a b'"]) == (
        MCP_SHORTCUTS["fetch"],
        ("npx", "-y", "some-server", "--flag", "a b"),
    )


def test_defaults() -> None:
    params = GaiaParams.parse()
    assert params == GaiaParams()
    assert (params.levels, params.split, params.hub, params.sandbox) == (
        (1, 2, 3),
        "validation",
        "huggingface",
        "docker",
    )
    assert params.limits == SandboxLimits(cpus=2.0, memory="4g", pids=1024, disk=None)
    assert params.tools == ["bash", "submit"]
    assert not params.multimodal and not params.view_file


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
    ({"memory": "lots"}, "memory must be a size such as 512m or 4g"),
    ({"disk": "big"}, "disk must be a size such as 512m or 4g"),
    ({"cpus": 0}, "cpus must be a positive number"),
    ({"cpus": True}, "cpus must be a positive number"),
    ({"pids": 2}, "pids must be 16 or more"),
    ({"sandbox": "podman"}, "sandbox must be one of docker, compose, k8s"),
    ({"mcp_servers": [""]}, "mcp_servers has an empty entry"),
    # Issue #10 finding 5: the test split has no answers to check a second attempt against.
    (
        {"split": "test", "max_attempts": 2},
        "max_attempts=2 needs answers to check each attempt against",
    ),
    # Issue #10 finding 9: MCP servers run on the host, with its network.
    ({"network": False, "mcp_servers": "fetch"}, "mcp_servers run on the host"),
    ({"network": False, "web_search": True}, "web_search reaches the internet"),
    ({"sandbox": "k8s", "disk": "10g"}, "disk is a Docker storage limit"),
]


@pytest.mark.parametrize(("raw", "message"), REFUSALS, ids=[str(r) for r, _ in REFUSALS])
def test_refusals_are_one_line(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(GaiaParameterError) as caught:
        GaiaParams.parse(**raw)
    text = str(caught.value)
    assert message in text and "\n" not in text


def test_max_attempts_above_one_is_fine_on_validation() -> None:
    assert GaiaParams.parse(max_attempts=2).max_attempts == 2


def test_missing_optional_packages_name_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name in ("mcp", "k8s_sandbox") else real(name, *a),
    )
    with pytest.raises(GaiaParameterError, match=r"pip install 'inspect-gaia\[mcp\]'"):
        GaiaParams.parse(mcp_servers="fetch")
    with pytest.raises(GaiaParameterError, match=r"pip install 'inspect-gaia\[k8s\]'"):
        GaiaParams.parse(sandbox="k8s")


def test_limits_can_be_lifted() -> None:
    params = GaiaParams.parse(cpus=None, memory=None, pids=None)
    assert params.limits == SandboxLimits(cpus=None, memory=None, pids=None)
    assert params.limits.effective_cpus() is None
    assert GaiaParams.parse(cpus=1000).limits.effective_cpus() == float(os.cpu_count() or 1)
