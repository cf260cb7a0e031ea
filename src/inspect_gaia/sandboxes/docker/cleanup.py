"""What gaia-docker creates, whose it is, and when it may be removed.

Every container and network carries labels: the provider, the run (a fresh id per eval batch, held
in inspect's per-batch sandbox state, so two evals in one process have different runs) and the
creating process, identified so that it cannot be mistaken for another:

    <hostname>/<kernel boot id>/<PID namespace>/<pid>/<process start time>

A run removes its own resources at its end (``remove_run``). At its start it sweeps what killed
runs left (``sweep_orphans``), but only resources whose creator is *provably* dead: created under
this kernel boot and in this PID namespace, and no process with that pid and start time exists.
A run in another PID namespace (a container with host networking, ``unshare``, a CI runner), on
another kernel or behind a remote engine cannot be checked from here, so its resources are never
swept; ``inspect sandbox cleanup gaia-docker`` removes them when you know they are dead. Containers
kept by ``--no-sandbox-cleanup`` are renamed ``gaia-kept-*`` and never swept.

``INSPECT_GAIA_TAG`` adds a label of the user's own (``inspect_gaia.tag``): a CI job, or a test
session, finds what it created among other runs on one engine by it, without counting theirs, and
``inspect sandbox cleanup gaia-docker`` with it set removes only those.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Generic, TypeVar

from ..._compat import sandbox_lifecycle_state
from ...defaults import PROVIDER
from ...errors import GaiaError
from . import TAG_LABEL, TAG_VARIABLE, client

_T = TypeVar("_T")

logger = logging.getLogger(__name__)

LABEL = "inspect_gaia.sandbox"
"""On every container and network gaia-docker creates (value: the provider name)."""
RUN_LABEL = "inspect_gaia.run"
TASK_LABEL = "inspect_gaia.task"
OWNER_LABEL = "inspect_gaia.owner"
KEPT_PREFIX = "gaia-kept-"
"""Containers kept by ``--no-sandbox-cleanup`` are renamed so; only ``inspect sandbox cleanup``
removes them."""


@dataclass
class RunState:
    """One run's id, network and mode (one per inspect sandbox lifecycle scope: per eval batch)."""

    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    network: str | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    plain: bool = False
    """Plain gaia-docker: no command channel, no spares, no starts in turn (set by task_init from
    ``INSPECT_GAIA_PLAIN_DOCKER``)."""


class RunScoped(Generic[_T]):
    """One ``kind`` per run (inspect's sandbox lifecycle scope), made at its first use.

    Samples first ask for it at once, from worker threads; inspect's scope makes the state on
    first use without a lock, and two states made at once gave the run two ids: the samples'
    network carried the one that lost and outlived the run's cleanup. So first use is locked.
    Outside any eval (tests, scripts calling the provider directly) one is kept here, replaced
    when ``stale`` says it is done with.
    """

    def __init__(self, kind: type[_T], stale: Callable[[_T], bool] = lambda _: False) -> None:
        """Keep one ``kind`` per run; ``stale``: when the one outside any run is made again."""
        self._kind = kind
        self._stale = stale
        self._outside: _T | None = None
        self._first_use = threading.Lock()

    def get(self) -> _T:
        """The ``kind`` of the run this call belongs to."""
        scope = sandbox_lifecycle_state()
        with self._first_use:
            if scope is not None:
                return scope.get(self._kind)
            if self._outside is None or self._stale(self._outside):
                self._outside = self._kind()
            return self._outside


_RUN_STATE = RunScoped(RunState)


def run_state() -> RunState:
    """The state of the run this call belongs to (``RunScoped``)."""
    return _RUN_STATE.get()


def run_network(task_name: str) -> str:
    """The run's one network, created with the first sample that has network access (blocking)."""
    from docker.errors import APIError

    state = run_state()
    with state.lock:
        if state.network is None:
            name = f"gaia-{state.run_id}-{uuid.uuid4().hex[:6]}"
            try:
                client.create_network(name, labels(task_name))
            except APIError as ex:
                raise GaiaError(
                    f"Docker could not create the run's sandbox network ({client.first_line(ex)})",
                    fix="remove unused networks with `docker network prune`, or run with "
                    "`-T network=false`",
                ) from ex
            state.network = name
        return state.network


# -- who created it -----------------------------------------------------------------------------


def _read(path: str) -> str:
    try:
        with open(path) as handle:
            return handle.read().strip()
    except OSError:
        return ""


def _start_time(pid: int) -> str:
    """The process's start time in clock ticks since boot (``/proc/<pid>/stat`` field 22)."""
    stat = _read(f"/proc/{pid}/stat")
    fields = stat.rpartition(")")[2].split()
    return fields[19] if len(fields) > 19 else ""


def _pid_namespace() -> str:
    try:
        return os.readlink("/proc/self/ns/pid").replace("/", "_")
    except OSError:
        return ""


@cache
def owner() -> str:
    """This process, as the owner label spells it."""
    pid = os.getpid()
    parts = (
        socket.gethostname(),
        _read("/proc/sys/kernel/random/boot_id"),
        _pid_namespace(),
        str(pid),
        _start_time(pid),
    )
    return "/".join(part.replace("/", "_") for part in parts)


def provably_dead(owner_label: str | None) -> bool:
    """Whether the process named by an owner label is certainly gone.

    Only a process of this host, kernel boot and PID namespace can be checked; for any other the
    answer is ``False`` (it may well be alive, and its sandboxes in use).
    """
    parts = (owner_label or "").split("/")
    if len(parts) != 5 or not all(parts[:2]) or not parts[3].isdigit():
        return False
    host, boot, namespace, pid, started = parts
    here = owner().split("/")
    if (host, boot, namespace) != (here[0], here[1], here[2]) or not boot or not namespace:
        return False
    if pid == here[3]:
        return False
    return _start_time(int(pid)) != started  # "" when no such process


def labels(task_name: str) -> dict[str, str]:
    """The labels of a resource created now, for ``task_name``, by this process and run."""
    tag = os.environ.get(TAG_VARIABLE)
    return {
        LABEL: PROVIDER,
        TASK_LABEL: task_name,
        RUN_LABEL: run_state().run_id,
        OWNER_LABEL: owner(),
        **({TAG_LABEL: tag} if tag else {}),
    }


# -- removal -------------------------------------------------------------------------------------


def remove_run(run_id: str) -> int:
    """Remove everything the run created; the number of containers and networks removed."""
    return _remove_labelled({"label": [f"{RUN_LABEL}={run_id}"]})


def remove_all() -> int:
    """Remove every gaia-docker container and network on the engine, kept ones included.

    With ``INSPECT_GAIA_TAG`` set, only those of runs started with the same tag: a CI job sharing
    an engine removes its own and never another's sandboxes in use.
    """
    tag = os.environ.get(TAG_VARIABLE)
    return _remove_labelled(
        {"label": [f"{LABEL}={PROVIDER}", *([f"{TAG_LABEL}={tag}"] if tag else [])]}
    )


def sweep_orphans() -> int:
    """Remove the containers and networks of runs whose process is provably dead."""

    def orphan(resource: Mapping[str, Any]) -> bool:
        names = resource.get("Names") or []
        kept = any(str(n).lstrip("/").startswith(KEPT_PREFIX) for n in names)
        return not kept and provably_dead((resource.get("Labels") or {}).get(OWNER_LABEL))

    return _remove_labelled({"label": [f"{LABEL}={PROVIDER}"]}, only=orphan)


def unverifiable() -> list[str]:
    """Names of containers whose creator cannot be checked from here (for ``doctor``)."""
    found = []
    for container in client.containers({"label": [f"{LABEL}={PROVIDER}"]}):
        name = str((container.get("Names") or ["?"])[0]).lstrip("/")
        owner_label = (container.get("Labels") or {}).get(OWNER_LABEL, "")
        if name.startswith(KEPT_PREFIX) or owner_label.split("/")[:3] == owner().split("/")[:3]:
            continue
        found.append(name)
    return found


def keep_run(run_id: str) -> list[str]:
    """Rename the run's containers ``gaia-kept-*`` so no later run's sweep takes them."""
    kept = []
    for container in client.containers({"label": [f"{RUN_LABEL}={run_id}"]}):
        name = str(container["Names"][0]).lstrip("/").removeprefix("gaia-")
        kept.append(f"{KEPT_PREFIX}{name}")
        client.rename(container["Id"], kept[-1])
    return kept


def _remove_labelled(
    filters: Mapping[str, list[str]], only: Callable[[Mapping[str, Any]], bool] | None = None
) -> int:
    """Remove the containers, then the networks, matching ``filters`` (and ``only``, if given).

    A selective sweep leaves a network still in use (by a kept container) and says so in the
    log; a full cleanup has removed every container first, so there an error is raised.
    """
    from docker.errors import APIError

    removed = 0
    for container in client.containers(filters):
        if only is None or only(container):
            client.remove_container(str(container["Id"]))
            removed += 1
    for network in client.networks(filters):
        if only is not None and not only(network):
            continue
        try:
            client.remove_network(str(network["Id"]))
            removed += 1
        except APIError as ex:
            if only is None:
                raise
            logger.info(f"left network {network['Name']}: {client.first_line(ex)}")
    return removed
