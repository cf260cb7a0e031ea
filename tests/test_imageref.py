"""Image references: valid or not, pinned or not, and the identity runs are pooled on."""

from __future__ import annotations

import pytest

from inspect_gaia.imageref import (
    check_reference,
    identity,
    pinned_digest,
    registry_digest,
    repository,
)

DIGEST = "sha256:" + "1a" * 32


@pytest.mark.parametrize(
    "reference",
    [
        "python:3.11",
        "python",
        f"python@{DIGEST}",
        f"python:3.11@{DIGEST}",
        "reg.example:5000/team/gaia:1.0-rc_1",
        f"127.0.0.1:5000/gaia@{DIGEST}",
        "inspect-gaia/sandbox:bookworm",
    ],
)
def test_references_docker_accepts(reference: str) -> None:
    assert check_reference(reference) is None


@pytest.mark.parametrize(
    ("reference", "why"),
    [
        ("python@sha256:abc", "is not a digest"),
        (f"python@{DIGEST.upper()}", "is not a digest"),
        (f"python@{DIGEST}@{DIGEST}", "is not a digest"),
        ("python:3.11 ", "no spaces"),
        ("python:3.11\n", "no spaces"),
        ("python:.bad", "is not an image name[:tag]"),
        ("-python", "is not an image name[:tag]"),
    ],
)
def test_references_docker_refuses(reference: str, why: str) -> None:
    found = check_reference(reference)
    assert found is not None and why in found


def test_pins_and_repositories() -> None:
    assert pinned_digest(f"python:3.11@{DIGEST}") == DIGEST
    assert pinned_digest("python:3.11") is None
    assert repository("docker.io/library/python:3.11") == "python"
    assert repository("reg.example:5000/team/gaia:1") == "reg.example:5000/team/gaia"
    other = "sha256:" + "2b" * 32
    digests = [f"mirror.example/python@{other}", f"python@{DIGEST}"]
    assert registry_digest("python:3.11", digests) == DIGEST  # its own repository first
    assert registry_digest("gaia-base:1", [f"python@{DIGEST}"]) == DIGEST
    assert registry_digest("gaia-base:1", []) is None


def test_identity_prefers_the_digest_then_the_id() -> None:
    image_id = "sha256:" + "9f" * 32
    assert identity("python:3.11", image_id, DIGEST) == "python:3.11 @sha256:1a1a1a1a1a1a"
    assert identity(f"python:3.11@{DIGEST}", image_id, DIGEST) == "python:3.11 @sha256:1a1a1a1a1a1a"
    assert identity("gaia:1", image_id, None) == "gaia:1 id sha256:9f9f9f9f9f9f"
    assert identity("python:3.11", None, None) == "python:3.11 (identity not recorded)"
