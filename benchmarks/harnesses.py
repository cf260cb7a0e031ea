"""The two harnesses as whole processes: ``inspect eval inspect_gaia/gaia`` and evalscope's GAIA.

Each run is one subprocess, measured by ``measure.run_measured``, and checked afterwards: every
sample ran and scored 1.0 (the scripted model always answers right), so a harness that failed
samples quickly cannot look fast.

evalscope lives in its own venv (``--evalscope-venv``), created when missing with
``python -m venv`` and ``pip install 'evalscope[sandbox]==1.14.1' 'ms-enclave[docker]==0.0.8'``
(about 2 minutes and 1.2 GB; no torch). Only the installed package is called, through
``evalscope_driver.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from benchmarks.fixture import task_id
from benchmarks.measure import ContainerPoll, Measured, run_measured, run_measured_together

HERE = Path(__file__).resolve().parent
MODEL = "openai-api/scripted/bench"
EVALSCOPE_REQUIREMENTS = ("evalscope[sandbox]==1.14.1", "ms-enclave[docker]==0.0.8")
DEFAULT_EVALSCOPE_VENV = Path.home() / ".cache" / "inspect_gaia" / "bench" / "evalscope-venv"
OWNER_LABEL = "inspect_gaia.owner"


def _inspect_owned(container: Mapping[str, Any], pids: frozenset[int]) -> bool:
    # gaia-docker's owner label is <host>/<boot id>/<pid namespace>/<pid>/<start time>: only
    # this run's sandboxes count, not those of another eval on the same engine.
    owner = str((container.get("Labels") or {}).get(OWNER_LABEL, "")).split("/")
    return len(owner) > 3 and owner[3] in {str(pid) for pid in pids}


def _evalscope_owned(container: Mapping[str, Any], pids: frozenset[int]) -> bool:
    return any(name.startswith("/sandbox-") for name in container.get("Names") or [])


def inspect_poll() -> ContainerPoll:
    """Polls gaia-docker's containers (label ``inspect_gaia.sandbox``) of one run."""
    return ContainerPoll({"label": ["inspect_gaia.sandbox"]}, _inspect_owned)


def evalscope_poll() -> ContainerPoll:
    """Polls evalscope's containers (named ``sandbox-<id>``, no label) made during one run."""
    return ContainerPoll({"name": ["sandbox-"]}, _evalscope_owned)


def _tree_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


@dataclass
class InspectHarness:
    """``inspect eval inspect_gaia/gaia`` on the synthetic snapshot, with the scripted model."""

    image: str
    model_url: str

    def run(
        self,
        dataset: Path,
        samples: int,
        concurrency: int,
        out: Path,
        sandbox: str = "docker",
        poll: bool = False,
        extra: Sequence[str] = (),
        prefix: Sequence[str] = (),
        strict: bool = True,
        processes: int = 1,
    ) -> Measured:
        """One ``inspect eval`` process over the first ``samples`` questions; checked.

        ``extra`` are more ``inspect eval`` options; ``prefix`` runs the command under another
        (a profiler: its CPU and memory then count too). Not ``strict``: samples scored wrong
        are counted (``Measured.wrong``) instead of failing the run. ``processes`` above 1 splits
        the questions into that many ``-T ids=`` shards (question ``i`` in shard ``i % processes``)
        run at once, ``concurrency / processes`` samples at once each, measured as one run
        (``run_measured_together``); each shard's log in ``out/shard-K``.
        """
        if processes == 1:
            shards = [(out, ["--limit", str(samples)], samples)]
        else:
            shards = []
            for k in range(processes):
                ids = [task_id(i) for i in range(k, samples, processes)]
                shards.append((out / f"shard-{k}", ["-T", "ids=" + ",".join(ids)], len(ids)))
        commands = []
        for log_dir, select, _ in shards:
            log_dir.mkdir(parents=True, exist_ok=True)
            commands.append(
                [
                    *prefix,
                    *self._command(dataset, sandbox, max(1, concurrency // processes), log_dir),
                    *select,
                    *extra,
                ]
            )
        env = {**os.environ, "SCRIPTED_BASE_URL": self.model_url, "SCRIPTED_API_KEY": "bench"}
        measured = run_measured_together(
            commands,
            env,
            [log_dir / "run.log" for log_dir, _, _ in shards],
            inspect_poll() if poll else None,
        )
        for log_dir, _, count in shards:
            (log,) = log_dir.glob("*.eval")
            measured.output_bytes += log.stat().st_size
            measured.wrong += _check_inspect_log(log, count, strict)
        return measured

    def _command(self, dataset: Path, sandbox: str, concurrency: int, out: Path) -> list[str]:
        """``inspect eval`` of the task on ``dataset``, ``concurrency`` samples at once."""
        command = [
            str(Path(sys.executable).parent / "inspect"),
            "eval",
            "inspect_gaia/gaia",
            "-T",
            f"dataset_path={dataset}",
            "-T",
            f"image={self.image}",
            "-T",
            f"sandbox={sandbox}",
            "--model",
            MODEL,
            "--max-samples",
            str(concurrency),
            "--log-dir",
            str(out),
            "--display",
            "none",
        ]
        if sandbox == "compose":
            # inspect's compose sandbox has its own default limit (2 x CPUs); raised to match.
            command += ["--max-sandboxes", str(concurrency)]
        return command


def _check_inspect_log(path: Path, samples: int, strict: bool) -> int:
    """Every sample ran; how many were scored wrong (an error when ``strict``)."""
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(path), header_only=True)
    if log.status != "success" or log.results is None:
        raise RuntimeError(f"{path}: status {log.status}: {log.error}")
    accuracy = log.results.scores[0].metrics["accuracy"].value
    if log.results.completed_samples != samples or (strict and accuracy != 1.0):
        raise RuntimeError(
            f"{path}: {log.results.completed_samples}/{samples} samples, accuracy {accuracy}"
        )
    return round(samples * (1 - accuracy))


@dataclass
class EvalscopeHarness:
    """evalscope 1.14.1's GAIA (its own venv) on the same snapshot and scripted model."""

    venv: Path
    image: str
    model_url: str
    cache: Path
    """``HF_DATASETS_CACHE`` for evalscope's dataset loads (its Arrow cache)."""

    def serving(self, model_url: str) -> EvalscopeHarness:
        """The same harness, pointed at another scripted model."""
        return replace(self, model_url=model_url)

    @property
    def python(self) -> Path:
        """The venv's interpreter."""
        return self.venv / "bin" / "python"

    def installed(self) -> bool:
        """Whether the venv has evalscope (checked by importing nothing: by the dist-info)."""
        return self.python.exists() and any(
            self.venv.glob("lib/python*/site-packages/evalscope-1.14.1.dist-info")
        )

    def install(self) -> None:
        """Create the venv and install evalscope into it (about 2 minutes, 1.2 GB)."""
        print(f"installing evalscope into {self.venv} ...", flush=True)
        self.venv.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "venv", str(self.venv)], check=True)
        pip = [str(self.python), "-m", "pip", "install", "--quiet"]
        subprocess.run([*pip, *EVALSCOPE_REQUIREMENTS], check=True)

    def run(
        self,
        dataset: Path,
        samples: int,
        batch_size: int,
        out: Path,
        fast: bool,
        poll: bool = False,
        strict: bool = True,
    ) -> Measured:
        """One evalscope process over the first ``samples`` questions; checked.

        Not ``strict``: samples scored wrong are counted instead of failing the run.
        """
        out.mkdir(parents=True, exist_ok=True)
        work = out / "work"
        command = [
            str(self.python),
            str(HERE / "evalscope_driver.py"),
            "--dataset",
            str(dataset),
            "--model-url",
            self.model_url,
            "--samples",
            str(samples),
            "--batch-size",
            str(batch_size),
            "--image",
            self.image,
            "--work-dir",
            str(work),
        ]
        if fast:
            command.append("--fast")
        env = {
            key: value
            for key, value in os.environ.items()
            if key not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")
        }
        env["HF_DATASETS_CACHE"] = str(self.cache)
        measured = run_measured(command, env, out / "run.log", evalscope_poll() if poll else None)
        measured.output_bytes = _tree_bytes(work)
        measured.wrong = _check_evalscope_reviews(work, samples, strict)
        return measured


def _check_evalscope_reviews(work: Path, samples: int, strict: bool) -> int:
    """Every sample was scored; how many wrong (an error when ``strict``)."""
    scores = [
        json.loads(line)["sample_score"]["score"]["value"]["acc"]
        for path in work.glob("reviews/*/gaia_*.jsonl")
        for line in path.read_text().splitlines()
        if line.strip()
    ]
    wrong = sum(1 for score in scores if score != 1.0)
    if len(scores) != samples or (strict and wrong):
        raise RuntimeError(f"{work}: expected {samples} samples scored 1.0, got {scores}")
    return wrong
