"""What a group covers: a `--limit` look, one level, a stopped run and a model never reached are
flagged, ranked after the complete runs, and `n` stays on an 80-column terminal (issue #40)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from inspect_gaia.logs.coverage import cancelled, partial
from tests.helpers import invoke, overall, report_json, write_log

LEVELS = {"a": 1, "b": 1, "c": 1, "d": 2, "e": 2, "f": 2, "g": 3, "h": 3, "i": 3}
"""Nine questions of three levels, as a crafted split."""


def _samples(ids: str, right: str = "", **extra: Any) -> list[dict[str, Any]]:
    return [
        {"id": q, "level": LEVELS[q], "target": "1", "answer": "1" if q in right else "2"}
        | {"value": "C" if q in right else "I", **extra}
        for q in ids
    ]


@pytest.fixture
def week(tmp_path: Path) -> Path:
    """A folder with a `--limit 2` look, a `-T level=1` run and the full run of one model."""
    folder = tmp_path / "logs"
    folder.mkdir()
    runs: list[tuple[str, str, str, dict[str, Any]]] = [
        ("look0001", "ab", "ab", {"limit": 2, "questions": 9}),  # --limit 2
        ("level001", "abc", "abc", {"params": {"level": 1}, "questions": 3}),  # -T level=1
        ("full0001", "abcdefghi", "abcdefg", {"questions": 9}),  # the full run
    ]
    for day, (run_id, asked, right, options) in enumerate(runs, 1):
        created = f"2026-12-0{day}T10:00:00+00:00"
        write_log(
            folder / f"{run_id}.eval",
            _samples(asked, right),
            run_id=run_id,
            created=created,
            **options,
        )
    return folder


def test_partial_groups_are_flagged_and_ranked_after_the_complete_one(week: Path) -> None:
    groups = report_json(str(week))["groups"]
    assert [overall(g)["questions"] for g in groups][0] == 9, "the full run first, at 0.78"
    by_run = {g["run"].split()[-1]: g for g in groups}
    assert "partial: 2 of 9 questions (--limit or --sample-id)" in by_run["look0001"]["flags"]
    assert "level 1 only" in by_run["level001"]["flags"]
    assert by_run["full0001"]["flags"] == [] and not by_run["full0001"]["partial"]
    assert by_run["look0001"]["partial"] and by_run["level001"]["partial"]


def test_at_80_columns_the_overview_keeps_n_and_says_why_it_ranks_apart(
    week: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    code, out, err = invoke("report", str(week))
    assert code == 0, err
    overview = out.split("GAIA scores:")[0]
    header = next(line for line in overview.splitlines() if "pass@1" in line)
    assert "┃ n ┃" in header, overview
    hidden = [line for line in overview.splitlines() if line.startswith("hidden at this width")]
    assert all(" n," not in line and not line.endswith(" n") for line in hidden), hidden
    assert "groups over different questions (n 9, 3, 2)" in err


def test_a_model_never_reached_is_flagged_with_the_retry(tmp_path: Path) -> None:
    error = "RetryError(<Future at 0x7f state=finished raised APIConnectionError>)"
    log = write_log(tmp_path / "down.eval", _samples("abc", error=error), status="error")
    (group,) = report_json(str(log))["groups"]
    assert group["flags"] == [
        f"model calls failed: 3 of 3 samples errored on their model call ({error}) — "
        f"inspect eval-retry {log}"
    ]
    one_down = write_log(
        tmp_path / "some.eval", _samples("ab", error=error) + _samples("c", right="c")
    )
    (group,) = report_json(str(one_down))["groups"]
    assert group["flags"] == [], "a model that answered some questions was reached"


GENERATE_FRAME = (
    '  File "/venv/lib/python3.11/site-packages/inspect_ai/model/_model.py", line 1046, in '
    "generate\n    output, event = await self._generate(\n"
)
SERVER_ERROR = (
    "Traceback (most recent call last):\n"
    + GENERATE_FRAME
    + '  File "/venv/lib/python3.11/site-packages/openai/_base_client.py", line 1875, in request\n'
    "openai.InternalServerError: Error code: 501 - {'error': 'Unsupported method'}\n\n"
    "The above exception was the direct cause of the following exception:\n\n"
    "Traceback (most recent call last):\n"
    + GENERATE_FRAME
    + "tenacity.RetryError: RetryError[<Future at 0x7f state=finished raised "
    "InternalServerError>]\n"
)
"""A sample's traceback as inspect records it for a server that answers 501 (a real run's, cut)."""


@pytest.mark.parametrize(
    "error",
    [
        "ModuleNotFoundError(\"No module named 'inspect_swe'\")",
        "FileNotFoundError(2, 'No such file or directory')",
    ],
)
def test_an_error_that_only_ends_in_a_model_errors_name_is_not_a_model_call(
    tmp_path: Path, error: str
) -> None:
    """``NotFoundError`` is matched as a whole name: a missing module or file is not the model."""
    log = write_log(tmp_path / "run.eval", _samples("abc", error=error), status="error")
    (group,) = report_json(str(log))["groups"]
    assert not any("model" in flag for flag in group["flags"]), group["flags"]
    assert overall(group)["errored"] == 3


def test_a_server_that_answers_only_errors_is_flagged_with_the_first_errors_line(
    tmp_path: Path,
) -> None:
    """A 501 from the wrong server (or an overloaded server's 5xx): the class is no matter, the
    traceback says the error came out of the model call."""
    error = "RetryError(<Future at 0x7f state=finished raised InternalServerError>)"
    samples = _samples("ab", error=error, traceback=SERVER_ERROR)
    log = write_log(tmp_path / "run.eval", samples, status="error")
    (group,) = report_json(str(log))["groups"]
    assert group["flags"] == [
        "model calls failed: 2 of 2 samples errored on their model call (openai."
        "InternalServerError: Error code: 501 - {'error': 'Unsupported method'}) — "
        f"inspect eval-retry {log}"
    ]


def test_the_samples_an_egress_outage_ended_are_flagged_with_the_sample_it_followed(
    tmp_path: Path,
) -> None:
    ended = (
        "EgressOutageError(\"The run's egress proxy stopped while this sample ran a command "
        "(killed: out of memory; the sandbox holding most of the proxy then was sample flood-7 "
        "(epoch 1) (64 connections, 0.0 MiB unread, 60 requests in flight), down 1.6 s from "
        '12:01:02; it was restarted): what the command fetched may have failed")'
    )
    log = write_log(tmp_path / "run.eval", _samples("ab", error=ended) + _samples("c", right="c"))
    (group,) = report_json(str(log))["groups"]
    assert group["flags"] == [
        "egress proxy down: 2 samples ended (the sandbox holding most of the proxy then was "
        f"sample flood-7 (epoch 1)) — inspect eval-retry {log}"
    ]
    assert overall(group)["errored"] == 2
    # a log written before round 6 named the last client in: still read, in today's words
    before = ended.replace(
        "the sandbox holding most of the proxy then was", "the last request before it came from"
    )
    old = write_log(tmp_path / "old.eval", _samples("ab", error=before))
    (group,) = report_json(str(old))["groups"]
    assert (
        "(the sandbox holding most of the proxy then was sample flood-7 (epoch 1))"
        in (group["flags"][0])
    )


def test_cancelled_samples_are_not_finished_not_errored(tmp_path: Path) -> None:
    """A stop outside a terminal: the log holds its in-flight samples as CancelledError."""
    stop = "CancelledError('Cancelled by cancel scope 7f01')"
    log = write_log(
        tmp_path / "stopped.eval",
        _samples("ab", right="a") + _samples("cd", error=stop),
        status="cancelled",
        questions=9,
    )
    (group,) = report_json(str(log))["groups"]
    row = overall(group)
    assert (row["questions"], row["errored"], row["accuracy"]) == (2, 0, 0.5)
    assert (
        f"incomplete run, questions may be missing: {log} (cancelled, 2 samples not finished)"
        in group["flags"]
    )
    assert group["partial"]


def test_a_stopped_run_with_no_finished_sample_is_skipped(tmp_path: Path) -> None:
    stop = "CancelledError('Cancelled by cancel scope 7f01')"
    write_log(tmp_path / "a.eval", _samples("ab", error=stop), status="cancelled")
    write_log(tmp_path / "b.eval", _samples("abc", right="a"), run_id="other")
    code, _, err = invoke("report", str(tmp_path), "--format", "json")
    assert code == 0
    assert "a.eval: no sample finished before the run stopped (status cancelled)" in err


def test_the_words_of_a_flag() -> None:
    assert cancelled("CancelledError()") and not cancelled("RuntimeError('CancelledError')")
    assert partial(["level 2, 3 only"]) and not partial(["question set: 3 of 9"])
