"""The images' layout: what an image's labels say it holds (``ImageLayer``), for the run and doctor."""

from __future__ import annotations

from inspect_gaia.image_layout import AGENTS_LAYER, BROWSER_LABEL, READER_LABEL, WEB_LAYER
from inspect_gaia.images.agents import LABELS as AGENT_LABELS
from inspect_gaia.images.browser import LABELS as WEB_LABELS


def test_web_labels_say_what_an_image_has() -> None:
    assert WEB_LAYER.missing({}, ["browser", "web_reader"]) == ["browser", "web_reader"]
    assert WEB_LAYER.missing({BROWSER_LABEL: "0.0.76"}, ["browser", "web_reader"]) == ["web_reader"]
    assert WEB_LAYER.missing({READER_LABEL: "x"}, ["web_reader"]) == []
    assert WEB_LAYER.lacks(["browser", "web_reader"]) == "browser or page reader"
    labels = {**WEB_LABELS, "inspect_gaia.web.chromium": "156", "maintainer": "someone"}
    versions = WEB_LAYER.versions(labels)
    assert versions["chromium"] == "156" and "maintainer" not in versions


def test_agent_labels_say_which_agents_an_image_has() -> None:
    assert AGENTS_LAYER.versions({**AGENT_LABELS, "maintainer": "x"}) == {
        "claude_code": "2.1.332",
        "codex_cli": "0.171.0",
        "gemini_cli": "0.61.0",
        "mini_swe_agent": "2.4.6",
    }
    assert AGENTS_LAYER.versions({}) == {}
    assert AGENTS_LAYER.missing(AGENT_LABELS, AGENTS_LAYER.tools) == []
    assert AGENTS_LAYER.lacks(["codex_cli"]) == "`codex`"
    assert AGENTS_LAYER.asked["codex_cli"] == "-T agent=codex_cli"


def test_every_label_a_build_writes_is_one_the_checks_read() -> None:
    for layer, labels in ((WEB_LAYER, WEB_LABELS), (AGENTS_LAYER, AGENT_LABELS)):
        assert set(layer.tools.values()) <= set(labels), layer.name
        assert all(label.startswith(layer.prefix) for label in labels), layer.name
