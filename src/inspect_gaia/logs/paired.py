"""Is the difference between two GAIA runs real? Paired tests on the questions both answered.

With one answer per question on each side, every question is a pair of verdicts::

              B right   B wrong
    A right     n11       n12        n12: right for A only
    A wrong     n21       n22        n21: right for B only

* difference: accuracy(A) - accuracy(B) = (n12 - n21) / n;
* p-value: the exact two-sided McNemar test. Only discordant questions say anything about a
  difference; under "no difference" each is equally likely to favour either side, so
  n12 ~ Binomial(n12 + n21, 1/2) and p = min(1, 2 P(X <= min(n12, n21))); 1 without discordant
  questions. It equals scipy's ``binomtest(min(n12, n21), n12 + n21, 0.5).pvalue``;
* interval: Tango's asymptotic score interval for a difference of paired proportions (Tango 1998;
  one of those Fagerland, Lydersen and Laake 2014 recommend): every difference the score test does
  not reject at 5%. It stays inside [-1, 1] and is not zero-width when no question is discordant
  (then it is ±z²/(n + z²)), where the Wald interval is.

With several epochs a question's score on a side is its mean over epochs, in [0, 1], and McNemar no
longer fits: the paired t-test on the per-question differences a_i - b_i (their mean, a Student t
interval from their sample standard deviation, n - 1 degrees of freedom), the paired analysis of
Miller 2024 ("Adding Error Bars to Evals"). When every difference is equal the interval is that
difference and p is 1 (all zero) or 0.

A difference is called distinguishable from noise at 5% when p < 0.05. The interval and the test
are different methods and can disagree at the edge; the sentence follows the test.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from fractions import Fraction
from statistics import NormalDist
from typing import Any

CONFIDENCE = 0.95
"""The confidence of every interval printed: ``report``'s Wilson, ``compare``'s Tango."""
ALPHA = 0.05
MCNEMAR = "mcnemar-exact"
TANGO = "tango-score"
PAIRED_T = "paired-t"


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """Exact two-sided McNemar p-value from the two discordant counts."""
    discordant = only_a + only_b
    if discordant == 0:
        return 1.0
    tail = sum(math.comb(discordant, i) for i in range(min(only_a, only_b) + 1))
    # exact: 2**discordant overflows a float beyond 1023 discordant questions
    return min(1.0, float(Fraction(2 * tail, 2**discordant)))


def tango_interval(
    only_a: int, only_b: int, n: int, confidence: float = CONFIDENCE
) -> tuple[float, float]:
    """Tango's score interval for accuracy(A) - accuracy(B) over ``n`` paired questions."""
    if n <= 0:
        return math.nan, math.nan
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    estimate = (only_a - only_b) / n

    def score(delta: float) -> float:
        # The constrained maximum-likelihood estimate of P(right for B only) given the difference.
        a = 2 * n
        b = -only_a - only_b + (2 * n - only_a + only_b) * delta
        c = -only_b * delta * (1 - delta)
        p21 = (math.sqrt(max(b * b - 4 * a * c, 0.0)) - b) / (2 * a)
        numerator = only_a - only_b - n * delta
        variance = n * (2 * p21 + delta * (1 - delta))
        if variance <= 0:
            return 0.0 if numerator == 0 else math.copysign(math.inf, numerator)
        return numerator / math.sqrt(variance)

    def solve(inside: float, outside: float) -> float:
        """The edge of the differences not rejected, between ``inside`` (not) and ``outside``."""
        if abs(score(outside)) <= z:
            return outside
        for _ in range(100):
            middle = (inside + outside) / 2
            if abs(score(middle)) <= z:
                inside = middle
            else:
                outside = middle
        return (inside + outside) / 2

    return solve(estimate, -1.0), solve(estimate, 1.0)


def _betacf(a: float, b: float, x: float) -> float:
    """The continued fraction of the regularised incomplete beta function (Lentz's method)."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 500):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


def _incomplete_beta(a: float, b: float, x: float) -> float:
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    front = math.exp(
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x < (a + 1) / (a + b + 2):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1 - x) / b


def t_sf2(t: float, df: int) -> float:
    """Two-sided tail probability P(|T| >= |t|) of Student's t with ``df`` degrees of freedom."""
    return _incomplete_beta(df / 2, 0.5, df / (df + t * t))


def t_quantile(probability: float, df: int) -> float:
    """The ``probability`` quantile (> 0.5) of Student's t with ``df`` degrees of freedom."""
    low, high = 0.0, 1e6
    for _ in range(200):
        middle = (low + high) / 2
        if 1 - t_sf2(middle, df) / 2 < probability:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def paired_t(differences: Sequence[float], confidence: float = CONFIDENCE) -> tuple[float, ...]:
    """The paired t-test of per-question differences: (p-value, interval low, interval high)."""
    n = len(differences)
    if n < 2:
        return math.nan, math.nan, math.nan
    mean = sum(differences) / n
    sd = math.sqrt(sum((d - mean) ** 2 for d in differences) / (n - 1))
    if sd == 0:
        return (1.0 if mean == 0 else 0.0), mean, mean
    se = sd / math.sqrt(n)
    half = t_quantile(0.5 + confidence / 2, n - 1) * se
    return t_sf2(mean / se, n - 1), max(-1.0, mean - half), min(1.0, mean + half)


@dataclass(frozen=True)
class PairedResult:
    """Two sides on the same questions: their accuracies, the difference and whether it is real."""

    n: int
    a_accuracy: float
    b_accuracy: float
    difference: float
    ci_low: float
    ci_high: float
    a_only: int
    """Questions right for A and wrong for B (with epochs: A's mean above B's)."""
    b_only: int
    p_value: float
    test: str
    interval: str

    @property
    def significant(self) -> bool:
        """Distinguishable from noise at 5% (p < 0.05)."""
        return self.p_value < ALPHA

    def as_dict(self) -> dict[str, Any]:
        """Every field, and ``significant``."""
        return {**asdict(self), "significant": self.significant}


def compare_paired(a: Sequence[float], b: Sequence[float]) -> PairedResult:
    """Compare two sides' per-question scores (verdicts 0/1, or means over epochs), paired by index.

    Verdicts on both sides (every score 0 or 1): exact McNemar and Tango's interval. Otherwise: the
    paired t-test and its interval.
    """
    if len(a) != len(b):
        raise ValueError("both sides need one score per question")
    n = len(a)
    only_a = sum(x > y for x, y in zip(a, b, strict=True))
    only_b = sum(y > x for x, y in zip(a, b, strict=True))
    a_accuracy = sum(a) / n if n else math.nan
    b_accuracy = sum(b) / n if n else math.nan
    if all(score in (0, 1) for score in [*a, *b]):
        p, test, interval = mcnemar_exact(only_a, only_b), MCNEMAR, TANGO
        low, high = tango_interval(only_a, only_b, n)
    else:
        p, low, high = paired_t([x - y for x, y in zip(a, b, strict=True)])
        test = interval = PAIRED_T
    return PairedResult(
        n=n,
        a_accuracy=a_accuracy,
        b_accuracy=b_accuracy,
        difference=a_accuracy - b_accuracy,
        ci_low=low,
        ci_high=high,
        a_only=only_a,
        b_only=only_b,
        p_value=p,
        test=test,
        interval=interval,
    )


def verdict(result: PairedResult, a: str = "A", b: str = "B") -> str:
    """One sentence: is the difference distinguishable from noise at 5%?"""
    if math.isnan(result.p_value):
        return "too few questions to test the difference"
    if not result.significant:
        return "not distinguishable from noise at 5%"
    better = a if result.difference > 0 else b
    return f"distinguishable from noise at 5%: {better} is better"
