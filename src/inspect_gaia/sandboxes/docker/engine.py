"""The Docker Engine and image checks, written once for the task, the providers and ``doctor``.

Every engine and image problem is a ``DockerProblem``: what is wrong (``detail``) and what to do
(``fix``) as data. The task and the providers raise it, and inspect prints its one line;
``doctor`` shows ``detail`` and ``fix`` in its own ✓/✗ lines and parses nothing.
"""

from __future__ import annotations

import errno
import os
import re
import socket
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Literal

from ...errors import GaiaError, GaiaParameterError
from ...flags import flag
from ...image_layout import OFFLINE_TAG, ImageLayer
from ...imageref import pinned_digest, registry_digest
from . import client
from .exec_stream import address_problem, engine_address
from .service import limit_flags, limits_host_config

MIN_ENGINE = (24, 0, 6)
"""inspect_ai's Docker sandbox needs Engine 24.0.6 or newer; gaia-docker asks no less."""

MIN_COMPOSE = (2, 21, 0)
"""inspect_ai's compose sandbox needs Compose 2.21.0 or newer (only ``-T sandbox=compose``)."""

START_HINT = "`sudo systemctl start docker`, or `bash .ci/docker-engine.sh` in a checkout"

ImageStatus = Literal["present", "pullable"]


class DockerProblem(GaiaError):
    """An engine or image problem: ``subject`` ``detail`` — ``fix``, kept apart for ``doctor``."""

    def __init__(self, subject: str, detail: str, fix: str) -> None:
        """Keep the parts; the problem is ``subject detail``."""
        super().__init__(f"{subject} {detail}", fix)
        self.subject = subject
        self.detail = detail


def check_address() -> None:
    """Refuse, before a gaia-docker run, an engine address ``exec_stream`` cannot speak to.

    Raises:
        DockerProblem: ``DOCKER_HOST`` is ``ssh://`` (or another scheme), or asks for TLS.
    """
    problem = address_problem()
    if problem is not None:
        raise DockerProblem(
            "Docker Engine",
            f"at {engine_address()} {problem}, which gaia-docker does not speak",
            "run with `-T sandbox=compose` (the docker CLI), or set DOCKER_HOST to a unix:// "
            "socket or a plain tcp:// address",
        )


def _causes(ex: BaseException) -> Iterator[BaseException]:
    """``ex`` and what it wraps: causes, contexts, exceptions held in args or ``reason``."""
    seen: set[int] = set()
    pending = [ex]
    while pending:
        current = pending.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        held = (*current.args, getattr(current, "reason", None), current.__cause__)
        pending += [e for e in (*held, current.__context__) if isinstance(e, BaseException)]


def engine_down(ex: BaseException) -> DockerProblem:
    """No engine answers (before a run): why, in words, and what to do."""
    socket_path = engine_address().removeprefix("unix://")
    for cause in _causes(ex):
        if isinstance(cause, PermissionError) or getattr(cause, "errno", None) == errno.EACCES:
            return DockerProblem(
                "Docker Engine",
                f"at {engine_address()} refuses this user (permission denied)",
                "add your user to the `docker` group (`sudo usermod -aG docker $USER`, then log "
                "in again), or run as root",
            )
        if isinstance(cause, FileNotFoundError):
            reason = f"no socket at {socket_path}"
            break
        if isinstance(cause, ConnectionRefusedError):
            reason = "connection refused"
            break
        if isinstance(cause, (TimeoutError, socket.timeout)):
            reason = "no answer in time"
            break
        if isinstance(cause, OSError) and cause.strerror:
            reason = cause.strerror
            break
    else:
        reason = client.first_line(ex).removeprefix("Error while fetching server API version: ")
    # A DOCKER_HOST the user set is the likelier mistake than an engine that is down: name it.
    chosen = os.environ.get("DOCKER_HOST")
    return DockerProblem(
        "Docker Engine",
        f"not running at {engine_address()} ({reason})",
        f"DOCKER_HOST points at {chosen}, where nothing answers: unset it or fix it"
        if chosen
        else f"start it ({START_HINT}) and check `docker info`",
    )


def engine_stopped(ex: BaseException) -> str:
    """The engine stopped answering during a run: the one line a failed sample carries."""
    return (
        f"Docker Engine stopped answering during the run ({engine_address()}) — start it again "
        f"({START_HINT}) and rerun the failed samples with `inspect eval-retry <log>`"
    )


def describe_start_failure(ex: Exception) -> str:
    """The one line a sample whose sandbox did not start carries (both providers').

    Some failures (the compose CLI's) do not say that the engine went away; an engine that no
    longer answers a ping is then named as the cause (a blocking check, on this failure path
    only).
    """
    if client.engine_unreachable(ex) or not client.answers():
        return engine_stopped(ex)
    return f"Sandbox did not start: {client.first_line(ex)}"


def version_tuple(text: str) -> tuple[int, ...]:
    """``(major, minor, patch)`` of the first version number in ``text``; ``()`` when none."""
    match = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", text)
    return tuple(int(part or 0) for part in match.groups()) if match else ()


def dotted(version: tuple[int, ...]) -> str:
    """A version as people write it: ``(24, 0, 6)`` is ``24.0.6``."""
    return ".".join(map(str, version))


def check_engine() -> str:
    """The engine's version, when one answers and is new enough.

    Raises:
        DockerProblem: No engine answers, or it is older than ``MIN_ENGINE``.
    """
    try:
        version = str(client.version().get("Version", ""))
    except Exception as ex:  # the SDK raises DockerException, requests and socket errors
        raise engine_down(ex) from ex
    if version_tuple(version) < MIN_ENGINE:
        raise DockerProblem(
            "Docker Engine",
            f"{version} is too old: inspect_gaia needs {dotted(MIN_ENGINE)} or newer",
            "upgrade Docker Engine",
        )
    return version


def check_compose() -> str:
    """The Compose v2 plugin's version, when present and new enough (``-T sandbox=compose``).

    Raises:
        DockerProblem: No ``docker compose``, or it is older than ``MIN_COMPOSE``.
    """
    try:
        out = subprocess.run(
            ["docker", "compose", "version", "--short"], capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired) as ex:
        raise DockerProblem(
            "Docker Compose",
            f"cannot be run ({client.first_line(ex)})",
            "install the docker CLI and its Compose v2 plugin",
        ) from ex
    version = version_tuple(out.stdout)
    if out.returncode != 0 or not version:
        raise DockerProblem("Docker Compose", "(v2) not found", "install the Compose v2 plugin")
    if version < MIN_COMPOSE:
        raise DockerProblem(
            "Docker Compose",
            f"{dotted(version)} is too old: inspect_gaia needs {dotted(MIN_COMPOSE)} or newer",
            "upgrade the Compose plugin",
        )
    return dotted(version)


def image_unavailable(image: str, reason: str) -> DockerProblem:
    """The sandbox image is neither local nor pullable: every sample would fail to start."""
    use = flag("image", OFFLINE_TAG)
    return DockerProblem(
        "sandbox image",
        f"{image} is not present and cannot be pulled ({reason})",
        f"`docker pull {image}` where a registry is reachable, or build one without a registry "
        "with `inspect-gaia image build --offline`" + (f" and pass `{use}`" if use else ""),
    )


def _local_id(image: str) -> str | None:
    """The image's id, ``None`` when the engine does not have it.

    Raises:
        DockerProblem: No engine answers.
    """
    from docker.errors import ImageNotFound

    try:
        return str(client.image_config(image)["id"])
    except ImageNotFound:
        return None
    except Exception as ex:
        raise engine_down(ex) from ex


def local_image_id(image: str) -> str | None:
    """The id of ``image`` when an engine answers and has it; never raises (for provenance)."""
    try:
        return _local_id(image)
    except DockerProblem:
        return None


def image_identity(image: str) -> tuple[str | None, str | None]:
    """``(local id, registry digest)`` of ``image``, each ``None`` when unknown; never raises.

    The digest is the reference's own when it is pinned, else the one the engine recorded when
    it pulled the image (``imageref.registry_digest``); a local build has none.
    """
    from docker.errors import ImageNotFound

    pinned = pinned_digest(image)
    try:
        found = client.image_config(image)
    except ImageNotFound:
        return None, pinned
    except Exception:  # no engine: the provider says so before any sample
        return None, pinned
    return str(found["id"]), registry_digest(image, list(found.get("repo_digests") or []))


def local_image_labels(image: str) -> dict[str, str] | None:
    """The labels of ``image`` when an engine answers and has it; never raises."""
    try:
        if _local_id(image) is None:
            return None
        return dict(client.image_config(image).get("Labels") or {})
    except Exception:  # no engine, or the image went between the two calls
        return None


def require_layer(image: str, layer: ImageLayer, wanted: Sequence[str]) -> dict[str, str] | None:
    """The versions ``image``'s labels record for ``layer``, when it is here; refuses one without.

    The one check that a run's image holds the tools it asks for (``-T browser``, ``-T web_reader``,
    ``-T agent=``); ``doctor`` makes the same one from the same ``ImageLayer``. An image that is not
    here (no engine, or one to pull) is not checked: the provider refuses a missing image itself,
    and a pulled one without the tool says so at the sample's first use of it.

    Raises:
        GaiaParameterError: The image is here and lacks a tool asked for; the line names the build.
    """
    labels = local_image_labels(image)
    if labels is None:
        return None
    missing = layer.missing(labels, wanted)
    if missing:
        use = flag("image", layer.offline_tag)
        raise GaiaParameterError(
            f"{' '.join(layer.asked[tool] for tool in missing)}: the sandbox image {image} has no "
            f"{layer.lacks(missing)}",
            fix=f"build one with `inspect-gaia image build --offline --{layer.name}`"
            + (f" and pass `{use}`" if use else ""),
        )
    return layer.versions(labels)


def image_status(image: str) -> ImageStatus:
    """Whether ``image`` is here, or else can be pulled from its registry.

    Raises:
        DockerProblem: No engine answers, or the image is neither here nor pullable.
    """
    if _local_id(image) is not None:
        return "present"
    try:
        client.registry_has(image)
    except Exception as ex:
        raise image_unavailable(image, client.first_line(ex)) from ex
    return "pullable"


def ensure_image(image: str) -> str:
    """The image's id: present locally, or pulled from its registry now.

    Raises:
        DockerProblem: No engine answers, or the image is neither here nor pullable (every
            sample would fail to start).
    """
    if image_status(image) == "pullable":
        print(f"Pulling {image} …")
        try:
            client.pull(image)
        except Exception as ex:
            raise image_unavailable(image, client.first_line(ex)) from ex
    image_id = _local_id(image)
    if image_id is None:
        raise image_unavailable(image, "the pull left no image")
    return image_id


def image_workdir(image: str) -> str:
    """The image's working directory (``/`` when it sets none)."""
    return str(client.image_config(image).get("WorkingDir") or "/")


def limits_problem(image: str, host_config: Mapping[str, Any]) -> str | None:
    """Why this engine refuses a container with these limits, or ``None`` when it makes one.

    The engine checks limits when a container is created (its CPU count, the 6 MB memory
    floor, the storage driver's ``storage_opt: size``), so the one reliable test is to create
    (not start) a throw-away container with them.
    """
    try:
        container = client.create_only(image, host_config)
    except Exception as ex:
        return client.first_line(ex)
    client.remove_container(container)
    return None


def disk_limit_problem(image: str, size: str = "1g") -> str | None:
    """Why this engine cannot enforce a per-container disk limit, or ``None`` when it can.

    Docker enforces ``storage_opt: size`` only on some storage drivers (overlay2 over xfs with
    ``pquota``, btrfs, zfs, devicemapper) and refuses it at container creation elsewhere.
    """
    return limits_problem(image, {"storage_opt": {"size": size}})


def cpus() -> int:
    """The engine's CPUs, as it reports them."""
    return int(client.info().get("NCPU") or 1)


def storage_driver() -> str:
    """The engine's storage driver (``overlay2``, ``btrfs``, …)."""
    return str(client.info().get("Driver", ""))


def check_limits(service: Mapping[str, Any]) -> None:
    """Refuse, before any sandbox starts, limits the engine would refuse at every sample's start.

    One throw-away container is created with the service's limits; only when that fails and a
    disk limit is set is a second one made without it, to tell which limit was refused.

    Raises:
        GaiaError: The engine refuses the limits; the line names the ``-T`` values.
    """
    host = limits_host_config(service)
    if not host:
        return
    image = str(service["image"])
    problem = limits_problem(image, host)
    if problem is None:
        return
    if "storage_opt" in host:
        others = {k: v for k, v in host.items() if k != "storage_opt"}
        if not others or limits_problem(image, others) is None:
            raise GaiaError(
                f"-T disk={service['storage_opt']['size']} cannot be applied by this Docker "
                f"Engine ({problem})",
                fix="run without -T disk=, or on an engine whose storage driver limits container "
                "size (overlay2 on xfs with pquota, or btrfs with simple quotas: "
                "docs/sandboxes.md#limits); `inspect-gaia doctor` says which this is",
            )
    raise GaiaError(
        f"this Docker Engine refuses the sandbox limits {limit_flags(service, disk=False)} "
        f"({problem})",
        fix="set them within what it accepts, or null to lift one",
    )
