"""What a call says to its program: a shell or Python call without its comments.

The echo rule (``detect``) spares the result of a call that carried the question (a search page
echoes its query). A comment is read by no program: ``curl mirror # <question>`` asked the mirror
for its page, not for the question, and its result is read like any other. So a shell call (the
``bash`` tool and the agent CLIs' shells, ``ownfile.shell_command``) and a ``python`` call are
read here without their comments, as bash and Python read them:

* bash: a ``#`` that starts a word, outside quotes, runs to the end of its line; a ``#`` inside a
  word (``…/#fragment``) or quotes is a character, and a here-document's lines are data, kept;
* Python: its own tokenizer's comments; code it cannot tokenize is read whole.

Every other tool's arguments are all its words (a search box has no comments). Linear in the text.
"""

from __future__ import annotations

import io
import tokenize
from collections.abc import Iterator, Mapping

from .ownfile import shell_command

_WORD_BREAK = frozenset(" \t\r\n;&|()<>")
"""Characters after which a ``#`` starts a comment in bash."""


def uncommented(function: str, arguments: Mapping[str, object]) -> str | None:
    """A shell or ``python`` call's command or code without its comments.

    ``None`` for any other call: its words are all its arguments (``words``).
    """
    command = shell_command(function, arguments)
    if command is not None:
        return shell_uncommented(command)
    code = arguments.get("code")
    if function == "python" and isinstance(code, str):
        return python_uncommented(code)
    return None


def words(arguments: Mapping[str, object]) -> str:
    """Every string inside a call's arguments (nested lists and mappings too), a line each."""
    return "\n".join(_strings(arguments))


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item)
    elif value is not None:
        yield str(value)


def shell_uncommented(command: str) -> str:
    """``command`` without bash's comments (each replaced by nothing up to its line's end)."""
    out: list[str] = []
    quote = ""
    heredocs: list[tuple[str, bool]] = []  # delimiters whose bodies start at the next line
    i, n = 0, len(command)
    while i < n:
        c = command[i]
        if quote:
            if c == "\\" and quote == '"' and i + 1 < n:
                out.append(command[i : i + 2])
                i += 2
                continue
            if c == quote:
                quote = ""
            out.append(c)
        elif c == "\\" and i + 1 < n:
            out.append(command[i : i + 2])
            i += 2
            continue
        elif c in "'\"":
            quote = c
            out.append(c)
        elif c == "#" and (i == 0 or command[i - 1] in _WORD_BREAK):
            end = command.find("\n", i)
            i = n if end < 0 else end
            continue
        elif command.startswith("<<", i) and not command.startswith("<<<", i):
            i, (text, delimiter, strip) = _heredoc_operator(command, i)
            out.append(text)
            if delimiter:
                heredocs.append((delimiter, strip))
            continue
        elif c == "\n" and heredocs:
            out.append(c)
            i = _copy_bodies(command, i + 1, heredocs, out)
            heredocs = []
            continue
        else:
            out.append(c)
        i += 1
    return "".join(out)


def _heredoc_operator(command: str, i: int) -> tuple[int, tuple[str, str, bool]]:
    """The ``<<[-]WORD`` at ``i``: where it ends, its text, its delimiter, whether tabs strip."""
    start = i
    i += 2
    strip = command.startswith("-", i)
    i += strip
    while i < len(command) and command[i] in " \t":
        i += 1
    word_start = i
    while i < len(command) and command[i] not in _WORD_BREAK:
        i += 1
    delimiter = command[word_start:i].replace("'", "").replace('"', "").replace("\\", "")
    return i, (command[start:i], delimiter, strip)


def _copy_bodies(command: str, i: int, heredocs: list[tuple[str, bool]], out: list[str]) -> int:
    """Copy the bodies of ``heredocs`` from ``i`` (a line's start), as data; where they end."""
    for delimiter, strip in heredocs:
        while i < len(command):
            end = command.find("\n", i)
            line_end = len(command) if end < 0 else end + 1
            line = command[i:line_end]
            out.append(line)
            i = line_end
            if (line.lstrip("\t") if strip else line).rstrip("\n") == delimiter:
                break
    return i


def python_uncommented(code: str) -> str:
    """``code`` without its comments, as Python's tokenizer finds them; unchanged if it cannot."""
    lines = code.splitlines(keepends=True)
    cuts: list[tuple[int, int]] = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            if token.type == tokenize.COMMENT:
                cuts.append(token.start)
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return code
    for row, column in cuts:
        line = lines[row - 1]
        lines[row - 1] = line[:column] + ("\n" if line.endswith("\n") else "")
    return "".join(lines)
