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
    MINI_DIR,
    OFFLINE_AGENTS_TAG,
    REGISTRY_AGENTS_TAG,
)
from .layer import build_layer
from .sandbox import Log

CLAUDE_CODE_VERSION = "2.1.332"
CODEX_VERSION = "0.171.0"
MINI_SWE_AGENT_VERSION = "2.4.6"

LABELS = {
    AGENTS_LAYER.tools["claude_code"]: CLAUDE_CODE_VERSION,
    AGENTS_LAYER.tools["codex_cli"]: CODEX_VERSION,
    AGENTS_LAYER.tools["mini_swe_agent"]: MINI_SWE_AGENT_VERSION,
}
"""The agents image's labels: each CLI's version, under the label the run's check looks for."""
_ARCH = {"x86_64": ("x64", "x86_64"), "aarch64": ("arm64", "aarch64")}
"""The machine's architecture as npm names it and as Codex's vendor folder does."""


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
                "COPY npm/ /tmp/npm/",
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


def build_agents(tag: str, offline: bool, log: Log) -> None:
    """Build ``tag``, the agents image, over the path's attachments image (``layer``)."""
    what = f"claude {CLAUDE_CODE_VERSION}, codex {CODEX_VERSION}, mini {MINI_SWE_AGENT_VERSION}"
    wheels, npm = mini_wheels(), npm_packages()
    build_layer(tag, offline, log, what=what, npm=npm, wheels=wheels, dockerfile=agents_dockerfile)
