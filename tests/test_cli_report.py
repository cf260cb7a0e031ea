"""`inspect-gaia report`: merged score tables of logs, with spread, cost and flags.

On logs written here without a run, and a checked-in real run's (``tests/fixtures/real-logs``,
where ``test_real_logs.py`` reads the rest); on logs of runs made by the test in
``test_cli_report_runs.py``.
"""

from __future__ import annotations

import csv
import io
import json
import struct
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.log import read_eval_log, write_eval_log

from support.real_logs import fixture
from tests.helpers import MODEL, RUN_SAMPLES, invoke, overall, report_json, write_log

ORACLE = "oracle retries, not pass@1 (max_attempts=2)"


def level_logs(directory: Path, samples: list[dict[str, Any]] = RUN_SAMPLES) -> list[Path]:
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


def test_three_level_logs_make_one_table_like_one_run(tmp_path: Path) -> None:
    level_logs(tmp_path / "levels")
    whole = write_log(tmp_path / "whole.eval", RUN_SAMPLES, run_id="whole")
    merged = report_json(str(tmp_path / "levels"))
    (group,) = merged["groups"]
    assert len(group["logs"]) == 3 and group["group"] == MODEL
    assert [level["level"] for level in group["levels"]] == ["1", "2", "3", "all"]
    (single,) = report_json(str(whole))["groups"]
    assert group["levels"] == single["levels"]
    # the table form has one overall row
    code, out, _ = invoke("report", *map(str, (tmp_path / "levels").glob("*.eval")))
    assert code == 0 and out.count("│ all ") == 2  # the accuracy table and the effort table


def test_id_shards_of_one_run_make_one_table_like_one_run(tmp_path: Path) -> None:
    """One run split over processes by ``-T ids=`` (docs/performance.md) reports as one run."""
    shards = tmp_path / "shards"
    shards.mkdir()
    for n, part in enumerate((RUN_SAMPLES[:2], RUN_SAMPLES[2:])):
        ids = ",".join(str(s["id"]) for s in part)
        write_log(shards / f"shard{n}.eval", part, run_id=f"shard{n}", params={"ids": ids})
    whole = write_log(tmp_path / "whole.eval", RUN_SAMPLES, run_id="whole")
    (group,) = report_json(str(shards))["groups"]
    (single,) = report_json(str(whole))["groups"]
    assert len(group["logs"]) == 2 and group["flags"] == []
    assert group["levels"] == single["levels"]


def test_two_models_two_groups_best_first(tmp_path: Path) -> None:
    level_logs(tmp_path / "a")
    weaker = [{**s, "value": "I"} if s["id"] == "a" else s for s in RUN_SAMPLES]
    write_log(tmp_path / "b.eval", weaker, model="openai/gpt-4o", run_id="b")
    document = report_json(str(tmp_path / "b.eval"), str(tmp_path / "a"))
    assert [g["model"] for g in document["groups"]] == [MODEL, "openai/gpt-4o"]
    assert [overall(g)["accuracy"] for g in document["groups"]] == [0.4, 0.2]
    assert document["settings_differ"] == []
    code, out, _ = invoke("report", str(tmp_path / "b.eval"), str(tmp_path / "a"))
    assert code == 0 and "GAIA overall, best first" in out
    assert out.index(MODEL) < out.index("openai/gpt-4o")


def test_runs_with_other_settings_are_separate_groups_and_flagged(tmp_path: Path) -> None:
    write_log(tmp_path / "plain.eval", RUN_SAMPLES, run_id="p")
    write_log(tmp_path / "oracle.eval", RUN_SAMPLES, run_id="o", params={"max_attempts": 2})
    write_log(tmp_path / "python.eval", RUN_SAMPLES, run_id="t", params={"python": True})
    write_log(tmp_path / "mm.eval", RUN_SAMPLES, run_id="m", params={"multimodal": True})
    document = report_json(str(tmp_path))
    groups = {g["group"]: g for g in document["groups"]}
    # each group is named by what sets it apart from the task's defaults
    assert set(groups) == {
        MODEL,
        f"{MODEL} [max_attempts=2]",
        f"{MODEL} [tools=+python]",
        f"{MODEL} [tools=+view_file, multimodal=True]",
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
    write_log(tmp_path / "b.eval", RUN_SAMPLES, model="openai/gpt-4o", run_id="b")
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
        {**s, "input_tokens": 2000, "output_tokens": 100, "cache_read": 1000} for s in RUN_SAMPLES
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
    log = write_log(
        tmp_path / "x.eval", [{**s, "input_tokens": 10} for s in RUN_SAMPLES], run_id="x"
    )
    (group,) = report_json(str(log))["groups"]
    assert group["cost_source"] is None and overall(group)["cost"] is None
    assert overall(group)["cost_per_correct"] is None and overall(group)["input_tokens"] == 50
    code, out, _ = invoke("report", str(log))
    assert code == 0 and "`inspect-gaia report --model-cost-config prices.yaml`" in " ".join(
        out.split()
    )
    # in Markdown, for pasting: the line goes to stderr, the document stays clean
    code, out, err = invoke("report", str(log), "--format", "markdown")
    assert code == 0 and "no cost" not in out
    assert err.startswith("no cost: the logs carry no prices — give them")


def test_the_test_split_has_no_accuracy(tmp_path: Path) -> None:
    log = fixture("test")  # a real test-split run's log (tests/fixtures/real-logs)
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
    priced = [{**s, "input_tokens": 1000, "cost": 0.01} for s in RUN_SAMPLES]
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


def test_report_refuses_two_named_runs_of_the_same_questions(tmp_path: Path) -> None:
    """Named one by one they are refused; their folder shows each run (test_folder_runs.py)."""
    one = write_log(tmp_path / "one.eval", RUN_SAMPLES, run_id="1")
    two = write_log(tmp_path / "two.eval", RUN_SAMPLES, run_id="2")
    code, _, err = invoke("report", str(one), str(two))
    assert code == 1 and err.count("\n") == 1 and "not a run and its eval-retry" in err
    groups = report_json(str(tmp_path))["groups"]
    assert sorted(g["run"] for g in groups) == ["run 2026-12-03 00:00 1", "run 2026-12-03 00:00 2"]


def test_report_of_an_empty_directory(tmp_path: Path) -> None:
    code, _, err = invoke("report", str(tmp_path))
    assert code == 1 and err.count("\n") == 1
    assert err.strip() == (
        f"inspect-gaia: no inspect logs (*.eval, *.json) in directory {tmp_path} — name the "
        "folder that `inspect eval --log-dir` wrote to (inspect's default: ./logs), or log files"
    )


def test_report_names_bad_prices(tmp_path: Path) -> None:
    log = write_log(tmp_path / "x.eval", RUN_SAMPLES)
    prices = tmp_path / "p.yaml"
    prices.write_text("m: {input: 1}\n")
    code, _, err = invoke("report", str(log), "--model-cost-config", str(prices))
    assert code == 1 and err.count("\n") == 1 and "the prices of m are missing output" in err
    # the cache prices are optional (issue #50: the fix still asked for them)
    assert err.rstrip().endswith(
        "— give input and output in $ per million tokens "
        "(input_cache_write and input_cache_read too if the model has them; they default to "
        "input's)"
    ), err


def test_a_generation_setting_given_on_the_command_line_splits_groups(tmp_path: Path) -> None:
    write_log(tmp_path / "default.eval", RUN_SAMPLES, run_id="d")
    hot = write_log(tmp_path / "hot.eval", RUN_SAMPLES, run_id="h")
    log = read_eval_log(str(hot))
    log.eval.model_generate_config.temperature = 0.7
    write_eval_log(log, str(hot))
    groups = {g["group"] for g in report_json(str(tmp_path))["groups"]}
    assert groups == {MODEL, f"{MODEL} [temperature=0.7]"}


def test_the_overview_shows_short_flags_and_names_an_agent_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue #50: at 100 columns a recorded run's flag was a 25-line cell of the overview, and an
    agent group named its agent three times (two in its label, once in its flag)."""
    from inspect_gaia.egress.web_record import STORE_KEY
    from inspect_gaia.logs.web_reads import RECORD_ONLY

    read = {"t": 1.0, "method": "GET", "url": "https://a.example/", "status": 200, "bytes": 3}
    read |= {"sha256": "00" * 32, "type": "text/plain", "decision": "allowed", "why": None}
    recorded = [{**s, "store": {STORE_KEY: [{**read, "error": None}]}} for s in RUN_SAMPLES]
    write_log(tmp_path / "plain.eval", RUN_SAMPLES, run_id="p")
    write_log(tmp_path / "web.eval", recorded, run_id="w", params={"web_record": True})
    write_log(
        tmp_path / "agent.eval",
        RUN_SAMPLES,
        run_id="a",
        params={"agent": "codex_cli"},
        offered_tools=["agent:codex_cli"],
    )
    for width in (100, 80):
        monkeypatch.setenv("COLUMNS", str(width))
        code, out, err = invoke("report", str(tmp_path))
        assert code == 0, err
        overview, groups = out.split("GAIA scores:", 1)
        # (a cell's words wrap within the cell)
        assert "recorded" in overview and "443" not in overview
        assert len(overview.splitlines()) < 30, overview  # 44 lines at 100 columns before
        # the sentences, whole, under the group's own level table
        assert RECORD_ONLY in " ".join(groups.split())
        assert "tools=+agent" not in out
        assert overview.count("codex_cli") == 1 and "another" in overview
