"""inspect_gaia's CPU per model turn under the GAIA-size load, comparing variants.

The load of ``load.py`` (each sample: ``--turns`` bash calls of ``wc -l`` on its attachment, then
a submission; ``--latency`` s per model reply) over ``--samples`` questions at ``--at-once``, for
inspect_gaia only. Each variant is some source tree (a git ref's ``src/``, or the working tree)
and some extra ``inspect eval`` options; the variants run one after another, ``--rounds`` times
(alternating, so the machine's other work falls on all of them alike). Per run: wall, wall over
the model-time ideal, the process's CPU seconds (``os.wait4``), CPU per model turn and the engine's
CPU (dockerd + containerd, as ``measure.py`` reads it); then the medians per variant.

    python -m benchmarks.load_cpu --variant base --variant no-realtime::--no-log-realtime
    python -m benchmarks.load_cpu --variant before:HEAD~1 --variant after --rounds 3
    python -m benchmarks.load_cpu --variant base --rounds 1 --py-spy /tmp/profile.json
    python -m benchmarks.load_cpu --variant one --variant two-processes:::2

A variant is ``NAME[:GITREF[:OPTIONS[:PROCESSES]]]``: GITREF empty means the working tree; OPTIONS
are split on spaces; PROCESSES (default 1) splits the questions into that many ``-T ids=`` shards
run at once, ``--at-once / PROCESSES`` samples each, timed until the last ends. ``--py-spy FILE``
runs every run under ``py-spy record --threads --idle`` (FILE gets the variant and round in its
name; the CPU then includes py-spy's sampling, slightly). ``--lock FILE`` holds an flock on FILE
during each run (the Docker engine is shared).

``--spread S`` varies the bash turns per sample by up to S either way (``fixture.bash_turns_of``),
so that samples started together do not end together, as in a real run; the ideal is then the
model time of the samples given, in order, to the first free slot (``load.makespan``).
"""

from __future__ import annotations

import argparse
import fcntl
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.fixture import scripted_model, write_dataset
from benchmarks.harnesses import InspectHarness
from benchmarks.load import LoadSpec
from benchmarks.measure import Measured
from benchmarks.stream_server import Counts, serve

REPO = Path(__file__).resolve().parent.parent


@dataclass
class Variant:
    """A source tree and some ``inspect eval`` options."""

    name: str
    ref: str
    options: list[str]
    processes: int = 1
    runs: list[Measured] = field(default_factory=list)

    @classmethod
    def parse(cls, spec: str) -> Variant:
        """``NAME[:GITREF[:OPTIONS[:PROCESSES]]]``."""
        name, ref, options, processes = (spec.split(":", 3) + ["", "", ""])[:4]
        return cls(name, ref, options.split(), int(processes or 1))


def export_src(ref: str, workdir: Path) -> Path:
    """``src/`` as of ``ref`` (or the working tree's, copied now) under ``workdir``."""
    target = workdir / f"src-{ref or 'worktree'}".replace("/", "_").replace("~", "_")
    if target.exists():
        return target / "src"
    target.mkdir(parents=True)
    if ref:
        archive = subprocess.run(
            ["git", "-C", str(REPO), "archive", ref, "src", "compose.yaml", "values.yaml"],
            check=True,
            capture_output=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    else:
        shutil.copytree(REPO / "src", target / "src", ignore=shutil.ignore_patterns("__pycache__"))
    return target / "src"


@contextmanager
def locked(path: str | None) -> Iterator[None]:
    """Hold an exclusive flock on ``path`` (if given)."""
    if not path:
        yield
        return
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def main() -> None:
    """Run the variants and print each run and the medians."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--variant", action="append", required=True, help="NAME[:REF[:OPTS]]")
    parser.add_argument("--samples", type=int, default=64)
    parser.add_argument("--turns", type=int, default=20, help="bash turns per sample")
    parser.add_argument("--latency", type=float, default=2.0, help="s per model reply")
    parser.add_argument(
        "--spread", type=int, default=0, help="bash turns per sample vary by up to this much"
    )
    parser.add_argument("--at-once", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--image", default="inspect-gaia/sandbox:bookworm")
    parser.add_argument("--py-spy", help="profile every run into this speedscope file")
    parser.add_argument("--lock", help="hold an flock on this file during each run")
    parser.add_argument("--workdir", help="keep logs here (default: a temporary directory)")
    args = parser.parse_args()
    variants = [Variant.parse(spec) for spec in args.variant]
    if args.py_spy and any(v.processes > 1 for v in variants):
        parser.error("--py-spy profiles one process: give it variants of one process")
    # load.py's load at one level; every sample runs at it (serial: even at one at a time).
    load = LoadSpec(
        questions=args.samples,
        bash_turns=args.turns,
        latency=args.latency,
        levels=(args.at_once,),
        serial=args.samples,
        spread=args.spread,
    )
    turns = sum(load.replies(args.samples))
    ideal = load.ideal(args.at_once)
    with tempfile.TemporaryDirectory(prefix="gaia-load-cpu-") as temp:
        workdir = Path(args.workdir or temp)
        dataset = write_dataset(workdir / "GAIA", args.samples, args.samples)
        model = scripted_model(args.samples, args.turns, args.latency, args.spread)
        pythonpath = os.environ.get("PYTHONPATH", "")
        with serve(model, Counts()) as url:
            harness = InspectHarness(args.image, url)
            for round_ in range(args.rounds):
                for variant in variants:
                    src = export_src(variant.ref, workdir)
                    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(src), pythonpath]))
                    prefix: list[str] = []
                    if args.py_spy:
                        stem = Path(args.py_spy)
                        out = stem.with_name(f"{stem.stem}-{variant.name}-{round_}{stem.suffix}")
                        spy = str(Path(sys.executable).parent / "py-spy")
                        prefix = [spy, "record", "--threads", "--nonblocking", "--rate", "25"]
                        prefix += ["--format", "speedscope", "-o", str(out), "--"]
                    with locked(args.lock):
                        measured = harness.run(
                            dataset,
                            args.samples,
                            args.at_once,
                            workdir / f"{variant.name}-{round_}",
                            extra=variant.options,
                            prefix=prefix,
                            processes=variant.processes,
                        )
                    variant.runs.append(measured)
                    print(
                        f"{variant.name}: wall {measured.wall:.1f} s "
                        f"(÷ ideal {measured.wall / ideal:.2f}), CPU {measured.cpu:.1f} s, "
                        f"{measured.cpu / turns * 1000:.1f} ms per turn, "
                        f"engine CPU {measured.engine_cpu:.1f} s, "
                        f"containers CPU {measured.containers_cpu:.1f} s, "
                        f"machine busy {measured.machine_busy:.0%}, "
                        f"peak RSS {measured.rss_mb:.0f} MB",
                        flush=True,
                    )
    print(
        f"\n{args.samples} samples x {load.varied(args.turns + 1)} model turns, "
        f"{args.at_once} at once, "
        f"{args.latency:g} s per reply (ideal {ideal:.0f} s); medians of {args.rounds}:"
    )
    print(
        "| variant | options | wall s | wall ÷ ideal | CPU s | CPU ms per turn | engine CPU s "
        "| containers CPU s | machine busy |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for v in variants:
        wall = statistics.median(m.wall for m in v.runs)
        cpu = statistics.median(m.cpu for m in v.runs)
        engine = statistics.median(m.engine_cpu for m in v.runs)
        inside = statistics.median(m.containers_cpu for m in v.runs)
        busy = statistics.median(m.machine_busy for m in v.runs)
        options = shlex.join(v.options) or "-"
        if v.processes > 1:
            options += f" ({v.processes} processes)"
        print(
            f"| {v.name} | {options} | {wall:.1f} | {wall / ideal:.2f} "
            f"| {cpu:.1f} | {cpu / turns * 1000:.1f} | {engine:.1f} | {inside:.1f} | {busy:.0%} |"
        )
    sys.stdout.flush()


if __name__ == "__main__":
    main()
