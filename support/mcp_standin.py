"""A stdio MCP server for the relay's tests, built on the MCP SDK's own server.

``python -m support.mcp_standin``: ``echo`` answers its text, ``slow`` sleeps first, ``fail``
raises (an ``isError`` result), ``picture`` answers a 1-pixel PNG, ``crash`` ends the process
with status 7 after a line on stderr.
"""

from __future__ import annotations

import asyncio
import base64
import os
import sys

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.utilities.types import Image

PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg=="
)

server = MCPServer("standin")


@server.tool()
def echo(text: str) -> str:
    """Answer ``text``."""
    return text


@server.tool()
async def slow(text: str, seconds: float) -> str:
    """Answer ``text`` after ``seconds``."""
    await asyncio.sleep(seconds)
    return text


@server.tool()
def fail(why: str) -> str:
    """Raise ``why``."""
    raise ValueError(why)


@server.tool()
def picture() -> Image:
    """A 1-pixel PNG."""
    return Image(data=PIXEL, format="png")


@server.tool()
def crash() -> str:
    """End the server."""
    print("the stand-in crashes on purpose", file=sys.stderr, flush=True)
    os._exit(7)


if __name__ == "__main__":
    server.run("stdio")
