"""`inspect-gaia image build`: the engine and the tag are checked before any build work."""

from __future__ import annotations

from typing import Any

import pytest

import inspect_gaia._cli.image as cli_image
from inspect_gaia.sandboxes.docker import engine
from tests.helpers import invoke


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str, bool]]:
    """Record the builds the command starts (each takes minutes for real)."""
    started: list[tuple[str, str, bool]] = []

    def offline(tag: str, attachments: bool, log: Any) -> None:
        started.append(("offline", tag, attachments))

    def registry(tag: str, attachments: bool, log: Any) -> None:
        started.append(("registry", tag, attachments))

    monkeypatch.setattr(cli_image, "build_offline", offline)
    monkeypatch.setattr(cli_image, "build_from_registry", registry)
    return started


@pytest.mark.parametrize("args", [["--offline", "--attachments"], []])
def test_no_engine_stops_the_build_before_any_work(
    builds: list[tuple[str, str, bool]], monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    monkeypatch.setenv("DOCKER_HOST", "tcp://127.0.0.1:9")
    code, out, err = invoke("image", "build", *args)
    assert code == 1 and out == "" and builds == []
    assert err.startswith("inspect-gaia: Docker Engine not running at tcp://127.0.0.1:9")
    assert err.count("\n") == 1


def test_a_plain_build_never_retags_the_upstream_image(
    builds: list[tuple[str, str, bool]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engine, "check_engine", lambda: "27.5.1")
    monkeypatch.setattr(engine, "local_image_id", lambda image: None)
    code, out, _ = invoke("image", "build")
    assert code == 0 and builds == [("registry", "inspect-gaia/sandbox:py3.11", False)]
    assert out == "inspect-gaia/sandbox:py3.11\n"
    # asked for by name, an upstream tag is the user's choice
    assert invoke("image", "build", "--tag", "python:3.11")[0] == 0
    assert builds[-1] == ("registry", "python:3.11", False)


def test_an_invalid_tag_gets_a_tag_message_not_dockers_usage(
    builds: list[tuple[str, str, bool]],
) -> None:
    code, _, err = invoke("image", "build", "--tag", "Bad Tag!!")
    assert code == 2 and builds == []
    assert err == (
        "inspect-gaia image build: invalid value for '--tag': 'Bad Tag!!' is not an image name: "
        "use [registry/]name[:tag] in lowercase letters, digits and . _ - such as "
        "inspect-gaia/sandbox:mine — see `inspect-gaia image build --help`\n"
    )
