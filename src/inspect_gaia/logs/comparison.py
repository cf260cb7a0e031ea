"""Two GAIA runs side by side on the same questions, scored alike, with a test of the difference.

Every answer of both sides is judged again by the official scorer (``question_scorer``) against the
same answer key (``sides.answer_key``), so a difference left is the runs', not their scorers' or
their datasets'. The comparison is on the questions both sides answered; how many each lacks is
said. With one epoch a question's score is its verdict; with several (or ``epoch`` not given), its
mean over the epochs; the test and interval follow (``paired``). Each side's own recorded verdicts
are shown beside, re-scored ones first.

Each inspect_gaia side names the image it ran (``image``, the identity its log records), so
that two runs on different images are never compared as if alike without a word.

A side whose samples carry contamination flags (an inspect_gaia log) also gets its
``contamination`` block (``contamination``) over the compared samples, its one line among
the side's flags, and per level its accuracy with every flagged sample counted wrong
(``a_accuracy_flagged_wrong``; ``None`` for a side that records no flags).

Where both sides recorded what their samples requested (``web_record``), ``web_hosts_differ``
lists the questions whose sides read from different sets of hosts (``None``: a side recorded
nothing).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..errors import GaiaError, counted
from ..scoring.judge import JudgePrompt
from ..scoring.official import question_scorer
from .comparability import OWN_HARNESS
from .contamination import contamination_block, flagged
from .judged import JudgeRun, judge_samples, judged_block
from .paired import ALPHA, CONFIDENCE, PairedResult, compare_paired, verdict
from .results import SampleResult
from .sides import AnswerKey, Side, check_split
from .vote import majority_answer
from .web_reads import host_differences

COMPARE_SCHEMA = 2
SCORER = "official GAIA scorer (question_scorer), one answer key for both sides"


def _select(side: Side, epoch: int | None) -> list[SampleResult]:
    """The samples compared: all, or one epoch of a multi-epoch side."""
    if epoch is None or len(side.epochs) == 1:
        return list(side.samples)
    if epoch not in side.epochs:
        raise GaiaError(
            f"{side.path} has no epoch {epoch} — its epochs are {', '.join(map(str, side.epochs))}"
        )
    return [s for s in side.samples if s.epoch == epoch]


def _by_question(
    samples: Sequence[SampleResult], key: AnswerKey, own_verdicts: bool
) -> dict[str, dict[str, Any]]:
    grouped: dict[str, list[SampleResult]] = {}
    for sample in samples:
        if sample.task_id in key.questions:
            grouped.setdefault(sample.task_id, []).append(sample)
    scores = {}
    for task_id, answered in grouped.items():
        target = key.questions[task_id].answer
        verdicts = [question_scorer(s.answer, target)[0] for s in answered]
        clean = [v and not flagged(s) for v, s in zip(verdicts, answered, strict=True)]
        scores[task_id] = {
            "score": sum(verdicts) / len(verdicts),
            "score_flagged_wrong": sum(clean) / len(clean),
            "reported": sum(s.correct for s in answered) / len(answered) if own_verdicts else None,
            "answer": majority_answer([(s.epoch, s.answer) for s in answered], target)
            if len(answered) > 1
            else answered[0].answer,
        }
    return scores


def _row(
    label: str,
    ids: list[str],
    a: dict[str, dict[str, Any]],
    b: dict[str, dict[str, Any]],
    flags_recorded: tuple[bool, bool],
) -> tuple[dict[str, Any], PairedResult]:
    result = compare_paired([a[t]["score"] for t in ids], [b[t]["score"] for t in ids])
    row = {"level": label, **result.as_dict()}
    row.pop("interval")
    n = len(ids)
    row["verdict"] = verdict(result)
    row["at_5pct"] = (
        "noise" if not result.significant else ("A better" if result.difference > 0 else "B better")
    )
    for name, side in (("a", a), ("b", b)):
        reported = [side[t]["reported"] for t in ids]
        row[f"{name}_reported"] = None if None in reported else sum(reported) / n
    for name, side, recorded in (("a", a, flags_recorded[0]), ("b", b, flags_recorded[1])):
        clean = sum(side[t]["score_flagged_wrong"] for t in ids) / n if n else None
        row[f"{name}_accuracy_flagged_wrong"] = clean if recorded else None
    row["agreement"] = sum(a[t]["score"] == b[t]["score"] for t in ids) / n if n else None
    return row, result


def compare_document(a: Side, b: Side, key: AnswerKey, epoch: int | None = None) -> dict[str, Any]:
    """The whole comparison as one JSON-ready document (the schema is in the README).

    Pure: the sides and the key are read already (``sides.read_side``, ``sides.answer_key``);
    ``inspect-gaia compare`` renders the document.

    Args:
        a: Side A.
        b: Side B.
        key: The answers both sides are scored against.
        epoch: Compare this epoch of multi-epoch sides; ``None``: each question's mean.

    Raises:
        GaiaError: A side has ids of another split, lacks ``epoch``, or the two share no question.
    """
    for side in (a, b):
        check_split(side, key)
    mine = _by_question(_select(a, epoch), key, a.verdicts)
    theirs = _by_question(_select(b, epoch), key, b.verdicts)
    both = sorted(set(mine) & set(theirs), key=lambda t: (key.questions[t].level, t))
    if not both:
        raise GaiaError(
            f"{a.path} and {b.path} share no question of the answer key",
            fix="are they of the same split and question set?",
        )
    union = set(mine) | set(theirs)
    levels = sorted({key.questions[t].level for t in union})
    rows: list[dict[str, Any]] = []
    overall: PairedResult | None = None
    for label, level in [(str(level), level) for level in levels] + [("all", 0)]:
        ids = [t for t in both if level in (0, key.questions[t].level)]
        present = {t for t in union if level in (0, key.questions[t].level)}
        if not ids:
            continue
        row, result = _row(label, ids, mine, theirs, (_records_flags(a), _records_flags(b)))
        row["a_lacks"] = len(present - set(mine))
        row["b_lacks"] = len(present - set(theirs))
        rows.append(row)
        overall = result
    assert overall is not None
    differences = [
        {
            "task_id": t,
            "level": str(key.questions[t].level),
            "target": key.questions[t].answer,
            "a_answer": mine[t]["answer"],
            "a_score": mine[t]["score"],
            "b_answer": theirs[t]["answer"],
            "b_score": theirs[t]["score"],
        }
        for t in both
        if mine[t]["score"] != theirs[t]["score"] or mine[t]["answer"] != theirs[t]["answer"]
    ]
    return {
        "schema_version": COMPARE_SCHEMA,
        "a": _side_info(a, epoch, set(mine), same=a.label == b.label),
        "b": _side_info(b, epoch, set(theirs), same=a.label == b.label),
        "answers": {"split": "validation", "source": key.source, "question_set": key.question_set},
        "method": {
            "scorer": SCORER,
            "test": overall.test,
            "interval": overall.interval,
            "confidence": CONFIDENCE,
            "alpha": ALPHA,
        },
        "levels": rows,
        "verdict": _sentence(overall),
        "differences": differences,
        "only_in_one": {
            "a": sorted(set(mine) - set(theirs)),
            "b": sorted(set(theirs) - set(mine)),
        },
        "web_hosts_differ": host_differences(_select(a, epoch), _select(b, epoch), both),
    }


def _records_flags(side: Side) -> bool:
    """Whether the side's log records contamination flags (only inspect_gaia's scorer does)."""
    return side.harness == OWN_HARNESS


def _side_info(
    side: Side, epoch: int | None, questions: set[str], same: bool = False
) -> dict[str, Any]:
    """What the document says of one side.

    ``same``: both sides have one label (one model, one harness), so each is labelled by its run.
    """
    contamination = None
    if _records_flags(side):
        compared = [s for s in _select(side, epoch) if s.task_id in questions]
        contamination = contamination_block(compared, graded=True)
    note = contamination and contamination["note"]
    return {
        "label": f"{side.label} [{side.run}]" if same and side.run else side.label,
        "harness": side.harness,
        "model": side.model,
        "path": side.path,
        "logs": list(side.logs),
        "epochs": len(side.epochs),
        "epoch": epoch if len(side.epochs) > 1 else None,
        "questions": len(questions),
        "own_verdicts": side.verdicts,
        "image": side.provenance.image_identity if side.provenance else None,
        "flags": list(side.flags) + ([note] if note else []),
        "contamination": contamination,
    }


def _signed(value: float) -> str:
    return "—" if math.isnan(value) else f"{value:+.3f}"


def _sentence(result: PairedResult) -> str:
    return (
        f"A − B = {_signed(result.difference)} (95% CI {_signed(result.ci_low)} to "
        f"{_signed(result.ci_high)}), p = {result.p_value:.3g} "
        f"over {counted(result.n, 'question')} "
        f"({result.a_only} right for A only, {result.b_only} for B only): {verdict(result)}"
    )


def judge_sides(
    a: Side,
    b: Side,
    key: AnswerKey,
    epoch: int | None,
    model: str,
    prompt: JudgePrompt,
    concurrency: int,
) -> tuple[dict[str, Any], JudgeRun]:
    """Both sides' answers on the questions both answered, graded by one judge on one key.

    The judge sees the key's gold (and question), as the official re-scoring does, so the two
    sides differ only by their answers. The document's ``judge`` block: the judge, and per side
    its judged numbers and where judge and official scorer disagree (``judged.judged_levels``).
    """
    chosen = {
        name: [s for s in _select(side, epoch) if s.task_id in key.questions]
        for name, side in (("a", a), ("b", b))
    }
    both = {s.task_id for s in chosen["a"]} & {s.task_id for s in chosen["b"]}

    def gold(sample: SampleResult) -> tuple[str, str]:
        question = key.questions[sample.task_id]
        return question.answer, question.question

    def official(sample: SampleResult) -> bool:
        return question_scorer(sample.answer, key.questions[sample.task_id].answer)[0]

    compared = {name: [s for s in samples if s.task_id in both] for name, samples in chosen.items()}
    run = judge_samples(compared["a"] + compared["b"], gold, model, prompt, concurrency)
    block = {
        **run.describe(),
        **{name: judged_block(samples, gold, official, run) for name, samples in compared.items()},
    }
    return block, run
