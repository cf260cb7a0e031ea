"""A body's ``Content-Encoding`` undone on the host, chunk by chunk (HTTP's content codings).

Two readers of the recorded web need a coded body decoded: ``web export`` writes each body as a
browser shows it (``har_write``), and a replay serves a client the decoded twin of a body recorded
in a coding that client does not accept (``replay_decoded``). Both read bodies that came from the
web, so the decoders here stream, never more than ``CHUNK`` bytes out at a time; a caller bounds
the total (a small body can decode to gigabytes). A body cut short does not decode: its start
decoded would pass for the whole.

The codings: ``gzip`` (and ``x-gzip``), ``deflate``, ``br`` (the ``brotli`` package) and ``zstd``
(``zstandard``); ``identity`` is none. A response coded more than once (``Content-Encoding: gzip,
br``) is decoded in the reverse of the order the codings were applied.
"""

from __future__ import annotations

import codecs
import zlib
from collections.abc import Iterator, Sequence
from typing import Any

from .replay_match import codings_of

CHUNK = 1 << 20
"""The most one decoding step yields."""
FAILURES = (zlib.error, ValueError, LookupError, OSError, EOFError)
"""What a body that does not decode raises (damaged, cut short, an unknown coding)."""
_ZSTD_SLICE = 256
"""Bytes of a zstd body fed at once: at most 64 blocks, 8 MiB out (zstd's own streaming reader,
bounded too, says nothing of a body cut short)."""


def decode(chunks: Iterator[bytes], codings: str | Sequence[str]) -> Iterator[bytes]:
    """Undo ``codings`` (a ``Content-Encoding`` value, or ``replay_match.codings_of``'s), streamed.

    Raises:
        LookupError: A coding this does not know; the others' errors are in ``FAILURES``.
    """
    applied = codings_of(codings) if isinstance(codings, str) else tuple(codings)
    for coding in reversed(applied):
        chunks = _undo(chunks, coding)
    return chunks


def _undo(chunks: Iterator[bytes], coding: str) -> Iterator[bytes]:
    if coding in ("gzip", "x-gzip", "deflate"):
        decoder: Any = zlib.decompressobj(47 if coding != "deflate" else 15)
        for chunk in chunks:
            data = decoder.decompress(chunk, CHUNK)
            yield data
            while decoder.unconsumed_tail:
                yield decoder.decompress(decoder.unconsumed_tail, CHUNK)
        yield decoder.flush()
        if not decoder.eof:  # zlib says nothing of a stream cut short
            raise EOFError(f"a {coding} body cut short")
        return
    if coding == "br":
        try:
            import brotli  # type: ignore[import-untyped,import-not-found,unused-ignore]
        except ImportError as ex:
            raise LookupError("no brotli decoder here") from ex
        decoder = brotli.Decompressor()
        try:
            for chunk in chunks:
                yield decoder.process(chunk, output_buffer_limit=CHUNK)
                while not decoder.can_accept_more_data():
                    yield decoder.process(b"", output_buffer_limit=CHUNK)
        except brotli.error as ex:  # its own class, no ValueError: named in FAILURES' terms
            raise ValueError(f"a damaged br body ({ex})") from ex
        if not decoder.is_finished():
            raise EOFError("a br body cut short")
        return
    if coding == "zstd":
        import zstandard

        decoder = zstandard.ZstdDecompressor().decompressobj()
        try:  # fed in slices: a zstd block of a few bytes decodes to at most 128 KiB
            for chunk in chunks:
                for at in range(0, len(chunk), _ZSTD_SLICE):
                    yield decoder.decompress(chunk[at : at + _ZSTD_SLICE])
        except zstandard.ZstdError as ex:
            raise ValueError(f"a damaged zstd body ({ex})") from ex
        if not decoder.eof:
            raise EOFError("a zstd body cut short")
        return
    raise LookupError(f"unknown Content-Encoding {coding}")


def charset(kind: str) -> str | None:
    """The codec a ``Content-Type`` names (UTF-8 when none); ``None``: one Python does not know."""
    for part in kind.split(";")[1:]:
        name, _, value = part.strip().partition("=")
        if name.strip().lower() == "charset":
            try:
                return codecs.lookup(value.strip().strip('"')).name
            except LookupError:
                return None
    return "utf-8"
