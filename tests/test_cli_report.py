"""`inspect-gaia report`: merged score tables of logs, with spread, cost and flags."""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import struct
import subprocess
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from helpers import (
    MODEL,
    MiniLogs,
    Play,
    docker_leftovers,
    eval_command,
    eval_gaia,
    inspect_cli,
    invoke,
    wait_for_containers,
    write_log,
)
from inspect_ai import eval_retry
from inspect_ai.log import read_eval_log, write_eval_log
from scenario import GAIA_TINY, LAGOON
from test_results import SAMPLES

from support.scripted_model import Entry, ScriptedModel, serve

ORACLE = "oracle retries, not pass@1 (max_attempts=2)"


def report_json(*args: str) -> dict[str, Any]:
    code, out, err = invoke("report", *args, "--format", "json")
    assert code == 0, err
    document = json.loads(out)
    assert isinstance(document, dict)
    return document


def overall(group: dict[str, Any]) -> dict[str, Any]:
    *_, last = group["levels"]
    assert last["level"] == "all"
    return dict(last)


def level_logs(directory: Path, samples: list[dict[str, Any]] = SAMPLES) -> list[Path]:
    """One log per level, as three gaia_levelN runs write them."""
    directory.mkdir(parents=True, exist_ok=True)
    return [
        write_log(
            directory / f"level{level}.eval",
            [s for s in samples if s["level"] == level],
            run_id=f"level{level}",
            params={"level": level},
            task=f"inspect_gaia/gaia_level{level}",
        )
        for level in (1, 2, 3)
    ]


# -- real runs ------------------------------------------------------------------------------------


@pytest.mark.docker
def test_report_csv(mini_logs: MiniLogs) -> None:
    code, out, _ = invoke("report", str(mini_logs.validation), "--format", "csv")
    assert code == 0
    rows = {row["level"]: row for row in csv.DictReader(io.StringIO(out))}
    assert set(rows) == {"1", "2", "3", "all"}
    assert (rows["1"]["questions"], rows["1"]["accuracy"]) == ("3", "1")
    assert float(rows["3"]["accuracy"]) == pytest.approx(2 / 3) and rows["3"]["limit_hit"] == "1"
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
        "| level | n | k | accuracy | 95% CI | errored | limit_hit | stderr | epoch min–max | pass@k | pass^k |"
        in out
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
    assert len(group["logs"]) == 2 and group["flags"] == []
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


# -- fabricated logs ------------------------------------------------------------------------------


def test_three_level_logs_make_one_table_like_one_run(tmp_path: Path) -> None:
    level_logs(tmp_path / "levels")
    whole = write_log(tmp_path / "whole.eval", SAMPLES, run_id="whole")
    merged = report_json(str(tmp_path / "levels"))
    (group,) = merged["groups"]
    assert len(group["logs"]) == 3 and group["group"] == MODEL
    assert [level["level"] for level in group["levels"]] == ["1", "2", "3", "all"]
    (single,) = report_json(str(whole))["groups"]
    assert group["levels"] == single["levels"]
    # the table form has one overall row
    code, out, _ = invoke("report", *map(str, (tmp_path / "levels").glob("*.eval")))
    assert code == 0 and out.count("│ all ") == 2  # the accuracy table and the effort table


def test_two_models_two_groups_best_first(tmp_path: Path) -> None:
    level_logs(tmp_path / "a")
    weaker = [{**s, "value": "I"} if s["id"] == "a" else s for s in SAMPLES]
    write_log(tmp_path / "b.eval", weaker, model="openai/gpt-4o", run_id="b")
    document = report_json(str(tmp_path / "b.eval"), str(tmp_path / "a"))
    assert [g["model"] for g in document["groups"]] == [MODEL, "openai/gpt-4o"]
    assert [overall(g)["accuracy"] for g in document["groups"]] == [0.4, 0.2]
    assert document["settings_differ"] == []
    code, out, _ = invoke("report", str(tmp_path / "b.eval"), str(tmp_path / "a"))
    assert code == 0 and "GAIA overall, best first" in out
    assert out.index(MODEL) < out.index("openai/gpt-4o")


def test_runs_with_other_settings_are_separate_groups_and_flagged(tmp_path: Path) -> None:
    write_log(tmp_path / "plain.eval", SAMPLES, run_id="p")
    write_log(tmp_path / "oracle.eval", SAMPLES, run_id="o", params={"max_attempts": 2})
    write_log(tmp_path / "python.eval", SAMPLES, run_id="t", params={"python": True})
    write_log(tmp_path / "mm.eval", SAMPLES, run_id="m", params={"multimodal": True})
    document = report_json(str(tmp_path))
    groups = {g["group"]: g for g in document["groups"]}
    # each group is named by what sets it apart from the task's defaults
    assert set(groups) == {
        MODEL,
        f"{MODEL} [max_attempts=2]",
        f"{MODEL} [tools=bash+submit+python]",
        f"{MODEL} [tools=bash+submit+view_file, multimodal=True]",
    }
    assert groups[MODEL]["flags"] == [] and groups[f"{MODEL} [max_attempts=2]"]["flags"] == [ORACLE]
    assert groups[MODEL]["differs"] == {
        "tools": ["bash", "submit"],
        "multimodal": False,
        "max_attempts": 1,
    }
    flagged = [f for g in groups.values() for f in g["flags"]]
    assert sorted(flagged) == sorted(
        [
            ORACLE,
            "non-default tools: bash, submit, python",
            "non-default tools: bash, submit, view_file",
            "multimodal: true",
        ]
    )
    assert document["settings_differ"] == ["tools", "multimodal", "max_attempts"]
    for fmt in ("table", "markdown"):
        code, out, _ = invoke("report", str(tmp_path), "--format", fmt)
        assert code == 0 and ORACLE in out and "not directly comparable" in out
    code, out, _ = invoke("report", str(tmp_path / "oracle.eval"), "--format", "csv")
    assert code == 0 and {row["flags"] for row in csv.DictReader(io.StringIO(out))} == {ORACLE}


def test_every_format_is_one_document_or_one_table(tmp_path: Path) -> None:
    level_logs(tmp_path / "a")
    write_log(tmp_path / "b.eval", SAMPLES, model="openai/gpt-4o", run_id="b")
    document = report_json(str(tmp_path))
    assert document["schema_version"] == 1
    assert document["interval"] == {"method": "wilson", "confidence": 0.95, "over": "questions"}
    for group in document["groups"]:
        assert all(isinstance(level["level"], str) for level in group["levels"])
        assert isinstance(group["flags"], list) and isinstance(group["logs"], list)
        for level in group["levels"]:
            for key in ("accuracy", "ci_low", "ci_high", "pass_at_k", "cost", "cost_per_correct"):
                assert level[key] is None or isinstance(level[key], float), key
            assert isinstance(level["questions"], int) and isinstance(level["input_tokens"], int)
    code, out, _ = invoke("report", str(tmp_path), "--format", "csv")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("group,model,split,task_version,flags,level,questions,epochs,")
    assert sum(line.startswith("group,") for line in lines) == 1 and len(lines) == 1 + 2 * 4


def test_epochs_in_the_report(tmp_path: Path) -> None:
    right = {"a": "CCC", "b": "ICI", "c": "III", "d": "CIC"}
    level = {"a": 1, "b": 1, "c": 2, "d": 2}
    samples = [
        {"id": q, "level": level[q], "target": "t", "value": v, "epoch": e + 1}
        for q, values in right.items()
        for e, v in enumerate(values)
    ]
    write_log(tmp_path / "x.eval", samples, epochs=3, run_id="x")
    (group,) = report_json(str(tmp_path / "x.eval"))["groups"]
    everything = overall(group)
    assert (everything["epochs"], everything["samples"], group["epochs"]) == (3, 12, 3)
    assert (everything["accuracy"], everything["pass_at_k"], everything["pass_hat_k"]) == (
        0.5,
        0.75,
        0.25,
    )
    assert everything["consistent"] == 0.5
    code, out, _ = invoke("report", str(tmp_path / "x.eval"), "--format", "markdown")
    assert "validation, 3 epochs, 1 log" in out and "| all | 4 | 3 | 0.5000 |" in out


def test_prices_given_to_the_report(tmp_path: Path) -> None:
    samples = [
        {**s, "input_tokens": 2000, "output_tokens": 100, "cache_read": 1000} for s in SAMPLES
    ]
    log = write_log(tmp_path / "x.eval", samples, run_id="x")
    prices = tmp_path / "prices.json"
    prices.write_text(
        json.dumps(
            {
                MODEL: {"input": 3, "output": 15, "input_cache_write": 0, "input_cache_read": 0.3},
                "other/model": {
                    "input": 1,
                    "output": 1,
                    "input_cache_write": 1,
                    "input_cache_read": 1,
                },
            }
        )
    )
    code, out, err = invoke(
        "report", str(log), "--model-cost-config", str(prices), "--format", "json"
    )
    assert code == 0 and "no log called other/model" in err
    (group,) = json.loads(out)["groups"]
    each = (2000 * 3 + 100 * 15 + 1000 * 0.3) / 1e6
    everything = overall(group)
    assert group["cost_source"] == "model-cost-config"
    assert everything["cost"] == pytest.approx(5 * each)
    assert everything["cost_per_correct"] == pytest.approx(5 * each / 2)
    assert everything["cache_read_tokens"] == 5000
    code, out, _ = invoke("report", str(log), "--model-cost-config", str(prices))
    assert code == 0 and f"${5 * each:.4f}" in out


def test_without_prices_the_cost_is_missing_not_zero(tmp_path: Path) -> None:
    log = write_log(tmp_path / "x.eval", [{**s, "input_tokens": 10} for s in SAMPLES], run_id="x")
    (group,) = report_json(str(log))["groups"]
    assert group["cost_source"] is None and overall(group)["cost"] is None
    assert overall(group)["cost_per_correct"] is None and overall(group)["input_tokens"] == 50
    code, out, _ = invoke("report", str(log))
    assert code == 0 and "no cost: see the README on --model-cost-config" in out


def test_the_test_split_has_no_accuracy(tmp_path: Path) -> None:
    log = write_log(tmp_path / "t.eval", SAMPLES, run_id="t", params={"split": "test"})
    (group,) = report_json(str(log))["groups"]
    assert group["split"] == "test" and overall(group)["accuracy"] is None
    code, _, err = invoke("report", str(log), "--plot", str(tmp_path / "p.png"))
    assert code == 1 and "nothing to plot" in err


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return int(width), int(height)


def test_plot(tmp_path: Path) -> None:
    level_logs(tmp_path / "a")
    priced = [{**s, "input_tokens": 1000, "cost": 0.01} for s in SAMPLES]
    write_log(tmp_path / "b.eval", priced, model="openai/gpt-4o", run_id="b")
    oracle: dict[str, object] = {"max_attempts": 2}
    write_log(tmp_path / "c.eval", priced, model="openai/gpt-4o", run_id="c", params=oracle)
    several = tmp_path / "several.png"
    code, _, err = invoke("report", str(tmp_path), "--plot", str(several))
    assert code == 0 and f"plot written to {several}" in err
    width, height = _png_size(several)
    assert 1200 <= width <= 2400 and 500 <= height <= 1200
    one = tmp_path / "one.png"
    code, _, _ = invoke("report", str(tmp_path / "a"), "--plot", str(one), "--format", "json")
    assert code == 0 and _png_size(one)[0] < width


def test_report_rejects_a_non_log(tmp_path: Path) -> None:
    bogus = tmp_path / "x.eval"
    bogus.write_text("not a log")
    code, _, err = invoke("report", str(bogus))
    assert code == 1 and err.startswith(
        f"inspect-gaia: {bogus}: not an inspect log (not a zip archive, or a truncated one)"
    )


def test_report_refuses_two_runs_of_the_same_questions(tmp_path: Path) -> None:
    write_log(tmp_path / "one.eval", SAMPLES, run_id="1")
    write_log(tmp_path / "two.eval", SAMPLES, run_id="2")
    code, _, err = invoke("report", str(tmp_path))
    assert code == 1 and err.count("\n") == 1 and "not a run and its eval-retry" in err


def test_report_of_an_empty_directory(tmp_path: Path) -> None:
    code, _, err = invoke("report", str(tmp_path))
    assert code == 1 and err.count("\n") == 1
    assert err.strip() == (
        f"inspect-gaia: no inspect logs (*.eval, *.json) in directory {tmp_path} — name the "
        "folder that `inspect eval --log-dir` wrote to (inspect's default: ./logs), or log files"
    )


def test_report_names_bad_prices(tmp_path: Path) -> None:
    log = write_log(tmp_path / "x.eval", SAMPLES)
    prices = tmp_path / "p.yaml"
    prices.write_text("m: {input: 1}\n")
    code, _, err = invoke("report", str(log), "--model-cost-config", str(prices))
    assert code == 1 and err.count("\n") == 1 and "the prices of m are not valid" in err


def test_a_generation_setting_given_on_the_command_line_splits_groups(tmp_path: Path) -> None:
    write_log(tmp_path / "default.eval", SAMPLES, run_id="d")
    hot = write_log(tmp_path / "hot.eval", SAMPLES, run_id="h")
    log = read_eval_log(str(hot))
    log.eval.model_generate_config.temperature = 0.7
    write_eval_log(log, str(hot))
    groups = {g["group"] for g in report_json(str(tmp_path))["groups"]}
    assert groups == {MODEL, f"{MODEL} [temperature=0.7]"}
