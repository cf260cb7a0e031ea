"""Mixed work, one sample at a time: inspect_gaia beside evalscope, and where its time goes.

Each sample has an attachment of one of GAIA's common types in turn (``fixture.MIXED_KINDS``: text,
CSV, JSON, Python, a zip-based spreadsheet, 1-2 MB images and audio) and runs six commands on it
before answering (``fixture.mixed_model``: 7 model replies, no model latency), so the numbers are
harness overhead on several commands and one file copy per sample. Both harnesses run a 1-sample
process and an N-sample one at a time, alternating, ``--repeat`` rounds after a warm-up; the
marginal cost per sample is (wall of N - wall of 1) / (N - 1). evalscope runs in its fastest
configuration. Then inspect_gaia's last N-sample log is taken apart per sample, from its events:
sandbox start, file copies, commands, model calls, and the rest.

    python -m benchmarks.mixed --out docs/benchmarks-mixed.md  # 16 samples, 3 rounds, ~10 min
    python -m benchmarks.mixed --no-evalscope --samples 4 --repeat 1
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

from benchmarks.compare import INSPECT
from benchmarks.fixture import MIXED_KINDS, mixed_model, write_dataset
from benchmarks.harnesses import DEFAULT_EVALSCOPE_VENV, EvalscopeHarness, InspectHarness
from benchmarks.load import EVALSCOPE
from benchmarks.measure import Measured
from benchmarks.report import machine, public_command
from benchmarks.run import freeze_source
from benchmarks.spans import breakdown
from benchmarks.stream_server import serve


def parse_args() -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument(
        "--image",
        default=os.environ.get("INSPECT_GAIA_TEST_IMAGE", "inspect-gaia/sandbox:bookworm"),
    )
    parser.add_argument("--samples", type=int, default=16)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-evalscope", action="store_true")
    parser.add_argument("--evalscope-venv", default=str(DEFAULT_EVALSCOPE_VENV))
    parser.add_argument("--workdir", help="keep every run's logs here")
    parser.add_argument("--out", help="also write the report (Markdown) here")
    return parser.parse_args()


def main() -> None:
    """Run both harnesses, alternating, and print the tables."""
    args = parse_args()
    started, begin = datetime.now().strftime("%Y-%m-%d %H:%M"), time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="gaia-mixed-") as temp:
        work = Path(args.workdir or temp)
        work.mkdir(parents=True, exist_ok=True)
        code = freeze_source(work)
        n = args.samples
        dataset = write_dataset(work / "GAIA", n, n, MIXED_KINDS)
        runs: dict[tuple[str, int], list[Measured]] = {}
        last_log = work / "none"
        with serve(mixed_model(n)) as url:
            ours = InspectHarness(args.image, url)
            theirs = None
            if not args.no_evalscope:
                venv = Path(args.evalscope_venv)
                theirs = EvalscopeHarness(venv, args.image, url, work / "hf-datasets")
                if not theirs.installed():
                    theirs.install()
            for r in range(-1, args.repeat):  # round -1 warms both up and is not counted
                for size in (1, n):
                    out = work / f"inspect-{size}-{r}"
                    measured = ours.run(dataset, size, 1, out)
                    if r >= 0:
                        runs.setdefault((INSPECT, size), []).append(measured)
                        last_log = out
                    if theirs is not None:
                        out = work / f"evalscope-{size}-{r}"
                        measured = theirs.run(dataset, size, 1, out, fast=True)
                        if r >= 0:
                            runs.setdefault((EVALSCOPE, size), []).append(measured)
                    print(f"mixed: round {r}, {size} sample(s) done", flush=True)
        lines = [
            "# Benchmarks: mixed work, one sample at a time",
            "",
            f"Machine: {machine()}; image `{args.image}`; inspect_gaia at {code}; started "
            f"{started}, {(time.perf_counter() - begin) / 60:.0f} min in all.",
            f"Command: `{public_command(sys.argv[1:], 'benchmarks.mixed')}`",
            "",
            f"{n} samples, one at a time, medians of {args.repeat} rounds after a warm-up, the "
            "harnesses alternating; what each sample does is in `benchmarks/mixed.py`.",
            "",
            *harness_table(runs, n),
            "",
            *breakdown(last_log),
        ]
        print("\n" + "\n".join(lines))
        if args.out:
            Path(args.out).write_text("\n".join(lines) + "\n")


def harness_table(runs: dict[tuple[str, int], list[Measured]], n: int) -> Iterator[str]:
    """Markdown: per harness, walls, marginal cost per sample, CPU; evalscope ÷ inspect_gaia."""
    yield "| harness | 1-sample process s | N samples s | marginal per sample s | CPU s (N) |"
    yield "| --- | --- | --- | --- | --- |"
    marginal = {}
    for harness in (INSPECT, EVALSCOPE):
        if (harness, n) not in runs:
            continue
        one = statistics.median(m.wall for m in runs[(harness, 1)])
        many = statistics.median(m.wall for m in runs[(harness, n)])
        cpu = statistics.median(m.cpu for m in runs[(harness, n)])
        marginal[harness] = (many - one) / (n - 1)
        yield f"| {harness} | {one:.2f} | {many:.2f} | {marginal[harness]:.3f} | {cpu:.1f} |"
    if len(marginal) == 2:
        ratio = marginal[EVALSCOPE] / marginal[INSPECT]
        yield ""
        yield f"evalscope ÷ inspect_gaia, marginal per sample: {ratio:.2f}"


if __name__ == "__main__":
    main()
