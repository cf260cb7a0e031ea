"""Contamination in ``report`` and ``compare``: flagged samples per level, evidence, one line.

A sample is *flagged* when its ``Score.metadata["contamination"]`` (``answer_sources.detect``)
holds a flag of a kind that says it saw an answer source or asked one unrefused (``READ_KINDS``); a
request the run's egress proxy refused is counted apart (``refused``), since nothing was read.
"Flagged counted wrong" is the accuracy with every flagged sample scored as wrong, beside the
plain one: the share of the score no lookup can explain.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..defaults import OMITTED, READ_KINDS
from .results import SampleResult
from .stats import summarise

FLAGGED_WRONG = "accuracy_flagged_wrong"
"""The accuracy with flagged samples counted wrong (JSON field and CSV column)."""

_WHAT = {
    "answer_source": "a known answer source",
    "question_with_answer": "their question with its answer on a page",
    "dataset_reference": "the dataset or their task id",
}


def flags_of(sample: SampleResult) -> list[dict[str, Any]]:
    """A sample's contamination flags.

    A log written before flags had kinds holds strings (what a call touched: the dataset's name,
    a metadata file, the task id): they are read as dataset references, as is anything else
    that is not a flag with a kind.
    """
    return [
        f
        if isinstance(f, dict) and isinstance(f.get("kind"), str)
        else {"kind": "dataset_reference", "excerpt": str(f)}
        for f in sample.contamination
    ]


def flagged(sample: SampleResult) -> bool:
    """Whether the sample saw (or asked, unrefused) an answer source."""
    return any(f.get("kind") in READ_KINDS for f in flags_of(sample))


def refusals(sample: SampleResult) -> int:
    """Requests of the sample the egress proxy refused (seen in its tool results).

    Those beyond the flags a sample keeps are counted in its ``omitted`` entry for them.
    """
    count = 0
    for flag in flags_of(sample):
        if flag.get("where") != "result":
            continue
        if flag.get("kind") == "refused":
            count += 1
        elif flag.get("kind") == OMITTED and flag.get("of") == "refused":
            omitted = flag.get("count")
            count += omitted if isinstance(omitted, int) and omitted > 0 else 0
    return count


def unscanned(sample: SampleResult) -> int:
    """Images and other media in the sample's tool results that the detection could not read."""
    return _media(flags_of(sample))


def _media(flags: Sequence[Mapping[str, Any]]) -> int:
    count = 0
    for flag in flags:
        if flag.get("kind") == "unscanned":
            for key in ("images", "other"):
                value = flag.get(key)
                count += value if isinstance(value, int) and value > 0 else 0
    return count


def flagged_wrong(samples: Sequence[SampleResult]) -> list[SampleResult]:
    """``samples`` with every flagged one scored as wrong."""
    return [replace(s, correct=False) if flagged(s) else s for s in samples]


def contamination_block(samples: Sequence[SampleResult], graded: bool = True) -> dict[str, Any]:
    """The ``contamination`` entry of a report group (or of ``compare``'s inspect run).

    Per level present, then ``all``: samples, flagged samples, refused requests, and accuracy
    plain and with flagged samples counted wrong (``None`` on a split without answers). Then every
    flagged or refused sample with its evidence, and the one line a reader sees (``note``).
    """
    plain = {row.level: row for row in summarise(samples, graded)}
    strict = {row.level: row for row in summarise(flagged_wrong(samples), graded)}
    levels = []
    for label, row in plain.items():
        members = [s for s in samples if label == "all" or str(s.level) == label]
        levels.append(
            {
                "level": label,
                "samples": row.samples,
                "flagged": sum(flagged(s) for s in members),
                "refused_requests": sum(refusals(s) for s in members),
                "unscanned_samples": sum(1 for s in members if unscanned(s)),
                "accuracy": row.accuracy,
                FLAGGED_WRONG: strict[label].accuracy,
            }
        )
    listed = [
        {
            "task_id": s.task_id,
            "epoch": s.epoch,
            "level": str(s.level),
            "correct": s.correct,
            "flagged": flagged(s),
            "flags": flags_of(s),
        }
        for s in samples
        if s.contamination and (flagged(s) or refusals(s) or unscanned(s))
    ]
    block = {"levels": levels, "samples": listed}
    return {**block, "note": contamination_note(block)}


def contamination_note(block: Mapping[str, Any]) -> str | None:
    """The one line: how many samples read an answer source (and how), refusals; else ``None``."""
    overall = block["levels"][-1]
    parts = []
    if overall["flagged"]:
        kinds: Counter[str] = Counter()
        for sample in block["samples"]:
            kinds.update({f["kind"] for f in sample["flags"] if f.get("kind") in _WHAT})
        how = ", ".join(f"{kinds[k]} {_WHAT[k]}" for k in _WHAT if kinds[k])
        n = overall["flagged"]
        parts.append(
            f"{n} sample{'s' * (n != 1)} read a known answer source or their answer off a page "
            f"({how}; evidence in --format json)"
        )
    if overall["refused_requests"]:
        refused = sum(
            1 for s in block["samples"] if any(f.get("kind") == "refused" for f in s["flags"])
        )
        parts.append(
            f"the egress proxy refused {overall['refused_requests']} request"
            f"{'s' * (overall['refused_requests'] != 1)} to answer sources "
            f"in {refused} sample{'s' * (refused != 1)}"
        )
    if overall["unscanned_samples"]:
        n = overall["unscanned_samples"]
        media = sum(_media(s["flags"]) for s in block["samples"])
        parts.append(
            f"{n} sample{'s' * (n != 1)} saw {media} screenshot{'s' * (media != 1)} or other "
            "media the detection cannot read (no OCR)"
        )
    return "; ".join(parts) or None
