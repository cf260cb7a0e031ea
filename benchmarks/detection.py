"""How long the scorer's detection takes on one large tool result: ``answer_sources.detect``.

    python -m benchmarks.detection [--mib 1] [--repeats 3] [--out docs/benchmarks.md]

One sample's transcript of one ``bash`` call whose result is ``--mib`` MiB of text of a given
shape, scanned by ``contamination`` (the scorer's call) against the package's list, graded. The
shapes are a web page full of links with the question and its answer at the end, plain prose, and
texts crafted against the scan's own steps: the question's first words again and again, the
proxy's refusal again and again, unclosed HTML tags, zero-width characters, the task id in names
made from the attachment and bare; a call (not a result) of that size holding distinct URLs; and
a browser snapshot of that size read page by page (``PAGE_CHARS`` a page), the question cut by
the last page (the pages are read joined).
Each figure is the median of ``--repeats`` scans in this process, at ``--mib`` and at twice that
(the scan is linear when the second is about twice the first), with the flags found (the page's
read must be found in every shape). URLs nested in URLs and crafted globs are ``urlrules``' part
of the work (the egress proxy's matching), measured with it.

With ``--out``, the table replaces the "Detection" section of that Markdown file (appended if it
has none); ``benchmarks.run`` keeps the section when it rewrites docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageTool
from inspect_ai.solver import TaskState
from inspect_ai.tool import ToolCall

from benchmarks.report import machine, public_command
from inspect_gaia.answer_sources.detect import contamination
from inspect_gaia.answer_sources.sources import load_answer_sources
from inspect_gaia.egress.urlrules import REFUSAL
from inspect_gaia.questions.dataset import DEFAULT_INPUT_PROMPT
from inspect_gaia.web.pages import PAGE_CHARS, Answer, page_text

SECTION = "## Detection"
"""The heading of the section ``--out`` writes (up to the next ``## `` heading)."""
TASK_ID = "5f1d8c2a-0b7e-4c39-9d1a-3e6f2a8b7c40"
QUESTION = (
    "In the invented harbour town of Quellmouth, the ferry log for June 1907 counts the crossings "
    "of the steamer Alder each day. How many crossings did it make on the 9th?"
)
ANSWER = "23"
PAGE = f"<tr><td>{QUESTION}</td><td>Final answer: {ANSWER} crossings</td></tr>"
MIRROR = "https://huggingface.co/datasets/gaia-benchmark/GAIA/resolve/main/README.md"
REFUSED = (
    REFUSAL.format(
        url=MIRROR, source="GAIA on Hugging Face", rule="huggingface.co/datasets/gaia-benchmark"
    )
    + "\n"
)


SNAPSHOT = 2**19
"""Characters of one snapshot of the paged shape (``_paged``)."""


def _fill(unit: Callable[[int], str], size: int) -> str:
    parts, total, i = [], 0, 0
    while total < size:
        part = unit(i)
        parts.append(part)
        total += len(part)
        i += 1
    return "".join(parts)


RESULTS: dict[str, Callable[[int], str]] = {
    "web page, a link every 100 characters": lambda i: (
        f'<p>Entry {i} of the harbour archive, <a href="https://archive{i % 97}.example/'
        f'log/{i}?page={i}">scan</a>.</p>\n'
    ),
    "plain prose": lambda i: f"The ferry crossed the bay {i % 31} times that week, said the log. ",
    "the question's first words again and again": lambda i: QUESTION[:90] + f" {i % 10} ",
    "the proxy's refusal again and again": lambda i: REFUSED,
    "unclosed HTML tags": lambda i: "<" + "a" * 299,
    "zero-width characters": lambda i: "\u200b" * 64 + "x",
    "the task id, in file names and bare": lambda i: f"/tmp/{TASK_ID}.txt '{TASK_ID}' ",
}


def _transcript(command: str, output: str) -> TaskState:
    messages: list[ChatMessage] = [
        ChatMessageAssistant(
            content="", tool_calls=[ToolCall(id="c1", function="bash", arguments={"cmd": command})]
        ),
        ChatMessageTool(content=output, function="bash", tool_call_id="c1"),
    ]
    return TaskState(
        model="scripted/bench",  # type: ignore[arg-type]
        sample_id=TASK_ID,
        epoch=1,
        input=DEFAULT_INPUT_PROMPT.format(file="", question=QUESTION),
        messages=messages,
        metadata={"level": 1, "file_name": f"{TASK_ID}.pdf"},
    )


def _paged(size: int) -> TaskState:
    """Snapshots of ``size`` characters in all read page by page, the question cut by a page.

    Each snapshot is at most ``SNAPSHOT`` characters (the browser refuses one past
    ``MAX_SNAPSHOT_CHARS``); the last one ends with the question, its first 40 characters on the
    page before the one that holds the rest and its answer.
    """
    answer = Answer.parse("### Page\n- Page URL: https://ferries.example/log")
    messages: list[ChatMessage] = []
    count = max(1, round(size / SNAPSHOT))
    for k in range(count):
        filler = _fill(lambda i: f'- link "Crossing {i}" [ref=e{i}]\n', size // count)
        snapshot = filler[: (len(filler) // PAGE_CHARS) * PAGE_CHARS - 40]
        if k == count - 1:
            snapshot += f'- cell "{QUESTION}"\n- cell "Final answer: {ANSWER} crossings"\n'
        for start in range(0, len(snapshot), PAGE_CHARS):
            n = len(messages)
            call = ToolCall(id=f"p{n}", function="browser_snapshot", arguments={"start": start})
            messages += [
                ChatMessageAssistant(content="", tool_calls=[call]),
                ChatMessageTool(
                    content=page_text(answer, snapshot, start, None),
                    function="browser_snapshot",
                    tool_call_id=f"p{n}",
                ),
            ]
    state = _transcript("", "")
    state.messages = messages
    return state


def _cases(size: int) -> dict[str, TaskState]:
    cases = {
        f"result: {name}": _transcript("curl -s https://x.example/", _fill(unit, size) + PAGE)
        for name, unit in RESULTS.items()
    }
    urls = _fill(lambda i: f"https://h{i}.example/p ", size)
    cases["call: distinct URLs"] = _transcript(urls + " gaia-benchmark/GAIA", PAGE)
    cases["results: a snapshot read page by page, the question cut by a page"] = _paged(size)
    return cases


Row = tuple[str, float, float, str]
"""A shape, the median seconds at the size and at twice it, and the flags found."""


def measure(size: int, repeats: int) -> list[Row]:
    """Each shape at ``size`` characters and at twice that."""
    sources = load_answer_sources()
    seconds: dict[str, list[float]] = {}
    found: dict[str, str] = {}
    for length in (size, 2 * size):
        for name, state in _cases(length).items():
            times = []
            for _ in range(repeats):
                start = time.perf_counter()
                flags = contamination(state, ANSWER, sources)
                times.append(time.perf_counter() - start)
            kinds = sorted({f"{f['kind']} ({f['where']})" for f in flags})
            if "question_with_answer (result)" not in kinds:
                raise SystemExit(f"{name}: the page's read was not found ({kinds})")
            seconds.setdefault(name, []).append(statistics.median(times))
            found[name] = ", ".join(kinds)
    return [(name, one, two, found[name]) for name, (one, two) in seconds.items()]


def section(rows: list[Row], mib: float, argv: list[str]) -> list[str]:
    """The Markdown section of the figures."""
    size, double = f"{mib:g} MiB", f"{2 * mib:g} MiB"
    return [
        SECTION,
        "",
        f"Machine: {machine()}; {datetime.now():%Y-%m-%d %H:%M}. "
        f"Command: `{public_command(argv, 'benchmarks.detection')}`",
        "",
        f"The scorer's detection on one tool call whose result (or call) is {size} (and "
        f"{double}) of text of one shape, ending with a page that lists the question with its "
        "answer (found in every shape); seconds, median of the repeats, in one process. The "
        "scan is linear: twice the text takes about twice the time.",
        "",
        f"| text | {size} | {double} | flags |",
        "| --- | --- | --- | --- |",
        *(f"| {name} | {one:.2f} | {two:.2f} | {kinds} |" for name, one, two, kinds in rows),
        "",
    ]


def write_section(path: Path, lines: list[str]) -> None:
    """Replace the ``SECTION`` of the Markdown file at ``path`` (or append it)."""
    text = path.read_text() if path.exists() else ""
    old = text.splitlines()
    if SECTION in old:
        start = old.index(SECTION)
        end = next(
            (i for i in range(start + 1, len(old)) if old[i].startswith(("## ", "![", "<!--"))),
            len(old),
        )
        new = old[:start] + lines + old[end:]
    else:
        new = [*old, "", *lines] if old else lines
    path.write_text("\n".join(new).rstrip("\n") + "\n")


def main(argv: list[str] | None = None) -> None:
    """Measure, print the section, and write it into ``--out`` if given."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=float, default=1.0, help="size of each text, MiB")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", help="Markdown file whose Detection section to replace")
    args = parser.parse_args(argv)
    given = sys.argv[1:] if argv is None else argv
    lines = section(measure(int(args.mib * 2**20), args.repeats), args.mib, given)
    print("\n".join(lines))
    if args.out:
        write_section(Path(args.out), lines)


if __name__ == "__main__":
    main()
