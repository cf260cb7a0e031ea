"""An image layered over the attachments image, from npm tarballs and wheels the host fetches.

The browser image (``browser``) and the agents image (``agents``) are built the same
way: the attachments image of the path (built first when missing) as the base of one ``docker
build``, whose context holds npm tarballs fetched by the host's ``npm pack`` and wheels fetched by
the host's pip (their registries, proxies and certificates), pinned, for the image's Python (3.11)
and this machine's architecture. Nothing is fetched inside the build, so the offline path needs no
container registry.
"""

from __future__ import annotations

import platform
import shutil
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from ..errors import GaiaError
from ..image_layout import OFFLINE_ATTACHMENTS_TAG, REGISTRY_ATTACHMENTS_TAG
from .sandbox import Log, docker_build, run_step

PLATFORMS = (
    "manylinux_2_36",
    "manylinux_2_34",
    "manylinux_2_28",
    "manylinux_2_17",
    "manylinux2014",
)
"""The wheels' platforms: bookworm's glibc is 2.36 (and python:3.11's, which is bookworm too)."""


def base_tag(offline: bool) -> str:
    """The attachments image a layer is built on."""
    return OFFLINE_ATTACHMENTS_TAG if offline else REGISTRY_ATTACHMENTS_TAG


def build_layer(
    tag: str,
    offline: bool,
    log: Log,
    *,
    what: str,
    npm: Mapping[str, str],
    wheels: Sequence[str],
    dockerfile: Callable[[str], str],
) -> None:
    """Build ``tag`` over the attachments image (built first if missing).

    Args:
        tag: The image to build.
        offline: Which attachments image: the Debian-packages one, or the registry one.
        log: Progress lines.
        what: What the layer adds, for the messages (``the browser image's Playwright MCP``).
        npm: The npm specs, by the file name the context holds each under (``npm/<name>``).
        wheels: The pinned requirements (``name==version``) whose wheels go in ``wheels/``.
        dockerfile: The Dockerfile for a base image.

    Raises:
        GaiaError: No npm on the host, or a step failed (the message has its output).
    """
    from ..sandboxes.docker import engine
    from .sandbox import build_from_registry, build_offline

    if shutil.which("npm") is None:
        raise GaiaError(
            f"{what} is fetched with the host's npm, which is not installed",
            fix="install it (Debian: `apt-get install npm`) and rerun",
        )
    base = base_tag(offline)
    if engine.local_image_id(base) is None:
        log(f"{base} is missing: building it first")
        (build_offline if offline else build_from_registry)(base, True, log)
    with tempfile.TemporaryDirectory(prefix="gaia-layer-") as temp:
        context = Path(temp)
        _npm_pack(context / "npm", npm, log)
        _pip_download(context / "wheels", wheels, log)
        (context / "Dockerfile").write_text(dockerfile(base))
        log(f"docker build -t {tag} ({what} over {base})")
        docker_build(tag, temp)


def _npm_pack(directory: Path, packages: Mapping[str, str], log: Log) -> None:
    """``npm pack`` each spec into ``directory``, under its file name."""
    directory.mkdir()
    log(f"npm pack {' '.join(packages.values())}")
    for name, spec in packages.items():
        with tempfile.TemporaryDirectory(dir=directory) as one:
            run_step(
                ["npm", "pack", "--silent", "--pack-destination", one, spec],
                f"npm pack {spec}",
                cwd=one,
            )
            (tarball,) = Path(one).glob("*.tgz")
            tarball.rename(directory / name)


def _pip_download(directory: Path, requirements: Sequence[str], log: Log) -> None:
    """The pinned wheels, for the image's Python (3.11) and this machine's architecture."""
    log(f"pip download {requirements[0]} and its pinned requirements")
    run_step(
        [
            *(sys.executable, "-m", "pip", "download", "--quiet", "--no-deps"),
            *("--only-binary=:all:", "--python-version", "3.11", "--implementation", "cp"),
            *("--abi", "cp311"),
            *(arg for tag in PLATFORMS for arg in ("--platform", f"{tag}_{platform.machine()}")),
            *("--dest", str(directory), *requirements),
        ],
        "pip download",
    )
