"""The benchmark script runs end to end in --quick mode and writes its tables (timings unchecked)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO


@pytest.mark.docker
@pytest.mark.slow
def test_quick_benchmark_writes_the_report(sandbox_image: str, tmp_path: Path) -> None:
    out = tmp_path / "bench.md"
    run = subprocess.run(
        [
            sys.executable,
            str(REPO / "benchmarks" / "run.py"),
            "--quick",
            "--image",
            sandbox_image,
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    text = out.read_text()
    for heading in ("## Per sample, one at a time", "## Throughput", "## Resources and dataset"):
        assert heading in text
    rows = [line for line in text.splitlines() if line.startswith("| ")]
    assert any(r.startswith("| floor: docker run --rm |") for r in rows)
    assert any(r.startswith("| floor: compose up --wait + down |") for r in rows)
    for provider in ("gaia-docker", "inspect compose"):
        assert any(r.startswith(f"| {provider}: marginal per sample |") for r in rows)
        assert any(r.startswith(f"| {provider}: wall / N |") for r in rows)
    throughput = [r for r in rows if r.split("|")[1].strip() in {"1", "2"}]
    assert len(throughput) == 4, "concurrency 1 and 2, without and with model latency"
    assert any("dataset load, cold" in r for r in rows) and any("peak memory" in r for r in rows)
    assert out.with_suffix(".png").read_bytes()[:4] == b"\x89PNG"
