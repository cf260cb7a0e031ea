"""Runs re-scored by a judge: verdicts (right, wrong, unparseable, erroring), the cache, the numbers.

The scripted model on 127.0.0.1 plays the judge; each entry matches an answer in the judge's
prompt. Verdicts are cached under ``$INSPECT_GAIA_CACHE_DIR``, a folder of each test's own.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from inspect_ai.model import ModelCost

from inspect_gaia.logs.judged import Asked, judge_answers, judge_samples, judged_block
from inspect_gaia.logs.results import SampleResult
from inspect_gaia.scoring.judge import load_prompt
from support.scripted_model import Entry, ScriptedModel

JUDGE = "openai-api/scripted/judge"
PROMPT = load_prompt(None)
Play = Callable[[list[Entry]], ScriptedModel]

VERDICTS = [
    Entry("12500 people", [{"say": "The same number of people. GRADE: C"}]),
    Entry("Bergen", [{"say": "Another city.\nGRADE: I"}]),
    Entry("perhaps", [{"say": "Hard to say."}]),
    Entry("explode", [{"http_error": 400}]),
]
"""Right, wrong, unparseable and a judge that errors (400 is not retried)."""


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "cache"
    monkeypatch.setenv("INSPECT_GAIA_CACHE_DIR", str(cache))
    return cache


def own_gold(sample: SampleResult) -> tuple[str, str]:
    """Each sample's own target and question, as ``report`` judges them."""
    return sample.target, sample.question


def _sample(task_id: str, answer: str, target: str, correct: bool, **more: object) -> SampleResult:
    return SampleResult(
        task_id=task_id,
        level=int(str(more.pop("level", 1))),
        target=target,
        answer=answer,
        correct=correct,
        question=f"question {task_id}",
        epoch=int(str(more.pop("epoch", 1))),
    )


def test_right_wrong_unparseable_and_erroring_verdicts(scripted: Play) -> None:
    server = scripted(VERDICTS)
    asked = [Asked("q", "12,500", "12500 people"), Asked("q", "Oslo", "Bergen")]
    failing = [Asked("q", "7", "perhaps"), Asked("q", "7", "explode")]
    run = judge_answers(asked + failing, JUDGE, PROMPT)
    assert [run.verdicts[a] for a in asked + failing] == [True, False, None, None]
    assert run.calls == 4 and run.cached == 0 and len(server.requests) == 4
    # one line each for the two answers without a verdict, saying why
    assert len(run.failures) == 2
    assert "'perhaps'" in run.failures[0] or "'perhaps'" in run.failures[1]
    assert any("no GRADE: C or GRADE: I in 'Hard to say.'" in line for line in run.failures)
    assert any("'explode'" in line and "Error" in line for line in run.failures)
    # tokens of every call, and dollars only when the judge is priced
    assert run.usage.input_tokens == 30 and run.usage.output_tokens == 15  # the three answered
    assert run.cost(None)["dollars"] is None
    price = ModelCost(input=1.0, output=2.0, input_cache_write=0.0, input_cache_read=0.0)
    assert run.cost({JUDGE: price})["dollars"] == pytest.approx((30 * 1 + 15 * 2) / 1e6)


def test_a_judge_that_fails_as_a_whole_is_not_asked_again(scripted: Play) -> None:
    """A refused key (401): every call would fail alike, each after its retries (a 5xx took ~40 s
    an answer), so the first such failure ends the judging; a 400 is the answer's own."""
    server = scripted(
        [
            Entry("too long", [{"http_error": 400}]),
            Entry("first", [{"http_error": 401}]),
            Entry("second", [{"say": "GRADE: C"}]),
            Entry("third", [{"say": "GRADE: C"}]),
        ]
    )
    answers = [Asked("q", "7", a) for a in ("too long", "first", "second", "third")]
    run = judge_answers(answers, JUDGE, PROMPT, concurrency=1)
    assert [run.verdicts[a] for a in answers] == [None, None, None, None]
    assert run.calls == 2 and len(server.requests) == 2 and run.not_asked == 2
    assert len(run.failures) == 2, "the answer's own failure, and the judge's: one line"
    assert "'too long'" in run.failures[0] and "BadRequestError" in run.failures[0]
    url = os.environ["SCRIPTED_BASE_URL"]
    assert run.failures[-1].startswith(
        f"judge {JUDGE} at {url} failed as a whole: AuthenticationError: Error code: 401"
    )
    assert run.failures[-1].endswith(
        "— 3 answers unjudged; check the judge, then rerun (verdicts already given are cached)"
    )


@pytest.mark.parametrize("status", [401, 404])
def test_a_judge_that_fails_as_a_whole_is_asked_once_at_the_default_concurrency(
    scripted: Play, status: int
) -> None:
    """Eight answers, ``DEFAULT_CONCURRENCY`` calls in flight: the first answer is asked alone
    (the probe), so a refused key or an unknown model is one call and one line, not eight."""
    server = scripted([Entry("[Submitted answer]", [{"http_error": status}])])
    answers = [Asked("q", "7", f"answer {n}") for n in range(8)]
    run = judge_answers(answers, JUDGE, PROMPT)
    assert len(server.requests) == 1 and run.calls == 1 and run.not_asked == 7
    (line,) = run.failures
    assert line.startswith(f"judge {JUDGE} at {os.environ['SCRIPTED_BASE_URL']} failed as a whole")
    assert "8 answers unjudged" in line and set(run.verdicts.values()) == {None}


@pytest.mark.slow  # the judge's retries, with inspect's backoff: seconds
def test_a_judge_whose_server_fails_is_retried_on_one_answer_only(scripted: Play) -> None:
    """A 5xx is retried (``MAX_RETRIES``): on the probe's answer alone, never on eight at once."""
    server = scripted([Entry("[Submitted answer]", [{"http_error": 503, "retry_after": 0}])])
    answers = [Asked("q", "7", f"answer {n}") for n in range(8)]
    run = judge_answers(answers, JUDGE, PROMPT)
    asked = {json.dumps(r["messages"]) for r in server.requests}
    assert len(asked) == 1 and len(server.requests) > 1, "one answer, asked with its retries"
    (line,) = run.failures
    assert "failed as a whole: InternalServerError: Error code: 503" in line, line


def test_a_second_judging_is_all_cache_and_makes_no_request(
    scripted: Play, own_cache: Path
) -> None:
    server = scripted(VERDICTS)
    asked = [Asked("q", "12,500", "12500 people"), Asked("q", "Oslo", "Bergen")]
    judge_answers([*asked, Asked("q", "7", "perhaps")], JUDGE, PROMPT)
    assert len(server.requests) == 3
    server.requests.clear()
    again = judge_answers(asked, JUDGE, PROMPT)
    assert server.requests == [] and again.calls == 0 and again.cached == 2
    assert [again.verdicts[a] for a in asked] == [True, False]
    assert again.cost(None)["total_tokens"] == 0
    # a reply without a verdict is cached like any reply: a second report gives the same figure
    again = judge_answers([Asked("q", "7", "perhaps")], JUDGE, PROMPT)
    assert again.calls == 0 and again.cached == 1 and server.requests == []
    assert again.verdicts == {Asked("q", "7", "perhaps"): None}
    (line,) = again.failures
    assert line == (
        "judge gave no verdict on answer 'perhaps': no GRADE: C or GRADE: I in 'Hard to say.' "
        "(its reply, cached)"
    )
    # a call that failed (no reply) is not: it is asked again
    judge_answers([Asked("q", "7", "explode")], JUDGE, PROMPT)
    judge_answers([Asked("q", "7", "explode")], JUDGE, PROMPT)
    assert len(server.requests) == 2
    # another model or another prompt is another key
    other = load_prompt(None)
    assert Asked("q", "7", "x").key(JUDGE, other) != Asked("q", "7", "x").key("openai/x", other)
    assert len(list(own_cache.rglob("*.json"))) == 3


def test_one_call_per_distinct_answer_over_epochs(scripted: Play) -> None:
    server = scripted(VERDICTS)
    samples = [
        _sample("t1", "12500 people", "12,500", False, epoch=epoch) for epoch in (1, 2, 3)
    ] + [_sample("t2", "", "Oslo", False)]  # an empty answer is wrong without a call
    run = judge_samples(samples, own_gold, JUDGE, PROMPT)
    assert run.calls == 1 and len(server.requests) == 1
    block = judged_block(samples, own_gold, lambda s: s.correct, run)
    overall = block["levels"][-1]
    assert (overall["questions"], overall["judged"], overall["accuracy"]) == (2, 2, 0.5)


def test_official_wrong_judge_right_is_a_disagreement(scripted: Play) -> None:
    """``12500 people`` against ``12,500``: the official scorer rejects it, the judge takes it."""
    scripted(VERDICTS)
    samples = [
        _sample("t1", "12500 people", "12,500", False),
        _sample("t2", "Bergen", "Oslo", False, level=2),
        _sample("t3", "perhaps", "7", False, level=2),
    ]
    run = judge_samples(samples, own_gold, JUDGE, PROMPT)
    block = judged_block(samples, own_gold, lambda s: s.correct, run)
    levels = {row["level"]: row for row in block["levels"]}
    assert levels["1"]["accuracy"] == 1.0 and levels["1"]["disagreements"] == 1
    # the unparseable verdict is `—`: left out of the judged accuracy, counted as unjudged
    assert (levels["2"]["judged"], levels["2"]["unjudged"], levels["2"]["accuracy"]) == (1, 1, 0.0)
    assert levels["all"]["disagreements"] == 1 and levels["all"]["ci_low"] < 0.5
    (difference,) = block["disagreements"]
    assert difference["task_id"] == "t1" and difference["answer"] == "12500 people"
    assert (difference["official"], difference["judge"]) == (False, True)


def test_a_logged_verdict_of_the_same_judge_is_used_without_a_call(scripted: Play) -> None:
    server = scripted(VERDICTS)
    logged = {"value": "C", "judge_model": JUDGE, "prompt_sha256": PROMPT.sha256}
    mine = _sample("t1", "Bergen", "Oslo", False)
    from_log = replace(mine, judge=logged)
    other_prompt = {**logged, "prompt_sha256": "0" * 64}
    stale = replace(mine, task_id="t2", judge=other_prompt)
    run = judge_samples([from_log], own_gold, JUDGE, PROMPT)
    assert run.from_log == 1 and run.calls == 0 and server.requests == []
    assert list(run.verdicts.values()) == [True]
    # a verdict of another prompt is not this judge's: it is asked (and the judge says wrong)
    again = judge_samples([stale], own_gold, JUDGE, PROMPT)
    assert again.from_log == 0 and again.calls == 1 and list(again.verdicts.values()) == [False]
