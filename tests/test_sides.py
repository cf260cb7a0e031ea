"""Reading a side of `compare` and the answer key every side is scored against."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspect_gaia import GaiaError
from inspect_gaia.logs.sides import answer_key, read_side
from inspect_gaia.questions.questionset import QuestionSet
from tests.helpers import RUN_SAMPLES, write_log
from tests.scenario import EVALSCOPE_RUN, GAIA_MINI, GAIA_TINY

FIXTURE = Path(__file__).parent / "fixtures" / "inspect-evals-gaia" / "gaia-mini-4-C.eval"
MINI_DAYS = "9089766c-0197-5e6b-b154-0439efea3ee3"


def test_each_kind_of_side() -> None:
    evalscope = read_side(str(EVALSCOPE_RUN))
    assert (evalscope.harness, evalscope.model, len(evalscope.samples)) == (
        "evalscope",
        "fake-gaia",
        9,
    )
    inspect_evals = read_side(str(FIXTURE))
    assert inspect_evals.harness == "inspect_evals" and inspect_evals.logs == (str(FIXTURE),)
    assert inspect_evals.flags[0] == "another harness: inspect_evals gaia 4-C"


def test_a_folder_of_two_models_is_not_one_side(tmp_path: Path) -> None:
    write_log(tmp_path / "a.eval", RUN_SAMPLES)
    write_log(tmp_path / "b.eval", RUN_SAMPLES, model="openai/gpt-4o")
    with pytest.raises(GaiaError, match="holds runs of 2 models"):
        read_side(str(tmp_path))


def test_a_test_split_run_has_nothing_to_score(tmp_path: Path) -> None:
    log = write_log(tmp_path / "t.eval", RUN_SAMPLES, params={"split": "test"})
    with pytest.raises(GaiaError, match="is a test-split run: its answers are private"):
        read_side(str(log))


def test_the_key_from_a_snapshot_with_a_question_set() -> None:
    sides = [read_side(str(EVALSCOPE_RUN))]
    key = answer_key(sides, str(GAIA_MINI), QuestionSet(exclude=(MINI_DAYS,)))
    assert key.source == f"snapshot {GAIA_MINI}" and len(key.questions) == 8
    assert MINI_DAYS in key.split_ids and MINI_DAYS not in key.questions
    assert key.question_set == "question set: 8 of 9"
    memo = key.questions["e22f0425-9ca7-5328-a25e-0d40af1e246a"]
    assert (memo.level, memo.answer) == (3, "Harbour Mill Renovation")
    assert memo.metadata["file_name"].endswith(".pdf")


def test_sides_that_disagree_on_an_answer(tmp_path: Path, isolated_cache: Path) -> None:
    other = write_log(  # a hub run, and no snapshot in the cache: the runs' own targets count
        tmp_path / "o.eval",
        [{"id": MINI_DAYS, "level": 1, "target": "93", "answer": "93", "value": "C"}],
        params={"dataset_path": None},
    )
    sides = [read_side(str(EVALSCOPE_RUN)), read_side(str(other))]
    with pytest.raises(GaiaError, match=f"the runs disagree on the answer of {MINI_DAYS}"):
        answer_key(sides, None, QuestionSet())


def test_the_key_from_the_snapshot_a_run_recorded(tmp_path: Path, isolated_cache: Path) -> None:
    log = write_log(
        tmp_path / "t.eval", RUN_SAMPLES
    )  # its record names gaia-tiny, a local snapshot
    key = answer_key([read_side(str(log))], None, QuestionSet())
    assert key.source == f"snapshot {GAIA_TINY}" and len(key.questions) == 7
