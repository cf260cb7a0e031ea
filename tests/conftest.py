"""Fixtures: the scripted model server, the sandbox image, caches; CI's no-skip rule.

Helpers that tests import by name are in ``helpers.py``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from huggingface_hub import constants

from inspect_gaia.sandboxes.docker import TAG_VARIABLE
from support.answer_pages import MIRROR_HOST, NOTES_HOST, WEATHER_HOST
from support.real_web import RealWeb
from support.real_web import real_web as start_real_web
from support.scripted_model import Entry, ScriptedModel, serve
from support.standins import StandIns, standins
from tests.helpers import SANDBOX_IMAGE, MiniLogs, Play, eval_gaia, quiet_handler, serve_http
from tests.scenario import GAIA_MINI, GAIA_TINY, MINI_TEST, MINI_VALIDATION, TEST, VALIDATION

# Every sandbox this session's runs create (in this process or an `inspect` it starts) carries
# this tag, so the leftover checks count the session's own and not another suite's on the engine.
# Under pytest-xdist each worker is a session of its own (it inherits the controller's tag).
os.environ.setdefault(TAG_VARIABLE, f"pytest-{os.getpid()}-{uuid.uuid4().hex[:8]}")
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ[TAG_VARIABLE] += f"-{os.environ['PYTEST_XDIST_WORKER']}"


@pytest.fixture
def gaia_tiny() -> Path:
    return GAIA_TINY


@pytest.fixture
def snapshot(gaia_tiny: Path, tmp_path: Path) -> Path:
    """A copy of gaia-tiny, for a test to damage (``helpers.rewrite_record``)."""
    copy = tmp_path / "snapshot"
    shutil.copytree(gaia_tiny, copy)
    return copy


@pytest.fixture(scope="session")
def sandbox_image() -> str:
    """The sandbox image; a missing engine or image fails the test, it never skips it."""
    info = subprocess.run(["docker", "info"], capture_output=True, text=True)
    assert info.returncode == 0, (
        "Docker Engine not running — start it with `bash .ci/docker-engine.sh` (or your "
        f"platform's Docker service): {info.stderr.strip()[-300:]}"
    )
    image = subprocess.run(["docker", "image", "inspect", SANDBOX_IMAGE], capture_output=True)
    assert image.returncode == 0, (
        f"sandbox image {SANDBOX_IMAGE} is missing — build it with "
        "`inspect-gaia image build --offline` or set INSPECT_GAIA_TEST_IMAGE"
    )
    return SANDBOX_IMAGE


@pytest.fixture(scope="session")
def egress_image(sandbox_image: str) -> str:
    """The egress proxy's image; missing, the test fails (CI builds it: .ci/sandbox-images.sh)."""
    from inspect_gaia.egress import PROXY_IMAGE

    found = subprocess.run(["docker", "image", "inspect", PROXY_IMAGE], capture_output=True)
    assert found.returncode == 0, (
        f"egress proxy image {PROXY_IMAGE} is missing — build it with "
        "`inspect-gaia image build --offline --egress-proxy`"
    )
    return PROXY_IMAGE


STANDIN_HOSTS = [MIRROR_HOST, NOTES_HOST, WEATHER_HOST, "modelscope.cn", "bulk.example"]
"""The names the stand-in "internet" answers as (``support/answer_pages.py``)."""


@pytest.fixture
def internet(sandbox_image: str) -> Iterator[StandIns]:
    """The egress tests' stand-in "internet" (``support/standins.py``), allowed to their runs."""
    with standins(sandbox_image, STANDIN_HOSTS) as made:
        yield made


@pytest.fixture
def real_web(sandbox_image: str) -> Iterator[RealWeb]:
    """The stand-in web that speaks like the real web (``support/real_web.py``: its docstring lists
    the hosts and behaviours): HTTP/2 and HTTP/1.1 over TLS 1.3, brotli, redirects, cookies, big
    and slow bodies, pages whose scripts fetch. Runs started meanwhile may reach it and trust its
    CA; ``real_web.attaching()`` connects their proxies, ``real_web.served()`` is what it answered,
    ``real_web.client(image)`` and ``support.real_web.proxied`` give a container beside it or
    behind a run's proxy."""
    with start_real_web(sandbox_image) as made:
        yield made


@pytest.fixture(scope="session")
def scripted_server() -> Iterator[ScriptedModel]:
    """One scripted model server for the whole session (env vars set), scenario swapped per test.

    One server, not one per test: inspect caches model clients, so a second server on another port
    would leave later evals talking to a closed one.
    """
    model = ScriptedModel([])
    with serve(model) as url, pytest.MonkeyPatch.context() as patch:
        patch.setenv("SCRIPTED_BASE_URL", url)
        patch.setenv("SCRIPTED_API_KEY", "scripted")
        yield model


@pytest.fixture
def scripted(scripted_server: ScriptedModel) -> Play:
    """Set the scenario the scripted model plays in this test, and how it talks (``options``).

    By default it talks like a real model: prose beside every tool call. A test that needs a
    quiet model says so: ``scripted(entries, prose=False)``.
    """

    def play(entries: list[Entry], **options: Any) -> ScriptedModel:
        scripted_server.entries = entries
        scripted_server.options = dict(options)
        scripted_server.calls.clear()
        scripted_server.tools_offered.clear()
        scripted_server.requests.clear()
        scripted_server.tries.clear()
        return scripted_server

    return play


@pytest.fixture
def scripted_validation(scripted: Play) -> ScriptedModel:
    """The scripted model answering gaia-tiny's validation questions."""
    return scripted(VALIDATION)


@pytest.fixture
def scripted_test_split(scripted: Play) -> ScriptedModel:
    """The scripted model answering gaia-tiny's test questions."""
    return scripted(TEST)


SANDBOX_KINDS = ["docker", "compose"]
"""Both Docker sandboxes: gaia-docker (the default) and inspect's compose sandbox."""


@pytest.fixture(params=SANDBOX_KINDS)
def sandbox_kind(request: pytest.FixtureRequest) -> str:
    """Run a cleanup, fault or leak test against each Docker sandbox (``-T sandbox=...``)."""
    return str(request.param)


@pytest.fixture
def isolated_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point the snapshot cache at an empty temporary directory."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("INSPECT_GAIA_CACHE_DIR", str(cache))
    return cache


@pytest.fixture(autouse=True)
def wide_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """Terminal tables take the terminal's width: tests fix it, whatever terminal runs pytest.

    160 columns, so that tests reading table cells see whole rows; tests of narrow terminals set
    their own width.
    """
    monkeypatch.setenv("COLUMNS", "160")


@pytest.fixture
def hubs_answer(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Both hubs' endpoints answer (a local stand-in), for tests that stand in for the download.

    A download first checks that the hub answers at all; tests that replace the hub client's
    download still go through that check, against this address.
    """
    with serve_http(quiet_handler({"/": (200, "text/html", b"a hub")})) as url:
        monkeypatch.setattr(constants, "ENDPOINT", url)
        monkeypatch.setenv("MODELSCOPE_ENDPOINT", url)
        yield url


@pytest.fixture(scope="session")
def mini_logs(
    sandbox_image: str, scripted_server: ScriptedModel, tmp_path_factory: pytest.TempPathFactory
) -> MiniLogs:
    """Real runs on gaia-mini: validation, test, and test at level 2 only."""
    root = tmp_path_factory.mktemp("mini-logs")

    def run(entries: list[Entry], directory: Path, **params: object) -> Path:
        scripted_server.entries = entries
        scripted_server.options = {}
        log = eval_gaia(directory, dataset_path=str(GAIA_MINI), image=sandbox_image, **params)
        assert log.status == "success"
        return Path(log.location)

    return MiniLogs(
        validation=run(MINI_VALIDATION, root / "v"),
        test=run(MINI_TEST, root / "t", split="test"),
        test_level2=run(MINI_TEST, root / "t2", split="test", level=2),
    )


_skipped: list[str] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Remember skips: in CI a skipped test (a Docker test above all) is a failure.

    An expected failure (strict xfail, with its reason) is reported as skipped too; it is not one.
    """
    if report.skipped and not hasattr(report, "wasxfail"):
        _skipped.append(report.nodeid)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail a CI run (``CI`` set) that skipped anything."""
    if os.environ.get("CI") and _skipped and exitstatus == 0:
        print(f"\nCI: {len(_skipped)} test(s) skipped, which CI does not allow: {_skipped}")
        session.exitstatus = 1
