"""``-T browser=true``: a headless Chromium in the sample's sandbox, driven through Playwright MCP.

The tools are a deliberate subset of Playwright MCP's 23, under its own names so transcripts read
as other harnesses' do: ``browser_navigate``, ``browser_navigate_back``, ``browser_snapshot``,
``browser_click``, ``browser_type`` (with ``submit``), ``browser_select_option``,
``browser_press_key``, ``browser_wait_for``, ``browser_take_screenshot`` (an image for the model),
plus ``browser_download`` (ours: Playwright MCP has none) that saves a URL, by default the page's,
into the sandbox for bash and python. Left out: code evaluation (``browser_evaluate``,
``browser_run_code_unsafe``: arbitrary JavaScript, and Node.js in the server), file upload, tabs,
dialogs, drag, hover, resize, console and network logs (noise or no use for answering questions).
Every action answers with the page as text (``pages``): the model never has to ask for it.

Each start of the browser (its first call in a sample, or after a crash) gets a fresh directory in
the sandbox: a new Chromium profile, an NSS database (Chromium on Linux trusts certificates only
from there, never from the system bundle) holding the run's egress CA when the run blocks answer
sources, and the browser's output (downloads). Chromium then goes through the run's proxy
(``launchOptions.proxy``), with QUIC off and WebRTC kept from any UDP that the proxy does not
carry; the sandbox's network has no other way out anyway (``sandboxes/docker/egress.py``).
Playwright MCP's
timeouts bound each navigation (``NAVIGATION_TIMEOUT``) and action; ``CALL_TIMEOUT`` bounds every
call from outside, and a browser that passes it is stopped and started afresh on the next call.
"""

from __future__ import annotations

import json
import posixpath
from typing import Any

from inspect_ai.model import ContentImage, ContentText
from inspect_ai.tool import Tool, ToolError, ToolResult, tool
from inspect_ai.util import sandbox

from ..image_layout import CA_FILE, CHROMIUM, PLAYWRIGHT_MCP_CLI
from . import BROWSER_TOOLS
from .download import download
from .pages import Answer, SnapshotTooLarge, page_text
from .session import Launch, SandboxServer

TOOLS = tuple(name for name in BROWSER_TOOLS if name != "browser_download")
"""The Playwright MCP tools the harness calls (``browser_download`` is ours, with curl): the relay
in the sandbox refuses the others (the agent can reach the relay's socket from bash:
docs/web-access.md says what that does not stop)."""
NAVIGATION_TIMEOUT = 30
"""Seconds a navigation may take before Playwright gives up on it (its default is 60)."""
ACTION_TIMEOUT = 10
"""Seconds a click, type or select may wait for its element."""
CALL_TIMEOUT = NAVIGATION_TIMEOUT + 30
"""Seconds any one browser call may take, however it is stuck."""
CHROMIUM_ARGS = (
    # Docker gives /dev/shm 64 MB, which a large page exhausts (Chromium then crashes its tab)
    "--disable-dev-shm-usage",
    "--disable-gpu",
    # nothing around the proxy: no QUIC (UDP), no WebRTC UDP that is not proxied, no prefetch
    "--disable-quic",
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--dns-prefetch-disable",
    # no traffic of Chromium's own (updates, sync, field trials) beside the agent's
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--no-default-browser-check",
)
_PREPARE = f"""set -eu
if [ ! -x {CHROMIUM} ] || [ ! -f {PLAYWRIGHT_MCP_CLI} ]; then echo missing; exit 3; fi
dir=$(mktemp -d /tmp/gaia-browser.XXXXXX)
mkdir -p "$dir/home/.pki/nssdb" "$dir/profile" "$dir/output"
if [ -s {CA_FILE} ]; then
  certutil -d "sql:$dir/home/.pki/nssdb" -N --empty-password
  certutil -d "sql:$dir/home/.pki/nssdb" -A -t C,, -n inspect-gaia-egress -i {CA_FILE}
fi
printf '%s\\n%s\\n' "$dir" "${{HTTPS_PROXY:-${{https_proxy:-}}}}"
"""
MISSING = (
    "this sandbox image has no browser — run with `-T image=inspect-gaia/sandbox:bookworm-browser`"
    " after `inspect-gaia image build --offline --browser`"
)


def browser_config(directory: str, proxy: str | None) -> dict[str, Any]:
    """Playwright MCP's configuration for one start of the browser in ``directory``."""
    launch: dict[str, Any] = {
        "executablePath": CHROMIUM,
        "headless": True,
        "chromiumSandbox": False,
        "args": list(CHROMIUM_ARGS),
    }
    if proxy:
        launch["proxy"] = {"server": proxy, "bypass": "localhost,127.0.0.1"}
    return {
        "browser": {
            "browserName": "chromium",
            "userDataDir": f"{directory}/profile",
            "launchOptions": launch,
        },
        "outputDir": f"{directory}/output",
        "imageResponses": "allow",
        # each action saves the page's snapshot to a file, which the tools read (pages.py)
        "snapshot": {"mode": "full"},
        "codegen": "none",
        "console": {"level": "error"},
        "timeouts": {"navigation": NAVIGATION_TIMEOUT * 1000, "action": ACTION_TIMEOUT * 1000},
    }


class Browser:
    """The browser of each sample: its server, and where its files go."""

    def __init__(self) -> None:
        """One ``SandboxServer`` for every sample; each sample's own state lives there."""
        self.server = SandboxServer("the browser", self._launch, timeout=CALL_TIMEOUT)

    async def _launch(self) -> Launch:
        result = await sandbox().exec(["sh", "-c", _PREPARE], timeout=60)
        if result.returncode == 3:
            raise RuntimeError(MISSING)
        if not result.success:
            raise RuntimeError(f"preparing it failed: {result.stderr.strip()[-400:]}")
        directory, proxy = (result.stdout.splitlines() + ["", ""])[:2]
        self.server.memo().update(directory=directory, output=f"{directory}/output")
        self.server.memo().pop("url", None)  # a fresh browser shows no page yet
        await sandbox().write_file(
            f"{directory}/config.json", json.dumps(browser_config(directory, proxy or None))
        )
        return Launch(
            command="node",
            args=(PLAYWRIGHT_MCP_CLI, "--config", f"{directory}/config.json"),
            env={"HOME": f"{directory}/home"},
            cwd=directory,
            tools=TOOLS,
        )

    async def act(self, tool_name: str, arguments: dict[str, Any], start: int = 0) -> str:
        """Run one Playwright MCP tool, then return the page as the model reads it.

        An action's answer links the file its snapshot went to: reading that file (one file copy)
        costs far less than asking for the snapshot again (one more MCP round trip).
        """
        try:
            answer = Answer.parse(_text(await self.server.call(tool_name, arguments)))
        except ToolError as ex:  # Playwright MCP's errors come as its own "### Error" section
            raise ToolError(str(ex).removeprefix("### Error").strip()) from ex
        if answer.url:
            self.server.memo()["url"] = answer.url
        yaml = answer.snapshot
        if yaml is None and answer.snapshot_file is not None:
            yaml = await self._read(answer.snapshot_file)
        if yaml is None and "Error" not in answer.sections:
            yaml = Answer.parse(_text(await self.server.call("browser_snapshot", {}))).snapshot
        if yaml is None:
            raise ToolError(answer.header() or f"{tool_name} gave no answer")
        try:
            text = page_text(answer, yaml, start, self.server.memo().get("output"))
        except SnapshotTooLarge as ex:
            raise ToolError(str(ex)) from ex
        note = self.server.note()
        return f"{note}\n{text}" if note else text

    async def _read(self, path: str) -> str | None:
        """A file the server wrote, by its path relative to the server's directory."""
        directory = self.server.memo().get("directory", "")
        try:
            text = await sandbox().read_file(posixpath.join(directory, path))
        except (FileNotFoundError, UnicodeDecodeError):
            return None
        return str(text)

    async def current_url(self) -> str | None:
        """The URL of the page shown now, or ``None`` before any navigation.

        The last action's answer named it (``act`` keeps it): no snapshot is taken, which for a
        page too large to read would be too large to answer too.
        """
        if self.server.memo().get("url"):
            return self.server.memo()["url"]
        snapshot = Answer.parse(_text(await self.server.call("browser_snapshot", {})))
        return snapshot.url


def _text(content: Any) -> str:
    """The text of an MCP result as inspect converted it (images are handled by their tool)."""
    if isinstance(content, str):
        return content
    return "\n".join(item.text for item in content if isinstance(item, ContentText))


_BROWSER = Browser()


@tool
def browser_navigate() -> Tool:
    """Open a URL and read the page."""

    async def execute(url: str) -> str:
        """Open a URL in the browser and read the page.

        The answer is the page's accessibility snapshot as text, whose [ref=…] handles the
        click, type and select tools take.

        Args:
            url: The URL to open (http:// or https://).
        """
        return await _BROWSER.act("browser_navigate", {"url": url})

    return execute


@tool
def browser_navigate_back() -> Tool:
    """Go back a page."""

    async def execute() -> str:
        """Go back to the previous page and read it."""
        return await _BROWSER.act("browser_navigate_back", {})

    return execute


@tool
def browser_snapshot() -> Tool:
    """Read the current page again."""

    async def execute(start: int = 0) -> str:
        """Read the current page again (its accessibility snapshot), from character ``start``.

        Args:
            start: Where to start reading a long snapshot (an answer names the next start).
        """
        if start < 0:
            raise ToolError("start must be 0 or more")
        return await _BROWSER.act("browser_snapshot", {}, start=start)

    return execute


@tool
def browser_click() -> Tool:
    """Click an element."""

    async def execute(ref: str, element: str = "") -> str:
        """Click an element of the page (a link, a button, a checkbox) and read the result.

        Args:
            ref: The element's ref from the snapshot, such as e12 (from [ref=e12]).
            element: What the element is, in words (for the transcript).
        """
        return await _BROWSER.act("browser_click", _target(ref, element))

    return execute


@tool
def browser_type() -> Tool:
    """Type into a field."""

    async def execute(ref: str, text: str, submit: bool = False, element: str = "") -> str:
        """Type text into a field of the page (replacing what it holds) and read the result.

        Args:
            ref: The field's ref from the snapshot, such as e7.
            text: The text to type.
            submit: Press Enter afterwards (to submit a search form, say).
            element: What the field is, in words (for the transcript).
        """
        arguments = {**_target(ref, element), "text": text, "submit": submit}
        return await _BROWSER.act("browser_type", arguments)

    return execute


@tool
def browser_select_option() -> Tool:
    """Choose options of a drop-down list."""

    async def execute(ref: str, values: list[str], element: str = "") -> str:
        """Choose one or more options of a drop-down list and read the result.

        Args:
            ref: The list's ref from the snapshot.
            values: The options to choose (their text or value).
            element: What the list is, in words (for the transcript).
        """
        return await _BROWSER.act(
            "browser_select_option", {**_target(ref, element), "values": values}
        )

    return execute


@tool
def browser_press_key() -> Tool:
    """Press a key."""

    async def execute(key: str) -> str:
        """Press a key on the page (Enter, Escape, PageDown, ArrowDown, a letter) and read it.

        Args:
            key: The key's name, such as Enter or PageDown, or a character.
        """
        return await _BROWSER.act("browser_press_key", {"key": key})

    return execute


@tool
def browser_wait_for() -> Tool:
    """Wait for text or time."""

    async def execute(
        text: str | None = None, text_gone: str | None = None, seconds: float | None = None
    ) -> str:
        """Wait for text to appear or disappear on the page, or for some seconds, then read it.

        Args:
            text: Text to wait for.
            text_gone: Text to wait to disappear.
            seconds: Seconds to wait (at most 20).
        """
        arguments: dict[str, Any] = {}
        if text:
            arguments["text"] = text
        if text_gone:
            arguments["textGone"] = text_gone
        if seconds is not None:
            arguments["time"] = max(0.0, min(float(seconds), 20.0))
        if not arguments:
            raise ToolError("give text, text_gone or seconds")
        return await _BROWSER.act("browser_wait_for", arguments)

    return execute


@tool
def browser_take_screenshot() -> Tool:
    """See the page as an image."""

    async def execute(full_page: bool = False) -> ToolResult:
        """See the page as an image (for charts, maps, pictures and layout the snapshot lacks).

        Args:
            full_page: The whole page rather than the visible part.
        """
        content = await _BROWSER.server.call(
            "browser_take_screenshot", {"type": "png", "fullPage": full_page}
        )
        images = [item for item in content if isinstance(item, ContentImage)]
        if not images:
            raise ToolError(f"no screenshot came back: {_text(content)[:400]}")
        url = (Answer.parse(_text(content)).url) or ""
        result: list[ContentText | ContentImage] = [
            ContentText(text=f"Screenshot of {url}".strip())
        ]
        return [*result, *images]

    return execute


@tool
def browser_download() -> Tool:
    """Save a file from the web into the sandbox."""

    async def execute(url: str = "", filename: str = "") -> str:
        """Save a file from the web into the sandbox, to read with bash or python.

        For a PDF, a spreadsheet or any file the page links to, or the page itself.

        Args:
            url: The file's URL; empty for the page the browser shows.
            filename: The name to save it as in /downloads (default: from the URL).
        """
        return await download(url or await _BROWSER.current_url() or "", filename)

    return execute


def _target(ref: str, element: str) -> dict[str, str]:
    return {"target": ref, **({"element": element} if element else {})}


def browser_tools() -> list[Tool]:
    """The browser's tools, in the order the agent gets them."""
    return [
        browser_navigate(),
        browser_navigate_back(),
        browser_snapshot(),
        browser_click(),
        browser_type(),
        browser_select_option(),
        browser_press_key(),
        browser_wait_for(),
        browser_take_screenshot(),
        browser_download(),
    ]
