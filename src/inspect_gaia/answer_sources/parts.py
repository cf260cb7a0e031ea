"""A tool result as the detection reads it: its text, the media it cannot read, its pages.

``detect`` reads a result's text (its error too). Two things a text scan alone would miss:

* images and other media in a result (a browser screenshot): there is no OCR here, so they are
  counted in an ``unscanned`` flag (``unscanned``), and the text sent with them is read;
* a long page cut into pages by the tool itself: the browser pages a snapshot at
  ``web.pages.PAGE_CHARS`` characters (``browser_snapshot(start=…)``) and the page reader by
  ``start_index``, so a question and its answer can land on two pages. ``Pages`` keeps the last
  result of such a tool and gives the two pages joined, without the later one's header, for the
  scan to read again.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from inspect_ai.model import ChatMessageTool

from ..web import BROWSER_TOOLS, READER_TOOLS
from ..web.pages import WHERE

MEDIA = frozenset({"image", "audio", "video", "document"})
"""Parts of a tool's result the scan cannot read as text."""
PAGED = {**dict.fromkeys(BROWSER_TOOLS, "browser"), **dict.fromkeys(READER_TOOLS, "reader")}
"""Tools whose results are pages of one longer text, by family (one browser, one reader)."""
_READER_HEAD = "Contents of "
"""How mcp-server-fetch starts each answer (``Contents of <url>:``, then the page)."""
_READER_CUT = "<error>Content truncated."
"""How it ends a page that goes on (``… Call the fetch tool with a start_index of N …``)."""


def result_text(message: ChatMessageTool) -> str:
    """A result's text and its error (the reader's refused page, a browser's error)."""
    error = message.error.message if message.error else ""
    return "\n".join(filter(None, [message.text, error]))


def continues(function: str, arguments: dict[str, Any]) -> bool:
    """Whether a call asks for a later page of what the one before read.

    ``browser_snapshot(start=N)`` and ``fetch(start_index=N)`` with ``N > 0``.
    """
    name = {"browser_snapshot": "start", "fetch": "start_index"}.get(function)
    start = arguments.get(name) if name else None
    if isinstance(start, str) and start.strip().isdigit():  # a model may send it as a string
        start = int(start)
    return isinstance(start, int) and start > 0


def unscanned(message: ChatMessageTool, index: int) -> list[dict[str, Any]]:
    """The ``unscanned`` flag of a result that holds images or other media (none: ``[]``)."""
    if isinstance(message.content, str):
        return []
    parts = Counter(part.type for part in message.content if part.type in MEDIA)
    if not parts:
        return []
    where = {"tool": message.function or "?", "message": index, "where": "result"}
    images = parts.pop("image", 0)
    return [{"kind": "unscanned", **where, "images": images, "other": sum(parts.values())}]


@dataclass
class Pages:
    """The last result of a paged tool, to be read again with the next one of its family."""

    last: tuple[str, str] | None = None
    """Its family and text; ``None`` after any other result or a flagged one."""

    def joined(self, tool: str, text: str, fresh: bool, more: bool) -> list[str]:
        """The last page and this one joined (at the cut with and without a space), or ``[]``.

        ``fresh``: this result may be joined (not flagged on its own, not an echo of its call's
        question); it is kept for the next one only then. ``more``: its call asked for a later
        page (``continues``); only then is it joined with the last. Each text is joined at most
        twice.
        """
        last, self.last = self.last, None
        family = PAGED.get(tool)
        if family is None or not fresh:
            return []
        self.last = (family, text)
        if last is None or last[0] != family or not more:
            return []
        earlier, later = _tail(family, last[1]), _body(family, text)
        return [earlier + later, f"{earlier} {later}"]


def _body(family: str, text: str) -> str:
    """A later page without the header the tool put before it."""
    mark = f"\n{WHERE}" if family == "browser" else _READER_HEAD
    at = text.find(mark)
    if at < 0:
        return text
    end = text.find("\n", at + 1)
    return "" if end < 0 else text[end + 1 :]


def _tail(family: str, text: str) -> str:
    """An earlier page without what the tool put after it (the reader's note that it goes on)."""
    at = text.rfind(_READER_CUT) if family == "reader" else -1
    return text if at < 0 else text[:at].rstrip("\n")
