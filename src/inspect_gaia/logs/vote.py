"""Majority vote over a question's answers across epochs: ``maj@k``.

The number majority-vote leaderboard entries report (e.g. OWL's 58.18, over 3 runs). Each
question's answers are normalised the way the official scorer reads them for that question's
ground truth (so ``12,500`` and ``12500`` are one vote when the answer is a number, ``Sea Gull``
and ``seagull`` one vote when it is a string), the most frequent normalised answer wins, and that
answer is scored once with the official scorer.

* Ties: the tied answer given in the earliest epoch wins (never the right one by preference).
* An empty answer (an errored sample, or one that never answered) does not vote; a question with no
  answer in any epoch counts as wrong.

inspect's ``mode`` epoch reducer is different: it votes over verdicts (right/wrong), not answers,
so two different wrong answers outvote one right one only here.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from ..scoring.official import normalize_number_str, normalize_str, question_scorer, split_string


def is_number(text: str) -> bool:
    """Whether the official scorer reads ``text`` as a number (its ``is_float``)."""
    try:
        float(text)
    except ValueError:
        return False
    return True


def _number_or_text(answer: str) -> Hashable:
    number = normalize_number_str(answer)
    # Not a number: the official scorer reads it as inf, but two different words are two votes.
    return number if number != float("inf") else normalize_str(answer)


def normalised(answer: str, target: str) -> Hashable:
    """``answer`` as the official scorer reads it against ``target``: equal keys, equal verdicts."""
    if is_number(target):
        return ("number", _number_or_text(answer))
    if any(char in target for char in (",", ";")):
        truths: list[str | None] = list(split_string(target))
        items = split_string(answer)
        truths += [None] * (len(items) - len(truths))
        return (
            "list",
            len(items),
            tuple(
                _number_or_text(item)
                if truth is not None and is_number(truth)
                else normalize_str(item, remove_punct=False)
                for item, truth in zip(items, truths, strict=False)
            ),
        )
    return ("string", normalize_str(answer))


def majority_answer(answers: Sequence[tuple[int, str | None]], target: str) -> str | None:
    """The winning answer among ``(epoch, answer)`` pairs, or None when no epoch answered."""
    votes: dict[Hashable, tuple[int, int, str]] = {}
    for epoch, answer in sorted(answers, key=lambda pair: pair[0]):
        if not answer or not answer.strip():
            continue
        key = normalised(answer, target)
        count, first, text = votes.get(key, (0, epoch, answer))
        votes[key] = (count + 1, first, text)
    if not votes:
        return None
    # most votes first, then the earliest epoch
    _, _, text = min(votes.values(), key=lambda vote: (-vote[0], vote[1]))
    return text


def majority_correct(answers: Sequence[tuple[int, str | None]], target: str) -> bool:
    """Whether the question's majority answer is right under the official scorer."""
    winner = majority_answer(answers, target)
    return winner is not None and question_scorer(winner, target)[0]
