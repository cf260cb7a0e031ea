"""A body's ``Content-Encoding`` undone, streamed and bounded (``egress/content_coding.py``)."""

from __future__ import annotations

import gzip
import zlib

import brotli  # type: ignore[import-untyped,unused-ignore]
import pytest
import zstandard

from inspect_gaia.egress.content_coding import CHUNK, FAILURES, decode

BODY = bytes(range(256)) * 4000
CODERS = {
    "gzip": lambda data: gzip.compress(data, mtime=0),
    "deflate": zlib.compress,
    "br": brotli.compress,
    "zstd": zstandard.ZstdCompressor().compress,
}


def _decoded(data: bytes, codings: str) -> bytes:
    return b"".join(decode(iter([data[:1000], data[1000:]]), codings))


@pytest.mark.parametrize("coding", sorted(CODERS))
def test_each_coding_decodes_whole_and_a_damaged_or_cut_body_does_not(coding: str) -> None:
    coded = CODERS[coding](BODY)
    assert _decoded(coded, coding.upper()) == BODY
    # a body cut short decoded its start silently (and a damaged br or zstd raised its own
    # error class, which web export did not catch)
    for broken in (coded[: len(coded) // 2], coded[:8] + b"\xff" * 64):
        with pytest.raises(FAILURES):
            _decoded(broken, coding)


def test_codings_applied_in_turn_are_undone_in_reverse_and_an_unknown_one_is_said() -> None:
    assert _decoded(brotli.compress(gzip.compress(BODY)), "x-gzip, br") == BODY
    assert _decoded(BODY, "identity") == BODY
    with pytest.raises(LookupError, match="unknown Content-Encoding compress"):
        _decoded(BODY, "compress")


@pytest.mark.parametrize("coding", sorted(CODERS))
def test_a_bomb_decodes_a_bounded_step_at_a_time(coding: str) -> None:
    zeros = bytes(32 << 20)
    bomb = brotli.compress(zeros, quality=1) if coding == "br" else CODERS[coding](zeros)
    assert len(bomb) < 1 << 20
    steps = decode(iter([bomb]), coding)
    assert max(len(next(steps)) for _ in range(4)) <= 8 << 20 and CHUNK <= 8 << 20
