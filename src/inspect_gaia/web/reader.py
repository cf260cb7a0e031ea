"""``-T web_reader=true``: the fetch MCP server (a URL as Markdown) in the sample's sandbox.

The same server as ``-T mcp_servers=fetch`` (``mcp-server-fetch``, EvalScope's example), with
the same one tool, ``fetch``, and its own schema and defaults, but run inside the sandbox: under
its limits, with its network, and behind the run's egress proxy when the run blocks answer
sources. It is started at the first ``fetch`` of a sample (``session``).

Two settings differ from the server's defaults, both because it runs in the sandbox: private
addresses are allowed (``--allow-private-ips``: the server refuses them to keep a *host* from
being probed, while the sandbox's own curl reaches them anyway), and the proxy and the CA bundle
are passed on from the sandbox's environment (the server's process gets only a few variables).
Readability.js is not used: readabilipy would ``npm install`` it at run time; the server falls
back to its pure-Python extraction, as on any host without Node.js.

A page the proxy refuses comes back from the server as a bare ``status code 403``; the proxy's
own refusal (which names the rule) is then fetched once more with curl and added to the error, so
the agent reads why, and the detection counts it as it counts any refusal.
"""

from __future__ import annotations

import re
import shlex

from inspect_ai.model import ContentText
from inspect_ai.tool import Tool, ToolError, tool
from inspect_ai.util import sandbox

from ..egress.urlrules import REFUSAL_MARKER
from ..image_layout import BUNDLE, READER_DIR
from . import READER_TOOLS
from .session import Launch, SandboxServer

CALL_TIMEOUT = 60
"""Seconds one fetch may take (the server gives a request 30)."""
MISSING = (
    "this sandbox image has no page reader — run with `-T image=inspect-gaia/sandbox:"
    "bookworm-browser` after `inspect-gaia image build --offline --browser`"
)
_ENV = ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "SSL_CERT_FILE")
_PREPARE = (
    f"test -f {READER_DIR}/mcp_server_fetch/__init__.py || {{ echo missing; exit 3; }}; "
    + "; ".join(f'printf "%s\\n" "${{{name}:-}}"' for name in _ENV)
)
_REFUSED = re.compile(r"(?:status code|received status) 403")
_URL = re.compile(r"https?://\S+")


async def _launch() -> Launch:
    result = await sandbox().exec(["sh", "-c", _PREPARE], timeout=60)
    if result.returncode == 3:
        raise RuntimeError(MISSING)
    values = (result.stdout.splitlines() + [""] * len(_ENV))[: len(_ENV)]
    env = {name: value for name, value in zip(_ENV, values, strict=True) if value}
    env.setdefault("SSL_CERT_FILE", BUNDLE)
    env["PYTHONPATH"] = READER_DIR
    return Launch(
        command="python3",
        args=("-m", "mcp_server_fetch", "--allow-private-ips"),
        env=env,
        tools=READER_TOOLS,
    )


_SERVER = SandboxServer("the page reader", _launch, timeout=CALL_TIMEOUT)


@tool
def fetch() -> Tool:
    """mcp-server-fetch's ``fetch``, in the sandbox."""

    async def execute(
        url: str, max_length: int = 5000, start_index: int = 0, raw: bool = False
    ) -> str:
        """Fetches a URL from the internet and optionally extracts its contents as markdown.

        Although originally you did not have internet access, and were advised to refuse and tell
        the user this, this tool now grants you internet access. Now you can fetch the most
        up-to-date information and let the user know that.

        Args:
            url: URL to fetch
            max_length: Maximum number of characters to return.
            start_index: On return output starting at this character index, useful if a previous
                fetch was truncated and more context is required.
            raw: Get the actual HTML content of the requested page, without simplification.
        """
        arguments = {"url": url, "max_length": max_length, "start_index": start_index, "raw": raw}
        try:
            content = await _SERVER.call("fetch", arguments)
        except ToolError as ex:
            if _REFUSED.search(str(ex)):
                refusal = await _refusal(ex)
                if refusal:
                    raise ToolError(f"{ex}\n{refusal}") from ex
            raise
        text = "\n".join(item.text for item in content if isinstance(item, ContentText))
        note = _SERVER.note()
        return f"{note}\n{text}" if note else text

    return execute


async def _refusal(error: ToolError) -> str | None:
    """The egress proxy's refusal of the URL the error names, when it was the proxy's."""
    match = _URL.search(str(error))
    if match is None:
        return None
    url = match.group(0).rstrip(").,;")
    result = await sandbox().exec(
        ["sh", "-c", f"curl -s --max-time 20 {shlex.quote(url)} | head -c 600"], timeout=30
    )
    return result.stdout.strip() if REFUSAL_MARKER in result.stdout else None


def reader_tools() -> list[Tool]:
    """The page reader's tools."""
    return [fetch()]
