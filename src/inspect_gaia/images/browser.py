"""The browser image: the attachments image plus a headless browser and a page reader.

``inspect-gaia image build --browser [--offline]`` builds it on top of the attachments image of the
same path (built first when missing: GAIA's browsing questions also bring files to read), with one
``docker build`` whose base is that local image, so the offline path still needs no registry:

* Debian bookworm's ``chromium``, ``nodejs`` and ``libnss3-tools`` (``certutil``: Chromium on Linux
  trusts the run's egress CA only from an NSS database), from the Debian archive *with* its
  security suite: a browser that reads the open web should have its security fixes, and bookworm's
  point release lags them by months;
* Microsoft's Playwright MCP server (``@playwright/mcp``) and its two dependencies, at the exact
  versions below, fetched as tarballs by the host's ``npm pack`` (its registry, proxy and
  certificates, as the host's pip fetches the wheels) and unpacked into ``/opt/playwright-mcp``:
  they are plain JavaScript with no install step, so the image needs no ``npm``. 0.0.76 is the
  newest whose Playwright still runs on bookworm's Node.js 18 (Playwright 1.62 and later refuse
  anything older than Node.js 20, which bookworm does not package);
* the fetch MCP server (``mcp-server-fetch``) and its dependencies, pinned wheels installed with
  ``--target`` into ``/opt/gaia-web-reader``: on the reader's own ``PYTHONPATH`` only, so the
  agent's Python sees the same packages as in the attachments image.

The versions are image labels (``LABELS``), read back into each run's provenance
(``web_tools.image_versions``); nothing is downloaded at run time (no ``npx``, no browser
download).
"""

from __future__ import annotations

import json
import subprocess

from ..errors import GaiaError
from ..image_layout import (
    BROWSER_LABEL,
    OFFLINE_BROWSER_TAG,
    PLAYWRIGHT_MCP_CLI,
    PLAYWRIGHT_MCP_DIR,
    READER_DIR,
    READER_LABEL,
    REGISTRY_BROWSER_TAG,
    WEB_PREFIX,
)
from .layer import build_layer
from .sandbox import DEBIAN_SUITE, Log, build_dockerfile

PLAYWRIGHT_MCP_VERSION = "0.0.76"
PLAYWRIGHT_VERSION = "1.61.0-alpha-1781023400000"
"""The exact ``playwright`` and ``playwright-core`` versions ``@playwright/mcp`` pins."""
NPM_PACKAGES = {
    "@playwright/mcp": PLAYWRIGHT_MCP_VERSION,
    "playwright": PLAYWRIGHT_VERSION,
    "playwright-core": PLAYWRIGHT_VERSION,
}
MCP_SERVER_FETCH_VERSION = "2026.10.24"
READER_WHEELS = (
    f"mcp-server-fetch=={MCP_SERVER_FETCH_VERSION}",
    "annotated-types==0.8.0",
    "anyio==4.16.0",
    "attrs==26.1.0",
    "beautifulsoup4==4.15.0",
    "certifi==2026.10.19.post1",
    "cffi==2.1.1",
    "charset-normalizer==3.5.3",
    "click==8.5.1",
    "cryptography==50.0.2",
    "h11==0.16.0",
    "html5lib==1.1",
    "httpcore==1.0.9",
    "httpcore2==2.17.0",
    "httpx==0.29.0",
    "httpx2==2.17.0",
    "idna==3.21",
    "jsonschema==4.26.0",
    "jsonschema-specifications==2025.9.1",
    "lxml==6.2.0",
    "markdownify==1.2.3",
    "mcp==2.3.0",
    "mcp-types==2.3.0",
    "opentelemetry-api==1.45.3",
    "protego==0.7.0",
    "pycparser==3.12",
    "pydantic==2.14.4",
    "pydantic-core==2.50.5",
    "pyjwt==2.15.1",
    "python-multipart==0.0.34",
    "readabilipy==0.3.0",
    "referencing==0.37.0",
    "regex==2026.12.2",
    "requests==2.34.2",
    "rpds-py==2026.9.1",
    "six==1.17.0",
    "socksio==1.0.0",
    "soupsieve==2.10",
    "sse-starlette==3.7.1",
    "starlette==1.10.0",
    "truststore==0.10.5",
    "typing-extensions==4.16.0",
    "typing-inspection==0.4.5",
    "urllib3==2.8.0",
    "uvicorn==0.55.0",
    "webencodings==0.6.1",
)
"""mcp-server-fetch's requirements as pip resolved them for CPython 3.11 on Linux."""
APT_PACKAGES = ("chromium", "nodejs", "libnss3-tools", "fonts-liberation")

LABELS = {
    BROWSER_LABEL: PLAYWRIGHT_MCP_VERSION,
    f"{WEB_PREFIX}playwright": PLAYWRIGHT_VERSION,
    READER_LABEL: MCP_SERVER_FETCH_VERSION,
}
"""The pinned versions; ``chromium`` and ``nodejs`` (Debian's, as installed) are added after the
build from the image itself."""
_SECURITY = f"deb http://deb.debian.org/debian-security {DEBIAN_SUITE}-security main"


def browser_tag(offline: bool) -> str:
    """The tag ``image build --browser`` gives when none is asked for."""
    return OFFLINE_BROWSER_TAG if offline else REGISTRY_BROWSER_TAG


def _npm_dir(name: str) -> str:
    return f"{PLAYWRIGHT_MCP_DIR}/node_modules/{name}"


def browser_dockerfile(base: str) -> str:
    """The Dockerfile of the browser layer over ``base`` (its context: ``npm/``, ``wheels/``).

    ``npm/<i>.tgz`` is ``NPM_PACKAGES``' i-th tarball; ``wheels/`` the reader's wheels.
    """
    unpack = " && ".join(
        f"mkdir -p {_npm_dir(name)} && tar -xzf /tmp/npm/{i}.tgz -C {_npm_dir(name)} "
        "--strip-components=1 --no-same-owner"
        for i, name in enumerate(NPM_PACKAGES)
    )
    labels = " ".join(f"{key}={json.dumps(value)}" for key, value in LABELS.items())
    return (
        "\n".join(
            [
                f"FROM {base}",
                # the security suite, unless the base already has it (python:3.11's does)
                "RUN (grep -rqs -- '-security' /etc/apt/sources.list /etc/apt/sources.list.d/ "
                f"|| echo '{_SECURITY}' > /etc/apt/sources.list.d/inspect-gaia-security.list) "
                "&& apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "
                f"--no-install-recommends {' '.join(APT_PACKAGES)} >/dev/null "
                "&& rm -rf /var/lib/apt/lists/*",
                "COPY npm/ /tmp/npm/",
                f"RUN {unpack} && rm -rf /tmp/npm && node {PLAYWRIGHT_MCP_CLI} --version",
                "COPY wheels/ /tmp/wheels/",
                "RUN python3 -m pip install --quiet --no-index --no-deps --no-compile "
                f"--target {READER_DIR} /tmp/wheels/*.whl && rm -rf /tmp/wheels "
                f"&& PYTHONPATH={READER_DIR} python3 -m mcp_server_fetch --help >/dev/null",
                f"LABEL {labels}",
                'CMD ["tail", "-f", "/dev/null"]',
            ]
        )
        + "\n"
    )


def build_browser(tag: str, offline: bool, log: Log) -> None:
    """Build ``tag``: the attachments image of the path (built first if missing) plus the browser.

    Raises:
        GaiaError: No npm on the host, or a step failed (the message has its output).
    """
    build_layer(
        tag,
        offline,
        log,
        what=f"the browser image's Playwright MCP {PLAYWRIGHT_MCP_VERSION} (and mcp-server-fetch "
        f"{MCP_SERVER_FETCH_VERSION})",
        npm={f"{i}.tgz": f"{n}@{v}" for i, (n, v) in enumerate(NPM_PACKAGES.items())},
        wheels=READER_WHEELS,
        dockerfile=browser_dockerfile,
    )
    _label_debian_versions(tag, log)


def _label_debian_versions(tag: str, log: Log) -> None:
    """Add the installed ``chromium`` and ``nodejs`` versions as labels (a second, cached build)."""
    out = subprocess.run(
        [
            *("docker", "run", "--rm", "--network", "none", "--entrypoint", "dpkg-query", tag),
            *("-W", "-f", "${Package}=${Version}\\n", "chromium", "nodejs"),
        ],
        capture_output=True,
        text=True,
    )
    if out.returncode != 0:
        raise GaiaError(f"reading the browser image's versions failed: {out.stderr.strip()}")
    versions = dict(line.split("=", 1) for line in out.stdout.split())
    labels = " ".join(
        f"{WEB_PREFIX}{package}={json.dumps(version)}" for package, version in versions.items()
    )
    build_dockerfile(
        tag,
        f"FROM {tag}\nLABEL {labels}\n",
        f"labels {labels}",
        log,
        offline="`inspect-gaia image build --offline --browser`",
    )
