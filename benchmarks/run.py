"""Harness overhead of inspect_gaia per sample, and how it scales with parallel sandboxes.

Runs N synthetic GAIA samples (each: one bash command reading its attachment, then submit) through
the real task and Docker sandbox, with a scripted OpenAI-compatible model on 127.0.0.1, and
measures beside them what Docker itself costs on the same machine:

* floor: ``docker run --rm IMAGE true``, and ``docker compose up -d --wait`` + ``down`` of the
  task's own compose file;
* harness: wall time per sample at concurrency 1 and the marginal cost per sample
  ((wall of N - wall of 1) / (N - 1));
* throughput (samples/min) at several ``--max-sandboxes`` values, optionally with model latency;
* peak memory of the process that runs inspect, and log size per sample;
* cold and warm load of a GAIA-sized dataset (165 questions, 38 attachments; synthetic).

    python benchmarks/run.py --image inspect-gaia/sandbox:bookworm            # full run
    python benchmarks/run.py --quick --out /tmp/bench.md                      # smoke test

Writes a Markdown report (and a PNG plot of throughput against concurrency) to --out.
"""

from __future__ import annotations

import argparse
import functools
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from scripted_model import Entry, ScriptedModel, serve  # noqa: E402

MODEL = "openai-api/scripted/bench"


def write_dataset(root: Path, questions: int, attachments: int) -> Path:
    """A synthetic GAIA snapshot: ``questions`` rows, the first ``attachments`` with a .txt file."""
    split = root / "2023" / "validation"
    split.mkdir(parents=True, exist_ok=True)
    rows = []
    for i in range(questions):
        task_id = f"bench-{i:04d}"
        file_name = f"{task_id}.txt" if i < attachments else ""
        if file_name:
            (split / file_name).write_text(f"line for sample {i}\n" * 20)
        rows.append(
            {
                "task_id": task_id,
                "Question": f"Benchmark question {i}: how many lines has the attached file?",
                "Level": str(1 + i % 3),
                "Final answer": "20",
                "file_name": file_name,
                "file_path": f"2023/validation/{file_name}" if file_name else "",
                "Annotator Metadata": {
                    "Steps": "",
                    "Number of steps": "",
                    "How long did this take?": "",
                    "Tools": "",
                    "Number of tools": "",
                },
            }
        )
    pq.write_table(pa.Table.from_pylist(rows), split / "metadata.parquet")
    return root


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

    from inspect_gaia.sandbox import gaia_compose

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


def run_eval(
    dataset: Path,
    image: str,
    samples: int,
    concurrency: int,
    logs: Path,
    sandbox: str = "docker",
) -> tuple[float, int]:
    """Wall seconds and log bytes of one run of ``samples`` samples."""
    from inspect_ai import eval as inspect_eval

    from inspect_gaia import gaia

    ids = [f"bench-{i:04d}" for i in range(samples)]
    start = time.perf_counter()
    (log,) = inspect_eval(
        gaia(dataset_path=str(dataset), image=image, ids=ids, sandbox=sandbox),
        model=MODEL,
        log_dir=str(logs),
        display="none",
        max_samples=concurrency,
        # gaia-docker has one sandbox per running sample, so --max-samples bounds them; inspect's
        # compose sandbox has its own default limit (2 x CPUs), raised here to match.
        max_sandboxes=concurrency if sandbox == "compose" else None,
    )
    wall = time.perf_counter() - start
    assert log.status == "success", log.error
    return wall, Path(str(log.location)).stat().st_size


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


def scaling_table(rates: dict[int, float]) -> list[str]:
    """Markdown rows: samples/min per number of sandboxes, and the ratio to the first."""
    first = next(iter(rates.values()))
    rows = ["", "| sandboxes at once | samples/min | × 1 at a time |", "| --- | --- | --- |"]
    rows += [f"| {level} | {value:.1f} | {value / first:.2f} |" for level, value in rates.items()]
    return rows


def plot(
    throughput: dict[int, float], with_latency: dict[int, float], latency: float, path: Path
) -> bool:
    """Samples/min against sandboxes at once, without and with model latency; False if no plot."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, ax = plt.subplots(figsize=(5.5, 3.4))
    ax.plot(list(throughput), list(throughput.values()), marker="o", label="no model latency")
    ax.plot(
        list(with_latency),
        list(with_latency.values()),
        marker="s",
        label=f"{latency:g} s per model reply",
    )
    ax.set_xscale("log", base=2)
    ax.set_ylim(bottom=0)
    ax.set_xlabel("sandboxes at once (--max-samples)")
    ax.set_ylabel("samples / min")
    ax.set_title("gaia-docker throughput, 2 CPUs" if os.cpu_count() == 2 else "gaia-docker")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return True


def main() -> None:
    """Run the benchmark and write the report."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--image",
        default=os.environ.get("INSPECT_GAIA_TEST_IMAGE", "inspect-gaia/sandbox:bookworm"),
    )
    parser.add_argument("--quick", action="store_true", help="3 samples, concurrency 1 and 2")
    parser.add_argument("--samples", type=int, default=32)
    parser.add_argument("--concurrency", default="1,2,4,8,16,32")
    parser.add_argument(
        "--latency",
        type=float,
        default=1.0,
        help="seconds the model waits per reply in the latency scaling table",
    )
    parser.add_argument(
        "--sandboxes",
        default="docker,compose",
        help="-T sandbox= values to compare (docker = gaia-docker, compose = inspect's compose)",
    )
    parser.add_argument("--out", default=str(REPO / "docs" / "benchmarks.md"))
    args = parser.parse_args()
    samples = 3 if args.quick else args.samples
    levels = [1, 2] if args.quick else [int(c) for c in args.concurrency.split(",")]
    latency_levels = [1, 2] if args.quick else [1, 8]
    kinds = args.sandboxes.split(",")
    repeat = 2 if args.quick else 5

    per_sample: dict[str, tuple[float, float]] = {}
    with tempfile.TemporaryDirectory(prefix="gaia-bench-") as temp:
        workdir = Path(temp)
        dataset = write_dataset(workdir / "data", max(samples, 8), max(samples, 8))
        steps: list[dict[str, object]] = [
            {"bash": "wc -l < /shared_files/$(ls /shared_files)"},
            {"submit_output": True},
        ]
        model = ScriptedModel([Entry("Benchmark question", steps)])
        with serve(model) as url:
            os.environ["SCRIPTED_BASE_URL"] = url
            os.environ["SCRIPTED_API_KEY"] = "bench"
            floors = floor(args.image, repeat, workdir)
            log_bytes = 0
            for kind in kinds:
                run = functools.partial(run_eval, dataset, args.image, sandbox=kind)
                run(1, 1, workdir / f"warmup-{kind}")  # imports, image cache
                one, _ = run(1, 1, workdir / f"one-{kind}")
                many, size = run(samples, 1, workdir / f"many-{kind}")
                per_sample[kind] = (many / samples, (many - one) / (samples - 1))
                log_bytes = log_bytes or size
            default = kinds[0]
            throughput = {}
            for level in levels:
                wall, _ = run_eval(
                    dataset, args.image, samples, level, workdir / f"c{level}", sandbox=default
                )
                throughput[level] = samples / wall * 60
            model.latency = args.latency
            with_latency = {}
            for level in latency_levels:
                wall, _ = run_eval(
                    dataset, args.image, samples, level, workdir / f"l{level}", sandbox=default
                )
                with_latency[level] = samples / wall * 60
        loads = dataset_load(workdir)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    names = {"docker": "gaia-docker", "compose": "inspect compose"}
    lines = [
        "# Benchmarks",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, "
        f"{platform.system()} {platform.release()}; image `{args.image}`; each sample runs one "
        "bash command reading its attachment, then submits.",
        f"Command: `python benchmarks/run.py {' '.join(sys.argv[1:])}`".rstrip(),
    ]
    base = floors["docker run --rm"]
    if "docker" in per_sample:
        fast = per_sample["docker"][1]
        summary = [
            f"gaia-docker costs {fast:.2f} s per sample, {fast / base:.1f}× a bare `docker run`"
        ]
        if "compose" in per_sample:
            summary.append(
                f"{per_sample['compose'][1] / fast:.1f}× less than inspect's compose sandbox"
            )
        lines += [
            "",
            "**Summary.** " + ", ".join(summary) + "; with model latency, "
            f"{latency_levels[-1]} sandboxes at once run "
            f"{with_latency[latency_levels[-1]] / with_latency[latency_levels[0]]:.1f}× as many "
            "samples per minute as one.",
        ]
    lines += [
        "",
        "## Per sample, one at a time",
        "",
        f"Scripted model with no latency, `--max-samples 1`, N={samples}; marginal = "
        "(wall of N - wall of 1) / (N - 1).",
        "",
        "| what | seconds | × docker run |",
        "| --- | --- | --- |",
    ]
    for name, value in floors.items():
        lines.append(f"| floor: {name} | {value:.2f} | {value / base:.1f} |")
    for kind, (mean, marginal) in per_sample.items():
        label = names.get(kind, kind)
        lines.append(f"| {label}: wall / N | {mean:.2f} | {mean / base:.1f} |")
        lines.append(f"| {label}: marginal per sample | {marginal:.2f} | {marginal / base:.1f} |")
    lines += [
        "",
        "## Throughput",
        "",
        f"{names.get(default, default)}, no model latency, N={samples}; `--max-samples` = the "
        "number of sandboxes at once.",
        *scaling_table(throughput),
        "",
        f"With {args.latency:g} s of model latency per reply (two replies per sample):",
        *scaling_table(with_latency),
        "",
        "## Resources and dataset",
        "",
        "| what | value |",
        "| --- | --- |",
        f"| peak memory of the process running inspect | {peak_mb:.0f} MB |",
        f"| log size per sample | {log_bytes / samples / 1024:.1f} KiB |",
        f"| dataset load, cold (165 questions, 38 attachments) | {loads['cold']:.2f} s |",
        f"| dataset load, warm | {loads['warm']:.2f} s |",
        "",
    ]
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines))
    if plot(throughput, with_latency, args.latency, out.with_suffix(".png")):
        with out.open("a") as handle:
            handle.write(f"![throughput]({out.with_suffix('.png').name})\n")
    print(out.read_text())


if __name__ == "__main__":
    main()
