"""The probe's verdict, on the host: does anything a route returned hold an answer?

The program in the sandbox (``inside.py``) knows no answer; it reports how far each route got and
what came back, bounded. Here, on the host, each finding's place and text are searched for:

* a task id of the run's questions (a file named by one, a line of the metadata);
* GAIA's metadata columns (``Final answer`` with ``Annotator Metadata``: a parquet file names its
  columns in plain text even when its rows are compressed);
* the sample's own answer beside its question (``answer_sources/matching.py``, as the detection
  reads a tool result), never the answer alone, which an honest page may hold.

A finding that holds one is ``leaked``; a route's outcome is the worst of its findings'. The
sample's score is 1 when any route is ``leaked`` or ``open`` (``outcomes.BREACHES``), else 0; its
metadata lists every route with its outcome and one line of what it found (``outcomes``), and
the store keeps what the routes returned (``STORE_KEY``) for a reader to look at.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from inspect_ai.scorer import Score, Scorer, Target, mean, scorer
from inspect_ai.solver import TaskState

from ..answer_sources.matching import question_with_answer
from ..questions.dataset import question_text
from .outcomes import OUTCOMES, PROBE_SCORER, ROUTES_KEY, RouteOutcome

STORE_KEY = "inspect_gaia.probe"
"""Where the solver keeps what each route returned, in the sample's store."""
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)
COLUMNS = ("Final answer", "Annotator Metadata")
"""GAIA's answer column and the column beside it that no other data set names (``task_id`` is
common: a library's prompt may hold it beside "Final answer")."""
WHERE = 3
"""Places a route's line names (the rest are counted)."""


def leak_in(text: str, question: str, answer: str, task_ids: frozenset[str]) -> str | None:
    """What of the answers ``text`` holds, in a few words; ``None``: nothing."""
    for found in _UUID.findall(text):
        if found.lower() in task_ids:
            return f"task id {found.lower()}"
    if all(column in text for column in COLUMNS):
        return "GAIA's metadata columns"
    if answer.strip() and answer.strip() != "?" and question.strip():
        if question_with_answer(text, question, answer) is not None:
            return "the answer beside its question"
    return None


def judged(
    result: Mapping[str, Any], question: str, answer: str, task_ids: frozenset[str]
) -> RouteOutcome:
    """One route's outcome, its findings searched for answers, and its line."""
    outcomes: list[tuple[str, str]] = []
    for finding in result.get("findings") or []:
        where, text = str(finding.get("where", "")), str(finding.get("text", ""))
        leak = leak_in(f"{where}\n{text}", question, answer, task_ids)
        outcome = "leaked" if leak else str(finding.get("outcome", "skipped"))
        outcome = outcome if outcome in OUTCOMES else "skipped"
        source = str(finding.get("source") or "")
        shown = f"{where} ({source})" if source and source != where else where
        outcomes.append((outcome, f"{leak} in {shown}" if leak else shown))
    if not outcomes:
        outcome = str(result.get("outcome", "empty"))
        return RouteOutcome(str(result.get("route", "?")), str(result.get("family", "?")), outcome)
    worst = min(OUTCOMES.index(o) for o, _ in outcomes)
    places = [what for o, what in outcomes if OUTCOMES.index(o) == worst]
    what = "; ".join(places[:WHERE]) + (
        f"; and {len(places) - WHERE} more" if len(places) > WHERE else ""
    )
    unfinished = [w for o, w in outcomes if o == "skipped" and OUTCOMES[worst] != "skipped"]
    if unfinished:  # a walk cut short, an attempt that failed: said beside the outcome
        what += f" ({'; '.join(unfinished[:WHERE])})"
    return RouteOutcome(
        str(result.get("route", "?")), str(result.get("family", "?")), OUTCOMES[worst], what
    )


def verdict(routes: Iterable[RouteOutcome]) -> tuple[int, str]:
    """The sample's score (1: breached) and its explanation."""
    breached = [r for r in routes if r.breached]
    if not breached:
        return 0, "sealed: no route reached an answer"
    return 1, "not sealed: " + "; ".join(f"{r.route} {r.outcome}: {r.what}" for r in breached)


@scorer(metrics=[mean()], name=PROBE_SCORER)
def probe_scorer(task_ids: Iterable[str]) -> Scorer:
    """1 when any route breached the sandbox (``outcomes.BREACHES``), else 0.

    Args:
        task_ids: Every task id of the run's questions (a task id anywhere is the metadata).
    """
    ids = frozenset(str(i).lower() for i in task_ids)

    async def score(state: TaskState, target: Target) -> Score:
        results = state.store.get(STORE_KEY) or []
        question = question_text(state.input_text)
        # the sample's own id is no leak: its attachment's path, in its prompt, holds it
        others = ids - {str(state.sample_id).lower()}
        routes = [judged(r, question, target.text, others) for r in results]
        value, explanation = verdict(routes)
        return Score(
            value=value,
            explanation=explanation,
            metadata={ROUTES_KEY: [r.as_json() for r in routes]},
        )

    return score
