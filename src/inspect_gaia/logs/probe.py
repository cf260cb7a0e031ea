"""A probe run as ``report`` shows it: routes by outcome, and one line saying whether it is sealed.

A run of ``inspect_gaia/gaia_probe`` (its record says ``probe``; ``results.group_runs`` never pools
it with a run that answered) holds, per sample, every route the probe tried with its outcome
(``probe/outcomes.py``). ``probe_block`` counts them: a row per route with how many samples had each
outcome, and the line, ``sealed: 0 of N samples reached an answer (K routes tried)``, or which
routes breached, the worst first, each with how many samples and what it found in the first.
Samples that ended in an error were not probed: counted apart, never as sealed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from ..errors import GaiaError
from ..probe.outcomes import BREACHES, OUTCOMES, RouteOutcome
from .results import RunResults, SampleResult

SHOWN_BREACHES = 5
"""Breaching routes the line names (the block lists them all)."""


def is_probe(run: RunResults) -> bool:
    """Whether ``run`` is a probe of the sandbox, not a run that answered."""
    return bool(run.provenance is not None and run.provenance.probe)


def probe_block(samples: Sequence[SampleResult]) -> dict[str, Any]:
    """The probe's table and line for a group's samples (the module docstring)."""
    probed = [s for s in samples if s.probe is not None]
    errored = len(samples) - len(probed)
    counts: dict[str, Counter[str]] = {}
    families: dict[str, str] = {}
    firsts: dict[str, RouteOutcome] = {}
    for sample in probed:
        for route in sample.probe or ():
            counts.setdefault(route.route, Counter())[route.outcome] += 1
            families.setdefault(route.route, route.family)
            if route.breached and route.route not in firsts:
                firsts[route.route] = route
    rows: list[dict[str, Any]] = [
        {"route": name, "family": families[name], **{o: counts[name][o] for o in OUTCOMES}}
        for name in counts
    ]
    tried = sum(1 for name in counts if counts[name]["skipped"] < sum(counts[name].values()))
    breached = [s for s in probed if any(r.breached for r in s.probe or ())]
    leaks: list[dict[str, Any]] = sorted(
        (
            {
                "route": name,
                "outcome": route.outcome,
                "samples": sum(counts[name][o] for o in BREACHES),
                "what": route.what,
            }
            for name, route in firsts.items()
        ),
        key=lambda leak: (OUTCOMES.index(leak["outcome"]), -leak["samples"]),
    )
    return {
        "samples": len(probed),
        "breached": len(breached),
        "errored": errored,
        "routes_tried": tried,
        "routes": rows,
        "leaks": leaks,
        "line": _line(len(probed), len(breached), tried, leaks, errored),
    }


def _line(
    probed: int, breached: int, tried: int, leaks: Sequence[dict[str, Any]], errored: int
) -> str:
    unprobed = f"; {errored} sample(s) errored and were not probed" if errored else ""
    if not breached:
        return f"sealed: 0 of {probed} samples reached an answer ({tried} routes tried){unprobed}"
    named = "; ".join(
        f"{leak['route']} {leak['outcome']} in {leak['samples']} ({leak['what']})"
        for leak in leaks[:SHOWN_BREACHES]
    )
    more = (
        f"; and {len(leaks) - SHOWN_BREACHES} more route(s)" if len(leaks) > SHOWN_BREACHES else ""
    )
    return (
        f"NOT sealed: {breached} of {probed} samples reached an answer or a way to one "
        f"({tried} routes tried): {named}{more}{unprobed}"
    )


def refuse_probes(runs: Sequence[RunResults], command: str) -> None:
    """A probe run is no score: ``submission`` and ``compare`` stop at one, in one line.

    Raises:
        GaiaError: One of ``runs`` is a probe of the sandbox.
    """
    probe = next((run for run in runs if is_probe(run)), None)
    if probe is not None:
        raise GaiaError(
            f"{probe.source} is a probe of the sandbox (inspect_gaia/gaia_probe): it answered "
            f"nothing, so {command} has no score to take from it",
            fix=f"`inspect-gaia report {probe.source}` shows what it found; give {command} "
            "the logs of a gaia run",
        )
