"""The web image check: what an image's labels say it has, and the versions they record."""

from __future__ import annotations

from inspect_gaia.image_layout import BROWSER_LABEL, READER_LABEL
from inspect_gaia.images.browser import LABELS
from inspect_gaia.web.image_check import missing_web_tools, web_versions


def test_labels_say_what_an_image_has() -> None:
    assert missing_web_tools({}, browser=True, reader=True) == ["browser", "web_reader"]
    assert missing_web_tools({BROWSER_LABEL: "0.0.76"}, browser=True, reader=True) == ["web_reader"]
    assert missing_web_tools({READER_LABEL: "x"}, browser=False, reader=True) == []
    labels = {**LABELS, "inspect_gaia.web.chromium": "156", "maintainer": "someone"}
    assert web_versions(labels)["chromium"] == "156" and "maintainer" not in web_versions(labels)
