"""Running ``inspect`` commands on gaia-tiny and reading what they left: the long-run tests' helpers."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from inspect_ai.log import EvalLog, list_eval_logs, read_eval_log

from tests.helpers_runs import MODEL, inspect_cli, invoke
from tests.scenario import GAIA_TINY, VALIDATION

QUESTIONS = {entry.match for entry in VALIDATION}
"""gaia-tiny's questions, as the scripted model matches them."""


def inspect_command(
    verb: str, tasks: list[str], image: str, log_dir: Path, *options: str
) -> list[str]:
    """``inspect VERB TASKS -T dataset_path=gaia-tiny -T image=IMAGE`` with the scripted model."""
    return [
        inspect_cli(),
        verb,
        *tasks,
        "-T",
        f"dataset_path={GAIA_TINY}",
        "-T",
        f"image={image}",
        "--model",
        MODEL,
        "--log-dir",
        str(log_dir),
        "--display",
        "plain",
        *options,
    ]


def logs_in(log_dir: Path) -> list[EvalLog]:
    """Every log under ``log_dir``, oldest first."""
    return [read_eval_log(info.name) for info in reversed(list_eval_logs(str(log_dir)))]


def report(*paths: Path) -> dict[str, Any]:
    """``inspect-gaia report PATHS --format json``."""
    code, out, err = invoke("report", *map(str, paths), "--format", "json")
    assert code == 0, err
    document = json.loads(out)
    assert isinstance(document, dict)
    return document


def scored_once(document: dict[str, Any], questions: int) -> dict[str, Any]:
    """The report's one group, checked to count ``questions`` questions once each; its "all" row."""
    (group,) = document["groups"]
    *_, overall = group["levels"]
    assert overall["level"] == "all"
    assert (overall["questions"], overall["samples"]) == (questions, questions), overall
    return dict(group)


def wait_until(condition: Any, what: str, timeout: float = 120) -> None:
    """Poll ``condition()`` until true; fail naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}")


def report_json(*args: str) -> dict[str, Any]:
    """``inspect-gaia report ARGS --format json``, in-process."""
    code, out, err = invoke("report", *args, "--format", "json")
    assert code == 0, err
    document = json.loads(out)
    assert isinstance(document, dict)
    return document


def overall(group: dict[str, Any]) -> dict[str, Any]:
    """A report group's "all" row."""
    *_, last = group["levels"]
    assert last["level"] == "all"
    return dict(last)
