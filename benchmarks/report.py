"""The benchmark report: Markdown tables, in order of what matters, and one PNG of three plots."""

from __future__ import annotations

import os
import platform
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from benchmarks.compare import (
    DEFAULT,
    FASTEST,
    INSPECT,
    Comparison,
    compare_table,
    runs_table,
    summary,
)
from benchmarks.load import LoadRow, LoadSpec, load_ratios, load_spans, load_table


@dataclass
class Report:
    """Everything one run measured."""

    machine: str
    command: str
    started: str
    minutes: float
    image: str
    code: str
    """Which inspect_gaia was measured (the commit, and whether src/ had changes)."""
    skipped: str
    """Why evalscope was not run, or ``""``."""
    floors: dict[str, float]
    comparison: Comparison
    compose: tuple[float, float] | None
    """inspect's compose sandbox: wall / N and marginal per sample, or None if not run."""
    throughput: dict[int, float]
    with_latency: dict[int, float]
    latency: float
    throughput_samples: int
    load: LoadSpec
    load_rows: list[LoadRow]
    log_bytes_per_sample: float
    loads: dict[str, float]


PATH_OPTIONS = ("--evalscope-venv", "--workdir", "--out")
"""The options (run.py's, agents.py's) whose values are paths of the machine that ran it."""


def machine() -> str:
    """The machine a report was measured on, in one line."""
    return f"{platform.machine()}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}"


def public_command(argv: Sequence[str], module: str = "benchmarks.run") -> str:
    """The command line as the report prints it, each path option's value a placeholder.

    The report is published in docs/; the directories of the machine that measured it are no
    reader's business and no reader's path. ``--out /x`` and ``--out=/x`` become ``--out <out>``.
    """
    words = ["python", "-m", module]
    rest = iter(argv)
    for word in rest:
        name, equals, _ = word.partition("=")
        if name not in PATH_OPTIONS:
            words.append(word)
            continue
        placeholder = f"<{name.removeprefix('--')}>"
        if equals:
            words.append(f"{name}={placeholder}")
        else:
            words.append(name)
            if next(rest, None) is not None:
                words.append(placeholder)
    return " ".join(words)


def _scaling(rates: dict[int, float]) -> list[str]:
    first = next(iter(rates.values()))
    rows = ["| sandboxes at once | samples/min | × 1 at a time |", "| --- | --- | --- |"]
    rows += [f"| {level} | {value:.1f} | {value / first:.2f} |" for level, value in rates.items()]
    return rows


def _load_summary(report: Report) -> str:
    spec = report.load
    by_harness: dict[str, list[str]] = {}
    for row in report.load_rows:
        ratio = f"{row.measured.wall / row.ideal:.2f} at {row.at_once}"
        by_harness.setdefault(row.harness, []).append(ratio)
    return (
        f"- GAIA-size load ({spec.questions} samples × {spec.varied(spec.bash_turns + 1)} replies "
        f"of {spec.latency:g} s), wall ÷ ideal by samples at once: "
        + "; ".join(f"{harness} {', '.join(ratios)}" for harness, ratios in by_harness.items())
        + "."
    )


def markdown(report: Report) -> list[str]:
    """The whole report."""
    comparison = report.comparison
    n, c = comparison.samples, comparison.at_once
    spec = report.load
    full_hours = spec.questions * (spec.bash_turns + 1) * spec.latency / 3600
    base = report.floors["docker run --rm"]
    lines = [
        "# Benchmarks",
        "",
        f"Machine: {report.machine}; image `{report.image}`; inspect_gaia at {report.code}; "
        f"started {report.started}, {report.minutes:.0f} min in all.",
        f"Command: `{report.command}`",
        "",
        "All numbers are from this one run on a shared machine (other work ran beside it), so "
        "absolute seconds are noisy; the ratios are the claim, and each ratio's two sides were "
        "measured in the same run, alternating. Every timing is a whole process (`inspect eval "
        "inspect_gaia/gaia ...`, or evalscope's driver), start-up included; CPU and peak RSS are "
        "that process's own (`os.wait4`).",
        "",
        "**Summary** (÷ inspect_gaia above 1: evalscope takes longer):",
        "",
        *summary(comparison),
        _load_summary(report),
    ]
    if report.skipped:
        lines += ["", f"**{report.skipped}**"]
    lines += [
        "",
        "## inspect_gaia and evalscope, same run",
        "",
        f"Each sample: one bash command reading its attachment, then submit (2 model calls, no "
        f"model latency). N = {n}; medians of {len(comparison.runs[INSPECT][comparison.cases[0]])}"
        " runs per case, the harnesses alternating. evalscope 1.14.1 (`evalscope_driver.py`, "
        "streamed replies) in its default configuration (the image's own command, which ignores "
        "SIGTERM, so each container stop waits the full 10 s) and its fastest (a PID-1 command "
        "that exits on SIGTERM). Marginal per sample = (wall of N − wall of 1) / (N − 1). "
        "÷ inspect_gaia above 1 means evalscope takes longer.",
        "",
        *compare_table(comparison),
        "",
        "Every run:",
        "",
        *runs_table(comparison),
        "",
        "## GAIA-size load",
        "",
        f"{spec.questions} invented questions; each sample makes "
        f"{spec.varied(spec.bash_turns)} bash calls (`wc -l` of its attachment, a one-line "
        f"output) then submits: {spec.varied(spec.bash_turns + 1)} model replies, each after "
        f"{spec.latency:g} s. Ideal = model time alone = "
        + (
            f"ceil(samples / at once) × {spec.bash_turns + 1} replies × {spec.latency:g} s "
            "(samples go in full rounds"
            if not spec.spread
            else "each sample's replies × the reply latency, the samples given in order each to "
            "the first free slot (varied lengths: `--load-spread`"
        )
        + "; container start and stop, the commands, process start-up and "
        f"logging are all overhead). At 1 at once only the first {spec.serial} questions run "
        f"(all {spec.questions} would take {full_hours:.1f} h"
        " per harness); the ideal counts those. evalscope runs in its fastest configuration "
        "(its default adds 10 s per container stop, see above). inspect_gaia runs with inspect's "
        "default model connections (adaptive, from 20); from "
        f"{spec.options_from} at once it also runs with inspect's log options for large runs "
        "(`--no-log-realtime`: no realtime sample buffer, the log unchanged; `--log-buffer 100`: "
        "finished samples written to the .eval file 100 at a time instead of inspect's default "
        "of 10 for this many samples)"
        + (
            f"; at {max(spec.levels)} at once it also runs split into {spec.processes} "
            "processes (`-T ids=` shards, started together, the samples at once shared among "
            "them; wall until the last ends, CPU and peak RSS summed)"
            if spec.processes > 1
            else ""
        )
        + ". Containers at peak: the run's own "
        "sandboxes alive at once (polled every 0.5 s); MB per sandbox: usage less inactive page "
        "cache from its cgroup (as `docker stats`), mean over the sandboxes at that peak, and "
        "the largest seen; engine CPU: dockerd + containerd over the run; containers' CPU: "
        "all containers' (cgroup v1's cpuacct; 0 where absent); machine busy: the share of all "
        "the machine's CPU time that was not idle during the run; output: the .eval log "
        "(inspect_gaia) or the work directory (evalscope).",
        "",
        *load_table(spec, report.load_rows),
        "",
        *load_ratios(report.load_rows),
        *load_spans(spec, report.load_rows),
        "",
        "## Per sample, one at a time",
        "",
        f"Same fixture as the comparison, `--max-samples 1`, N={n}; gaia-docker's rows are the "
        "comparison's inspect_gaia medians; marginal = (wall of N − wall of 1) / (N − 1).",
        "",
        "| what | seconds | × docker run |",
        "| --- | --- | --- |",
    ]
    for name, value in report.floors.items():
        lines.append(f"| floor: {name} | {value:.2f} | {value / base:.1f} |")
    many = comparison.wall(INSPECT, comparison.cases[1]) / n
    per_sample = {"gaia-docker": (many, comparison.marginal(INSPECT, 1))}
    if report.compose is not None:
        per_sample["inspect compose"] = report.compose
    for label, (mean, marginal) in per_sample.items():
        lines.append(f"| {label}: wall / N | {mean:.2f} | {mean / base:.1f} |")
        lines.append(f"| {label}: marginal per sample | {marginal:.2f} | {marginal / base:.1f} |")
    lines += [
        "",
        "## Throughput",
        "",
        f"gaia-docker, no model latency, N={report.throughput_samples}; `--max-samples` = the "
        "number of sandboxes at once.",
        "",
        *_scaling(report.throughput),
        "",
        f"With {report.latency:g} s of model latency per reply (two replies per sample):",
        "",
        *_scaling(report.with_latency),
        "",
        "## Resources and dataset",
        "",
        "| what | value |",
        "| --- | --- |",
        f"| peak RSS of `inspect eval`, {n} samples {c} at once | "
        f"{comparison.median(INSPECT, comparison.cases[2], lambda m: m.rss_mb):.0f} MB |",
        f"| log size per sample (one bash call) | {report.log_bytes_per_sample / 1024:.1f} KiB |",
        f"| dataset load, cold (165 questions, 38 attachments) | {report.loads['cold']:.2f} s |",
        f"| dataset load, warm | {report.loads['warm']:.2f} s |",
        "",
    ]
    return lines


def plot(report: Report, path: Path) -> bool:
    """Three panels: marginal cost per sample, the GAIA-size load, gaia-docker throughput."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    comparison = report.comparison
    fig, (bars, load, scale) = plt.subplots(1, 3, figsize=(14, 4))
    names = [name for name in (INSPECT, DEFAULT, FASTEST) if name in comparison.runs]
    width = 0.8 / len(names)
    for i, name in enumerate(names):
        values = [comparison.marginal(name, 1), comparison.marginal(name, comparison.at_once)]
        bars.bar([x + i * width for x in (0, 1)], values, width, label=name)
    bars.set_xticks([x + width * (len(names) - 1) / 2 for x in (0, 1)])
    bars.set_xticklabels(["1 at a time", f"{comparison.at_once} at a time"])
    bars.set_yscale("log")
    bars.set_ylabel("marginal seconds per sample (log)")
    bars.set_title(f"Harness cost per sample, N={comparison.samples}")
    bars.legend(fontsize="small")
    for harness in dict.fromkeys(row.harness for row in report.load_rows):
        rows = [row for row in report.load_rows if row.harness == harness]
        x = [row.at_once for row in rows]
        load.plot(x, [row.measured.wall / row.ideal for row in rows], marker="o", label=harness)
    load.axhline(1.0, color="grey", linestyle=":", label="ideal (model time only)")
    load.set_xscale("log", base=2)
    load.set_ylim(bottom=0)
    load.set_xlabel("samples at once")
    load.set_ylabel("wall ÷ ideal")
    load.set_title(
        f"GAIA-size load ({report.load.questions} samples, {report.load.latency:g} s/reply)"
    )
    load.legend(fontsize="small")
    for rates, label in (
        (report.throughput, "no model latency"),
        (report.with_latency, f"{report.latency:g} s per model reply"),
    ):
        scale.plot(list(rates), list(rates.values()), marker="o", label=label)
    scale.set_xscale("log", base=2)
    scale.set_ylim(bottom=0)
    scale.set_xlabel("sandboxes at once (--max-samples)")
    scale.set_ylabel("samples / min")
    cpus = f", {os.cpu_count()} CPUs" if os.cpu_count() else ""
    scale.set_title(f"gaia-docker throughput{cpus}")
    scale.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    return True


KEPT_SECTIONS = ("## Detection",)
"""Sections of the report that other scripts write (``benchmarks.detection``): kept as they are."""


def kept_sections(text: str) -> list[str]:
    """The lines of ``KEPT_SECTIONS`` in a report's ``text``, each to the next heading or plot."""
    lines, kept, keeping = text.splitlines(), [], False
    for line in lines:
        if line.startswith(("## ", "![")):
            keeping = line in KEPT_SECTIONS
            if keeping:
                kept.append("")
        if keeping:
            kept.append(line)
    return kept


def write_report(report: Report, out: Path) -> None:
    """The Markdown report at ``out``, and its plot beside it (``.png``).

    Sections another script wrote into ``out`` (``KEPT_SECTIONS``) stay, after the plot.
    """
    out.parent.mkdir(parents=True, exist_ok=True)
    kept = kept_sections(out.read_text()) if out.exists() else []
    lines = markdown(report)
    if plot(report, out.with_suffix(".png")):
        lines.append(f"![benchmarks]({out.with_suffix('.png').name})")
    out.write_text("\n".join(lines + kept).rstrip("\n") + "\n")
