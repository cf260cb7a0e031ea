"""Helpers shared by the tests: running GAIA evals, Docker bookkeeping, local HTTP stubs, logs.

Fixtures live in ``conftest.py``; everything a test imports by name is imported from here
(``from tests.helpers import X``), whichever of the sibling modules defines it:

- ``helpers_runs``: the tests' constants, running evals (in-process or ``inspect eval``), and
  ``inspect-gaia`` in-process
- ``helpers_docker``: the sandboxes a run left or runs now, and how a run was started
- ``helpers_stubs``: local HTTP stubs and a stand-in for the hub's snapshot download
- ``helpers_files``: what a run would have read or written, made without one (damaged snapshots,
  parsed parameters, logs)
- ``helpers_samples``: sample rows several tests write logs of
- ``helpers_reports``: ``inspect`` commands on gaia-tiny, and ``inspect-gaia report`` read back

Fixture datasets and the scripted model's scenarios are in ``scenario``; test modules never import
each other.
"""

from tests.helpers_docker import (
    STARTED_AS,
    docker_leftovers,
    running_containers,
    started_as,
    wait_for_containers,
)
from tests.helpers_files import b64, dumps, gaia_record, parse_params, rewrite_record, write_log
from tests.helpers_reports import (
    QUESTIONS,
    inspect_command,
    logs_in,
    overall,
    report,
    report_json,
    scored_once,
    wait_until,
)
from tests.helpers_runs import (
    MODEL,
    REPO,
    SANDBOX_IMAGE,
    MiniLogs,
    Play,
    cli_eval,
    eval_blocked_pair,
    eval_command,
    eval_gaia,
    eval_task,
    inspect_cli,
    invoke,
    metrics,
    run_eval_cli,
    sample_asking,
    silent_endpoint,
)
from tests.helpers_samples import RUN_SAMPLES, TWO_SAMPLES
from tests.helpers_stubs import RecordingHandler, StandInDownload, quiet_handler, serve_http

__all__ = [
    "MODEL",
    "MiniLogs",
    "Play",
    "QUESTIONS",
    "REPO",
    "RUN_SAMPLES",
    "RecordingHandler",
    "SANDBOX_IMAGE",
    "STARTED_AS",
    "StandInDownload",
    "TWO_SAMPLES",
    "b64",
    "cli_eval",
    "docker_leftovers",
    "dumps",
    "eval_command",
    "eval_blocked_pair",
    "eval_gaia",
    "eval_task",
    "gaia_record",
    "inspect_cli",
    "inspect_command",
    "invoke",
    "logs_in",
    "metrics",
    "overall",
    "parse_params",
    "quiet_handler",
    "report",
    "report_json",
    "rewrite_record",
    "run_eval_cli",
    "sample_asking",
    "silent_endpoint",
    "running_containers",
    "scored_once",
    "serve_http",
    "started_as",
    "wait_for_containers",
    "wait_until",
    "write_log",
]
