"""Question sets: -T exclude and -T answers, parsed, applied to the task, recorded and labelled."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspect_gaia import GaiaParameterError, gaia
from inspect_gaia.logs.provenance import GaiaProvenance, ProvenanceError, question_set_flag
from inspect_gaia.options import GaiaParams
from inspect_gaia.questions.dataset import split_levels
from inspect_gaia.questions.questionset import (
    QuestionSet,
    QuestionSetRecord,
    describe,
    parse_answers,
    parse_exclude,
)
from inspect_gaia.record import provenance_of
from tests.helpers import SANDBOX_IMAGE, gaia_record, parse_params
from tests.scenario import GAIA_TINY, LAGOON, TAVERN


def test_tavern_is_the_fixtures_id() -> None:
    assert split_levels(GAIA_TINY, "validation")[TAVERN] == 3


def test_exclude_inline_list_and_file(tmp_path: Path) -> None:
    assert parse_exclude(None) == ((), None)
    assert parse_exclude("a, b,a") == (("a", "b"), None)
    assert parse_exclude(["x", "y"]) == (("x", "y"), None)
    listed = tmp_path / "defective.txt"
    listed.write_text("# removed by a re-annotation\na  # typo in the question\n\nb, c\n")
    assert parse_exclude(str(listed)) == (("a", "b", "c"), str(listed))
    as_json = tmp_path / "ids.json"
    as_json.write_text('["a", "b"]')
    assert parse_exclude(str(as_json)) == (("a", "b"), str(as_json))


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("", "-T exclude names no task id"),
        ("missing/list.txt", "-T exclude: no file missing/list.txt"),
        ([], "-T exclude names no task id"),
    ],
)
def test_exclude_refusals(value: object, message: str) -> None:
    with pytest.raises(GaiaParameterError, match=message):
        parse_exclude(value)


def test_answers_as_json_object_or_lines(tmp_path: Path) -> None:
    whole = tmp_path / "answers.json"
    whole.write_text(json.dumps({"b": "2", "a": 1}))
    assert parse_answers(str(whole)) == ((("a", "1"), ("b", "2")), str(whole))
    lines = tmp_path / "answers.jsonl"
    lines.write_text('{"task_id": "a", "answer": "x"}\n\n{"task_id": "b", "Final answer": "y"}\n')
    assert parse_answers(str(lines))[0] == (("a", "x"), ("b", "y"))


def test_answers_refusals(tmp_path: Path) -> None:
    with pytest.raises(GaiaParameterError, match="must be a file of corrected answers"):
        parse_answers("nope.json")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"task_id": "a", "answer": "x"}\n{"id": "b"}\n')
    with pytest.raises(GaiaParameterError, match="bad.jsonl, line 2 is not"):
        parse_answers(str(bad))
    nested = tmp_path / "nested.json"
    nested.write_text('{"a": ["x"]}')
    with pytest.raises(GaiaParameterError, match="the answer of a in .* is not text"):
        parse_answers(str(nested))


def test_params_parse_both_and_refuse_answers_on_the_test_split(tmp_path: Path) -> None:
    answers = tmp_path / "a.json"
    answers.write_text('{"x": "1"}')
    params = parse_params(exclude="a,b", answers=str(answers))
    assert params.dataset.question_set == QuestionSet(("a", "b"), None, (("x", "1"),), str(answers))
    assert GaiaParams().dataset.question_set.empty
    with pytest.raises(GaiaParameterError, match="test split's are private"):
        parse_params(split="test", answers=str(answers))
    assert parse_params(split="test", exclude="a").dataset.question_set.exclude == ("a",)


def test_the_task_leaves_out_corrects_and_records(tmp_path: Path) -> None:
    answers = tmp_path / "corrected.json"
    answers.write_text(json.dumps({TAVERN: "Zorblat's Tavern"}))
    task = gaia(
        dataset_path=str(GAIA_TINY), image=SANDBOX_IMAGE, exclude=LAGOON, answers=str(answers)
    )
    ids = [str(s.id) for s in task.dataset]
    assert len(ids) == 6 and LAGOON not in ids
    (tavern,) = [s for s in task.dataset if s.id == TAVERN]
    assert tavern.target == "Zorblat's Tavern"
    assert (tavern.metadata or {})["original_answer"] == "Zorblat's Half-Moon Tavern!"
    assert task.metadata is not None
    recorded = task.metadata["gaia"]["question_set"]
    assert recorded["exclude"] == [LAGOON] and recorded["corrected"] == [TAVERN]
    assert recorded["answers"] == {TAVERN: "Zorblat's Tavern"}
    assert recorded["split_questions"] == {"1": 2, "2": 2, "3": 3}
    assert recorded["answers_source"] == str(answers) and recorded["exclude_source"] is None
    # the record reads back typed, and its fingerprint is the question set's
    record = GaiaProvenance.from_metadata(task.metadata)
    assert record is not None and record.question_set is not None
    fingerprint = record.question_set.fingerprint()
    assert fingerprint is not None
    assert fingerprint.startswith("exclude 1 (") and "answers 1 (" in fingerprint
    assert (
        fingerprint
        == parse_params(exclude=LAGOON, answers=str(answers)).dataset.question_set.fingerprint()
    )
    # at level 1 the excluded lagoon is one of the two questions; the tavern is not asked
    level1 = gaia(dataset_path=str(GAIA_TINY), image=SANDBOX_IMAGE, level=1, exclude=LAGOON)
    assert len(level1.dataset) == 1


def test_the_default_task_records_no_question_set() -> None:
    task = gaia(dataset_path=str(GAIA_TINY), image=SANDBOX_IMAGE)
    assert task.metadata is not None and "question_set" not in task.metadata["gaia"]
    record = GaiaProvenance.from_metadata(task.metadata)
    assert record is not None and record.question_set is None


def test_a_damaged_question_set_record_is_one_line_naming_the_field() -> None:
    record = gaia_record(exclude=LAGOON)
    record["question_set"]["split_questions"] = {"1": "two"}
    with pytest.raises(ProvenanceError, match=r"^gaia.question_set.split_questions.1 is 'two', "):
        GaiaProvenance.from_metadata({"gaia": record})
    record = gaia_record(exclude=LAGOON)
    record["question_set"]["fingerprint"] = "x"
    with pytest.raises(ProvenanceError, match="^gaia.question_set.fingerprint is not a field"):
        GaiaProvenance.from_metadata({"gaia": record})


def test_the_record_is_built_from_what_was_applied() -> None:
    with pytest.raises(ValueError, match="record the question set that apply_question_set applied"):
        provenance_of(
            parse_params(exclude=LAGOON),
            prompt="p",
            image_id=None,
            sandbox_provider="gaia-docker",
        )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"exclude": "not-an-id"}, "-T exclude names 1 task id(s) not in the validation split"),
        ({"exclude": [LAGOON, "x", "y", "z"]}, "x, y, z"),
    ],
)
def test_unknown_ids_are_refused(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(GaiaParameterError) as raised:
        gaia(dataset_path=str(GAIA_TINY), image=SANDBOX_IMAGE, **kwargs)  # type: ignore[arg-type]
    assert message in str(raised.value)


def test_excluding_everything_is_refused() -> None:
    with pytest.raises(GaiaParameterError, match="leaves out every selected question"):
        gaia(dataset_path=str(GAIA_TINY), image=SANDBOX_IMAGE, level=1, ids=LAGOON, exclude=LAGOON)


def test_labels() -> None:
    assert describe(147, 165, 9) == "question set: 147 of 165, 9 answers corrected"
    assert describe(160, 165, 1) == "question set: 160 of 165, 1 answer corrected"
    assert describe(160, 165, 0) == "question set: 160 of 165"
    recorded = QuestionSetRecord(
        exclude=("q0",),
        answers={"q1": "1", "q9": "9"},
        corrected=("q1", "q9"),
        split_questions={"1": 53, "2": 86, "3": 26},
    )
    default = GaiaProvenance.from_metadata({"gaia": gaia_record()})
    assert default is not None and default.question_set is None
    levels = [
        default.model_copy(update={"levels": (level,), "question_set": recorded})
        for level in (1, 2)
    ]
    # two level runs of one question set: of = the two levels' sizes; q9 was never answered
    assert question_set_flag(levels, ["q1", "q2"]) == "question set: 2 of 139, 1 answer corrected"
    assert question_set_flag([default], ["q1"]) is None
