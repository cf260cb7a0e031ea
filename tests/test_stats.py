"""Statistics of GAIA runs: intervals, epochs, tokens and cost, prices, the frontier."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from inspect_ai.model import ModelUsage
from inspect_ai.scorer import CORRECT, INCORRECT, SampleScore, Score, stderr

from inspect_gaia import GaiaError
from inspect_gaia.logs.results import SampleResult
from inspect_gaia.logs.stats import (
    level_stats,
    mean_stderr,
    pareto_frontier,
    priced,
    read_prices,
    summarise,
    wilson_interval,
)

MODEL = "openai/gpt-4o"


def sample(
    task_id: str,
    level: int,
    epoch: int,
    correct: bool,
    *,
    tokens: tuple[int, int] = (100, 10),
    cost: float | None = None,
    seconds: float = 2.0,
    **extra: object,
) -> SampleResult:
    usage = ModelUsage(
        input_tokens=tokens[0],
        output_tokens=tokens[1],
        total_tokens=sum(tokens),
        total_cost=cost,
        **extra,  # type: ignore[arg-type]
    )
    return SampleResult(
        task_id=task_id,
        level=level,
        target="t",
        answer="t" if correct else "x",
        correct=correct,
        epoch=epoch,
        usage={MODEL: usage},
        working_time=seconds,
    )


# Three epochs of four questions: a (L1) right 3/3, b (L1) right 1/3 (epoch 2), c (L2) 0/3,
# d (L2) right 2/3 (epochs 1 and 3).
RIGHT = {"a": (1, 1, 1), "b": (0, 1, 0), "c": (0, 0, 0), "d": (1, 0, 1)}
LEVEL = {"a": 1, "b": 1, "c": 2, "d": 2}
EPOCHS = [
    sample(q, LEVEL[q], epoch, bool(verdicts[epoch - 1]), cost=0.01)
    for q, verdicts in RIGHT.items()
    for epoch in (1, 2, 3)
]


@pytest.mark.parametrize(
    ("p", "n", "expected"),
    [
        # Reference values (e.g. statsmodels' proportion_confint(..., method="wilson")).
        (0.0, 10, (0.0, 0.2775)),
        (1.0, 10, (0.7225, 1.0)),
        (0.5, 4, (0.1500, 0.8500)),
        (0.3, 100, (0.2189, 0.3958)),
    ],
)
def test_wilson_interval(p: float, n: int, expected: tuple[float, float]) -> None:
    low, high = wilson_interval(p, n)
    assert (low, high) == pytest.approx(expected, abs=1e-4)


def test_wilson_interval_of_nothing_is_nan() -> None:
    assert all(math.isnan(v) for v in wilson_interval(0.0, 0))


def test_mean_stderr_is_inspects_stderr() -> None:
    values = [1.0, 0.0, 1.0, 1.0, 0.0, 1 / 3]
    scores = [
        SampleScore(score=Score(value=v), sample_id=i, sample_metadata={})
        for i, v in enumerate(values)
    ]
    assert mean_stderr(values) == pytest.approx(float(stderr()(scores)))  # type: ignore[arg-type]
    assert mean_stderr([1.0]) == 0.0


def test_level_stats_over_epochs() -> None:
    rows = {row.level: row for row in summarise(EPOCHS)}
    assert list(rows) == ["1", "2", "all"]
    overall = rows["all"]
    assert (overall.questions, overall.epochs, overall.samples, overall.correct) == (4, 3, 12, 6)
    # per-question means 1, 1/3, 0, 2/3 -> 0.5; epochs: 2/4, 2/4, 2/4
    assert overall.accuracy == pytest.approx(0.5)
    assert (overall.epoch_accuracy_min, overall.epoch_accuracy_max) == (0.5, 0.5)
    assert overall.pass_at_k == 0.75  # a, b, d right at least once
    assert overall.pass_hat_k == 0.25  # only a every time
    assert overall.consistent == 0.5  # a and c
    assert overall.stderr == pytest.approx(mean_stderr([1.0, 1 / 3, 0.0, 2 / 3]))
    assert (overall.ci_low, overall.ci_high) == pytest.approx(wilson_interval(0.5, 4))
    level1, level2 = rows["1"], rows["2"]
    assert level1.accuracy == pytest.approx(2 / 3) and level2.accuracy == pytest.approx(1 / 3)
    # level 1 per epoch: 1/2, 2/2, 1/2; level 2: 1/2, 0/2, 1/2
    assert (level1.epoch_accuracy_min, level1.epoch_accuracy_max) == (0.5, 1.0)
    assert (level2.epoch_accuracy_min, level2.epoch_accuracy_max) == (0.0, 0.5)
    assert (level1.pass_at_k, level1.pass_hat_k, level1.consistent) == (1.0, 0.5, 0.5)


def test_tokens_time_and_cost() -> None:
    overall = summarise(EPOCHS)[-1]
    assert (overall.input_tokens, overall.output_tokens, overall.total_tokens) == (1200, 120, 1320)
    assert overall.tokens_per_question == 110
    assert overall.seconds_per_question == 2.0
    assert overall.cost == pytest.approx(0.12)
    assert overall.cost_per_question == pytest.approx(0.01)
    assert overall.cost_per_correct == pytest.approx(0.12 / 6)
    assert overall.as_dict()["cost_per_correct"] == pytest.approx(0.02)


def test_reasoning_and_cache_tokens_are_summed() -> None:
    rich = sample(
        "a",
        1,
        1,
        True,
        reasoning_tokens=7,
        input_tokens_cache_read=40,
        input_tokens_cache_write=3,
    )
    row = level_stats("all", [rich, rich])
    assert (row.reasoning_tokens, row.cache_read_tokens, row.cache_write_tokens) == (14, 80, 6)


def test_cost_is_unknown_when_some_call_has_no_price() -> None:
    unpriced = sample("e", 1, 1, True, cost=None)
    assert level_stats("all", [*EPOCHS, unpriced]).cost is None
    # a sample that never called the model (it errored first) costs nothing, known or not
    silent = SampleResult(task_id="f", level=1, target="t", answer=None, correct=False)
    assert level_stats("all", [*EPOCHS, silent]).cost == pytest.approx(0.12)
    nothing_right = level_stats("all", [sample("c", 2, 1, False, cost=0.5)])
    assert nothing_right.cost == 0.5 and nothing_right.cost_per_correct is None


def test_ungraded_split_has_no_accuracy() -> None:
    row = level_stats("all", EPOCHS, graded=False)
    assert row.accuracy is None and row.ci_low is None and row.pass_at_k is None
    assert row.correct == 0 and row.cost == pytest.approx(0.12)
    assert row.as_dict()["cost_per_correct"] is None


def test_failures_are_counted_and_wrong() -> None:
    errored = SampleResult("e", 1, "t", None, False, error="boom")
    limited = SampleResult("f", 1, "t", None, False, limit="cost")
    row = level_stats("1", [errored, limited, sample("a", 1, 1, True)])
    assert (row.errored, row.limit_hit) == (1, 1) and row.accuracy == pytest.approx(1 / 3)


def test_pareto_frontier() -> None:
    points = [(1.0, 0.3), (2.0, 0.5), (3.0, 0.4), (0.5, 0.3), (4.0, 0.6), (2.0, 0.45)]
    assert pareto_frontier(points) == [3, 1, 4]
    assert pareto_frontier([]) == []


def test_read_prices_and_price_a_sample(tmp_path: Path) -> None:
    prices_file = tmp_path / "prices.yaml"
    prices_file.write_text(
        f"{MODEL}:\n  input: 2.5\n  output: 10\n  input_cache_write: 0\n  input_cache_read: 1.25\n"
    )
    prices = read_prices(prices_file)
    one = sample("a", 1, 1, True, tokens=(1000, 200), input_tokens_cache_read=400)
    cost = priced(one, prices).cost
    assert cost == pytest.approx((1000 * 2.5 + 200 * 10 + 400 * 1.25) / 1e6)
    # models the prices do not name keep the log's cost
    other = priced(sample("a", 1, 1, True, cost=0.3), {"x/y": prices[MODEL]})
    assert other.cost == 0.3


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "holds no prices"),
        ("[1, 2]", "holds no prices"),
        ("m:\n  input: 1\n", "the prices of m are missing output —"),
        ("m: {input: x, output: 1, input_cache_write: 0, input_cache_read: 0}", "check input"),
        ("m: [unclosed", "cannot read prices"),
    ],
)
def test_bad_prices_are_one_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "prices.yaml"
    path.write_text(text)
    with pytest.raises(GaiaError, match=message.replace("(", r"\(")) as raised:
        read_prices(path)
    assert "\n" not in str(raised.value)


def test_prices_of_input_and_output_only_take_the_input_price_for_the_cache(
    tmp_path: Path,
) -> None:
    """Issue #40: `{input: 2.50, output: 10.00}` was refused as "not valid"."""
    path = tmp_path / "prices.yaml"
    path.write_text("openai-api/fake/m: {input: 2.50, output: 10.00}\n")
    notes: list[str] = []
    (cost,) = read_prices(path, notes).values()
    assert (cost.input, cost.output, cost.input_cache_write, cost.input_cache_read) == (
        2.5,
        10.0,
        2.5,
        2.5,
    )
    assert notes == [
        f"note: openai-api/fake/m has no input_cache_write or input_cache_read price in {path}: "
        "taken as its input price"
    ]


def test_verdicts_are_values_inspect_knows() -> None:
    """The scorer writes C/I; SampleResult.correct reads CORRECT only."""
    assert (CORRECT, INCORRECT) == ("C", "I")
