"""The benchmark script runs end to end in --quick mode and writes its tables (timings unchecked).

The report is published in docs/: it never carries a path of the machine that measured it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchmarks.measure import run_measured_together
from benchmarks.report import public_command
from tests.helpers import REPO


def benchmark(module: str, *args: str, timeout: int = 600) -> subprocess.CompletedProcess[str]:
    """``python -m benchmarks.MODULE ARGS`` from the repository root; it must succeed."""
    run = subprocess.run(
        [sys.executable, "-m", f"benchmarks.{module}", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=REPO,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    return run


def test_report_command_has_placeholders_for_paths() -> None:
    command = public_command(
        ["--evalscope-venv", "/home/me/venv", "--workdir=/tmp/w", "--quick", "--out", "/x/b.md"]
    )
    assert command == (
        "python -m benchmarks.run --evalscope-venv <evalscope-venv> --workdir=<workdir> --quick "
        "--out <out>"
    )
    assert public_command(["--image", "inspect-gaia/sandbox:bookworm"]).endswith(
        "--image inspect-gaia/sandbox:bookworm"
    )


@pytest.mark.docker
@pytest.mark.slow
def test_quick_benchmark_writes_the_report(sandbox_image: str, tmp_path: Path) -> None:
    out = tmp_path / "bench.md"
    # --no-evalscope: never installs evalscope (a 1.2 GB venv) from the test suite
    benchmark("run", "--quick", "--no-evalscope", "--image", sandbox_image, "--out", str(out))
    text = out.read_text()
    assert str(tmp_path) not in text and "--out <out>" in text
    for heading in (
        "## inspect_gaia and evalscope, same run",
        "## GAIA-size load",
        "## Per sample, one at a time",
        "## Throughput",
        "## Resources and dataset",
    ):
        assert heading in text
    assert "evalscope was not run (`--no-evalscope`)" in text
    rows = [line for line in text.splitlines() if line.startswith("| ")]
    # The comparison table: every measure, inspect_gaia's column only.
    for measure in (
        "1-sample run (whole process), s",
        "3-sample run, 1 at a time, s",
        "marginal per sample, 1 at a time, s",
        "CPU of the process",
        "peak RSS of the process",
    ):
        assert any(r.startswith(f"| {measure}") for r in rows), measure
    # The GAIA-size load table: its header and one inspect_gaia row with a container seen.
    assert any(r.startswith("| harness | at once | samples | ideal s | wall s |") for r in rows)
    load = [r.split("|")[1:-1] for r in rows if r.startswith("| inspect_gaia | 2 |")]
    assert len(load) == 1 and int(load[0][8]) >= 1, "containers at peak"
    assert 0 < float(load[0][12].strip(" %")) <= 100, "machine busy"
    assert int(load[0][14]) == 0, "scored wrong"
    # The top level again, split into two processes of one sample at once: both shards' samples.
    split = [r.split("|")[1:-1] for r in rows if r.startswith("| inspect_gaia, ")]
    split = [r for r in split if r[0].strip().endswith(", 2 processes")]
    assert len(split) == 1 and int(split[0][2]) == 4 and int(split[0][14]) == 0
    assert "Where a sample's time went, inspect_gaia, --no-log-realtime, 2 processes" in text
    # Where a sample's time went at the top level, from the log: 2 bash turns + submit per sample.
    assert "Where a sample's time went, inspect_gaia, 2 at once" in text
    spans = {r.split("|")[1].strip(): r.split("|")[2:-1] for r in rows}
    assert float(spans["model calls"][1]) == 3 and float(spans["commands"][1]) == 2
    assert 0 < float(spans["container start"][0]) < float(spans["sample, all"][0])
    assert any(r.startswith("| floor: docker run --rm |") for r in rows)
    assert any(r.startswith("| floor: compose up --wait + down |") for r in rows)
    for provider in ("gaia-docker", "inspect compose"):
        assert any(r.startswith(f"| {provider}: marginal per sample |") for r in rows)
        assert any(r.startswith(f"| {provider}: wall / N |") for r in rows)
    throughput = [r for r in rows if r.split("|")[1].strip() in {"1", "2"}]
    assert len(throughput) == 4, "concurrency 1 and 2, without and with model latency"
    assert any("dataset load, cold" in r for r in rows) and any("peak RSS" in r for r in rows)
    assert out.with_suffix(".png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.docker
def test_view_file_memory_measures_a_run(sandbox_image: str) -> None:
    run = benchmark(
        "view_file_memory",
        "--image",
        sandbox_image,
        "--samples",
        "2",
        "--size-mib",
        "6",
        timeout=300,
    )
    assert "2 samples at once, each viewing a 6 MiB image: peak RSS " in run.stdout
    assert run.stdout.rstrip().endswith("MB (/usr/bin/time -v)")


@pytest.mark.docker
def test_the_web_record_benchmark_measures_the_four_proxies(
    sandbox_image: str, egress_image: str
) -> None:
    """Each proxy once; the recorder's own checks (every request recorded, the large body kept
    whole with ``--bodies``) hold, or it fails. ``--before HEAD``: the programs as committed."""
    args = ("--image", sandbox_image, "--requests", "5", "--mib", "4", "--rounds", "1")
    more = ("--bodies", "--before", "HEAD", "--in-flight", "3")
    run = benchmark("web_record", *args, *more, timeout=400)
    rows = [line for line in run.stdout.splitlines() if line.startswith("| ")]
    assert rows[0] == (
        "| measure (1 rounds, median) | without the recorder | recording, at HEAD | recording | "
        "keeping bodies | now / before |"
    )
    assert [row.split(" | ")[0] for row in rows[2:]] == [
        "| per request, median, ms",
        "| per request, p90, ms",
        "| 4 MiB body, MiB/s (docker exec included)",
        "| proxy memory at rest, MiB",
        "| proxy memory at its highest during the 4 MiB body, MiB",
    ]


@pytest.mark.docker
@pytest.mark.slow
def test_the_agents_benchmark_measures_an_agent_beside_the_default_one(
    sandbox_image: str, tmp_path: Path
) -> None:
    """Issue #53: quick mode (1 round, 1 and 2 at once), the default agent and Codex CLI, with
    each sandbox's CPU split by whose process used it; every sample answered right or it fails."""
    image = os.environ.get("INSPECT_GAIA_TEST_AGENTS_IMAGE", "inspect-gaia/sandbox:bookworm-agents")
    out = tmp_path / "agents.md"
    args = ("--quick", "--agents", "basic,codex_cli", "--processes", "--image", image)
    benchmark("agents", *args, "--out", str(out), timeout=600)
    report = out.read_text()
    assert report.startswith("## Agents at GAIA's scale")
    rows = {line.split(" | ")[0]: line for line in report.splitlines() if line.startswith("| ")}
    assert {"| basic", "| codex_cli"} <= set(rows)
    split = [line.split(" | ") for line in report.splitlines() if line.startswith("| codex_cli | ")]
    by_process = [cells for cells in split if cells[1] in {"1", "2"}]
    assert len(by_process) == 2, "the CPU table has a row per level"
    agent_cpu, tools_cpu = float(by_process[0][2]), float(by_process[0][3])
    assert agent_cpu > 0 and tools_cpu > 0, "Codex's processes and inspect's tools both ran"


@pytest.mark.docker
def test_mixed_work_runs_every_attachment_type_and_takes_a_sample_apart(
    sandbox_image: str, tmp_path: Path
) -> None:
    # Every run is checked by its harness: 8 samples, each attachment type once, all scored 1.
    out = tmp_path / "mixed.md"
    run = benchmark(
        "mixed", "--no-evalscope", "--image", sandbox_image, "--samples", "8", "--repeat", "1",
        "--out", str(out),
    )  # fmt: skip
    report = out.read_text()
    assert report.startswith("# Benchmarks: mixed work") and report.strip() in run.stdout
    assert "Command: `python -m benchmarks.mixed --no-evalscope" in report
    assert "--out <out>`" in report and str(tmp_path) not in report
    rows = {
        line.split("|")[1].strip(): line.split("|")[2:-1]
        for line in run.stdout.splitlines()
        if line.startswith("| ") and not line.startswith("| ---")
    }
    assert float(rows["inspect_gaia"][2]) > 0  # marginal per sample
    assert "evalscope (fastest)" not in rows
    # Six commands, one file copy and seven model calls per sample, from the log's events.
    assert [rows[k][1].strip() for k in ("commands", "file copies", "model calls")] == [
        "6",
        "1",
        "7",
    ]
    assert float(rows["sample, all"][0]) > float(rows["commands"][0]) > 0


def test_processes_run_together_are_measured_as_one_run(tmp_path: Path) -> None:
    # Together, not one after the other: each process waits for the other's mark before it works,
    # which only processes running at once can do (one run alone exits 1 after 60 s); no bound on
    # the wall clock, which a loaded machine stretches.
    def command(mine: str, theirs: str) -> list[str]:
        program = (
            "import pathlib, sys, time\n"
            f"pathlib.Path({str(tmp_path / mine)!r}).touch()\n"
            "deadline = time.monotonic() + 60\n"
            f"while not pathlib.Path({str(tmp_path / theirs)!r}).exists():\n"
            "    if time.monotonic() > deadline: sys.exit(1)\n"
            "    time.sleep(0.01)\n"
            "end = time.process_time() + 0.3\n"
            "while time.process_time() < end: pass\n"
        )
        return [sys.executable, "-c", program]

    start = time.monotonic()
    measured = run_measured_together(
        [command("a", "b"), command("b", "a")],
        {"PATH": "/usr/bin:/bin"},
        [tmp_path / "a.log", tmp_path / "b.log"],
    )
    took = time.monotonic() - start
    assert 0.3 <= measured.wall <= took, "the wall of the run, not of one process"
    assert measured.cpu >= 0.6, "both processes' CPU"
    assert 0 < measured.machine_busy <= 1


def test_a_process_that_fails_to_start_leaves_none_of_the_others_running(tmp_path: Path) -> None:
    marker = tmp_path / "left-running"
    first = [sys.executable, "-c", f"import time; time.sleep(1.5); open({str(marker)!r}, 'w')"]
    with pytest.raises(FileNotFoundError):
        run_measured_together(
            [first, [str(tmp_path / "no-such-program")]], {}, [tmp_path / "a", tmp_path / "b"]
        )
    time.sleep(2)
    assert not marker.exists(), "the first process was killed"


def test_a_failed_process_fails_the_run_with_its_log(tmp_path: Path) -> None:
    commands = [["true"], ["sh", "-c", "echo broken; exit 3"]]
    with pytest.raises(RuntimeError, match=r"exited 3; see .*b\.log:\nbroken"):
        run_measured_together(
            commands, {"PATH": "/usr/bin:/bin"}, [tmp_path / "a.log", tmp_path / "b.log"]
        )


def test_the_ideal_of_a_spread_load_gives_each_sample_the_first_free_slot() -> None:
    from benchmarks.fixture import bash_turns_of
    from benchmarks.load import LoadSpec, makespan

    assert makespan([42.0] * 165, 64) == 3 * 42.0  # load.py's ceil(165 / 64) rounds
    assert makespan([3.0, 1.0, 1.0, 1.0], 2) == 3.0  # the short ones share the second slot
    turns = [bash_turns_of(i, 20, 10) for i in range(21)]
    assert sorted(turns) == list(range(10, 31)), "each offset once per 21 questions"
    assert turns != sorted(turns), "in a mixed order"
    assert [bash_turns_of(i, 20, 0) for i in range(5)] == [20] * 5
    assert LoadSpec().ideal(64) == 126.0 and LoadSpec().ideal(1) == 4 * 42.0
    assert LoadSpec(spread=10).ideal(64) > 126.0, "a long sample started late ends last"


@pytest.mark.timeout(120)
def test_the_detection_benchmark_reads_each_crafted_megabyte() -> None:
    from benchmarks.egress_stream import MIB, detection, texts

    assert all(len(text) >= MIB for text in texts().values())
    figures = detection(repeats=1)
    assert len(figures) == len(texts()) and all(seconds >= 0 for seconds in figures.values())


def test_detection_benchmark_writes_its_section_and_the_report_keeps_it(tmp_path: Path) -> None:
    from benchmarks.detection import SECTION
    from benchmarks.detection import main as detection
    from benchmarks.report import kept_sections

    out = tmp_path / "benchmarks.md"
    out.write_text("# Benchmarks\n\n## Throughput\n\n| a |\n\n![benchmarks](benchmarks.png)\n")
    for _ in range(2):  # a second run replaces the section, never adds one
        detection(["--mib", "0.01", "--repeats", "1", "--out", str(out)])
    text = out.read_text()
    assert text.count(SECTION) == 1 and text.startswith("# Benchmarks\n\n## Throughput")
    assert "| result: web page, a link every 100 characters |" in text
    assert str(tmp_path) not in text and "--out <out>" in text
    kept = kept_sections(text)
    assert kept[1] == SECTION and "## Throughput" not in kept and "![benchmarks]" not in kept[-1]
