"""Bad input at the user's surface (`inspect eval` and the task): one clear line, never a traceback."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import run_eval_cli
from scenario import GAIA_TINY

VALIDATION = GAIA_TINY / "2023" / "validation"


def _broken_snapshots(root: Path) -> dict[str, Path]:
    """Damaged copies of gaia-tiny, each broken in one way."""
    made: dict[str, Path] = {}
    for name in ("no_attachment", "attachment_is_dir", "corrupt", "empty_split", "truncated"):
        copy = root / name
        shutil.copytree(GAIA_TINY, copy)
        made[name] = copy
    split = "2023/validation"
    csv = next((made["no_attachment"] / split).glob("*.csv"))
    csv.unlink()
    xlsx = next((made["attachment_is_dir"] / split).glob("*.xlsx"))
    xlsx.unlink()
    xlsx.mkdir()
    (made["corrupt"] / split / "metadata.parquet").write_bytes(b"PAR1\x00garbage")
    for item in (made["empty_split"] / split).iterdir():
        item.unlink()
    data = (made["truncated"] / split / "metadata.parquet").read_bytes()
    (made["truncated"] / split / "metadata.parquet").write_bytes(data[: len(data) // 2])
    return made


# (-T arguments, what the one line must say); {broken:<name>} is replaced by a damaged snapshot
CASES: list[tuple[list[str], str]] = [
    (["level=4"], "level must be 1, 2 or 3"),
    (["level=0"], "level must be 1, 2 or 3"),
    (["level=one"], "level must be 1, 2 or 3"),
    (["level=[1,7]"], "level must be 1, 2 or 3"),
    (["split=dev"], "split must be one of validation, test"),
    (["hub=kaggle"], "hub must be one of huggingface, modelscope"),
    (["ids=[]"], "ids is empty"),
    (["ids=not-a-task-id"], "ids not in the validation split"),
    (
        ["ids=08efad48-7b05-5662-b32c-3635fd01cd40", "level=1"],
        "ids not in the validation split at level 1",
    ),
    (["dataset_path=/nonexistent/gaia"], "is not a directory"),
    (["dataset_path=/tmp"], "is not a GAIA snapshot"),
    (["dataset_path={broken:empty_split}"], "is not a GAIA snapshot"),
    (["dataset_path={broken:no_attachment}"], "is missing from"),
    (["dataset_path={broken:attachment_is_dir}"], "is missing from"),
    (["dataset_path={broken:corrupt}"], "cannot read GAIA metadata"),
    (["dataset_path={broken:truncated}"], "cannot read GAIA metadata"),
    (["command_timeout=0"], "command_timeout must be a whole number"),
    (["command_timeout=soon"], "command_timeout must be a whole number"),
    (["max_attempts=-1"], "max_attempts must be a whole number"),
    (["network=maybe"], "network must be true or false"),
    (["python=1"], "python must be true or false"),
    (["image="], "image must name a Docker image"),
    (["memory=lots"], "memory must be a size"),
    (["cpus=0"], "cpus must be a positive number"),
    (["pids=2"], "pids must be 16 or more"),
    (["sandbox=podman"], "sandbox must be one of docker, compose, k8s"),
    (["mcp_servers=['']"], "mcp_servers has an empty entry"),
    (["hub=huggingface", "split=test", "revision=main"], "offline mode is on"),
]


@pytest.fixture(scope="module")
def broken(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return _broken_snapshots(tmp_path_factory.mktemp("broken"))


@pytest.mark.parametrize(("args", "message"), CASES, ids=[" ".join(a) for a, _ in CASES])
def test_bad_task_parameters(
    args: list[str], message: str, broken: dict[str, Path], tmp_path: Path
) -> None:
    resolved = []
    for arg in args:
        for name, path in broken.items():
            arg = arg.replace(f"{{broken:{name}}}", str(path))
        resolved.append(arg)
    if not any(a.startswith(("dataset_path=", "hub=")) for a in resolved):
        resolved.append(f"dataset_path={GAIA_TINY}")
    run = run_eval_cli(
        resolved,
        tmp_path,
        env={"INSPECT_GAIA_CACHE_DIR": str(tmp_path / "cache"), "HF_HUB_OFFLINE": "1"},
    )
    output = run.stdout + run.stderr
    assert run.returncode != 0, output[-500:]
    assert message in " ".join(output.split()), output[-800:]
    assert "Traceback" not in output
    assert not list(tmp_path.glob("**/*.eval")), "nothing may start"
    assert not list((tmp_path / "cache").glob("**/.inspect_gaia-complete-*"))


def test_bogus_docker_host_is_named(tmp_path: Path) -> None:
    run = run_eval_cli(
        [f"dataset_path={GAIA_TINY}", "level=1"], tmp_path, env={"DOCKER_HOST": "tcp://127.0.0.1:9"}
    )
    output = " ".join((run.stdout + run.stderr).split())
    assert run.returncode != 0
    assert "Traceback" not in output
    assert "docker" in output.lower()


@pytest.mark.docker
def test_missing_image_without_registry_is_named(sandbox_image: str, tmp_path: Path) -> None:
    run = run_eval_cli(
        [f"dataset_path={GAIA_TINY}", "image=inspect-gaia/no-such-image:0", "level=1"], tmp_path
    )
    output = " ".join((run.stdout + run.stderr).split())
    assert run.returncode != 0, output[-800:]
    assert (
        "sandbox image inspect-gaia/no-such-image:0 is not present and cannot be pulled" in output
    )
    assert "inspect-gaia image build --offline" in output and "Traceback" not in output
    assert not list(tmp_path.glob("**/*.eval")), "no run may start"
