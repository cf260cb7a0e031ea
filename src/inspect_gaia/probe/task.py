"""``inspect_gaia/gaia_probe``: a run that proves the sandbox sealed, and scores 0 when it is.

``inspect eval inspect_gaia/gaia_probe -T block_answer_sources=true`` (with every ``-T`` of the
run you mean to publish): the same questions, sandboxes, network, proxy and image as ``gaia``
would start, and in each sample's sandbox, in place of an agent, a scripted adversary that tries
every route to the answers the project knows (``inside.py``'s ``ROUTES``, and the host's checks of
the sandbox's settings: ``settings.CHECKS``). It needs no model and spends no token: the task runs
on inspect's mock model, whatever ``--model`` says, and asks it nothing. ``inspect-gaia report``
shows the run as one table of routes and outcomes and one line, ``sealed: 0 of N samples reached
an answer (K routes tried)``, or the routes that leaked.

A task of its own, not ``-T agent=probe``: it must keep every setting of the run it checks,
``-T agent=`` among them (the agent's image and its CLI are what is probed), and its record must
never read as an answering run's (``GaiaProvenance.probe``: never pooled, refused by
``submission`` and ``compare``). Its own parameter: ``web_targets`` (``targets``).
"""

from __future__ import annotations

from typing import Any

from inspect_ai import Task, task

from ..defaults import DEFAULT_AGENT
from ..image_layout import AGENT_CLIS
from ..logs.provenance import METADATA_KEY
from ..sandboxes.k8s import operator_values
from ..task import gaia_parts, params_of
from .scorer import probe_scorer
from .settings import settings_routes
from .solver import probe_solver
from .targets import default_targets, read_targets

PROBE_MODEL = "mockllm/model"
"""The task's model, whatever ``--model`` names: inspect's mock, never asked (no token spent)."""
OWN_PARAMETERS = ("web_targets",)
"""The probe's parameters besides ``gaia``'s."""
SETTINGS_KEY = "gaia_probe_settings"
"""The task metadata's key of the host's checks of the sandbox's settings (``settings``)."""
PROBE_VERSION = "1.0.0"
"""Bumped when the routes' meaning changes (a route added keeps it: its outcome is new)."""


@task
def gaia_probe(web_targets: str | None = None, **params: Any) -> Task:
    """Probe GAIA's sandboxes for every route to the answers; 0 when none is found.

    Args:
        web_targets: A file of the URLs the web routes ask for (``source``, ``open``, ``relay``,
            ``redirect`` lines: docs/probe.md). Default: one per rule of the run's answer
            sources (the package's list and ``blocklist``'s), an open page, three relays and
            a redirect.
        **params: ``gaia``'s parameters, as the run to be checked would pass them (dataset,
            sandbox, image, network, limits, answer sources, agent, tools).
    """
    parsed = params_of(params, "gaia_probe", own=OWN_PARAMETERS)
    sources = parsed.sources
    targets = read_targets(web_targets) if web_targets else default_targets(sources.answer_sources)
    parts = gaia_parts(parsed, probe=True)
    tools = {"web_search": parsed.agent.web_search, "mcp_servers": parsed.agent.mcp_servers}
    operator = operator_values() if parsed.sandbox.kind == "k8s" else {}
    settings = settings_routes(parsed.sandbox.kind, parts.sandbox.config, tools, operator)
    agent = parsed.agent.name
    return Task(
        dataset=parts.dataset,
        sandbox=parts.sandbox,
        solver=probe_solver(
            targets,
            settings,
            parsed.sandbox.kind,
            AGENT_CLIS.get(agent) if agent != DEFAULT_AGENT else None,
        ),
        scorer=probe_scorer([str(sample.id) for sample in parts.dataset]),
        model=PROBE_MODEL,
        version=PROBE_VERSION,
        metadata={
            METADATA_KEY: parts.provenance.as_metadata(),
            # the host's checks of the sandbox's settings, once (each sample's routes hold them)
            SETTINGS_KEY: [route.as_json() for route in settings],
        },
    )
