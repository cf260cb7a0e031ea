"""Text from logs made safe to print: a model name or an answer is shown, never obeyed.

A log holds what a model wrote (its answers) and what a stranger wrote (any field of a file
someone sent). Printed raw, an escape sequence in it retitles the terminal, clears the screen or
plants a hyperlink (OSC 8); in Markdown, a newline ends the table row and starts a heading, an
image (a tracking pixel) or raw HTML. So every cell, title and note the commands render passes
through one of these:

* ``printable`` (terminal, CSV, stderr): each control character (C0 but newline and tab, DEL,
  C1) and each bidirectional override is written as its escape, ``\\x1b``, ``\\u202e``; the text
  stays readable and shows that something was there. ``one_line`` escapes newlines and tabs too.
* ``markdown_cell`` (a table cell): ``printable``, then ``\\``, ``|``, ``<``, ``>`` and ``&``
  escaped, the ``](`` of a link and the ``![`` of an image, and a bare URL's ``://`` and ``www.``
  broken by a zero-width space (GitHub links them by themselves), newlines as ``<br>``: no cell can
  end its row, link, embed or mark up (a label such as ``gpt-4o [max_attempts=2]`` reads as is).
* ``csv_cell``: ``printable``, and a cell a spreadsheet would run as a formula (it starts with
  ``=``, ``+``, ``-``, ``@``, a tab or a carriage return, and is not a number) led by ``'``.
* ``markdown_text`` (a title or a note): the same on each line, and a line cannot start a block
  (a heading, a list, a rule, a fence; ``>`` and ``|`` are escaped anyway).
* ``json_text``: JSON already escapes C0; C1 and overrides are escaped as ``\\uXXXX`` too.
"""

from __future__ import annotations

import re

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_CONTROL_ANY = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_MARKDOWN = {"\\": "\\\\", "|": "\\|", "<": "&lt;", ">": "&gt;", "&": "&amp;"}
_MARKDOWN_CHARS = re.compile(r"[\\|<>&]")
_BLOCK_START = re.compile(r"^(\s*)([#=+*`~-])")
_AUTOLINK = re.compile(r"://|(?i:www)\.")
"""What GitHub's Markdown links by itself (``https://…``, ``www.…``): broken after one character."""
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(\d[\d,]*)?\.?\d+(e[+-]?\d+)?%?")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str, *, one_line: bool = False) -> str:
    """``text`` with its control characters written as escapes (newlines kept, unless one line)."""
    return (_CONTROL_ANY if one_line else _CONTROL).sub(_escape, text)


def _inline(line: str) -> str:
    """One line with nothing Markdown would turn into HTML, a link or an image (``[x]`` stays)."""
    line = _MARKDOWN_CHARS.sub(lambda m: _MARKDOWN[m.group()], line)
    line = _AUTOLINK.sub(lambda m: f"{m.group()[0]}\u200b{m.group()[1:]}", line)
    return line.replace("](", "\\](").replace("![", "!\\[")


def csv_cell(text: str) -> str:
    """``text`` as a CSV cell no spreadsheet runs: ``printable``, and ``'`` before a formula."""
    text = printable(text)
    if len(text) > 1 and text[0] in _FORMULA_START and _NUMBER.fullmatch(text) is None:
        return "'" + text
    return text


def markdown_cell(text: str) -> str:
    """``text`` as one Markdown table cell: no markup, link, HTML or row break of its own."""
    lines = printable(text).replace("\r\n", "\n").split("\n")
    return "<br>".join(_inline(line) for line in lines)


def markdown_text(text: str, *, one_line: bool = False) -> str:
    """``text`` as Markdown prose (a title, a note): each line escaped, none starting a block."""
    if one_line:
        text = " ".join(text.split("\n"))
    lines = printable(text).split("\n")
    return "\n".join(_BLOCK_START.sub(r"\1\\\2", _inline(line)) for line in lines)


def json_text(document: str) -> str:
    """A JSON document with the C1 controls and overrides in its strings written as ``\\uXXXX``."""
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", document)
