"""Building the GAIA sandbox image, with a registry (``docker build``) or without (Debian packages).

Without a registry the root filesystem comes from Debian's packages through ``debootstrap`` and is
turned into an image with ``docker import``: no ``docker pull`` anywhere. The *attachments* variant
adds readers for the files GAIA questions reference (spreadsheets, PDF, Word, PowerPoint, images,
audio/video) and Microsoft's ``markitdown``, which turns office documents, PDFs and spreadsheets
into Markdown inside the sandbox (``markitdown /shared_files/x.docx``): a text-only model can read
them, and nothing parses an untrusted attachment on the host.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path

from ..errors import GaiaError
from ..image_layout import (
    OFFLINE_ATTACHMENTS_TAG,
    OFFLINE_TAG,
    REGISTRY_ATTACHMENTS_TAG,
    REGISTRY_TAG,
)
from ..options import DEFAULT_IMAGE

DEBIAN_MIRROR = "http://deb.debian.org/debian"
DEBIAN_SUITE = "bookworm"
BASE_PACKAGES = (
    "python3",
    "python3-pip",
    "python-is-python3",
    "curl",
    "wget",
    "git",
    "ca-certificates",
    "procps",
)
ATTACHMENT_PACKAGES = (
    "python3-pandas",
    "python3-openpyxl",
    "python3-pypdf",
    "python3-docx",
    "python3-pil",
    "python3-lxml",
    "python3-typing-extensions",
    "poppler-utils",
    "ffmpeg",
    # markitdown's own dependencies that bookworm packages
    "python3-bs4",
    "python3-charset-normalizer",
    "python3-defusedxml",
    "python3-requests",
    "python3-cryptography",
    # provides the virtual packages python3-cryptography needs; debootstrap resolves no virtuals
    "python3-cffi-backend",
)
# Not packaged in Debian bookworm: wheels installed with pip into the root filesystem, without their
# dependencies (those are the Debian packages above). Pinned: markitdown 0.1.9 with the docx, xlsx,
# pptx and pdf converters, and magika's model runner onnxruntime (the one binary wheel).
ATTACHMENT_PIP_NO_DEPS = (
    "python-pptx==1.0.2",
    "XlsxWriter==3.3.1",
    "markitdown==0.1.9",
    "magika==1.0.3",
    "onnxruntime==1.17.3",
    "markdownify==1.2.3",
    "mammoth==1.13.0",
    "cobble==0.1.4",
    "pdfminer.six==20260107",
    "pdfplumber==0.11.10",
)
REGISTRY_PIP = (
    "pandas",
    "openpyxl",
    "pypdf",
    "python-docx",
    "python-pptx",
    "pillow",
    "markitdown[docx,xlsx,pptx,pdf]==0.1.9",
)

Log = Callable[[str], None]


def default_tag(offline: bool, attachments: bool) -> str:
    """The tag ``image build`` gives when none is asked for: always one of inspect_gaia's own."""
    if offline:
        return OFFLINE_ATTACHMENTS_TAG if attachments else OFFLINE_TAG
    return REGISTRY_ATTACHMENTS_TAG if attachments else REGISTRY_TAG


_NAME_COMPONENT = re.compile(r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*")
_REGISTRY = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9.-]*[a-zA-Z0-9])?(?::[0-9]+)?")
_TAG = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}")


def is_image_name(name: str) -> bool:
    """Whether ``name`` is a Docker image name with an optional tag (``[registry/]path[:tag]``).

    The grammar of Docker's reference parser: lowercase path components, a registry host only
    as the first part and only when it has a dot or a port or is ``localhost``.
    """
    path, tag = name, None
    last = name.rsplit("/", 1)[-1]
    if ":" in last:
        path, tag = name.rsplit(":", 1)
    if tag is not None and not _TAG.fullmatch(tag):
        return False
    parts = path.split("/")
    first = parts[0]
    if len(parts) > 1 and ("." in first or ":" in first or first == "localhost"):
        if not _REGISTRY.fullmatch(first):
            return False
        parts = parts[1:]
    return all(_NAME_COMPONENT.fullmatch(part) for part in parts)


def run_step(cmd: list[str], what: str, **kwargs: object) -> None:
    """Run one build step; a failure is a ``GaiaError`` naming ``what`` with the step's output."""
    result = subprocess.run(cmd, capture_output=True, text=True, **kwargs)  # type: ignore[call-overload]
    if result.returncode != 0:
        tail = (result.stderr or result.stdout or "").strip().splitlines()[-5:]
        raise GaiaError(f"{what} failed: {' / '.join(tail)}")


_STEP_IMAGE = re.compile(r"^ ---> ([0-9a-f]{12})$", re.MULTILINE)
"""The image a step of Docker's legacy builder made (or took from its cache), as it prints it."""


def docker_build(tag: str, context: str) -> None:
    """``docker build -t tag context``, leaving no container or untagged image when it fails.

    Docker's legacy builder (no buildx) keeps the container of a step that failed and the images
    of the steps before it, untagged: a failed ``image build`` left a stopped ``/bin/sh -c pip
    install …`` container and a dangling image. ``--force-rm`` removes the container; after a
    failure the step images this build made (created since it started, untagged, no child) are
    removed, newest first. Images it took from the cache, and anyone else's, are left.

    Raises:
        GaiaError: The build failed (the message has its output's last lines).
    """
    started = time.time() - 1
    result = subprocess.run(
        ["docker", "build", "--force-rm", "-t", tag, context], capture_output=True, text=True
    )
    if result.returncode == 0:
        return
    for image in reversed(_STEP_IMAGE.findall(result.stdout)):
        _remove_if_ours(image, started)
    tail = (result.stderr or result.stdout or "").strip().splitlines()[-5:]
    raise GaiaError(f"docker build failed: {' / '.join(tail)}")


def _remove_if_ours(image: str, since: float) -> None:
    """Remove step ``image`` when this build made it: created since ``since``, and untagged."""
    found = subprocess.run(
        ["docker", "image", "inspect", "--format", "{{json .RepoTags}} {{.Created}}", image],
        capture_output=True,
        text=True,
    )
    if found.returncode != 0:
        return
    tags, _, created = found.stdout.strip().partition(" ")
    # RFC 3339 with nanoseconds: Python reads microseconds
    made = datetime.fromisoformat(re.sub(r"(\.\d{6})\d+", r"\1", created).replace("Z", "+00:00"))
    if json.loads(tags) or made.timestamp() < since:
        return
    # not forced: an image with a child (another build's cache) stays
    subprocess.run(["docker", "rmi", "--no-prune", image], capture_output=True)


def build_offline(tag: str, attachments: bool, log: Log) -> None:
    """Build ``tag`` from Debian packages with debootstrap and ``docker import``.

    Raises:
        GaiaError: Not root, debootstrap missing, or a step failed (the message has its output).
    """
    debootstrap_image(
        tag,
        BASE_PACKAGES + (ATTACHMENT_PACKAGES if attachments else ()),
        ATTACHMENT_PIP_NO_DEPS if attachments else (),
        log,
        command=["tail", "-f", "/dev/null"],
    )


def debootstrap_image(
    tag: str,
    packages: Sequence[str],
    wheels: Sequence[str],
    log: Log,
    command: Sequence[str],
    platforms: Sequence[str] = ("manylinux_2_28", "manylinux2014"),
    pure_sources: Sequence[str] = (),
) -> None:
    """An image of Debian ``packages`` plus pinned ``wheels``, with no registry.

    The root filesystem is debootstrap's; the wheels (each ``name==version``, installed without
    their dependencies, which must be among the Debian packages or the wheels) are fetched by the
    host's pip for the image's Python and ``platforms`` and installed inside it from local files;
    ``pure_sources`` are pure-Python packages published without a wheel, built into one by the
    host's pip. ``docker import`` makes it ``tag`` with ``command`` as its CMD. Three stages, in a
    temporary root filesystem: ``_debootstrap``, ``_install_wheels`` (what Debian does not
    package), ``_import``.

    Raises:
        GaiaError: Not root, debootstrap missing, or a step failed (the message has its output).
    """
    if os.geteuid() != 0:
        raise GaiaError(
            "an offline build runs debootstrap, which needs root", fix="run it with sudo"
        )
    if shutil.which("debootstrap") is None:
        raise GaiaError(
            "debootstrap is not installed", fix="`apt-get install debootstrap` (Debian/Ubuntu)"
        )
    with tempfile.TemporaryDirectory(prefix="gaia-rootfs-") as temp:
        rootfs = Path(temp)
        _debootstrap(rootfs, packages, log)
        if wheels:
            _install_wheels(rootfs, wheels, platforms, pure_sources, log)
        _import(rootfs, tag, command, log)


def _debootstrap(rootfs: Path, packages: Sequence[str], log: Log) -> None:
    """A minimal Debian root filesystem with ``packages``, from the Debian mirror."""
    log(f"debootstrap {DEBIAN_SUITE} with {len(packages)} packages into {rootfs}")
    run_step(
        [
            "debootstrap",
            "--variant=minbase",
            f"--include={','.join(packages)}",
            DEBIAN_SUITE,
            str(rootfs),
            DEBIAN_MIRROR,
        ],
        "debootstrap",
    )


def _install_wheels(
    rootfs: Path,
    wheels: Sequence[str],
    platforms: Sequence[str],
    pure_sources: Sequence[str],
    log: Log,
) -> None:
    """Install ``wheels`` (no dependencies) into the root filesystem's Python.

    Wheels are fetched by the host's pip (its index, proxy and certificates) and installed inside
    the root filesystem from local files.
    """
    directory = rootfs / "tmp" / "wheels"
    log(f"pip install {' '.join(wheels)} into the root filesystem")
    run_step(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--only-binary=:all:",
            # for the image's Python (bookworm's 3.11), not the host's
            "--python-version",
            "3.11",
            "--implementation",
            "cp",
            "--abi",
            "cp311",
            *(
                arg
                for platform_tag in platforms
                for arg in ("--platform", f"{platform_tag}_{platform.machine()}")
            ),
            "--dest",
            str(directory),
            *wheels,
        ],
        "pip download",
    )
    if pure_sources:
        run_step(
            [
                *(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps"),
                *("--wheel-dir", str(directory), *pure_sources),
            ],
            "pip wheel",
        )
    run_step(
        [
            "chroot",
            str(rootfs),
            "sh",
            "-c",
            "python3 -m pip install --quiet --no-index --no-deps --break-system-packages "
            "/tmp/wheels/*.whl && rm -rf /tmp/wheels",
        ],
        "pip install in the root filesystem",
    )


def _import(rootfs: Path, tag: str, command: Sequence[str], log: Log) -> None:
    """Drop apt's caches from the root filesystem and ``docker import`` it as ``tag``."""
    for junk in ("var/cache/apt/archives", "var/lib/apt/lists"):
        for item in (rootfs / junk).glob("*"):
            if item.is_file():
                item.unlink()
    log(f"docker import as {tag}")
    tar = subprocess.Popen(["tar", "-C", str(rootfs), "-c", "."], stdout=subprocess.PIPE)
    run_step(
        [
            "docker",
            "import",
            "--change",
            f"CMD {json.dumps(list(command))}",
            "--change",
            "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "-",
            tag,
        ],
        "docker import",
        stdin=tar.stdout,
    )
    tar.wait()


def dockerfile(attachments: bool) -> str:
    """The Dockerfile of the registry build."""
    lines = [f"FROM {DEFAULT_IMAGE}"]
    if attachments:
        lines += [
            "RUN apt-get update && apt-get install -y --no-install-recommends ffmpeg poppler-utils "
            "&& rm -rf /var/lib/apt/lists/*",
            f"RUN pip install --no-cache-dir {' '.join(repr(p) for p in REGISTRY_PIP)}",
        ]
    lines.append('CMD ["tail", "-f", "/dev/null"]')
    return "\n".join(lines) + "\n"


def build_from_registry(tag: str, attachments: bool, log: Log) -> None:
    """Build ``tag`` with ``docker build`` from ``python:3.11`` (pulled from the registry).

    Raises:
        GaiaError: The build failed (e.g. no registry: use ``--offline``).
    """
    build_dockerfile(
        tag,
        dockerfile(attachments),
        f"FROM {DEFAULT_IMAGE}",
        log,
        offline="`inspect-gaia image build --offline`",
    )


def build_dockerfile(tag: str, text: str, what: str, log: Log, offline: str) -> None:
    """``docker build -t tag`` of a Dockerfile holding ``text``; a failure names ``offline``.

    Raises:
        GaiaError: The build failed (e.g. no registry: the ``offline`` command builds without one).
    """
    with tempfile.TemporaryDirectory(prefix="gaia-image-") as temp:
        (Path(temp) / "Dockerfile").write_text(text)
        log(f"docker build -t {tag} ({what})")
        try:
            docker_build(tag, temp)
        except GaiaError as ex:
            raise GaiaError(str(ex), fix=f"with no registry, build with {offline}") from ex
