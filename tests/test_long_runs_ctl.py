"""Long runs steered with ``inspect ctl`` while they run: a task drained, an errored sample
requeued.

As in ``test_long_runs.py`` (whose helpers these tests share): real ``inspect`` commands on
gaia-tiny with the scripted model, each question scored exactly once — in the log and in
``inspect-gaia report`` — and no sandbox left behind.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from support.scripted_model import Entry
from tests.helpers import (
    QUESTIONS,
    Play,
    docker_leftovers,
    inspect_cli,
    inspect_command,
    logs_in,
    report,
    scored_once,
    wait_until,
)
from tests.scenario import LAGOON, VALIDATION

pytestmark = pytest.mark.docker


def started_task(log_dir: Path) -> str:
    """The inspect task id of the run logging to ``log_dir`` (its log file is written at start)."""
    wait_until(lambda: any(log_dir.glob("*.eval")), "the run's log file")
    (log_file,) = log_dir.glob("*.eval")
    return log_file.stem.rsplit("_", 1)[1]


def ctl(*args: str) -> str:
    """``inspect ctl ARGS``; its output (it must succeed)."""
    done = subprocess.run([inspect_cli(), "ctl", *args], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_a_drained_task_is_reported_incomplete_until_eval_retry_finishes_it(
    sandbox_image: str, scripted: Play, tmp_path: Path
) -> None:
    before = docker_leftovers()
    model = scripted([Entry(e.match, [{"bash": "sleep 3"}, *e.steps]) for e in VALIDATION])
    log_dir = tmp_path / "logs"
    run = subprocess.Popen(
        [
            *inspect_command("eval", ["inspect_gaia/gaia"], sandbox_image, log_dir),
            "--max-samples",
            "2",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=tmp_path,
    )
    try:
        task = started_task(log_dir)
        wait_until(lambda: len(set(model.calls)) == 2, "two samples in flight")
        assert "drain" in ctl("task", "drain", task)
        output, _ = run.communicate(timeout=120)
    finally:
        if run.poll() is None:
            run.kill()
            run.communicate()
    assert run.returncode == 0, output[-3000:]
    (drained,) = logs_in(log_dir)
    # inspect's own verdict: success, with the queued samples simply absent
    assert drained.status == "success" and drained.samples is not None
    # a sample dequeued as the drain came in is logged cancelled, unscored: eval-retry reruns it
    ran = {str(s.input) for s in drained.samples if s.error is None}
    assert 0 < len(drained.samples) < len(VALIDATION)
    (group,) = report(log_dir)["groups"]
    assert any("samples not run" in flag for flag in group["flags"]), group["flags"]

    model.calls.clear()
    retry = subprocess.run(
        [inspect_cli(), "eval-retry", drained.location, "--log-dir", str(log_dir)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    assert retry.returncode == 0, retry.stdout[-3000:] + retry.stderr[-3000:]
    assert set(model.calls) == {q for q in QUESTIONS if not any(q in text for text in ran)}
    group = scored_once(report(log_dir), len(VALIDATION))
    assert group["flags"] == []
    assert docker_leftovers() == before


def test_a_requeued_sample_is_counted_once_with_its_fresh_outcome(
    sandbox_image: str, scripted: Play, tmp_path: Path
) -> None:
    before = docker_leftovers()
    visitors = next(e for e in VALIDATION if e.match == "visitors per gallery")
    model = scripted(
        [
            Entry("invented lagoon", [{"http_error": 400}]),
            Entry(visitors.match, [{"bash": "sleep 20"}, *visitors.steps]),
        ]
    )
    log_dir = tmp_path / "logs"
    run = subprocess.Popen(
        [*inspect_command("eval", ["inspect_gaia/gaia"], sandbox_image, log_dir), "-T", "level=1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=tmp_path,
    )
    try:
        task = started_task(log_dir)
        wait_until(lambda: LAGOON in ctl("sample", "errors", task, "--json"), "the lagoon's error")
        model.entries[0] = Entry("invented lagoon", [{"submit": "Quillfeather Lagoon"}])
        assert "requeue" in ctl("sample", "requeue", task, "--errored")
        output, _ = run.communicate(timeout=120)
    finally:
        if run.poll() is None:
            run.kill()
            run.communicate()
    assert run.returncode == 0, output[-3000:]
    (log,) = logs_in(log_dir)
    assert log.status == "success" and log.samples is not None and len(log.samples) == 2
    lagoon = next(s for s in log.samples if s.id == LAGOON)
    assert lagoon.error is None and lagoon.scores is not None
    assert lagoon.scores["gaia_scorer"].value == "C"
    assert lagoon.error_retries is not None and len(lagoon.error_retries) == 1
    group = scored_once(report(log_dir), 2)
    *_, overall = group["levels"]
    assert (overall["correct"], overall["errored"]) == (2, 0)
    assert docker_leftovers() == before
