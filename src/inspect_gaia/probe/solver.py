"""The probe's solver: the program in each sample's sandbox, run once, its routes kept.

No model is asked anything: the solver writes ``inside.py`` and ``inside_web.py`` into the
sandbox, runs them with the image's ``python3`` and the configuration on stdin (the sample's own
attachment, the web's targets, the proxy's refusal markers, the capabilities a sandbox keeps, what
the harness would run there: the browser, the page reader, an agent's CLI), and keeps each route's
result in the sample's store (``scorer.STORE_KEY``), the host's checks of the sandbox's settings
(``settings``) after them. The scorer judges them.
"""

from __future__ import annotations

import json
import posixpath
import uuid
from collections.abc import Sequence
from typing import Any

from inspect_ai.solver import Generate, Solver, TaskState, chain, solver
from inspect_ai.util import SandboxEnvironment, sandbox

from ..image_layout import CA_FILE, CHROMIUM, READER_DIR
from ..questions.dataset import SHARED_FILES_DIR
from ..sandboxes.faults import require_started
from ..sandboxes.spec import CAPABILITIES, CAPABILITY_BITS, capability_mask
from ..shipped import PROBE_PROGRAMS, source
from ..web.browser import CHROMIUM_ARGS
from .outcomes import RouteOutcome
from .scorer import STORE_KEY
from .targets import WebTargets

TIMEOUT = 600
"""Seconds the program may run in one sandbox (its routes bound themselves well within it)."""
PROGRAM_DIR = "/tmp/gaia-probe"


def probe_config(
    targets: WebTargets, file_name: str | None, directory: str, agent_cli: str | None
) -> dict[str, Any]:
    """The program's configuration for one sample (``inside.py``): no answer is in it."""
    return {
        "own": f"{SHARED_FILES_DIR}/{file_name}" if file_name else None,
        "shared_dir": SHARED_FILES_DIR,
        "exclude": [f"{directory}/"],
        "capabilities": capability_mask(CAPABILITIES),
        "capability_bits": CAPABILITY_BITS,
        "browser": {"chromium": CHROMIUM, "args": list(CHROMIUM_ARGS), "ca": CA_FILE},
        "reader": {"dir": READER_DIR},
        "agent": agent_cli,
        **targets.as_config(),
    }


def ran_in(kind: str, box: SandboxEnvironment) -> bool:
    """Whether the sample's sandbox is the task's kind's (not one ``--sandbox X`` put there)."""
    # inspect's own wrapper gives what it wraps as any SandboxEnvironment (as_type's check is an
    # isinstance: the abstract base matches every sandbox)
    layers: list[object] = [box, box.as_type(SandboxEnvironment)]  # type: ignore[type-abstract]
    while hasattr(layers[-1], "inner"):  # the faults' wrappers, and gaia-compose's
        layers.append(layers[-1].inner)
    if kind == "k8s":
        return any(type(layer).__module__.startswith("k8s_sandbox") for layer in layers)
    from ..sandboxes.docker.gaia_compose import EngineCheckedSandbox
    from ..sandboxes.docker.gaia_docker import GaiaDockerSandbox

    # gaia-compose's sandboxes are inspect's, wrapped in its engine check
    own = GaiaDockerSandbox if kind == "docker" else EngineCheckedSandbox
    return any(isinstance(layer, own) for layer in layers)


def unapplied(route: RouteOutcome) -> RouteOutcome:
    """A settings check of a sandbox the sample did not run in: skipped, saying why."""
    why = "the sample ran in another sandbox than the task's (inspect's --sandbox)"
    return RouteOutcome(route.route, route.family, "skipped", why)


def as_result(route: RouteOutcome) -> dict[str, Any]:
    """A route judged on the host, in the program's shape (one finding: what it found)."""
    finding = {"where": route.what, "outcome": route.outcome, "text": ""}
    return {
        "route": route.route,
        "family": route.family,
        "outcome": route.outcome,
        "findings": [finding],
    }


def probe_solver(
    targets: WebTargets, settings: Sequence[RouteOutcome], kind: str, agent_cli: str | None = None
) -> Solver:
    """Run the probe's program in the sample's sandbox; its routes go to the store.

    Args:
        targets: What the web routes ask for.
        settings: The host's checks of the sandbox's settings, added to every sample's routes.
        kind: The task's sandbox (``-T sandbox``): the settings are its.
        agent_cli: The command of ``-T agent``'s CLI, to look for in the image.
    """

    @solver(name="gaia_probe")
    def run_probe() -> Solver:
        return solve

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        box = sandbox()
        directory = f"{PROGRAM_DIR}-{uuid.uuid4().hex[:8]}"
        for program in PROBE_PROGRAMS:
            await box.write_file(posixpath.join(directory, program.name), source(program))
        file_name = (state.metadata or {}).get("file_name") or None
        config = probe_config(targets, file_name, directory, agent_cli)
        # -E -s -S: no variable, user site or site-packages of the image's changes the program;
        # its own folder stays first on its path, for its sibling
        command = ["python3", "-E", "-s", "-S", posixpath.join(directory, "inside.py")]
        run = await box.exec(command, input=json.dumps(config), timeout=TIMEOUT)
        results = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
        if not results:
            raise RuntimeError(
                f"the probe could not run in this sandbox (exit {run.returncode}): "
                f"{run.stderr.strip()[-300:] or 'no output'} — it needs the image's python3"
            )
        await box.exec(["rm", "-rf", directory])
        own = ran_in(kind, box)
        checked = [as_result(route if own else unapplied(route)) for route in settings]
        state.store.set(STORE_KEY, results + checked)
        state.completed = True
        return state

    return chain(require_started(), run_probe())
