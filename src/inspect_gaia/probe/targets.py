"""The URLs the probe's web routes ask for: listed answer sources, open pages, relays, redirects.

By default one URL per rule of the run's list of answer sources (the package's
``answer_sources.yaml`` plus ``-T blocklist``), written so that the rule names it (a ``*`` becomes
a word: ``gaia-benchmark-*.hf.space`` is ``gaia-benchmark-probe.hf.space``); an open page, which
every sealed configuration with a network should still reach; and the relays and a redirect that
carry a URL inside another (the proxy reads URLs nested in URLs). ``-T web_targets=FILE`` replaces
them, for a mirror of the dataset of your own or a network that names other hosts: one entry a
line, ``#`` comments::

    source https://datasets.example.org/gaia/metadata.jsonl   a name for it
    open   https://intranet.example.org/
    relay  https://relay.example.org/fetch?u={url}
    redirect https://go.example.org/?to={url}

A ``source`` is a place the answers are; reaching it is a breach. An ``open`` page is one an agent
should reach (its absence says the web routes proved nothing). A ``relay`` or ``redirect`` is a
template whose ``{url}`` becomes each source.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..answer_sources.sources import AnswerSources
from ..egress.urlrules import REFUSAL_MARKER, Rule
from ..errors import GaiaParameterError

DEFAULT_OPEN = ("https://example.com/",)
"""A page any run with a network reaches: the web routes' control."""
DEFAULT_RELAYS = (
    "https://web.archive.org/web/2024/{url}",
    "https://r.jina.ai/{url}",
    "https://translate.google.com/translate?sl=auto&tl=en&u={url}",
)
"""Services that fetch a URL for their caller (an archive, a reader, a translator)."""
DEFAULT_REDIRECTS = ("https://www.google.com/url?q={url}",)
"""An open redirect: a URL that answers "go there"."""
ANY_HOST = "example.org"
"""The host a rule for any host (``*/…``) is tried on."""
WORD = "probe"
"""What a ``*`` in a rule becomes in the URL tried."""
BLOCKED_MARKER = "inspect_gaia egress proxy does not allow this"
"""``egress/bounds.py``'s ``BLOCKED`` (the guard's): the proxy's refusal of a request for what it
is (a private address, a port). Written here too, since importing the proxy's programs needs
mitmproxy; a test holds the two equal."""
REFUSALS = (REFUSAL_MARKER, BLOCKED_MARKER)
"""How a body the run's proxy wrote in place of the page starts."""
KINDS = ("source", "open", "relay", "redirect")


@dataclass(frozen=True)
class WebTargets:
    """What the web routes ask for (``inside_web.targets`` reads ``targets``)."""

    targets: tuple[dict[str, Any], ...]
    relays: tuple[str, ...] = DEFAULT_RELAYS
    redirects: tuple[str, ...] = DEFAULT_REDIRECTS
    origin: str = "answer sources"
    files: tuple[str, ...] = field(default=())

    def as_config(self) -> dict[str, Any]:
        """The part of the probe's configuration (``inside.py``) they make."""
        return {
            "targets": [dict(t) for t in self.targets],
            "relays": list(self.relays),
            "redirects": list(self.redirects),
            "refusals": list(REFUSALS),
        }


def rule_url(rule: Rule) -> str:
    """A URL that ``rule`` names (its ``*`` filled with ``WORD``), over HTTPS."""
    host = ANY_HOST if rule.host == "*" else rule.host.replace("*", WORD)
    path = "/" + (rule.path or "/").replace("*", WORD).lstrip("/")
    if "?" not in path and "=" in path:  # a rule over a query (``*dataset=x/``) is one
        head, _, tail = path.partition(WORD)
        path = f"{head}{WORD}?{tail.lstrip('/')}" if tail else path
    return f"https://{host}{path}"


def default_targets(sources: AnswerSources) -> WebTargets:
    """One URL per rule of ``sources``, the first of each source marked, and the open page."""
    targets: list[dict[str, Any]] = []
    named: set[str] = set()
    for rule in sources.rules:
        targets.append(
            {
                "url": rule_url(rule),
                "kind": "source",
                "name": rule.source,
                "first": rule.source not in named,
            }
        )
        named.add(rule.source)
    targets += [
        {"url": url, "kind": "open", "name": "open page", "first": True} for url in DEFAULT_OPEN
    ]
    return WebTargets(tuple(targets))


def read_targets(path: str, flag: str = "-T web_targets") -> WebTargets:
    """The targets a file names (the module docstring's format).

    Raises:
        GaiaParameterError: The file cannot be read, or a line is not ``KIND URL [name]``.
    """
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as ex:
        raise GaiaParameterError(
            f"{flag}={path} cannot be read ({type(ex).__name__})", fix="name a text file"
        ) from ex
    found: dict[str, list[str]] = {kind: [] for kind in KINDS}
    targets: list[dict[str, Any]] = []
    for number, line in enumerate(lines, 1):
        words = line.split("#", 1)[0].split(maxsplit=2)
        if not words:
            continue
        kind, url = words[0], words[1] if len(words) > 1 else ""
        if kind not in KINDS or not url.startswith(("http://", "https://")):
            raise GaiaParameterError(
                f"{flag}={path}, line {number}: {line.strip()[:80]!r} is not `KIND URL`",
                fix=f"start each line with one of {', '.join(KINDS)}, then an http(s) URL",
            )
        if kind in ("relay", "redirect") and "{url}" not in url:
            raise GaiaParameterError(
                f"{flag}={path}, line {number}: a {kind} needs `{{url}}` where the source goes"
            )
        found[kind].append(url)
        if kind in ("source", "open"):
            name = words[2].strip() if len(words) > 2 else url
            targets.append({"url": url, "kind": kind, "name": name, "first": True})
    if not found["source"]:
        raise GaiaParameterError(
            f"{flag}={path} names no `source`", fix="name at least one place the answers are"
        )
    return WebTargets(
        tuple(targets), tuple(found["relay"]), tuple(found["redirect"]), origin=path, files=(path,)
    )
