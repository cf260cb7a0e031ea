"""URL rules for known GAIA answer sources: parsing, normalising, matching, finding URLs in text.

Runs elsewhere: in the proxy's container, and imported here; standard library only (``shipped``).

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

A rule is read the way URLs are (``parse_rule``): a trailing dot of its host and percent-escapes
in its path are normalised away, so no rule is accepted that could never match.

Every step is linear in the text it reads, because a model writes that text and the proxy judges
it on its one thread (a regex glob with several ``*`` backtracked cubically: four crafted requests
froze the proxy for 17 s). A glob is matched by finding its literal parts left to right
(``_glob_at``: the leftmost occurrence of each part is always the right one for ``*``-only globs),
and URLs nested in URLs (``https://relay/?u=https://…``) are each judged with the rest of their
text when a run of URL characters holds a few of them, and up to the next one beyond that
(``_nested``), so a text of many such URLs is read a bounded number of times.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from urllib.parse import unquote, unquote_plus, urlsplit

_HOST_CHARS = re.compile(r"^[a-z0-9*.-]+$")

REFUSAL_MARKER = "inspect_gaia egress proxy refused"
"""Starts the proxy's refusal message; the scorer finds refusals in tool results by it."""
REFUSAL = (
    REFUSAL_MARKER
    + " {url} — {source} is a known GAIA answer source (rule {rule}); this run blocks"
    " answer sources (-T block_answer_sources=true)."
)
"""The proxy's refusal sentence (``egress/addon.py`` fills it; the detection parses it back)."""
MAX_TARGET = 32 * 1024
"""Characters of a request's target and names judged at most; a longer request is refused unread
(servers refuse far shorter targets: nginx and Apache at 8 KB). So no refusal sentence the proxy
writes names a URL longer than this (and its scheme): the detection reads a longer one as forged."""

NESTED_IN_FULL = 8
"""URLs of one run of URL characters judged with all the text after them; beyond, up to the next."""
MAX_URL = 65536
"""Characters of a URL judged: servers refuse far shorter ones (nginx and Apache at 8 KB)."""
DECODE_ROUNDS = 3
"""Percent-decoding passes: a server decodes once, a relay or a framework once more."""


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
        return self.path is None or glob_prefix(self.path, path)


def parse_rule(text: str, source: str) -> Rule:
    """A rule from its text; ``scheme://`` is allowed and dropped.

    The host loses a trailing (or leading) dot and the path is normalised as a URL's is
    (percent-decoded, backslashes as slashes), so a rule means what the URLs it names mean.

    Raises:
        ValueError: Not ``HOST[/PATH]`` (the message says why).
    """
    pattern = text.strip().lower()
    bare = re.sub(r"^[a-z][a-z0-9+.-]*://", "", pattern)
    host, slash, path = bare.partition("/")
    host = host.strip(".")
    if not host or not _HOST_CHARS.match(host) or ".." in host:
        raise ValueError(f"{text!r} is not HOST or HOST/PATH (e.g. huggingface.co/datasets/x)")
    if not slash:
        return Rule(pattern, host, None, source)
    path = percent_decoded(path, unquote).replace("\\", "/")
    return Rule(pattern, host, path if path.startswith("*") else "/" + path, source)


def host_matches(pattern: str, host: str) -> bool:
    """Whether a rule's host pattern covers a (lower-case) host name."""
    if pattern == "*":
        return True
    if "*" in pattern:
        return glob_full(pattern, host)
    return host == pattern or host.endswith("." + pattern)


def glob_full(pattern: str, text: str) -> bool:
    """Whether ``*``-glob ``pattern`` matches all of ``text`` (linear in ``text``)."""
    parts = pattern.split("*")
    if len(parts) == 1:
        return text == pattern
    end = _glob_at(parts[:-1], text)
    return end is not None and len(text) - len(parts[-1]) >= end and text.endswith(parts[-1])


def glob_prefix(pattern: str, text: str) -> bool:
    """Whether ``*``-glob ``pattern`` matches the start of ``text`` (linear in ``text``)."""
    return _glob_at(pattern.split("*"), text) is not None


def _glob_at(parts: Sequence[str], text: str) -> int | None:
    """Where ``parts[0]*parts[1]*…`` ends, anchored at the start of ``text``; ``None``: nowhere.

    The first part must start the text; each later one is found at its leftmost place after the
    one before, which for ``*``-only globs never loses a match. One forward scan per part.
    """
    if not text.startswith(parts[0]):
        return None
    at = len(parts[0])
    for part in parts[1:]:
        found = text.find(part, at)
        if found < 0:
            return None
        at = found + len(part)
    return at


def percent_decoded(text: str, unquote_fn: Callable[[str], str]) -> str:
    """``text`` percent-decoded until it stops changing (at most ``DECODE_ROUNDS`` times)."""
    for _ in range(DECODE_ROUNDS):
        decoded = unquote_fn(text)
        if decoded == text:
            break
        text = decoded
    return text


def normalise(url: str) -> tuple[str, str] | None:
    """``(host, path?query)`` of a URL, as a server reads it; ``None`` if no host.

    A URL without a scheme (``huggingface.co/datasets/x``) is read as ``http://``. Lower-cased;
    the path percent-decoded (again for URLs embedded in URLs, so ``%252e%252e`` is ``..``),
    backslashes read as ``/``, ``;`` path parameters dropped, ``//`` collapsed and ``.``/``..``
    resolved, so ``/a/../datasets;v=1//gaia-benchmark/%47AIA`` is ``/datasets/gaia-benchmark/gaia``.
    ``variants`` also gives the reading of servers that keep ``;`` parameters.
    """
    return next(iter(variants(url)), None)


def variants(url: str) -> list[tuple[str, str]]:
    """Every ``(host, path?query)`` a server may read ``url`` as: ``;`` parameters dropped, kept."""
    text = url.strip()[:MAX_URL]
    if not re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*://", text):
        text = "http://" + text.lstrip("/\\")
    try:
        parts = urlsplit(text.replace("\\", "/"))
        host = (parts.hostname or "").strip(".")
    except ValueError:
        return []
    if not host:
        return []
    path = percent_decoded(parts.path or "/", unquote).replace("\\", "/")
    query = percent_decoded(parts.query, unquote_plus) if parts.query else ""
    tail = ("?" + query if query else "").lower()
    found = []
    for spelling in dict.fromkeys((_PARAMETERS.sub("", path), path)):
        resolved = posixpath.normpath("/" + _SLASHES.sub("/", spelling.lstrip("/")))
        found.append((host.lower(), resolved.lower() + tail))
    return found


_PARAMETERS = re.compile(r";[^/]*")
_SLASHES = re.compile(r"/+")


def match(rules: Iterable[Rule], host: str, path: str) -> Rule | None:
    """The first rule a normalised host and path fall under."""
    return next((rule for rule in rules if rule.matches(host, path)), None)


def match_url(rules: Iterable[Rule], url: str) -> Rule | None:
    """The first rule ``url`` falls under (in any spelling ``variants`` reads)."""
    listed = list(rules)
    for host, path in variants(url):
        rule = match(listed, host, path)
        if rule is not None:
            return rule
    return None


_URL_CHARS = re.compile(r"[^\s\"'<>`|\\^{}]+")
"""A run of characters a URL may hold (what ends a URL in text: space, quotes, brackets…)."""
_SCHEME = re.compile(r"https?://", re.IGNORECASE)
_BARE = re.compile(
    r"(?<![\w@./-])((?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z]{2,}(?::\d+)?(?:/[^\s\"'<>`|\\^{}]*)?)",
    re.IGNORECASE,
)
_HOSTLIKE = re.compile(r"(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z]{2,}(?::\d+)?", re.IGNORECASE)
_TRAILING = ".,;:)]}'\""


def _nested(run: str, starts: Sequence[int]) -> Iterator[str]:
    """The URL at each start in a run: to the run's end, or (past the first few) to the next."""
    full = len(starts) <= NESTED_IN_FULL
    for k, start in enumerate(starts):
        end = len(run) if full or k == 0 or k + 1 == len(starts) else starts[k + 1]
        yield run[start : min(end, start + MAX_URL)].rstrip(_TRAILING)


def find_urls(text: str) -> Iterator[str]:
    """Every URL-like string in ``text``: with a scheme, or a bare ``host.tld[/path]``.

    URLs nested in another's path or query are found on their own (``_nested``), and the text is
    searched again percent-decoded, so ``q=https%3A%2F%2Fhuggingface.co%2F…`` is found.
    """
    seen: set[str] = set()
    for variant in dict.fromkeys((text, unquote(text))):
        for run in _URL_CHARS.finditer(variant):
            starts = [m.start() for m in _SCHEME.finditer(run.group())]
            for url in _nested(run.group(), starts):
                if not url.endswith("//") and url not in seen:
                    seen.add(url)
                    yield url
        for found in _BARE.finditer(variant):
            url = found.group(1)[:MAX_URL].rstrip(_TRAILING)
            if url not in seen:
                seen.add(url)
                yield url


def embedded_urls(target: str) -> list[str]:
    """URLs a request's path and query carry: ``/web/2024/https://…``, ``?url=…``, ``/host.tld/…``.

    Besides ``find_urls``' finds, a host name that makes a whole path segment or parameter value
    (``web.archive.org/web/2024/huggingface.co/…``) starts a URL: relays take them without a scheme.
    """
    found: dict[str, None] = {}
    # a backslash read as "/" too: WHATWG parsers (browsers, Node relays) read it so after a host
    spellings = (spelling for text in _decoded_all(target) for spelling in (text, _slashed(text)))
    for variant in dict.fromkeys(spellings):
        found.update(dict.fromkeys(find_urls(variant)))
        starts = [
            segment.start()
            for segment in _SEGMENT.finditer(variant)
            if _HOSTLIKE.fullmatch(segment.group())
            and variant[max(0, segment.start() - 3) : segment.start()] != "://"  # found already
        ]
        found.update(dict.fromkeys(_nested(variant, starts)))
    return [url for url in found if url]


_SEGMENT = re.compile(r"[^/=?&]+")
"""A path segment or a parameter's name or value (what ``/``, ``=``, ``?`` and ``&`` part)."""


def _slashed(text: str) -> str:
    return text.replace("\\", "/")


def _decoded_all(text: str) -> Iterator[str]:
    yield text
    for _ in range(DECODE_ROUNDS):
        decoded = unquote(text)
        if decoded == text:
            return
        text = decoded
        yield text


def request_match(
    rules: Sequence[Rule], scheme: str, hosts: Iterable[str], target: str
) -> tuple[str, Rule] | None:
    """The URL and rule a proxied request falls under, or ``None``.

    The request is judged under each name it gives (its target host, ``Host`` header, TLS name,
    absolute-form authority) and by each URL its path and query embed (``embedded_urls``).
    """
    path = target if target.startswith("/") else "/" + target
    for host in dict.fromkeys(_hostname(h) for h in hosts if h):
        url = f"{scheme}://{host}{path}"
        rule = match_url(rules, url)
        if rule is not None:
            return url, rule
    for url in embedded_urls(path):
        rule = match_url(rules, url)
        if rule is not None:
            return url, rule
    return None


def _hostname(authority: str) -> str:
    """The host of ``host[:port]`` or ``[v6]:port``, lower-cased."""
    authority = authority.strip().lower()
    if authority.startswith("["):
        return authority[1:].partition("]")[0]
    return authority.rpartition(":")[0] if authority.count(":") == 1 else authority


def all_matches(rules: Sequence[Rule], text: str) -> list[tuple[str, Rule]]:
    """Every URL in ``text`` that a rule covers, once each, with its rule."""
    found = []
    for url in find_urls(text):
        rule = match_url(rules, url)
        if rule is not None:
            found.append((url, rule))
    return found
