"""What a sandbox MCP server's answer becomes for the model (the Docker tests run the servers)."""

from __future__ import annotations

import pytest
from inspect_ai.model import ContentImage, ContentText
from inspect_ai.tool import ToolError

from inspect_gaia.web.session import _content, _Gone, _result


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


MALFORMED = [
    ("", _Gone, "its answer was not JSON"),
    ('{"result": {"content": [{"type": "text", "te', _Gone, "not JSON"),  # cut by the exec
    ("[1, 2]", _Gone, "a JSON list, not an object"),
    ("7", _Gone, "a JSON int"),
    ('{"error": "plain words"}', ToolError, "plain words"),
    ('{"error": {"message": ["x"]}}', ToolError, "['x']"),
    ('{"result": [1]}', _Gone, "its result was a JSON list"),
    ('{"relay_error": 5}', _Gone, "5"),
]


@pytest.mark.parametrize(("stdout", "kind", "said"), MALFORMED)
def test_a_relay_answer_of_any_shape_is_a_tool_error_or_the_session_s_end(
    stdout: str, kind: type[Exception], said: str
) -> None:
    # any other exception (JSONDecodeError, AttributeError, TypeError) ended the sample
    with pytest.raises(kind) as caught:
        _result(stdout)
    assert said in str(caught.value)


def test_content_of_any_shape_reads_as_text() -> None:
    assert _result('{"result": {}}') == {} and _result("{}") == {}
    content = _content(["a string", 5, {"type": "resource", "resource": "not a dict"}])
    texts = [c.text for c in content if isinstance(c, ContentText)]
    assert texts == ["(str content omitted)", "(int content omitted)", "(resource content omitted)"]
    assert [c.text for c in _content("plain") if isinstance(c, ContentText)] == [
        "(str content omitted)"
    ]
