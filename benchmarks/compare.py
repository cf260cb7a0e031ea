"""inspect_gaia against evalscope's GAIA in the same run, on the same fixture and scripted model.

Each sample runs one bash command reading its attachment, then submits (two model calls, no
model latency), so the numbers are harness overhead. For each case (1 sample; N samples one at a
time; N samples ``at_once`` at a time) the harnesses run one after the other (inspect_gaia,
evalscope default, evalscope fastest), ``repeat`` times, and the medians are compared. evalscope's
default container command is the image's own (``tail -f /dev/null`` here, which ignores SIGTERM,
so each container stop waits 10 s for the kill); its fastest is the PID-1 trap command
(``evalscope_driver.FAST_COMMAND``).

Marginal cost per sample = (wall of N - wall of 1) / (N - 1), at each concurrency.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.fixture import scripted_model
from benchmarks.harnesses import EvalscopeHarness, InspectHarness
from benchmarks.measure import Measured
from benchmarks.stream_server import Counts, serve

INSPECT = "inspect_gaia"
DEFAULT = "evalscope default"
FASTEST = "evalscope fastest"


@dataclass(frozen=True)
class Case:
    """A number of samples at a number at once."""

    samples: int
    at_once: int


@dataclass
class Comparison:
    """Every run of every harness, by case; medians on demand."""

    samples: int
    at_once: int
    runs: dict[str, dict[Case, list[Measured]]] = field(default_factory=dict)

    @property
    def cases(self) -> list[Case]:
        """1 sample; N one at a time; N ``at_once`` at a time."""
        return [Case(1, 1), Case(self.samples, 1), Case(self.samples, self.at_once)]

    def wall(self, harness: str, case: Case) -> float:
        """Median wall seconds."""
        return statistics.median(m.wall for m in self.runs[harness][case])

    def marginal(self, harness: str, at_once: int) -> float:
        """(wall of N - wall of 1) / (N - 1) at ``at_once``."""
        many = self.wall(harness, Case(self.samples, at_once))
        return (many - self.wall(harness, Case(1, 1))) / (self.samples - 1)

    def median(self, harness: str, case: Case, what: Callable[[Measured], float]) -> float:
        """Median of any measure."""
        return statistics.median(what(m) for m in self.runs[harness][case])


def run_compare(
    dataset: Path,
    image: str,
    workdir: Path,
    samples: int,
    at_once: int,
    repeat: int,
    evalscope: EvalscopeHarness | None,
    warmup: bool = True,
) -> Comparison:
    """Run every case ``repeat`` times, the harnesses alternating within each case."""
    comparison = Comparison(samples, at_once)
    counts = Counts()
    with serve(scripted_model(samples, bash_turns=1), counts) as url:
        ours = InspectHarness(image, url)
        runners: dict[str, Callable[[Case, Path], Measured]] = {
            INSPECT: lambda case, out: ours.run(dataset, case.samples, case.at_once, out),
        }
        if evalscope is not None:
            theirs = evalscope.serving(url)
            runners[DEFAULT] = lambda case, out: theirs.run(
                dataset, case.samples, case.at_once, out, fast=False
            )
            runners[FASTEST] = lambda case, out: theirs.run(
                dataset, case.samples, case.at_once, out, fast=True
            )
        if warmup:  # imports into the page cache, the image, evalscope's Arrow cache
            for name, run in runners.items():
                if name != DEFAULT:
                    run(Case(1, 1), workdir / f"warmup-{name.replace(' ', '-')}")
        for i in range(repeat):
            for case in comparison.cases:
                for name, run in runners.items():
                    label = f"{name.replace(' ', '-')}-n{case.samples}-c{case.at_once}-r{i}"
                    measured = run(case, workdir / label)
                    print(f"compare: {label}: {measured.wall:.2f} s", flush=True)
                    comparison.runs.setdefault(name, {}).setdefault(case, []).append(measured)
    return comparison


def _ratio(value: float, base: float) -> str:
    # A marginal cost can come out at or below zero when noise exceeds it: no ratio then.
    return f"{value / base:.2f}" if base > 0 and value > 0 else "–"


def compare_table(comparison: Comparison) -> list[str]:
    """Markdown: each measure for each harness, and evalscope's over inspect_gaia's."""
    n, c = comparison.samples, comparison.at_once
    names = [name for name in (INSPECT, DEFAULT, FASTEST) if name in comparison.runs]
    header = "| measure | inspect_gaia |"
    for name in names[1:]:
        header += f" {name} | ÷ inspect_gaia |"
    lines = [header, "| --- " * (1 + 1 + 2 * (len(names) - 1)) + "|"]
    rows: list[tuple[str, Callable[[str], float], str]] = [
        ("1-sample run (whole process), s", lambda h: comparison.wall(h, Case(1, 1)), ".2f"),
        (f"{n}-sample run, 1 at a time, s", lambda h: comparison.wall(h, Case(n, 1)), ".2f"),
        (f"{n}-sample run, {c} at a time, s", lambda h: comparison.wall(h, Case(n, c)), ".2f"),
        ("marginal per sample, 1 at a time, s", lambda h: comparison.marginal(h, 1), ".2f"),
        (f"marginal per sample, {c} at a time, s", lambda h: comparison.marginal(h, c), ".2f"),
        (
            f"CPU of the process, {n} samples {c} at a time, s",
            lambda h: comparison.median(h, Case(n, c), lambda m: m.cpu),
            ".1f",
        ),
        (
            f"peak RSS of the process, {n} samples {c} at a time, MB",
            lambda h: comparison.median(h, Case(n, c), lambda m: m.rss_mb),
            ".0f",
        ),
    ]
    for label, value, spec in rows:
        base = value(INSPECT)
        line = f"| {label} | {base:{spec}} |"
        for name in names[1:]:
            line += f" {value(name):{spec}} | {_ratio(value(name), base)} |"
        lines.append(line)
    return lines


def runs_table(comparison: Comparison) -> list[str]:
    """Markdown: every run's wall seconds, in the order run (to see the spread)."""
    lines = ["| harness | samples | at once | wall s, each run |", "| --- | --- | --- | --- |"]
    for name, cases in comparison.runs.items():
        for case, runs in cases.items():
            walls = ", ".join(f"{m.wall:.2f}" for m in runs)
            lines.append(f"| {name} | {case.samples} | {case.at_once} | {walls} |")
    return lines


def summary(comparison: Comparison) -> list[str]:
    """Markdown bullets: each evalscope configuration's wall over inspect_gaia's, per case."""
    if DEFAULT not in comparison.runs:
        return [
            f"- evalscope was not run: inspect_gaia alone, a 1-sample process "
            f"{comparison.wall(INSPECT, Case(1, 1)):.2f} s, "
            f"{comparison.marginal(INSPECT, 1):.2f} s per further sample one at a time."
        ]
    n, c = comparison.samples, comparison.at_once
    bullets = []
    for name in (DEFAULT, FASTEST):
        ratios = [
            (
                "1-sample process",
                comparison.wall(name, Case(1, 1)),
                comparison.wall(INSPECT, Case(1, 1)),
            ),
            (
                f"{n} samples one at a time",
                comparison.wall(name, Case(n, 1)),
                comparison.wall(INSPECT, Case(n, 1)),
            ),
            (
                f"{n} samples {c} at once",
                comparison.wall(name, Case(n, c)),
                comparison.wall(INSPECT, Case(n, c)),
            ),
            (
                "marginal per sample one at a time",
                comparison.marginal(name, 1),
                comparison.marginal(INSPECT, 1),
            ),
        ]
        parts = [f"{label} **{_ratio(theirs, ours)}**" for label, theirs, ours in ratios]
        bullets.append(f"- {name} ÷ inspect_gaia, wall: " + "; ".join(parts) + ".")
    return bullets
