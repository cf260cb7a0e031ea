"""The sandbox images' layout: their tags, where things sit inside them, and what their labels say.

A contract between the image builders (``images/``), the Docker provider, which writes the run's CA
into a sandbox (``sandboxes/docker/egress``), the tools that run in the sandbox (``web/browser``,
``web/reader``, ``agents/swe``) and the checks that an image holds what a run asks for
(``sandboxes/docker/engine.require_layer`` for the task, ``_cli/_checks`` for ``doctor``). Each
name is defined here once, so none of them imports another to find a path, a tag or a label. A
leaf: importing it loads nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

OFFLINE_TAG = "inspect-gaia/sandbox:bookworm"
"""The image built without a registry (``inspect-gaia image build --offline``)."""
OFFLINE_ATTACHMENTS_TAG = "inspect-gaia/sandbox:bookworm-attachments"
REGISTRY_TAG = "inspect-gaia/sandbox:py3.11"
"""The registry build without attachment readers: ``python:3.11`` plus the sandbox's command. Never
``python:3.11`` itself, which a build would shadow for everything else on the host."""
REGISTRY_ATTACHMENTS_TAG = "inspect-gaia/sandbox:py3.11-attachments"
OFFLINE_BROWSER_TAG = "inspect-gaia/sandbox:bookworm-browser"
"""The attachments image plus a headless browser and a page reader (``--offline --browser``)."""
REGISTRY_BROWSER_TAG = "inspect-gaia/sandbox:py3.11-browser"
"""The registry build of the same (``image build --browser``)."""
OFFLINE_AGENTS_TAG = "inspect-gaia/sandbox:bookworm-agents"
"""The attachments image plus the agent CLIs of ``-T agent=`` (``--offline --agents``)."""
REGISTRY_AGENTS_TAG = "inspect-gaia/sandbox:py3.11-agents"
"""The registry build of the same (``image build --agents``)."""

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

AGENT_CLIS: dict[str, str] = {
    "claude_code": "claude",
    "codex_cli": "codex",
    "gemini_cli": "gemini",
    "mini_swe_agent": "mini",
}
"""The command each agent of ``-T agent=`` runs, as the agents image puts it on ``PATH``."""
MINI_DIR = "/opt/mini-swe-agent"
CLAUDE_DIR = "/opt/claude-code"
CODEX_DIR = "/opt/codex"
NODE_DIR = "/opt/node"
"""Node.js for Gemini CLI (which wants 20 or newer; bookworm packages 18), ``node`` on ``PATH``."""
GEMINI_DIR = "/opt/gemini-cli"
"""Gemini CLI as an npm install lays it out (``node_modules/.bin/gemini``)."""
INSPECT_SWE_DIR = "/var/tmp/.5c95f967ca830048"
"""inspect_swe 0.2.72's install folder in a sandbox (its ``SANDBOX_INSTALL_DIR``): its Gemini CLI
uses ``gemini-cli/node_modules/.bin/gemini`` under it when that reports the pinned version, so the
image links ``GEMINI_DIR`` there; anything else it would download."""
GEMINI_SETTINGS = "/etc/gemini-cli/settings.json"
"""Gemini CLI's system settings (above the user's, which inspect_swe writes per sample): its
web tools excluded, its update checks and usage statistics off."""
MINI_CONFIG = "/var/tmp/gaia-mini.yaml"
"""Where each sample's mini-swe-agent configuration is written (``agents/mini_config``)."""


@dataclass(frozen=True)
class ImageLayer:
    """A layer ``image build`` adds over the attachments image, known by its labels.

    Each tool of the layer has a label the image carries only when the tool is in it (what a run's
    check looks for); every label under ``prefix`` records a version (what the run records).
    """

    name: str
    """The layer's name: ``doctor``'s check and ``image build``'s flag (``--<name>``)."""
    prefix: str
    """Every version label of the layer starts so."""
    tools: Mapping[str, str]
    """What a run may ask for (``browser``, ``codex_cli``) -> the label present only with it."""
    asked: Mapping[str, str]
    """How a run asks for each tool, as the user typed it (``-T browser=true``)."""
    nouns: Mapping[str, str]
    """What each tool is called in a sentence (``page reader``, ```codex```)."""
    offline_tag: str
    """The tag ``image build --offline --<name>`` gives."""

    def versions(self, labels: Mapping[str, str]) -> dict[str, str]:
        """The versions an image's labels record (``chromium``, ``codex_cli``, ...)."""
        return {
            key.removeprefix(self.prefix): value
            for key, value in sorted(labels.items())
            if key.startswith(self.prefix)
        }

    def missing(self, labels: Mapping[str, str], wanted: Iterable[str]) -> list[str]:
        """Which of the ``wanted`` tools an image with ``labels`` lacks."""
        return [tool for tool in wanted if self.tools[tool] not in labels]

    def lacks(self, missing: Iterable[str]) -> str:
        """``browser or page reader``: the missing tools in a sentence."""
        return " or ".join(self.nouns[tool] for tool in missing)


WEB_PREFIX = "inspect_gaia.web."
BROWSER_LABEL = f"{WEB_PREFIX}playwright_mcp"
"""Present only on an image with the browser."""
READER_LABEL = f"{WEB_PREFIX}mcp_server_fetch"
"""Present only on an image with the page reader."""
WEB_LAYER = ImageLayer(
    name="browser",
    prefix=WEB_PREFIX,
    tools={"browser": BROWSER_LABEL, "web_reader": READER_LABEL},
    asked={"browser": "-T browser=true", "web_reader": "-T web_reader=true"},
    nouns={"browser": "browser", "web_reader": "page reader"},
    offline_tag=OFFLINE_BROWSER_TAG,
)
"""The browser image's layer: a headless browser and a page reader (``browser``, ``web_reader``)."""

AGENTS_PREFIX = "inspect_gaia.agents."
AGENTS_LAYER = ImageLayer(
    name="agents",
    prefix=AGENTS_PREFIX,
    tools={agent: f"{AGENTS_PREFIX}{agent}" for agent in AGENT_CLIS},
    asked={agent: f"-T agent={agent}" for agent in AGENT_CLIS},
    nouns={agent: f"`{cli}`" for agent, cli in AGENT_CLIS.items()},
    offline_tag=OFFLINE_AGENTS_TAG,
)
"""The agents image's layer: the CLIs of ``-T agent=``."""
