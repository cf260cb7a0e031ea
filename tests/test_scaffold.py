"""The scaffold is a setting: a run whose solver replaced the agent is its own, named group."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log

from inspect_gaia.logs.comparability import comparability_flags
from inspect_gaia.logs.read import read_inspect_log
from inspect_gaia.logs.results import comparable_settings
from inspect_gaia.logs.scaffold import offered_tools
from inspect_gaia.record import default_settings
from support.scripted_model import Entry, ScriptedModel
from tests.helpers import MODEL, RUN_SAMPLES, eval_command, eval_gaia, invoke, write_log
from tests.scenario import GAIA_TINY

SUPPORT = Path(__file__).resolve().parent.parent / "support"


def test_the_log_names_the_solver_and_its_real_tools(tmp_path: Path) -> None:
    plain = read_inspect_log(write_log(tmp_path / "plain.eval", RUN_SAMPLES))
    assert plain.scaffold is None
    settings = comparable_settings(plain)
    assert (settings["solver"], settings["solver_args"]) == (None, None)
    assert settings["tools"] == ["bash", "submit"] and comparability_flags(settings) == []

    react = write_log(
        tmp_path / "r.eval",
        RUN_SAMPLES,
        solver="gaia_react",
        solver_args={"timeout": 30},
        offered_tools=["bash", "python", "submit"],
    )
    run = read_inspect_log(react)
    # the record the task wrote still says bash, submit (before the solver was swapped) ...
    assert run.provenance is not None and run.provenance.tools == ("bash", "submit")
    # ... the settings say what the model was really offered
    settings = comparable_settings(run)
    assert settings["tools"] == ["bash", "python", "submit"]
    assert (settings["solver"], settings["solver_args"]) == ("gaia_react", {"timeout": 30})
    assert comparability_flags(settings) == [
        "custom solver: gaia_react",
        "non-default tools: bash, python, submit",
    ]
    generate = read_inspect_log(
        write_log(tmp_path / "g.eval", RUN_SAMPLES, solver="generate", offered_tools=[])
    )
    assert comparability_flags(comparable_settings(generate)) == [
        "custom solver: generate",
        "non-default tools: none",
    ]
    unknown = read_inspect_log(write_log(tmp_path / "u.eval", RUN_SAMPLES, solver="x"))
    assert "tools unknown (no model call logged)" in comparability_flags(
        comparable_settings(unknown)
    )
    # the default agent's settings name no solver: a default run still labels as the default
    assert default_settings()["solver"] is None and default_settings()["harness"] == "inspect_gaia"


def test_report_never_pools_another_solver(tmp_path: Path) -> None:
    write_log(tmp_path / "agent.eval", RUN_SAMPLES)
    write_log(tmp_path / "generate.eval", RUN_SAMPLES, solver="generate", offered_tools=[])
    react = ["bash", "python", "submit"]
    write_log(tmp_path / "react.eval", RUN_SAMPLES, solver="gaia_react", offered_tools=react)
    code, out, err = invoke("report", str(tmp_path), "--format", "json")
    assert code == 0, err
    groups = {g["group"]: g for g in json.loads(out)["groups"]}
    assert set(groups) == {
        MODEL,
        f"{MODEL} [solver=generate, tools=none]",
        f"{MODEL} [solver=gaia_react, tools=+python]",
    }
    assert groups[MODEL]["flags"] == []
    react = groups[f"{MODEL} [solver=gaia_react, tools=+python]"]
    assert react["flags"][0] == "custom solver: gaia_react"
    assert react["settings"]["solver"] == "gaia_react"
    assert react["settings"]["tools"] == ["bash", "python", "submit"]


@pytest.mark.docker
def test_real_runs_with_other_solvers_are_their_own_groups(
    sandbox_image: str, scripted_server: ScriptedModel, tmp_path: Path
) -> None:
    """The default agent, `--solver generate` and `--solver <file>@gaia_react`, on gaia-tiny."""
    scripted_server.entries = [
        Entry("invented lagoon", [{"submit": "Quillfeather Lagoon"}]),
        Entry("visitors per gallery", [{"bash": "echo 48671"}, {"submit_output": True}]),
    ]
    eval_gaia(tmp_path / "logs", dataset_path=str(GAIA_TINY), image=sandbox_image, level=1)
    task = [f"dataset_path={GAIA_TINY}", f"image={sandbox_image}", "level=1"]
    scripted_server.entries = [
        Entry("invented lagoon", [{"say": "FINAL ANSWER: Quillfeather Lagoon"}]),
        Entry("visitors per gallery", [{"say": "I cannot open files."}]),
    ]
    subprocess.run(
        [*eval_command(task, tmp_path / "logs"), "--solver", "generate"],
        check=True,
        capture_output=True,
    )
    scripted_server.entries = [
        Entry("invented lagoon", [{"submit": "Quillfeather Lagoon"}]),
        Entry(
            "visitors per gallery",
            [{"call": "python", "args": {"code": "print(48671)"}}, {"submit_output": True}],
        ),
    ]
    solver = f"{SUPPORT / 'agents.py'}@gaia_react"
    subprocess.run(
        [*eval_command(task, tmp_path / "logs"), "--solver", solver, "-S", "timeout=30"],
        check=True,
        capture_output=True,
    )
    code, out, err = invoke("report", str(tmp_path / "logs"), "--format", "json")
    assert code == 0, err
    groups = {g["group"]: g for g in json.loads(out)["groups"]}
    assert len(groups) == 3, list(groups)
    default = groups[MODEL]
    assert default["flags"] == ["level 1 only"] and default["settings"]["solver"] is None
    generate = next(g for name, g in groups.items() if "solver=generate" in name)
    assert generate["settings"]["tools"] == [] and "tools=none" in generate["group"]
    assert generate["flags"][:2] == ["custom solver: generate", "non-default tools: none"]
    react = next(g for name, g in groups.items() if "gaia_react" in name)
    assert react["settings"]["tools"] == ["bash", "python", "submit"]
    assert react["settings"]["solver_args"] == {"timeout": 30}
    assert "solver_args=(timeout=30)" in react["group"]
    accuracy = {name: g["levels"][-1]["accuracy"] for name, g in groups.items()}
    assert accuracy[MODEL] == 1.0 and accuracy[react["group"]] == 1.0
    assert accuracy[generate["group"]] == 0.5  # the marker answered one; the file was not read
    for log in (tmp_path / "logs").glob("*.eval"):
        evalspec = read_eval_log(str(log), header_only=True).eval
        assert evalspec.metadata is not None and "gaia" in evalspec.metadata
    assert offered_tools([]) is None
