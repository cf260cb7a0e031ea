"""How the run reads its egress proxy's log, and what an outage does to a sample's commands
(``sandboxes/docker/egress_watch.py``): the supervisor's lines are fed in as the container's log holds them."""

from __future__ import annotations

import json
import re
import time

import anyio
import pytest
from inspect_ai.event import InfoEvent
from inspect_ai.log import transcript

from inspect_gaia.sandboxes.docker.egress_watch import EgressOutageError, SampleCommands, Watch

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["asyncio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _line(record: dict[str, object], noise: str = "") -> str:
    """A log line as Docker gives it (timestamped), with what mitmdump may write before it."""
    return f"2026-01-01T00:00:00.000000000Z {noise}{json.dumps({'inspect_gaia': record})}"


def down(why: str = "killed by signal 9", since: float = 0.0) -> str:
    return _line({"down": why, "since": since, "at": time.time()})


def test_the_log_says_when_the_proxy_was_down() -> None:
    watch = Watch("proxy")
    watch.feed(_line({"up": 0}))
    assert not watch.down()
    watch.feed(down(), now=100.0)
    assert watch.down()
    watch.feed(_line({"up": 1}, noise="[12:00:01.000] client disconnect"), now=101.5)
    assert not watch.down()
    (outage,) = watch.outages
    assert 99.9 < outage.start <= 100.0 and outage.end == 101.5
    assert re.fullmatch(
        r"killed by signal 9, down 1\.[56] s from \d\d:\d\d:\d\d", outage.describe()
    )
    watch.feed("[12:00:02.000] a line of mitmdump's, not ours {braces}")
    watch.feed(_line({"gave_up": "6 restarts within 300 s"}))
    assert watch.lost == "the egress proxy could not be restarted (6 restarts within 300 s)"


async def test_a_command_running_across_an_outage_ends_its_sample() -> None:
    watch = Watch("proxy")
    commands = SampleCommands(watch)

    async def fetch() -> str:
        watch.feed(down("out of memory (killed at the container's memory limit)"))
        await anyio.sleep(0.05)
        watch.feed(_line({"up": 1}))
        return "Failed to connect"

    with pytest.raises(EgressOutageError, match="out of memory.*inspect eval-retry"):
        await commands.around(fetch)


async def test_a_command_waits_for_the_proxy_to_come_back_and_the_sample_goes_on() -> None:
    watch = Watch("proxy")
    watch.feed(down())
    commands = SampleCommands(watch)
    ran: list[float] = []

    async def fetch() -> str:
        ran.append(time.monotonic())
        return "a page"

    async def restart() -> None:
        await anyio.sleep(0.3)
        watch.feed(_line({"up": 1}))

    async with anyio.create_task_group() as group:
        group.start_soon(restart)
        assert await commands.around(fetch) == "a page"
    end = watch.outages[0].end
    assert end is not None and ran[0] >= end
    noted = [e for e in transcript().events if isinstance(e, InfoEvent)]
    assert noted[-1].source == "inspect_gaia egress"
    assert "no command of this sample was running" in str(noted[-1].data)


async def test_a_hang_reported_late_still_ends_the_sample_that_ran_during_it() -> None:
    watch = Watch("proxy")
    commands = SampleCommands(watch)

    async def quick() -> str:
        return "ok"

    await commands.around(quick)
    # reported 0.5 s later: it had not answered for a second (so since before that command)
    await anyio.sleep(0.5)
    watch.feed(down("stopped answering", since=1.0))
    watch.feed(_line({"up": 1}))
    with pytest.raises(EgressOutageError, match="stopped answering"):
        await commands.around(quick)


async def test_outages_before_a_sample_started_are_not_its_own() -> None:
    watch = Watch("proxy")
    watch.feed(down())
    watch.feed(_line({"up": 1}))
    commands = SampleCommands(watch)

    async def quick() -> str:
        return "ok"

    assert await commands.around(quick) == "ok"


async def test_a_proxy_that_cannot_come_back_ends_every_sample() -> None:
    watch = Watch("proxy")
    commands = SampleCommands(watch)
    watch.feed(down())
    watch.feed(_line({"gave_up": "6 restarts within 300 s"}))

    async def never() -> str:
        raise AssertionError("ran without a proxy")

    with pytest.raises(EgressOutageError, match="could not be restarted"):
        await commands.around(never)


def test_an_outage_names_the_client_that_held_most_of_the_proxy() -> None:
    watch = Watch("proxy")
    watch.feed(_line({"down": "stopped answering", "since": 1.0, "client": "10.0.3.9"}), now=50.0)
    watch.feed(_line({"up": 1}), now=51.0)
    (outage,) = watch.outages
    assert (
        outage.why == "stopped answering; the sandbox holding most of the proxy then was 10.0.3.9"
    )


def test_an_outage_names_the_sample_whose_sandbox_held_most_of_the_proxy() -> None:
    watch = Watch("proxy")
    watch.name("10.0.3.9", "sample flood-7 (epoch 1)")
    watch.name("10.0.3.10", "sample quiet-2 (epoch 1)")
    load = {"connections": 60, "servers": 4, "held": 3 << 19, "open": 58, "requests": 60}
    down = {"down": "killed: out of memory", "since": 0, "client": "10.0.3.9", "load": load}
    watch.feed(_line(down), now=50.0)
    watch.feed(_line({"up": 1}), now=51.0)
    (outage,) = watch.outages
    assert outage.why.endswith(
        "; the sandbox holding most of the proxy then was sample flood-7 (epoch 1) "
        "(64 connections, 1.5 MiB unread, 58 requests in flight)"
    )
