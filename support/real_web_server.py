"""The stand-in web's server, run in its container by ``support.real_web`` (never on the host).

Hypercorn (an ASGI server from PyPI) speaks HTTP/2 and HTTP/1.1 over TLS 1.3, chosen by ALPN, on
port 443, and plain HTTP/1.1 on port 80 (no ``h2c`` upgrade: the web's servers do not offer it).
Every host name it is called by gets the same site: the pages of ``support/real_web_pages.py``,
listed in ``support.real_web``'s docstring. Each request is logged as a JSON line (host, target,
method, HTTP version, scheme, client), each TLS handshake as one too (``{"tls": sni}``);
hypercorn's own lines (``Running on http://0.0.0.0:80`` once it listens on both ports, errors) go
to stderr.

    python3 -m support.real_web_server CONFIG_JSON

``CONFIG_JSON``: ``{"cert": path, "key": path, "main": host, "elsewhere": host, "listed": url}``.
Its imports are the standard library, hypercorn and brotli only: the container's Python (bookworm's
3.11) gets those from wheels the host downloaded (``support.real_web.site_packages``).
"""

from __future__ import annotations

import asyncio
import json
import ssl
import sys
from typing import Any, cast

from hypercorn.asyncio import serve
from hypercorn.config import Config
from hypercorn.protocol.h11 import H11Protocol
from hypercorn.typing import ASGIFramework

from support.real_web_http import CONFIG, Receive, Reply, Request, Scope, Send, log
from support.real_web_pages import PREFIXES, ROUTES


async def app(scope: Scope, receive: Receive, send: Send) -> None:
    """The site: every host the same, each behaviour at its path (``support.real_web``)."""
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    if scope["type"] != "http":
        return
    request = Request(scope)
    client = scope.get("client") or ("", 0)
    log(
        {
            "host": request.host,
            "path": request.target,
            "method": request.method,
            "http": scope["http_version"],
            "scheme": request.scheme,
            "client": client[0],
        }
    )
    reply = Reply(send, request)
    handler = ROUTES.get(request.path)
    if handler is None:
        handler = next((h for prefix, h in PREFIXES if request.path.startswith(prefix)), None)
    if handler is None:
        await reply.whole(404, "text/plain", b"not found\n")
        return
    await handler(request, receive, reply)


class TLS13Config(Config):
    """Hypercorn's TLS, at 1.3 only, logging each handshake's server name (SNI)."""

    def create_ssl_context(self) -> ssl.SSLContext | None:
        """Hypercorn's context, TLS 1.3 only, with the handshake log."""
        context = super().create_ssl_context()
        if context is not None:
            context.minimum_version = ssl.TLSVersion.TLSv1_3

            def sni(_: Any, name: str | None, __: ssl.SSLContext) -> None:
                log({"tls": name or ""})

            context.sni_callback = sni
        return context


async def _no_upgrade(self: H11Protocol, event: Any) -> None:
    """Plain HTTP stays HTTP/1.1: no ``Upgrade: h2c``, no prior-knowledge HTTP/2 (port 80)."""


def main() -> None:
    """Serve until stopped."""
    CONFIG.update(json.loads(sys.argv[1]))
    setattr(H11Protocol, "_check_protocol", _no_upgrade)  # noqa: B010 (a method replaced)
    config = TLS13Config()
    config.bind = ["0.0.0.0:443"]
    config.insecure_bind = ["0.0.0.0:80"]
    config.certfile, config.keyfile = CONFIG["cert"], CONFIG["key"]
    config.alpn_protocols = ["h2", "http/1.1"]
    config.accesslog = None
    config.errorlog = "-"
    asyncio.run(serve(cast(ASGIFramework, app), config, mode="asgi"))


if __name__ == "__main__":
    main()
