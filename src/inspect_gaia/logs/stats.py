"""Numbers for GAIA runs: accuracy over epochs, a 95% interval, tokens, time and cost per level.

Definitions (each per level, then over all levels):

* accuracy: the mean over questions of each question's mean over its epochs, so with inspect's
  default ``mean`` epoch reducer it equals the log's ``accuracy`` / ``level<N>_accuracy``;
* stderr: inspect's ``stderr`` of those per-question means (sample standard deviation / sqrt(n));
* interval: the Wilson score interval at 95% over the n questions. With several epochs a question's
  score is a mean in [0, 1], whose variance is at most p(1-p), so the interval stays conservative;
* epoch min-max: the lowest and highest accuracy of a single epoch;
* pass@k: the share of questions right in at least one of their k epochs; pass^k: right in every
  one; consistent: the share answered with the same verdict in every epoch;
* maj@k: the share of questions whose majority answer over the epochs is right (``vote``: answers
  normalised as the official scorer reads them, ties to the earliest epoch, scored once);
* tokens, seconds and dollars per question: totals over questions x epochs (one sample each);
* cost: summed from the log (inspect prices each call when it has prices), or from prices given
  to the report (``read_prices``, inspect's ``--model-cost-config`` format).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from statistics import NormalDist
from typing import Any

import yaml
from inspect_ai.model import ModelCost, compute_model_cost
from pydantic import ValidationError

from ..errors import GaiaError
from .paired import CONFIDENCE
from .results import TOKEN_KINDS, SampleResult
from .vote import majority_correct

INTERVAL_METHOD = "wilson"


def wilson_interval(p: float, n: int, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The Wilson score interval of a proportion ``p`` observed over ``n`` trials.

    Unlike the normal approximation (p ± z·stderr) it stays inside [0, 1] and is not zero-width
    when every question is right or wrong, which matters at GAIA's small level sizes.
    """
    if n <= 0:
        return math.nan, math.nan
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def mean_stderr(values: Sequence[float]) -> float:
    """As inspect's ``stderr`` metric: sample std (ddof=1) over sqrt(n); 0 for n < 2."""
    n = len(values)
    if n < 2:
        return 0.0
    mean = sum(values) / n
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1) / n)


_DERIVED: dict[str, tuple[str, ...]] = {
    "total_tokens": ("tokens_per_question",),
    "working_time": ("seconds_per_question",),
    "cost": ("cost_per_question", "cost_per_correct"),
}
"""``LevelStats``'s derived values (properties), each shown after the field it is derived from."""


@dataclass(frozen=True)
class LevelStats:
    """Accuracy, its spread and what it cost, for one level or for all (``level == "all"``).

    Errored and limit-hit samples count as wrong. The accuracy fields are None for a split
    without answers (test).
    """

    level: str
    questions: int
    epochs: int
    samples: int
    correct: int
    accuracy: float | None
    stderr: float | None
    ci_low: float | None
    ci_high: float | None
    epoch_accuracy_min: float | None
    epoch_accuracy_max: float | None
    pass_at_k: float | None
    pass_hat_k: float | None
    maj_at_k: float | None
    consistent: float | None
    errored: int
    limit_hit: int
    input_tokens: int
    output_tokens: int
    reasoning_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    total_tokens: int
    working_time: float
    """Seconds, summed over samples."""
    cost: float | None
    """Dollars, or None when some model call of the level has no price."""

    @property
    def tokens_per_question(self) -> float | None:
        """Total tokens per sample (one question in one epoch)."""
        return self.total_tokens / self.samples if self.samples else None

    @property
    def seconds_per_question(self) -> float | None:
        """Working time per sample, in seconds."""
        return self.working_time / self.samples if self.samples else None

    @property
    def cost_per_question(self) -> float | None:
        """Dollars per sample."""
        return None if self.cost is None or not self.samples else self.cost / self.samples

    @property
    def cost_per_correct(self) -> float | None:
        """Dollars per correct sample; None when nothing was right or nothing was priced."""
        return None if self.cost is None or not self.correct else self.cost / self.correct

    @classmethod
    def columns(cls) -> tuple[str, ...]:
        """Every field and derived value, in report order: each derived value after its source."""
        return tuple(c for f in fields(cls) for c in (f.name, *_DERIVED.get(f.name, ())))

    def as_dict(self) -> dict[str, Any]:
        """Every field and derived value, for JSON and CSV (NaN and missing values as None)."""
        values = {name: getattr(self, name) for name in self.columns()}
        return {
            key: None if isinstance(value, float) and math.isnan(value) else value
            for key, value in values.items()
        }


def level_stats(label: str, samples: Sequence[SampleResult], graded: bool = True) -> LevelStats:
    """The statistics of ``samples`` (any number of epochs per question) under ``label``."""
    by_question: dict[str, dict[int, bool]] = {}
    for sample in samples:
        by_question.setdefault(sample.task_id, {})[sample.epoch] = sample.correct
    verdicts = [list(epochs.values()) for epochs in by_question.values()]
    answers: dict[str, list[tuple[int, str | None]]] = {}
    targets: dict[str, str] = {}
    for sample in samples:
        answers.setdefault(sample.task_id, []).append((sample.epoch, sample.answer))
        targets[sample.task_id] = sample.target
    majority = [majority_correct(answers[q], targets[q]) for q in by_question]
    n = len(verdicts)
    means = [sum(v) / len(v) for v in verdicts]
    epochs = sorted({epoch for by_epoch in by_question.values() for epoch in by_epoch})
    per_epoch = [
        sum(e[epoch] for e in by_question.values() if epoch in e)
        / sum(1 for e in by_question.values() if epoch in e)
        for epoch in epochs
    ]
    accuracy = sum(means) / n if n else math.nan
    low, high = wilson_interval(accuracy, n)
    priced = [s.cost for s in samples if s.cost is not None]
    unpriced = any(s.cost is None and s.tokens("total") > 0 for s in samples)
    tokens = {kind: sum(s.tokens(kind) for s in samples) for kind in TOKEN_KINDS}

    def graded_only(value: float) -> float | None:
        return value if graded and n else None

    return LevelStats(
        level=label,
        questions=n,
        epochs=max((len(v) for v in verdicts), default=0),
        samples=len(samples),
        correct=sum(s.correct for s in samples) if graded else 0,
        errored=sum(s.error is not None for s in samples),
        limit_hit=sum(s.limit is not None and s.error is None for s in samples),
        accuracy=graded_only(accuracy),
        stderr=graded_only(mean_stderr(means)),
        ci_low=graded_only(low),
        ci_high=graded_only(high),
        epoch_accuracy_min=graded_only(min(per_epoch, default=math.nan)),
        epoch_accuracy_max=graded_only(max(per_epoch, default=math.nan)),
        pass_at_k=graded_only(sum(any(v) for v in verdicts) / n if n else math.nan),
        pass_hat_k=graded_only(sum(all(v) for v in verdicts) / n if n else math.nan),
        maj_at_k=graded_only(sum(majority) / n if n else math.nan),
        consistent=graded_only(sum(len(set(v)) == 1 for v in verdicts) / n if n else math.nan),
        input_tokens=tokens["input"],
        output_tokens=tokens["output"],
        reasoning_tokens=tokens["reasoning"],
        cache_read_tokens=tokens["cache_read"],
        cache_write_tokens=tokens["cache_write"],
        total_tokens=tokens["total"],
        working_time=sum(s.working_time or 0.0 for s in samples),
        cost=sum(priced) if priced and not unpriced else None,
    )


def summarise(samples: Iterable[SampleResult], graded: bool = True) -> list[LevelStats]:
    """One ``LevelStats`` per level present, then ``all``."""
    listed = list(samples)
    levels = sorted({s.level for s in listed})
    rows = [
        level_stats(str(level), [s for s in listed if s.level == level], graded) for level in levels
    ]
    return [*rows, level_stats("all", listed, graded)]


# -- prices ----------------------------------------------------------------------------------------


CACHE_PRICES = ("input_cache_write", "input_cache_read")
"""Prices most users do not give: taken as the input price when missing (with a note)."""


def read_prices(path: str | Path, notes: list[str] | None = None) -> dict[str, ModelCost]:
    """Model prices in inspect's ``--model-cost-config`` format (YAML or JSON, $ per 1M tokens).

    A model priced by input and output only has its cache prices (``CACHE_PRICES``) taken as the
    input price, and ``notes`` gets a line saying so: cached tokens are then costed as any input.

    Raises:
        GaiaError: The file is unreadable or a model's entry is not a ``ModelCost``.
    """
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as ex:
        raise GaiaError(f"cannot read prices from {path}: {ex}") from ex
    except RecursionError as ex:
        raise GaiaError(f"cannot read prices from {path}: nested too deeply") from ex
    except yaml.YAMLError as ex:
        mark = getattr(ex, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(ex, "problem", None) or "not YAML or JSON"
        raise GaiaError(f"cannot read prices from {path}: {problem}{where}") from ex
    if not isinstance(data, dict) or not data:
        raise GaiaError(f"{path} holds no prices", fix="expected `<model>: {input: …, output: …}`")
    prices: dict[str, ModelCost] = {}
    for model, cost in data.items():
        missing = [f for f in CACHE_PRICES if isinstance(cost, dict) and f not in cost]
        if missing and isinstance(cost, dict) and "input" in cost:
            cost = {**cost, **dict.fromkeys(missing, cost["input"])}
            if notes is not None:
                notes.append(
                    f"note: {model} has no {' or '.join(missing)} price in {path}: "
                    "taken as its input price"
                )
        try:
            prices[str(model)] = ModelCost.model_validate(cost)
        except ValidationError as ex:
            fields = ", ".join(str(e["loc"][0]) for e in ex.errors() if e["loc"]) or "its value"
            absent = [str(e["loc"][0]) for e in ex.errors() if e["loc"] and e["type"] == "missing"]
            raise GaiaError(
                f"{path}: the prices of {model} are missing {', '.join(absent)}"
                if absent
                else f"{path}: the prices of {model} are not valid (check {fields})",
                fix="give input and output in $ per million tokens (input_cache_write and "
                "input_cache_read too if the model has them; they default to input's)",
            ) from ex
    return prices


def priced(sample: SampleResult, prices: Mapping[str, ModelCost]) -> SampleResult:
    """``sample`` with the calls of every model in ``prices`` costed at those prices."""
    usage = {
        model: usage.model_copy(update={"total_cost": compute_model_cost(prices[model], usage)})
        if model in prices
        else usage
        for model, usage in sample.usage.items()
    }
    return replace(sample, usage=usage)


# -- frontier --------------------------------------------------------------------------------------


def pareto_frontier(points: Sequence[tuple[float, float]]) -> list[int]:
    """Indices of the (cost, accuracy) points no other point beats: cheaper and at least as good.

    Sorted by cost; the HAL leaderboard's cost-accuracy frontier.
    """
    order = sorted(range(len(points)), key=lambda i: (points[i][0], -points[i][1]))
    frontier: list[int] = []
    best = -math.inf
    for index in order:
        if points[index][1] > best:
            frontier.append(index)
            best = points[index][1]
    return frontier
