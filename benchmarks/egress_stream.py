"""The egress proxy under a large download, and the scorer's URL detection on a large tool result.

    python -m benchmarks.egress_stream --image inspect-gaia/sandbox:bookworm [--mib 1024]
    python -m benchmarks.egress_stream --detect-only

Streaming: a run's proxy (``sandboxes/docker/egress.ensure``, outside any run), the stand-in
"internet" of the tests (``support/standins.py``), and one client container of ``--image`` on the
proxy's internal network, as a sandbox is. The client downloads ``--mib`` MiB from the stand-in
through the proxy with curl, once with a length and once as an endless response it stops reading at
the same size (a ``docker exec`` each, whose ~0.1 s counts in the throughput); meanwhile the proxy's
memory is read from the engine's stats stream (usage less the inactive page cache, as ``docker
stats`` shows it). Reported: throughput, and the proxy's memory at rest and at its highest. Before
the proxy streamed bodies, 500 MB killed it (a 1 GB limit, each body held whole and copied).

Detection: ``egress/urlrules.all_matches`` with the package's list, as the scorer runs it
on each tool result, on 1 MiB texts: a page of prose and links, and three crafted ones (nested
schemes, one long path under ``*final*assignment*``, one long host under ``*final-assignment*``):
the median of ``--repeats`` runs each. The regex globs took 36.6 s on a crafted 16 KB result.
Nothing leaves the host; hold the shared Docker lock while it runs if the engine is shared.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import threading
import time
from typing import Any

from inspect_gaia.answer_sources.sources import load_answer_sources
from inspect_gaia.egress.spec import EgressSpec
from inspect_gaia.egress.urlrules import all_matches
from inspect_gaia.sandboxes.docker import client, egress
from inspect_gaia.sandboxes.docker.cleanup import remove_run, run_state
from support.standins import docker, standins

MIB = 1 << 20


def _memory(stats: dict[str, Any]) -> int:
    memory = stats.get("memory_stats") or {}
    inner = memory.get("stats") or {}
    cache = inner.get("total_inactive_file", inner.get("inactive_file", 0))
    return int(memory.get("usage", 0)) - int(cache)


class PeakMemory:
    """The container's memory, read from the engine's stats stream (about once a second)."""

    def __init__(self, container: str) -> None:
        """Start reading."""
        self.container = container
        self.samples: list[int] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        for stats in client.api().stats(self.container, decode=True, stream=True):
            if _memory(stats) > 0:
                self.samples.append(_memory(stats))
            if self._stop.is_set():
                return

    def stop(self) -> int:
        """The highest reading."""
        self._stop.set()
        self._thread.join(timeout=5)
        return max(self.samples)


def streaming(image: str, mib: int) -> dict[str, float]:
    """Download ``mib`` MiB through a proxy twice (with a length, endless); its memory meanwhile."""
    rules = EgressSpec(load_answer_sources().pairs)
    with standins(image, ["bulk.example"], label="bench-stream") as internet:
        proxy = egress.ensure("bench-stream", rules)
        client = ""
        try:
            docker("network", "connect", internet.network, proxy.proxy)
            env = f"http_proxy=http://{proxy.address}:{egress.PORT}"
            client = docker(
                *("run", "-d", "--network", proxy.network, "-e", env, image, "sleep", "600")
            )
            time.sleep(2)  # the stats stream's first readings
            before = PeakMemory(proxy.proxy)
            time.sleep(3)
            idle = before.stop()
            figures: dict[str, float] = {"proxy memory at rest, MiB": idle / MIB}
            for name, command in (
                ("with a length", f"curl -s -o /dev/null http://bulk.example/bulk/{mib}"),
                # no length, no end: curl's output is cut at the size, as a client that leaves
                (
                    "endless",
                    f"curl -sN http://bulk.example/endless | head -c {mib * MIB} >/dev/null",
                ),
            ):
                peak = PeakMemory(proxy.proxy)
                start = time.perf_counter()
                docker("exec", client, "sh", "-c", command)
                seconds = time.perf_counter() - start
                figures[f"{name}: MiB/s (docker exec included)"] = mib / seconds
                figures[f"{name}: proxy memory at its highest, MiB"] = peak.stop() / MIB
            return figures
        finally:
            if client:
                subprocess.run(["docker", "rm", "-f", client], capture_output=True)
            egress.forget(egress.egress_state())
            remove_run(run_state().run_id)


def texts() -> dict[str, str]:
    """1 MiB tool results: ordinary, and crafted against each kind of rule."""
    prose = (
        "The lighthouse at Pellbrook was built in 1871 (https://en.wikipedia.org/wiki/Lighthouse, "
        "see also example.org/history?page=2 and http://archive.example/a/b/c.html). "
    )
    return {
        "prose and links": (prose * (MIB // len(prose) + 1))[:MIB],
        "nested schemes": ("http://" * (MIB // 7 + 1))[:MIB],
        "one long path, *final*assignment*": "https://huggingface.co/spaces/"
        + "a/final" * (MIB // 7),
        "one long host, *final-assignment*": "https://" + "final-" * (MIB // 6) + ".hf.space/",
    }


def detection(repeats: int) -> dict[str, float]:
    """Seconds ``all_matches`` takes on each 1 MiB text (median of ``repeats``)."""
    rules = load_answer_sources().rules
    figures: dict[str, float] = {}
    for name, text in texts().items():
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            all_matches(rules, text)
            times.append(time.perf_counter() - start)
        figures[f"URL detection, 1 MiB of {name}, s"] = statistics.median(times)
    return figures


def main() -> None:
    """Measure and print a Markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--image", default="inspect-gaia/sandbox:bookworm")
    parser.add_argument("--mib", type=int, default=1024)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--detect-only", action="store_true")
    args = parser.parse_args()
    figures = {} if args.detect_only else streaming(args.image, args.mib)
    figures.update(detection(args.repeats))
    print("| measure | value |\n| --- | --- |")
    for name, value in figures.items():
        print(f"| {name} | {value:.3f} |")


if __name__ == "__main__":
    main()
