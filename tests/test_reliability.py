"""Faults, interruptions and isolation: what a long parallel GAIA run must survive."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest
from inspect_ai import eval_retry
from inspect_ai.log import read_eval_log
from inspect_ai.model import ChatMessageTool

from inspect_gaia.defaults import SandboxKind
from inspect_gaia.sandboxes.docker import TAG_LABEL, TAG_VARIABLE
from inspect_gaia.sandboxes.signals import compose_command
from support.scripted_model import Entry
from tests.helpers import (
    Play,
    docker_leftovers,
    eval_command,
    eval_gaia,
    inspect_cli,
    started_as,
    wait_for_containers,
)
from tests.scenario import GAIA_TINY, LAGOON

pytestmark = pytest.mark.docker

VISITS = "9410e454-b071-52ff-ac24-dce9845bebd0"
VISITS_FILE = GAIA_TINY / "2023" / "validation" / f"{VISITS}.csv"


def test_an_erroring_sample_is_scored_and_eval_retry_reruns_only_it(
    sandbox_image: str, sandbox_kind: SandboxKind, scripted: Play, tmp_path: Path
) -> None:
    before = docker_leftovers()
    model = scripted(
        [Entry("invented lagoon", [{"http_error": 400}]), Entry("", [{"submit": "48671"}])]
    )
    log = eval_gaia(
        tmp_path, sandbox=sandbox_kind, dataset_path=str(GAIA_TINY), image=sandbox_image, level=1
    )
    assert log.status == "error" and log.samples is not None and len(log.samples) == 2
    failed = next(s for s in log.samples if s.id == LAGOON)
    fine = next(s for s in log.samples if s.id == VISITS)
    assert failed.error is not None and "400" in failed.error.message
    # still scored, and wrong: the denominator keeps every selected sample
    assert failed.scores is not None and failed.scores["gaia_scorer"].value == "I"
    assert "400" in str((failed.scores["gaia_scorer"].metadata or {})["error"])
    assert "error" not in ((fine.scores or {})["gaia_scorer"].metadata or {})
    assert (
        fine.error is None and fine.scores is not None and fine.scores["gaia_scorer"].value == "C"
    )
    assert log.results is not None
    metrics = {k: v.value for s in log.results.scores for k, v in s.metrics.items()}
    assert metrics["accuracy"] == 0.5 and metrics["level1_accuracy"] == 0.5
    assert docker_leftovers() == before

    model.entries = [
        Entry("invented lagoon", [{"submit": "Quillfeather Lagoon"}]),
        Entry("", [{"submit": "wrong"}]),
    ]
    model.calls.clear()
    (retried,) = eval_retry(log, log_dir=str(tmp_path / "retry"), display="none")
    assert retried.status == "success" and retried.samples is not None
    assert model.calls == ["invented lagoon"], "only the errored sample runs again"
    scores = {s.id: s.scores["gaia_scorer"].value for s in retried.samples if s.scores}
    assert scores == {LAGOON: "C", VISITS: "C"}
    assert docker_leftovers() == before


def test_faults_inside_sandboxes_do_not_sink_the_run(
    sandbox_image: str, sandbox_kind: SandboxKind, scripted: Play, tmp_path: Path
) -> None:
    before = docker_leftovers()
    scripted(
        [
            # megabytes of output, then the agent deletes its attachment
            Entry(
                "visitors per gallery",
                [
                    {"bash": "head -c 5000000 /dev/zero | tr '\\\\0' x"},
                    {"bash": f"rm -f /shared_files/{VISITS}.csv && ls /shared_files | wc -l"},
                    {"submit": "48671"},
                ],
            ),
            # a command past command_timeout
            Entry(
                "invented lagoon",
                [{"bash": "sleep 30; echo late"}, {"submit": "Quillfeather Lagoon"}],
            ),
            # a fork bomb against the pids limit
            Entry(
                "crew of a skiff",
                [
                    {"bash": "bomb() { bomb | bomb & }; bomb"},
                    {"submit": "Marisol Vantreek, Odalys Pembury, Fenwick Astolar"},
                ],
            ),
            # a memory hog against the memory limit
            Entry(
                "lanterns were sold",
                [
                    {
                        "bash": "python3 -c 'b = bytearray(900 * 1024 * 1024); print(len(b))'; echo exit=$?"
                    },
                    {"submit": "1204.7"},
                ],
            ),
        ]
    )
    log = eval_gaia(
        tmp_path,
        sandbox=sandbox_kind,
        dataset_path=str(GAIA_TINY),
        image=sandbox_image,
        level="1,2",
        command_timeout=5,
        memory="256m",
        pids=64,
    )
    assert log.status == "success" and log.samples is not None and len(log.samples) == 4
    for sample in log.samples:
        assert sample.error is None, sample.error
        assert sample.scores is not None and sample.scores["gaia_scorer"].value == "C", sample.id
    tools = {s.id: [m for m in s.messages if isinstance(m, ChatMessageTool)] for s in log.samples}
    big = tools[VISITS][0]
    assert len(big.text) < 100_000, "tool output is truncated, not copied whole"
    assert tools[VISITS][1].text.strip() == "0"
    assert VISITS_FILE.is_file(), "the agent deleted a copy, never the dataset's file"
    timed_out = tools[LAGOON][0].error
    assert timed_out is not None and timed_out.type == "timeout"
    hog = next(s for s in log.samples if "lanterns" in str(s.input))
    hog_output = [m for m in hog.messages if isinstance(m, ChatMessageTool)][0]
    assert "exit=137" in hog_output.text or "MemoryError" in hog_output.text
    assert docker_leftovers() == before


def test_a_sandbox_killed_from_outside(
    sandbox_image: str, sandbox_kind: SandboxKind, scripted: Play, tmp_path: Path
) -> None:
    before = docker_leftovers()
    scripted([Entry("", [{"bash": "sleep 60"}, {"submit": "Quillfeather Lagoon"}])])

    def kill_it() -> None:
        (name,) = wait_for_containers(1, besides=before)
        time.sleep(3)  # let the agent's command start
        subprocess.run(["docker", "kill", name], capture_output=True, check=True)

    killer = threading.Thread(target=kill_it)
    killer.start()
    log = eval_gaia(
        tmp_path, sandbox=sandbox_kind, dataset_path=str(GAIA_TINY), image=sandbox_image, ids=LAGOON
    )
    killer.join()
    assert log.samples is not None
    (sample,) = log.samples
    assert sample.scores is not None, "the sample is scored whatever happened to its container"
    assert log.status in ("success", "error")
    assert docker_leftovers() == before


_STOPS = [
    ("terminal", signal.SIGINT),
    ("terminal", signal.SIGTERM),
    ("terminal", signal.SIGHUP),
    ("background", signal.SIGTERM),
    ("background", signal.SIGHUP),
    ("nohup", signal.SIGTERM),
]


@pytest.mark.parametrize(("started", "signum"), _STOPS, ids=[f"{h}-{s.name}" for h, s in _STOPS])
def test_a_stop_signal_mid_run_leaves_nothing_behind(
    sandbox_image: str,
    sandbox_kind: SandboxKind,
    started: str,
    signum: int,
    scripted: Play,
    tmp_path: Path,
) -> None:
    """Ctrl-C, and (issue #10 finding 4) what `timeout`, systemd and a closed terminal send;
    (issue #17) also to a run a script started in the background, which ignores SIGINT."""
    before = docker_leftovers()
    scripted([Entry("", [{"bash": "sleep 120"}, {"submit": "x"}])])
    run = subprocess.Popen(
        eval_command(
            [
                f"dataset_path={GAIA_TINY}",
                f"image={sandbox_image}",
                "level=1",
                f"sandbox={sandbox_kind}",
            ],
            tmp_path / "logs",
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=tmp_path,
        start_new_session=True,
        preexec_fn=started_as(started),
    )
    try:
        wait_for_containers(2, besides=before)
        time.sleep(2)
        if sandbox_kind == "compose":  # the command lines a stop signal looks for (_signals)
            assert _compose_execs(run.pid), "no `docker compose … exec` seen"
        # SIGINT as Ctrl-C sends it (to the group); the others as a supervisor does (the process)
        if signum == signal.SIGINT:
            os.killpg(run.pid, signum)
        else:
            os.kill(run.pid, signum)
        try:
            output, _ = run.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            os.killpg(run.pid, signal.SIGKILL)
            output, _ = run.communicate()
            pytest.fail(f"the run went on after the signal:\n{output[-3000:]}")
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
    assert "Traceback" not in output
    assert docker_leftovers() == before, output[-2000:]
    (log_file,) = (tmp_path / "logs").glob("*.eval")
    assert read_eval_log(str(log_file), header_only=True).status == "cancelled"
    if signum != signal.SIGINT:  # inspect's own exit status for Ctrl-C is its business
        assert run.returncode == 128 + signum, output[-2000:]


def _compose_execs(pid: int, wait: float = 30) -> list[tuple[str, str]]:
    """The run's ``docker compose … exec`` commands as ``_signals`` reads them, once one runs."""
    deadline = time.monotonic() + wait
    while True:
        found = []
        for entry in os.scandir("/proc"):
            try:
                with open(f"{entry.path}/cmdline", "rb") as cmdline:
                    argv = cmdline.read().decode(errors="replace").split("\0")
                with open(f"{entry.path}/stat", "rb") as stat:
                    session = int(stat.read().rsplit(b")", 1)[1].split()[3])
            except (OSError, ValueError, IndexError):
                continue
            command = compose_command(argv)
            if session == pid and command is not None and command[1] == "exec":
                found.append(command)
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.2)


def test_kept_sandboxes_survive_later_runs_until_inspect_sandbox_cleanup(
    sandbox_image: str, scripted: Play, tmp_path: Path
) -> None:
    before = docker_leftovers()
    scripted([Entry("", [{"bash": "touch /kept"}, {"submit": "x"}])])
    task_args = [f"dataset_path={GAIA_TINY}", f"image={sandbox_image}", f"ids={LAGOON}"]
    command = eval_command(task_args, tmp_path / "logs")
    display = command.index("--display")
    del command[display : display + 2]  # inspect's own display where stdout is a pipe: rich
    run = subprocess.run(
        [*command, "--no-sandbox-cleanup"], capture_output=True, text=True, cwd=tmp_path
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    kept = [name for name in docker_leftovers() - before if name.startswith("container:")]
    assert len(kept) == 1
    name = kept[0].split(":", 1)[1]
    # on a line of its own: it was glued to the last row of inspect's results (issue #50)
    assert f"\nSandbox kept: docker exec -it {name} bash -l\n" in run.stdout, run.stdout[-600:]
    # a later run sweeps what killed runs left, but not what a run was told to keep
    later = eval_gaia(
        tmp_path / "later", dataset_path=str(GAIA_TINY), image=sandbox_image, ids=LAGOON
    )
    assert later.status == "success"
    probe = subprocess.run(["docker", "exec", name, "ls", "/kept"], capture_output=True)
    assert probe.returncode == 0, "the kept sandbox is the sample's, as it was left"

    cleanup = subprocess.run(
        [inspect_cli(), "sandbox", "cleanup", "gaia-docker"], capture_output=True, text=True
    )
    assert cleanup.returncode == 0, cleanup.stderr
    # it removes every gaia-docker container and network of the session's tag (the compose
    # sandbox's are not its own; another worker's or suite's on the engine carry another tag)
    tag = f"label={TAG_LABEL}={os.environ[TAG_VARIABLE]}"
    ours = subprocess.run(
        ["docker", "ps", "-aq", "--filter", "label=inspect_gaia.sandbox", "--filter", tag],
        capture_output=True,
        text=True,
        check=True,
    )
    assert ours.stdout.strip() == ""
    assert docker_leftovers() <= before
