"""The web inside the sandbox: a headless browser and a page reader, each an MCP server.

``-T browser=true`` and ``-T web_reader=true`` run them in the sample's own sandbox.

Both need an image that has them (``inspect-gaia image build --browser``, ``browser_image``); a
run asking for them on an image without them stops before any sandbox starts
(``require_web_image``). ``session`` keeps each sample's servers (started at the first call,
restarted after a crash) under ``mcp_relay`` (run in the sandbox); ``browser`` and ``reader`` hold
the model-facing tools (``download`` saves a file for ``browser_download``), ``pages`` shapes what
the browser answers into text a model reads. This module names the tools and checks the image
only, so the parameters can name them without importing the tools themselves.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..errors import GaiaParameterError

BROWSER_TOOLS = (
    "browser_navigate",
    "browser_navigate_back",
    "browser_snapshot",
    "browser_click",
    "browser_type",
    "browser_select_option",
    "browser_press_key",
    "browser_wait_for",
    "browser_take_screenshot",
    "browser_download",
)
"""The browser's tools, in the order the agent gets them (``browser.browser_tools``)."""
READER_TOOLS = ("fetch",)
"""The page reader's tools (``reader.reader_tools``)."""


def missing_web_tools(labels: Mapping[str, str], browser: bool, reader: bool) -> list[str]:
    """Which of the asked-for tools an image with ``labels`` lacks (``browser``, ``web_reader``)."""
    from ..browser_image import BROWSER_LABEL, READER_LABEL

    missing = []
    if browser and BROWSER_LABEL not in labels:
        missing.append("browser")
    if reader and READER_LABEL not in labels:
        missing.append("web_reader")
    return missing


def web_versions(labels: Mapping[str, str]) -> dict[str, str]:
    """The browser's and reader's versions an image's labels record (``chromium``, ...)."""
    from ..browser_image import LABEL_PREFIX

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
    from .._docker.engine import local_image_labels
    from .._flags import flag
    from ..browser_image import browser_tag

    labels = local_image_labels(image)
    if labels is None:
        return None
    missing = missing_web_tools(labels, browser, reader)
    if missing:
        use = flag("image", browser_tag(offline=True))
        asked = " ".join(f"-T {name}=true" for name in missing)
        lacks = " or ".join({"browser": "browser", "web_reader": "page reader"}[n] for n in missing)
        raise GaiaParameterError(
            f"{asked}: the sandbox image {image} has no {lacks}",
            fix="build one with `inspect-gaia image build --offline --browser`"
            + (f" and pass `{use}`" if use else ""),
        )
    return web_versions(labels)
