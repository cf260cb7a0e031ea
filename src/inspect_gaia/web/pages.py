"""What the model reads from the browser: Playwright MCP's answers, shaped into one page of text.

Playwright MCP answers an action (navigate, click, type...) with Markdown sections: the Playwright
code it ran, the page's URL and title, a *link to a file* holding the page's snapshot, console
events, open tabs, a dialog waiting, downloads. A model cannot open that link, and the code and
console lines are noise to it. So the browser tools ask for the snapshot itself after each action
and hand the model the page: its URL and title, what needs its attention (a dialog, tabs,
downloads, an error), then the snapshot (the accessibility tree as YAML, whose ``[ref=…]`` handles
the click, type and select tools take).

A snapshot is paged: inspect cuts any tool output past 16 KiB, and a cut page would lose its end
silently, so each answer holds at most ``PAGE_CHARS`` characters of it and says where the next
page starts (``browser_snapshot(start=…)``). A snapshot past ``MAX_SNAPSHOT_CHARS`` is refused
with what to do instead. Pure functions: tests feed them Playwright MCP's own answers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

PAGE_CHARS = 12_000
"""Characters of a snapshot per answer: with the page's header, under inspect's 16 KiB cut."""
PAGE_BYTES = 14_500
"""The same page's most bytes (a snapshot of non-Latin text takes 2-3 bytes a character)."""
WHERE = "Snapshot, characters "
"""How the line before a page of a snapshot that has more than one starts (``page_of``)."""
MAX_SNAPSHOT_CHARS = 2_000_000
"""A snapshot larger than this is refused (over 160 pages to read)."""

_KEPT = ("Error", "Result", "Page", "Open tabs", "Modal state", "Events")
_SECTION = re.compile(r"^### (.+)$", re.MULTILINE)
_URL = re.compile(r"^- Page URL: (\S+)", re.MULTILINE)
_YAML = re.compile(r"```yaml\n(.*?)\n?```", re.DOTALL)
_FILE = re.compile(r"\[Snapshot\]\(([^)]+)\)")


@dataclass
class Answer:
    """A Playwright MCP answer, by section (``Page``, ``Error``, ``Snapshot``...)."""

    sections: dict[str, str] = field(default_factory=dict)

    @classmethod
    def parse(cls, text: str) -> Answer:
        """Split ``### Name`` sections; text before the first is kept as ``Result``."""
        sections: dict[str, str] = {}
        marks = list(_SECTION.finditer(text))
        head = text[: marks[0].start()] if marks else text
        if head.strip():
            sections["Result"] = head.strip()
        for mark, following in zip(marks, [*marks[1:], None], strict=True):
            end = following.start() if following else len(text)
            sections[mark.group(1).strip()] = text[mark.end() : end].strip()
        return cls(sections)

    @property
    def url(self) -> str | None:
        """The page's URL, when the answer names it."""
        match = _URL.search(self.sections.get("Page", ""))
        return match.group(1) if match else None

    @property
    def snapshot(self) -> str | None:
        """The snapshot's YAML, when it is inline (``browser_snapshot``'s answer)."""
        match = _YAML.search(self.sections.get("Snapshot", ""))
        return match.group(1) if match else None

    @property
    def snapshot_file(self) -> str | None:
        """The file an action's answer saved the page's snapshot to (relative to the server)."""
        match = _FILE.search(self.sections.get("Snapshot", ""))
        return match.group(1) if match else None

    def header(self, output_dir: str | None = None) -> str:
        """The sections the model needs, without code, console lines or file links."""
        lines: list[str] = []
        for name in _KEPT:
            body = self.sections.get(name)
            if not body:
                continue
            if name == "Page":
                body = "\n".join(
                    line for line in body.splitlines() if not line.startswith("- Console:")
                )
            if name == "Events":
                body = "\n".join(
                    _absolute(line, output_dir)
                    for line in body.splitlines()
                    if line.startswith("- Download")
                )
                name = "Downloads"
            if body.strip():
                lines += [f"### {name}", body.strip()]
        return "\n".join(lines)


def _absolute(line: str, output_dir: str | None) -> str:
    """A download line with the file's path made absolute (Playwright MCP gives it relative)."""
    match = re.search(r'to "([^"]+)"$', line)
    if match is None or output_dir is None or match.group(1).startswith("/"):
        return line
    name = match.group(1).split("/", 1)[-1] if "/" in match.group(1) else match.group(1)
    return line[: match.start()] + f'to "{output_dir}/{name}" (read it with bash)'


class SnapshotTooLarge(ValueError):
    """A snapshot past ``MAX_SNAPSHOT_CHARS``."""


def page_of(snapshot: str, start: int) -> tuple[str, str]:
    """The page of ``snapshot`` from ``start``, and the line that says where it sits.

    Raises:
        SnapshotTooLarge: The snapshot is past ``MAX_SNAPSHOT_CHARS``.
    """
    total = len(snapshot)
    if total > MAX_SNAPSHOT_CHARS:
        raise SnapshotTooLarge(
            f"this page's snapshot is {total:,} characters, too many to read page by page — "
            "save the page into the sandbox with browser_download and search it with bash "
            "(grep, python), or navigate to a smaller page"
        )
    if start >= total and total:
        return "", f"The snapshot has {total:,} characters: start={start} is past its end."
    chunk = snapshot[start : start + PAGE_CHARS]
    while len(chunk.encode()) > PAGE_BYTES:
        chunk = chunk[: int(len(chunk) * 0.9)]
    end = start + len(chunk)
    if start == 0 and end >= total:
        return chunk, "Snapshot:"
    rest = (
        f"; call browser_snapshot with start={end} for the next page"
        if end < total
        else " (the last page)"
    )
    return chunk, f"{WHERE}{start:,}–{end:,} of {total:,}{rest}:"


EMPTY = (
    "(The page has no text for a snapshot: an image, a PDF in the viewer, or a page still "
    "loading. browser_download saves it into the sandbox for bash; browser_take_screenshot "
    "shows it; browser_wait_for waits for text.)"
)


def page_text(answer: Answer, yaml: str, start: int, output_dir: str | None) -> str:
    """The text the model gets: the answer's header, then a page of the snapshot ``yaml``.

    Raises:
        SnapshotTooLarge: The snapshot is past ``MAX_SNAPSHOT_CHARS``.
    """
    header = answer.header(output_dir)
    if not yaml.strip():
        return f"{header}\n{EMPTY}".strip()
    chunk, where = page_of(yaml, start)
    return f"{header}\n{where}\n{chunk}".strip()
