"""The Docker Engine and image checks, written once for the task, the providers and ``doctor``.

Each check either returns what it found or raises a ``GaiaError`` whose one line names the fix;
``doctor`` turns the same errors into its ✓/✗ lines.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from ..errors import GaiaError, image_unavailable
from . import client
from .service import limit_flags, limits_host_config

MIN_ENGINE = (24, 0, 6)
"""inspect_ai's Docker sandbox needs Engine 24.0.6 or newer; gaia-docker asks no less."""

START_HINT = "`sudo systemctl start docker`, or `bash .ci/docker-engine.sh` in a checkout"


def where() -> str:
    """The engine address the SDK uses."""
    return os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")


def engine_down(ex: BaseException) -> GaiaError:
    """No engine answers (before a run): what to do."""
    return GaiaError(
        f"Docker Engine not running at {where()} — start it ({START_HINT}) and check "
        f"`docker info` ({client.first_line(ex)})"
    )


def engine_stopped(ex: BaseException) -> str:
    """The engine stopped answering during a run: the one line a failed sample carries."""
    return (
        f"Docker Engine stopped answering during the run ({where()}) — start it again "
        f"({START_HINT}) and rerun the failed samples with `inspect eval-retry <log>`"
    )


def _version_tuple(text: str) -> tuple[int, ...]:
    match = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", text)
    return tuple(int(part or 0) for part in match.groups()) if match else ()


def check_engine() -> str:
    """The engine's version, when one answers and is new enough.

    Raises:
        GaiaError: No engine answers, or it is older than ``MIN_ENGINE``.
    """
    try:
        version = str(client.version().get("Version", ""))
    except Exception as ex:  # the SDK raises DockerException, requests and socket errors
        raise engine_down(ex) from ex
    if _version_tuple(version) < MIN_ENGINE:
        raise GaiaError(
            f"Docker Engine {version} is too old: inspect_gaia needs "
            f"{'.'.join(map(str, MIN_ENGINE))} or newer — upgrade Docker Engine"
        )
    return version


def local_image_id(image: str) -> str | None:
    """The id of ``image`` when an engine answers and has it; never raises (for provenance)."""
    try:
        return str(client.image_config(image)["id"])
    except Exception:
        return None


def ensure_image(image: str) -> str:
    """The image's id: present locally, or pulled from its registry now.

    Raises:
        GaiaError: The image is neither here nor pullable (every sample would fail to start).
    """
    from docker.errors import ImageNotFound

    try:
        return str(client.image_config(image)["id"])
    except ImageNotFound:
        pass
    except Exception as ex:
        raise engine_down(ex) from ex
    try:
        client.registry_has(image)
    except Exception as ex:
        raise image_unavailable(image, client.first_line(ex)) from ex
    print(f"Pulling {image} …")
    try:
        client.pull(image)
        return str(client.image_config(image)["id"])
    except Exception as ex:
        raise image_unavailable(image, client.first_line(ex)) from ex


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
                f"Engine ({problem}) — run without -T disk=, or on an engine whose storage driver "
                "limits container size (overlay2 on xfs with pquota, or btrfs, where the size "
                "counts the image too); `inspect-gaia doctor` says which this is"
            )
    raise GaiaError(
        f"this Docker Engine refuses the sandbox limits {limit_flags(service, disk=False)} "
        f"({problem}) — set them within what it accepts, or null to lift one"
    )
