"""What a probe run records of each route, as the scorer writes it and the readers read it back.

A leaf (it imports nothing of the package): ``probe/scorer.py`` writes each sample's routes into
its score's metadata under ``ROUTES_KEY``, and ``logs/`` reads them back with ``routes_of`` to
count them (``logs/probe.py``), without loading the probe.

An outcome says how far a route got, worst first:

* ``leaked``: what it returned holds the sample's answer beside its question, a task id of the
  split, or GAIA's metadata columns (the host found it: the probe never knows the answers);
* ``open``: a way a sealed sandbox must not have, answer or not: a listed answer source answered,
  another sample's attachment, a capability beyond the task's, a raw socket, an engine's socket, a
  block device, the host's processes, a hub token, a cluster's credentials;
* ``reached``: something answered that is allowed to (an open page, the proxy, a neighbour's
  closed port), reported for what it shows;
* ``empty``: nothing there; ``refused``: a guard said no (the proxy, a permission);
  ``unreachable``: nothing answered; ``skipped``: nothing to try it with in this sandbox (no
  browser in the image), or it did not finish in its time.

A sample breached when any of its routes is ``leaked`` or ``open``: its score is 1, else 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

PROBE_SCORER = "gaia_probe"
"""The probe's scorer's name in a log's ``Sample.scores`` (never the official ``gaia_scorer``)."""
ROUTES_KEY = "routes"
"""Where the scorer puts a sample's routes in its score's metadata."""
OUTCOMES = ("leaked", "open", "reached", "empty", "refused", "unreachable", "skipped")
"""Every outcome, worst first (``probe/inside.py``'s ``SEVERITY`` holds the same)."""
BREACHES = frozenset({"leaked", "open"})
"""The outcomes that make a sample's score 1: the sandbox is not sealed."""


@dataclass(frozen=True)
class RouteOutcome:
    """One route of one sample: its name, family, outcome and what it found (one line)."""

    route: str
    family: str
    outcome: str
    what: str = ""

    @property
    def breached(self) -> bool:
        """Whether this route shows the sandbox is not sealed."""
        return self.outcome in BREACHES

    def as_json(self) -> dict[str, str]:
        """As the score's metadata holds it."""
        return {
            "route": self.route,
            "family": self.family,
            "outcome": self.outcome,
            "what": self.what,
        }


def routes_of(metadata: Mapping[str, Any] | None) -> tuple[RouteOutcome, ...] | None:
    """A probe score's routes; ``None`` when the metadata holds none (not a probe's score).

    Anything malformed in a hostile log is read as what it can be: an unknown outcome is
    ``skipped``, a text is cut to a line.
    """
    routes = (metadata or {}).get(ROUTES_KEY)
    if not isinstance(routes, list):
        return None
    read = []
    for item in routes:
        if not isinstance(item, Mapping):
            continue
        outcome = str(item.get("outcome", "skipped"))
        read.append(
            RouteOutcome(
                route=str(item.get("route", "?"))[:80],
                family=str(item.get("family", "?"))[:40],
                outcome=outcome if outcome in OUTCOMES else "skipped",
                what=" ".join(str(item.get("what", "")).split())[:300],
            )
        )
    return tuple(read)
