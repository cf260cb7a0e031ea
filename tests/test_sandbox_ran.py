"""The sandbox that really ran: inspect's ``--sandbox`` replaces the task's, and the log says so.

A provider registered by another package (here a stand-in, registered by this test as any package
registers one) is handed the task's compose config and recorded; ``report`` groups by the
provider that ran, and flags what the replacement did not apply (decision: ``logs/sandbox_ran``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from inspect_ai.util import ExecResult, SandboxEnvironment, SandboxEnvironmentSpec, sandboxenv

from inspect_gaia import gaia
from inspect_gaia.logs.read import read_inspect_log
from inspect_gaia.logs.results import comparable_settings
from inspect_gaia.sandboxes.docker.config import GaiaComposeConfig
from support.scripted_model import Entry
from tests.helpers import SANDBOX_IMAGE, Play, eval_task, report_json, write_log
from tests.scenario import CREW, GAIA_TINY, LAGOON, VISITS

HANDED: list[Any] = []
"""The configs the stand-in was started with."""


@sandboxenv(name="gaia-test-standin")
class StandIn(SandboxEnvironment):
    """A provider of another package: takes compose files, runs every command as ``echo``."""

    @classmethod
    def config_files(cls) -> list[str]:
        return ["compose.yaml"]  # so inspect treats it as docker compatible

    @classmethod
    async def sample_init(
        cls, task_name: str, config: Any, metadata: dict[str, str]
    ) -> dict[str, SandboxEnvironment]:
        HANDED.append(config)
        return {"default": cls()}

    @classmethod
    async def sample_cleanup(
        cls,
        task_name: str,
        config: Any,
        environments: dict[str, SandboxEnvironment],
        interrupted: bool,
    ) -> None:
        return None

    async def exec(
        self,
        cmd: list[str],
        input: str | bytes | None = None,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        user: str | None = None,
        timeout: int | None = None,
        timeout_retry: bool = True,
        concurrency: bool = True,
    ) -> ExecResult[str]:
        return ExecResult(True, 0, "ran in the stand-in", "")

    async def write_file(self, file: str, contents: str | bytes) -> None:
        return None

    async def read_file(self, file: str, text: bool = True) -> Any:
        raise FileNotFoundError(file)


def test_another_packages_provider_is_handed_the_tasks_config_and_recorded(
    scripted: Play, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no compose.yaml of the user's for inspect to prefer
    scripted([Entry("", [{"bash": "hostname"}, {"submit_output": True}])])
    HANDED.clear()
    task = gaia(dataset_path=str(GAIA_TINY), image=SANDBOX_IMAGE, ids=LAGOON, memory="1g")
    log = eval_task(task, tmp_path / "logs", sandbox="gaia-test-standin")
    assert log.status == "success" and log.samples is not None
    assert log.samples[0].scores is not None
    assert log.samples[0].scores["gaia_scorer"].answer == "ran in the stand-in"
    (config,) = HANDED
    assert isinstance(config, GaiaComposeConfig)
    service = config.services["default"]
    assert (service.image, service.mem_limit) == (SANDBOX_IMAGE, "1g")
    run = read_inspect_log(log.location)
    assert run.sandbox_ran is not None and run.sandbox_ran.provider == "gaia-test-standin"
    assert run.provenance is not None and run.provenance.sandbox_provider == "gaia-docker"
    assert comparable_settings(run)["sandbox"] == "gaia-test-standin (inspect --sandbox)"
    # report: its own group, beside a run of the task's own sandbox, labelled and flagged
    own = write_log(
        tmp_path / "logs" / "own.eval",
        [{"id": VISITS, "level": 1, "target": "x", "answer": "x", "value": "C"}],
        params={"dataset_path": str(GAIA_TINY), "image": SANDBOX_IMAGE, "memory": "1g"},
        sandbox=SandboxEnvironmentSpec(
            "gaia-docker", task.sandbox.config if task.sandbox else None
        ),
    )
    assert read_inspect_log(own).sandbox_ran is not None
    groups = {g["group"]: g for g in report_json(str(tmp_path / "logs"))["groups"]}
    assert len(groups) == 2, list(groups)
    (replaced,) = [g for name, g in groups.items() if "inspect --sandbox" in name]
    assert "sandbox=gaia-test-standin (inspect --sandbox)" in replaced["group"]
    assert (
        "sandbox replaced by inspect's --sandbox: gaia-test-standin ran the task's compose config"
        in replaced["flags"]
    )
    (plain,) = [g for g in groups.values() if g is not replaced]
    assert "sandbox=docker" in plain["group"] and not plain["flags"]


def test_a_replacement_without_the_tasks_config_and_without_the_proxy_says_so(
    tmp_path: Path,
) -> None:
    log = write_log(
        tmp_path / "x.eval",
        [{"id": CREW, "level": 2, "target": "7", "answer": "7", "value": "C"}],
        params={"block_answer_sources": True},
        sandbox=SandboxEnvironmentSpec("docker", "/home/someone/project/compose.yaml"),
    )
    run = read_inspect_log(log)
    settings = comparable_settings(run)
    assert settings["sandbox"] == "docker (inspect --sandbox)"
    assert settings["block_answer_sources"] is False  # never pooled with really blocked runs
    (group,) = report_json(str(log))["groups"]
    assert group["flags"][:2] == [
        "sandbox replaced by inspect's --sandbox: docker ran /home/someone/project/compose.yaml: "
        "the task's image, limits and network were not applied",
        "block_answer_sources was asked, but docker ran without the task's egress proxy: nothing "
        "was blocked",
    ]


def test_a_config_given_with_the_tasks_own_provider_is_a_replacement_too(tmp_path: Path) -> None:
    """``--sandbox k8s:allowlist.yaml`` on a k8s task (docs/answer-sources.md).

    The provider is the task's, its values are not; a values file the task wrote is its own.
    """
    samples = [{"id": CREW, "level": 2, "target": "7", "answer": "7", "value": "C"}]
    own = tmp_path / "cache" / "k8s" / "values-0123456789abcdef.yaml"
    given = "/home/someone/gaia-allowlist.yaml"
    for config, setting in ((str(own), "k8s"), (given, f"k8s:{given} (inspect --sandbox)")):
        log = write_log(
            tmp_path / "k.eval",
            samples,
            params={"sandbox": "k8s"},
            sandbox=SandboxEnvironmentSpec("k8s", config),
        )
        assert comparable_settings(read_inspect_log(log))["sandbox"] == setting
    (group,) = report_json(str(log))["groups"]
    assert group["flags"][0] == (
        f"sandbox config replaced by inspect's --sandbox: k8s ran {given}: the task's image, "
        "limits and network were not applied"
    )
