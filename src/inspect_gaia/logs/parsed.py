"""What a sample costs to parse, counted before inspect parses it: its JSON values per field.

The byte caps (``files``, ``budget``) bound what a log unpacks to, but not what inspect builds of
it: every message of a sample becomes a pydantic object of about a kilobyte, so a sample of tiny
messages costs some 25 times its JSON (a 6.2 MB log of 2.4 million messages took ``report`` to
3 GB; ``MAX_SAMPLE``'s 256 MiB of them would take about 6 GB). So while ``files`` decompresses a
sample's part for its check, the part's JSON is also tokenized (``ijson``, inspect's own
dependency, its C backend) and its values (objects, arrays, strings, numbers, each an object once
parsed) are counted under each of the sample's fields (``count_values``). Before the sample is
read (``plan``), the fields the reader parses may hold ``MAX_VALUES`` values in all:

* over it with its ``messages`` (the transcript: only its trace is read from them), the sample is
  read without them, and one line says so: its score, answer and usage count as any other's;
* over it without them, the log is refused in one line, as a log over a byte cap is.

``MAX_VALUES`` is far above a real sample (a hundred messages of an agent are some thousands of
values; an agent CLI's transcript some tens of thousands) and keeps a sample's parse within the
documented memory of a command (docs/benchmarks.md, "Many small messages").
"""

from __future__ import annotations

import io
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import ijson

MAX_VALUES = 1_000_000
"""JSON values of the fields a reader parses, per sample (about 330,000 tiny messages: 520 MB)."""
TRANSCRIPT = "messages"
"""The field left unread when a sample is over ``MAX_VALUES`` with it: the reader takes only the
trace from it."""
_VALUES = frozenset({"start_map", "start_array", "string", "number", "boolean", "null"})
_ENDS = frozenset({"end_map", "end_array"})


def count_values(chunks: Iterator[bytes]) -> dict[str, int]:
    """The JSON values under each top-level field of the JSON object in ``chunks``.

    All of ``chunks`` is consumed, whatever the JSON holds (the caller counts its bytes as they
    come); JSON that does not parse is counted up to where it stops (inspect then says what is
    wrong with it).
    """
    stream = _Chunks(chunks)
    counts: dict[str, int] = {}
    depth, field = 0, ""
    try:
        for event, value in ijson.basic_parse(stream):
            if event in _VALUES:
                if depth:
                    counts[field] = counts.get(field, 0) + 1
                if event in ("start_map", "start_array"):
                    depth += 1
            elif event in _ENDS:
                depth -= 1
            elif event == "map_key" and depth == 1:
                field = str(value)
    except ijson.JSONError:
        pass
    for _ in chunks:  # the rest, counted by the caller as it is pulled
        pass
    return counts


@dataclass(frozen=True)
class Plan:
    """How one sample is read: the fields left out besides the reader's own, and why."""

    without: frozenset[str] = frozenset()
    note: str = ""
    """One line when the sample is read without its transcript."""
    refused: str = ""
    """Why the sample cannot be read at all (the log is refused)."""


def plan(part: str, values: Mapping[str, int], excluded: set[str]) -> Plan:
    """How to read the sample in ``part`` whose fields hold ``values``, ``excluded`` left out."""
    parsed = sum(count for field, count in values.items() if field not in excluded)
    if parsed <= MAX_VALUES:
        return Plan()
    sample = _sample(part)
    rest = parsed - values.get(TRANSCRIPT, 0)
    if rest <= MAX_VALUES and TRANSCRIPT not in excluded:
        return Plan(
            without=frozenset({TRANSCRIPT}),
            note=f"sample {sample} holds {values.get(TRANSCRIPT, 0):,} values in its messages, "
            f"more than the {MAX_VALUES:,} a reader parses of a sample: read without its "
            "transcript (its score counts; its trace is not shown)",
        )
    return Plan(
        refused=f"sample {sample} holds {parsed:,} JSON values, more than the {MAX_VALUES:,} a "
        "reader parses of a sample"
    )


def _sample(part: str) -> str:
    """``samples/<id>_epoch_<n>.json`` as a reader names the sample: ``<id> (epoch <n>)``."""
    id, _, epoch = part.removeprefix("samples/").removesuffix(".json").rpartition("_epoch_")
    return f"{id} (epoch {epoch})" if id else part


class _Chunks(io.RawIOBase):
    """An iterator of byte chunks as a readable stream (for ijson)."""

    def __init__(self, chunks: Iterator[bytes]) -> None:
        self.chunks, self.pending, self.at = chunks, memoryview(b""), 0

    def readable(self) -> bool:
        return True

    def read(self, size: int | None = -1) -> bytes:
        if self.at >= len(self.pending):
            self.pending, self.at = memoryview(next(self.chunks, b"")), 0
        end = len(self.pending) if size is None or size < 0 else self.at + size
        data = bytes(self.pending[self.at : end])
        self.at += len(data)
        return data

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)
