"""Near misses: each rule, its order, and what is never a near miss."""

from __future__ import annotations

import pytest

from inspect_gaia.logs.nearmiss import RULES, near_miss_rule, near_misses


@pytest.mark.parametrize(
    ("answer", "target", "rule"),
    [
        ("48.671", "48671", "thousands_separators"),
        ("48 671", "48671", "thousands_separators"),
        ("48\u202f671", "48671", "thousands_separators"),
        ("1.204,7", "1204.7", "thousands_separators"),
        ("92 days", "92", "units_currency"),
        ("€1,204.7", "1204.7", "units_currency"),
        ("14.14 m³", "14.14", "units_currency"),
        ("USD 30", "30", "units_currency"),
        ("3 km, 8 km, 11 km", "3, 8, 11", "units_currency"),
        ("St Petersburg, Oslo", "St. Petersburg, Oslo", "case_spaces"),
        ("the harbour mill renovation", "Harbour Mill Renovation", "articles"),
        ("Bartholomew, Ilse, Osric, Quentin", "Ilse, Bartholomew, Quentin, Osric", "list_order"),
        ("oslo; St. Petersburg", "St. Petersburg, Oslo", "list_order"),
    ],
)
def test_each_rule(answer: str, target: str, rule: str) -> None:
    assert near_miss_rule(answer, target) == rule


@pytest.mark.parametrize(
    ("answer", "target"),
    [
        ("48671", "48671"),  # right: not a miss at all
        ("12,500", "12500"),  # right already (the official scorer strips commas)
        ("1298", "1299"),  # simply wrong
        ("1204.67", "1204.7"),  # a different number
        ("12047", "1204.7"),  # punctuation inside numbers is never dropped
        ("12 million", "12"),  # a magnitude is not a unit
        ("12k", "12"),
        ("Ilse, Bartholomew, Quentin", "Ilse, Bartholomew, Quentin, Osric"),  # an item missing
        ("", "x"),
        (None, "x"),
    ],
)
def test_not_near_misses(answer: str | None, target: str) -> None:
    assert near_miss_rule(answer, target) is None


def test_rules_are_tried_in_the_documented_order() -> None:
    assert RULES == (
        "thousands_separators",
        "units_currency",
        "case_spaces",
        "articles",
        "list_order",
    )
    # "48 671" is also right once spaces go: the earlier rule is the one reported
    assert near_miss_rule("48 671", "48671") == "thousands_separators"


def test_near_misses_are_listed_per_sample() -> None:
    found = near_misses(
        [
            ("q1", 1, 1, "92 days", "92"),
            ("q1", 1, 2, "91", "92"),
            ("q2", 2, 1, "b, a", "a, b"),
        ]
    )
    assert [(m.task_id, m.epoch, m.rule) for m in found] == [
        ("q1", 1, "units_currency"),
        ("q2", 1, "list_order"),
    ]
