"""The browser image's recipe: what each path installs, pins and labels (the build is Docker's:
``test_docker_web.py`` runs the image CI builds)."""

from __future__ import annotations

from typing import Any

import pytest

import inspect_gaia._cli.image as cli_image
from inspect_gaia.image_layout import (
    OFFLINE_ATTACHMENTS_TAG,
    OFFLINE_BROWSER_TAG,
    REGISTRY_ATTACHMENTS_TAG,
    REGISTRY_BROWSER_TAG,
)
from inspect_gaia.images.browser import (
    LABELS,
    NPM_PACKAGES,
    PLAYWRIGHT_MCP_VERSION,
    READER_WHEELS,
    browser_dockerfile,
    browser_tag,
)
from inspect_gaia.images.layer import base_tag
from inspect_gaia.sandboxes.docker import engine
from tests.helpers import invoke


def test_each_path_builds_on_its_own_attachments_image() -> None:
    assert (browser_tag(True), base_tag(True)) == (OFFLINE_BROWSER_TAG, OFFLINE_ATTACHMENTS_TAG)
    assert (browser_tag(False), base_tag(False)) == (REGISTRY_BROWSER_TAG, REGISTRY_ATTACHMENTS_TAG)
    for offline in (True, False):
        assert browser_dockerfile(base_tag(offline)).startswith(f"FROM {base_tag(offline)}\n")


def test_the_recipe_pins_everything_and_downloads_nothing_at_run_time() -> None:
    text = browser_dockerfile(OFFLINE_ATTACHMENTS_TAG)
    assert "chromium" in text and "nodejs" in text and "libnss3-tools" in text
    assert "-security main" in text, "a browser gets Debian's security updates"
    assert "npx" not in text and "playwright install" not in text and "npm install" not in text
    assert "--no-index" in text, "the reader's wheels come from the build context only"
    assert all("==" in wheel for wheel in READER_WHEELS)
    assert NPM_PACKAGES["@playwright/mcp"] == PLAYWRIGHT_MCP_VERSION
    assert len(set(NPM_PACKAGES.values())) == 2, "playwright and playwright-core: one version"
    for key, value in LABELS.items():
        assert f'{key}="{value}"' in text


@pytest.mark.parametrize(
    ("offline", "tag"), [(True, OFFLINE_BROWSER_TAG), (False, REGISTRY_BROWSER_TAG)]
)
def test_image_build_browser_picks_its_tag(
    monkeypatch: pytest.MonkeyPatch, offline: bool, tag: str
) -> None:
    started: list[tuple[str, bool]] = []

    def build(chosen: str, offline: bool, log: Any) -> None:
        started.append((chosen, offline))

    monkeypatch.setattr(cli_image, "build_browser", build)
    monkeypatch.setattr(engine, "check_engine", lambda: "27.5.1")
    monkeypatch.setattr(engine, "local_image_id", lambda image: None)
    code, out, err = invoke("image", "build", "--browser", *(["--offline"] if offline else []))
    assert code == 0 and started == [(tag, offline)] and out == f"{tag}\n"
    assert "-T browser=true -T web_reader=true" in err
    code, _, err = invoke("image", "build", "--browser", "--egress-proxy")
    assert code == 1 and "--browser is for sandbox images" in err
