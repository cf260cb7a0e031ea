"""The checks ``inspect-gaia doctor`` makes: the Docker Engine, the image, the dataset, the host.

The engine and image checks are the ones the task and the sandbox providers make
(``sandboxes/docker/engine.py``): a failed one is the same ``DockerProblem`` the run would
raise, shown as its ``detail`` and ``fix``, so doctor's ✗ says what the run would say. Any
other ``GaiaError`` a check meets (a local snapshot's) is shown the same way, as its ``problem``
and ``fix``. Each check
returns a ``Check``; ``doctor.py`` chooses them from its options and prints them.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from ..egress import PROXY_IMAGE
from ..errors import GaiaError
from ..flags import flag
from ..image_layout import ImageLayer
from ..imageref import pinned_digest, shorten
from ..questions.dataset import metadata_file
from ..questions.hub import (
    DEFAULT_REVISIONS,
    cached_snapshot,
    download_command,
    gated_fix,
    hub_endpoint,
    unreachable,
)
from ..sandboxes.docker import client, engine
from ..sandboxes.docker.cleanup import unverifiable

MIN_FREE_GB = 10.0
DEFAULT_POOL_NETWORKS = 31
"""Bridge networks Docker's default pools allow (172.17-31/16 and 192.168.0.0/16 in /20s)."""


@dataclass(frozen=True)
class Check:
    """One preflight check; ``fix`` says what to do when it fails (or what a warning means).

    A ``warning`` passes (the run starts) but deserves a look: marked ``!``, not ✓.
    """

    name: str
    ok: bool
    detail: str
    fix: str = ""
    warning: bool = False

    @classmethod
    def failed(cls, error: GaiaError, name: str = "") -> Check:
        """The failed check an error makes: its problem as the detail, its fix as the fix.

        Args:
            error: Any of inspect_gaia's errors.
            name: What was checked. A ``DockerProblem`` names it itself (its ``subject``: the
                engine, the image), so its detail leaves the subject out.
        """
        if isinstance(error, engine.DockerProblem):
            return cls(name or error.subject, False, error.detail, error.fix)
        return cls(name, False, error.problem, error.fix)


def check_engine() -> Check:
    """Docker Engine reachable and new enough (the providers' own check)."""
    try:
        version = engine.check_engine()
    except engine.DockerProblem as problem:
        return Check.failed(problem)
    return Check("Docker Engine", True, f"{version} (needs ≥ {engine.dotted(engine.MIN_ENGINE)})")


def check_compose(required: bool = True) -> Check:
    """Compose v2 plugin present and new enough (only ``-T sandbox=compose`` needs it)."""
    try:
        version = engine.check_compose()
    except engine.DockerProblem as problem:
        if not required:
            return Check(
                problem.subject,
                True,
                f"{problem.detail}; only -T sandbox=compose needs it",
                warning=True,
            )
        return Check.failed(problem)
    return Check("Docker Compose", True, f"{version} (needs ≥ {engine.dotted(engine.MIN_COMPOSE)})")


def check_image(image: str) -> Check:
    """Sandbox image present locally, or at least pullable from its registry."""
    try:
        status = engine.image_status(image)
    except engine.DockerProblem as problem:
        return Check.failed(problem)
    if status == "present":
        return Check("sandbox image", True, f"{image} present")
    return Check("sandbox image", True, f"{image} not present, pullable from its registry")


def check_proxy_image() -> Check:
    """The egress proxy's image, built on this machine (never pulled): the run needs it here."""
    if engine.local_image_id(PROXY_IMAGE) is not None:
        return Check("egress proxy image", True, f"{PROXY_IMAGE} present")
    return Check(
        "egress proxy image",
        False,
        f"{PROXY_IMAGE} is not present (-T block_answer_sources, web_record and web_replay run it)",
        "build it with `inspect-gaia image build --egress-proxy --offline` (no registry needed)",
    )


def check_pinned(image: str) -> Check:
    """Whether ``image`` is pinned by digest, and what a run of it will record (a warning only).

    An unpinned tag is no failure (the default, EvalScope's ``python:3.11``, is one): the line says
    which image a run would record, and the reference that pins this engine's copy.
    """
    if pinned_digest(image) is not None:
        return Check("image pin", True, f"{image} is pinned by digest: every run runs that image")
    image_id, digest = engine.image_identity(image)
    name = image.partition("@")[0]
    if digest is not None:
        return Check(
            "image pin",
            True,
            f"{image} is not pinned: runs record this engine's copy ({shorten(digest)}), but the "
            f"tag may name another image later — pin it with -T image={name}@{digest}",
        )
    if image_id is not None:
        return Check(
            "image pin",
            True,
            f"{image} is a local build (id {shorten(image_id)}): runs record its id; it has no "
            "registry digest to pin by",
        )
    return Check(
        "image pin",
        True,
        f"{image} is not pinned and not here: a run pulls it and its log records no id — "
        f"`docker pull {image}` first, or pin it with -T image={name}@sha256:<digest>",
    )


BTRFS_CAVEAT = (
    "; on btrfs, full quota groups can stop counting after a container is removed, until "
    "`btrfs quota rescan` (simple quotas hold: docs/sandboxes.md#limits)"
)
"""What a disk limit on btrfs needs said: the kernel can drop it silently mid-run."""


def check_disk_limit(image: str, disk: str | None) -> Check:
    """Whether ``-T disk=`` can be enforced; without it, a warning when it could not be."""
    if engine.local_image_id(image) is None:
        return Check(
            "disk limit",
            disk is None,
            "cannot tell until the sandbox image is here",
            warning=disk is None,
        )
    problem = _engine_reason(engine.disk_limit_problem(image, disk or "1g"))
    caveat = BTRFS_CAVEAT if problem is None and engine.storage_driver() == "btrfs" else ""
    if disk is not None:
        return Check(
            "disk limit",
            problem is None,
            f"-T disk={disk} {'is enforced' if problem is None else 'cannot be enforced'}"
            + (f": {problem}" if problem else caveat),
            ""
            if problem is None
            else "drop the disk limit, or keep Docker's data on overlay2 over xfs with pquota",
        )
    if problem is None:
        return Check("disk limit", True, f"this engine can enforce -T disk= (not set){caveat}")
    return Check(
        "disk limit",
        True,
        f"none on this engine ({problem}): a sandbox can write until the host's disk is full",
        "-T disk= needs Docker's data on overlay2 over xfs with pquota, or on btrfs",
        warning=True,
    )


_ENGINE_SAYS = re.compile(r'\("(.+)"\)\s*$')
"""The engine's reason in docker-py's ``500 Server Error for http+docker://…: … ("<reason>")``."""


def _engine_reason(problem: str | None) -> str | None:
    """The engine's own reason, without docker-py's request line around it."""
    if problem is None:
        return None
    said = _ENGINE_SAYS.search(problem)
    return said.group(1) if said else problem


def check_layer(image: str, layer: ImageLayer) -> Check:
    """The image has every tool of ``layer``, by the labels the run's check reads.

    ``--browser``: the browser and the page reader; ``--agents``: the agent CLIs. The run makes the
    same check from the same ``ImageLayer`` (``engine.require_layer``).
    """
    labels = engine.local_image_labels(image)
    build = f"`inspect-gaia image build --offline --{layer.name}`, then --image {layer.offline_tag}"
    if labels is None:
        return Check(
            layer.name, False, f"{image} is not on this machine", f"build one with {build}"
        )
    missing = layer.missing(labels, layer.tools)
    if missing:
        return Check(layer.name, False, f"{image} has no {layer.lacks(missing)}", build)
    versions = layer.versions(labels)
    return Check(layer.name, True, ", ".join(f"{k} {v}" for k, v in versions.items()))


def check_leftovers() -> Check:
    """gaia-docker containers of runs whose liveness this host cannot check (warning only)."""
    names = unverifiable()
    if not names:
        return Check("other runs' sandboxes", True, "none whose run cannot be checked from here")
    return Check(
        "other runs' sandboxes",
        True,
        f"{_count(len(names), 'container')} of runs in another PID namespace, kernel or host "
        f"({', '.join(names[:3])}{', …' if len(names) > 3 else ''}): never swept automatically",
        "remove them with `inspect sandbox cleanup gaia-docker` once those runs are over",
        warning=True,
    )


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'s' * (n != 1)}"


def check_docker(image: str, disk: str | None, compose: bool) -> list[Check]:
    """The engine and Compose, then what needs the engine: the image, the disk limit, leftovers.

    Without an engine, the image (and a disk limit asked for) are failed checks that say so.
    """
    engine_check = check_engine()
    checks = [engine_check, check_compose(compose)]
    if engine_check.ok:
        return checks + [
            check_image(image),
            check_pinned(image),
            check_disk_limit(image, disk),
            check_leftovers(),
        ]
    # the engine may be running and refusing this user: the fix is the engine line's
    unknown, fix = "cannot tell without an engine", "see Docker Engine above"
    checks.append(Check("sandbox image", False, f"{image}: {unknown}", fix))
    if disk is not None:
        checks.append(Check("disk limit", False, f"-T disk={disk}: {unknown}", fix))
    return checks


def check_local_dataset(dataset_path: str, split: str) -> Check:
    """A local snapshot (``--dataset-path``) holds the split's metadata."""
    try:
        return Check("dataset", True, str(metadata_file(Path(dataset_path), split)))
    except GaiaError as ex:  # the fix says what to pass
        return Check.failed(ex, "dataset")


def check_dataset(hub: str, split: str, revision: str | None) -> list[Check]:
    """Dataset cached, or else the hub reachable and, for Hugging Face, a token present."""
    cached = cached_snapshot(hub, revision or DEFAULT_REVISIONS[hub], split)
    if cached is not None:
        return [Check("dataset", True, f"{hub} {split} cached in {cached}")]
    checks = []
    if hub == "huggingface":
        from huggingface_hub import get_token

        has_token = get_token() is not None
        checks.append(
            Check(
                "HF token",
                has_token,
                "present" if has_token else "missing (GAIA is gated on Hugging Face)",
                "" if has_token else gated_fix(),
            )
        )
    url = hub_endpoint(hub)
    why = unreachable(hub)
    checks.append(
        Check(
            "dataset",
            why is None,
            f"{split} not cached; {url} "
            + ("reachable" if why is None else f"unreachable ({why})"),
            ""
            if why is None
            else f"run `{download_command(hub, split)}` where {url} is reachable, or check a "
            "local snapshot with `--dataset-path`",
        )
    )
    return checks


def check_free_disk(min_free_gb: float) -> Check:
    """Free space where Docker and the dataset cache live."""
    path = "/var/lib/docker" if os.path.isdir("/var/lib/docker") else os.path.expanduser("~")
    free = shutil.disk_usage(path).free / 1e9
    ok = free >= min_free_gb
    return Check(
        "free disk",
        ok,
        f"{free:.1f} GB free at {path} (wants ≥ {min_free_gb:g})",
        "" if ok else "free some space (`docker system prune`)",
    )


def check_networks(max_sandboxes: int, network: bool, sandbox: str = "docker") -> Check:
    """Room in Docker's address pools: one network per run (docker), or per sandbox (compose)."""
    if not network:
        return Check("address pools", True, "network=false: sandboxes need no network")
    try:
        listed = client.networks({})
    except Exception:
        return Check(
            "address pools", False, "cannot tell without an engine", "see Docker Engine above"
        )
    existing = [n for n in listed if n.get("Name") not in ("bridge", "host", "none")]
    free = DEFAULT_POOL_NETWORKS - len(existing)
    if sandbox == "docker":
        ok = free >= 1
        return Check(
            "address pools",
            ok,
            f"{_count(len(existing), 'network')} in use, room for ~{free} more; gaia-docker needs "
            "one per run, whatever --max-sandboxes",
            "" if ok else "remove unused networks (`docker network prune`)",
        )
    ok = free >= max_sandboxes
    return Check(
        "address pools",
        ok,
        f"{_count(len(existing), 'network')} in use, room for ~{free} more; "
        f"planned --max-sandboxes {max_sandboxes}",
        ""
        if ok
        else f"use the default `{flag('sandbox', 'docker')}` (one network per run), lower "
        "--max-sandboxes, remove unused networks (`docker network prune`) or widen "
        "default-address-pools in /etc/docker/daemon.json",
    )
