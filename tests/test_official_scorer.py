"""The official GAIA rules as ported: verdicts, explanations, and never raising."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from inspect_gaia import question_scorer
from inspect_gaia.scoring.official import normalize_number_str, normalize_str, split_string

# (model answer, ground truth, official verdict)
OFFICIAL = [
    # numbers: $ % , are stripped, then compared as floats
    ("12,500", "12500", True),
    ("$12500", "12500", True),
    ("45%", "45", True),
    ("12500.0", "12500", True),
    ("1.5e3", "1500", True),
    ("12 500", "12500", False),  # a space is not stripped
    ("12500 dollars", "12500", False),
    ("twelve", "12", False),
    ("0.1", "0.10", True),
    ("", "0", False),
    # lists: split on , and ; then compared element-wise, in order
    ("a, b, c", "a, b, c", True),
    ("a;b;c", "a, b, c", True),
    ("c, b, a", "a, b, c", False),
    ("a, b", "a, b, c", False),
    ("1, 2,000, 3", "1, 2000, 3", False),  # the comma splits 2,000 first
    ("3, 8, 11", "3, 8, 11", True),
    ("3.0, 8, 11", "3, 8, 11", True),
    ("St. Petersburg, Oslo", "St Petersburg, Oslo", False),  # punctuation kept in lists
    ("NEW york, oslo", "New York, Oslo", True),
    # strings: whitespace, case and punctuation dropped
    ("sea gull", "seagull", True),
    ("Seagull!", "seagull", True),
    ("It's a dog-eat-dog world!", "Its a dog eat dog world", True),
    ("FINAL ANSWER: Harbour Mill", "Harbour Mill", False),
    ("Harbour  Mill\n", "harbour mill", True),
    ("café", "cafe", False),  # no accent folding
    (None, "None", True),  # None is scored as the string "None"
]


@pytest.mark.parametrize(("answer", "truth", "verdict"), OFFICIAL)
def test_question_scorer_matches_official_rules(
    answer: str | None, truth: str, verdict: bool
) -> None:
    correct, explanation = question_scorer(answer, truth)
    assert correct is verdict
    assert explanation.startswith("Evaluated ")


@pytest.mark.parametrize(
    ("truth", "kind"),
    [("42", "as a number"), ("a, b", "as a comma separated list"), ("x", "as a string")],
)
def test_explanation_names_the_rule(truth: str, kind: str) -> None:
    assert kind in question_scorer("y", truth)[1]


def test_official_helpers() -> None:
    assert normalize_number_str("$1,234.5%") == 1234.5
    assert normalize_number_str("n/a") == float("inf")
    assert split_string("a,b;c") == ["a", "b", "c"]
    assert split_string("a|b", ["|"]) == ["a", "b"]
    assert normalize_str(" Sea  Gull! ") == "seagull"
    assert normalize_str(" Sea  Gull! ", remove_punct=False) == "seagull!"


@pytest.mark.parametrize(
    "answer",
    [
        "",
        None,
        "x" * 5_000_000,
        "1" * 100_000,
        "\x00\x01\x1b[31m",
        "nan",
        "inf",
        b"\xff\xfe",
        3.0,
        ["a", ["b"]],
    ],
)
@pytest.mark.parametrize("truth", ["12500", "a, b", "Harbour Mill", "nan", ""])
def test_never_raises(answer: Any, truth: str) -> None:
    correct, explanation = question_scorer(answer, truth)
    assert isinstance(correct, bool)
    assert len(explanation) < 1_000  # a huge answer is not copied into the log


@given(st.text(), st.text())
def test_never_raises_on_any_strings(answer: str, truth: str) -> None:
    assert isinstance(question_scorer(answer, truth)[0], bool)


@given(st.integers(min_value=0, max_value=10**12))
def test_thousands_separators_are_accepted(value: int) -> None:
    assert question_scorer(f"{value:,}", str(value))[0]
    assert question_scorer(f"${value}", str(value))[0]


@given(
    st.lists(
        st.from_regex(r"[A-Za-z][A-Za-z ]{0,10}[A-Za-z]", fullmatch=True), min_size=2, max_size=5
    )
)
def test_lists_compare_in_order(items: list[str]) -> None:
    truth = ", ".join(items)
    assert question_scorer("; ".join(item.upper() for item in items), truth)[0]
    reordered = items[1:] + items[:1]
    if [normalize_str(i, False) for i in reordered] != [normalize_str(i, False) for i in items]:
        assert not question_scorer(", ".join(reordered), truth)[0]
