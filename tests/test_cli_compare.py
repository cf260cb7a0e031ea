"""`inspect-gaia compare`: any two GAIA runs, scored alike, with a paired test of the difference.

Sides: inspect_gaia logs, an evalscope output directory, inspect_evals' own gaia log (the fixture
its task wrote: support/inspect_evals_gaia.py) and leaderboard JSONL files, all on gaia-mini.
"""

from __future__ import annotations

import csv
import io
import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest

from inspect_gaia._cli.compare import DISAGREEMENT_COLUMNS, LEVEL_COLUMNS
from inspect_gaia.logs.evalscope import read_evalscope_run
from tests.helpers import MiniLogs, dumps, invoke, write_log
from tests.scenario import EVALSCOPE_RUN, GAIA_MINI, MINI_CREW, MINI_MEMO

Z2 = 1.959963984540054**2
INSPECT_EVALS_LOG = Path(__file__).parent / "fixtures" / "inspect-evals-gaia" / "gaia-mini-4-C.eval"
MINI_DAYS = "9089766c-0197-5e6b-b154-0439efea3ee3"
"""gaia-mini's level-1 calendar question (92): inspect_evals' scripted model answered `92 days`."""
SNAPSHOT = ("--dataset-path", str(GAIA_MINI))


def compare_json(*args: str) -> dict[str, Any]:
    code, out, err = invoke("compare", *args, "--format", "json")
    assert code == 0, err
    document = json.loads(out)
    assert isinstance(document, dict)
    return document


def by_level(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {row["level"]: row for row in document["levels"]}


def tango_one_sided(only: int, n: int) -> tuple[float, float]:
    """Tango's bounds when one side has every discordant question (worked out in test_paired)."""
    low = (only - Z2) / (n + Z2)
    a, b, c = n * n + Z2 * n, -(2 * n * only + Z2 * n), only * only
    return low, (-b + math.sqrt(b * b - 4 * a * c)) / (2 * a)


@pytest.mark.docker
def test_compare_with_evalscope(mini_logs: MiniLogs, tmp_path: Path) -> None:
    """The run recorded its snapshot (gaia-mini): no --dataset-path needed."""
    document = compare_json(
        str(mini_logs.validation), str(EVALSCOPE_RUN), "--plot", str(tmp_path / "c.png")
    )
    assert document["schema_version"] == 2
    assert document["a"]["flags"] == [] and document["b"]["model"] == "fake-gaia"
    assert document["a"]["harness"] == "inspect_gaia" and document["b"]["harness"] == "evalscope"
    assert document["answers"]["source"] == f"snapshot {GAIA_MINI}"
    levels = by_level(document)
    assert (levels["2"]["a_accuracy"], levels["2"]["b_accuracy"]) == (1.0, pytest.approx(2 / 3))
    assert levels["3"]["a_accuracy"] == pytest.approx(2 / 3)
    assert levels["3"]["b_accuracy"] == pytest.approx(1 / 3)
    everything = levels["all"]
    assert everything["n"] == 9 and everything["agreement"] == pytest.approx(7 / 9)
    # re-scored against one key, each side's verdicts are its own: the gaps are the agents'
    assert everything["b_reported"] == everything["b_accuracy"] == pytest.approx(6 / 9)
    assert everything["a_reported"] == everything["a_accuracy"] == pytest.approx(8 / 9)
    # crew and memo: right for inspect_gaia only. Binomial(2, 1/2): p = 2 · 1/4.
    assert (everything["a_only"], everything["b_only"], everything["p_value"]) == (2, 0, 0.5)
    assert (everything["ci_low"], everything["ci_high"]) == pytest.approx(tango_one_sided(2, 9))
    assert everything["verdict"] == "not distinguishable from noise at 5%"
    assert {d["task_id"] for d in document["differences"]} == {MINI_CREW, MINI_MEMO}
    memo = next(d for d in document["differences"] if d["task_id"] == MINI_MEMO)
    assert memo["b_answer"] == "FINAL ANSWER: Harbour Mill Renovation" and memo["b_score"] == 0
    assert (tmp_path / "c.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.docker
def test_compare_markdown_and_csv(mini_logs: MiniLogs) -> None:
    code, out, _ = invoke(
        "compare", str(mini_logs.validation), str(EVALSCOPE_RUN), "--format", "markdown"
    )
    assert code == 0
    assert "### A: openai-api/scripted/gaia-bot (inspect_gaia) vs B: fake-gaia (evalscope)" in out
    assert "| all | 9 | 0.889 | 0.667 | +0.222 |" in out and "| 0.5 | noise |" in out
    assert "overall: A − B = +0.222" in out and "not distinguishable from noise at 5%" in out
    code, out, _ = invoke(
        "compare", str(mini_logs.validation), str(EVALSCOPE_RUN), "--format", "csv"
    )
    assert code == 0 and out.startswith(",".join(LEVEL_COLUMNS[:4]))
    everything = list(csv.DictReader(io.StringIO(out)))[-1]
    assert (everything["p_value"], everything["significant"], everything["test"]) == (
        "0.5",
        "False",
        "mcnemar-exact",
    )


def _evalscope_as_inspect_log(path: Path, **options: Any) -> Path:
    """An inspect log answering exactly as the evalscope fixture did (the same verdicts)."""
    theirs = read_evalscope_run(EVALSCOPE_RUN)
    samples = [
        {
            "id": s.task_id,
            "level": s.level,
            "target": s.target,
            "answer": s.answer,
            "value": "C" if s.correct else "I",
            **({"epoch": options.pop("epoch")} if "epoch" in options else {}),
        }
        for s in theirs.samples
    ]
    return write_log(path, samples, **options)


@pytest.mark.parametrize("fmt", ["table", "markdown"])
def test_no_difference_is_said_in_words(tmp_path: Path, fmt: str) -> None:
    log = _evalscope_as_inspect_log(tmp_path / "same.eval")
    code, out, _ = invoke("compare", str(log), str(EVALSCOPE_RUN), *SNAPSHOT, "--format", fmt)
    assert code == 0 and "no question answered differently" in out
    assert "not distinguishable from noise at 5%" in out
    # issue #50: it ended `task ids: the first 8: no question answered differently`
    assert "task ids" not in out
    document = compare_json(str(log), str(EVALSCOPE_RUN), *SNAPSHOT)
    assert document["differences"] == [] and document["only_in_one"] == {"a": [], "b": []}
    assert all(isinstance(row["level"], str) for row in document["levels"])
    everything = by_level(document)["all"]
    # no discordant question: p = 1, and Tango's interval is ±z²/(n + z²), not zero-width
    assert (everything["difference"], everything["p_value"]) == (0.0, 1.0)
    assert everything["ci_high"] == pytest.approx(Z2 / (9 + Z2))
    code, out, _ = invoke(
        "compare",
        str(log),
        str(EVALSCOPE_RUN),
        *SNAPSHOT,
        "--format",
        "csv",
        "--table",
        "differences",
    )
    assert code == 0 and out.splitlines() == [",".join(DISAGREEMENT_COLUMNS)]


def test_compare_flags_oracle_retries_and_other_tools(tmp_path: Path) -> None:
    log = _evalscope_as_inspect_log(
        tmp_path / "oracle.eval",
        params={"max_attempts": 2, "python": True},
    )
    document = compare_json(str(log), str(EVALSCOPE_RUN), *SNAPSHOT)
    assert document["a"]["flags"] == [
        "oracle retries, not pass@1 (max_attempts=2)",
        "non-default tools: bash, submit, python",
    ]
    for fmt in ("table", "markdown"):
        code, out, _ = invoke("compare", str(log), str(EVALSCOPE_RUN), *SNAPSHOT, "--format", fmt)
        assert code == 0 and "oracle retries, not pass@1" in out


def test_epochs_are_means_by_default_or_one_epoch_on_request(tmp_path: Path) -> None:
    theirs = read_evalscope_run(EVALSCOPE_RUN)
    samples = [
        {
            "id": s.task_id,
            "level": s.level,
            "target": s.target,
            "answer": s.answer if epoch == 1 else "something else",
            "value": ("C" if s.correct else "I") if epoch == 1 else "I",
            "epoch": epoch,
        }
        for s in theirs.samples
        for epoch in (1, 2)
    ]
    log = write_log(tmp_path / "epochs.eval", samples)
    document = compare_json(str(log), str(EVALSCOPE_RUN), *SNAPSHOT)
    everything = by_level(document)["all"]
    # each question's mean over 2 epochs: half evalscope's accuracy, a paired t-test
    assert document["a"]["epochs"] == 2 and document["a"]["epoch"] is None
    assert everything["a_accuracy"] == pytest.approx(3 / 9) and everything["test"] == "paired-t"
    assert document["method"]["interval"] == "paired-t"
    one = compare_json(str(log), str(EVALSCOPE_RUN), *SNAPSHOT, "--epoch", "1")
    assert one["differences"] == [] and by_level(one)["all"]["test"] == "mcnemar-exact"
    two = compare_json(str(log), str(EVALSCOPE_RUN), *SNAPSHOT, "--epoch", "2")
    assert len(two["differences"]) == 9 and by_level(two)["all"]["b_only"] == 6
    code, out, _ = invoke(
        "compare", str(log), str(EVALSCOPE_RUN), *SNAPSHOT, "--format", "markdown"
    )
    assert "A: mean of 2 epochs" in out and "paired t-test" in out
    code, _, err = invoke("compare", str(log), str(EVALSCOPE_RUN), *SNAPSHOT, "--epoch", "3")
    assert code == 1 and err.strip() == f"inspect-gaia: {log} has no epoch 3 — its epochs are 1, 2"


def test_an_empty_directory_is_refused(tmp_path: Path) -> None:
    empty = tmp_path / "not-a-run"
    empty.mkdir()
    code, _, err = invoke("compare", str(EVALSCOPE_RUN), str(empty))
    assert code == 1
    assert err.strip().startswith(
        f"inspect-gaia: no inspect logs (*.eval, *.json) in directory {empty} — name the folder"
    )


def _evalscope_dir(tmp_path: Path, line: str) -> Path:
    """A copy of the evalscope fixture whose level-1 review file ends with ``line``."""
    copy = tmp_path / "evalscope"
    shutil.copytree(EVALSCOPE_RUN, copy)
    reviews = copy / "reviews" / "fake-gaia" / "gaia_2023_level1.jsonl"
    reviews.write_text(reviews.read_text() + line + "\n")
    return copy


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"index": 9, "sample_score": {"score"', "line 4: not JSON"),
        (dumps({"index": 9}), "line 4: not an evalscope GAIA review (no usable 'sample_score')"),
        (
            dumps({"index": 9, "target": "1", "sample_score": {"score": {"value": {}}}}),
            "line 4: not an evalscope GAIA review (no usable 'task_id')",
        ),
    ],
)
def test_compare_names_a_broken_evalscope_line(tmp_path: Path, line: str, message: str) -> None:
    """Issue #10 finding 7: a corrupt or key-less line was a traceback."""
    code, _, err = invoke("compare", str(EVALSCOPE_RUN), str(_evalscope_dir(tmp_path, line)))
    assert code == 1 and err.count("\n") == 1
    assert "gaia_2023_level1.jsonl, " + message in err


# -- inspect_evals' own gaia task ------------------------------------------------------------------


def test_inspect_evals_beside_evalscope() -> None:
    document = compare_json(str(INSPECT_EVALS_LOG), str(EVALSCOPE_RUN), *SNAPSHOT)
    assert document["a"]["harness"] == "inspect_evals" and document["a"]["model"].endswith(
        "gaia-bot"
    )
    assert "another harness: inspect_evals gaia 4-C" in document["a"]["flags"]
    levels = by_level(document)
    # inspect_evals' model: L1 2/3 (92 days), L2 2/3 (the crew's order), L3 1/3
    assert [levels[level]["a_accuracy"] for level in "123"] == pytest.approx([2 / 3, 2 / 3, 1 / 3])
    assert [levels[level]["b_accuracy"] for level in "123"] == pytest.approx([1, 2 / 3, 1 / 3])
    everything = levels["all"]
    assert everything["difference"] == pytest.approx(-1 / 9)
    # one discordant question (the days, right for evalscope only): p = 1
    assert (everything["a_only"], everything["b_only"], everything["p_value"]) == (0, 1, 1.0)
    assert everything["a_reported"] == pytest.approx(5 / 9)
    assert {d["task_id"] for d in document["differences"]} == {MINI_DAYS, MINI_MEMO}


def test_inspect_evals_beside_inspect_gaia(tmp_path: Path) -> None:
    """inspect_gaia's run as the gaia-mini run records it: all right but the last level-3 one."""
    theirs = read_evalscope_run(EVALSCOPE_RUN)
    samples = [
        {"id": s.task_id, "level": s.level, "target": s.target, "value": "C", "answer": s.target}
        if s.task_id != "7792a62e-6320-5716-8f0c-fe0db2e7f39f"
        else {"id": s.task_id, "level": 3, "target": s.target, "value": "I", "answer": "1298"}
        for s in theirs.samples
    ]
    ours = write_log(tmp_path / "ours.eval", samples)
    everything = by_level(compare_json(str(ours), str(INSPECT_EVALS_LOG), *SNAPSHOT))["all"]
    assert (everything["a_accuracy"], everything["b_accuracy"]) == pytest.approx((8 / 9, 5 / 9))
    # days, crew, memo: right for inspect_gaia only. Binomial(3, 1/2): p = 2 · 1/8.
    assert (everything["a_only"], everything["b_only"], everything["p_value"]) == (3, 0, 0.25)
    assert (everything["ci_low"], everything["ci_high"]) == pytest.approx(tango_one_sided(3, 9))


# -- leaderboard files -----------------------------------------------------------------------------


def leaderboard(path: Path, answers: dict[str, str]) -> Path:
    path.write_text(
        "".join(json.dumps({"task_id": t, "model_answer": a}) + "\n" for t, a in answers.items())
    )
    return path


def test_a_leaderboard_file_lacking_questions(tmp_path: Path) -> None:
    jsonl = leaderboard(
        tmp_path / "smolagents.jsonl",
        {
            MINI_DAYS: "92",
            MINI_CREW: "Ilse, Bartholomew, Quentin, Osric",
            MINI_MEMO: "Harbour Mill Renovation",
        },
    )
    code, out, err = invoke(
        "compare", str(EVALSCOPE_RUN), str(jsonl), *SNAPSHOT, "--format", "json"
    )
    assert code == 0 and "B lacks 6 question(s) the other answered" in err
    assert err.count("\n") == 1 and err.strip().endswith(" and 3 more"), "a few ids, not all"
    document = json.loads(out)
    assert document["b"]["label"] == "smolagents (leaderboard-jsonl)"
    assert document["b"]["own_verdicts"] is False
    everything = by_level(document)["all"]
    assert (everything["n"], everything["a_lacks"], everything["b_lacks"]) == (3, 0, 6)
    assert (everything["a_accuracy"], everything["b_accuracy"]) == pytest.approx((1 / 3, 1.0))
    assert everything["b_reported"] is None and everything["p_value"] == 0.5
    code, out, _ = invoke(
        "compare", str(EVALSCOPE_RUN), str(jsonl), *SNAPSHOT, "--format", "markdown"
    )
    assert "compared on 3 questions both answered; A lacks 0, B lacks 6" in out
    assert "| all | 3 | 0.333 | 1.000 | -0.667 |" in out and "| — |" in out


def test_a_leaderboard_file_of_another_split(tmp_path: Path) -> None:
    jsonl = leaderboard(tmp_path / "test.jsonl", {MINI_DAYS: "92", "0f1e2d3c-test": "x", "a": "b"})
    code, _, err = invoke("compare", str(EVALSCOPE_RUN), str(jsonl), *SNAPSHOT)
    assert code == 1 and err.count("\n") == 1
    assert f"2 task id(s) of {jsonl} are not in the validation split of snapshot {GAIA_MINI}" in err
    assert "is it a run of another split or dataset?" in err


def test_a_leaderboard_file_needs_a_snapshot(tmp_path: Path, isolated_cache: Path) -> None:
    jsonl = leaderboard(tmp_path / "p.jsonl", {MINI_DAYS: "92"})
    code, _, err = invoke("compare", str(EVALSCOPE_RUN), str(jsonl))
    assert code == 1 and err.count("\n") == 1 and "give --dataset-path" in err


def test_without_a_snapshot_the_runs_own_targets_are_said(isolated_cache: Path) -> None:
    document = compare_json(str(INSPECT_EVALS_LOG), str(EVALSCOPE_RUN))
    assert document["answers"]["source"] == "the runs' own targets (no GAIA snapshot found)"
    assert by_level(document)["all"]["b_accuracy"] == pytest.approx(6 / 9)


def test_a_cached_snapshot_is_used(isolated_cache: Path) -> None:
    from inspect_gaia.questions.hub import HF_REVISION, snapshot_dir

    cached = snapshot_dir("huggingface", HF_REVISION)
    shutil.copytree(GAIA_MINI, cached)
    (cached / ".inspect_gaia-complete-validation.json").write_text("{}")
    document = compare_json(str(INSPECT_EVALS_LOG), str(EVALSCOPE_RUN))
    assert document["answers"]["source"] == f"snapshot {cached}"


# -- question sets ---------------------------------------------------------------------------------


def test_a_question_set_applies_to_both_sides(tmp_path: Path) -> None:
    corrected = tmp_path / "answers.json"
    corrected.write_text(json.dumps({MINI_MEMO: "The Harbour Mill Renovation"}))
    document = compare_json(
        str(INSPECT_EVALS_LOG),
        str(EVALSCOPE_RUN),
        *SNAPSHOT,
        "--exclude",
        MINI_DAYS,
        "--answers",
        str(corrected),
    )
    assert document["answers"]["question_set"] == "question set: 8 of 9, 1 answer corrected"
    everything = by_level(document)["all"]
    # the days left out; inspect_evals' memo answer ("The Harbour Mill Renovation") is now right
    assert everything["n"] == 8 and everything["a_accuracy"] == pytest.approx(6 / 8)
    assert everything["b_accuracy"] == pytest.approx(5 / 8)
    code, out, _ = invoke(
        "compare",
        str(INSPECT_EVALS_LOG),
        str(EVALSCOPE_RUN),
        *SNAPSHOT,
        "--exclude",
        MINI_DAYS,
        "--format",
        "markdown",
    )
    assert code == 0 and "question set: 8 of 9" in out
    code, _, err = invoke(
        "compare", str(INSPECT_EVALS_LOG), str(EVALSCOPE_RUN), *SNAPSHOT, "--exclude", "nope"
    )
    assert code == 1 and "--exclude names 1 task id(s) not in the validation split: nope" in err


def test_the_plot_shows_n_and_the_intervals(tmp_path: Path) -> None:
    """`compare --plot`: whether a gap is noise is on the chart, as in the table."""
    from inspect_gaia._cli._plot import compare_figure

    log = _evalscope_as_inspect_log(tmp_path / "same.eval")
    document = compare_json(str(log), str(EVALSCOPE_RUN), *SNAPSHOT)
    figure = compare_figure(document)
    (ax,) = figure.axes
    ticks = [tick.get_text() for tick in ax.get_xticklabels()]
    assert ticks == ["level 1\nn=3", "level 2\nn=3", "level 3\nn=3", "all\nn=9"]
    notes = [text.get_text() for text in ax.texts]
    everything = by_level(document)["all"]
    assert notes[-1] == (
        f"A − B +0.00\n[{everything['ci_low']:+.2f}, {everything['ci_high']:+.2f}]"
    )
    bars = [c for c in ax.containers if type(c).__name__ == "BarContainer"]
    assert len(bars) == 2 and all(c.errorbar is not None for c in bars)  # A's and B's


def test_two_runs_of_one_model_are_titled_apart_by_run(tmp_path: Path) -> None:
    """Issue #40: both sides were `openai-api/scripted/gaia-bot (inspect_gaia)`."""
    a = _evalscope_as_inspect_log(tmp_path / "a.eval", run_id="AaaaAaaa1", created="2026-12-01")
    b = _evalscope_as_inspect_log(tmp_path / "b.eval", run_id="BbbbBbbb2", created="2026-12-02")
    code, out, err = invoke("compare", str(a), str(b), *SNAPSHOT)
    assert code == 0, err
    label = "openai-api/scripted/gaia-bot (inspect_gaia)"
    assert (
        f"A: {label} [run 2026-12-01 00:00 AaaaAaaa] vs B: {label} [run 2026-12-02 00:00 BbbbBbbb]"
        in " ".join(out.split())
    )
    document = compare_json(str(a), str(EVALSCOPE_RUN), *SNAPSHOT)
    assert document["a"]["label"] == label, "sides of different labels keep them as they are"
