"""Containers started ahead of the samples and removed behind them (gaia-docker).

A sample's container start (create and start in the engine: 0.25-1 s on 2 CPUs) and its forced
removal (0.1-0.5 s) were both on the sample's path: one sample at a time, most of what a sample
cost besides the model. So a run keeps one spare container started ahead for each sandbox
config: a sample takes it (renamed to the sample's own name, so ``docker ps`` still shows whose it
is) and the next spare starts in the background; a finished sample's container is removed in the
background too. What a sample gets is the same: a container of the same image and settings that
nothing has run in, its commands start only once the sample has it.

A spare and a container being removed carry the run's labels like any other, so the run's end
(``close``, then the labels), a later run's sweep and ``inspect sandbox cleanup gaia-docker`` find
them. ``close`` waits for every start and removal in flight before the run's containers are
removed, so none is created after that removal. Runs that need the proxy's files in the container
before it starts (``block_answer_sources``) start each sample's container as before, and so do
runs that cap their sandboxes (``--max-sandboxes``): there a spare, or a container still being
removed, would be one more than the cap.

Samples' own starts go a few at a time per engine CPU, in the order the samples came. A burst (64
samples starting together) shared evenly by the engine ends all at once, so every sample waited
for the whole burst, and its file copies and first commands queued behind it; in turn, the first
samples start at once and get on with their work while the last wait somewhat longer.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import uuid
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import anyio

from ..._compat import sandbox_limiters
from ...defaults import PROVIDER
from . import client
from .cleanup import RunScoped, run_state

logger = logging.getLogger(__name__)

WORKERS = 4
"""Background starts and removals at once (the engine does the work)."""
STARTS_PER_CPU = 2
"""Samples' container starts at once per engine CPU (``in_turn``, ``starts_in_turn``)."""
_STARTS = anyio.CapacityLimiter(2 * STARTS_PER_CPU)
_SPARE = re.compile(r"-spare-[0-9a-f]{6}$")


def wanted() -> bool:
    """Whether this run keeps spares: not with ``--max-sandboxes``, nor when it is plain."""
    return PROVIDER not in sandbox_limiters() and not run_state().plain


def spare_name(task_name: str) -> str:
    """``gaia-<task>-spare-<random>``: a spare no sample has taken yet."""
    return f"gaia-{task_name[:60]}-spare-{uuid.uuid4().hex[:6]}"


def is_spare(name: str) -> bool:
    """Whether a container of this name is a spare no sample has taken."""
    return _SPARE.search(name) is not None


@dataclass
class Spares:
    """One run's spare containers (one per config) and its starts and removals in flight."""

    ready: dict[str, str] = field(default_factory=dict)
    """Config key: a started container no sample has taken."""
    starting: dict[str, Future[None]] = field(default_factory=dict)
    """Config key: its spare on its way (a sample arriving meanwhile waits for it)."""
    in_flight: set[Future[None]] = field(default_factory=set)
    closed: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)
    workers: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(WORKERS, thread_name_prefix="gaia-spares")
    )

    def start(
        self, name: str, kwargs: Mapping[str, Any], labels: Mapping[str, str], task_name: str
    ) -> str:
        """The sample's container, named ``name`` (blocking).

        The config's spare if one is ready or on its way (waited for: it started earlier than
        one started now would), else one started now; either way the config's next spare then
        starts in the background.
        """
        key = json.dumps([task_name, kwargs], sort_keys=True, default=str)
        with self.lock:
            spare = self.ready.pop(key, None)
            coming = self.starting.get(key) if spare is None else None
        if coming is not None:
            coming.exception()  # waits; a failed start was logged where it happened
            with self.lock:
                spare = self.ready.pop(key, None)
        container = _claimed(spare, name) if spare is not None else None
        if container is None:
            container = client.start_container(name, kwargs, labels)
        self._submit(key, self._start_spare, key, kwargs, labels, task_name)
        return container

    def remove_later(self, container: str) -> None:
        """Remove a finished sample's container in the background (at once once closed)."""
        if not self._submit(None, remove_quietly, container):
            remove_quietly(container)

    def close(self) -> None:
        """No more spares; wait for what is in flight, then remove the spares. Blocking."""
        with self.lock:
            self.closed = True
            pending = list(self.in_flight)
        for future in pending:
            future.exception()  # waits; failures were logged where they happened
        self.workers.shutdown(wait=True)
        with self.lock:
            spares, self.ready = list(self.ready.values()), {}
        for container in spares:
            remove_quietly(container)

    def _submit(self, key: str | None, fn: Any, *args: Any) -> bool:
        with self.lock:
            if self.closed or (key is not None and (key in self.ready or key in self.starting)):
                return False
            future = self.workers.submit(fn, *args)
            self.in_flight.add(future)
            if key is not None:
                self.starting[key] = future
        future.add_done_callback(self._done)
        return True

    def _done(self, future: Future[None]) -> None:
        with self.lock:
            self.in_flight.discard(future)

    def _start_spare(
        self, key: str, kwargs: Mapping[str, Any], labels: Mapping[str, str], task_name: str
    ) -> None:
        container = None
        try:
            container = client.start_container(spare_name(task_name), kwargs, labels)
        except Exception as ex:  # the sample that wants it starts its own
            logger.info(f"no spare sandbox container: {client.first_line(ex)}")
        with self.lock:
            self.starting.pop(key, None)
            if container is not None and not self.closed:
                self.ready[key], container = container, None
        if container is not None:  # the run ended meanwhile
            remove_quietly(container)


def _claimed(spare: str, name: str) -> str | None:
    """The spare renamed to the sample's name, if it is still running; else None (removed)."""
    try:
        client.rename(spare, name)
        if client.running(spare):
            return spare
    except Exception as ex:
        logger.info(f"spare sandbox container not used: {client.first_line(ex)}")
    remove_quietly(spare)
    return None


def sample_container(
    name: str,
    kwargs: Mapping[str, Any],
    labels: Mapping[str, str],
    task_name: str,
    files: Mapping[str, bytes] | None,
) -> str:
    """A sample's started container (blocking): the run's spare where it keeps them."""
    if files is None and wanted():
        return spares().start(name, kwargs, labels, task_name)
    return client.start_container(name, kwargs, labels, files)


def starts_in_turn(engine_cpus: int) -> None:
    """Let ``STARTS_PER_CPU`` samples' starts per engine CPU go at once (set at the run's start)."""
    _STARTS.total_tokens = STARTS_PER_CPU * max(1, engine_cpus)


async def in_turn(start: Callable[[], str]) -> str:
    """``start()``, a sample's blocking container start, once earlier samples started theirs.

    A plain run (``INSPECT_GAIA_PLAIN_DOCKER``) starts every sample's container at once.
    """
    if run_state().plain:
        return await client.call(start)
    async with _STARTS:
        return await client.call(start)


def remove_sample_container(container: str) -> None:
    """Remove a finished sample's container: behind it where the run keeps spares, else now."""
    if wanted():
        spares().remove_later(container)
    else:
        remove_quietly(container)


def remove_quietly(container: str) -> None:
    """Remove a container; an engine that does not answer is logged (the run's end retries)."""
    try:
        client.remove_container(container)
    except Exception as ex:
        logger.warning(f"could not remove sandbox container {container}: {client.first_line(ex)}")


_SPARES = RunScoped(Spares, stale=lambda spares: spares.closed)
"""Providers driven by hand, outside any run: a fresh set after each close."""


def spares() -> Spares:
    """This run's spares (``cleanup.RunScoped``, as ``cleanup.run_state``)."""
    return _SPARES.get()
