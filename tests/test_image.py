from __future__ import annotations

from pathlib import Path

import pytest

from inspect_gaia.image_layout import OFFLINE_ATTACHMENTS_TAG
from inspect_gaia.images.sandbox import default_tag, dockerfile, is_image_name
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
