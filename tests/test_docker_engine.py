"""The engine and image checks without an engine: the Docker client is faked, as inspect_ai's
prerequisite tests fake the docker CLI, so every problem's detail and fix are pinned here."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from typing import Any

import pytest
import requests
import urllib3
from docker.errors import DockerException, ImageNotFound

from inspect_gaia._docker import client, engine
from inspect_gaia._docker.engine import DockerProblem
from inspect_gaia.image import OFFLINE_TAG


def _raise(ex: BaseException) -> Callable[..., Any]:
    def fail(*args: Any, **kwargs: Any) -> Any:
        raise ex

    return fail


def _sdk_error(cause: OSError) -> DockerException:
    """What docker-py raises when the engine does not answer: ``cause`` three layers down."""
    inner = requests.exceptions.ConnectionError(
        urllib3.exceptions.ProtocolError("Connection aborted.", cause)
    )
    try:
        raise DockerException(f"Error while fetching server API version: {inner}") from inner
    except DockerException as ex:
        return ex


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Callable[..., None]:
    """Replace ``client`` functions by name: values are returned, exceptions raised."""

    def replace(**calls: Any) -> None:
        for name, result in calls.items():
            if isinstance(result, BaseException):
                monkeypatch.setattr(client, name, _raise(result))
            elif callable(result):
                monkeypatch.setattr(client, name, result)
            else:
                monkeypatch.setattr(client, name, lambda *a, _r=result, **k: _r)

    return replace


def test_a_new_enough_engine_passes(fake: Callable[..., None]) -> None:
    fake(version={"Version": "27.5.1"})
    assert engine.check_engine() == "27.5.1"


def test_an_old_engine_is_a_problem_with_its_fix(fake: Callable[..., None]) -> None:
    fake(version={"Version": "20.10.24"})
    with pytest.raises(DockerProblem) as caught:
        engine.check_engine()
    problem = caught.value
    assert problem.subject == "Docker Engine"
    assert problem.detail == "20.10.24 is too old: inspect_gaia needs 24.0.6 or newer"
    assert problem.fix == "upgrade Docker Engine"
    assert str(problem) == f"Docker Engine {problem.detail} — {problem.fix}"


@pytest.mark.parametrize(
    ("host", "cause", "reason"),
    [
        (
            "unix:///run/nowhere.sock",
            FileNotFoundError(2, "No such file or directory"),
            "no socket at /run/nowhere.sock",
        ),
        (
            "tcp://127.0.0.1:9",
            ConnectionRefusedError(111, "Connection refused"),
            "connection refused",
        ),
        ("tcp://10.0.0.9:2375", TimeoutError("timed out"), "no answer in time"),
    ],
)
def test_no_engine_says_why_in_words_not_the_sdks_repr(
    fake: Callable[..., None],
    monkeypatch: pytest.MonkeyPatch,
    host: str,
    cause: OSError,
    reason: str,
) -> None:
    monkeypatch.setenv("DOCKER_HOST", host)
    fake(version=_sdk_error(cause))
    with pytest.raises(DockerProblem) as caught:
        engine.check_engine()
    problem = caught.value
    assert problem.detail == f"not running at {host} ({reason})"
    assert problem.fix.startswith("start it (`sudo systemctl start docker`")
    for internal in ("Connection aborted", "Error while fetching", "Errno", "(2,", "ProtocolError"):
        assert internal not in str(problem)


def test_a_socket_this_user_may_not_open_names_the_docker_group(
    fake: Callable[..., None], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCKER_HOST", "unix:///var/run/docker.sock")
    fake(version=_sdk_error(PermissionError(13, "Permission denied")))
    with pytest.raises(DockerProblem) as caught:
        engine.check_engine()
    assert "permission denied" in caught.value.detail
    assert "`docker` group" in caught.value.fix


def test_image_status_present_pullable_or_a_problem(fake: Callable[..., None]) -> None:
    fake(image_config={"id": "sha256:abc"})
    assert engine.image_status("python:3.11") == "present"
    fake(image_config=ImageNotFound("no such image"), registry_has=None)
    assert engine.image_status("python:3.11") == "pullable"
    fake(registry_has=requests.exceptions.ConnectionError("registry unreachable"))
    with pytest.raises(DockerProblem) as caught:
        engine.image_status("python:3.11")
    problem = caught.value
    assert problem.subject == "sandbox image"
    assert (
        problem.detail == "python:3.11 is not present and cannot be pulled (registry unreachable)"
    )
    # the offline tag is image.py's, named in the flags of `inspect eval` outside the CLI
    assert f"`-T image={OFFLINE_TAG}`" in problem.fix
    assert "inspect-gaia image build --offline" in problem.fix


def test_image_status_without_an_engine_is_the_engine_problem(
    fake: Callable[..., None],
) -> None:
    fake(image_config=_sdk_error(ConnectionRefusedError(111, "Connection refused")))
    with pytest.raises(DockerProblem) as caught:
        engine.image_status("python:3.11")
    assert caught.value.subject == "Docker Engine"
    assert engine.local_image_id("python:3.11") is None  # provenance: never raises


def test_ensure_image_pulls_only_what_is_missing(fake: Callable[..., None]) -> None:
    pulled: list[str] = []
    present: set[str] = {"here:1"}

    def image_config(image: str) -> dict[str, Any]:
        if image not in present:
            raise ImageNotFound(image)
        return {"id": f"id-{image}"}

    def pull(image: str) -> None:
        pulled.append(image)
        present.add(image)

    fake(image_config=image_config, registry_has=None, pull=pull)
    assert engine.ensure_image("here:1") == "id-here:1"
    assert engine.ensure_image("there:1") == "id-there:1"
    assert pulled == ["there:1"]
    fake(pull=DockerException("toomanyrequests: rate limit\nmore"))
    with pytest.raises(
        DockerProblem, match=r"away:1 is not present .*\(toomanyrequests: rate limit\)"
    ):
        engine.ensure_image("away:1")


@pytest.mark.parametrize(
    ("stdout", "returncode", "detail"),
    [
        ("2.29.7\n", 0, None),
        ("2.20.3\n", 0, "2.20.3 is too old: inspect_gaia needs 2.21.0 or newer"),
        ("", 1, "(v2) not found"),
    ],
)
def test_compose_version(
    monkeypatch: pytest.MonkeyPatch, stdout: str, returncode: int, detail: str | None
) -> None:
    def run(cmd: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        assert cmd == ["docker", "compose", "version", "--short"]
        return subprocess.CompletedProcess(cmd, returncode, stdout, "")

    monkeypatch.setattr(subprocess, "run", run)
    if detail is None:
        assert engine.check_compose() == "2.29.7"
        return
    with pytest.raises(DockerProblem) as caught:
        engine.check_compose()
    assert (caught.value.subject, caught.value.detail) == ("Docker Compose", detail)


def test_version_tuple() -> None:
    assert engine.version_tuple("Docker Compose version v2.29.7-desktop.1") == (2, 29, 7)
    assert engine.version_tuple("27.5") == (27, 5, 0)
    assert engine.version_tuple("dev") == ()
