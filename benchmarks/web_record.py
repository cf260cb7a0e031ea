"""What recording every request costs the egress proxy: per request, and in memory on a large body.

    python -m benchmarks.web_record --image inspect-gaia/sandbox:bookworm [--requests N] [--mib M]
        [--before REF] [--in-flight N]

Two proxies, started in turn as a run starts them (``sandboxes/docker/egress.ensure``, outside any
run): today's proxy without the recorder (``mitmdump -s addon.py`` alone, as before #41) and the
proxy as it runs now (``-s addon.py -s recorder.py``, the client named to it as a sample's sandbox
is: ``egress_record.SandboxRecord.start``). ``--before REF`` adds the proxy's programs as they
were at the git commit REF (its addon, recorder and siblings, copied in as the run copies
today's), to compare a change with what it replaced in one run. For each, one client container of
``--image`` on the proxy's internal network, the stand-in "internet" of the tests
(``support/standins.py``): nothing leaves the host.

Measured per proxy, ``--rounds`` times alternating: ``--requests`` small requests in a row (a
19-byte page), each timed by curl (``time_total``: the request through the proxy, not curl's
start), median and 90th percentile; then one ``--mib`` MiB body, its throughput and the proxy's
memory at rest and at its highest (the engine's stats stream, as ``docker stats`` shows it).
``--bodies`` adds a third proxy, keeping every body (``-T web_record=bodies``, its caps above the
large body). ``--in-flight N`` keeps N slow requests with 30 KiB URLs open from the client
while the small ones are timed (what a request costs the recorder beside others in flight).
Prints a Markdown table; docs/benchmarks.md ("Recording the web") has the figures.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from benchmarks.egress_stream import MIB, PeakMemory
from inspect_gaia.answer_sources.sources import load_answer_sources
from inspect_gaia.egress.spec import EgressSpec
from inspect_gaia.sandboxes.docker import egress
from inspect_gaia.sandboxes.docker.cleanup import remove_run, run_state
from inspect_gaia.sandboxes.docker.egress_archive import BODY_CAP_ENV, RUN_CAP_ENV, SAMPLE_CAP_ENV
from inspect_gaia.sandboxes.docker.egress_record import SandboxRecord
from inspect_gaia.shipped import Program
from support.proxy_floods import SCRIPT as FLOODS
from support.standins import docker, standins

PAGE = "http://weather.example/today.txt"
EGRESS = "src/inspect_gaia/egress"


def _without_recorder(command: Callable[..., list[str]]) -> Callable[..., list[str]]:
    """Today's command line with the recorder's script left out."""

    def before(*args: Any) -> list[str]:
        full = command(*args)
        ours = {"/egress/recorder.py", f"gaia_record_dir={egress.RECORD_DIR}"}
        drop = {i for i, arg in enumerate(full) if arg in ours}
        return [arg for i, arg in enumerate(full) if i not in drop and i + 1 not in drop]

    return before


def _programs_at(ref: str) -> tuple[list[Program], dict[str, str]]:
    """The proxy's programs as they were at git commit ``ref``: their list and their sources."""
    names = subprocess.run(
        ["git", "ls-tree", "--name-only", f"{ref}:{EGRESS}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    texts = {
        name: subprocess.run(
            ["git", "show", f"{ref}:{EGRESS}/{name}"], capture_output=True, text=True, check=True
        ).stdout
        for name in names
        if name.endswith(".py") and name != "__init__.py"
    }
    shipped = [n for n, text in texts.items() if "Runs elsewhere:" in text]
    programs = [
        Program(f"egress.{n[:-3]}", "_urlrules.py" if n == "urlrules.py" else n) for n in shipped
    ]
    return programs, {p.module: texts[p.module.split(".")[1] + ".py"] for p in programs}


@contextmanager
def _as_at(ref: str | None) -> Iterator[None]:
    """Start proxies with the programs of ``ref`` (and its command line: no ``http2`` setting)."""
    if ref is None:
        yield
        return
    programs, texts = _programs_at(ref)
    started: Any = egress  # the module the run starts proxies with: its names, swapped a while
    saved = (started.PROXY_PROGRAMS, started.source, started._mitmdump)

    def then(*scripts: str) -> list[str]:
        now: list[str] = saved[2](*scripts)
        at = now.index("http2=false")
        return now[: at - 1] + now[at + 1 :]

    started.PROXY_PROGRAMS = tuple(programs)
    started.source = lambda program: texts[program.module]
    started._mitmdump = then
    try:
        yield
    finally:
        started.PROXY_PROGRAMS, started.source, started._mitmdump = saved


def one_proxy(
    image: str,
    network: str,
    mode: str,
    requests: int,
    mib: int,
    before: str | None = None,
    in_flight: int = 0,
) -> list[float]:
    """Per-request seconds, then MiB/s, memory at rest and at its highest (MiB).

    ``mode``: ``today`` (no recorder), ``recording``, or ``bodies`` (``-T web_record=bodies``,
    its caps lifted above the large body so that it is kept).
    """
    recording = mode != "today"
    rules = EgressSpec(load_answer_sources().pairs, bodies=mode == "bodies")
    if mode == "bodies":
        lifted = str(2 * (mib + 1) * MIB)
        os.environ[BODY_CAP_ENV] = os.environ[RUN_CAP_ENV] = os.environ[SAMPLE_CAP_ENV] = lifted
    command = egress._command
    if not recording:
        egress._command = _without_recorder(command)
    try:
        with _as_at(before if mode == "before" else None):
            proxy = egress.ensure("bench-record", rules)
    finally:
        egress._command = command
    client = ""
    try:
        docker("network", "connect", network, proxy.proxy)
        env = f"http_proxy=http://{proxy.address}:{egress.PORT}"
        client = docker(
            *("run", "-d", "--network", proxy.network, "-e", env, image, "sleep", "900")
        )
        if recording:
            SandboxRecord(proxy, "bench-client").start(client)
        wait = f"until curl -sf -o /dev/null {PAGE}; do sleep 0.2; done"
        docker("exec", client, "sh", "-c", wait)
        if in_flight:  # held open while the small requests are timed, then left to the container
            slow = ["slow", str(in_flight), "30", "600"]
            proxied = f"HTTP_PROXY=http://{proxy.address}:{egress.PORT}"
            docker("exec", "-d", "-e", proxied, client, "python3", "-c", FLOODS, *slow)
            time.sleep(5)
        loop = (
            f"for i in $(seq {requests}); do "
            f"curl -s -o /dev/null -w '%{{time_total}}\\n' {PAGE}; done"
        )
        times = [float(t) for t in docker("exec", client, "sh", "-c", loop).split()]
        rest = PeakMemory(proxy.proxy)
        time.sleep(3)
        idle = rest.stop()
        peak = PeakMemory(proxy.proxy)
        start = time.perf_counter()
        docker("exec", client, "sh", "-c", f"curl -s -o /dev/null http://bulk.example/bulk/{mib}")
        rate = mib / (time.perf_counter() - start)
        high = peak.stop()
        if recording:
            lines = SandboxRecord(proxy, "bench-client").read()
            assert len(lines) >= requests + 1, f"the proxy recorded {len(lines)} requests"
        if mode == "bodies":  # the large body was kept whole, not only hashed
            sizes = docker("exec", proxy.proxy, "sh", "-c", f"wc -c {egress.RECORD_DIR}/bodies/*")
            assert f"{mib * MIB} " in sizes, f"the large body was not kept: {sizes}"
        return [statistics.median(times), _p90(times), rate, idle / MIB, high / MIB]
    finally:
        if client:
            subprocess.run(["docker", "rm", "-f", client], capture_output=True)
        docker("network", "disconnect", "-f", network, proxy.proxy)
        egress.forget(egress.egress_state())
        remove_run(run_state().run_id)


def _p90(values: list[float]) -> float:
    return sorted(values)[int(0.9 * (len(values) - 1))]


def main() -> None:
    """Measure and print a Markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--image", default="inspect-gaia/sandbox:bookworm")
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--mib", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--bodies", action="store_true", help="a third proxy, keeping bodies")
    parser.add_argument("--before", metavar="REF", help="a proxy of git commit REF's programs")
    parser.add_argument("--in-flight", type=int, default=0, help="slow requests held meanwhile")
    parser.add_argument("--no-today", action="store_true", help="leave out the recorder-less one")
    args = parser.parse_args()
    modes = [
        *([] if args.no_today else ["today"]),
        *(["before"] if args.before else []),
        "recording",
        *(["bodies"] if args.bodies else []),
    ]
    figures: dict[str, list[list[float]]] = {mode: [] for mode in modes}
    with standins(args.image, ["weather.example", "bulk.example"], label="bench-record") as net:
        for _ in range(args.rounds):
            for mode in modes:
                figures[mode].append(
                    one_proxy(
                        args.image,
                        net.network,
                        mode,
                        args.requests,
                        args.mib,
                        args.before,
                        args.in_flight,
                    )
                )
    names = [
        "per request, median, ms",
        "per request, p90, ms",
        f"{args.mib} MiB body, MiB/s (docker exec included)",
        "proxy memory at rest, MiB",
        f"proxy memory at its highest during the {args.mib} MiB body, MiB",
    ]
    scale = [1000.0, 1000.0, 1.0, 1.0, 1.0]
    heads = {
        "today": "without the recorder",
        "before": f"recording, at {args.before}",
        "recording": "recording",
        "bodies": "keeping bodies",
    }
    ratio = ["now / before"] if args.before else []
    print(
        f"| measure ({args.rounds} rounds, median) | "
        + " | ".join([*(heads[m] for m in modes), *ratio])
        + " |"
    )
    print("| --- " * (len(modes) + len(ratio) + 1) + "|")
    for i, name in enumerate(names):
        median = {m: statistics.median(r[i] for r in figures[m]) * scale[i] for m in modes}
        cells = [f"{median[m]:.2f}" for m in modes]
        if args.before:
            cells.append(f"{median['recording'] / median['before']:.2f}")
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
