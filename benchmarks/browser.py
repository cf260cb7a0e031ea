"""What ``-T browser=true`` costs: the browser's start, a page, memory, 8 browsing samples at once.

    python -m benchmarks.browser [--at-once 8] [--pages 5] [--proxy/--no-proxy]

Runs gaia-web's four questions (``tests/fixtures/gaia-web``) over ``--epochs`` so that ``--at-once``
samples browse together, in-process with the scripted model on 127.0.0.1, on the browser image
(``inspect-gaia image build --offline --browser``). Each sample navigates to ``--pages`` stand-in
pages (``support/web_pages``) and submits; ``docker stats`` is sampled every second meanwhile for
each sandbox's memory and processes. Without the proxy the pages are served on the engine's bridge
address; with it (``--proxy``) by a stand-in container reached only through the run's proxy.

Measured, from the log's tool events: the first navigation of each sample (the browser's start:
the relay copied in, Playwright MCP and Chromium started, one page loaded and read),
every later navigation (a navigate-and-snapshot round trip), tool errors and time-outs, and the
sandbox's peak memory. Prints a Markdown table; the figures are in docs/benchmarks.md ("The
browser"). Hold the shared Docker lock while it runs if the engine is shared.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from inspect_ai import eval as inspect_eval
from inspect_ai.event import ToolEvent
from inspect_ai.log import EvalLog

from inspect_gaia import gaia
from inspect_gaia.image_layout import OFFLINE_BROWSER_TAG
from inspect_gaia.sandboxes.docker.cleanup import OWNER_LABEL, owner
from support.answer_pages import bridge_address
from support.scripted_model import Entry, ScriptedModel, Step, serve
from support.web_pages import serve_web
from support.web_standin import web_standin

MODEL = "openai-api/scripted/bench"
GAIA_WEB = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "gaia-web"
PAGES = ("wrenfold/", "wrenfold/bulletin", "cobblemere/", "brackwater/", "harrowgate/")


def steps(host: str, pages: int) -> list[Step]:
    """Navigate to ``pages`` stand-in pages, read the sandbox's peak memory, submit."""
    visits: list[Step] = [
        {"call": "browser_navigate", "args": {"url": f"http://{host}/{PAGES[i % len(PAGES)]}"}}
        for i in range(pages)
    ]
    return [*visits, {"submit": "done"}]


def run(at_once: int, pages: int, proxy: bool, image: str) -> dict[str, Any]:
    """One run of ``at_once`` browsing samples; its figures."""
    epochs = max(1, -(-at_once // 4))
    with ExitStack() as stack:
        if proxy:
            standin = stack.enter_context(web_standin(image))
            stack.enter_context(standin.attaching())
            entries = [
                Entry(w, steps(f"{site}.example", pages))
                for w, site in zip(
                    ("Wrenfold", "Cobblemere", "Brackwater", "Harrowgate"),
                    ("wrenfold", "cobblemere", "brackwater", "harrowgate"),
                    strict=True,
                )
            ]
            # every page of a sample is on its own site's name; the stand-in serves them all
            entries = [Entry(e.match, [_on_host(s, e.steps[0]) for s in e.steps]) for e in entries]
        else:
            host = stack.enter_context(serve_web(bridge_address()))
            entries = [Entry("", steps(host, pages))]
        model = ScriptedModel(entries)
        url = stack.enter_context(serve(model))
        os.environ.update(SCRIPTED_BASE_URL=url, SCRIPTED_API_KEY="bench")
        logs = stack.enter_context(tempfile.TemporaryDirectory(prefix="gaia-bench-browser-"))
        peaks = stack.enter_context(sampled_memory())
        started = time.monotonic()
        (log,) = inspect_eval(
            gaia(
                dataset_path=str(GAIA_WEB),
                image=image,
                browser=True,
                block_answer_sources=proxy,
            ),
            model=MODEL,
            log_dir=logs,
            display="none",
            epochs=epochs,
            max_samples=at_once,
            limit=min(4, at_once),
        )
        # the log's samples are read from its file: before the folder goes
        result = figures(log, time.monotonic() - started)
    sandboxes = [mb for name, mb in peaks.items() if "egress" not in name]
    result["peak_memory_mb"] = _spread(sandboxes)
    result["peak_pids"] = max(p for _, p in pids.values()) if (pids := _PIDS) else None
    return result


_PIDS: dict[str, tuple[str, int]] = {}


@contextmanager
def sampled_memory(every: float = 1.0) -> Iterator[dict[str, float]]:
    """Each sandbox's peak memory (MB) as ``docker stats`` sees it, sampled while the run lasts.

    Only this process's containers (their owner label); ``_PIDS`` gets their most processes.
    """
    peaks: dict[str, float] = {}
    stop = threading.Event()
    label = f"label={OWNER_LABEL}={owner()}"

    def sample() -> None:
        while not stop.wait(every):
            ids = subprocess.run(
                ["docker", "ps", "-q", "--filter", label], capture_output=True, text=True
            ).stdout.split()
            if not ids:
                continue
            out = subprocess.run(
                [
                    "docker",
                    "stats",
                    "--no-stream",
                    "--format",
                    "{{.Name}} {{.MemUsage}} {{.PIDs}}",
                    *ids,
                ],
                capture_output=True,
                text=True,
            ).stdout
            for line in out.splitlines():
                name, usage, *_, processes = line.split()
                peaks[name] = max(peaks.get(name, 0.0), _mb(usage))
                if processes.isdigit():
                    _PIDS[name] = (name, max(_PIDS.get(name, (name, 0))[1], int(processes)))

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        yield peaks
    finally:
        stop.set()
        thread.join()


def _mb(usage: str) -> float:
    """``185.3MiB`` (docker stats' spelling) in MB (MiB)."""
    units = {"KiB": 1 / 1024, "MiB": 1.0, "GiB": 1024.0, "B": 1 / 2**20}
    for unit, factor in units.items():
        if usage.endswith(unit):
            return float(usage[: -len(unit)]) * factor
    return 0.0


def _on_host(step: Step, first: Step) -> Step:
    """``step`` with its URL's host made the first step's (one site per sample)."""
    if step.get("call") != "browser_navigate":
        return step
    host = first["args"]["url"].split("/")[2]
    path = step["args"]["url"].split("/", 3)[3]
    return {"call": "browser_navigate", "args": {"url": f"http://{host}/{path}"}}


def figures(log: EvalLog, wall: float) -> dict[str, Any]:
    """The start, round trips, errors and peak memory of a run's samples."""
    assert log.samples is not None
    firsts: list[float] = []
    laters: list[float] = []
    errors: list[str] = []
    for sample in log.samples:
        navigations = [
            e
            for e in sample.events
            if isinstance(e, ToolEvent) and e.function == "browser_navigate"
        ]
        times = [(e.completed - e.timestamp).total_seconds() for e in navigations if e.completed]
        firsts += times[:1]
        laters += times[1:]
        errors += [e.error.message[:120] for e in navigations if e.error]
    return {
        "samples": len(log.samples),
        "wall_s": round(wall, 1),
        "first_navigate_s": _spread(firsts),
        "navigate_snapshot_median_s": round(statistics.median(laters), 3) if laters else None,
        "navigate_snapshot_p90_s": round(_quantile(laters, 0.9), 3) if laters else None,
        "tool_errors": errors,
    }


def _spread(values: list[float]) -> str:
    if not values:
        return "—"
    return f"{statistics.median(values):.1f} (min {min(values):.1f}, max {max(values):.1f})"


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    """Run the benchmark and print its table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--at-once", type=int, default=8)
    parser.add_argument("--pages", type=int, default=5)
    parser.add_argument("--image", default=OFFLINE_BROWSER_TAG)
    parser.add_argument("--proxy", action=argparse.BooleanOptionalAction, default=None)
    parser.add_argument("--one", action="store_true", help="One run (--at-once, --proxy): JSON.")
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run(args.at_once, args.pages, bool(args.proxy), args.image)))
        return
    modes = [args.proxy] if args.proxy is not None else [False, True]
    rows = []
    for proxy in modes:
        for at_once in sorted({1, args.at_once}):
            # each run in a process of its own: a run leaves nothing behind for the next
            one = subprocess.run(
                [sys.executable, "-m", "benchmarks.browser", "--one", "--at-once", str(at_once)]
                + ["--pages", str(args.pages), "--image", args.image]
                + ["--proxy" if proxy else "--no-proxy"],
                capture_output=True,
                text=True,
                check=True,
            )
            result = json.loads(one.stdout.strip().splitlines()[-1])
            rows.append({"proxy": proxy, "at_once": at_once, **result})
            print(rows[-1], flush=True)
    print()
    print(
        "| proxy | at once | first navigate (s) | navigate+snapshot median / p90 (s) | "
        "peak memory per sandbox (MB) | tool errors | wall (s) |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for row in rows:
        print(
            f"| {'yes' if row['proxy'] else 'no'} | {row['at_once']} | {row['first_navigate_s']} "
            f"| {row['navigate_snapshot_median_s']} / {row['navigate_snapshot_p90_s']} "
            f"| {row['peak_memory_mb']} | {row['peak_pids']} | {len(row['tool_errors'])} "
            f"| {row['wall_s']} |"
        )


if __name__ == "__main__":
    main()
