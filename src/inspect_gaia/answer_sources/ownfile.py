"""The sample's own attachment in its transcript: calls that only read it, names made from it.

The detection (``detect``) must not accuse a sample of reading a page when it read its own file,
and must not let a call hide a page behind a mention of that file. So a call's output is left
unread only when *every* command of the call reads nothing but the attachment, decided per command
by parsing the call the way bash would (``reads_only_attachment``):

* ``view_file`` of ``/shared_files/<its file>``;
* a ``bash`` call whose every pipeline starts with a reader (``cat``, ``head``, ``pdftotext``,
  ``markitdown``, …) of ``/shared_files/<its file>`` (or its bare name, or the folder itself), and
  whose later stages are filters of their input (``head``, ``grep``, ``wc``, …), joined by ``;``,
  ``&&``, ``||``, ``|`` or newlines.

Anything else is read: a program outside those lists (``python3``, ``curl``, ``awk``, whose
scripts can fetch), an operand outside the attachment (a glob too: the agent may have put other
files in the folder), and whatever this small parser does not follow: ``$`` and backquote
substitutions, here-documents, brace groups, a word that starts a comment. Reading too much costs
little (an attachment rarely holds its own question with the answer, or a listed URL); skipping too
much would hide a read. For the same reason a call that may have written into ``/shared_files``
(``may_write_attachment``: a redirection there, ``cp``, ``curl -o``, a script naming it) ends the
skipping for the rest of the sample: the file read back may be a page.

A name made from the attachment (``/tmp/<task id>.txt`` from ``pdftotext``, ``<task id>.wav``
from ``ffmpeg``, ``ls /shared_files/<task id>*``) names no dataset: ``derived_name`` tells such a
mention of the task id from a bare one (``grep <task id> metadata.jsonl``).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from ..questions.dataset import SHARED_FILES_DIR

READERS = frozenset(
    {
        "cat", "head", "tail", "less", "more", "nl", "wc", "file", "stat", "ls", "strings",
        "xxd", "od", "hexdump", "md5sum", "sha1sum", "sha256sum", "base64", "uniq", "cut",
        "column", "pdftotext", "pdfinfo", "markitdown", "exiftool", "ffprobe", "mediainfo",
        "identify", "zipinfo", "grep", "egrep", "fgrep", "jq",
    }
)  # fmt: skip
"""Programs whose output is what the files they are given hold (or a listing of them)."""
FILTERS = READERS | {"tr", "fold", "fmt", "tac", "rev", "sort"}
"""Programs that, later in a pipeline, only transform what comes in."""
CONVERTERS = frozenset(
    {"pdftotext", "pdftoppm", "pdfimages", "pdftohtml", "markitdown", "ffmpeg", "tesseract"}
)
"""Programs that read their first operand and may write the others (not into the folder)."""
_PATTERN_FIRST = frozenset({"grep", "egrep", "fgrep", "jq"})
"""Programs whose first operand is a pattern or filter, not a file (unless ``-e``/``-f``)."""
_ANY_OPERANDS = frozenset({"tr"})
"""Programs whose operands are never files."""
_BIN_DIRS = ("", "/bin", "/usr/bin", "/usr/local/bin")
_FOLDER = SHARED_FILES_DIR.strip("/")


@dataclass
class Command:
    """One simple command of a bash command line."""

    words: list[str] = field(default_factory=list)
    """Its program and arguments; an input redirection's file (``< file``) is an argument."""
    piped: bool = False
    """Whether it reads the output of the command before it."""
    writes: list[str] = field(default_factory=list)
    """Files its output redirections write (``> out.txt``; ``2>/dev/null`` too)."""


def reads_only_attachment(function: str, arguments: Mapping[str, object], own_file: str) -> bool:
    """Whether a tool call reads the sample's own attachment and nothing else.

    Args:
        function: The tool's name.
        arguments: The call's arguments.
        own_file: The attachment's file name, lower-cased (``""`` when the sample has none).
    """
    if function == "view_file":
        path = arguments.get("path")
        return isinstance(path, str) and _own_path(path, own_file)
    command = shell_command(function, arguments)
    if command is None:
        return False
    commands = parse_commands(command)
    if not commands:
        return False
    return all(_reads_own(c, own_file) for c in commands) and any(
        _own_path(word, own_file) for c in commands for word in c.words[1:]
    )


def may_write_attachment(function: str, arguments: Mapping[str, object], text: str) -> bool:
    """Whether a tool call may have written into ``/shared_files`` (``text``: its arguments).

    A call that never names the folder cannot; a ``bash`` call whose commands only read there
    (a reader, or a converter reading its first operand and writing elsewhere) does not; any
    other call naming it may.
    """
    if _FOLDER not in text or function == "view_file":
        return False
    command = shell_command(function, arguments)
    commands = None if command is None else parse_commands(command)
    if commands is None:
        return True
    inside = False  # after `cd /shared_files`, a relative name is in the folder
    for c in commands:
        program = posixpath.basename(c.words[0])
        if any(_FOLDER in w or inside for w in c.writes):
            return True
        if program == "cd":
            inside = any(_FOLDER in w for w in c.words[1:])
        elif program in CONVERTERS:
            outputs = _operands(program, c.words[1:])[1:]
            if any(_FOLDER in w or (inside and not w.startswith("/")) for w in outputs):
                return True
        elif program not in READERS and (inside or any(_FOLDER in w for w in c.words)):
            return True
    return False


AGENT_SHELLS = {"Bash": "command", "exec_command": "cmd"}
"""The shell tools of ``-T agent=``'s CLIs and their command argument: Claude Code's ``Bash`` and
Codex's ``exec_command`` (mini-swe-agent's is ``bash`` with ``command``, as inspect's). Their other
arguments (a description, a timeout, a working directory) change nothing a command reads from an
absolute path."""


def shell_command(function: str, arguments: Mapping[str, object]) -> str | None:
    """The command line of a ``bash`` call (or an agent CLI's shell call); ``None`` for any other.

    inspect names the bash tool's one argument ``command`` (``cmd`` in older versions).
    """
    if function in AGENT_SHELLS:
        command = arguments.get(AGENT_SHELLS[function])
    elif function != "bash" or len(arguments) != 1:
        return None
    else:
        command = arguments.get("command", arguments.get("cmd"))
    return command if isinstance(command, str) else None


def derived_name(text: str, at: int, length: int) -> bool:
    """Whether the task id at ``text[at:at + length]`` is part of a file name or a path.

    It is when a ``/`` comes right before it (a path: ``/tmp/<id>.txt``,
    ``/shared_files/<id>*``) or a file-name character right after it (``.``, ``_``, ``-``:
    ``<id>.wav``, ``<id>_1.png``). A bare id (``'<id>'``, ``grep <id> metadata.jsonl``) is not,
    nor a pattern (``grep '<id>*'``), nor a search for any name that holds it (``*<id>*``); a
    pattern operand of a search program is never a name (``pattern_operands``).
    """
    before = text[at - 1] if at > 0 else ""
    after = text[at + length] if at + length < len(text) else ""
    return before == "/" or (before != "*" and after != "" and after in "._-")


SEARCHERS = frozenset({"grep", "egrep", "fgrep", "rg", "jq", "awk", "gawk", "mawk", "sed"})
"""Programs whose first operand (or ``-e``'s) is a pattern, a filter or a script, not a file."""


def pattern_operands(function: str, arguments: Mapping[str, object]) -> list[str]:
    """The patterns (or scripts) a ``bash`` call gives a search program.

    ``grep '<id>*'``, ``awk '/<id>/'``, ``sed -n '/<id>/p'``: they name no file, whatever they
    look like.
    """
    command = shell_command(function, arguments)
    commands = None if command is None else parse_commands(command)
    found: list[str] = []
    for c in commands or []:
        if posixpath.basename(c.words[0]) not in SEARCHERS:
            continue
        args = c.words[1:]
        given = [value for flag, value in zip(args, args[1:], strict=False) if flag == "-e"]
        found += given + [a.split("=", 1)[1] for a in args if a.startswith("--regexp=")]
        if not given and not _pattern_given(args):
            found += _operands(c.words[0], args)[:1]
    return found


def _reads_own(command: Command, own_file: str) -> bool:
    words = command.words
    folder, program = posixpath.split(words[0])
    if words[0] == "cd":  # into the attachment's folder, to name it by its bare name
        return not command.piped and len(words) == 2 and _own_path(words[1], own_file)
    if folder not in _BIN_DIRS or program not in (FILTERS if command.piped else READERS):
        return False
    operands = _operands(program, words[1:])
    if program in _ANY_OPERANDS:
        return command.piped
    if program in _PATTERN_FIRST and not _pattern_given(words[1:]):
        if not operands:
            return False
        operands = operands[1:]
    if not command.piped and not operands:
        return False  # no file: the working directory (ls) or whatever stdin holds
    return all(op == "-" or op.lstrip("+").isdigit() or _own_path(op, own_file) for op in operands)


def _operands(program: str, args: Sequence[str]) -> list[str]:
    """The arguments that are not options (``-`` alone is one: standard input or output)."""
    return [a for a in args if not a.startswith("-") or a == "-"]


def _pattern_given(args: Sequence[str]) -> bool:
    """Whether grep's patterns (or jq's filter) come from an option, not the first operand."""
    return any(
        a in ("-e", "-f") or a.startswith(("--regexp", "--file", "--from-file")) for a in args
    )


def _own_path(word: str, own_file: str) -> bool:
    """The attachment itself (by path, or by bare name), or its folder (a listing).

    A glob (``/shared_files/*``) is not: the agent may have put other files there.
    """
    if not own_file or any(c in word for c in "*?["):
        return False
    if word.lower() == own_file:
        return True
    path = posixpath.normpath(word) if word.startswith("/") else ""
    return path == SHARED_FILES_DIR or path.lower() == f"{SHARED_FILES_DIR}/{own_file}"


# -- a small parser for the plain part of bash -----------------------------------------------------

_OPERATORS = (
    "&&",
    "||",
    "|&",
    ";;",
    ">>",
    ">|",
    "&>",
    ">&",
    "<&",
    "|",
    "&",
    ";",
    "(",
    ")",
    "<",
    ">",
)
_SEPARATORS = frozenset({"&&", "||", ";;", "&", ";", "(", ")", "\n"})
_REDIRECTS = frozenset({">>", ">|", "&>", ">&", "<&", "<", ">"})
"""Operators whose next word is a file (``<&``, ``>&``: or a descriptor)."""
_PIPES = frozenset({"|", "|&"})


_PLAIN = re.compile(r"[^ \t\r\n'\"\\|&;()<>$`{}]+")
"""Characters that are a word's own, whatever comes next (``#`` too, inside a word)."""


class _Unsupported(Exception):
    """Shell syntax the parser does not follow: the call is read as if it fetched."""


def parse_commands(command: str) -> list[Command] | None:
    """The simple commands of a bash command line; ``None`` when it uses more than plain words."""
    try:
        tokens = list(_tokens(command))
    except _Unsupported:
        return None
    commands: list[Command] = []
    current = Command()
    redirect: str | None = None
    for kind, value in tokens:
        if redirect is not None:
            if kind != "word":
                return None
            (current.words if redirect in ("<", "<&") else current.writes).append(value)
            redirect = None
        elif kind == "word":
            current.words.append(value)
        elif value in _REDIRECTS:
            redirect = value
        elif value in _PIPES or value in _SEPARATORS:
            if not current.words:
                if value in _PIPES or current.writes:
                    return None  # a pipe from nothing, or a bare redirection
            else:
                commands.append(current)
            current = Command(piped=value in _PIPES)
        else:  # pragma: no cover - every operator is one of the above
            return None
    if redirect is not None or (current.writes and not current.words):
        return None
    if current.words:
        commands.append(current)
    return commands


def _tokens(text: str) -> Iterator[tuple[str, str]]:
    """``("word", text)`` and ``("op", operator)`` tokens, quotes removed, comments dropped."""
    i, n = 0, len(text)
    word: list[str] | None = None
    while i < n:
        c = text[i]
        if c in " \t\r":
            if word is not None:
                yield "word", "".join(word)
                word = None
            i += 1
        elif c == "\n" or (c == "#" and word is None):
            if word is not None:
                yield "word", "".join(word)
                word = None
            if c == "#":
                i = text.find("\n", i)
                if i < 0:
                    return
            yield "op", "\n"
            i += 1
        elif c in "$`{}" or text.startswith("<<", i):
            raise _Unsupported(c)
        elif c == "'":
            end = text.find("'", i + 1)
            if end < 0:
                raise _Unsupported(c)
            word = _extend(word, text[i + 1 : end])
            i = end + 1
        elif c == '"':
            i, quoted = _double_quoted(text, i + 1)
            word = _extend(word, quoted)
        elif c == "\\":
            if i + 1 < n and text[i + 1] != "\n":
                word = _extend(word, text[i + 1])
            i += 2
        elif c in "|&;()<>":
            operator = next(op for op in _OPERATORS if text.startswith(op, i))
            if word is not None and c in "<>" and "".join(word).isdigit():
                word = None  # a file descriptor: 2>/dev/null
            if word is not None:
                yield "word", "".join(word)
                word = None
            yield "op", operator
            i += len(operator)
        else:
            plain = _PLAIN.match(text, i)
            assert plain is not None  # every other character has a branch above
            word = _extend(word, plain.group())
            i = plain.end()
    if word is not None:
        yield "word", "".join(word)


def _extend(word: list[str] | None, part: str) -> list[str]:
    if word is None:
        return [part]
    word.append(part)
    return word


def _double_quoted(text: str, i: int) -> tuple[int, str]:
    """The end of a ``"…"`` word starting at ``i`` (after the quote) and its text."""
    out: list[str] = []
    while i < len(text):
        c = text[i]
        if c == '"':
            return i + 1, "".join(out)
        if c in "$`":
            raise _Unsupported(c)
        if c == "\\" and i + 1 < len(text) and text[i + 1] in '"\\$`\n':
            if text[i + 1] != "\n":
                out.append(text[i + 1])
            i += 2
            continue
        out.append(c)
        i += 1
    raise _Unsupported('"')
