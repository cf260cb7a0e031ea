"""Programs that run elsewhere: standard-library modules shipped into another process as source.

Some modules of the package never run in the host's Python (``PROGRAMS`` lists them all): the
command runner (in each sandbox, sent to the image's ``python3`` over its exec), the MCP relay and
the probe's program (``PROBE_PROGRAMS``, written into the sandbox), and the egress proxy's
programs (``PROXY_PROGRAMS``, copied into the proxy's container, where mitmproxy runs the addons:
the guard and its bounds, the recorder, the replay). Each says so in its docstring with one line
that starts ``Runs elsewhere:``, imports only the standard library and its shipped siblings (and,
for the addons, the mitmproxy they run in), and is read from the installed package the same way:
``source``. ``tests/test_shipped.py`` holds all three. A leaf: importing it loads nothing of the
package.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources

MARKER = "Runs elsewhere:"
"""How the docstring line of a program that runs elsewhere starts."""


@dataclass(frozen=True)
class Program:
    """A module of the package that runs in another process, and how it is found there."""

    module: str
    """Its name in the package, under ``inspect_gaia`` (``egress.urlrules``)."""
    name: str
    """Its file's name where it runs; its siblings import it by that name (``_urlrules.py``)."""
    host: tuple[str, ...] = ()
    """What the process it runs in provides besides the standard library (mitmproxy)."""


EXEC_SERVER = Program("sandboxes.docker.exec_server", "exec_server.py")
MCP_RELAY = Program("web.mcp_relay", "mcp_relay.py")
PROXY_PROGRAMS = (
    Program("egress.addon", "addon.py", host=("mitmproxy",)),
    Program("egress.bounds", "bounds.py", host=("mitmproxy",)),
    Program("egress.load", "load.py"),
    Program("egress.recorder", "recorder.py", host=("mitmproxy",)),
    Program("egress.record_files", "record_files.py"),
    Program("egress.bodies", "bodies.py"),
    Program("egress.replay", "replay.py", host=("mitmproxy",)),
    Program("egress.replay_match", "replay_match.py"),
    Program("egress.netpolicy", "netpolicy.py"),
    Program("egress.failclosed", "failclosed.py"),
    Program("egress.supervise", "supervise.py"),
    Program("egress.urlrules", "_urlrules.py"),
)
"""Copied beside each other into the proxy's container; ``supervise.py`` is its command. The
URL rules are ``_urlrules.py`` there: the file the package imports as ``urlrules``."""
PROBE_PROGRAMS = (
    Program("probe.inside", "inside.py"),
    Program("probe.inside_web", "inside_web.py"),
    Program("probe.inside_net", "inside_net.py"),
)
"""The probe's program in a sample's sandbox (``inside.py`` runs, its web and neighbour routes
beside it)."""
PROGRAMS = (EXEC_SERVER, MCP_RELAY, *PROXY_PROGRAMS, *PROBE_PROGRAMS)


@functools.cache
def source(program: Program) -> str:
    """The program's source, read once from the installed package."""
    *folders, stem = program.module.split(".")
    return resources.files(__package__).joinpath(*folders, f"{stem}.py").read_text("utf-8")
