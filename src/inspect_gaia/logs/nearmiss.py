"""Near misses: wrong answers the official scorer would accept after a looser normalisation.

A near miss is reported, never scored: the official verdict stands. Each rule below rewrites the
answer (and, where it says so, the ground truth) and the official scorer judges again; the first
rule, in this order, under which a wrong answer becomes right is the one reported.

* ``thousands_separators``: a number grouped by ``.``, ``'``, ``’``, ``_`` or a space (also no-break
  and thin spaces) loses the grouping, and a decimal comma after ``.`` grouping becomes a point:
  ``48.671`` or ``48 671`` for 48671, ``1.204,7`` for 1204.7.
* ``units_currency``: currency symbols (``$ € £ ¥ ₹ ₩ ₽ ¢``) and ISO codes (``USD``, ``EUR``, …)
  go, and so does a unit right after a number (``92 days``, ``14.14 m³``, ``30 °C``), but never a
  magnitude word (thousand, million, billion, trillion, k, bn, mn), which changes the number.
* ``case_spaces``: case, every space, and punctuation other than decimal points and the list
  separators ``,`` ``;`` are ignored in the answer and the ground truth alike — which the official
  scorer already does for a plain string, but not inside a number (``12 500``) or in the items of a
  list, whose punctuation it keeps (``St Petersburg`` for ``St. Petersburg``).
* ``articles``: the English articles a, an, the before a word are dropped from both
  (``The Harbour Mill`` for ``Harbour Mill``); the official prompt asks for none.
* ``list_order``: the answer holds the items of a list ground truth, each matched by the official
  rule for list items, in another order.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..scoring.official import normalize_number_str, normalize_str, question_scorer, split_string
from .vote import is_number

RULES: tuple[str, ...] = (
    "thousands_separators",
    "units_currency",
    "case_spaces",
    "articles",
    "list_order",
)

_GROUPED = re.compile(
    r"(?<![\d.,])\d{1,3}(?:(?P<sep>[.'’_ \u00a0\u202f\u2009])\d{3})(?:(?P=sep)\d{3})*"
    r"(?P<decimal>,\d+)?(?![\d])"
)
_CURRENCY = re.compile(r"[$€£¥₹₩₽¢]|\b(?:USD|EUR|GBP|JPY|CNY|RMB|INR|CHF|CAD|AUD)\b", re.I)
_MAGNITUDE = r"(?:thousand|million|billion|trillion|bn|mn|k)\b"
_UNIT = re.compile(
    rf"(?<=\d)\s*(?!{_MAGNITUDE})(?:°\s*[A-Za-z]?|[A-Za-zµ%/²³°]+(?:[\s/][A-Za-z²³]+)*)\.?\s*$",
    re.I,
)
_ARTICLE = re.compile(r"\b(?:a|an|the)\s+(?=\w)", re.I)
"""An article before a word (a lone ``a`` is a list item, not an article)."""


def _ungroup(text: str) -> str:
    def plain(match: re.Match[str]) -> str:
        digits = re.sub(r"[.'’_ \u00a0\u202f\u2009]", "", match.group(0).split(",")[0])
        decimal = match.group("decimal")
        return digits + ("." + decimal[1:] if decimal and match.group("sep") == "." else "")

    return _GROUPED.sub(plain, text)


def _no_units(text: str, target: str) -> str:
    text = _CURRENCY.sub("", text).strip()
    if is_number(target) or not any(c in target for c in ",;"):
        return _UNIT.sub("", text).strip()
    return ",".join(_UNIT.sub("", item.strip()).strip() for item in split_string(text))


def _loose(text: str) -> str:
    text = re.sub(r"\s", "", text).lower()
    text = re.sub(r"(?<!\d)\.|\.(?!\d)", "", text)
    return re.sub(r"[^\w.,;\-]", "", text)


def _no_articles(text: str) -> str:
    return re.sub(r"\s+", " ", _ARTICLE.sub("", text)).strip(" ,;")


def _item_matches(answer: str, truth: str) -> bool:
    """The official scorer's rule for one list item."""
    if is_number(truth):
        return normalize_number_str(answer) == float(truth)
    return normalize_str(answer, remove_punct=False) == normalize_str(truth, remove_punct=False)


def _reordered(answer: str, target: str) -> bool:
    if not any(char in target for char in (",", ";")):
        return False
    truths, items = split_string(target), split_string(answer)
    if len(truths) != len(items):
        return False
    unmatched = list(truths)
    for item in items:
        match = next((t for t in unmatched if _item_matches(item, t)), None)
        if match is None:
            return False
        unmatched.remove(match)
    return True


_REWRITES: dict[str, Callable[[str, str], tuple[str, str]]] = {
    "thousands_separators": lambda answer, target: (_ungroup(answer), target),
    "units_currency": lambda answer, target: (_no_units(answer, target), target),
    "case_spaces": lambda answer, target: (_loose(answer), _loose(target)),
    "articles": lambda answer, target: (_no_articles(answer), _no_articles(target)),
}


def near_miss_rule(answer: str | None, target: str) -> str | None:
    """The first rule under which a wrong ``answer`` would be right, or None.

    A right answer, an empty one, or one no rule rescues gives None.
    """
    if not answer or not answer.strip() or question_scorer(answer, target)[0]:
        return None
    for rule in RULES:
        if rule == "list_order":
            if _reordered(answer, target):
                return rule
            continue
        loose_answer, loose_target = _REWRITES[rule](answer, target)
        if loose_target and question_scorer(loose_answer, loose_target)[0]:
            return rule
    return None


@dataclass(frozen=True)
class NearMiss:
    """One wrong sample that a looser normalisation would accept."""

    task_id: str
    level: int
    epoch: int
    answer: str
    target: str
    rule: str


def near_misses(samples: Sequence[tuple[str, int, int, str | None, str]]) -> list[NearMiss]:
    """The near misses among ``(task_id, level, epoch, answer, target)`` of graded samples."""
    found = []
    for task_id, level, epoch, answer, target in samples:
        rule = near_miss_rule(answer, target)
        if rule is not None and answer is not None:
            found.append(NearMiss(task_id, level, epoch, answer, target, rule))
    return found
