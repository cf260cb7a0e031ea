"""The check that a run's image has the web tools it asks for, and their versions.

``-T browser=true`` or ``-T web_reader=true`` on an image without them stops before any sandbox
starts; the versions the image's labels record go into the run's record (``web_tools``). The task
(``task.gaia_task``) and ``doctor`` run it; the labels are the image's layout (``sandbox_paths``).
"""

from __future__ import annotations

from collections.abc import Mapping

from .._flags import flag
from ..errors import GaiaParameterError
from ..image_layout import BROWSER_LABEL, LABEL_PREFIX, READER_LABEL
from ..sandboxes.docker import OFFLINE_BROWSER_TAG
from ..sandboxes.docker.engine import local_image_labels


def missing_web_tools(labels: Mapping[str, str], browser: bool, reader: bool) -> list[str]:
    """Which of the asked-for tools an image with ``labels`` lacks (``browser``, ``web_reader``)."""
    missing = []
    if browser and BROWSER_LABEL not in labels:
        missing.append("browser")
    if reader and READER_LABEL not in labels:
        missing.append("web_reader")
    return missing


def web_versions(labels: Mapping[str, str]) -> dict[str, str]:
    """The browser's and reader's versions an image's labels record (``chromium``, ...)."""
    return {
        key.removeprefix(LABEL_PREFIX): value
        for key, value in sorted(labels.items())
        if key.startswith(LABEL_PREFIX)
    }


def require_web_image(image: str, browser: bool, reader: bool) -> dict[str, str] | None:
    """The versions of the web tools in ``image``, when it is here; refuses one that lacks them.

    An image that is not here (no engine, or one to pull) is not checked: the sandbox provider
    refuses a missing image itself, and a pulled one without the tools says so at the first call.

    Raises:
        GaiaParameterError: The image is here and lacks a tool asked for; the line names the build.
    """
    labels = local_image_labels(image)
    if labels is None:
        return None
    missing = missing_web_tools(labels, browser, reader)
    if missing:
        use = flag("image", OFFLINE_BROWSER_TAG)
        asked = " ".join(f"-T {name}=true" for name in missing)
        lacks = " or ".join({"browser": "browser", "web_reader": "page reader"}[n] for n in missing)
        raise GaiaParameterError(
            f"{asked}: the sandbox image {image} has no {lacks}",
            fix="build one with `inspect-gaia image build --offline --browser`"
            + (f" and pass `{use}`" if use else ""),
        )
    return web_versions(labels)
