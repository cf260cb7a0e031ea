"""What a sandbox MCP server's answer becomes for the model (the Docker tests run the servers)."""

from __future__ import annotations

from inspect_ai.model import ContentImage, ContentText

from inspect_gaia.web.session import _content


def test_mcp_content_reads_as_inspect_reads_it() -> None:
    content = _content(
        [
            {"type": "text", "text": '### Page\n- heading "Wrenfold"'},
            {"type": "image", "data": "iVBORw0K", "mimeType": "image/jpeg"},
            {"type": "resource_link", "uri": "file:///tmp/a.pdf", "description": "the download"},
            {"type": "resource", "resource": {"uri": "file:///x", "text": "embedded text"}},
            {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"},
        ]
    )
    assert content[0] == ContentText(text='### Page\n- heading "Wrenfold"')
    assert isinstance(content[1], ContentImage)
    assert content[1].image == "data:image/jpeg;base64,iVBORw0K"
    assert [c.text for c in content[2:] if isinstance(c, ContentText)] == [
        "the download (file:///tmp/a.pdf)",
        "embedded text",
        "(audio content omitted)",
    ]
