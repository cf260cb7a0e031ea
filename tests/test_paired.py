"""McNemar's exact test, Tango's interval and the paired t-test: by hand, then against scipy."""

from __future__ import annotations

import math
import random

import pytest
from scipy import stats

from inspect_gaia.logs.paired import (
    MCNEMAR,
    PAIRED_T,
    TANGO,
    compare_paired,
    mcnemar_exact,
    paired_t,
    t_quantile,
    tango_interval,
    verdict,
)

Z2 = 1.959963984540054**2
"""z² at 95%: Tango's bounds below are the closed forms of its score equation for these tables."""


def table(both: int, only_a: int, only_b: int, neither: int) -> tuple[list[int], list[int]]:
    """Per-question verdicts of two sides with the given 2x2 counts."""
    a = [1] * both + [1] * only_a + [0] * only_b + [0] * neither
    b = [1] * both + [0] * only_a + [1] * only_b + [0] * neither
    return a, b


def test_no_discordant_question() -> None:
    # 5 right on both sides, 5 wrong on both: nothing favours either side.
    result = compare_paired(*table(5, 0, 0, 5))
    assert (result.difference, result.a_only, result.b_only) == (0.0, 0, 0)
    assert result.p_value == 1.0 and not result.significant
    # Tango with n12 = n21 = 0: the score is -nΔ/sqrt(nΔ(1-Δ)), so the bounds are ±z²/(n+z²),
    # not the zero-width interval the Wald formula gives.
    assert (result.ci_low, result.ci_high) == pytest.approx((-Z2 / (10 + Z2), Z2 / (10 + Z2)))
    assert (result.test, result.interval) == (MCNEMAR, TANGO)


def test_one_discordant_question() -> None:
    result = compare_paired(*table(4, 1, 0, 5))
    assert result.difference == pytest.approx(0.1)
    # Binomial(1, 1/2): P(X <= 0) = 1/2, doubled.
    assert result.p_value == 1.0
    # n12 = 1, n21 = 0, n = 10. Below 1/19 the constrained p21 is (1 - 19Δ)/20 and the score is
    # sqrt((1 - 10Δ)/(1 + Δ)) = z, so Δ = (1 - z²)/(10 + z²); above it p21 = 0 and
    # (10Δ - 1)² = 10 z² Δ(1 - Δ), whose larger root is the upper bound.
    a, b, c = 100 + 10 * Z2, -(20 + 10 * Z2), 1
    assert result.ci_low == pytest.approx((1 - Z2) / (10 + Z2))
    assert result.ci_high == pytest.approx((-b + math.sqrt(b * b - 4 * a * c)) / (2 * a))


def test_ten_one_sided_discordant_questions() -> None:
    result = compare_paired(*table(0, 10, 0, 0))
    assert (result.a_accuracy, result.b_accuracy, result.difference) == (1.0, 0.0, 1.0)
    assert result.p_value == 2 / 2**10 and result.significant
    # n12 = n = 10: p21 = (1 - Δ)/2, the score is sqrt(n(1 - Δ)/(1 + Δ)): Δ = (n - z²)/(n + z²).
    assert result.ci_low == pytest.approx((10 - Z2) / (10 + Z2)) and result.ci_high == 1.0
    assert verdict(result, "gpt", "claude") == "distinguishable from noise at 5%: gpt is better"


def test_balanced_discordant_questions() -> None:
    result = compare_paired(*table(10, 5, 5, 0))
    assert result.difference == 0.0 and result.p_value == 1.0
    assert result.ci_low == pytest.approx(-result.ci_high)
    assert verdict(result) == "not distinguishable from noise at 5%"
    # 0.78 vs 0.67 on 9 questions, the example: noise.
    noise = compare_paired(*table(5, 2, 1, 1))
    assert noise.a_accuracy == pytest.approx(7 / 9) and noise.b_accuracy == pytest.approx(6 / 9)
    assert noise.p_value == 1.0 and not noise.significant


def test_b_better_is_said_so() -> None:
    result = compare_paired(*table(0, 0, 12, 3))
    assert result.difference == pytest.approx(-0.8)
    assert verdict(result) == "distinguishable from noise at 5%: B is better"
    assert -1.0 <= result.ci_low < result.ci_high < 0


def test_the_bounds_solve_tangos_equation() -> None:
    """At each bound the score statistic is exactly ±z: the interval is the test inverted."""
    for only_a, only_b, n in [(7, 3, 40), (2, 9, 30), (15, 4, 165), (0, 3, 12)]:
        low, high = tango_interval(only_a, only_b, n)
        for delta, sign in ((low, 1), (high, -1)):
            b = -only_a - only_b + (2 * n - only_a + only_b) * delta
            c = -only_b * delta * (1 - delta)
            p21 = (math.sqrt(b * b - 8 * n * c) - b) / (4 * n)
            score = (only_a - only_b - n * delta) / math.sqrt(n * (2 * p21 + delta * (1 - delta)))
            assert score == pytest.approx(sign * math.sqrt(Z2), abs=1e-6)


@pytest.mark.parametrize(
    ("only_a", "only_b"), [(0, 0), (1, 0), (10, 0), (5, 5), (3, 9), (40, 22), (120, 99)]
)
def test_mcnemar_is_scipys_binomial_test(only_a: int, only_b: int) -> None:
    if only_a + only_b == 0:
        assert mcnemar_exact(0, 0) == 1.0
        return
    expected = stats.binomtest(min(only_a, only_b), only_a + only_b, 0.5).pvalue
    assert mcnemar_exact(only_a, only_b) == pytest.approx(expected, rel=1e-12)


def test_paired_t_is_scipys() -> None:
    rng = random.Random(19)
    thirds = [0, 1 / 3, 2 / 3, 1]
    for n in (5, 30, 165):
        a = [rng.choice(thirds) for _ in range(n)]
        b = [rng.choice(thirds) for _ in range(n)]
        p, low, high = paired_t([x - y for x, y in zip(a, b, strict=True)])
        expected = stats.ttest_rel(a, b)
        interval = expected.confidence_interval()
        assert p == pytest.approx(expected.pvalue, rel=1e-9)
        assert (low, high) == pytest.approx((interval.low, interval.high), rel=1e-9)
    for df in (1, 4, 30, 164):
        assert t_quantile(0.975, df) == pytest.approx(stats.t.ppf(0.975, df), rel=1e-9)


def test_epoch_means_use_the_paired_t_test() -> None:
    a = [1, 2 / 3, 1 / 3, 1, 0, 1]
    b = [1 / 3, 2 / 3, 0, 0, 0, 1 / 3]
    result = compare_paired(a, b)
    assert (result.test, result.interval) == (PAIRED_T, PAIRED_T)
    differences = [x - y for x, y in zip(a, b, strict=True)]
    mean = sum(differences) / 6
    sd = math.sqrt(sum((d - mean) ** 2 for d in differences) / 5)
    # t(5) at 97.5% is 2.5706: the interval is mean ± 2.5706 · sd/√6.
    assert result.difference == pytest.approx(mean)
    assert result.ci_high - result.ci_low == pytest.approx(2 * 2.570582 * sd / math.sqrt(6), 1e-5)
    assert (result.a_only, result.b_only) == (4, 0)


def test_equal_differences_and_too_few_questions() -> None:
    assert paired_t([0.5, 0.5, 0.5]) == (0.0, 0.5, 0.5)
    assert paired_t([0.0, 0.0]) == (1.0, 0.0, 0.0)
    assert all(math.isnan(x) for x in paired_t([0.5]))
    result = compare_paired([0.5], [0.0])
    assert verdict(result) == "too few questions to test the difference"
