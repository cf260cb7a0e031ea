"""The engine and image checks without an engine: the Docker client is faked, as inspect_ai's
prerequisite tests fake the docker CLI, so every problem's detail and fix are pinned here."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from typing import Any

import anyio
import pytest
import requests
import urllib3
from docker.errors import DockerException, ImageNotFound

from inspect_gaia import GaiaError
from inspect_gaia.image_layout import OFFLINE_TAG
from inspect_gaia.options import SandboxLimits
from inspect_gaia.sandboxes.docker import TAG_LABEL, TAG_VARIABLE, client, engine
from inspect_gaia.sandboxes.docker.config import GaiaComposeConfig, gaia_config
from inspect_gaia.sandboxes.docker.engine import DockerProblem, check_limits
from inspect_gaia.sandboxes.docker.gaia_compose import GaiaComposeSandbox
from inspect_gaia.sandboxes.docker.gaia_docker import GaiaDockerSandbox
from inspect_gaia.sandboxes.docker.service import service_config
from inspect_gaia.sandboxes.spec import gaia_compose
from tests.helpers import SANDBOX_IMAGE, docker_leftovers


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
    assert problem.fix == (
        f"DOCKER_HOST points at {host}, where nothing answers: unset it or fix it"
    ), "issue #40: a wrong DOCKER_HOST was answered 'start Docker'"
    monkeypatch.delenv("DOCKER_HOST")
    with pytest.raises(DockerProblem) as caught:
        engine.check_engine()
    assert caught.value.fix.startswith("start it (`sudo systemctl start docker`")
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
    # the offline tag is images/sandbox.py's, named in the flags of `inspect eval` outside the CLI
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


PYTHON_DIGEST = "sha256:" + "1a" * 32
LOCAL_ID = "sha256:" + "9f" * 32


@pytest.mark.parametrize(
    ("reference", "inspected", "identity"),
    [
        # built here (image build --offline, docker build): an id, no registry digest
        ("inspect-gaia/sandbox:bookworm", {"id": LOCAL_ID}, (LOCAL_ID, None)),
        # pulled by tag: the engine recorded the digest of the manifest it pulled
        (
            "python:3.11",
            {"id": LOCAL_ID, "repo_digests": [f"python@{PYTHON_DIGEST}"]},
            (LOCAL_ID, PYTHON_DIGEST),
        ),
        # a local tag of a pulled image keeps the digest it was pulled with
        (
            "gaia-base:1",
            {"id": LOCAL_ID, "repo_digests": [f"python@{PYTHON_DIGEST}"]},
            (LOCAL_ID, PYTHON_DIGEST),
        ),
        # given by digest: the reference's own digest, whatever else the image was pulled as
        (
            f"python:3.11@{PYTHON_DIGEST}",
            {"id": LOCAL_ID, "repo_digests": [f"mirror.example/python@{'sha256:' + '2b' * 32}"]},
            (LOCAL_ID, PYTHON_DIGEST),
        ),
        # given by digest and not here yet (the provider pulls it): the digest is still known
        (f"python@{PYTHON_DIGEST}", ImageNotFound("no such image"), (None, PYTHON_DIGEST)),
        ("python:3.11", ImageNotFound("no such image"), (None, None)),
        # no engine: what the reference says, never an exception (the provider refuses later)
        (
            f"python@{PYTHON_DIGEST}",
            _sdk_error(ConnectionRefusedError(111, "Connection refused")),
            (None, PYTHON_DIGEST),
        ),
    ],
)
def test_image_identity(
    fake: Callable[..., None],
    reference: str,
    inspected: dict[str, Any] | BaseException,
    identity: tuple[str | None, str | None],
) -> None:
    fake(image_config=inspected)
    assert engine.image_identity(reference) == identity


def test_a_pinned_reference_is_pulled_by_its_digest(monkeypatch: pytest.MonkeyPatch) -> None:
    pulls: list[tuple[str, str | None]] = []

    class Api:
        def pull(self, repository: str, tag: str | None = None) -> None:
            pulls.append((repository, tag))

    monkeypatch.setattr(client, "api", Api)
    client.pull(f"reg.example:5000/team/python:3.11@{PYTHON_DIGEST}")
    client.pull("reg.example:5000/team/python:3.11")
    assert pulls == [
        ("reg.example:5000/team/python", PYTHON_DIGEST),
        ("reg.example:5000/team/python:3.11", None),
    ]


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


# -- against the real engine: limits it refuses are refused once, before any sandbox ----------------
# Issue #17 finding 3: ``-T sandbox=compose -T disk=10g`` on an engine that cannot enforce it
# started, and every sample failed with "No services started" (gaia-docker refused; gaia-compose
# never asked). Both providers now probe the limits once, at ``task_init``: the engine checks them
# when a container is created, so one throw-away container (created, never started) tells. The
# shared engine here is overlay2 over ext4, which cannot enforce ``disk``.

PROVIDERS = [GaiaDockerSandbox, GaiaComposeSandbox]


def _probes() -> list[str]:
    """The session's engine probes (another worker's or suite's carry another tag)."""
    tag = f"label={TAG_LABEL}={os.environ[TAG_VARIABLE]}"
    return subprocess.run(
        ["docker", "ps", "-aq", "--filter", "label=inspect_gaia.probe", "--filter", tag],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()


def _with(**fields: object) -> GaiaComposeConfig:
    """GAIA's compose config with fields set as a compose file of one's own might set them."""
    return gaia_config(gaia_compose(image=SANDBOX_IMAGE), "default", **fields)


@pytest.mark.docker
@pytest.mark.parametrize("provider", PROVIDERS, ids=lambda p: p.__name__)
@pytest.mark.parametrize(
    ("config", "message"),
    [
        (
            gaia_compose(image=SANDBOX_IMAGE, limits=SandboxLimits(disk="10g")),
            "-T disk=10g cannot be applied by this Docker Engine (",
        ),
        # more CPUs than the engine has (a remote engine, Docker Desktop's VM): the cap at this
        # machine's CPU count cannot see it
        (_with(cpus=64), "this Docker Engine refuses the sandbox limits -T cpus=64.0 -T memory=4g"),
        (_with(mem_limit="1k", memswap_limit="1k"), "Minimum memory limit allowed is 6MB"),
    ],
    ids=["disk", "cpus", "memory"],
)
def test_limits_the_engine_refuses_stop_the_run_before_any_sandbox(
    provider: type[GaiaDockerSandbox] | type[GaiaComposeSandbox],
    config: GaiaComposeConfig,
    message: str,
    sandbox_image: str,
) -> None:
    before, probes = docker_leftovers(), _probes()
    with pytest.raises(GaiaError) as caught:
        anyio.run(provider.task_init, "limits-check", config)
    text = str(caught.value)
    assert message in text and "\n" not in text, text
    assert " — " in text and "No services started" not in text
    assert docker_leftovers() == before and _probes() == probes


@pytest.mark.docker
def test_limits_the_engine_accepts_pass(sandbox_image: str) -> None:
    probes = _probes()
    check_limits(service_config(gaia_compose(image=SANDBOX_IMAGE)))
    check_limits(service_config(_with(cpus=None, mem_limit=None, memswap_limit=None)))
    assert _probes() == probes
