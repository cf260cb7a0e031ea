"""The built distributions: what pip and PyPI read from them, and a wheel that runs GAIA.

The wheel and sdist carry the licence (LICENSE, and NOTICE for the ported GAIA scorer) and say
which Python they need, so an interpreter too old for inspect_ai is refused by pip with that
reason instead of a resolver error about inspect_ai. The built wheel, installed into a fresh venv,
runs GAIA from any directory.
"""

from __future__ import annotations

import email.parser
import glob
import html
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from email.message import Message
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet

from support.scripted_model import ScriptedModel
from tests.helpers import REPO, cli_eval
from tests.scenario import GAIA_TINY

VISITS = "9410e454-b071-52ff-ac24-dce9845bebd0"
REQUIRES_PYTHON = ">=3.11"
"""inspect_ai 0.3.281 and later declare ``Requires-Python: >=3.11``."""


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sdist and wheel of this checkout, built as a release is (hatchling, no isolation)."""
    out = tmp_path_factory.mktemp("dist")
    build = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--sdist", "--wheel"]
        + ["--outdir", str(out), str(REPO)],
        capture_output=True,
        text=True,
    )
    assert build.returncode == 0, build.stdout[-2000:] + build.stderr[-2000:]
    return out


def _metadata(text: str) -> Message:
    return email.parser.Parser().parsestr(text)


@pytest.mark.slow
def test_wheel_and_sdist_metadata(dist: Path) -> None:
    (wheel,) = dist.glob("inspect_gaia-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        (info,) = {name.split("/")[0] for name in names if ".dist-info/" in name}
        metadata = _metadata(archive.read(f"{info}/METADATA").decode())
        licence = archive.read(f"{info}/licenses/LICENSE").decode()
        notice = archive.read(f"{info}/licenses/NOTICE").decode()
    # the package alone: never the tests' and benchmarks' plumbing (support/) or the benchmarks
    assert {name.split("/")[0] for name in names} == {"inspect_gaia", info}
    assert metadata["Requires-Python"] == REQUIRES_PYTHON
    assert metadata["License-Expression"] == "Apache-2.0"
    assert sorted(metadata.get_all("License-File") or []) == ["LICENSE", "NOTICE"]
    assert licence == (REPO / "LICENSE").read_text()
    assert "Apache License" in licence and "Version 2.0, January 2004" in licence
    # Apache-2.0 section 4: the ported scorer's copyright and licence travel with it.
    assert "Copyright 2023 The GAIA Benchmark Authors" in notice
    assert "src/inspect_gaia/_official_scorer.py" in notice
    assert "Programming Language :: Python :: 3.11" in (metadata.get_all("Classifier") or [])
    # Until the repository is public, no address at all: a placeholder would send PyPI's readers
    # nowhere (issue #30).
    assert metadata.get_all("Project-URL") is None
    assert "all" in (metadata.get_all("Provides-Extra") or [])

    (sdist,) = dist.glob("inspect_gaia-*.tar.gz")
    with tarfile.open(sdist) as archive:
        root = archive.getnames()[0].split("/")[0]
        pkg_info = archive.extractfile(f"{root}/PKG-INFO")
        for name in ("LICENSE", "NOTICE"):
            member = archive.extractfile(f"{root}/{name}")
            assert member is not None and member.read().decode() == (REPO / name).read_text()
        assert pkg_info is not None
        sdist_metadata = _metadata(pkg_info.read().decode())
    assert sdist_metadata["Requires-Python"] == REQUIRES_PYTHON
    assert sorted(sdist_metadata.get_all("License-File") or []) == ["LICENSE", "NOTICE"]


def python_310() -> str | None:
    """A Python 3.10 interpreter on this machine, if there is one."""
    candidates = [
        shutil.which("python3.10"),
        "/usr/bin/python3.10",
        "/usr/local/bin/python3.10",
        *sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.10*/bin/python3.10"))),
    ]
    for candidate in filter(None, candidates):
        try:
            probe = subprocess.run(
                [candidate, "-c", "import sys, pip; print(sys.version_info[:2])"],
                capture_output=True,
                text=True,
                timeout=60,
            )
        except OSError:
            continue
        if probe.returncode == 0 and probe.stdout.strip() == "(3, 10)":
            return candidate
    return None


@pytest.mark.slow
def test_python_310_is_refused_for_its_version(dist: Path, tmp_path: Path) -> None:
    (wheel,) = dist.glob("inspect_gaia-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        (info,) = {n.split("/")[0] for n in archive.namelist() if n.endswith(".dist-info/METADATA")}
        requires = _metadata(archive.read(f"{info}/METADATA").decode())["Requires-Python"]
    # What pip decides from, checked on every machine (CI may have no 3.10 to ask).
    specifier = SpecifierSet(requires)
    assert "3.10.13" not in specifier and "3.11.0" in specifier and "3.13.1" in specifier
    interpreter = python_310()
    if interpreter is None:
        return
    # pip on 3.10, as a user meets it on PyPI: an index page whose link carries the wheel's
    # Requires-Python (PyPI copies it from METADATA), and none of the dependencies. A wheel that
    # claimed 3.10 would get through and fail on a dependency ("No matching distribution found
    # for click>=8.1"), as inspect_gaia once did on inspect_ai.
    project = tmp_path / "simple" / "inspect-gaia"
    project.mkdir(parents=True)
    shutil.copy(wheel, project)
    (project / "index.html").write_text(
        f'<a href="{wheel.name}" data-requires-python="{html.escape(requires)}">{wheel.name}</a>'
    )
    pip = subprocess.run(
        [interpreter, "-m", "pip", "install", "--isolated", "--dry-run", "--ignore-installed"]
        + ["--disable-pip-version-check", "--index-url", (tmp_path / "simple").as_uri()]
        + ["inspect-gaia"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert pip.returncode != 0
    assert "require a different python version" in pip.stderr, pip.stderr
    assert f"Requires-Python {REQUIRES_PYTHON}" in pip.stderr, pip.stderr
    assert "No matching distribution found for inspect-gaia\n" in pip.stderr, pip.stderr


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
        for name in (
            "answer_sources/answer_sources.yaml",
            "egress/urlrules.py",
            "egress/addon.py",
            "tryout/questions/2023/validation/metadata.jsonl",
        ):
            assert archive.getinfo(f"inspect_gaia/{name}").file_size > 0

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    # openai: what inspect's openai-api provider needs, as for any OpenAI-compatible endpoint.
    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", str(wheel), "openai"], check=True)

    where = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "import inspect_gaia.sandboxes.spec as s; print(s.COMPOSE_FILE)",
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

    # the README's first command, from the wheel alone: its questions and its model are the
    # package's own, never the repository's tests/ or support/
    alone = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    tryout = subprocess.run(
        [str(venv / "bin" / "inspect-gaia"), "tryout", "--image", sandbox_image],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=alone,
    )
    assert tryout.returncode == 0, tryout.stdout[-2000:] + tryout.stderr[-2000:]
    assert "tryout: 3 of 3 invented questions right" in tryout.stdout
