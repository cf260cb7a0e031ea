"""Making the readers' fixtures (``support.real_logs``): the runs, the judge, the stop, the record.

``python -m support.real_logs`` calls ``make``; what is made (the runs, their scenarios, the log
format recorded) is ``support.real_logs``'s, and both modules' sources are the generator's hash.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from support.real_logs import (
    AGENTS,
    COMMAND,
    DATASET,
    DEFAULT,
    FIXTURES,
    HERONS,
    IMAGE,
    JUDGE,
    JUDGE_SAYS,
    LAGOON,
    LOGS,
    MANIFEST,
    MODEL,
    REPO,
    RUNS,
    Run,
    Steps,
    agent_steps,
    generator_sha256,
    log_format,
)


@dataclass
class Maker:
    """The scripted model, the scratch folder the runs log into, and the fixtures made so far."""

    scratch: Path
    out: Path
    set_steps: Callable[[dict[str, Steps]], None]
    made: dict[str, Path]

    def keep(self, name: str, log: Path) -> Path:
        """Copy ``log`` into the fixtures as ``<name>.eval``."""
        target = self.out / f"{name}.eval"
        shutil.copyfile(log, target)
        self.made[name] = target
        return target


def _eval(maker: Maker, run: Run, **extra: Any) -> Path:
    """Run ``gaia(**run.params)`` in this process; the log it wrote (its status checked)."""
    from inspect_ai import eval as inspect_eval

    from inspect_gaia import gaia

    if run.steps:
        maker.set_steps(run.steps)
    (log,) = inspect_eval(
        gaia(dataset_path=DATASET, **run.params, **extra),
        model=MODEL,
        log_dir=str(maker.scratch / run.name),
        display="none",
    )
    if log.status != "success":
        raise SystemExit(f"{run.name}: the run ended {log.status}: {log.error}")
    return Path(log.location)


def _agents(maker: Maker, runs: list[Run]) -> None:
    """The packaged agents, each on its own question, one run after another.

    Each task is made by name inside ``eval``, as ``inspect eval`` makes it: the model is known
    then, so the record has the name the CLI is told (a ``Task`` made before ``eval`` has none).
    """
    from inspect_ai import eval as inspect_eval

    steps = {}
    for run in runs:
        (question, command) = AGENTS[run.params["agent"]]
        steps[question[1]] = agent_steps(run.params["agent"], command)
    maker.set_steps(steps)
    for run in runs:
        (log,) = inspect_eval(
            "inspect_gaia/gaia",
            task_args={"dataset_path": DATASET, **run.params},
            model=MODEL,
            log_dir=str(maker.scratch / "agents"),
            display="none",
        )
        if log.status != "success":
            raise SystemExit(f"{run.name}: the run ended {log.status}: {log.error}")
        maker.keep(run.name, Path(log.location))


def _web(maker: Maker, record: Run, replay: Run) -> None:
    """``web_record=bodies`` on the stand-in internet, then its archive replayed without it."""
    from inspect_ai.log import read_eval_log

    from inspect_gaia.egress.web_record import ARCHIVE_KEY
    from support.answer_pages import MIRROR_HOST, NOTES_HOST, WEATHER_HOST
    from support.standins import standins

    hosts = [MIRROR_HOST, NOTES_HOST, WEATHER_HOST]
    with standins(IMAGE, hosts, label="real-logs") as internet, internet.attaching():
        recorded = _eval(maker, record)
    maker.keep(record.name, recorded)
    first = next(iter(read_eval_log(str(recorded)).samples or []))
    archive_name = str(first.store[ARCHIVE_KEY])
    archive = recorded.parent / archive_name
    for kept in (archive, archive.with_name(f"{archive_name}.sha256")):
        shutil.copyfile(kept, maker.out / kept.name)
    maker.keep(replay.name, _eval(maker, replay, web_replay=str(maker.out / archive_name)))


def _browse(maker: Maker, run: Run) -> None:
    """``-T browser=true``: the agent opens a stand-in page served on the Docker bridge."""
    from support.answer_pages import bridge_address
    from support.web_pages import serve_web

    with serve_web(bridge_address()) as web:
        steps: Steps = [
            {"call": "browser_navigate", "args": {"url": f"http://{web}/wrenfold/"}},
            {"submit": "quillfeather   LAGOON"},
        ]
        maker.set_steps({LAGOON[1]: steps})
        maker.keep(run.name, _eval(maker, run))


def _judge(maker: Maker) -> None:
    """``inspect score`` with the judge scorer on a copy of the default run's log."""
    maker.set_steps({words: [{"say": said}] for words, said in JUDGE_SAYS.items()})
    target = maker.out / "judged.eval"
    target.unlink(missing_ok=True)
    command = [
        *(_inspect(), "score", str(maker.made["default"])),
        *("--scorer", "inspect_gaia/gaia_judge", "-S", f"model={JUDGE}"),
        *("--action", "append", "--output-file", str(target), "--display", "none"),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise SystemExit(f"judged: inspect score failed: {done.stderr[-2000:]}")
    maker.made["judged"] = target


def _cancel(maker: Maker, run: Run, calls: Callable[[], list[str]]) -> None:
    """``inspect eval`` stopped by a Ctrl-C (SIGINT to its group) while the herons' sample runs."""
    from inspect_ai.log import read_eval_log

    blocked = {HERONS[1]: [{"bash": "sleep 600"}, *DEFAULT[HERONS[1]]]}
    maker.set_steps({**{k: v for k, v in DEFAULT.items() if k == LAGOON[1]}, **blocked})
    logs = maker.scratch / run.name
    args = [arg for name, value in run.params.items() for arg in ("-T", f"{name}={value}")]
    command = [
        *(_inspect(), "eval", "inspect_gaia/gaia", "-T", f"dataset_path={DATASET}", *args),
        *("--model", MODEL, "--log-dir", str(logs), "--display", "plain"),
    ]
    output = (maker.scratch / f"{run.name}.out").open("w")  # not a pipe: nothing reads it
    started = subprocess.Popen(
        command,
        stdout=output,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        # a Ctrl-C as a terminal's: under a script's background job (SIGINT ignored, inherited)
        # the run ignored it and ended `success`
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 600
        # the lagoon answered (one call) and the herons' sleep asked for: stop while it runs
        while not ({LAGOON[1], HERONS[1]} <= set(calls())):
            if time.monotonic() > deadline or started.poll() is not None:
                raise SystemExit(f"cancelled: the run never got going: {started.poll()}")
            time.sleep(0.2)
        time.sleep(3)
        os.killpg(started.pid, signal.SIGINT)
        started.wait(timeout=300)
    finally:
        if started.poll() is None:
            os.killpg(started.pid, signal.SIGKILL)
            started.wait()
        output.close()
    (log,) = logs.glob("*.eval")
    status = read_eval_log(str(log), header_only=True).status
    if status != "cancelled":
        raise SystemExit(f"cancelled: the stopped run's log says {status}, not cancelled")
    maker.keep(run.name, log)


def _inspect() -> str:
    return str(Path(sys.executable).parent / "inspect")


@contextmanager
def _scripted() -> Iterator[tuple[Callable[[dict[str, Steps]], None], Callable[[], list[str]]]]:
    from support.scripted_model import Entry, ScriptedModel, serve

    model = ScriptedModel([])

    def play(steps: dict[str, Steps]) -> None:
        model.entries = [Entry(words, each) for words, each in steps.items()]
        model.calls.clear()

    with serve(model) as url:
        os.environ.update(SCRIPTED_BASE_URL=url, SCRIPTED_API_KEY="scripted")
        yield play, lambda: list(model.calls)


def _manifest(made: dict[str, Path], generator: str, seconds: float) -> dict[str, Any]:
    from importlib.metadata import version

    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=REPO
    ).stdout.strip()
    folder = made["default"].parent
    return {
        "command": COMMAND,
        "generator_sha256": generator,
        "log_format": log_format(),
        "inspect_ai": version("inspect_ai"),
        "inspect_gaia": version("inspect_gaia"),
        "commit": commit,
        "seconds": round(seconds),
        "files": {
            path.name: hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(folder.iterdir())
        },
    }


def make(out: Path = FIXTURES) -> dict[str, Any]:
    """Make every fixture, then put them in ``out`` in place of the old ones; the manifest.

    A run that fails stops the generator and leaves the old fixtures as they were.
    """
    started = time.monotonic()
    generator = generator_sha256()  # as it starts: an edit while it runs makes the fixtures stale
    os.chdir(REPO)
    by_name = {run.name: run for run in RUNS}
    with tempfile.TemporaryDirectory() as scratch, _scripted() as (play, calls):
        maker = Maker(Path(scratch), Path(scratch) / LOGS, play, {})
        maker.out.mkdir()
        # a fresh cache: no judge verdict or snapshot of an earlier generation is reused
        os.environ["INSPECT_GAIA_CACHE_DIR"] = str(maker.scratch / "cache")

        def step(name: str) -> None:
            print(f"{name}: {time.monotonic() - started:.0f} s", flush=True)

        for name in ("default", "test"):
            maker.keep(name, _eval(maker, by_name[name]))
            step(name)
        _agents(maker, [run for run in RUNS if run.name.startswith("agent-")])
        step("agents")
        _web(maker, by_name["web-record"], by_name["web-replay"])
        step("web-record, web-replay")
        _browse(maker, by_name["browser"])
        step("browser")
        _judge(maker)
        step("judged")
        _cancel(maker, by_name["cancelled"], calls)
        step("cancelled")
        manifest = _manifest(maker.made, generator, time.monotonic() - started)
        shutil.rmtree(out / LOGS, ignore_errors=True)
        out.mkdir(parents=True, exist_ok=True)
        shutil.copytree(maker.out, out / LOGS)
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest
