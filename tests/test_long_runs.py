"""Long and large runs with inspect's own tools: eval-set resumed, retries, several tasks at once.

Every test runs real ``inspect`` commands on gaia-tiny with the scripted model and checks that
each question is scored exactly once — in the log and in ``inspect-gaia report`` — and that no
sandbox is left behind.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from support.scripted_model import Entry, ScriptedModel
from tests.helpers import (
    QUESTIONS,
    Play,
    docker_leftovers,
    inspect_command,
    logs_in,
    report,
    running_containers,
    scored_once,
    started_as,
    wait_until,
)
from tests.scenario import LAGOON, VALIDATION

pytestmark = pytest.mark.docker

BLOCKED = ("heron or herons", "lanterns were sold")
"""gaia-tiny questions whose first command outlasts the test until the run is stopped."""


def scripted_blocking(blocked: tuple[str, ...]) -> list[Entry]:
    """gaia-tiny's scenario, with a first command on ``blocked`` questions that never ends."""
    return [
        Entry(e.match, [{"bash": "sleep 600"}, *e.steps]) if e.match in blocked else e
        for e in VALIDATION
    ]


def running_since(before: set[str]) -> list[str]:
    """Sandbox containers running now that were not there ``before``."""
    known = {name.split(":", 1)[1] for name in before if name.startswith("container:")}
    return [name for name in running_containers() if name not in known]


# -- eval-set: stopped, then resumed ----------------------------------------------------------------


STOPS = [(signal.SIGINT, "cancelled"), (signal.SIGTERM, "cancelled"), (signal.SIGKILL, "started")]
"""A stop signal, and the status it leaves in the log."""


@pytest.mark.parametrize(("signum", "status"), STOPS, ids=["ctrl-c", "sigterm", "sigkill"])
def test_an_interrupted_eval_set_resumes_rerunning_only_unfinished_samples(
    sandbox_image: str, scripted: Play, signum: int, status: str, tmp_path: Path
) -> None:
    """Ctrl-C, a supervisor's SIGTERM, or SIGKILL (nothing runs: a crash, a power cut)."""
    before = docker_leftovers()
    model = scripted(scripted_blocking(BLOCKED))
    command = inspect_command("eval-set", ["inspect_gaia/gaia"], sandbox_image, tmp_path / "logs")
    run = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=tmp_path,
        start_new_session=True,
        preexec_fn=started_as("terminal"),
    )
    try:
        # the five others finish (their containers gone); the two blocked ones run their sleep
        wait_until(
            lambda: set(model.calls) == QUESTIONS and len(running_since(before)) == len(BLOCKED),
            "five samples done and two blocked",
        )
        time.sleep(1)
        if signum == signal.SIGTERM:  # as a supervisor or `timeout`: to the process
            os.kill(run.pid, signum)
        else:  # as a terminal's Ctrl-C, or a job killed: to the whole group
            os.killpg(run.pid, signum)
        output, _ = run.communicate(timeout=120)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
            run.communicate()
    # the log's status is what to trust: with its output not a terminal, inspect 0.3.285's eval-set
    # exits 0 after a SIGINT, saying "Completed all tasks in '<dir>' successfully" (in a terminal
    # its display takes the Ctrl-C and it exits 130: docs/long-runs.md); a SIGTERM's status is ours
    (stopped,) = logs_in(tmp_path / "logs")
    assert stopped.status == status, output[-2000:]
    if signum == signal.SIGINT:
        assert run.returncode == 0 and "successfully" in output, output[-2000:]
    if signum == signal.SIGTERM:
        assert run.returncode == 128 + signum, output[-2000:]
    if signum != signal.SIGKILL:  # a killed run's sandboxes stay until the next run sweeps them
        assert docker_leftovers() == before, output[-2000:]
        assert stopped.samples is not None
        assert sorted(str(s.id) for s in stopped.samples if s.scores) == sorted(
            str(s.id) for s in stopped.samples if not any(b in str(s.input) for b in BLOCKED)
        )
        # what a user can trust after a stop: the log says cancelled, and report says incomplete
        (group,) = report(tmp_path / "logs")["groups"]
        assert any(flag.startswith("incomplete run") for flag in group["flags"])

    # resumed by rerunning the same command: only the two unfinished samples run again
    model.entries = list(VALIDATION)
    model.calls.clear()
    resumed = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert resumed.returncode == 0, resumed.stdout[-3000:] + resumed.stderr[-3000:]
    assert sorted(set(model.calls)) == sorted(BLOCKED)
    final = logs_in(tmp_path / "logs")[-1]
    assert final.status == "success" and final.samples is not None
    assert Counter(str(s.id) for s in final.samples).most_common(1)[0][1] == 1
    assert len(final.samples) == len(VALIDATION)
    group = scored_once(report(tmp_path / "logs"), len(VALIDATION))
    assert group["flags"] == []
    *_, overall = group["levels"]
    assert overall["correct"] == 6 and overall["errored"] == 0
    assert docker_leftovers() == before


# -- --retry-on-error: a sandbox killed from outside -------------------------------------------------


def test_retry_on_error_reruns_a_sample_whose_container_was_killed_and_counts_it_once(
    sandbox_image: str, scripted: Play, tmp_path: Path
) -> None:
    before = docker_leftovers()
    model = scripted(
        [
            Entry("invented lagoon", [{"bash": "sleep 600"}, {"submit": "Quillfeather Lagoon"}]),
            *[e for e in VALIDATION if e.match != "invented lagoon"],
        ]
    )
    killed: list[str] = []

    def kill_the_lagoons_sandbox() -> None:
        wait_until(lambda: "invented lagoon" in model.calls, "the lagoon's first command")
        time.sleep(2)  # the command runs
        (name,) = [n for n in running_since(before) if LAGOON in n]
        # the retry gets an answer at once; the killed attempt never reads it
        model.entries[0] = Entry("invented lagoon", [{"submit": "Quillfeather Lagoon"}])
        subprocess.run(["docker", "kill", name], capture_output=True, check=True)
        killed.append(name)

    killer = threading.Thread(target=kill_the_lagoons_sandbox)
    killer.start()
    run = subprocess.run(
        [
            *inspect_command("eval", ["inspect_gaia/gaia"], sandbox_image, tmp_path / "logs"),
            "-T",
            "level=1",
            "--retry-on-error",
            "1",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    killer.join()
    assert killed, "the lagoon's container was never killed"
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    (log,) = logs_in(tmp_path / "logs")
    assert log.status == "success" and log.samples is not None
    assert sorted(str(s.id) for s in log.samples) == sorted({str(s.id) for s in log.samples})
    lagoon = next(s for s in log.samples if s.id == LAGOON)
    assert lagoon.error is None and lagoon.scores is not None
    assert lagoon.scores["gaia_scorer"].value == "C"
    assert lagoon.error_retries is not None and len(lagoon.error_retries) == 1
    group = scored_once(report(tmp_path / "logs"), 2)
    *_, overall = group["levels"]
    assert overall["correct"] == 2 and overall["errored"] == 0
    assert docker_leftovers() == before


# -- three level tasks in one process ----------------------------------------------------------------


@contextmanager
def watching_sandboxes(besides: set[str]) -> Iterator[dict[str, Any]]:
    """Record, while the block runs, every new gaia-docker network and the most containers alive."""
    seen: dict[str, Any] = {"networks": set(), "most_containers": 0}
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            now = docker_leftovers() - besides
            seen["networks"] |= {n for n in now if n.startswith("network:")}
            alive = len([n for n in now if n.startswith("container:")])
            seen["most_containers"] = max(seen["most_containers"], alive)
            time.sleep(0.2)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        yield seen
    finally:
        stop.set()
        watcher.join()


def test_three_level_tasks_in_one_process_share_one_network_within_max_sandboxes(
    sandbox_image: str, scripted_validation: ScriptedModel, tmp_path: Path
) -> None:
    before = docker_leftovers()
    levels = [f"inspect_gaia/gaia_level{n}" for n in (1, 2, 3)]
    with watching_sandboxes(before) as seen:
        run = subprocess.run(
            [
                *inspect_command("eval", levels, sandbox_image, tmp_path / "logs"),
                "--max-tasks",
                "3",
                "--max-sandboxes",
                "2",
            ],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=300,
        )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    logs = logs_in(tmp_path / "logs")
    assert sorted(log.eval.task for log in logs) == levels
    for log in logs:
        assert log.status == "success" and log.samples is not None
        assert all(s.scores is not None for s in log.samples)
    assert sum(len(log.samples or []) for log in logs) == len(VALIDATION)
    assert len(seen["networks"]) == 1, seen["networks"]
    assert 1 <= seen["most_containers"] <= 2
    group = scored_once(report(tmp_path / "logs"), len(VALIDATION))
    assert group["flags"] == []
    *_, overall = group["levels"]
    assert overall["correct"] == 6
    assert docker_leftovers() == before


# -- checkpointing ------------------------------------------------------------------------------------


def test_checkpoint_has_no_effect_on_gaias_agent_and_needs_no_restic(
    sandbox_image: str, scripted_validation: ScriptedModel, tmp_path: Path
) -> None:
    """inspect checkpoints only agents that enter ``checkpointer()`` (``react``, bridged agents);
    GAIA's ``basic_agent`` does not, so a stopped sample reruns from its start under eval-set or
    eval-retry. Offline, with no restic in inspect's cache, a run with ``--checkpoint`` is the
    same as one without."""
    before = docker_leftovers()
    cache = tmp_path / "cache"
    cache.mkdir()
    log_dir = tmp_path / "logs"
    run = subprocess.run(
        [
            *inspect_command("eval", ["inspect_gaia/gaia"], sandbox_image, log_dir),
            "-T",
            "level=1",
            "--checkpoint",
            "turn:1",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
        env={**os.environ, "XDG_CACHE_HOME": str(cache)},
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    (log,) = logs_in(log_dir)
    assert log.status == "success" and log.samples is not None and len(log.samples) == 2
    for sample in log.samples:
        assert sample.error is None and sample.scores is not None
        assert not [e for e in sample.events if e.event == "checkpoint"]
    assert not list(log_dir.glob("*.checkpoints")), "no checkpoint was written"
    assert not list(cache.rglob("restic*")), "no restic was fetched"
    scored_once(report(log_dir), 2)
    assert docker_leftovers() == before
