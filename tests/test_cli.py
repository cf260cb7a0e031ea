"""The inspect-gaia command line, on logs of real `inspect eval` runs and the evalscope fixture."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import huggingface_hub
import pytest
from click.testing import CliRunner
from conftest import MODEL, eval_gaia
from huggingface_hub import constants
from scenario import EVALSCOPE_RUN, GAIA_MINI, MINI_CREW, MINI_MEMO, MINI_TEST, MINI_VALIDATION
from scripted_model import ScriptedModel
from test_hub import _StandInDownload

from inspect_gaia._cli.main import cli

MINI_TEST_IDS = {
    "d458266e-23df-591b-bd01-92ce51d255e9",
    "6d24cb8f-5443-5c24-9ac6-69bb97f0faf5",
    "f4b6e86d-4ee3-5950-8eb8-e53fe80d1f92",
    "419cdd18-608d-5453-8f6d-1d340a0b25fa",
}


@dataclass(frozen=True)
class Logs:
    validation: Path
    test: Path
    test_level2: Path


def _run(scripted: ScriptedModel, entries: list, directory: Path, **params: object) -> Path:  # type: ignore[type-arg]
    scripted.entries = entries
    log = eval_gaia(directory, dataset_path=str(GAIA_MINI), **params)
    assert log.status == "success"
    return Path(log.location)


@pytest.fixture(scope="module")
def mini_logs(
    sandbox_image: str, scripted_server: ScriptedModel, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Logs]:
    """Logs of real runs on gaia-mini: validation, test, and test at level 2 only."""
    root = tmp_path_factory.mktemp("mini-logs")
    yield Logs(
        validation=_run(scripted_server, MINI_VALIDATION, root / "v", image=sandbox_image),
        test=_run(scripted_server, MINI_TEST, root / "t", image=sandbox_image, split="test"),
        test_level2=_run(
            scripted_server, MINI_TEST, root / "t2", image=sandbox_image, split="test", level=2
        ),
    )


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    assert not isinstance(result.exception, Exception) or isinstance(
        result.exception, SystemExit
    ), result.exception
    return result.exit_code, result.stdout, result.stderr


def test_help_explains_every_subcommand() -> None:
    code, out, _ = invoke("--help")
    assert code == 0
    for name in ("download", "doctor", "image", "submission", "compare", "report"):
        assert name in out
    assert invoke("image", "build", "--help")[0] == 0


def test_console_script_is_installed() -> None:
    script = Path(sys.executable).parent / "inspect-gaia"
    run = subprocess.run(
        [str(script), "report", "/nonexistent.eval"], capture_output=True, text=True
    )
    assert run.returncode != 0
    assert "Traceback" not in run.stderr and "does not exist" in run.stderr


# --- report ----------------------------------------------------------------------------------------


@pytest.mark.docker
def test_report_csv(mini_logs: Logs) -> None:
    code, out, _ = invoke("report", str(mini_logs.validation), "--format", "csv")
    assert code == 0
    rows = {row["level"]: row for row in csv.DictReader(io.StringIO(out))}
    assert set(rows) == {"1", "2", "3", "all"}
    assert (rows["1"]["n"], rows["1"]["accuracy"]) == ("3", "1.0000")
    assert rows["3"]["accuracy"] == "0.6667" and rows["3"]["limit_hit"] == "1"
    assert rows["all"]["n"] == "9" and rows["all"]["accuracy"] == "0.8889"
    assert float(rows["all"]["stderr"]) == pytest.approx(1 / 9, abs=1e-4)
    assert rows["all"]["model"] == MODEL


@pytest.mark.docker
def test_report_several_logs_as_markdown_and_terminal(mini_logs: Logs) -> None:
    code, out, _ = invoke(
        "report", str(mini_logs.validation), str(mini_logs.test), "--format", "markdown"
    )
    assert code == 0
    assert "| model | split | level | n | accuracy | stderr | errored | limit_hit |" in out
    assert "| validation | all | 9 |" in out and "| test | all | 4 |" in out
    code, out, _ = invoke("report", str(mini_logs.validation))
    assert code == 0 and "GAIA scores" in out and "0.8889" in out


def test_report_rejects_a_non_log(tmp_path: Path) -> None:
    bogus = tmp_path / "x.eval"
    bogus.write_text("not a log")
    code, _, err = invoke("report", str(bogus))
    assert code == 1 and err.startswith("inspect-gaia: cannot read inspect log")


# --- submission ------------------------------------------------------------------------------------


@pytest.mark.docker
def test_submission_round_trip(mini_logs: Logs, tmp_path: Path) -> None:
    out_file = tmp_path / "submission.jsonl"
    code, out, _ = invoke("submission", str(mini_logs.test), "-o", str(out_file))
    assert code == 0, out
    lines = [json.loads(line) for line in out_file.read_text().splitlines()]
    assert {line["task_id"] for line in lines} == MINI_TEST_IDS and len(lines) == 4
    for line in lines:
        assert set(line) == {"task_id", "model_answer", "reasoning_trace"}
        assert line["model_answer"] in {
            "0",
            "1",
        }  # files in /shared_files: its own attachment or none
        assert "[bash]" in line["reasoning_trace"] and "[submit]" in line["reasoning_trace"]


@pytest.mark.docker
def test_submission_checks_ids(mini_logs: Logs, tmp_path: Path) -> None:
    out_file = tmp_path / "s.jsonl"
    code, _, err = invoke("submission", str(mini_logs.test_level2), "-o", str(out_file))
    assert code == 1 and "2 task id(s) of the test split missing" in err
    assert "d458266e-23df-591b-bd01-92ce51d255e9" in err and not out_file.exists()
    code, _, err = invoke(
        "submission", str(mini_logs.test), str(mini_logs.test_level2), "-o", str(out_file)
    )
    assert code == 1 and "answered more than once" in err
    code, _, err = invoke("submission", str(mini_logs.validation), "-o", str(out_file))
    assert code == 1 and "validation-split logs" in err and "--allow-validation" in err
    code, _, _ = invoke(
        "submission", str(mini_logs.validation), "-o", str(out_file), "--allow-validation"
    )
    assert code == 0 and len(out_file.read_text().splitlines()) == 9


# --- compare ---------------------------------------------------------------------------------------


@pytest.mark.docker
def test_compare_with_evalscope(mini_logs: Logs, tmp_path: Path) -> None:
    code, out, _ = invoke(
        "compare",
        str(mini_logs.validation),
        str(EVALSCOPE_RUN),
        "--format",
        "json",
        "--plot",
        str(tmp_path / "c.png"),
    )
    assert code == 0
    summary_text, disagreements_text = out.split("\n]\n", 1)
    summary = {row["level"]: row for row in json.loads(summary_text + "\n]")}
    disagreements = json.loads(disagreements_text)
    assert summary["2"]["inspect_acc"] == 1.0
    assert summary["2"]["evalscope_acc"] == pytest.approx(2 / 3)
    assert summary["3"]["inspect_acc"] == pytest.approx(2 / 3)
    assert summary["3"]["evalscope_acc"] == pytest.approx(1 / 3)
    assert summary["all"]["n"] == 9 and summary["all"]["agreement"] == pytest.approx(7 / 9)
    # evalscope's answers re-scored with our scorer give its own verdicts: the gaps are the agents'
    # (the crew order) and the answer extraction (FINAL ANSWER: taken from a plain message).
    assert summary["all"]["evalscope_rescored"] == summary["all"]["evalscope_acc"]
    assert summary["all"]["inspect_rescored"] == summary["all"]["inspect_acc"]
    by_id = {d["task_id"]: d for d in disagreements}
    assert set(by_id) == {MINI_CREW, MINI_MEMO}
    assert by_id[MINI_CREW]["evalscope_answer"] == "Bartholomew, Ilse, Osric, Quentin"
    assert by_id[MINI_MEMO]["inspect_answer"] == "Harbour Mill Renovation"
    assert by_id[MINI_MEMO]["evalscope_answer"] == "FINAL ANSWER: Harbour Mill Renovation"
    assert (tmp_path / "c.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.docker
def test_compare_markdown_and_csv(mini_logs: Logs) -> None:
    code, out, _ = invoke(
        "compare", str(mini_logs.validation), str(EVALSCOPE_RUN), "--format", "markdown"
    )
    assert code == 0
    assert (
        "| level | n | inspect_acc | evalscope_acc | inspect_rescored | evalscope_rescored | agreement |"
        in out
    )
    assert f"| {MINI_CREW} | 2 |" in out
    code, out, _ = invoke(
        "compare", str(mini_logs.validation), str(EVALSCOPE_RUN), "--format", "csv"
    )
    assert code == 0 and out.startswith("level,n,inspect_acc,")


def test_compare_rejects_a_non_evalscope_dir(tmp_path: Path) -> None:
    log = tmp_path / "x.eval"
    log.write_text("")
    code, _, err = invoke("compare", str(log), str(tmp_path))
    assert code == 1 and "inspect-gaia:" in err


# --- download --------------------------------------------------------------------------------------


def test_download_fills_the_cache_once(
    isolated_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stand_in = _StandInDownload(GAIA_MINI)
    monkeypatch.setattr(huggingface_hub, "snapshot_download", stand_in)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    code, out, _ = invoke("download", "--json")
    assert code == 0
    fetched = {item["split"]: item for item in json.loads(out)}
    assert (fetched["validation"]["questions"], fetched["validation"]["attachments"]) == (9, 4)
    assert (fetched["test"]["questions"], fetched["test"]["attachments"]) == (4, 2)
    assert len(stand_in.calls) == 2
    code, out, _ = invoke("download", "--split", "validation")
    assert code == 0 and out.startswith("✓ validation: 9 questions, 4 attachments")
    assert len(stand_in.calls) == 2  # already complete: nothing fetched again


def test_download_gated_is_one_line(isolated_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    code, _, err = invoke("download", "--split", "test")
    assert code == 1 and err.count("\n") == 1 and "offline mode is on" in err


# --- doctor ----------------------------------------------------------------------------------------


@pytest.mark.docker
def test_doctor_passes_with_the_engine_up(sandbox_image: str, gaia_tiny: Path) -> None:
    code, out, _ = invoke(
        "doctor",
        "--image",
        sandbox_image,
        "--dataset-path",
        str(gaia_tiny),
        "--max-sandboxes",
        "4",
        "--min-free-gb",
        "1",
        "--json",
    )
    checks = {c["name"]: c for c in json.loads(out)}
    assert code == 0, checks
    assert set(checks) == {
        "Docker Engine",
        "Docker Compose",
        "sandbox image",
        "dataset",
        "free disk",
        "address pools",
    }
    assert all(c["ok"] for c in checks.values())


def test_doctor_fails_with_a_bogus_docker_host(
    monkeypatch: pytest.MonkeyPatch, gaia_tiny: Path
) -> None:
    monkeypatch.setenv("DOCKER_HOST", "tcp://127.0.0.1:9")
    code, out, _ = invoke("doctor", "--dataset-path", str(gaia_tiny), "--min-free-gb", "0")
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith("✗ Docker Engine: not reachable at tcp://127.0.0.1:9")
    assert "start it" in lines[0]


def test_doctor_flags_a_missing_token(
    isolated_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(huggingface_hub, "get_token", lambda: None)
    monkeypatch.setenv("DOCKER_HOST", "tcp://127.0.0.1:9")
    code, out, _ = invoke("doctor", "--json", "--min-free-gb", "0")
    checks = {c["name"]: c for c in json.loads(out)}
    assert code == 1
    assert not checks["HF token"]["ok"] and "HF_TOKEN" in checks["HF token"]["fix"]


# --- image -----------------------------------------------------------------------------------------


@pytest.mark.docker
def test_image_build_is_idempotent(sandbox_image: str) -> None:
    code, out, err = invoke("image", "build", "--offline", "--tag", sandbox_image)
    assert code == 0 and out.strip() == sandbox_image and "already present" in err


def test_image_build_offline_needs_root_or_debootstrap(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    code, _, err = invoke(
        "image", "build", "--offline", "--tag", "inspect-gaia/test:never", "--force"
    )
    assert code == 1 and "needs root" in err


@pytest.mark.docker
def test_doctor_address_pools_depend_on_the_sandbox(sandbox_image: str) -> None:
    import docker

    from inspect_gaia._cli.doctor import check_networks

    client = docker.from_env()
    # gaia-docker: one network per run, so any number of sandboxes fits
    assert check_networks(client, 100, True, "docker").ok
    # compose: one network per sandbox, and Docker's default pools hold ~31
    crowded = check_networks(client, 100, True, "compose")
    assert not crowded.ok and "-T sandbox=docker" in crowded.fix
    assert check_networks(client, 100, False, "compose").ok
