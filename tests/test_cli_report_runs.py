"""`inspect-gaia report` on logs of real runs (Docker): gaia-mini's tables, epochs with
inspect's reducers and prices, a run (finished or killed) with its eval-retry.
"""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import subprocess
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval_retry
from inspect_ai.log import read_eval_log

from support.scripted_model import Entry, ScriptedModel, serve
from tests.helpers import (
    MODEL,
    MiniLogs,
    Play,
    docker_leftovers,
    eval_command,
    eval_gaia,
    inspect_cli,
    invoke,
    overall,
    report_json,
    wait_for_containers,
)
from tests.scenario import GAIA_TINY, LAGOON


@pytest.mark.docker
def test_report_csv(mini_logs: MiniLogs) -> None:
    code, out, _ = invoke("report", str(mini_logs.validation), "--format", "csv")
    assert code == 0
    rows = {row["level"]: row for row in csv.DictReader(io.StringIO(out))}
    assert set(rows) == {"1", "2", "3", "all"}
    assert (rows["1"]["questions"], rows["1"]["accuracy"]) == ("3", "1")
    # the memo's answer is a plain-text FINAL ANSWER: it ends the sample, no limit is hit
    assert float(rows["3"]["accuracy"]) == pytest.approx(2 / 3) and rows["3"]["limit_hit"] == "0"
    assert rows["all"]["questions"] == "9" and float(rows["all"]["accuracy"]) == pytest.approx(
        8 / 9
    )
    assert float(rows["all"]["stderr"]) == pytest.approx(1 / 9, abs=1e-4)
    assert rows["all"]["model"] == MODEL and rows["all"]["epochs"] == "1"
    # the scripted server reports 10 prompt and 5 completion tokens per call
    assert int(rows["all"]["input_tokens"]) % 10 == 0 and int(rows["all"]["input_tokens"]) > 0


@pytest.mark.docker
def test_report_several_logs_as_markdown_and_terminal(mini_logs: MiniLogs) -> None:
    code, out, _ = invoke(
        "report", str(mini_logs.validation), str(mini_logs.test), "--format", "markdown"
    )
    assert code == 0
    assert "### GAIA overall, best first" in out
    assert (
        "| level | n | k | pass@1 | 95% CI | maj@k (vote) | errored | limit_hit | stderr | epoch min–max "
        "| pass@k | pass^k |" in out
    )
    assert "| all | 9 | 1 | 0.8889 |" in out and "| all | 4 | 1 | — |" in out
    assert "[split=test]" in out  # one model, two splits: two groups, the difference named
    code, out, _ = invoke("report", str(mini_logs.validation))
    assert code == 0 and "GAIA scores" in out and "0.8889" in out and "Cost and effort" in out


class FlakyModel(ScriptedModel):
    """gaia-tiny's answers, with the lagoon right the first two times it is asked only.

    The scripted model keeps no state per conversation, so the question's counter is kept here:
    whatever order inspect runs the epochs in, exactly two of the three are right.
    """

    def __init__(self, entries: list[Entry]) -> None:
        super().__init__(entries)
        self.asked: Counter[str] = Counter()
        self.lock = threading.Lock()

    def reply(self, request: dict[str, Any]) -> dict[str, Any]:
        messages = request["messages"]
        question = str(next(m["content"] for m in messages if m["role"] == "user"))
        if "invented lagoon" in question and not any(m["role"] == "assistant" for m in messages):
            with self.lock:
                self.asked["lagoon"] += 1
                right = self.asked["lagoon"] <= 2
            answer = "Quillfeather Lagoon" if right else "Quillfeather Bay"
            return ScriptedModel([Entry("invented lagoon", [{"submit": answer}])]).reply(request)
        return super().reply(request)


EPOCH_SCENARIO = [
    Entry("visitors per gallery", [{"submit": "48671"}]),  # L1, right
    Entry("crew of a skiff", [{"submit": "Marisol Vantreek, Odalys Pembury, Fenwick Astolar"}]),
    Entry("lanterns were sold", [{"submit": "1204.67"}]),  # L2, wrong
    Entry("heron or herons", [{"submit": "27519"}]),  # L3, right
    Entry("tavern where", [{"submit": "Zorblat's Half-Moon Tavern!"}]),  # L3, right
    # L3: the second call takes the sample past the cost limit, so it never submits.
    Entry("river feeds", [{"bash": "echo thinking"}, {"submit": "Wrenmarrow River"}]),
]
PRICED_MODEL = "openai-api/scripted/gpt-4o"
"""A model name inspect's model database knows: --model-cost-config only prices those."""
CALL = 10 * 1000 / 1e6 + 5 * 4000 / 1e6
"""One scripted call (10 prompt + 5 completion tokens) at $1000 / $4000 per million: $0.03."""


def _metrics_by_reducer(log_file: Path) -> dict[str, dict[str, float]]:
    log = read_eval_log(str(log_file))
    assert log.results is not None
    return {
        str(score.reducer): {name: metric.value for name, metric in score.metrics.items()}
        for score in log.results.scores
        if score.name == "gaia_scorer"
    }


@pytest.mark.docker
def test_epochs_cost_and_cost_limit_in_a_real_run(sandbox_image: str, tmp_path: Path) -> None:
    """`--epochs 3` with inspect's reducers, `--model-cost-config` and `--cost-limit`, for real."""
    prices = tmp_path / "prices.yaml"
    prices.write_text(
        f"{PRICED_MODEL}:\n  input: 1000\n  output: 4000\n  input_cache_write: 0\n"
        "  input_cache_read: 0\n"
    )
    model = FlakyModel(EPOCH_SCENARIO)
    with serve(model) as url:
        run = subprocess.run(
            [
                *[inspect_cli(), "eval", "inspect_gaia/gaia", "--model", PRICED_MODEL],
                *["-T", f"dataset_path={GAIA_TINY}", "-T", f"image={sandbox_image}"],
                *["--epochs", "3", "--epochs-reducer", "mean,pass_at_3,pass_k_3"],
                *["--model-cost-config", str(prices), "--cost-limit", str(CALL * 1.5)],
                *["--log-dir", str(tmp_path / "logs"), "--display", "plain"],
            ],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env={**os.environ, "SCRIPTED_BASE_URL": url, "SCRIPTED_API_KEY": "x"},
        )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    (log_file,) = (tmp_path / "logs").glob("*.eval")
    assert model.asked["lagoon"] == 3

    document = report_json(str(tmp_path / "logs"))
    (group,) = document["groups"]
    assert (group["model"], group["epochs"], group["flags"]) == (PRICED_MODEL, 3, [])
    levels = {level["level"]: level for level in group["levels"]}
    everything = levels["all"]
    # 7 questions x 3 epochs; right: gallery, crew, heron, tavern always, the lagoon twice.
    assert (everything["questions"], everything["samples"], everything["correct"]) == (7, 21, 14)
    assert everything["accuracy"] == pytest.approx(14 / 21)
    assert (everything["epoch_accuracy_min"], everything["epoch_accuracy_max"]) == pytest.approx(
        (4 / 7, 5 / 7)
    )
    assert everything["pass_at_k"] == pytest.approx(5 / 7)
    assert everything["pass_hat_k"] == pytest.approx(4 / 7)
    assert everything["consistent"] == pytest.approx(6 / 7)
    level1 = levels["1"]
    assert level1["accuracy"] == pytest.approx(5 / 6)
    assert (level1["epoch_accuracy_min"], level1["epoch_accuracy_max"]) == (0.5, 1.0)
    assert (level1["pass_at_k"], level1["pass_hat_k"], level1["consistent"]) == (1.0, 0.5, 0.5)
    assert levels["2"]["accuracy"] == 0.5 and levels["2"]["pass_hat_k"] == 0.5
    # the river question hit the cost limit in each epoch: counted, and wrong
    assert (levels["3"]["limit_hit"], levels["3"]["accuracy"]) == (3, pytest.approx(2 / 3))

    # the log's per-level metrics, under each of inspect's reducers, are the report's numbers
    metrics = _metrics_by_reducer(log_file)
    for reducer, field in (
        ("mean", "accuracy"),
        ("pass_at_3", "pass_at_k"),
        ("pass_k_3", "pass_hat_k"),
    ):
        assert metrics[reducer]["accuracy"] == pytest.approx(everything[field]), reducer
        for level in ("1", "2", "3"):
            assert metrics[reducer][f"level{level}_accuracy"] == pytest.approx(
                levels[level][field]
            ), (reducer, level)
    assert metrics["mean"]["stderr"] == pytest.approx(everything["stderr"])

    # cost, from inspect's pricing in the log: 18 one-call samples and 3 two-call ones
    calls = 18 + 3 * 2
    assert group["cost_source"] == "log"
    assert (everything["input_tokens"], everything["output_tokens"]) == (calls * 10, calls * 5)
    assert everything["cost"] == pytest.approx(calls * CALL)
    assert everything["cost_per_correct"] == pytest.approx(calls * CALL / 14)
    assert everything["cost_per_question"] == pytest.approx(calls * CALL / 21)
    assert levels["3"]["cost"] == pytest.approx((3 + 3 + 6) * CALL)
    assert everything["tokens_per_question"] == pytest.approx(calls * 15 / 21)

    # the same prices given to the report instead reproduce the log's cost
    repriced = report_json(str(log_file), "--model-cost-config", str(prices))
    assert repriced["groups"][0]["cost_source"] == "model-cost-config"
    assert overall(repriced["groups"][0])["cost"] == pytest.approx(calls * CALL)


@pytest.mark.docker
def test_a_run_and_its_eval_retry_make_one_table(
    sandbox_image: str, scripted: Play, tmp_path: Path
) -> None:
    model = scripted(
        [Entry("invented lagoon", [{"http_error": 400}]), Entry("", [{"submit": "48671"}])]
    )
    log = eval_gaia(tmp_path / "logs", dataset_path=str(GAIA_TINY), image=sandbox_image, level=1)
    assert log.status == "error"
    before = overall(report_json(log.location)["groups"][0])
    assert (before["errored"], before["accuracy"]) == (1, 0.5)

    model.entries = [Entry("invented lagoon", [{"submit": "Quillfeather Lagoon"}])]
    (retried,) = eval_retry(log, log_dir=str(tmp_path / "logs"), display="none")
    assert retried.status == "success"
    document = report_json(str(tmp_path / "logs"))
    (group,) = document["groups"]  # one run and its retry: one group, each question once
    # complete at its level: the retry is no partial run (only the level is said)
    assert len(group["logs"]) == 2 and group["flags"] == ["level 1 only"]
    after = overall(group)
    assert (after["questions"], after["samples"], after["errored"], after["accuracy"]) == (
        2,
        2,
        0,
        1.0,
    )


@pytest.mark.docker
def test_a_killed_run_and_its_eval_retry_report_as_one_run(
    sandbox_image: str, scripted: Play, tmp_path: Path
) -> None:
    """Issue #18: the README's recovery path (SIGKILL, then eval-retry) made `report DIR` fail.

    The killed run's log holds no sample; beside its retry it is left out without a word.
    """
    before = docker_leftovers()
    model = scripted([Entry("invented lagoon", [{"bash": "sleep 120"}])])
    task_args = [f"dataset_path={GAIA_TINY}", f"image={sandbox_image}", f"ids={LAGOON}"]
    run = subprocess.Popen(
        eval_command(task_args, tmp_path / "logs"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=tmp_path,
        start_new_session=True,
    )
    try:
        wait_for_containers(1, besides=before)
    finally:
        os.killpg(run.pid, signal.SIGKILL)
        run.wait()
    (killed,) = (tmp_path / "logs").glob("*.eval")
    header = read_eval_log(str(killed))
    assert header.status == "started" and not header.samples

    model.entries = [Entry("invented lagoon", [{"submit": "Quillfeather Lagoon"}])]
    (retried,) = eval_retry(str(killed), log_dir=str(tmp_path / "logs"), display="none")
    assert retried.status == "success" and retried.eval.task_id == header.eval.task_id
    code, out, err = invoke("report", str(tmp_path / "logs"), "--format", "json")
    assert code == 0 and err == "", err
    (group,) = json.loads(out)["groups"]
    assert group["logs"] == [retried.location] and group["flags"] == []
    assert (overall(group)["questions"], overall(group)["accuracy"]) == (1, 1.0)
    assert docker_leftovers() == before, "the retry swept what the killed run left"
