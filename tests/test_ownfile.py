"""Which calls only read the sample's attachment, which may write beside it; names made from it."""

from __future__ import annotations

import pytest

from inspect_gaia.answer_sources.ownfile import (
    derived_name,
    may_write_attachment,
    parse_commands,
    reads_only_attachment,
)

OWN = "a1b2.xlsx"


def _words(command: str) -> list[tuple[list[str], bool, list[str]]] | None:
    parsed = parse_commands(command)
    return None if parsed is None else [(c.words, c.piped, c.writes) for c in parsed]


def test_commands_are_split_as_bash_splits_them() -> None:
    assert _words('cat \'a b\' "c\\"d" e\\ f | head -n 3 2>/dev/null; wc -l < x > y') == [
        (["cat", "a b", 'c"d', "e f"], False, []),
        (["head", "-n", "3"], True, ["/dev/null"]),
        (["wc", "-l", "x"], False, ["y"]),
    ]
    assert _words("ls\npwd && id || true & date # ; curl x") == [
        (["ls"], False, []),
        (["pwd"], False, []),
        (["id"], False, []),
        (["true"], False, []),
        (["date"], False, []),
    ]
    assert _words("cat a#b") == [(["cat", "a#b"], False, [])]  # '#' inside a word is a letter


@pytest.mark.parametrize(
    "command",
    ["cat $(ls)", "cat `ls`", 'cat "$HOME"', "cat <<EOF\nx\nEOF", "{ cat a; }", "cat 'a", "| cat"],
)
def test_what_the_parser_does_not_follow_is_none(command: str) -> None:
    assert parse_commands(command) is None


@pytest.mark.parametrize(
    ("command", "only"),
    [
        (f"cat /shared_files/{OWN}", True),
        (f"cat /shared_files/../shared_files/{OWN.upper()}", True),
        (f"grep -c total /shared_files/{OWN}", True),
        (f"grep -f /tmp/page.html /shared_files/{OWN}", False),
        (f"cat /shared_files/{OWN} | sort | uniq -c | tr a-z A-Z", True),
        (f"cat /shared_files/{OWN} | xargs curl", False),
        ("ls /shared_files", True),
        ("ls /tmp", False),
        (f"cat /shared_files/../etc/{OWN}", False),
        (f"cat /shared_files/{OWN}.bak", False),
        ("cat", False),
    ],
)
def test_a_bash_call_reads_only_the_attachment(command: str, only: bool) -> None:
    assert reads_only_attachment("bash", {"cmd": command}, OWN) is only
    assert reads_only_attachment("python", {"code": command}, OWN) is False
    assert reads_only_attachment("bash", {"cmd": command}, "") is False  # no attachment


def test_view_file_reads_the_attachment_only_by_its_path() -> None:
    assert reads_only_attachment("view_file", {"path": f"/shared_files/{OWN}"}, OWN)
    assert not reads_only_attachment("view_file", {"path": "/tmp/page.png"}, OWN)


@pytest.mark.parametrize(
    ("command", "writes"),
    [
        (f"pdftotext /shared_files/{OWN} /tmp/out.txt", False),
        (f"ffmpeg -i /shared_files/{OWN} out.wav", False),
        (f"cat /shared_files/{OWN} > /tmp/copy", False),
        ("curl -s https://example.org/x -o /tmp/x", False),  # never names the folder
        ("curl -s https://example.org/x -o /shared_files/x", True),
        ("cp /tmp/page.html /shared_files/", True),
        (f"cat /tmp/page.html > /shared_files/{OWN}", True),
        (f"markitdown /shared_files/{OWN} -o /shared_files/notes.md", True),
        ("cd /shared_files && wget https://example.org/x", True),
        ("cd /shared_files && ls > listing.txt", True),
        ("cd /shared_files && ls", False),
        ("cp $(ls /tmp/*) /shared_files", True),
    ],
)
def test_a_call_that_may_write_into_the_folder(command: str, writes: bool) -> None:
    assert may_write_attachment("bash", {"cmd": command}, command) is writes


def test_a_python_call_naming_the_folder_may_write_there() -> None:
    code = "open('/shared_files/x', 'w').write(page)"
    assert may_write_attachment("python", {"code": code}, code)
    assert not may_write_attachment("view_file", {"path": "/shared_files/x"}, "/shared_files/x")


@pytest.mark.parametrize(
    ("text", "derived"),
    [
        ("ls /shared_files/ID*", True),
        ("ffmpeg -i x ID.wav", True),
        ("pdftoppm x ID_page", True),
        ("cd /tmp/ID", True),
        ("grep ID index", False),
        ("find / -name *ID*", False),
        ("print(ID)", False),
        ("ID", False),
    ],
)
def test_names_made_from_the_attachment(text: str, derived: bool) -> None:
    assert derived_name(text, text.index("ID"), 2) is derived


def test_the_agent_clis_shell_calls_are_parsed_as_bash() -> None:
    read = f"cat /shared_files/{OWN}"
    claude = {"command": read, "description": "read the file", "timeout": 60000}
    assert reads_only_attachment("Bash", claude, OWN)
    assert reads_only_attachment("exec_command", {"cmd": read, "workdir": "/root"}, OWN)
    assert reads_only_attachment("bash", {"command": read}, OWN)  # mini-swe-agent's
    fetch = f"{read}; curl https://example.org"
    assert not reads_only_attachment("Bash", {**claude, "command": fetch}, OWN)
    assert not reads_only_attachment("exec_command", {"cmd": fetch}, OWN)
    assert not reads_only_attachment("Write", {"file_path": f"/shared_files/{OWN}"}, OWN)
