"""Every private inspect_ai name and undocumented behaviour this package relies on, with why.

inspect_ai releases several times a week and its private modules move without notice. Importing
them only here means a release that breaks one shows up as one failing import (``.ci/run`` checks
this module against the pinned floor and against the newest inspect_ai on PyPI), and a fix is a
one-line change here. Nothing else in the package imports from a ``_``-prefixed inspect_ai module
(tests/test_compat.py checks the source).

One reliance is on behaviour rather than a name: ``basic_agent``'s loop (``guard_task_state``),
held by a test that runs that loop. inspect_swe's private names (pinned 0.2.72, the ``[agents]``
extra, imported only when an agent CLI runs) are here too: Codex CLI's catalog fetch and slug.

docker-py's internals are listed where they are used, in the docstrings of
``sandboxes/docker/client.py`` (the Unix-socket adapter's ``get_connection``, the session's
``trust_env``) and ``sandboxes/docker/archive.py`` (``_url``, ``_get``, ``_raise_for_status``);
no other module uses any.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

# An ``.eval``'s samples one at a time through one zip reader: inspect's public
# ``read_eval_log_sample`` parses the archive's directory again for every sample (quadratic in the
# samples), and ``read_eval_log`` holds them all at once. ``AsyncZipReader`` keeps the directory;
# ``run_coroutine`` is how ``read_eval_log`` runs its reader from synchronous code.
from inspect_ai._util._async import run_coroutine
from inspect_ai._util.async_zip import AsyncZipReader
from inspect_ai._util.asyncfiles import AsyncFilesystem

# inspect eval prints a PrerequisiteError as its message alone, without a traceback: the base of
# our one-line errors (errors.py).
from inspect_ai._util.error import PrerequisiteError

# Public: what ``each_eval_sample`` (below) reads each sample with, and hands on.
from inspect_ai.log import EvalSample, read_eval_log_sample_async

# The log of the running sample (its id and epoch): gaia-docker names containers after them so
# `docker ps` shows which sample a container serves. No public accessor exists.
from inspect_ai.log._samples import sample_active

# The model of the eval being set up (the task is created under it). Public in
# inspect_ai.model._model only; the task refuses a run with no model or a dead endpoint with it.
from inspect_ai.model._model import active_model

# Public: the state basic_agent's loop reads, which ``guard_task_state`` (below) re-classes.
from inspect_ai.solver import TaskState

# basic_agent's own system prompt, passed again when we add our init steps to basic_agent (giving
# `init` replaces the default, and the default prompt is part of what makes runs comparable).
from inspect_ai.solver._basic_agent import DEFAULT_SYSTEM_MESSAGE

# Public: the base of the environments ``unproxied`` (below) unwraps.
from inspect_ai.util import SandboxEnvironment

# The sandbox limits in force this run, by provider (``--max-sandboxes``, or the provider's own
# default): gaia-docker keeps no spare container where a spare would count past one.
from inspect_ai.util._concurrency import sandbox_limiters

# inspect's compose sandbox, subclassed so that a sample whose sandbox fails to start is still
# scored (inspect skips scoring when sample_init raises).
from inspect_ai.util._sandbox.docker.docker import DockerSandboxEnvironment

# How inspect's compose sandbox tells the engine's launch failures (runc, our `timeout` wrapper)
# from the command's own: gaia-docker classifies its exec results the same way.
from inspect_ai.util._sandbox.docker.failure import InjectedWrapper, classify_exec_failure

# The sandbox event recorder inspect wraps around every environment; unwrapped (``unproxied``) to
# read a provider's own state (a sandbox that never started, or whose set-up failed).
from inspect_ai.util._sandbox.events import SandboxEnvironmentProxy

# Per-run provider state: inspect opens one scope per eval batch and tasks spawned inside inherit
# it, so two evals in one process keep separate run ids (and never clean up each other's).
from inspect_ai.util._sandbox.lifecycle import sandbox_lifecycle_state

# The ring buffer inspect's compose sandbox keeps command output in: the same cap, the same tail.
from inspect_ai.util._subprocess import CircularByteBuffer

if TYPE_CHECKING:
    from inspect_ai.model import Model

_State = TypeVar("_State", bound=TaskState)

_LOADER = "inspect_ai._eval.loader"
_OURS = "inspect_gaia/"
_EXCEPTHOOK_MODULE = "inspect_ai._util.error"


def sandbox_registered(name: str) -> bool:
    """Whether inspect's registry holds this package's sandbox provider ``name``.

    Asked without ``registry_find``, which loads every installed package's entry point when it
    finds nothing (``sandboxes/docker/config.known_to_inspect`` exists to avoid exactly that). A
    provider of ours is registered under its package's name, ``inspect_gaia/<name>``.
    """
    from inspect_ai._util.registry import registry_has

    return registry_has("sandboxenv", f"inspect_gaia/{name}")


def forget_sandbox(name: str, provider: object) -> None:
    """Take ``provider`` out of inspect's registry again, if it is still the one under ``name``."""
    from inspect_ai._util.registry import _registry, registry_key

    key = registry_key("sandboxenv", f"inspect_gaia/{name}")
    if _registry.get(key) is provider:
        del _registry[key]


def creating_only_gaia_tasks() -> bool:
    """Whether every task inspect is creating in this new run is one of this package's.

    inspect gives every ``-T`` to every task it creates and tells a task nothing about the others;
    what it loads is only in its loader's frames (behaviour, not a name: no API says it). Only
    ours: a ``load_tasks`` whose ``task_specs`` are registered task names of ``inspect_gaia/``
    (``inspect eval inspect_gaia/gaia``, an ``eval-set`` of ``gaia_level1`` and ``gaia_level2``).
    Not: a name of another package, a file or folder (it may hold other tasks), no specs (the
    current directory's), a task rebuilt from a log (``resolve_previous_tasks``: eval-retry, a
    resumed eval-set, whose names were accepted when it first ran), and a task created outside
    inspect's loader (``gaia()`` in Python).
    """
    from inspect_ai._util.registry import registry_lookup

    frame = sys._getframe(1)
    specs: object = None
    while frame is not None:
        if frame.f_globals.get("__name__") == _LOADER:
            name = frame.f_code.co_name
            if name == "resolve_previous_tasks":
                return False
            if name == "load_tasks" and specs is None:
                specs = frame.f_locals.get("task_specs")
        frame = frame.f_back  # type: ignore[assignment]
    return (
        isinstance(specs, list)
        and len(specs) > 0
        and all(
            isinstance(spec, str)
            and spec.startswith(_OURS)
            and registry_lookup("task", spec) is not None
            for spec in specs
        )
    )


def inspect_cli_excepthook() -> bool:
    """Whether ``sys.excepthook`` is the one inspect's CLI installs (``eval``, ``eval-set``).

    That hook prints a ``PrerequisiteError``'s message through rich's global console, on stdout,
    which ``--display none`` makes quiet: a refusal was lost there (behaviour, read from
    ``inspect_ai._util.error.exception_hook``; no API says where it prints).
    """
    return getattr(sys.excepthook, "__module__", None) == _EXCEPTHOOK_MODULE


def guard_task_state(state: TaskState, guarded: type[_State]) -> _State:
    """``state``, made an instance of ``guarded`` (a ``TaskState`` subclass adding behaviour only).

    The one change of class in the package, and why it is one: ``basic_agent`` offers no hook in its
    loop (inspect_ai 0.3.285, the newest, as every release before it), which runs ``while not
    state.completed:`` on the TaskState it was handed, reading ``completed`` again before every
    model call, after it has answered a reply without a tool call with its "please proceed" message.
    A subclass whose ``completed`` also sees a plain-text ``FINAL ANSWER:`` or empty turns
    (``agents/basic.idle_guard``) is the only way to end such a loop early while the agent stays
    ``basic_agent`` (the design card's; inspect_evals moved to ``react(on_continue=...)`` instead).
    tests/test_compat.py runs that loop and fails when it no longer re-reads ``completed``, or no
    longer appends the nudge the guard drops.

    Raises:
        TypeError: inspect handed over something other than a plain ``TaskState``; re-classing
            it would drop its own behaviour, so the guard refuses rather than go missing.
    """
    if type(state) is not TaskState:
        raise TypeError(
            f"inspect_gaia's idle guard expects inspect's TaskState, got {type(state).__name__} "
            "— see guard_task_state in inspect_gaia/_compat.py"
        )
    state.__class__ = guarded
    assert isinstance(state, guarded)
    return state


def unproxied(environment: SandboxEnvironment) -> SandboxEnvironment:
    """The provider's own environment behind inspect's event-recording proxy."""
    if isinstance(environment, SandboxEnvironmentProxy):
        return environment._sandbox
    return environment


def compose_project(environment: DockerSandboxEnvironment) -> str:
    """The ``docker compose`` project a compose sandbox runs its commands in."""
    return environment._project.name


def each_eval_sample(
    location: str,
    exclude: set[str],
    each: Callable[[EvalSample], None],
    more: Mapping[str, frozenset[str]] | None = None,
) -> None:
    """Hand ``each`` the samples of the ``.eval`` at ``location``, one at a time, keeping none.

    The samples are the archive's parts that inspect's own reader takes (each ``samples/*.json``
    name once; of a name written twice, the last part, as a lookup by name finds), each read as
    ``read_eval_log_sample`` reads it, without ``exclude``'s fields (and ``more``'s of its part).

    Raises:
        ValueError: A sample part whose name is not ``samples/<id>_epoch_<n>.json`` (inspect never
            writes one, and cannot read it by id).
        Exception: What inspect raises for a damaged part.
    """

    async def read_all() -> None:
        async with AsyncFilesystem() as filesystem:
            reader = AsyncZipReader(filesystem, location)
            entries = (await reader.entries()).entries
            names = dict.fromkeys(
                e.filename
                for e in entries
                if e.filename.startswith("samples/") and e.filename.endswith(".json")
            )
            for name in names:
                id, epoch = _sample_key(name)
                fields = exclude | (more or {}).get(name, frozenset())
                each(
                    await read_eval_log_sample_async(
                        location, id, epoch, format="eval", exclude_fields=fields, reader=reader
                    )
                )

    run_coroutine(read_all())


def codex_catalog_offline() -> None:
    """inspect_swe's Codex CLI reads the models catalog it has cached, and never fetches one.

    inspect_swe 0.2.72 fetches the ``models.json`` of the sandbox's Codex version from
    raw.githubusercontent.com at each sample until one fetch succeeds
    (``codex_version_models_catalog``), one sample at a time, with three retries: 7.4 s a sample
    where GitHub cannot be reached (measured here), and at 32 samples at once each queued behind
    the others' failures. A run downloads nothing (docs/agents.md): the catalog it has cached, else
    ``None``, inspect_swe's own answer to a failed fetch (Codex's prompt is then aligned against
    its bundled snapshot: ``codex_slug``). tests/test_swe_agents.py fails when the name moves.
    """
    from inspect_swe._codex_cli import codex_cli
    from inspect_swe._codex_cli.agentbinary import _read_cached_catalog

    async def cached_only(version: str | None) -> dict[str, Any] | None:
        return _read_cached_catalog(version)

    codex_cli.codex_version_models_catalog = cached_only  # type: ignore[attr-defined]


def bridge_polling() -> None:
    """Inspect's sandbox agent bridge looks for the agent's model requests as the sandbox polls.

    The bridge's model service (``run_model_service``) passes ``polling_interval=2`` to
    ``sandbox_service``, which keeps the larger of that and the sandbox's own default: a request
    the agent writes waits up to 2 s (1 s on average) before the host sees it, at every turn of
    every bridged agent. The service here gets the sandbox's default instead (gaia-docker's 0.2
    s, as inspect's own docker sandbox's); one look is one command through the sandbox's command
    channel (1.6 ms of the host's CPU measured here: 32 agents at once cost about a quarter of a
    CPU in looks). tests/test_swe_agents.py fails when the name moves.
    """
    from inspect_ai.agent._bridge.sandbox import service

    original = service.sandbox_service  # type: ignore[attr-defined]
    if getattr(original, "_gaia_polling", False):
        return

    async def sandbox_service(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("name") == service.MODEL_SERVICE:
            kwargs["polling_interval"] = None  # the sandbox's default_polling_interval()
        return await original(*args, **kwargs)

    sandbox_service._gaia_polling = True  # type: ignore[attr-defined]
    service.sandbox_service = sandbox_service  # type: ignore[attr-defined]


def codex_slug(model: Model) -> str:
    """The ``--model`` slug inspect_swe 0.2.72 gives Codex CLI for ``model``, without a catalog.

    Its ``resolve_codex_model`` with no version catalog (``codex_catalog_offline``), computed
    ahead so that the run records, and the agent is given, one name (``agents/swe.identity``).
    """
    from inspect_ai.model import ModelName
    from inspect_swe._codex_cli.agentbinary import codex_alignment_catalog
    from inspect_swe._codex_cli.model_catalog import (
        is_latest_openai_model,
        is_openai_derived_api,
        openai_service_model_name,
        resolve_codex_model_slug,
    )

    name, api = ModelName(model), model.api
    return str(
        resolve_codex_model_slug(
            openai_service_model_name(api, name.name),
            api="openai" if is_openai_derived_api(api) else name.api,
            catalog=codex_alignment_catalog(None),
            override=None,
            is_latest=is_latest_openai_model(api),
        ).slug
    )


def _sample_key(name: str) -> tuple[str, int]:
    """The id and epoch a sample part's name says, as inspect names the part."""
    id, _, epoch = name.removeprefix("samples/").removesuffix(".json").rpartition("_epoch_")
    if not id or not epoch.isdigit() or str(int(epoch)) != epoch:
        raise ValueError(f"a sample part named {name}, which inspect never writes")
    return id, int(epoch)


__all__ = [
    "CircularByteBuffer",
    "DEFAULT_SYSTEM_MESSAGE",
    "DockerSandboxEnvironment",
    "InjectedWrapper",
    "PrerequisiteError",
    "SandboxEnvironmentProxy",
    "active_model",
    "bridge_polling",
    "classify_exec_failure",
    "codex_catalog_offline",
    "codex_slug",
    "compose_project",
    "creating_only_gaia_tasks",
    "each_eval_sample",
    "guard_task_state",
    "inspect_cli_excepthook",
    "sample_active",
    "sandbox_lifecycle_state",
    "sandbox_limiters",
    "unproxied",
]
