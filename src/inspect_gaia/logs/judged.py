"""Runs re-scored by an LLM judge (``judge``): the verdicts, their cache, their cost, their numbers.

``report --judge`` and ``compare --judge`` hand the answers of a run here. Each distinct (question,
gold, answer) is judged at most once: a verdict already in the log (``gaia_judge``'s score, of the
same judge model and prompt SHA-256) is taken as it is; else one cached on disk under
``cache_dir()/judge`` by the SHA-256 of (prompt SHA-256, model, question, gold, answer); else the
judge is called: the first answer alone (a judge that fails as a whole fails there, once, in one
line with its URL), then the rest, at most ``concurrency`` calls at a time. Every reply is cached,
one without a verdict too (asked again, a judge could change a second report's figure); a call that
failed (no reply) is asked again next time. A question without a verdict is ``—`` (``None``), with
one line saying why (``JudgeRun.failures``), and is left out of the judged accuracy, which says over
how many questions it is.

The judged numbers are a second opinion, never the score: the official accuracy stays primary in
every table, sort order and file (``submission`` never reads a judge).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspect_ai.model import ModelCost, ModelUsage, compute_model_cost

from ..questions.hub import cache_dir
from ..scoring.judge import JudgePrompt, Verdict, ask, judge_model
from .results import SampleResult
from .stats import wilson_interval

DEFAULT_CONCURRENCY = 8
"""Judge calls in flight at once, by default (``--judge-concurrency``)."""
NO_QUESTION = "(the run did not record the question)"


@dataclass(frozen=True)
class Asked:
    """What the judge sees of one answer: the question, the gold, the answer."""

    question: str
    gold: str
    answer: str

    def key(self, model: str, prompt: JudgePrompt) -> str:
        """The cache key: the SHA-256 of prompt hash, model, question, gold and answer."""
        data = [prompt.sha256, model, self.question, self.gold, self.answer]
        return hashlib.sha256(json.dumps(data).encode()).hexdigest()


@dataclass
class JudgeRun:
    """The verdicts of one judging, and what they cost."""

    model: str
    prompt: JudgePrompt
    verdicts: dict[Asked, bool | None] = field(default_factory=dict)
    calls: int = 0
    cached: int = 0
    from_log: int = 0
    not_asked: int = 0
    """Answers left unjudged because the judge failed as a whole on an earlier one."""
    failures: list[str] = field(default_factory=list)
    usage: ModelUsage = field(default_factory=ModelUsage)

    @property
    def label(self) -> str:
        """``judge: <prompt name>, <model>``: the column's name wherever it is shown."""
        return f"judge: {self.prompt.name}, {self.model}"

    def cost(self, prices: Mapping[str, ModelCost] | None) -> dict[str, Any]:
        """Calls, tokens and, where ``prices`` (``--model-cost-config``) name the judge, dollars."""
        price = (prices or {}).get(self.model)
        return {
            "calls": self.calls,
            "cached": self.cached,
            "from_log": self.from_log,
            "input_tokens": self.usage.input_tokens,
            "output_tokens": self.usage.output_tokens,
            "total_tokens": self.usage.total_tokens,
            "dollars": compute_model_cost(price, self.usage) if price else None,
        }

    def describe(self) -> dict[str, Any]:
        """The judge as the JSON documents record it: label, model, prompt name, hash and file."""
        return {
            "label": self.label,
            "model": self.model,
            "prompt": {
                "name": self.prompt.name,
                "sha256": self.prompt.sha256,
                "file": self.prompt.file,
            },
        }


def _cache_file(key: str) -> Path:
    return cache_dir() / "judge" / key[:2] / f"{key}.json"


@dataclass(frozen=True)
class _Cached:
    """A reply of the judge read back from the cache: its verdict (``None``: it gave none)."""

    correct: bool | None
    error: str | None


def _cached(key: str) -> _Cached | None:
    """The reply cached under ``key``; ``None``: none (or one that cannot be read)."""
    try:
        data = json.loads(_cache_file(key).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("correct"), bool | None):
        return None
    error = data.get("error")
    return _Cached(data.get("correct"), error if isinstance(error, str) else None)


def _store(key: str, asked: Asked, verdict: Verdict, run: JudgeRun) -> None:
    record = {
        "correct": verdict.correct,
        "error": verdict.error,
        "model": run.model,
        "prompt_sha256": run.prompt.sha256,
        "reply": verdict.reply,
    }
    path = _cache_file(key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(".tmp")
        temporary.write_text(json.dumps(record), encoding="utf-8")
        temporary.replace(path)
    except OSError as ex:  # a cache that cannot be written costs a call next time, nothing more
        run.failures.append(f"judge cache not written ({ex.strerror or ex})")


def logged_verdict(sample: SampleResult, model: str, prompt: JudgePrompt) -> bool | None:
    """The log's own ``gaia_judge`` verdict of ``sample``, when it is this judge's; else None."""
    judged = sample.judge
    if not judged or judged.get("judge_model") != model:
        return None
    if judged.get("prompt_sha256") != prompt.sha256:
        return None
    value = judged.get("value")
    return {"C": True, "I": False}.get(value) if isinstance(value, str) else None


def judge_answers(
    asked: Sequence[Asked],
    model: str,
    prompt: JudgePrompt,
    *,
    from_log: Mapping[Asked, bool] | None = None,
    concurrency: int = DEFAULT_CONCURRENCY,
) -> JudgeRun:
    """Judge every distinct answer of ``asked`` once: from the log, the cache, or a call.

    Args:
        asked: What the judge sees of each answer (repeats are judged once).
        model: The judge model (an inspect model name).
        prompt: The judge's prompt.
        from_log: Verdicts the logs already hold for this judge (``logged_verdict``).
        concurrency: Calls in flight at most.
    """
    run = JudgeRun(model, prompt)
    to_ask: list[tuple[Asked, str]] = []
    for item in dict.fromkeys(asked):
        if from_log and item in from_log:
            run.verdicts[item] = from_log[item]
            run.from_log += 1
            continue
        key = item.key(model, prompt)
        cached = _cached(key)
        if cached is None:
            to_ask.append((item, key))
            continue
        run.verdicts[item] = cached.correct
        run.cached += 1
        if cached.correct is None:
            run.failures.append(f"{_no_verdict(item, cached.error)} (its reply, cached)")
    if to_ask:
        asyncio.run(_ask_all(to_ask, run, max(1, concurrency)))
    return run


def _no_verdict(item: Asked, error: str | None) -> str:
    shown = " ".join(item.answer.split())[:40]
    return f"judge gave no verdict on answer {shown!r}: {error}"


async def _ask_all(to_ask: list[tuple[Asked, str]], run: JudgeRun, concurrency: int) -> None:
    """Ask the first answer alone (the probe), then the rest, ``concurrency`` at a time.

    A judge that fails as a whole (``Verdict.down``: no connection, a server error after its
    retries, a refused key, an unknown model) fails on every answer alike, each after its own
    retries: the probe finds it with one call and one retry cycle, and no other answer is asked;
    a failure of that kind later stops the answers not yet asked. Either way it is one line, with
    the judge's URL. A reply without a verdict is the answer's own, and cached like any reply.
    """
    judge = judge_model(run.model)
    limit = asyncio.Semaphore(concurrency)
    down: list[str] = []  # the first failure that showed the judge unusable: no call after it
    lost = 0  # answers whose own call failed that way

    async def one(item: Asked, key: str) -> None:
        nonlocal lost
        async with limit:
            if down:
                run.verdicts[item] = None
                run.not_asked += 1
                return
            verdict = await ask(judge, run.prompt, item.question, item.gold, item.answer)
        run.calls += 1
        if verdict.usage is not None:
            run.usage = run.usage + verdict.usage
        run.verdicts[item] = verdict.correct
        if verdict.down:
            down.append(str(verdict.error))
            lost += 1
        elif not verdict.replied:
            run.failures.append(_no_verdict(item, verdict.error))  # a failed call, not cached
        else:
            if verdict.correct is None:
                run.failures.append(_no_verdict(item, verdict.error))
            _store(key, item, verdict, run)

    (first, first_key), rest = to_ask[0], to_ask[1:]
    await one(first, first_key)
    await asyncio.gather(*(one(item, key) for item, key in rest))
    if down:
        unjudged = lost + run.not_asked
        where = f" at {judge.api.base_url}" if judge.api.base_url else ""
        run.failures.append(
            f"judge {run.model}{where} failed as a whole: {down[0]} — {unjudged} answer"
            f"{'s' * (unjudged > 1)} unjudged; check the judge, then rerun (verdicts already "
            "given are cached)"
        )


# -- numbers ---------------------------------------------------------------------------------------


def judged_levels(
    samples: Sequence[SampleResult],
    verdict_of: Callable[[SampleResult], bool | None],
    official_of: Callable[[SampleResult], bool],
) -> dict[str, Any]:
    """Judged accuracy per level and overall, its interval, and where judge and official differ.

    A question's judged score is its mean over the epochs the judge gave a verdict on; questions
    with no verdict at all are counted as ``unjudged`` and left out. The interval is Wilson's over
    the questions judged, as the official one is over the questions.
    """
    levels = sorted({s.level for s in samples})
    rows = []
    for label, level in [(str(level), level) for level in levels] + [("all", 0)]:
        chosen = [s for s in samples if level in (0, s.level)]
        by_question: dict[str, list[bool]] = {}
        questions = {s.task_id for s in chosen}
        for sample in chosen:
            verdict = verdict_of(sample)
            if verdict is not None:
                by_question.setdefault(sample.task_id, []).append(verdict)
        n = len(by_question)
        accuracy = sum(sum(v) / len(v) for v in by_question.values()) / n if n else None
        low, high = wilson_interval(accuracy, n) if accuracy is not None else (None, None)
        disagree = [s for s in chosen if _differs(s, verdict_of, official_of)]
        rows.append(
            {
                "level": label,
                "questions": len(questions),
                "judged": n,
                "unjudged": len(questions) - n,
                "accuracy": accuracy,
                "ci_low": low,
                "ci_high": high,
                "disagreements": len(disagree),
            }
        )
    differences = [
        {
            "task_id": s.task_id,
            "epoch": s.epoch,
            "level": str(s.level),
            "target": s.target,
            "answer": s.answer,
            "official": official_of(s),
            "judge": verdict_of(s),
        }
        for s in samples
        if _differs(s, verdict_of, official_of)
    ]
    return {"levels": rows, "disagreements": differences}


def _differs(
    sample: SampleResult,
    verdict_of: Callable[[SampleResult], bool | None],
    official_of: Callable[[SampleResult], bool],
) -> bool:
    verdict = verdict_of(sample)
    return verdict is not None and verdict != official_of(sample)


# -- what the judge is asked, for report and compare -----------------------------------------------

Gold = Callable[[SampleResult], tuple[str, str]]
"""A sample's gold answer and question, as the command scores it: the log's own target (report), or
the answer key's (compare, both sides on one key)."""


def _asked(sample: SampleResult, gold: Gold) -> Asked | None:
    """What the judge sees of ``sample``; ``None`` for an empty answer (wrong without a call)."""
    if not (sample.answer or "").strip():
        return None
    target, question = gold(sample)
    return Asked(question or sample.question or NO_QUESTION, target, sample.answer or "")


def judge_samples(
    samples: Sequence[SampleResult],
    gold: Gold,
    model: str,
    prompt: JudgePrompt,
    concurrency: int = DEFAULT_CONCURRENCY,
) -> JudgeRun:
    """Judge every answer of ``samples`` (the log's own verdicts of this judge first)."""
    asked = [(s, _asked(s, gold)) for s in samples]
    from_log = {
        item: verdict
        for sample, item in asked
        if item is not None and (verdict := logged_verdict(sample, model, prompt)) is not None
    }
    return judge_answers(
        [item for _, item in asked if item is not None],
        model,
        prompt,
        from_log=from_log,
        concurrency=concurrency,
    )


def judged_block(
    samples: Sequence[SampleResult],
    gold: Gold,
    official_of: Callable[[SampleResult], bool],
    run: JudgeRun,
) -> dict[str, Any]:
    """The judged numbers of ``samples`` (``judged_levels``), from ``run``'s verdicts."""

    def verdict_of(sample: SampleResult) -> bool | None:
        item = _asked(sample, gold)
        return False if item is None else run.verdicts.get(item)

    return judged_levels(samples, verdict_of, official_of)
