"""Helpers shared by the tests: running GAIA evals, Docker bookkeeping, local HTTP stubs, logs.

Fixtures live in ``conftest.py``; everything a test imports by name is imported from here
(``from helpers import X``), whichever of the sibling modules defines it:

- ``helpers_runs``: the tests' constants, running evals (in-process or ``inspect eval``), and
  ``inspect-gaia`` in-process
- ``helpers_docker``: the sandboxes a run left or runs now, and how a run was started
- ``helpers_stubs``: local HTTP stubs and a stand-in for the hub's snapshot download
- ``helpers_files``: what a run would have read or written, made without one (damaged snapshots,
  parsed parameters, logs)
"""

from helpers_docker import (
    STARTED_AS,
    docker_leftovers,
    running_containers,
    started_as,
    wait_for_containers,
)
from helpers_files import dumps, gaia_record, parse_params, rewrite_record, write_log
from helpers_runs import (
    MODEL,
    REPO,
    SANDBOX_IMAGE,
    MiniLogs,
    Play,
    cli_eval,
    eval_command,
    eval_gaia,
    eval_task,
    inspect_cli,
    invoke,
    metrics,
    run_eval_cli,
)
from helpers_stubs import RecordingHandler, StandInDownload, quiet_handler, serve_http

__all__ = [
    "MODEL",
    "REPO",
    "SANDBOX_IMAGE",
    "STARTED_AS",
    "MiniLogs",
    "Play",
    "RecordingHandler",
    "StandInDownload",
    "cli_eval",
    "docker_leftovers",
    "dumps",
    "eval_command",
    "eval_gaia",
    "eval_task",
    "gaia_record",
    "inspect_cli",
    "invoke",
    "metrics",
    "parse_params",
    "quiet_handler",
    "rewrite_record",
    "run_eval_cli",
    "running_containers",
    "serve_http",
    "started_as",
    "wait_for_containers",
    "write_log",
]
