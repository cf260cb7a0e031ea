from __future__ import annotations

from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest
from conftest import SANDBOX_IMAGE
from inspect_ai import Task
from inspect_ai._util.registry import registry_lookup
from inspect_ai.util import ComposeConfig

from inspect_gaia import GaiaError, gaia, gaia_level1, gaia_level2, gaia_level3
from inspect_gaia.gaia import DEFAULT_MESSAGE_LIMIT


def test_entry_point_registers_the_tasks() -> None:
    (entry,) = [e for e in entry_points(group="inspect_ai") if e.name == "inspect_gaia"]
    assert entry.value == "inspect_gaia._registry"
    entry.load()
    for name in ("gaia", "gaia_level1", "gaia_level2", "gaia_level3"):
        assert registry_lookup("task", f"inspect_gaia/{name}") is not None


def test_task_defaults(gaia_tiny: Path) -> None:
    task = gaia(dataset_path=str(gaia_tiny), image=SANDBOX_IMAGE)
    assert isinstance(task, Task)
    assert task.message_limit == DEFAULT_MESSAGE_LIMIT == 100
    assert len(task.dataset) == 7
    assert task.sandbox is not None and task.sandbox.type == "gaia-docker"
    config = task.sandbox.config
    assert isinstance(config, ComposeConfig)
    assert config.services["default"].image == SANDBOX_IMAGE
    assert config.services["default"].network_mode is None
    assert task.metadata is not None and task.metadata["gaia"]["levels"] == [1, 2, 3]


def test_task_parameters_reach_dataset_and_sandbox(gaia_tiny: Path) -> None:
    task = gaia(dataset_path=str(gaia_tiny), level="2,3", image=SANDBOX_IMAGE, network=False)
    assert sorted((s.metadata or {})["level"] for s in task.dataset) == [2, 2, 3, 3, 3]
    assert task.sandbox is not None
    config = task.sandbox.config
    assert isinstance(config, ComposeConfig)
    assert config.services["default"].image == SANDBOX_IMAGE
    assert config.services["default"].network_mode == "none"


@pytest.mark.parametrize(
    ("variant", "level"), [(gaia_level1, 1), (gaia_level2, 2), (gaia_level3, 3)]
)
def test_level_variants(gaia_tiny: Path, variant: Any, level: int) -> None:
    task = variant(dataset_path=str(gaia_tiny), image=SANDBOX_IMAGE)
    assert {(s.metadata or {})["level"] for s in task.dataset} == {level}


def test_test_split_reports_no_accuracy(gaia_tiny: Path) -> None:
    task = gaia(dataset_path=str(gaia_tiny), split="test", image=SANDBOX_IMAGE)
    assert task.metrics == []
    assert {s.target for s in task.dataset} == {"?"}


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"level": 4}, "level must be 1, 2 or 3"),
        ({"split": "dev"}, "split must be one of validation, test"),
        ({"hub": "kaggle"}, "hub must be one of huggingface, modelscope"),
        ({"ids": []}, "ids is empty"),
        ({"ids": "no-such-task"}, "ids not in the validation split"),
        ({"command_timeout": 0}, "command_timeout must be a whole number ≥ 1"),
        ({"max_attempts": 0}, "max_attempts must be a whole number ≥ 1"),
        ({"network": "maybe"}, "network must be true or false"),
        ({"image": ""}, "image must name a Docker image"),
        ({"python": "yes"}, "python must be true or false"),
        ({"sandbox": "podman"}, "sandbox must be one of docker, compose, k8s"),
        ({"memory": "huge"}, "memory must be a size"),
        ({"mcp_servers": [""]}, "mcp_servers has an empty entry"),
    ],
)
def test_invalid_parameters(gaia_tiny: Path, params: dict[str, Any], message: str) -> None:
    with pytest.raises(GaiaError, match=message):
        gaia(dataset_path=str(gaia_tiny), **params)


def test_not_a_snapshot(tmp_path: Path) -> None:
    with pytest.raises(GaiaError, match="is not a GAIA snapshot"):
        gaia(dataset_path=str(tmp_path))


@pytest.mark.docker
def test_an_image_neither_here_nor_pullable_fails_before_the_run(
    sandbox_image: str, gaia_tiny: Path
) -> None:
    with pytest.raises(
        GaiaError,
        match="sandbox image inspect-gaia/no-such-image:0 is not present and cannot be pulled",
    ):
        gaia(dataset_path=str(gaia_tiny), image="inspect-gaia/no-such-image:0")
    task = gaia(dataset_path=str(gaia_tiny), image=sandbox_image)
    assert task.metadata is not None and str(task.metadata["gaia"]["image_id"]).startswith(
        "sha256:"
    )
