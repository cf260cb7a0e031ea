"""The web inside the sandbox: a headless browser and a page reader, each an MCP server.

``-T browser=true`` and ``-T web_reader=true`` run them in the sample's own sandbox.

Both need an image that has them (``inspect-gaia image build --browser``, ``images/browser``); a run
asking for them on an image without them stops before any sandbox starts
(``sandboxes/docker/engine.require_layer``). ``session`` keeps each sample's servers (started at the
first call, restarted after a crash) under ``mcp_relay`` (run in the sandbox); ``browser`` and
``reader`` hold the model-facing tools (``download`` saves a file for ``browser_download``),
``pages`` shapes what the browser answers into text a model reads. This module names the tools only,
and imports nothing, so the parameters and the log readers can name them without importing the
tools.
"""

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
