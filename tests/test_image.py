from __future__ import annotations

import subprocess
import uuid
from pathlib import Path

import pytest

from inspect_gaia.errors import GaiaError
from inspect_gaia.image_layout import OFFLINE_ATTACHMENTS_TAG
from inspect_gaia.images.sandbox import build_dockerfile, default_tag, dockerfile, is_image_name
from inspect_gaia.sandboxes.docker.engine import local_image_id
from support.scripted_model import Entry
from tests.helpers import Play, eval_gaia
from tests.scenario import GAIA_MINI

RAINFALL = "cdd4d48b-5eea-5f81-a6f7-c714f21f859f"  # gaia-mini's .xlsx question
READERS = (
    'python3 -c "import pandas, openpyxl, pypdf, docx, pptx, PIL; '
    "print(openpyxl.load_workbook('/shared_files/" + RAINFALL + ".xlsx').active.max_row)\" "
    "&& command -v pdftotext ffmpeg >/dev/null && echo readers-ok"
)


def test_default_tags_are_never_an_upstream_name() -> None:
    assert default_tag(offline=True, attachments=False) == "inspect-gaia/sandbox:bookworm"
    assert default_tag(offline=True, attachments=True) == OFFLINE_ATTACHMENTS_TAG
    # a registry build FROM python:3.11 must not retag python:3.11 itself on the host
    assert default_tag(offline=False, attachments=False) == "inspect-gaia/sandbox:py3.11"
    for offline in (True, False):
        for attachments in (True, False):
            assert default_tag(offline, attachments).startswith("inspect-gaia/sandbox:")


@pytest.mark.parametrize(
    "name",
    [
        "python:3.11",
        "inspect-gaia/sandbox:bookworm-attachments",
        "localhost:5000/gaia/sandbox:v1.2_x",
        "my-registry.example/team/gaia",
        "a__b/c-d---e.f",
    ],
)
def test_image_names_docker_accepts(name: str) -> None:
    assert is_image_name(name)


@pytest.mark.parametrize(
    "name",
    ["Bad Tag!!", "Upper/case", "gaia:", "gaia:-x", "-gaia", "gaia/", "a//b", "gaia:" + "x" * 129],
)
def test_image_names_docker_refuses(name: str) -> None:
    assert not is_image_name(name)


def test_registry_dockerfile() -> None:
    plain = dockerfile(attachments=False)
    assert plain.startswith("FROM python:3.11\n") and "pip install" not in plain
    rich = dockerfile(attachments=True)
    for package in (
        "pandas",
        "openpyxl",
        "pypdf",
        "python-docx",
        "python-pptx",
        "pillow",
        "ffmpeg",
        "markitdown[docx,xlsx,pptx,pdf]",
    ):
        assert package in rich


@pytest.mark.docker
def test_attachment_image_reads_gaia_files(
    sandbox_image: str, scripted: Play, tmp_path: Path
) -> None:
    assert local_image_id(OFFLINE_ATTACHMENTS_TAG) is not None, (
        f"{OFFLINE_ATTACHMENTS_TAG} is missing — `inspect-gaia image build --offline --attachments`"
    )
    scripted([Entry("", [{"bash": READERS}, {"submit_output": True}])])
    answers = {}
    for image in (OFFLINE_ATTACHMENTS_TAG, sandbox_image):
        log = eval_gaia(tmp_path, dataset_path=str(GAIA_MINI), ids=RAINFALL, image=image)
        assert log.samples is not None and log.samples[0].scores is not None
        answers[image] = str(log.samples[0].scores["gaia_scorer"].answer)
    rows, marker = answers[OFFLINE_ATTACHMENTS_TAG].split()
    assert int(rows) > 1 and marker == "readers-ok"
    assert "readers-ok" not in answers[sandbox_image]  # the plain image has no such readers


@pytest.mark.docker
def test_a_failed_docker_build_leaves_no_container_and_no_untagged_image(
    sandbox_image: str, tmp_path: Path
) -> None:
    """Issue #50: `image build --agents` without a registry failed in a `RUN pip install` step
    and left its stopped container and the image of the steps before it, untagged."""
    mark = uuid.uuid4().hex
    text = (
        f"FROM {sandbox_image}\nLABEL inspect_gaia.test={mark}\nRUN echo {mark} > /made\n"
        f"RUN echo {mark} && false\n"
    )
    tag = f"inspect-gaia/failed-build-test:{mark[:12]}"
    with pytest.raises(GaiaError, match="^docker build failed: .* — with no registry, build"):
        build_dockerfile(tag, text, "a test", lambda line: None, offline="`--offline`")

    def docker(*args: str) -> list[str]:
        found = subprocess.run(["docker", *args], capture_output=True, text=True, check=True)
        return found.stdout.split()

    images = docker("images", "-a", "-q", "--filter", f"label=inspect_gaia.test={mark}")
    containers = [
        line
        for line in subprocess.run(
            ["docker", "ps", "-a", "--no-trunc", "--format", "{{.ID}} {{.Command}}"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.splitlines()
        if mark in line
    ]
    for container in containers:  # left by the old code: removed, then reported
        docker("rm", "-f", container.split()[0])
    for image in images:
        subprocess.run(["docker", "rmi", "-f", image], capture_output=True)
    assert containers == [] and images == []
