"""gaia-docker's command channel in a real sandbox: what ``docker exec`` gives, in one exec.

Each command is run twice in the same container, through the sandbox's channel and through a
``docker exec`` of its own (the same sandbox with its channel off, as gaia-docker ran every
command before), and the two outcomes must be the same, down to the signal dispositions,
capabilities and open files the command inherits, and the errors raised. (inspect_ai's conformance suite also runs against gaia-docker, in
``test_docker_conformance.py``.)
"""

from __future__ import annotations

import re
import time
from collections.abc import AsyncIterator

import anyio
import pytest

from inspect_gaia.sandboxes.docker import PLAIN_ENV, client, exec_stream
from inspect_gaia.sandboxes.docker.channel import BROKEN, RUNNER
from inspect_gaia.sandboxes.docker.gaia_docker import GaiaDockerSandbox
from inspect_gaia.sandboxes.spec import gaia_compose
from tests.helpers import SANDBOX_IMAGE

pytestmark = [pytest.mark.docker, pytest.mark.anyio]

LIMIT = 1024 * 1024


@pytest.fixture(params=["asyncio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def sandbox(anyio_backend: str, sandbox_image: str) -> AsyncIterator[GaiaDockerSandbox]:
    config = gaia_compose(image=SANDBOX_IMAGE)
    task = "channel-check"
    await GaiaDockerSandbox.task_init(task, config)
    envs = await GaiaDockerSandbox.sample_init(task, config, {})
    try:
        yield envs["default"].as_type(GaiaDockerSandbox)
    finally:
        await GaiaDockerSandbox.sample_cleanup(task, config, envs, False)
        await GaiaDockerSandbox.task_cleanup(task, config, True)


async def direct(
    sandbox: GaiaDockerSandbox,
    cmd: list[str],
    data: str | None = None,
    cwd: str = "/",
    user: str | None = None,
) -> tuple[int, str, str] | str:
    """The command through a ``docker exec`` of its own, as a plain run runs every command."""
    without = GaiaDockerSandbox(sandbox.container, sandbox.name, sandbox.working_dir, plain=True)
    return await outcome(without, cmd, data, cwd, user)


async def outcome(
    sandbox: GaiaDockerSandbox,
    cmd: list[str],
    data: str | None = None,
    cwd: str = "/",
    user: str | None = None,
) -> tuple[int, str, str] | str:
    """The result, or the error raised (type and message)."""
    try:
        result = await sandbox.exec(cmd, input=data, cwd=cwd, user=user)
    except Exception as ex:
        return f"{type(ex).__name__}: {ex}"
    out = re.sub(r"pipe:\[\d+\]", "pipe", re.sub(r"/proc/\d+/", "/proc/N/", result.stdout))
    return result.returncode, out, result.stderr


def execs_created(sandbox: GaiaDockerSandbox, since: float) -> int:
    """Execs the engine created in the sandbox since ``since`` (finished ones included)."""
    events = client.api().events(
        since=since,
        until=time.time() + 0.5,
        filters={"container": sandbox.container, "event": "exec_create"},
        decode=True,
    )
    return len(list(events))


async def runners(sandbox: GaiaDockerSandbox) -> int:
    ps = await exec_stream.run(
        sandbox.container, ["ps", "-eo", "args"], None, "/", None, None, LIMIT
    )
    return ps[1].decode().count(RUNNER[-1])


# Commands whose outcomes must be equal both ways (pipe inodes and process ids aside).
PARITY: list[tuple[str, list[str], str | None]] = [
    ("status and both outputs", ["sh", "-c", "echo out; echo err >&2; exit 7"], None),
    ("killed by a signal", ["sh", "-c", "kill -9 $$"], None),
    ("environment", ["sh", "-c", "env | sort"], None),
    ("login shell", ["bash", "--login", "-c", "echo $HOME $USER $SHELL; shopt login_shell"], None),
    ("user and groups", ["id"], None),
    (
        "signals, capabilities, limits",
        ["grep", "-E", "^(Sig(Ign|Blk)|Cap|NoNewPrivs|Seccomp)", "/proc/self/status"],
        None,
    ),
    ("resource limits", ["sh", "-c", "ulimit -a; umask"], None),
    ("open files", ["sh", "-c", "ls -l /proc/self/fd | awk 'NR>1 {print $9, $11}'"], None),
    ("session and terminal", ["sh", "-c", "ps -o tty=,stat= -p $$; test -t 0; echo $?"], None),
    ("input", ["sh", "-c", "wc -c; cat /dev/null"], "twelve bytes"),
    ("no input", ["cat"], None),
    ("working directory", ["pwd"], None),
    ("background child", ["sh", "-c", "sleep 30 & echo started"], None),
    ("missing program", ["no-such-program"], None),
]


@pytest.mark.parametrize(("what", "cmd", "data"), PARITY, ids=[p[0] for p in PARITY])
async def test_a_command_gets_what_docker_exec_gives_it(
    sandbox: GaiaDockerSandbox, what: str, cmd: list[str], data: str | None
) -> None:
    cwd = "/tmp" if what == "working directory" else "/"
    ours = await outcome(sandbox, cmd, data, cwd)
    assert sandbox.commands.channel is not None, "the sandbox's commands go through its channel"
    assert ours == await direct(sandbox, cmd, data, cwd)


async def test_commands_after_the_first_start_no_exec(sandbox: GaiaDockerSandbox) -> None:
    await sandbox.exec(["true"])
    since = time.time()
    for i in range(10):
        assert (await sandbox.exec(["echo", str(i)])).stdout == f"{i}\n"
    assert execs_created(sandbox, since) == 0
    assert await runners(sandbox) == 1


ROOT_PROBE = ["sh", "-c", "grep -E '^(Uid|Gid|Groups|CapEff)' /proc/self/status; echo $HOME"]
"""What inspect's root probe at sample start reads, and where a root command lives."""


async def test_a_root_command_goes_to_a_root_runner_and_gets_what_docker_exec_gives_it(
    sandbox: GaiaDockerSandbox,
) -> None:
    await sandbox.exec(["true"])
    since = time.time()
    ours = await outcome(sandbox, ROOT_PROBE, user="root")
    assert execs_created(sandbox, since) == 0, "as root through the channel: no exec of its own"
    assert ours == await direct(sandbox, ROOT_PROBE, user="root")


async def test_a_root_command_goes_through_docker_exec_when_the_runner_is_not_root(
    sandbox: GaiaDockerSandbox,
) -> None:
    await sandbox.exec(["true"])
    assert sandbox.commands.channel is not None and sandbox.commands.channel.uid == 0
    sandbox.commands.channel.uid = 1000  # as in an image whose user is not root
    since = time.time()
    ours = await outcome(sandbox, ROOT_PROBE, user="root")
    assert execs_created(sandbox, since) == 1
    assert ours == await direct(sandbox, ROOT_PROBE, user="root")
    since = time.time()
    await outcome(sandbox, ["true"], user="nobody")
    assert execs_created(sandbox, since) == 1, "another user: always docker exec"


async def test_concurrent_commands_share_the_channel(sandbox: GaiaDockerSandbox) -> None:
    results: dict[int, str] = {}

    async def one(i: int) -> None:
        results[i] = (await sandbox.exec(["sh", "-c", f"sleep 0.{i % 3}; echo {i}"])).stdout

    async with anyio.create_task_group() as group:
        for i in range(12):
            group.start_soon(one, i)
    assert results == {i: f"{i}\n" for i in range(12)}


async def test_a_runner_killed_from_inside_ends_its_command_and_the_next_still_runs(
    sandbox: GaiaDockerSandbox,
) -> None:
    # SIGTERM (plain `pkill python3`) leaves the runner alone.
    assert (await sandbox.exec(["sh", "-c", "pkill python3; echo alive"])).stdout == "alive\n"
    assert await runners(sandbox) == 1
    killed = await sandbox.exec(["sh", "-c", "pkill -9 python3; sleep 1; echo late"])
    assert killed.returncode == -1 and BROKEN in killed.stderr
    after = await sandbox.exec(["sh", "-c", "echo again"])
    assert after.success and after.stdout == "again\n"  # through docker exec now


async def test_without_python3_in_the_image_commands_go_through_docker_exec(
    sandbox: GaiaDockerSandbox,
) -> None:
    hidden = ["sh", "-c", "for p in /usr/bin/python3*; do mv $p $p.hidden; done"]
    assert (await direct(sandbox, hidden))[0] == 0
    result = await sandbox.exec(["sh", "-c", "echo fine"])
    assert result.stdout == "fine\n" and sandbox.commands.channel is None


async def test_a_cancelled_command_is_killed_in_the_sandbox(sandbox: GaiaDockerSandbox) -> None:
    await sandbox.exec(["true"])
    with anyio.move_on_after(1):
        await sandbox.exec(["sh", "-c", "sleep 120; echo never"])
    await anyio.sleep(0.5)
    left = await direct(sandbox, ["sh", "-c", "ps -eo args | grep -c '^sleep 120' || true"])
    assert left == (0, "0\n", "")


async def test_a_plain_run_gives_every_command_an_exec_of_its_own_and_starts_no_runner(
    anyio_backend: str, sandbox_image: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(PLAIN_ENV, "1")
    config = gaia_compose(image=SANDBOX_IMAGE)
    await GaiaDockerSandbox.task_init("channel-plain", config)
    envs = await GaiaDockerSandbox.sample_init("channel-plain", config, {})
    try:
        sandbox = envs["default"].as_type(GaiaDockerSandbox)
        since = time.time()
        for i in range(3):
            assert (await sandbox.exec(["echo", str(i)], user="root")).stdout == f"{i}\n"
        assert execs_created(sandbox, since) == 3
        assert await runners(sandbox) == 0 and sandbox.commands.channel is None
    finally:
        await GaiaDockerSandbox.sample_cleanup("channel-plain", config, envs, False)
        await GaiaDockerSandbox.task_cleanup("channel-plain", config, True)
