"""What the model reads of the browser (``web/pages.py``), without Docker: pure text shaping.

The answers below are written in Playwright MCP's own layout (``### Section`` Markdown), as
``test_docker_web.py`` sees them from the real server.
"""

from __future__ import annotations

import pytest

from inspect_gaia.web.pages import (
    EMPTY,
    MAX_SNAPSHOT_CHARS,
    PAGE_BYTES,
    PAGE_CHARS,
    Answer,
    SnapshotTooLarge,
    page_of,
    page_text,
)

ACTION = """Clicked the link.
### Ran Playwright code
```js
await page.getByRole('link', { name: 'Lagoon' }).click();
```
### Page
- Page URL: https://lagoon.example/birds
- Page Title: Birds of the lagoon
- Console: 2 errors, 0 warnings
### Snapshot
[Snapshot](.playwright-mcp/page-1.yml)
### Events
- [ERROR] Failed to load resource @ https://lagoon.example/x.js
- Downloaded file report.pdf to "downloads/report.pdf"
"""

SNAPSHOT = """### Page
- Page URL: https://lagoon.example/birds
### Snapshot
```yaml
- heading "Quillfeather" [ref=e2]
- link "Next" [ref=e3]
```
"""


def test_an_answer_is_split_into_its_sections() -> None:
    answer = Answer.parse(ACTION)
    assert answer.sections["Result"] == "Clicked the link."
    assert set(answer.sections) == {"Result", "Ran Playwright code", "Page", "Snapshot", "Events"}
    assert answer.url == "https://lagoon.example/birds"
    assert answer.snapshot is None and answer.snapshot_file == ".playwright-mcp/page-1.yml"
    inline = Answer.parse(SNAPSHOT)
    assert inline.snapshot == '- heading "Quillfeather" [ref=e2]\n- link "Next" [ref=e3]'
    assert "Result" not in inline.sections


def test_the_header_keeps_what_the_model_needs_and_drops_code_console_and_links() -> None:
    header = Answer.parse(ACTION).header("/downloads")
    assert "Clicked the link." in header and "Page Title: Birds of the lagoon" in header
    assert "getByRole" not in header and "Console:" not in header and "[Snapshot]" not in header
    assert "Failed to load resource" not in header, "console events are noise to a model"
    assert header.endswith(
        '### Downloads\n- Downloaded file report.pdf to "/downloads/report.pdf" (read it with bash)'
    )


def test_a_small_snapshot_is_one_page() -> None:
    text = page_text(Answer.parse(SNAPSHOT), Answer.parse(SNAPSHOT).snapshot or "", 0, None)
    assert text.startswith("### Page\n- Page URL: https://lagoon.example/birds\nSnapshot:\n")
    assert text.endswith('- link "Next" [ref=e3]')


def test_a_large_snapshot_is_paged_and_says_where_the_next_page_starts() -> None:
    snapshot = "".join(f'- text "line {n}"\n' for n in range(3 * PAGE_CHARS // 16))
    first, where = page_of(snapshot, 0)
    assert len(first) == PAGE_CHARS and snapshot.startswith(first)
    assert where.endswith(f"call browser_snapshot with start={PAGE_CHARS} for the next page:")
    pages, start = [first], PAGE_CHARS
    while start < len(snapshot):
        chunk, where = page_of(snapshot, start)
        pages.append(chunk)
        start += len(chunk)
    assert "".join(pages) == snapshot and where.endswith("(the last page):")
    assert page_of(snapshot, len(snapshot) + 5)[0] == ""


def test_a_page_of_non_latin_text_stays_under_the_byte_cap() -> None:
    chunk, _ = page_of("鳥" * (2 * PAGE_CHARS), 0)
    assert len(chunk.encode()) <= PAGE_BYTES < len(("鳥" * PAGE_CHARS).encode())


def test_a_huge_snapshot_is_refused_with_what_to_do_and_an_empty_one_says_why() -> None:
    with pytest.raises(SnapshotTooLarge, match="browser_download"):
        page_of("x" * (MAX_SNAPSHOT_CHARS + 1), 0)
    assert page_text(Answer.parse(SNAPSHOT), "  ", 0, None).endswith(EMPTY)
