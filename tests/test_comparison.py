"""``compare_document``: two sides already read, one answer key, the whole comparison as data.

No log, no snapshot and no CLI: the sides and the key are built here (``test_cli_compare`` runs the
command on real logs).
"""

from __future__ import annotations

from typing import Any

import pytest

from inspect_gaia import GaiaError
from inspect_gaia.logs.comparison import COMPARE_SCHEMA, compare_document
from inspect_gaia.logs.results import SampleResult
from inspect_gaia.logs.sides import AnswerKey, Question, Side

KEY = AnswerKey(
    questions={
        "q1": Question(1, "4"),
        "q2": Question(1, "Paris"),
        "q3": Question(2, "7"),
        "q4": Question(2, "blue"),
    },
    split_ids=frozenset({"q1", "q2", "q3", "q4", "q5"}),
    source="a test key",
)
SAW_THE_ANSWER = ({"kind": "answer_source", "excerpt": "huggingface.co/datasets/gaia"},)


def sample(
    task_id: str, answer: str, correct: bool, epoch: int = 1, contamination: tuple[Any, ...] = ()
) -> SampleResult:
    """A sample as a side recorded it: its own verdict, and no target (the key has the answers)."""
    level = KEY.questions[task_id].level if task_id in KEY.questions else 1
    return SampleResult(
        task_id, level, "", answer, correct, epoch=epoch, contamination=contamination
    )


def side(path: str, *samples: SampleResult, harness: str = "evalscope") -> Side:
    return Side(path, harness, f"model-{path}", samples)


def by_level(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {row["level"]: row for row in document["levels"]}


def test_both_sides_are_rescored_on_the_questions_both_answered() -> None:
    a = side(
        "a",
        sample("q1", "4", True),
        sample("q2", "paris", True),  # the official scorer ignores case: right
        sample("q3", "7", True),
        sample("q4", "red", True),  # A's own scorer said right; the key says wrong
    )
    b = side("b", sample("q1", "4", True), sample("q2", "Rome", False), sample("q3", "8", False))
    document = compare_document(a, b, KEY)
    assert document["schema_version"] == COMPARE_SCHEMA
    assert document["answers"] == {
        "split": "validation",
        "source": "a test key",
        "question_set": None,
    }
    levels = by_level(document)
    assert list(levels) == ["1", "2", "all"]
    everything = levels["all"]
    assert everything["n"] == 3 and (everything["a_lacks"], everything["b_lacks"]) == (0, 1)
    assert everything["a_accuracy"] == 1.0 and everything["b_accuracy"] == pytest.approx(1 / 3)
    assert (everything["a_only"], everything["b_only"]) == (2, 0)
    assert levels["2"]["a_reported"] == 1.0  # each side's own verdicts, beside the re-scored ones
    assert everything["agreement"] == pytest.approx(1 / 3)
    assert document["only_in_one"] == {"a": ["q4"], "b": []}
    assert [d["task_id"] for d in document["differences"]] == ["q2", "q3"]
    assert document["differences"][0] == {
        "task_id": "q2",
        "level": "1",
        "target": "Paris",
        "a_answer": "paris",
        "a_score": 1.0,
        "b_answer": "Rome",
        "b_score": 0.0,
    }
    assert document["a"]["questions"] == 4 and document["b"]["questions"] == 3
    assert str(document["verdict"]).startswith("A − B = +0.667")


def test_epochs_are_means_or_the_one_asked_for() -> None:
    a = side("a", sample("q1", "4", True, 1), sample("q1", "5", False, 2))
    b = side("b", sample("q1", "4", True))
    mean = by_level(compare_document(a, b, KEY))["all"]
    assert mean["a_accuracy"] == 0.5 and mean["test"] == "paired-t"
    second = compare_document(a, b, KEY, epoch=2)
    assert by_level(second)["all"]["a_accuracy"] == 0.0
    assert (second["a"]["epochs"], second["a"]["epoch"], second["b"]["epoch"]) == (2, 2, None)
    with pytest.raises(GaiaError, match="^a has no epoch 3 — its epochs are 1, 2$"):
        compare_document(a, b, KEY, epoch=3)


def test_flagged_samples_counted_wrong_only_for_a_side_that_records_flags() -> None:
    flagged = sample("q1", "4", True, contamination=SAW_THE_ANSWER)
    a = side("a", flagged, sample("q2", "Paris", True), harness="inspect_gaia")
    b = side("b", sample("q1", "4", True), sample("q2", "Paris", True))
    document = compare_document(a, b, KEY)
    everything = by_level(document)["all"]
    assert everything["a_accuracy"] == 1.0 and everything["a_accuracy_flagged_wrong"] == 0.5
    assert everything["b_accuracy_flagged_wrong"] is None
    assert document["a"]["contamination"] is not None and document["b"]["contamination"] is None
    assert document["a"]["flags"] == [document["a"]["contamination"]["note"]]
    assert document["a"]["flags"][0].startswith("1 sample read a known answer source")


def test_sides_that_cannot_be_compared_are_refused() -> None:
    b = side("b", sample("q1", "4", True))
    with pytest.raises(GaiaError, match="^a and b share no question of the answer key"):
        compare_document(side("a", sample("q2", "Paris", True)), b, KEY)
    with pytest.raises(GaiaError, match="^1 task id\\(s\\) of a are not in the validation split"):
        compare_document(side("a", sample("elsewhere", "1", True)), b, KEY)
