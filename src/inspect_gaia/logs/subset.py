"""A run's official score on a named question set, beside its full figure (``--question-set``).

``report --question-set undisputed`` keeps the samples of the set's questions (``keep``, or all
but ``exclude``), re-scores a corrected answer with the official scorer, and gives the same per
level numbers as the full figure (``stats.summarise``), labelled with the set's name and
SHA-256 (``named_sets``), so that "official on undisputed" is never read as the split's score.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ..errors import GaiaError, few
from ..questions.named_sets import NamedSet
from ..questions.questionset import describe
from ..scoring.official import question_scorer
from .results import SampleResult
from .stats import summarise


def on_set(samples: Sequence[SampleResult], named: NamedSet) -> list[SampleResult]:
    """The samples of ``named``'s questions, each scored against the set's answer."""
    corrected = dict(named.answers)
    kept = []
    for sample in samples:
        if (named.keep and sample.task_id not in named.keep) or sample.task_id in named.exclude:
            continue
        if sample.task_id in corrected:
            target = corrected[sample.task_id]
            correct = question_scorer(sample.answer, target)[0]
            sample = replace(sample, target=target, correct=correct)
        kept.append(sample)
    return kept


def set_block(samples: Sequence[SampleResult], named: NamedSet) -> dict[str, Any]:
    """``report``'s ``question_set`` block: the set, and the official numbers on it per level."""
    kept = on_set(samples, named)
    questions = {s.task_id for s in samples}
    asked = {s.task_id for s in kept}
    corrected = sum(task_id in asked for task_id, _ in named.answers)
    return {
        "label": f"official on {named.name}",
        "name": named.name,
        "sha256": named.sha256,
        "source": named.source,
        "note": describe(len(asked), len(questions), corrected, named.name),
        "levels": [row.as_dict() for row in summarise(kept)] if kept else [],
    }


def check_on_set(questions: set[str], named: NamedSet, complete: bool, group: str) -> None:
    """Refuse a set that names questions a complete run of its split did not ask.

    ``-T question_set`` refuses a snapshot that lacks any question the set names; a complete
    run's questions are its snapshot's split, so ``report --question-set`` says the same instead
    of labelling every question of another snapshot (``9 of 9``). A partial run (``--limit``)
    cannot tell, and is given its ``N of M``.

    Raises:
        GaiaError: ``complete``, and an id of the set is not among ``questions``.
    """
    if not complete:
        return
    named_ids = [*named.keep, *named.exclude, *(task_id for task_id, _ in named.answers)]
    unknown = sorted({task_id for task_id in named_ids if task_id not in questions})
    if unknown:
        raise GaiaError(
            f"--question-set {named.name} names {len(unknown)} task id(s) not among the "
            f"{len(questions)} questions of {group}'s complete {named.split} run: {few(unknown)}",
            fix="report runs of the GAIA snapshot the set was made on (the default revision), or "
            "drop --question-set",
        )
