"""Bad input at the user's surface, end to end through `inspect eval`: one clear line, no run.

Every refusal is tested in-process where it is made (``test_params.py``, ``test_dataset.py``);
these few cases check that `inspect eval` prints the one line, with no traceback and no log.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from helpers import run_eval_cli
from scenario import GAIA_TINY


def _assert_refused(run_output: str, returncode: int, message: str, workdir: Path) -> None:
    output = " ".join(run_output.split())
    assert returncode != 0, output[-500:]
    assert message in output, output[-800:]
    assert "Traceback" not in output
    assert not list(workdir.glob("**/*.eval")), "nothing may start"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["level=4"], "level must be 1, 2 or 3"),
        (["split=test", "max_attempts=2"], "max_attempts=2 needs answers"),
        (["hub=huggingface", "split=test", "revision=main"], "offline mode is on"),
    ],
)
def test_a_refused_parameter_stops_inspect_eval_in_one_line(
    args: list[str], message: str, tmp_path: Path
) -> None:
    if not any(a.startswith("hub=") for a in args):
        args = [*args, f"dataset_path={GAIA_TINY}"]
    run = run_eval_cli(
        args,
        tmp_path,
        env={"INSPECT_GAIA_CACHE_DIR": str(tmp_path / "cache"), "HF_HUB_OFFLINE": "1"},
    )
    _assert_refused(run.stdout + run.stderr, run.returncode, message, tmp_path)
    assert not list((tmp_path / "cache").glob("**/.inspect_gaia-complete-*"))


def test_a_hostile_snapshot_stops_inspect_eval_in_one_line(tmp_path: Path) -> None:
    snapshot = tmp_path / "snapshot"
    shutil.copytree(GAIA_TINY, snapshot)
    attachment = next((snapshot / "2023" / "validation").glob("*.csv"))
    attachment.unlink()
    attachment.symlink_to("/etc/hostname")
    run = run_eval_cli([f"dataset_path={snapshot}"], tmp_path)
    _assert_refused(run.stdout + run.stderr, run.returncode, "links outside the snapshot", tmp_path)


def test_bogus_docker_host_is_named(tmp_path: Path) -> None:
    run = run_eval_cli(
        [f"dataset_path={GAIA_TINY}", "level=1"], tmp_path, env={"DOCKER_HOST": "tcp://127.0.0.1:9"}
    )
    _assert_refused(
        run.stdout + run.stderr,
        run.returncode,
        "Docker Engine not running at tcp://127.0.0.1:9 — start it",
        tmp_path,
    )


@pytest.mark.docker
@pytest.mark.parametrize("kind", ["docker", "compose"])
def test_missing_image_without_registry_is_named(
    sandbox_image: str, kind: str, tmp_path: Path
) -> None:
    run = run_eval_cli(
        [
            f"dataset_path={GAIA_TINY}",
            "image=inspect-gaia/no-such-image:0",
            "level=1",
            f"sandbox={kind}",
        ],
        tmp_path,
    )
    output = run.stdout + run.stderr
    _assert_refused(
        output,
        run.returncode,
        "sandbox image inspect-gaia/no-such-image:0 is not present and cannot be pulled",
        tmp_path,
    )
    assert "inspect-gaia image build --offline" in " ".join(output.split())


@pytest.mark.docker
@pytest.mark.parametrize("kind", ["docker", "compose"])
def test_a_disk_limit_the_engine_cannot_enforce_is_refused(
    sandbox_image: str, kind: str, tmp_path: Path
) -> None:
    """Issue #17 finding 3: with compose every sample failed ("No services started"), exit 0."""
    run = run_eval_cli(
        [f"dataset_path={GAIA_TINY}", f"image={sandbox_image}", "level=1", "disk=10g"]
        + [f"sandbox={kind}"],
        tmp_path,
    )
    output = run.stdout + run.stderr
    _assert_refused(
        output, run.returncode, "-T disk=10g cannot be applied by this Docker Engine", tmp_path
    )
    assert "No services started" not in output
