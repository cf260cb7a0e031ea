"""Helpers shared by the tests: running GAIA evals, Docker bookkeeping, local HTTP stubs, logs.

Fixtures live in ``conftest.py``; everything a test imports by name lives here.
"""

from __future__ import annotations

import inspect
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Literal

import pyarrow as pa
import pyarrow.parquet as pq
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog, read_eval_log
from inspect_ai.util import SandboxEnvironmentSpec
from scenario import GAIA_TINY, VALIDATION_DIR

from inspect_gaia import DEFAULT_INPUT_PROMPT, gaia
from inspect_gaia._params import GaiaParams
from inspect_gaia._provenance import GaiaProvenance
from inspect_gaia.gaia import gaia_questions
from inspect_gaia.sandbox import PROVIDERS
from support.scripted_model import Entry, ScriptedModel

REPO = Path(__file__).parent.parent
SANDBOX_IMAGE = os.environ.get("INSPECT_GAIA_TEST_IMAGE", "inspect-gaia/sandbox:bookworm")
"""Image the Docker tests run. CI builds it without a registry (`inspect-gaia image build --offline`)."""
MODEL = "openai-api/scripted/gaia-bot"

Play = Callable[[list[Entry]], ScriptedModel]
"""The ``scripted`` fixture: set the scenario the scripted model plays."""


# -- running evals ---------------------------------------------------------------------------------


def inspect_cli() -> str:
    """The ``inspect`` CLI of the interpreter running the tests."""
    found = Path(sys.executable).parent / "inspect"
    assert found.is_file(), f"no inspect CLI beside {sys.executable}; install the package first"
    return str(found)


def eval_command(task_args: list[str], log_dir: Path, inspect: str | None = None) -> list[str]:
    """``inspect eval inspect_gaia/gaia -T ...`` with the scripted model, logging to ``log_dir``."""
    args = [arg for value in task_args for arg in ("-T", value)]
    return [inspect or inspect_cli(), "eval", "inspect_gaia/gaia", *args, "--model", MODEL] + [
        "--log-dir",
        str(log_dir),
        "--display",
        "plain",
    ]


def run_eval_cli(
    task_args: list[str],
    workdir: Path,
    env: dict[str, str] | None = None,
    inspect: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run :func:`eval_command` in ``workdir`` (logs in ``workdir/logs``).

    The scripted model's variables default to a closed port, for runs that must stop before any
    model call; the session's scripted server, when started, takes precedence.
    """
    return subprocess.run(
        eval_command(task_args, workdir / "logs", inspect),
        capture_output=True,
        text=True,
        cwd=workdir,
        env={
            "SCRIPTED_API_KEY": "x",
            "SCRIPTED_BASE_URL": "http://127.0.0.1:9/v1",
            **os.environ,
            **(env or {}),
        },
    )


def cli_eval(task_args: list[str], workdir: Path, inspect: str | None = None) -> EvalLog:
    """Run ``inspect eval inspect_gaia/gaia -T ...`` with the scripted model in ``workdir``.

    Returns the one log it wrote; fails with the CLI's output when the run fails.
    """
    run = run_eval_cli(task_args, workdir, inspect=inspect)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    (log_file,) = (workdir / "logs").glob("*.eval")
    return read_eval_log(str(log_file))


def eval_task(task: Task, log_dir: Path, **options: Any) -> EvalLog:
    """Run ``task`` in-process with the scripted model; returns its one log."""
    (log,) = inspect_eval(task, model=MODEL, log_dir=str(log_dir), display="none", **options)
    return log


def eval_gaia(log_dir: Path, **params: Any) -> EvalLog:
    """Run ``gaia(**params)`` in-process with the scripted model; returns its one log."""
    return eval_task(gaia(**params), log_dir)


def metrics(log: EvalLog) -> dict[str, float]:
    """The gaia_scorer's metrics of a log, by name."""
    assert log.results is not None
    (scores,) = [s for s in log.results.scores if s.name == "gaia_scorer"]
    return {name: metric.value for name, metric in scores.metrics.items()}


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
    """Containers, networks and volumes of either Docker sandbox.

    gaia-docker labels its own ``inspect_gaia.sandbox``; inspect's compose sandbox names its
    compose projects ``inspect-*``. Counted by label, never by deleting anything.
    """
    labels = '{{.Label "inspect_gaia.sandbox"}}\t{{.Label "com.docker.compose.project"}}'
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
            name, ours, project = (line.split("\t") + ["", ""])[:3]
            if ours or project.startswith("inspect-"):
                found.add(f"{kind}:{name}")
    return found


def running_containers() -> list[str]:
    """Running sandbox containers of either provider."""
    names = [n.split(":", 1)[1] for n in docker_leftovers() if n.startswith("container:")]
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


# -- local HTTP stubs ------------------------------------------------------------------------------


@contextmanager
def serve_http(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """Serve ``handler`` on an ephemeral 127.0.0.1 port; yields ``http://127.0.0.1:<port>``."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class RecordingHandler(BaseHTTPRequestHandler):
    """A request handler that remembers the paths it was asked for."""

    seen: list[str] = []


def quiet_handler(routes: dict[str, tuple[int, str, bytes]]) -> type[RecordingHandler]:
    """A GET/HEAD handler answering ``path -> (status, content type, body)``; 404 elsewhere."""

    class Handler(RecordingHandler):
        seen: list[str] = []

        def _answer(self) -> None:
            self.seen.append(self.path)
            status, kind, body = routes.get(self.path, (404, "text/plain", b"not found"))
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        do_GET = _answer
        do_HEAD = _answer

        def log_message(self, format: str, *args: Any) -> None:
            return

    return Handler


@dataclass(frozen=True)
class MiniLogs:
    """Logs of real runs on gaia-mini, shared by the CLI tests."""

    validation: Path
    test: Path
    test_level2: Path


# -- the inspect-gaia CLI ------------------------------------------------------------------------


def invoke(*args: str) -> tuple[int, str, str]:
    """Run ``inspect-gaia ARGS`` in-process; exit code, stdout, stderr (no uncaught exception)."""
    from click.testing import CliRunner

    from inspect_gaia._cli.main import cli

    result = CliRunner().invoke(cli, list(args))
    assert not isinstance(result.exception, Exception) or isinstance(
        result.exception, SystemExit
    ), result.exception
    return result.exit_code, result.stdout, result.stderr


# -- hub stand-ins --------------------------------------------------------------------------------


class StandInDownload:
    """Stands in for a hub client's snapshot download: copies gaia-tiny's files that match."""

    def __init__(self, source: Path, fail_after: int | None = None) -> None:
        self.source = source
        self.fail_after = fail_after
        self.calls: list[dict[str, Any]] = []

    def __call__(self, **kwargs: Any) -> str:
        self.calls.append(kwargs)
        target = Path(kwargs["local_dir"])
        (pattern,) = kwargs["allow_patterns"]
        split_dir = pattern.removesuffix("/*")
        files = sorted((self.source / split_dir).iterdir())
        for count, path in enumerate(files):
            if self.fail_after is not None and count == self.fail_after:
                raise ConnectionError("connection reset by peer")
            (target / split_dir).mkdir(parents=True, exist_ok=True)
            if not (target / split_dir / path.name).exists():  # resume: keep what is there
                shutil.copy(path, target / split_dir / path.name)
        return str(target)


# -- damaged snapshots -----------------------------------------------------------------------------


def rewrite_record(snapshot: Path, which: str, **changes: Any) -> None:
    """Change the record of task ``which`` in a snapshot's validation metadata."""
    path = snapshot / VALIDATION_DIR / "metadata.parquet"
    rows = pq.read_table(path).to_pylist()
    for row in rows:
        if row["task_id"] == which:
            row.update(changes)
    pq.write_table(pa.Table.from_pylist(rows), path)


# -- parameters ------------------------------------------------------------------------------------


def parse_params(**raw: object) -> GaiaParams:
    """What ``gaia(**raw)`` parses: ``GaiaParams.parse`` with ``gaia()``'s defaults for the rest.

    ``parse`` has no defaults of its own (a value ``gaia()`` forgot to pass on is a type error).
    """
    defaults = {name: p.default for name, p in inspect.signature(gaia).parameters.items()}
    return GaiaParams.parse(**{**defaults, **raw})


# -- logs without a run ----------------------------------------------------------------------------


def gaia_record(**params: object) -> dict[str, Any]:
    """The ``gaia`` task metadata a run of ``gaia(**params)`` writes (on gaia-tiny by default).

    Built by the task's own code from parsed parameters, so test logs cannot drift from real ones.
    """
    parsed = parse_params(**{"dataset_path": str(GAIA_TINY), **params})
    # -T exclude / -T answers, applied to the questions as the task applies them
    question_set = None if parsed.question_set.empty else gaia_questions(parsed)[1]
    return GaiaProvenance.of(
        parsed,
        prompt=DEFAULT_INPUT_PROMPT,
        image_id=None,
        sandbox_provider=PROVIDERS[parsed.sandbox],
        question_set=question_set,
    ).as_metadata()


def write_log(
    path: Path,
    samples: Sequence[dict[str, Any]],
    *,
    model: str = MODEL,
    params: dict[str, object] | None = None,
    metadata: dict[str, Any] | None = None,
    task: str = "inspect_gaia/gaia",
    task_version: str = "1.0.0",
    run_id: str = "",
    created: str = "2026-12-03T00:00:00+00:00",
    epochs: int = 1,
    message_limit: int | None = None,
    status: Literal["started", "success", "cancelled", "error"] = "success",
    sandbox: SandboxEnvironmentSpec | None = None,
    solver: str | None = None,
    solver_args: dict[str, Any] | None = None,
    offered_tools: Sequence[str] | None = None,
) -> Path:
    """Write an inspect_gaia log of ``gaia(**params)`` without running anything (for unit tests).

    ``metadata`` replaces the task metadata (a log of another task: ``{}``). Also settable: inspect's
    task id (an eval-retry keeps it), the creation time, epochs, a ``--message-limit``, the
    status, the sandbox spec inspect records, and a solver that replaced the task's agent
    (``solver``, ``solver_args``: what ``inspect eval --solver X -S a=1`` records) with the tools
    each sample's model call offered (``offered_tools``; ``None``: no model call is logged).
    Each sample is a dict: ``id``, ``level`` (written as given), ``target``, ``answer``,
    ``value`` (``C``/``I``), optionally ``epoch``, ``error``, ``limit``, ``input_tokens``,
    ``output_tokens``, ``reasoning_tokens``, ``cache_read``, ``cache_write``, ``cost`` (dollars, as
    inspect records a priced call), ``working_time``, ``contamination`` (the score's flags) and ``metadata`` (more sample metadata:
    ``file_name``, ``annotator_metadata``). ``.json`` paths write inspect's JSON format.
    """
    from inspect_ai.event import Event, ModelEvent
    from inspect_ai.log import (
        EvalConfig,
        EvalDataset,
        EvalError,
        EvalSample,
        EvalSampleLimit,
        EvalSpec,
        write_eval_log,
    )
    from inspect_ai.model import GenerateConfig, ModelOutput, ModelUsage
    from inspect_ai.scorer import Score
    from inspect_ai.tool import ToolInfo, ToolParams

    def model_calls() -> list[Event]:
        if offered_tools is None:
            return []
        tools = [ToolInfo(name=t, description=t, parameters=ToolParams()) for t in offered_tools]
        output = ModelOutput.from_content(model, "")
        config = GenerateConfig()
        return [
            ModelEvent(
                model=model, input=[], tools=tools, tool_choice="auto", config=config, output=output
            )
        ]

    eval_samples = []
    for sample in samples:
        tokens = int(sample.get("input_tokens", 0)), int(sample.get("output_tokens", 0))
        usage = ModelUsage(
            input_tokens=tokens[0],
            output_tokens=tokens[1],
            total_tokens=sum(tokens),
            reasoning_tokens=sample.get("reasoning_tokens"),
            input_tokens_cache_read=sample.get("cache_read"),
            input_tokens_cache_write=sample.get("cache_write"),
            total_cost=sample.get("cost"),
        )
        eval_samples.append(
            EvalSample(
                id=sample["id"],
                epoch=int(sample.get("epoch", 1)),
                input="q",
                target=str(sample["target"]),
                metadata={"level": sample["level"], "file_name": "", **sample.get("metadata", {})},
                output=ModelOutput.from_content(model, str(sample.get("answer", ""))),
                scores={
                    "gaia_scorer": Score(
                        value=sample["value"],
                        answer=sample.get("answer"),
                        metadata={
                            "answer_source": "submit",
                            **(
                                {"contamination": sample["contamination"]}
                                if sample.get("contamination")
                                else {}
                            ),
                        },
                    )
                },
                model_usage={model: usage},
                total_time=float(sample.get("working_time", 1.0)),
                working_time=float(sample.get("working_time", 1.0)),
                error=EvalError(message=sample["error"], traceback="", traceback_ansi="")
                if sample.get("error")
                else None,
                limit=EvalSampleLimit(type=sample["limit"], limit=100)
                if sample.get("limit")
                else None,
                events=model_calls(),
            )
        )
    log = EvalLog(
        status=status,
        eval=EvalSpec(
            created=created,
            task=task,
            task_id=run_id,
            task_version=task_version,
            dataset=EvalDataset(name="gaia-validation"),
            model=model,
            config=EvalConfig(epochs=epochs, message_limit=message_limit),
            metadata={"gaia": gaia_record(**(params or {}))} if metadata is None else metadata,
            sandbox=sandbox,
            solver=solver,
            solver_args=solver_args,
        ),
        samples=eval_samples,
    )
    write_eval_log(log, str(path))
    return path


def dumps(value: Any) -> str:
    """Compact JSON, for building evalscope fixtures in tests."""
    return json.dumps(value, separators=(",", ":"))
