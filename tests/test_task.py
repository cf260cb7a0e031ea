from __future__ import annotations

from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import Task
from inspect_ai.util import ComposeConfig

from inspect_gaia import GaiaError, gaia, gaia_level1, gaia_level2, gaia_level3
from inspect_gaia.defaults import DEFAULT_MESSAGE_LIMIT
from tests.helpers import SANDBOX_IMAGE


def test_entry_point_registers_the_tasks_and_sandboxes() -> None:
    from inspect_ai._util.registry import registry_lookup  # the lookups `inspect eval` makes
    from inspect_ai.util._sandbox.registry import registry_find_sandboxenv

    (entry,) = [e for e in entry_points(group="inspect_ai") if e.name == "inspect_gaia"]
    assert entry.value == "inspect_gaia._registry"
    entry.load()
    for name in ("gaia", "gaia_level1", "gaia_level2", "gaia_level3"):
        assert registry_lookup("task", f"inspect_gaia/{name}") is not None
    for provider in ("gaia-docker", "gaia-compose"):
        assert registry_find_sandboxenv(provider).__name__.startswith("Gaia")


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
        ({"ids": "no-such-task"}, "ids not in the validation split"),
        ({"split": "test", "max_attempts": 2}, "max_attempts=2 needs answers"),
        ({"sandbox": "podman"}, "sandbox must be one of docker, compose, k8s"),
    ],
)
def test_invalid_parameters(gaia_tiny: Path, params: dict[str, Any], message: str) -> None:
    with pytest.raises(GaiaError, match=message):
        gaia(dataset_path=str(gaia_tiny), **params)


def test_not_a_snapshot(tmp_path: Path) -> None:
    with pytest.raises(GaiaError, match="is not a GAIA snapshot"):
        gaia(dataset_path=str(tmp_path))


def test_compose_kind_runs_inspects_compose_sandbox_behind_the_guard(gaia_tiny: Path) -> None:
    from inspect_gaia._compat import DockerSandboxEnvironment
    from inspect_gaia.sandboxes.docker.gaia_compose import GaiaComposeSandbox

    task = gaia(dataset_path=str(gaia_tiny), sandbox="compose", image=SANDBOX_IMAGE)
    assert task.sandbox is not None and task.sandbox.type == "gaia-compose"
    assert issubclass(GaiaComposeSandbox, DockerSandboxEnvironment)


def test_building_the_task_needs_no_engine(
    gaia_tiny: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCKER_HOST", "tcp://127.0.0.1:9")
    task = gaia(dataset_path=str(gaia_tiny), image="inspect-gaia/no-such-image:0")
    assert task.metadata is not None and task.metadata["gaia"]["image_id"] is None


def test_the_log_lists_the_question_and_the_model_is_asked_the_prompt(gaia_tiny: Path) -> None:
    """Issue #50 (third round): inspect view listed the prompt's first lines as every sample's
    input. The sample's input is its question; the task's setup (run before any solver, a
    --solver's too) asks the model the prompt, exactly as the dataset wrote it."""
    import asyncio
    from typing import cast

    from inspect_ai.model import ChatMessageUser, ModelName
    from inspect_ai.solver import Generate, TaskState

    from inspect_gaia import gaia_dataset
    from inspect_gaia.questions.dataset import question_text

    task = gaia(dataset_path=str(gaia_tiny), image=SANDBOX_IMAGE)
    asked = {str(s.id): s.input for s in gaia_dataset(dataset_path=str(gaia_tiny))}
    assert callable(task.setup)
    for sample in task.dataset:
        prompt = asked[str(sample.id)]
        assert isinstance(prompt, str) and prompt.startswith("Please answer the question below.")
        assert sample.input == question_text(prompt)  # what the log records, and the view lists
        state = TaskState(
            model=ModelName("mockllm/model"),
            sample_id=str(sample.id),
            epoch=1,
            input=sample.input,
            messages=[ChatMessageUser(content=sample.input, source="input")],
        )

        async def unused(state: TaskState, tool_calls: Any = "loop", **_: Any) -> TaskState:
            raise AssertionError("setup generates nothing")

        ready = asyncio.run(task.setup(state, cast(Generate, unused)))
        (first,) = ready.messages
        assert first.role == "user" and first.text == prompt  # to the character
