"""The run watches its egress proxy: an outage is seen at once, and no sample is scored across it.

The proxy's supervisor (``egress/supervise.py``) restarts mitmdump in place when it dies or stops
answering, and says so in the container's log. ``Watch`` follows that log on a thread of its own
and keeps the outages: when each began, by the host's clock (the supervisor dates it, and says how
long the proxy had not answered then: a hang dates from its last answer, up to a probe's interval
before it began, so a command that ended in that second counts as cut off too), and when it ended.

A sample's commands go through ``SampleCommands.around`` (gaia-docker's ``exec``):

* a command that starts while the proxy is down waits for it (up to ``RESTART_WAIT`` seconds);
* a sample with a command running while the proxy was down ends as an error
  (``EgressOutageError``), which ``inspect eval-retry`` reruns: what that command fetched may have
  failed, and the sample must not be scored as if it had had the web. An outage reported late (a
  hang is reported once the supervisor's probes failed) is checked at the sample's next command
  against its recent commands;
* a sample with no command running then goes on; its transcript records the restart (an info
  event, source ``inspect_gaia egress``);
* a proxy that could not be restarted (its supervisor gave up, its container is gone) ends every
  sample at its next command, and fails every new sample's start.

What is left: a command that ended after the proxy died but before the log said so (milliseconds),
in a sample that submits without another command.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar

import anyio

from ...egress.web_record import CAME_FROM, OUTAGE
from . import client

T = TypeVar("T")

RESTART_WAIT = 60.0
"""Seconds a command waits for the proxy to come back before its sample ends as an error."""
HISTORY = 120.0
"""Seconds of a sample's commands kept to judge outages reported late (a hang, after ~20 s)."""
SLACK = 0.05
"""Seconds an outage is taken to have begun before the supervisor dated it (its clock's grain)."""
RETRY = "rerun the errored samples with `inspect eval-retry`"
_DECODER = json.JSONDecoder()


class EgressOutageError(RuntimeError):
    """The run's egress proxy was down while the sample ran a command, or cannot come back."""


@dataclass
class Outage:
    """One time the proxy stopped answering: from ``start`` to ``end`` (``time.monotonic``)."""

    start: float
    why: str
    wall: str
    end: float | None = None

    def describe(self) -> str:
        """``killed: out of memory…, down 1.6 s from 12:01:02``."""
        length = "" if self.end is None else f", down {self.end - self.start:.1f} s"
        return f"{self.why}{length} from {self.wall}"


class Watch:
    """A proxy's outages, from its container's log."""

    def __init__(self, proxy: str) -> None:
        """Nothing is followed until ``start``."""
        self.proxy = proxy
        self.outages: list[Outage] = []
        self.clients: dict[str, str] = {}
        """A sandbox's address on the run's network: its sample (``sample <id> (epoch <n>)``)."""
        self.lost: str | None = None
        self.closing = False
        self.lock = threading.Lock()

    def start(self) -> None:
        """Follow the container's log on a daemon thread, until the container goes."""
        threading.Thread(
            target=self._follow, name=f"egress-watch-{self.proxy[:12]}", daemon=True
        ).start()

    def close(self) -> None:
        """The run is removing the proxy: its end is no outage."""
        self.closing = True

    def name(self, address: str, sample: str) -> None:
        """The sandbox at ``address`` is ``sample``'s (until another sandbox has the address)."""
        with self.lock:
            self.clients[address] = sample

    def down(self) -> bool:
        """Whether the proxy is down now."""
        with self.lock:
            return bool(self.outages) and self.outages[-1].end is None

    def feed(self, line: str, now: float | None = None) -> None:
        """Take one line of the container's log (with or without Docker's timestamp)."""
        at = line.find('{"inspect_gaia"')
        if at < 0:
            return
        try:  # whatever mitmdump wrote around it on the same line is not ours
            record = _DECODER.raw_decode(line, at)[0]["inspect_gaia"]
        except (ValueError, KeyError, TypeError):
            return
        if not isinstance(record, dict):
            return
        now = time.monotonic() if now is None else now
        with self.lock:
            if "down" in record:
                # dated by the container's clock, the host's on a local engine: a lag of ms
                lag = min(max(time.time() - float(record.get("at") or time.time()), 0.0), 5.0)
                since = float(record.get("since") or 0.0) + lag + SLACK
                start = now - since
                wall = datetime.fromtimestamp(time.time() - since).strftime("%H:%M:%S")
                self._close_open(now)
                why = str(record["down"])
                if record.get("client"):
                    address = str(record["client"])[:64]
                    why += f"; {CAME_FROM}{self.clients.get(address, address)}"
                    why += _held(record.get("load"))
                self.outages.append(Outage(start, why, wall))
            elif "up" in record:
                self._close_open(now)
            elif "gave_up" in record:
                self.lost = f"the egress proxy could not be restarted ({record['gave_up']})"

    def _close_open(self, now: float) -> None:
        if self.outages and self.outages[-1].end is None:
            self.outages[-1].end = now

    def _follow(self) -> None:
        since: float = time.time() - 1
        last = ""
        while not self.closing:
            try:
                pending = b""
                stream = client.api().logs(
                    self.proxy, stream=True, follow=True, timestamps=True, since=int(since)
                )
                for chunk in stream:
                    pending += chunk
                    *lines, pending = pending.split(b"\n")
                    for raw in lines:
                        line = raw.decode("utf-8", errors="replace")
                        stamp = line.split(" ", 1)[0]
                        if stamp > last:  # a reconnection replays the last second
                            last = stamp
                            self.feed(line)
                    since = time.time() - 1
            except Exception:  # a read timeout on a quiet log, or the container gone
                time.sleep(1.0)
            if self.closing:
                return
            try:
                running = client.running(self.proxy)
            except Exception:
                running = False
            if not running:
                with self.lock:
                    self.lost = self.lost or "the egress proxy's container stopped"
                    self._close_open(time.monotonic())
                return


def _held(load: object) -> str:
    """`` (60 connections, 1.2 MiB unread, 58 requests in flight)``: what the blamed client held."""
    if not isinstance(load, dict):
        return ""
    figures = {k: v for k, v in load.items() if isinstance(v, int) and not isinstance(v, bool)}
    parts = [
        f"{figures.get('connections', 0) + figures.get('servers', 0)} connections",
        f"{figures.get('held', 0) / (1 << 20):.1f} MiB unread",
        f"{figures.get('open', 0)} requests in flight",
    ]
    return f" ({', '.join(parts)})"


class SampleCommands:
    """One sandbox's commands, judged against its proxy's outages."""

    def __init__(self, watch: Watch) -> None:
        """Outages before the sample started are not its own."""
        self.watch = watch
        self.recent: deque[tuple[float, float]] = deque()
        with watch.lock:
            self.seen = len([o for o in watch.outages if o.end is not None])

    async def around(self, command: Callable[[], Awaitable[T]]) -> T:
        """Run ``command`` (one ``exec``) as the module docstring says."""
        self.check()
        waited = time.monotonic()
        while self.watch.down() and self.watch.lost is None:
            if time.monotonic() - waited > RESTART_WAIT:
                raise EgressOutageError(
                    f"The run's egress proxy has been down for {RESTART_WAIT:.0f} s — {RETRY}"
                )
            await anyio.sleep(0.2)
        if self.watch.lost is not None:
            raise EgressOutageError(f"This sample lost its web access: {self.watch.lost} — {RETRY}")
        start = time.monotonic()
        result = await command()
        self.recent.append((start, time.monotonic()))
        self.check()
        return result

    def check(self) -> None:
        """End the sample if an outage overlapped one of its commands; record the others."""
        from inspect_ai.log import transcript

        now = time.monotonic()
        while self.recent and self.recent[0][1] < now - HISTORY:
            self.recent.popleft()
        with self.watch.lock:
            fresh = self.watch.outages[self.seen :]
        for outage in fresh:
            end = now if outage.end is None else outage.end
            if any(start <= end and outage.start <= stop for start, stop in self.recent):
                raise EgressOutageError(
                    f"{OUTAGE} ({outage.describe()}; it was restarted): what the command "
                    f"fetched may have failed — {RETRY}"
                )
            if outage.end is None:
                return
            self.seen += 1
            transcript().info(
                f"The run's egress proxy was restarted ({outage.describe()}); no command of this "
                "sample was running then.",
                source="inspect_gaia egress",
            )
