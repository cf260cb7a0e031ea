"""The egress proxy's image: mitmproxy from PyPI, with a registry (``docker build``) or without.

Without a registry it is built as the sandbox image is (``sandbox.debootstrap_image``): Debian
bookworm's Python and certificates, and mitmproxy's wheels pinned below, fetched by the host's pip
and installed without their dependencies. The pins are mitmproxy 11.0.2's requirements as pip
resolved them for CPython 3.11 on Linux; ``pyperclip`` 1.9.0, which mitmproxy pins, has no wheel
(pure Python: the host's pip builds one).
"""

from __future__ import annotations

from ..egress import MITMPROXY_VERSION
from .sandbox import DEBIAN_SUITE, Log, build_dockerfile, debootstrap_image

PACKAGES = ("python3", "python3-pip", "ca-certificates")
WHEELS = (
    f"mitmproxy=={MITMPROXY_VERSION}",
    "aioquic==1.2.0",
    "asgiref==3.8.1",
    "Brotli==1.1.0",
    "certifi==2026.10.19.post1",
    "cryptography==44.0.3",
    "Flask==3.1.0",
    "h11==0.14.0",
    "h2==4.1.0",
    "hyperframe==6.0.1",
    "kaitaistruct==0.10",
    "ldap3==2.9.1",
    "mitmproxy_rs==0.10.7",
    "msgpack==1.1.0",
    "passlib==1.7.4",
    "publicsuffix2==2.20191221",
    "pyOpenSSL==24.3.0",
    "pyparsing==3.2.0",
    "ruamel.yaml==0.18.6",
    "sortedcontainers==2.4.0",
    "tornado==6.4.2",
    "urwid==2.6.16",
    "wsproto==1.2.0",
    "zstandard==0.23.0",
    "blinker==1.9.0",
    "cffi==2.1.1",
    "click==8.5.1",
    "hpack==4.2.0",
    "itsdangerous==2.2.0",
    "Jinja2==3.1.6",
    "pyasn1==0.6.5",
    "pylsqpack==0.3.24",
    "ruamel.yaml.clib==0.2.15",
    "service-identity==24.2.0",
    "Werkzeug==3.1.9",
    "typing_extensions==4.16.0",
    "wcwidth==0.9.4",
    "attrs==26.1.0",
    "MarkupSafe==3.0.4",
    "pyasn1_modules==0.4.2",
    "pycparser==3.12",
)
PURE_SOURCES = ("pyperclip==1.9.0",)
# bookworm's glibc is 2.36; cryptography's wheel needs 2.34
PLATFORMS = ("manylinux_2_36", "manylinux_2_34", "manylinux_2_28", "manylinux2014")


def build_proxy_offline(tag: str, log: Log) -> None:
    """Build the proxy image from Debian packages and pinned wheels (needs root, debootstrap).

    Raises:
        GaiaError: A step failed (the message has its output).
    """
    log(f"egress proxy: mitmproxy {MITMPROXY_VERSION} on Debian {DEBIAN_SUITE}")
    debootstrap_image(
        tag,
        PACKAGES,
        WHEELS,
        log,
        command=["mitmdump"],
        platforms=PLATFORMS,
        pure_sources=PURE_SOURCES,
    )


def proxy_dockerfile() -> str:
    """The Dockerfile of the registry build."""
    return (
        "FROM python:3.11-slim\n"
        f"RUN pip install --no-cache-dir mitmproxy=={MITMPROXY_VERSION}\n"
        'CMD ["mitmdump"]\n'
    )


def build_proxy_from_registry(tag: str, log: Log) -> None:
    """Build the proxy image with ``docker build`` from ``python:3.11-slim``.

    Raises:
        GaiaError: The build failed (e.g. no registry: use ``--offline``).
    """
    build_dockerfile(
        tag,
        proxy_dockerfile(),
        f"mitmproxy {MITMPROXY_VERSION} on python:3.11-slim",
        log,
        offline="`inspect-gaia image build --egress-proxy --offline`",
    )
