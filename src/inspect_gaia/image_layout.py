"""Where things sit inside the sandbox image: a contract between its builder, provider and tools.

The image builders (``images/sandbox``, ``images/browser``) put files at these paths and labels
on the image, the Docker provider (``sandboxes/docker/egress``) writes the run's CA there, and
the tools that run in the sandbox (``web/browser``, ``web/reader``) and the image check
(``web/image_check``) rely on them. Each is defined here once, so a tool imports neither the
builder nor the provider to find a path. A leaf: importing it loads nothing.
"""

CA_FILE = "/usr/local/share/ca-certificates/inspect-gaia-egress.crt"
"""Where a sandbox gets the run's egress CA (``update-ca-certificates`` keeps it)."""
BUNDLE = "/etc/ssl/certs/ca-certificates.crt"
"""Debian's (and the ``python`` images') CA bundle: the image's, plus the run's CA."""

PLAYWRIGHT_MCP_DIR = "/opt/playwright-mcp"
"""The browser image's Playwright MCP server and its two dependencies, unpacked."""
PLAYWRIGHT_MCP_CLI = f"{PLAYWRIGHT_MCP_DIR}/node_modules/@playwright/mcp/cli.js"
READER_DIR = "/opt/gaia-web-reader"
"""The page reader's packages, on its own ``PYTHONPATH`` only."""
CHROMIUM = "/usr/bin/chromium"

LABEL_PREFIX = "inspect_gaia.web."
"""Every version label of the browser image starts so (``web_tools.image_versions`` reads them)."""
BROWSER_LABEL = f"{LABEL_PREFIX}playwright_mcp"
"""Present only on an image with the browser: what the run's image check looks for."""
READER_LABEL = f"{LABEL_PREFIX}mcp_server_fetch"
"""Present only on an image with the page reader."""
