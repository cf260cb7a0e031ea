"""Image references: which are valid, which are pinned, and the identity a log records.

A reference is what a user types (``python:3.11``, ``registry.example/gaia:1``,
``python:3.11@sha256:…``). Only a reference with a digest names one image for good; a tag moves
when its owner pushes again, so a run of ``python:3.11`` this month and next may run different
images. The log therefore records three things (``GaiaProvenance``): the reference as given, the
local image id the engine had, and the registry digest: the reference's own when it is pinned, else
the one the engine recorded when it pulled the image (``RepoDigests``; an image built locally has
none).

``identity`` condenses them into the one string runs are pooled on and labelled by: the digest
when known (an image pulled on an arm64 and an amd64 machine has one digest and two ids), else the
id, else the reference marked unrecorded. Digests are shortened to 12 hex digits there, as
``docker images`` shows ids; the log keeps them whole.

Pure string handling: the Docker SDK is never imported here (the log readers use this module).
"""

from __future__ import annotations

import re

DIGEST = re.compile(r"(?:sha256:[0-9a-f]{64}|sha384:[0-9a-f]{96}|sha512:[0-9a-f]{128})")
"""A content digest as Docker writes it: the algorithms the OCI distribution spec names."""
_TAG = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/:-]*")
_DEFAULT_REGISTRY = ("docker.io/", "index.docker.io/", "registry-1.docker.io/")


def check_reference(reference: str) -> str | None:
    """Why ``reference`` is not an image reference Docker accepts, or ``None`` when it is.

    Checked: no whitespace; at most one ``@``, followed by a whole digest (``sha256:`` and 64
    lower-case hex digits); a tag of the characters Docker allows. The name is left to the engine.
    """
    if not reference or reference != reference.strip() or any(c.isspace() for c in reference):
        return "an image reference has no spaces"
    name, at, digest = reference.partition("@")
    if at and not DIGEST.fullmatch(digest):
        return f"{digest!r} is not a digest (sha256: and 64 lower-case hex digits)"
    last = name.rsplit("/", 1)[-1]
    tag = last.partition(":")[2] if ":" in last else None
    if not _NAME.fullmatch(name) or (tag is not None and not _TAG.fullmatch(tag)):
        return f"{name!r} is not an image name[:tag]"
    return None


def pinned_digest(reference: str) -> str | None:
    """The digest ``name@digest`` pins, or ``None`` for a reference by tag."""
    _, at, digest = reference.partition("@")
    return digest if at and DIGEST.fullmatch(digest) else None


def repository(reference: str) -> str:
    """The repository a reference names, as ``RepoDigests`` spells it (``python``, ``reg/x``)."""
    name = reference.partition("@")[0]
    head, slash, last = name.rpartition("/")
    name = head + slash + last.partition(":")[0]
    for prefix in _DEFAULT_REGISTRY:
        name = name.removeprefix(prefix)
    return name.removeprefix("library/")


def registry_digest(reference: str, repo_digests: list[str]) -> str | None:
    """The registry digest of an image: pinned by ``reference``, else from its ``RepoDigests``.

    An entry of the reference's own repository is preferred; an image re-tagged locally under
    another name keeps the digest it was pulled with, which still names its content.
    """
    pinned = pinned_digest(reference)
    if pinned is not None:
        return pinned
    found = [entry.rpartition("@") for entry in repo_digests if "@" in entry]
    own = [digest for repo, _, digest in found if repository(repo) == repository(reference)]
    digests = own or [digest for _, _, digest in found]
    return digests[0] if digests and DIGEST.fullmatch(digests[0]) else None


def shorten(digest: str) -> str:
    """``sha256:`` and the first 12 hex digits, as ``docker images`` shows an id."""
    algorithm, _, hexdigits = digest.partition(":")
    return f"{algorithm}:{hexdigits[:12]}"


def identity(reference: str, image_id: str | None, digest: str | None) -> str:
    """The one string runs are pooled on: ``python:3.11 @sha256:1a2b3c4d5e6f``.

    The digest when known, else the local id (``id sha256:…``), else the reference marked
    ``identity not recorded``; a reference pinned by digest is shown once.
    """
    name = reference.partition("@")[0]
    if digest is not None:
        return f"{name} @{shorten(digest)}"
    if image_id is not None:
        return f"{name} id {shorten(image_id)}"
    return f"{reference} (identity not recorded)"
