"""The built wheel, installed into a fresh venv, runs GAIA from any directory."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from helpers import REPO, cli_eval
from scenario import GAIA_TINY
from scripted_model import ScriptedModel

VISITS = "9410e454-b071-52ff-ac24-dce9845bebd0"


@pytest.mark.slow
@pytest.mark.docker
def test_wheel_in_a_fresh_venv(
    sandbox_image: str, scripted_validation: ScriptedModel, tmp_path: Path
) -> None:
    dist = tmp_path / "dist"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(REPO)],
        check=True,
    )
    (wheel,) = dist.glob("inspect_gaia-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        for name in ("compose.yaml", "values.yaml"):
            assert archive.read(f"inspect_gaia/{name}").decode() == (REPO / name).read_text()
        # the answer-source list, and what the egress proxy's container is given
        for name in ("answer_sources.yaml", "_urlrules.py", "_egress/addon.py"):
            assert archive.getinfo(f"inspect_gaia/{name}").file_size > 0

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    # openai: what inspect's openai-api provider needs, as for any OpenAI-compatible endpoint.
    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", str(wheel), "openai"], check=True)

    where = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "import inspect_gaia.sandbox as s; print(s.COMPOSE_FILE)",
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    ).stdout.strip()
    assert where.startswith(str(venv)) and Path(where).is_file()

    log = cli_eval(
        [f"dataset_path={GAIA_TINY}", f"image={sandbox_image}", f"ids={VISITS}"],
        tmp_path,
        inspect=str(venv / "bin" / "inspect"),
    )
    assert log.status == "success" and log.samples is not None
    (sample,) = log.samples
    assert sample.scores is not None and sample.scores["gaia_scorer"].value == "C"
