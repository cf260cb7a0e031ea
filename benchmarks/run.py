"""Benchmarks of inspect_gaia: against evalscope's GAIA, at GAIA size, and per sample.

Every harness run is a whole process (``inspect eval inspect_gaia/gaia ...``, or evalscope's
driver in its own venv), driven by a scripted OpenAI-compatible model on 127.0.0.1, on a synthetic
GAIA snapshot both harnesses read. In one run it measures:

* inspect_gaia against evalscope 1.14.1 (default and fastest container command), alternating:
  a 1-sample run, an N-sample run one at a time and ``--compare-at-once`` at a time, the marginal
  cost per sample, CPU and peak memory (``compare.py``);
* a GAIA-size load, 165 questions x (20 bash turns + a submission), 2 s per model reply, at 1,
  16, 32 and 64 samples at once, for both harnesses: wall against the model-time ideal, CPU, peak
  memory, containers alive at once, memory per sandbox, log size (``load.py``);
* the Docker floor (``docker run --rm``, ``compose up --wait`` + ``down``) beside gaia-docker and
  inspect's compose sandbox, one sample at a time;
* gaia-docker's throughput at 1 to 32 sandboxes at once, without and with model latency;
* the load time of a GAIA-sized dataset.

    python -m benchmarks.run                                  # full run, ~1 h on 2 CPUs
    python -m benchmarks.run --quick --no-evalscope --out /tmp/bench.md    # smoke test, ~2 min

evalscope is installed into ``--evalscope-venv`` when missing (about 2 minutes); ``--quick``
skips it (and says so) when that venv is absent, ``--no-evalscope`` always does. Writes a Markdown
report and a PNG plot beside it (``--out``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from benchmarks.compare import INSPECT, Case, Comparison, run_compare
from benchmarks.fixture import scripted_model, write_dataset
from benchmarks.harnesses import DEFAULT_EVALSCOPE_VENV, EvalscopeHarness, InspectHarness
from benchmarks.load import LoadRow, LoadSpec, run_load
from benchmarks.report import Report, machine, public_command, write_report
from benchmarks.stream_server import serve

REPO = Path(__file__).resolve().parent.parent


def _time(cmd: list[str], repeat: int) -> float:
    walls = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        walls.append(time.perf_counter() - start)
    return statistics.median(walls)


def floor(image: str, repeat: int, workdir: Path) -> dict[str, float]:
    """What Docker alone costs for one sandbox on this machine."""
    import yaml

    from inspect_gaia.sandboxes.spec import gaia_compose

    compose = workdir / "compose.yaml"
    config = gaia_compose(image=image)
    compose.write_text(
        yaml.safe_dump(config.model_dump(mode="json", by_alias=True, exclude_none=True))
    )
    run = _time(["docker", "run", "--rm", image, "true"], repeat)
    walls = []
    for i in range(repeat):
        project = ["docker", "compose", "-p", f"gaia-bench-{os.getpid()}-{i}", "-f", str(compose)]
        start = time.perf_counter()
        subprocess.run([*project, "up", "-d", "--wait"], check=True, capture_output=True)
        subprocess.run([*project, "down", "-t", "1"], check=True, capture_output=True)
        walls.append(time.perf_counter() - start)
    return {"docker run --rm": run, "compose up --wait + down": statistics.median(walls)}


def dataset_load(workdir: Path) -> dict[str, float]:
    """Cold (fresh ``datasets`` cache) and warm load of a GAIA-sized validation split."""
    from inspect_gaia import gaia_dataset

    root = write_dataset(workdir / "gaia-sized", 165, 38)
    os.environ["HF_DATASETS_CACHE"] = str(workdir / "hf-cache")
    start = time.perf_counter()
    assert len(gaia_dataset(dataset_path=str(root))) == 165
    cold = time.perf_counter() - start
    start = time.perf_counter()
    gaia_dataset(dataset_path=str(root))
    return {"cold": cold, "warm": time.perf_counter() - start}


def compose_per_sample(
    dataset: Path, image: str, samples: int, workdir: Path, warmup: bool
) -> tuple[float, float]:
    """Inspect's compose sandbox, one sample at a time: wall / N and marginal per sample."""
    with serve(scripted_model(samples, bash_turns=1)) as url:
        harness = InspectHarness(image, url)
        if warmup:
            harness.run(dataset, 1, 1, workdir / "warmup-compose", sandbox="compose")
        one = harness.run(dataset, 1, 1, workdir / "one-compose", sandbox="compose").wall
        many = harness.run(dataset, samples, 1, workdir / "many-compose", sandbox="compose").wall
    return many / samples, (many - one) / (samples - 1)


def throughput(
    dataset: Path,
    image: str,
    samples: int,
    levels: list[int],
    latency: float,
    workdir: Path,
) -> dict[int, float]:
    """gaia-docker samples/min at each number at once, with ``latency`` s per model reply."""
    rates = {}
    with serve(scripted_model(samples, bash_turns=1, latency=latency)) as url:
        harness = InspectHarness(image, url)
        for level in levels:
            out = workdir / f"throughput-l{latency:g}-c{level}"
            rates[level] = samples / harness.run(dataset, samples, level, out).wall * 60
    return rates


@dataclass(frozen=True)
class Plan:
    """What one invocation runs (``--quick`` shrinks everything)."""

    compare_samples: int
    compare_at_once: int
    repeat: int
    samples: int
    levels: list[int]
    latency_levels: list[int]
    load: LoadSpec
    warmup: bool


def plan(args: argparse.Namespace) -> Plan:
    """The sizes of this run."""
    if args.quick:
        return Plan(
            compare_samples=3,
            compare_at_once=3,
            repeat=1,
            samples=3,
            levels=[1, 2],
            latency_levels=[1, 2],
            load=LoadSpec(
                questions=4,
                bash_turns=2,
                latency=0.5,
                levels=(2,),
                serial=1,
                options_from=2,
                spread=args.load_spread,
            ),
            warmup=False,
        )
    levels = tuple(int(n) for n in args.load_at_once.split(","))
    return Plan(
        compare_samples=args.compare_samples,
        compare_at_once=args.compare_at_once,
        repeat=args.repeat,
        samples=args.samples,
        levels=[int(c) for c in args.concurrency.split(",")],
        latency_levels=[1, 8],
        load=LoadSpec(
            questions=args.load_questions,
            bash_turns=args.load_turns,
            latency=args.load_latency,
            levels=levels,
            serial=args.load_serial,
            options_from=args.load_options_from,
            spread=args.load_spread,
        ),
        warmup=True,
    )


def evalscope_harness(
    args: argparse.Namespace, workdir: Path
) -> tuple[EvalscopeHarness | None, str]:
    """The evalscope harness, installing it when missing; or None and why it was not run."""
    if args.no_evalscope:
        return None, "evalscope was not run (`--no-evalscope`)."
    harness = EvalscopeHarness(Path(args.evalscope_venv), args.image, "", workdir / "hf-datasets")
    if not harness.installed():
        if args.quick:
            # The note goes into the published report: the venv's path stays on this machine.
            note = (
                "evalscope was not run: --quick and no evalscope venv at `--evalscope-venv` "
                "(a full run installs it)."
            )
            print(f"NOTE: {note} ({args.evalscope_venv})", flush=True)
            return None, note
        harness.install()
    return harness, ""


def parse_args() -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument(
        "--image",
        default=os.environ.get("INSPECT_GAIA_TEST_IMAGE", "inspect-gaia/sandbox:bookworm"),
    )
    parser.add_argument("--quick", action="store_true", help="smoke test: tiny sizes, ~2 min")
    parser.add_argument("--no-evalscope", action="store_true", help="skip evalscope entirely")
    parser.add_argument(
        "--evalscope-venv",
        default=str(DEFAULT_EVALSCOPE_VENV),
        help="venv with evalscope 1.14.1 (created and installed when missing)",
    )
    parser.add_argument("--compare-samples", type=int, default=16, help="N of the comparison")
    parser.add_argument("--compare-at-once", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3, help="runs per comparison case")
    parser.add_argument("--samples", type=int, default=32, help="N of the throughput runs")
    parser.add_argument("--concurrency", default="1,2,4,8,16,32", help="throughput levels")
    parser.add_argument(
        "--latency", type=float, default=1.0, help="s per model reply, latency throughput table"
    )
    parser.add_argument("--load-questions", type=int, default=165)
    parser.add_argument("--load-turns", type=int, default=20, help="bash turns per sample")
    parser.add_argument("--load-latency", type=float, default=2.0)
    parser.add_argument("--load-at-once", default="1,16,32,64")
    parser.add_argument(
        "--load-spread",
        type=int,
        default=0,
        help="each sample's bash turns vary by up to this much (0: all alike, as published)",
    )
    parser.add_argument(
        "--load-options-from",
        type=int,
        default=32,
        help="lowest level at which inspect_gaia also runs with the large-run log options",
    )
    parser.add_argument(
        "--load-serial", type=int, default=4, help="questions run at 1 at once (165 take hours)"
    )
    parser.add_argument("--no-compose", action="store_true", help="skip inspect's compose sandbox")
    parser.add_argument("--out", default=str(REPO / "docs" / "benchmarks.md"))
    parser.add_argument(
        "--workdir", help="keep every run's logs here (default: a temporary directory, removed)"
    )
    return parser.parse_args()


def freeze_source(workdir: Path) -> str:
    """Run every harness on a copy of ``src/`` made now, so edits during the run do not count.

    The copy goes first on ``PYTHONPATH`` (before the editable install) for the ``inspect eval``
    subprocesses and on ``sys.path`` here. Returns which code that is: the commit, and whether
    ``src/`` had uncommitted changes.
    """
    snapshot = workdir / "src"
    shutil.copytree(REPO / "src", snapshot, ignore=shutil.ignore_patterns("__pycache__"))
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(snapshot), *filter(None, [os.environ.get("PYTHONPATH")])]
    )
    sys.path.insert(0, str(snapshot))
    git = ["git", "-C", str(REPO)]
    commit = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run([*git, "diff", "--quiet", "HEAD", "--", "src"]).returncode != 0
    return f"commit {commit.stdout.strip() or '?'}" + (
        " plus uncommitted changes in src/" if dirty else ""
    )


def main() -> None:
    """Run the benchmarks and write the report."""
    args = parse_args()
    # A terminated run still stops (and so cleans up after) the harness process it is timing.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    sizes = plan(args)
    started = time.strftime("%Y-%m-%d %H:%M")
    begin = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="gaia-bench-") as temp:
        workdir = Path(args.workdir or temp)
        workdir.mkdir(parents=True, exist_ok=True)
        code = freeze_source(workdir)
        questions = max(sizes.compare_samples, sizes.samples, sizes.load.questions)
        dataset = write_dataset(workdir / "GAIA", questions, questions)
        evalscope, skipped = evalscope_harness(args, workdir)
        floors = floor(args.image, 2 if args.quick else 5, workdir)
        comparison: Comparison = run_compare(
            dataset,
            args.image,
            workdir,
            sizes.compare_samples,
            sizes.compare_at_once,
            sizes.repeat,
            evalscope,
            warmup=sizes.warmup,
        )
        compose = None
        if not args.no_compose:
            compose = compose_per_sample(
                dataset, args.image, sizes.compare_samples, workdir, sizes.warmup
            )
        rates = throughput(dataset, args.image, sizes.samples, sizes.levels, 0.0, workdir)
        with_latency = throughput(
            dataset, args.image, sizes.samples, sizes.latency_levels, args.latency, workdir
        )
        load_rows: list[LoadRow] = run_load(sizes.load, dataset, args.image, workdir, evalscope)
        loads = dataset_load(workdir)
    n = sizes.compare_samples
    many = comparison.runs[INSPECT][Case(n, 1)]
    report = Report(
        machine=machine(),
        command=public_command(sys.argv[1:]),
        started=started,
        minutes=(time.perf_counter() - begin) / 60,
        image=args.image,
        code=code,
        skipped=skipped,
        floors=floors,
        comparison=comparison,
        compose=compose,
        throughput=rates,
        with_latency=with_latency,
        latency=args.latency,
        throughput_samples=sizes.samples,
        load=sizes.load,
        load_rows=load_rows,
        log_bytes_per_sample=statistics.median(m.output_bytes for m in many) / n,
        loads=loads,
    )
    out = Path(args.out)
    write_report(report, out)
    print(out.read_text())


if __name__ == "__main__":
    main()
