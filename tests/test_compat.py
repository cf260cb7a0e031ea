"""The compat layer: every private inspect_ai name the package uses still exists, in one place."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import inspect_gaia._compat as compat
from support.scripted_model import Entry
from tests.helpers import Play, eval_task

SOURCE = Path(compat.__file__).parent


def test_every_private_name_imports() -> None:
    for name in compat.__all__:
        assert getattr(compat, name) is not None, name


def test_no_other_module_imports_a_private_inspect_module() -> None:
    offenders = []
    for path in sorted(SOURCE.rglob("*.py")):
        if path.name == "_compat.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                parts = node.module.split(".")
                if parts[0] == "inspect_ai" and any(p.startswith("_") for p in parts):
                    offenders.append(f"{path.relative_to(SOURCE)}: from {node.module}")
    assert offenders == []


DOCKER_PY_INTERNALS = {
    "sandboxes/docker/client.py": ("get_connection", "trust_env"),
    "sandboxes/docker/archive.py": ("_url", "_get", "_raise_for_status"),
}
"""docker-py's internals, by the module that uses them: the three docstrings agree on this."""


@pytest.mark.parametrize(("module", "names"), sorted(DOCKER_PY_INTERNALS.items()))
def test_each_docker_py_internal_is_named_where_used_and_in_compat(
    module: str, names: tuple[str, ...]
) -> None:
    """Issue #44: client.py said only archive reached past docker-py's API, while patching it."""
    tree = ast.parse((SOURCE / module).read_text(encoding="utf-8"))
    doc = ast.get_docstring(tree) or ""
    code = "\n".join(ast.unparse(node) for node in tree.body[1:])  # without the docstring
    for name in names:
        assert f"``{name}``" in (compat.__doc__ or "") and name in doc, (module, name)
        assert f".{name}" in code, (module, name)


def test_unproxied_sees_through_inspects_event_recorder() -> None:
    from inspect_gaia.sandboxes.faults import UnstartedSandbox

    inner = UnstartedSandbox("engine gone")
    assert compat.unproxied(compat.SandboxEnvironmentProxy(inner)) is inner
    assert compat.unproxied(inner) is inner


def test_basic_agent_rereads_completed_before_every_model_call(
    scripted: Play, tmp_path: Path
) -> None:
    """``guard_task_state``'s reliance: the idle guard ends basic_agent's loop through ``completed``.

    The model only ever answers with an empty turn; basic_agent would ask again ("please
    proceed") until the message limit. With the guard, the loop ends after ``max_idle_turns``.
    """
    from inspect_ai import Task
    from inspect_ai.dataset import Sample
    from inspect_ai.solver import basic_agent

    from inspect_gaia.agents.basic import idle_guard

    model = scripted([Entry("", [{"say": ""}])])
    task = Task(
        dataset=[Sample(input="a question")],
        solver=basic_agent(init=idle_guard(max_idle_turns=2), tools=[]),
        message_limit=40,
    )
    log = eval_task(task, tmp_path)
    assert log.status == "success" and log.samples is not None
    (sample,) = log.samples
    assert len(model.calls) == 2, "basic_agent no longer re-reads completed: see guard_task_state"
    assert sample.limit is None


def test_a_plain_text_final_answer_ends_basic_agents_loop(scripted: Play, tmp_path: Path) -> None:
    """The same reliance, for a model that answers in text and never calls ``submit``.

    basic_agent alone would answer "please proceed" until the message limit (4 calls here); the
    guard ends the loop after the one reply and drops the nudge basic_agent appended before it
    read ``completed`` again, so the log ends on the answer.
    """
    from inspect_ai import Task
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ChatMessageAssistant
    from inspect_ai.solver import basic_agent

    from inspect_gaia.agents.basic import idle_guard

    model = scripted([Entry("", [{"say": "It is 42.\nFINAL ANSWER: 42"}])])
    unguarded = Task(dataset=[Sample(input="q")], solver=basic_agent(tools=[]), message_limit=10)
    (sample,) = eval_task(unguarded, tmp_path).samples or []
    assert len(model.calls) == 4 and sample.limit is not None, "basic_agent changed its loop"
    assert sample.messages[-1].role == "user", "basic_agent no longer appends its nudge"

    model = scripted([Entry("", [{"say": "It is 42.\nFINAL ANSWER: 42"}])])
    guarded = Task(
        dataset=[Sample(input="q")],
        solver=basic_agent(init=idle_guard(), tools=[]),
        message_limit=40,
    )
    log = eval_task(guarded, tmp_path)
    (sample,) = log.samples or []
    assert len(model.calls) == 1 and sample.limit is None and sample.error is None
    assert isinstance(sample.messages[-1], ChatMessageAssistant)


def test_the_guard_refuses_a_state_it_would_change_beyond_recognition() -> None:
    from inspect_ai.model import ModelName
    from inspect_ai.solver import TaskState

    class Theirs(TaskState):
        pass

    class Ours(TaskState):
        pass

    state = Theirs(ModelName("mockllm/model"), "s", 0, "q", [])
    with pytest.raises(TypeError, match="guard_task_state"):
        compat.guard_task_state(state, Ours)
    plain = TaskState(ModelName("mockllm/model"), "s", 0, "q", [])
    assert compat.guard_task_state(plain, Ours) is plain and isinstance(plain, Ours)
