"""A tool result's parts as the detection reads them: text, unscanned media, pages joined."""

from __future__ import annotations

from typing import Any

from inspect_ai.model import ChatMessageTool, ContentAudio, ContentImage, ContentText
from inspect_ai.tool import ToolCallError

from inspect_gaia.answer_sources.parts import Pages, continues, result_text, unscanned
from inspect_gaia.web.pages import PAGE_CHARS, Answer, page_text

PIXELS = "data:image/png;base64,iVBORw0KGgo="


def test_a_results_text_holds_its_error() -> None:
    message = ChatMessageTool(
        content="partial", function="fetch", error=ToolCallError("unknown", "403 refused")
    )
    assert result_text(message) == "partial\n403 refused"


def test_media_are_counted_text_is_not() -> None:
    content: list[Any] = [
        ContentText(text="Screenshot of https://notes.example/"),
        ContentImage(image=PIXELS),
        ContentImage(image=PIXELS),
        ContentAudio(audio="data:audio/wav;base64,UklGRg==", format="wav"),
    ]
    message = ChatMessageTool(content=content, function="browser_take_screenshot")
    assert unscanned(message, 4) == [
        {
            "kind": "unscanned",
            "tool": "browser_take_screenshot",
            "message": 4,
            "where": "result",
            "images": 2,
            "other": 1,
        }
    ]
    assert unscanned(ChatMessageTool(content="text only", function="bash"), 1) == []
    text_parts = ChatMessageTool(content=[ContentText(text="a")], function="bash")
    assert unscanned(text_parts, 1) == []


def test_browser_pages_are_joined_at_the_cut_without_the_later_header() -> None:
    snapshot = "a" * (PAGE_CHARS - 3) + "bcdef"
    answer = Answer.parse("### Page\n- Page URL: https://notes.example/")
    first, second = (page_text(answer, snapshot, start, None) for start in (0, PAGE_CHARS))
    pages = Pages()
    assert pages.joined("browser_navigate", first, fresh=True, more=False) == []
    joined = pages.joined("browser_snapshot", second, fresh=True, more=True)
    assert joined[0].endswith("a" * 10 + "bcdef") and "Page URL" not in joined[0][-20:]
    assert joined[1].endswith("bcd ef")  # the cut may have been a space page_text stripped


def test_only_fresh_consecutive_pages_of_one_family_are_joined() -> None:
    pages = Pages()
    pages.joined("fetch", "Contents of https://a.example/:\none", fresh=True, more=False)
    assert pages.joined("browser_snapshot", "two", fresh=True, more=True) == []  # another family
    pages.joined("bash", "three", fresh=True, more=False)  # another tool between: nothing kept
    assert pages.joined("browser_snapshot", "four", fresh=True, more=True) == []
    assert pages.joined("browser_snapshot", "five", fresh=False, more=True) == []  # flagged
    assert pages.joined("browser_snapshot", "six", fresh=True, more=True) == []  # nothing kept
    assert pages.joined("browser_click", "seven", fresh=True, more=False) == []  # a new page
    assert len(pages.joined("browser_snapshot", "eight", fresh=True, more=True)) == 2


def test_a_call_for_a_later_page_continues() -> None:
    assert continues("browser_snapshot", {"start": 12000})
    assert continues("fetch", {"url": "https://a.example/", "start_index": "5000"})
    assert not continues("browser_snapshot", {"start": 0})
    assert not continues("browser_snapshot", {})
    assert not continues("browser_navigate", {"url": "https://a.example/", "start": 5})


def test_reader_pages_lose_their_truncation_note_and_their_heading() -> None:
    note = "\n\n<error>Content truncated. Call the fetch tool with a start_index of 9.</error>"
    pages = Pages()
    pages.joined("fetch", f"Contents of https://a.example/:\nfirst par{note}", True, False)
    joined = pages.joined("fetch", "Contents of https://a.example/:\nt of it", True, True)
    assert joined == ["Contents of https://a.example/:\nfirst part of it", joined[1]]
