"""Docker bookkeeping: the sandboxes a run left or runs now, and how a run was started."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable

from inspect_gaia.sandboxes.docker import TAG_VARIABLE
from inspect_gaia.sandboxes.docker.spares import is_spare

# -- Docker bookkeeping ----------------------------------------------------------------------------


STARTED_AS: dict[str, tuple[int, ...]] = {
    "terminal": (),
    "background": (signal.SIGINT,),
    "nohup": (signal.SIGHUP,),
}
"""How a run was started, by the stop signals it inherits as ignored.

A terminal leaves all three at their default; a non-interactive shell starts a background job
(``inspect eval … &`` in a script) with SIGINT ignored; ``nohup`` ignores SIGHUP.
"""


def started_as(how: str) -> Callable[[], None]:
    """A child's ``preexec_fn`` giving it the stop signals of a run started ``how``.

    Every disposition is set, none inherited: the test process itself may be a background job
    or run under ``nohup`` (CI's runner starts ``.ci/run`` either way).
    """
    ignored = STARTED_AS[how]

    def preexec() -> None:
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, signal.SIG_IGN if signum in ignored else signal.SIG_DFL)

    return preexec


def docker_leftovers() -> set[str]:
    """Containers, networks and volumes of either Docker sandbox, of this test session's runs.

    gaia-docker labels its own ``inspect_gaia.sandbox``, gaia-compose's compose projects are named
    ``inspect-*``, and the session's runs of both also carry ``inspect_gaia.tag``
    (``INSPECT_GAIA_TAG``, set by conftest.py per session and pytest-xdist worker), so another
    suite's (or worker's) runs on the same engine are not counted. Counted by label, never by
    deleting anything.
    """
    labels = (
        '{{.Label "inspect_gaia.sandbox"}}\t{{.Label "com.docker.compose.project"}}'
        '\t{{.Label "inspect_gaia.tag"}}'
    )
    session = os.environ.get(TAG_VARIABLE, "")
    found: set[str] = set()
    for kind, listing, name_field in (
        ("container", ["docker", "ps", "-a"], "{{.Names}}"),
        ("network", ["docker", "network", "ls"], "{{.Name}}"),
        ("volume", ["docker", "volume", "ls"], "{{.Name}}"),
    ):
        out = subprocess.run(
            [*listing, "--format", f"{name_field}\t{labels}"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for line in out.splitlines():
            name, ours, project, tag = (line.split("\t") + ["", "", ""])[:4]
            if (ours or project.startswith("inspect-")) and tag == session:
                found.add(f"{kind}:{name}")
    return found


def running_containers() -> list[str]:
    """Running sandbox containers of either provider, a run's spare not taken yet aside."""
    names = [
        name
        for kind, name in (n.split(":", 1) for n in docker_leftovers())
        if kind == "container" and not is_spare(name)
    ]
    return sorted(
        name
        for name in names
        if subprocess.run(
            ["docker", "inspect", "-f", "{{.State.Running}}", name], capture_output=True, text=True
        ).stdout.strip()
        == "true"
    )


def wait_for_containers(
    count: int, timeout: float = 60, besides: set[str] | frozenset[str] = frozenset()
) -> list[str]:
    """Wait until at least ``count`` sandbox containers run, not counting those named in
    ``besides`` (``docker_leftovers()`` taken before the test started them); their names."""
    known = {name.split(":", 1)[1] for name in besides if name.startswith("container:")}
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        names = [name for name in running_containers() if name not in known]
        if len(names) >= count:
            return names
        time.sleep(0.3)
    raise AssertionError(f"{count} sandbox container(s) never appeared")
