"""A replayed web beside the live one: speed, an archive's size per browsing sample, export's RSS.

    python -m benchmarks.web_replay [--samples 8] [--requests 200] [--export-mib 1024]

1. **A browsing run**, recorded: gaia-web's four questions (``tests/fixtures/gaia-web``) over
   ``--samples / 4`` epochs on the browser image, in-process with the scripted model, through the
   stand-in web (``support/web_standin``) with ``-T web_record=bodies``. Each sample first opens a
   page shaped like a news site's (``NEWS``: a 30 KB document, a 400 KB script, a 60 KB stylesheet
   and a 300 KB picture; synthetic sizes of the benchmark's choosing), then answers its question.
   Measured: the archive's size per sample, and its kept bytes by kind (documents, scripts,
   stylesheets, images, other) from its record.
2. **Replay against live**, per request: a client container on a proxy's network asks for the news
   document (inline, under 64 KiB) and its script (streamed from its file) ``--requests`` times
   each, timed by curl (``time_total``), through a recording proxy on the live stand-in and through
   a replay of run 1's archive, alternating twice; medians and 90th percentiles.
3. **Export's and the check's memory** on an archive of ``--export-mib`` MiB (1 MiB bodies of
   random bytes, each its own record line): ``inspect-gaia web export`` of run 1's log with that
   archive (``--archive``), and the replay's check of it (``web_archive.read_archive``), each under
   ``/usr/bin/time -v`` (maximum resident set size, wall time).

Prints Markdown tables; docs/benchmarks.md ("Replaying the web") has the figures. Hold the shared
Docker lock while it runs if the engine is shared.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

from inspect_ai import eval as inspect_eval

from inspect_gaia import gaia
from inspect_gaia.egress.spec import EgressSpec
from inspect_gaia.egress.web_archive import read_archive, tar_member
from inspect_gaia.image_layout import OFFLINE_BROWSER_TAG
from inspect_gaia.sandboxes.docker import egress
from inspect_gaia.sandboxes.docker.cleanup import remove_run, run_state
from inspect_gaia.sandboxes.docker.egress_archive import name_sample
from inspect_gaia.sandboxes.docker.egress_record import SandboxRecord
from support.scripted_model import Entry, ScriptedModel, serve
from support.standins import docker, standins
from support.web_pages import ROUTES, SERVER, web_agent
from support.web_standin import ALIASES

MODEL = "openai-api/scripted/bench"
GAIA_WEB = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "gaia-web"
SITES = ("wrenfold", "cobblemere", "brackwater", "harrowgate")
MIB = 1 << 20


def _text(size: int, unit: str) -> str:
    return (unit * (size // len(unit) + 1))[:size]


NEWS: dict[str, list[Any]] = {
    "/news/": [
        "page",
        "text/html",
        "<html><head><title>News</title><link rel='stylesheet' href='/static/site.css'>"
        "<script src='/static/app.js'></script></head><body><h1>Harbour news</h1>"
        "<img src='/static/photo.jpg' alt='the harbour'>"
        + _text(30_000, "<p>The ferry timetable changes on Monday.</p>")
        + "</body></html>",
    ],
    "/static/app.js": ["filler", "application/javascript", "var a=[1,2,3];", 400_000],
    "/static/site.css": ["filler", "text/css", "p{margin:0 0 1em 0}", 60_000],
    "/static/photo.jpg": ["filler", "image/jpeg", "JFIF", 300_000],
}
"""A page shaped like a news site's: a document and its script, stylesheet and picture."""
BENCH_SERVER = SERVER.replace(
    '        elif kind == "big":',
    '        elif kind == "filler":  # [filler, type, unit, size]: made here, not passed\n'
    "            unit, size = route[2], route[3]\n"
    "            self.send(200, route[1], (unit * (size // len(unit) + 1))[:size].encode())\n"
    '        elif kind == "big":',
)
"""The stand-in web's server with one more kind of route: a body of a size, made by the server
(a body passed on its command line would pass the kernel's limit on one argument)."""
assert BENCH_SERVER != SERVER
KINDS = {
    "document": ("text/html", "text/plain", "application/pdf", "application/json"),
    "script": ("application/javascript", "text/javascript"),
    "stylesheet": ("text/css",),
    "image": ("image/",),
}


def _kind(content_type: object) -> str:
    mime = str(content_type or "").split(";")[0].strip().lower()
    return next((k for k, types in KINDS.items() if mime.startswith(types)), "other")


def browsing_run(samples: int, workdir: Path) -> tuple[Path, Path, dict[str, Any]]:
    """Run 1: the log, its archive, and the archive's size per sample and by kind."""
    routes = json.dumps({**ROUTES, **NEWS})
    with standins(
        OFFLINE_BROWSER_TAG, ALIASES, label="bench-replay", server=(BENCH_SERVER, routes)
    ) as web:
        entries = [
            Entry(
                e.match,
                [
                    {"call": "browser_navigate", "args": {"url": f"http://{site}.example/news/"}},
                    *e.steps,
                ],
            )
            for e, site in zip(web_agent({s: f"{s}.example" for s in SITES}), SITES, strict=True)
        ]
        with serve(ScriptedModel(entries)) as url, web.attaching():
            os.environ.update(SCRIPTED_BASE_URL=url, SCRIPTED_API_KEY="bench")
            (log,) = inspect_eval(
                gaia(
                    dataset_path=str(GAIA_WEB),
                    image=OFFLINE_BROWSER_TAG,
                    browser=True,
                    web_record="bodies",
                ),
                model=MODEL,
                log_dir=str(workdir / "logs"),
                display="none",
                epochs=max(1, samples // 4),
            )
    assert log.samples is not None and log.status == "success", log.error
    archive = next((workdir / "logs").glob("gaia-web-*.tar"))
    checked = read_archive(str(archive))
    by_kind: dict[str, int] = {}
    for line in checked.lines:
        if line.data.get("body") == "kept":
            kind = _kind(line.data.get("type"))
            by_kind[kind] = by_kind.get(kind, 0) + int(line.data.get("bytes") or 0)
    figures = {
        "samples": len(log.samples),
        "archive_kib_per_sample": archive.stat().st_size / 1024 / len(log.samples),
        "requests_per_sample": len(checked.lines) / len(log.samples),
        "kept_kib_by_kind": {k: round(v / 1024 / len(log.samples), 1) for k, v in by_kind.items()},
    }
    return Path(log.location), archive, figures


def _client(proxy: egress.Egress, name: str, sample: str | None) -> str:
    client = docker(
        *("run", "-d", "--network", proxy.network, "--label", "inspect_gaia.test=bench-replay"),
        *("--name", name, OFFLINE_BROWSER_TAG, "sleep", "900"),
    )
    if sample is not None:  # named to the proxy as a sample's sandbox is
        name_sample(proxy.proxy, egress.RECORD_DIR, name, sample, 1)
    SandboxRecord(proxy, name).start(client)
    return client


def _timed(client: str, proxy: egress.Egress, url: str, requests: int) -> list[float]:
    via = f"http://{proxy.address}:{egress.PORT}"
    loop = (
        f"for i in $(seq {requests}); do curl -s -o /dev/null --proxy {via} "
        f"-w '%{{time_total}}\\n' {url}; done"
    )
    return [float(t) for t in docker("exec", client, "sh", "-c", loop).split()]


def speed(archive: Path, requests: int) -> dict[str, list[float]]:
    """Run 2: per-request seconds of the document and the script, live and replayed."""
    sample = json.loads(_first_sample(archive))["id"]
    urls = {
        "document": "http://wrenfold.example/news/",
        "script": "http://wrenfold.example/static/app.js",
    }
    times: dict[str, list[float]] = {}
    routes = json.dumps({**ROUTES, **NEWS})
    with standins(
        OFFLINE_BROWSER_TAG, ALIASES, label="bench-replay", server=(BENCH_SERVER, routes)
    ) as web:
        for _ in range(2):
            for mode in ("live", "replay"):
                spec = EgressSpec() if mode == "live" else EgressSpec(replay=str(archive))
                proxy = egress.ensure("bench-replay", spec)
                client = ""
                try:
                    if mode == "live":
                        docker("network", "connect", web.network, proxy.proxy)
                    client = _client(
                        proxy,
                        f"bench-replay-{mode}-{time.monotonic_ns()}",
                        sample if mode == "replay" else None,
                    )
                    for what, url in urls.items():
                        _timed(client, proxy, url, 3)  # warm: the connection, the stand-in
                        times.setdefault(f"{what}, {mode}", []).extend(
                            _timed(client, proxy, url, requests)
                        )
                finally:
                    if client:
                        subprocess.run(["docker", "rm", "-f", client], capture_output=True)
                    if mode == "live":
                        subprocess.run(
                            ["docker", "network", "disconnect", "-f", web.network, proxy.proxy],
                            capture_output=True,
                        )
                    egress.forget(egress.egress_state())
                    remove_run(run_state().run_id)
    return times


def _first_sample(archive: Path) -> str:
    with tarfile.open(archive) as tar:
        member = next(m for m in tar if m.name.startswith("record/samples/"))
        got = tar.extractfile(member)
        assert got is not None
        return got.read().decode()


def big_archive(path: Path, mib: int) -> Path:
    """An archive of ``mib`` bodies of 1 MiB of random bytes, each its own record line."""
    lines = []
    with path.open("wb") as out:
        for i in range(mib):
            body = os.urandom(MIB)
            sha = hashlib.sha256(body).hexdigest()
            lines.append(
                {
                    "t": 1.0 + i,
                    "method": "GET",
                    "url": f"http://bulk.example/{i}",
                    "status": 200,
                    "bytes": MIB,
                    "sha256": sha,
                    "type": "application/octet-stream",
                    "decision": "allowed",
                    "why": None,
                    "error": None,
                    "body": "kept",
                    "headers": [["Content-Type", "application/octet-stream"]],
                }
            )
            for chunk in tar_member(f"record/bodies/{sha}", MIB, iter([body])):
                out.write(chunk)
        record = "".join(json.dumps(x) + "\n" for x in lines).encode()
        for chunk in tar_member("record/box.jsonl", len(record), iter([record])):
            out.write(chunk)
        out.write(bytes(2 * tarfile.BLOCKSIZE))
    return path


def measured(*command: str) -> tuple[float, float]:
    """Maximum resident set size (MiB) and wall seconds of ``command`` under /usr/bin/time -v."""
    run = subprocess.run(["/usr/bin/time", "-v", *command], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", run.stderr)
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)", run.stderr)
    assert rss is not None and wall is not None, run.stderr[-2000:]
    parts = [float(p) for p in wall.group(1).split(":")]
    return int(rss.group(1)) / 1024, sum(p * 60**i for i, p in enumerate(reversed(parts)))


def main() -> None:
    """Measure and print Markdown tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=8)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--export-mib", type=int, default=1024)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="gaia-bench-replay-") as folder:
        work = Path(folder)
        log, archive, size = browsing_run(args.samples, work)
        print(f"## Archive of a browsing run ({size['samples']} samples)\n")
        print(
            f"- archive per sample: {size['archive_kib_per_sample']:.1f} KiB, "
            f"{size['requests_per_sample']:.1f} requests per sample"
        )
        for kind, kib in sorted(size["kept_kib_by_kind"].items(), key=lambda x: -x[1]):
            print(f"- kept {kind}: {kib} KiB per sample")
        times = speed(archive, args.requests)
        print(f"\n## Per request ({args.requests} x 2 rounds), ms\n")
        print("| request | median | p90 |\n| --- | --- | --- |")
        for name, values in times.items():
            ordered = sorted(values)
            print(
                f"| {name} | {statistics.median(values) * 1000:.2f} | "
                f"{ordered[int(0.9 * (len(ordered) - 1))] * 1000:.2f} |"
            )
        big = big_archive(work / "big.tar", args.export_mib)
        har = work / "big.har"
        cli = Path(sys.executable).with_name("inspect-gaia")
        export = measured(
            str(cli), "web", "export", str(log), "--archive", str(big), "-o", str(har)
        )
        check = measured(
            sys.executable,
            "-c",
            "import sys; from inspect_gaia.egress.web_archive "
            "import read_archive; read_archive(sys.argv[1])",
            str(big),
        )
        print(
            f"\n## An archive of {args.export_mib} MiB ({big.stat().st_size / MIB:.0f} MiB on "
            f"disk; HAR {har.stat().st_size / MIB:.0f} MiB)\n"
        )
        print("| command | max RSS, MiB | wall, s |\n| --- | --- | --- |")
        print(f"| web export | {export[0]:.0f} | {export[1]:.1f} |")
        print(f"| the replay's check (read_archive) | {check[0]:.0f} | {check[1]:.1f} |")


if __name__ == "__main__":
    main()
