"""``browser_download``'s work: a URL saved into the sandbox with the sandbox's own curl.

Playwright MCP has no download tool, and a PDF a click opens shows in Chromium's viewer, whose text
no snapshot holds. The file is fetched by curl in the sandbox, so it goes the sandbox's way out
(through the run's egress proxy when answer sources are blocked: a refusal comes back as the
proxy's own text), not with the browser's cookies: GAIA's files are public.
"""

from __future__ import annotations

import posixpath
import shlex

from inspect_ai.tool import ToolError
from inspect_ai.util import sandbox

DOWNLOAD_TIMEOUT = 120
"""Seconds ``browser_download`` may take."""
DOWNLOAD_DIR = "/downloads"
MAX_DOWNLOAD = "500M"
"""curl's ``--max-filesize``: a larger file is refused rather than filling the sandbox."""
MAX_BLOCKS = 500 * 2**20 // 512
"""The same bound as a file-size limit (``ulimit -f``, 512-byte blocks in dash): curl's option
holds only when the server says a length, and a body of unknown length would fill the disk."""
_TOO_LARGE = 128 + 25
"""The status of a process killed by SIGXFSZ (past ``ulimit -f``)."""


async def download(url: str, filename: str) -> str:
    """Fetch ``url`` with the sandbox's curl (and so its proxy) into ``DOWNLOAD_DIR``."""
    if not url.startswith(("http://", "https://")):
        raise ToolError(f"give an http:// or https:// URL to download (got {url!r})")
    name = posixpath.basename(filename or url.split("?", 1)[0].split("#", 1)[0].rstrip("/"))
    name = name if name not in ("", ".", "..") else "download"
    path = f"{DOWNLOAD_DIR}/{name}"
    result = await sandbox().exec(
        ["sh", "-c", download_script(url, path)], timeout=DOWNLOAD_TIMEOUT
    )
    if result.returncode == _TOO_LARGE:
        await sandbox().exec(["rm", "-f", path], timeout=30)
        raise ToolError(f"downloading {url} failed: it is larger than {MAX_DOWNLOAD}B")
    if not result.success:
        raise ToolError(f"downloading {url} failed: {result.stderr.strip()[-400:]}")
    status, kind, size = (result.stdout.split(" ") + ["", "", ""])[:3]
    if not status.startswith("2"):
        body = await sandbox().exec(["head", "-c", "600", path], timeout=30)
        raise ToolError(f"downloading {url} got HTTP {status}: {body.stdout.strip()}")
    return (
        f"Saved {url} ({kind or 'unknown type'}, {int(size or 0):,} bytes) to {path} — read it "
        "with bash (for a PDF: pdftotext " + shlex.quote(path) + " -)"
    )


def download_script(url: str, path: str, blocks: int = MAX_BLOCKS) -> str:
    """The shell command that saves ``url`` to ``path``: curl, under a file-size limit."""
    return (
        f"mkdir -p {shlex.quote(posixpath.dirname(path))} && (ulimit -f {blocks}; exec curl -sS -L "
        f"--max-time {DOWNLOAD_TIMEOUT - 10} --max-filesize {MAX_DOWNLOAD} -o {shlex.quote(path)} "
        f"-w '%{{http_code}} %{{content_type}} %{{size_download}}' {shlex.quote(url)})"
    )
