"""maj@k: the most frequent normalised answer over epochs, scored once; ties to the earliest epoch."""

from __future__ import annotations

from inspect_gaia.logs.vote import majority_answer, majority_correct, normalised


def test_answers_are_normalised_as_the_scorer_reads_them() -> None:
    assert normalised("12,500", "12500") == normalised("$12500", "12500")
    assert normalised("Sea Gull", "seagull") == normalised("seagull!", "seagull")
    assert normalised("a; b", "a, b") == normalised("A ,B", "a, b")
    # two different words against a number are two votes, not one "not a number"
    assert normalised("many", "12") != normalised("several", "12")


def test_majority_over_three_epochs() -> None:
    # two spellings of one right number outvote one wrong answer
    answers = [(1, "12,500"), (2, "12000"), (3, "12500")]
    assert majority_answer(answers, "12500") == "12,500"
    assert majority_correct(answers, "12500")
    # a majority of wrong answers wins, even when one epoch was right: maj@3 is not pass@3
    assert not majority_correct([(1, "Paris"), (2, "Lyon"), (3, "lyon")], "Paris")


def test_a_tie_goes_to_the_earliest_epoch() -> None:
    # 2 epochs, 2 answers: epoch 1's wins whichever is right
    assert majority_answer([(2, "Lyon"), (1, "Paris")], "Paris") == "Paris"
    assert not majority_correct([(1, "Lyon"), (2, "Paris")], "Paris")
    # a 2-2 tie among 4 epochs: the answer first given in epoch 1
    four = [(1, "7"), (2, "8"), (3, "8"), (4, "7.0")]
    assert majority_answer(four, "8") == "7" and not majority_correct(four, "8")


def test_empty_answers_do_not_vote() -> None:
    assert majority_answer([(1, None), (2, ""), (3, "blue")], "Blue") == "blue"
    assert majority_answer([(1, None), (2, "  ")], "Blue") is None
    assert not majority_correct([(1, None)], "Blue")
