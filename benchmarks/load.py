"""A GAIA-size load: 165 questions, each 20 bash turns then a submission, 2 s per model reply.

Both harnesses run the same load at each number of samples at once (inspect_gaia's
``--max-samples``, evalscope's ``eval_batch_size``), one after the other. The ideal is the model's
time alone:

    ideal = ceil(samples / at_once) x (bash_turns + 1) x latency

i.e. every sample makes ``bash_turns + 1`` model calls, each taking ``latency`` seconds, and
samples go through in full rounds of ``at_once`` (with ``spread``, samples of varied lengths, each
given in order to the first free slot: ``makespan``); everything else (process start-up, dataset
load, containers, the commands, logging) is harness overhead: ``wall / ideal - 1``. At one sample
at a time the full set would take hours, so that level runs only the first ``serial`` questions
(its ideal counts those).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from pathlib import Path

from benchmarks.compare import INSPECT
from benchmarks.fixture import bash_turns_of, scripted_model
from benchmarks.harnesses import EvalscopeHarness, InspectHarness
from benchmarks.measure import Measured
from benchmarks.spans import breakdown
from benchmarks.stream_server import Counts, serve

EVALSCOPE = "evalscope (fastest)"


@dataclass(frozen=True)
class LoadSpec:
    """The load's shape."""

    questions: int = 165
    bash_turns: int = 20
    latency: float = 2.0
    levels: tuple[int, ...] = (1, 16, 32, 64)
    serial: int = 4
    """Questions run at one sample at a time (the full set would take hours)."""
    log_options: tuple[tuple[str, ...], ...] = (
        ("--no-log-realtime",),
        ("--no-log-realtime", "--log-buffer", "100"),
    )
    """inspect's log options for large runs; inspect_gaia runs each too, from ``options_from``."""
    options_from: int = 32
    """The lowest level at which the log options run (below it the run waits on the model)."""
    processes: int = 2
    """At the top level inspect_gaia also runs split into this many processes (``-T ids=``
    shards, at once, the level shared among them), with the first log options; 1: not."""

    spread: int = 0
    """Each sample's bash turns vary by up to this much either way (``fixture.bash_turns_of``),
    so that samples started together do not end together; 0: every sample alike."""

    def samples(self, at_once: int) -> int:
        """How many questions run at this level."""
        return min(self.questions, self.serial) if at_once == 1 else self.questions

    def varied(self, count: int) -> str:
        """``count`` as the report says it: "20", or "20 ± 10" with a spread."""
        return f"{count}" + (f" ± {self.spread}" if self.spread else "")

    def replies(self, samples: int) -> list[int]:
        """Model replies of each of the first ``samples`` questions."""
        return [bash_turns_of(i, self.bash_turns, self.spread) + 1 for i in range(samples)]

    def ideal(self, at_once: int) -> float:
        """Model time alone: the samples in order, each to the first free of ``at_once`` slots."""
        return makespan([n * self.latency for n in self.replies(self.samples(at_once))], at_once)


def makespan(durations: list[float], at_once: int) -> float:
    """When the last of these samples ends, given in order each to the first slot free.

    With equal durations: ``ceil(samples / at_once) x duration``.
    """
    slots = [0.0] * min(at_once, len(durations))
    for duration in durations:
        heapq.heapreplace(slots, slots[0] + duration)
    return max(slots, default=0.0)


@dataclass(frozen=True)
class LoadRow:
    """One harness at one level."""

    harness: str
    at_once: int
    samples: int
    ideal: float
    measured: Measured
    spans: tuple[str, ...] = ()
    """inspect_gaia at the top level: where a sample's time went (``spans.breakdown``)."""


def run_load(
    spec: LoadSpec,
    dataset: Path,
    image: str,
    workdir: Path,
    evalscope: EvalscopeHarness | None,
) -> list[LoadRow]:
    """The load at each level: inspect_gaia, then evalscope (fastest configuration) if given."""
    model = scripted_model(spec.questions, spec.bash_turns, spec.latency, spec.spread)
    counts = Counts()
    rows = []
    with serve(model, counts) as url:
        inspect_gaia = InspectHarness(image, url)
        if evalscope is not None:
            evalscope = evalscope.serving(url)
        for level in spec.levels:
            samples = spec.samples(level)
            ideal = spec.ideal(level)
            top = level == max(spec.levels)
            out = workdir / f"load-inspect-{level}"
            print(f"load: inspect_gaia, {samples} samples, {level} at once", flush=True)
            # Not strict: a sample scored wrong under load is a finding, counted in the table.
            measured = inspect_gaia.run(dataset, samples, level, out, poll=True, strict=False)
            rows.append(LoadRow(INSPECT, level, samples, ideal, measured, spans(out, top)))
            for number, extra in enumerate(spec.log_options if level >= spec.options_from else ()):
                options = " ".join(extra)
                print(
                    f"load: inspect_gaia {options}, {samples} samples, {level} at once", flush=True
                )
                out = workdir / f"load-inspect-options{number}-{level}"
                measured = inspect_gaia.run(
                    dataset, samples, level, out, poll=True, extra=extra, strict=False
                )
                harness = f"{INSPECT}, {options}"
                rows.append(LoadRow(harness, level, samples, ideal, measured, spans(out, top)))
            if top and spec.processes > 1:
                rows.append(run_split(spec, inspect_gaia, dataset, level, workdir))
            if evalscope is not None:
                out = workdir / f"load-evalscope-{level}"
                print(f"load: evalscope, {samples} samples, {level} at once", flush=True)
                measured = evalscope.run(
                    dataset, samples, level, out, fast=True, poll=True, strict=False
                )
                rows.append(LoadRow(EVALSCOPE, level, samples, ideal, measured))
    replies = sum(sum(spec.replies(row.samples)) for row in rows)
    if counts.requests != replies:
        raise RuntimeError(f"load: {counts.requests} model calls, expected {replies}")
    return rows


def run_split(
    spec: LoadSpec, inspect_gaia: InspectHarness, dataset: Path, level: int, workdir: Path
) -> LoadRow:
    """inspect_gaia at ``level`` split into ``spec.processes`` id shards run at once."""
    extra = spec.log_options[0] if spec.log_options else ()
    samples = spec.samples(level)
    harness = ", ".join([INSPECT, *filter(None, [" ".join(extra)]), f"{spec.processes} processes"])
    print(f"load: {harness}, {samples} samples, {level} at once", flush=True)
    out = workdir / f"load-inspect-processes-{level}"
    measured = inspect_gaia.run(
        dataset, samples, level, out, poll=True, extra=extra, strict=False,
        processes=spec.processes,
    )  # fmt: skip
    return LoadRow(harness, level, samples, spec.ideal(level), measured, spans(out, True))


def spans(out: Path, wanted: bool) -> tuple[str, ...]:
    """Where a sample's time went in the inspect_gaia log in ``out``, if ``wanted``."""
    return tuple(breakdown(out)) if wanted else ()


def load_table(spec: LoadSpec, rows: list[LoadRow]) -> list[str]:
    """Markdown: one row per harness and level."""
    lines = [
        "| harness | at once | samples | ideal s | wall s | wall ÷ ideal | CPU s | peak RSS MB "
        "| containers at peak | MB per sandbox (mean at peak / max) | engine CPU s "
        "| containers' CPU s | machine busy | output MB | scored wrong |",
        "|" + " --- |" * 15,
    ]
    for row in rows:
        m = row.measured
        lines.append(
            f"| {row.harness} | {row.at_once} | {row.samples} | {row.ideal:.0f} | {m.wall:.1f} "
            f"| {m.wall / row.ideal:.2f} | {m.cpu:.1f} | {m.rss_mb:.0f} | {m.containers} "
            f"| {m.sandbox_mb:.1f} / {m.sandbox_max_mb:.1f} | {m.engine_cpu:.1f} "
            f"| {m.containers_cpu:.1f} | {m.machine_busy:.0%} "
            f"| {m.output_bytes / 1024 / 1024:.2f} | {m.wrong} |"
        )
    return lines


def load_spans(spec: LoadSpec, rows: list[LoadRow]) -> list[str]:
    """Markdown: where a sample's time went, for each inspect_gaia row that has it."""
    lines = []
    for row in rows:
        if row.spans:
            lines += [
                "",
                f"Where a sample's time went, {row.harness}, {row.at_once} at once (medians over "
                f"its {row.samples} samples, from the log's events; the model calls hold the "
                f"{spec.varied(spec.bash_turns + 1)} replies of {spec.latency:g} s):",
                *row.spans,
            ]
    return lines


def load_ratios(rows: list[LoadRow]) -> list[str]:
    """Markdown: evalscope's wall, CPU and memory over each inspect_gaia row's, per level."""
    theirs = {row.at_once: row.measured for row in rows if row.harness == EVALSCOPE}
    if not theirs:
        return []
    lines = [
        "| samples at once | evalscope ÷ | wall | CPU s | peak RSS |",
        "| --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        m = theirs.get(row.at_once)
        if row.harness == EVALSCOPE or m is None:
            continue
        o = row.measured
        ratios = (m.wall / o.wall, m.cpu / o.cpu, m.rss_mb / o.rss_mb)
        lines.append(
            f"| {row.at_once} at once | {row.harness} | "
            + " | ".join(f"{r:.2f}" for r in ratios)
            + " |"
        )
    return lines
