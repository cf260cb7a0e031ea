"""What gaia-docker may remove: its run's own resources, and only provably dead runs' leftovers."""

from __future__ import annotations

import contextvars
import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import anyio
import pytest
from inspect_ai.log import read_eval_log
from inspect_ai.model import ChatMessageTool

from inspect_gaia._compat import sandbox_lifecycle_state
from inspect_gaia.defaults import PROVIDER
from inspect_gaia.sandboxes.docker import TAG_LABEL, TAG_VARIABLE, cleanup
from inspect_gaia.sandboxes.docker.gaia_docker import GaiaDockerSandbox
from inspect_gaia.sandboxes.spec import gaia_compose
from support.scripted_model import Entry
from tests.helpers import SANDBOX_IMAGE, Play, docker_leftovers, eval_command
from tests.scenario import GAIA_TINY


def test_owner_names_host_boot_namespace_pid_and_start() -> None:
    host, boot, namespace, pid, started = cleanup.owner().split("/")
    assert host == socket.gethostname().replace("/", "_")
    assert boot == Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    assert namespace.startswith("pid:[")
    assert pid == str(os.getpid()) and started.isdigit()


def _label(pid: int, started: str, *, namespace: str | None = None, boot: str | None = None) -> str:
    host, here_boot, here_namespace, _, _ = cleanup.owner().split("/")
    return "/".join([host, boot or here_boot, namespace or here_namespace, str(pid), started])


def test_a_tag_of_ones_own_is_on_every_resource_a_run_makes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(TAG_VARIABLE, "ci-job-7")
    assert cleanup.labels("gaia")[TAG_LABEL] == "ci-job-7"
    monkeypatch.delenv(TAG_VARIABLE)
    assert TAG_LABEL not in cleanup.labels("gaia")


def test_only_a_provably_dead_creator_counts_as_dead() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        started = cleanup._start_time(child.pid)
        assert started
        assert not cleanup.provably_dead(_label(child.pid, started)), "alive"
        # the same pid with another start time is a reused pid: its creator is gone
        assert cleanup.provably_dead(_label(child.pid, str(int(started) - 1)))
    finally:
        child.kill()
        child.wait()
    assert cleanup.provably_dead(_label(child.pid, started)), "gone"
    # nothing that cannot be checked from here is ever called dead
    assert not cleanup.provably_dead(_label(child.pid, started, namespace="pid:[1]"))
    assert not cleanup.provably_dead(_label(child.pid, started, boot="another-kernel"))
    assert not cleanup.provably_dead(cleanup.owner())
    for label in (None, "", "vm:1234", "a/b/c/d", "host/boot/ns/notapid/1"):
        assert not cleanup.provably_dead(label)


# -- with an engine --------------------------------------------------------------------------------


def test_samples_starting_at_once_share_one_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """CI found a run's network left behind: samples starting at once, on worker threads, each
    made the run's state, so the network was labelled with an id the run's cleanup never used."""
    from inspect_ai.util._sandbox.lifecycle import sandbox_lifecycle_scope  # what inspect opens

    class SlowToMake(cleanup.RunState):
        def __init__(self) -> None:
            time.sleep(0.05)  # widens the window between "none yet" and "stored"
            super().__init__()

    monkeypatch.setattr(cleanup, "_RUN_STATE", cleanup.RunScoped(SlowToMake))
    seen: list[cleanup.RunState] = []
    start = threading.Barrier(8)

    def sample() -> None:
        start.wait()
        seen.append(cleanup.run_state())

    with sandbox_lifecycle_scope():
        threads = [
            threading.Thread(target=contextvars.copy_context().run, args=(sample,))
            for _ in range(8)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert len(seen) == 8 and len({id(state) for state in seen}) == 1


def test_outside_any_run_one_state_is_kept_until_it_is_stale() -> None:
    """Providers driven by hand (tests, scripts) share one state; spares make a fresh set once
    the last is closed (``RunScoped``'s ``stale``)."""
    assert sandbox_lifecycle_state() is None
    states = cleanup.RunScoped(cleanup.RunState)
    assert states.get() is states.get()

    class Set:
        closed = False

    sets = cleanup.RunScoped(Set, stale=lambda made: made.closed)
    first = sets.get()
    assert sets.get() is first, "in use: kept"
    first.closed = True
    assert sets.get() is not first, "closed: the next caller gets a new one"


@pytest.fixture(params=["asyncio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.mark.docker
@pytest.mark.anyio
async def test_two_runs_in_one_process_never_remove_each_others_sandboxes(
    anyio_backend: str, sandbox_image: str
) -> None:
    """Each eval batch has its own run id (inspect's per-batch sandbox state)."""
    from inspect_ai.util._sandbox.lifecycle import sandbox_lifecycle_scope  # what inspect opens

    before = docker_leftovers()
    config = gaia_compose(image=SANDBOX_IMAGE)
    first_started, second_done = anyio.Event(), anyio.Event()
    survived: list[bool] = []

    async def first_run() -> None:
        with sandbox_lifecycle_scope():
            await GaiaDockerSandbox.task_init("startup", config)
            envs = await GaiaDockerSandbox.sample_init("first", config, {})
            # the session's tag is on what the run made, so the leftover checks see it
            assert any(n.startswith("container:") for n in docker_leftovers() - before)
            first_started.set()
            await second_done.wait()
            result = await envs["default"].exec(["true"])
            survived.append(result.success)
            await GaiaDockerSandbox.sample_cleanup("first", config, envs, False)
            await GaiaDockerSandbox.task_cleanup("shutdown", config, True)

    async def second_run() -> None:
        await first_started.wait()
        with sandbox_lifecycle_scope():
            state = sandbox_lifecycle_state()
            assert state is not None
            await GaiaDockerSandbox.task_init("startup", config)  # sweeps orphans
            envs = await GaiaDockerSandbox.sample_init("second", config, {})
            await GaiaDockerSandbox.sample_cleanup("second", config, envs, False)
            await GaiaDockerSandbox.task_cleanup("shutdown", config, True)  # its run only
        second_done.set()

    async with anyio.create_task_group() as group:
        group.start_soon(first_run)
        group.start_soon(second_run)
    assert survived == [True]
    assert docker_leftovers() == before


@pytest.mark.docker
def test_cleanup_with_a_tag_removes_only_that_tags_sandboxes(
    sandbox_image: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another job's sandboxes on a shared engine (another tag) survive this one's cleanup."""
    mine, theirs = (f"cleanup-{who}-{uuid.uuid4().hex[:8]}" for who in ("mine", "theirs"))

    def create(tag: str) -> str:
        labels = [f"{cleanup.LABEL}={PROVIDER}", f"{TAG_LABEL}={tag}"]
        command = ["docker", "create", *(f"--label={label}" for label in labels), SANDBOX_IMAGE]
        return subprocess.run([*command, "true"], capture_output=True, text=True, check=True).stdout

    own, other = create(mine).strip(), create(theirs).strip()
    try:
        monkeypatch.setenv(TAG_VARIABLE, mine)
        assert cleanup.remove_all() == 1
        alive = subprocess.run(
            ["docker", "ps", "-aq", "--no-trunc", "--filter", f"label={TAG_LABEL}"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        assert other in alive and own not in alive
    finally:
        subprocess.run(["docker", "rm", "-f", own, other], capture_output=True)


SLEEP = "sleep 25; echo slept"
UNSHARED = ["unshare", "--pid", "--fork", "--mount-proc", "sh", "-c"]
"""A new PID namespace on the same host (same hostname), as a container with host networking or a
CI runner has. The shell stays PID 1 and the run is its child."""


@pytest.mark.docker
def test_a_run_in_another_pid_namespace_is_never_swept(
    sandbox_image: str, scripted: Play, tmp_path: Path
) -> None:
    """Issue #10 finding 3: a second run deleted the first one's live containers and network."""
    before = docker_leftovers()
    scripted(
        [
            Entry("visitors per gallery", [{"bash": SLEEP}, {"submit": "48,671"}]),
            Entry("invented lagoon", [{"bash": SLEEP}, {"submit": "Quillfeather Lagoon"}]),
            Entry("", [{"submit": "quick"}]),
        ]
    )
    common = [f"dataset_path={GAIA_TINY}", f"image={sandbox_image}"]
    long_run = eval_command([*common, "level=1"], tmp_path / "long")
    short_run = eval_command([*common, "level=3"], tmp_path / "short")
    first = subprocess.Popen(
        # throw-away processes first, so no process or thread of the second run has the first
        # run's pid in its own namespace
        [*UNSHARED, "for i in $(seq 400); do /bin/true; done; " + " ".join(long_run)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = 90.0
        while deadline > 0 and len(docker_leftovers() - before) < 3:  # 2 containers, 1 network
            anyio.run(anyio.sleep, 0.5)
            deadline -= 0.5
        assert len(docker_leftovers() - before) >= 3, "the first run's sandboxes never started"
        second = subprocess.run(
            [*UNSHARED, " ".join(short_run)], capture_output=True, text=True, timeout=300
        )
        assert second.returncode == 0, second.stdout[-2000:] + second.stderr[-2000:]
        output, _ = first.communicate(timeout=300)
    finally:
        if first.poll() is None:
            first.kill()
    assert first.returncode == 0, output[-3000:]
    (log_file,) = (tmp_path / "long").glob("*.eval")
    log = read_eval_log(str(log_file))
    assert log.status == "success" and log.samples is not None and len(log.samples) == 2
    for sample in log.samples:
        assert sample.error is None, sample.error
        assert sample.scores is not None and sample.scores["gaia_scorer"].value == "C"
        slept = [m for m in sample.messages if isinstance(m, ChatMessageTool)][0]
        assert slept.text.strip() == "slept", "the command ran to its end in its own sandbox"
    assert docker_leftovers() == before
