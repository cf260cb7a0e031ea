"""URL rules for known GAIA answer sources: parsing, normalising, matching, finding URLs in text.

Standard library only, and no import from the package: the same file is copied into the egress
proxy's container, where its mitmproxy addon imports it, so a URL is judged alike by the scorer
(after the run) and by the proxy (during it).

A rule is ``HOST`` or ``HOST/PATH``, compared in lower case:

* ``HOST`` is a name, which also covers its subdomains (``modelscope.cn`` covers
  ``www.modelscope.cn``); a name with ``*`` is a glob over the whole host
  (``*final-assignment*.hf.space``); ``*`` alone is any host.
* ``PATH`` is a glob over the URL's path and query (``/a/b?x=y``), percent-decoded, matched as a
  prefix: ``/datasets/gaia-benchmark`` covers everything under it. ``*`` matches any characters,
  ``/`` included; nothing else is special. A path may start with ``*`` (any leading directories).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from urllib.parse import unquote, unquote_plus, urlsplit

_HOST_CHARS = re.compile(r"^[a-z0-9*.-]+$")

REFUSAL_MARKER = "inspect_gaia egress proxy refused"
"""Starts the proxy's refusal message; the scorer finds refusals in tool results by it."""


@dataclass(frozen=True)
class Rule:
    """One ``HOST[/PATH]`` pattern of a named answer source."""

    pattern: str
    host: str
    path: str | None
    source: str

    def matches(self, host: str, path: str) -> bool:
        """Whether a normalised host and path (``normalise``) fall under this rule."""
        if not host_matches(self.host, host):
            return False
        return self.path is None or _glob(self.path + "*").match(path) is not None


def parse_rule(text: str, source: str) -> Rule:
    """A rule from its text; ``scheme://`` is allowed and dropped.

    Raises:
        ValueError: Not ``HOST[/PATH]`` (the message says why).
    """
    pattern = text.strip().lower()
    bare = re.sub(r"^[a-z][a-z0-9+.-]*://", "", pattern)
    host, slash, path = bare.partition("/")
    if not host or not _HOST_CHARS.match(host):
        raise ValueError(f"{text!r} is not HOST or HOST/PATH (e.g. huggingface.co/datasets/x)")
    if slash and path.startswith("*"):
        return Rule(pattern, host, path, source)
    return Rule(pattern, host, ("/" + path) if slash else None, source)


def host_matches(pattern: str, host: str) -> bool:
    """Whether a rule's host pattern covers a (lower-case) host name."""
    if pattern == "*":
        return True
    if "*" in pattern:
        return _glob(pattern).fullmatch(host) is not None
    return host == pattern or host.endswith("." + pattern)


def _glob(pattern: str) -> re.Pattern[str]:
    return re.compile(".*".join(re.escape(part) for part in pattern.split("*")), re.DOTALL)


def normalise(url: str) -> tuple[str, str] | None:
    """``(host, path?query)`` of a URL, lower-cased and percent-decoded; ``None`` if no host.

    A URL without a scheme (``huggingface.co/datasets/x``) is read as ``http://``. The path is
    decoded (twice over, for URLs embedded in URLs), ``//`` collapsed and ``.``/``..`` resolved,
    so ``/a/../datasets//gaia-benchmark/%47AIA`` is ``/datasets/gaia-benchmark/gaia``.
    """
    text = url.strip()
    if not re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*://", text):
        text = "http://" + text.lstrip("/")
    try:
        parts = urlsplit(text)
        host = (parts.hostname or "").rstrip(".")
    except ValueError:
        return None
    if not host:
        return None
    path = parts.path or "/"
    for _ in range(2):
        path = unquote(path)
    path = posixpath.normpath("/" + re.sub(r"/+", "/", path.lstrip("/")))
    query = unquote_plus(unquote_plus(parts.query)) if parts.query else ""
    return host.lower(), (path + ("?" + query if query else "")).lower()


def match(rules: Iterable[Rule], host: str, path: str) -> Rule | None:
    """The first rule a normalised host and path fall under."""
    return next((rule for rule in rules if rule.matches(host, path)), None)


def match_url(rules: Iterable[Rule], url: str) -> Rule | None:
    """The first rule ``url`` falls under (any spelling ``normalise`` reads)."""
    parts = normalise(url)
    return None if parts is None else match(rules, *parts)


_SCHEMED = re.compile(r"(?=(https?://[^\s\"'<>`|\\^{}]+))", re.IGNORECASE)
_BARE = re.compile(
    r"(?<![\w@./-])((?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z]{2,}(?::\d+)?(?:/[^\s\"'<>`|\\^{}]*)?)",
    re.IGNORECASE,
)


def find_urls(text: str) -> Iterator[str]:
    """Every URL-like string in ``text``: with a scheme, or a bare ``host.tld[/path]``.

    Overlapping finds are kept (a URL embedded in another's query is found on its own), and the
    text is searched again percent-decoded, so ``q=https%3A%2F%2Fhuggingface.co%2F…`` is found.
    """
    seen: set[str] = set()
    for variant in dict.fromkeys((text, unquote(text))):
        for pattern in (_SCHEMED, _BARE):
            for found in pattern.finditer(variant):
                url = found.group(1).rstrip(".,;:)]}'\"")
                if url not in seen:
                    seen.add(url)
                    yield url


def all_matches(rules: Sequence[Rule], text: str) -> list[tuple[str, Rule]]:
    """Every URL in ``text`` that a rule covers, once each, with its rule."""
    found = []
    for url in find_urls(text):
        rule = match_url(rules, url)
        if rule is not None:
            found.append((url, rule))
    return found
