"""What ``-T block_answer_sources=true`` costs: the egress proxy's start, per sample, per request.

    python -m benchmarks.egress --image inspect-gaia/sandbox:bookworm [--samples 16] [--repeats 3]

Both modes run the same synthetic questions (``fixture.write_dataset``) with the scripted model on
127.0.0.1; each sample makes one HTTP request and submits. In an ordinary run the page is served by
a host-side server on the engine's bridge address; in a blocking run by a stand-in container on an
internal network of the benchmark's own, which the run's proxy is connected to as soon as it
exists (``support/standins.py``, as in the tests): nothing leaves the host. Each blocking sample
also makes one HTTPS request to a listed host, refused by the proxy after intercepting TLS (the
cost of the interception handshake). Runs are in-process (``inspect_ai.eval``) after a warm-up
run, so the figures are the sandbox's and the proxy's, not Python's start-up.

Measured: wall time of a 1-sample run (median of ``--repeats``), of an N-sample run one sample at
a time and 8 at a time, the marginal cost per sample ((T_N - T_1) / (N - 1)), and inside the
sandbox curl's ``time_total`` of each request (median; a request that did not get its expected
status, 200 for the page and 403 for the refusal, stops the benchmark). Prints a Markdown table.
The figures and how to read them: docs/answer-sources.md ("What the proxy costs"); the proxy
under a large download, and the scorer's URL detection on a large result: ``egress_stream``.
Hold the shared Docker lock while it runs if the engine is shared; ``--samples 8 --repeats 3``
takes about two minutes.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from inspect_ai.model import ChatMessageTool

from benchmarks.fixture import task_id, write_dataset
from inspect_gaia import gaia
from support.answer_pages import WEATHER_HOST, WEATHER_PATH, bridge_address, serve_pages
from support.scripted_model import Entry, ScriptedModel, Step, serve
from support.standins import standins

MODEL = "openai-api/scripted/bench"
TIMED = "curl -sS -o /dev/null -w 'http %{http_code} %{time_total}\\n'"
BLOCKED = "https://huggingface.co/datasets/gaia-benchmark/GAIA/resolve/main/README.md"


def _model(questions: int, url: str, blocking: bool) -> list[Entry]:
    command = f"{TIMED} {url}" + (
        f"; curl -sS -o /dev/null -w 'https %{{http_code}} %{{time_total}}\\n' {BLOCKED}"
        if blocking
        else ""
    )
    steps: list[Step] = [{"bash": command}, {"submit": "20"}]
    return [Entry(f"Benchmark question {i}:", steps) for i in range(questions)]


@contextmanager
def _standins(image: str) -> Iterator[None]:
    """The stand-in host, allowed to the runs, each run's proxy connected to its network."""
    with standins(image, [WEATHER_HOST, "huggingface.co"], label="bench") as made:
        with made.attaching():
            yield


def _run(
    dataset: Path, image: str, samples: int, at_once: int, blocking: bool
) -> tuple[float, EvalLog]:
    ids = ",".join(task_id(i) for i in range(samples))
    task = gaia(dataset_path=str(dataset), image=image, ids=ids, block_answer_sources=blocking)
    # logs beside the dataset: a log's samples are read from its file after the run
    logs = tempfile.mkdtemp(prefix="logs-", dir=dataset)
    start = time.perf_counter()
    (log,) = inspect_eval(task, model=MODEL, log_dir=logs, display="none", max_samples=at_once)
    wall = time.perf_counter() - start
    assert log.status == "success" and log.samples, log.status
    for sample in log.samples:
        assert sample.scores and sample.scores["gaia_scorer"].value == "C", sample.id
    return wall, log


EXPECTED = {"http": "200", "https": "403"}
"""The status each request must get: the page, and the proxy's refusal."""


def _request_times(log: EvalLog, scheme: str) -> list[float]:
    """The ``time_total`` curl reports for each ``scheme`` request; a failed one stops the run."""
    times = []
    for sample in log.samples or []:
        for message in sample.messages:
            if isinstance(message, ChatMessageTool):
                for line in message.text.splitlines():
                    parts = line.split()
                    if len(parts) == 3 and parts[0] == scheme:
                        if parts[1] != EXPECTED[scheme]:
                            raise SystemExit(f"sample {sample.id}: {scheme} got {parts[1]}")
                        times.append(float(parts[2]))
    return times


def measure(image: str, samples: int, repeats: int) -> dict[str, dict[str, Any]]:
    """Both modes' figures."""
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="gaia-bench-data-") as temp, ExitStack() as stack:
        dataset = write_dataset(Path(temp), samples, samples)
        model = ScriptedModel([])
        url = stack.enter_context(serve(model))
        os.environ["SCRIPTED_BASE_URL"], os.environ["SCRIPTED_API_KEY"] = url, "bench"
        address = bridge_address()
        port, _ = stack.enter_context(serve_pages(address))
        stack.enter_context(_standins(image))
        for blocking in (False, True):
            page = (
                f"http://{WEATHER_HOST}{WEATHER_PATH}"
                if blocking
                else (f"http://{address}:{port}{WEATHER_PATH}")
            )
            model.entries = _model(samples, page, blocking)
            _run(dataset, image, 1, 1, blocking)  # warm-up
            one = [_run(dataset, image, 1, 1, blocking)[0] for _ in range(repeats)]
            serial, serial_log = _run(dataset, image, samples, 1, blocking)
            parallel, parallel_log = _run(dataset, image, samples, 8, blocking)
            t1 = statistics.median(one)
            http = _request_times(serial_log, "http") + _request_times(parallel_log, "http")
            https = _request_times(serial_log, "https")
            results["blocking" if blocking else "ordinary"] = {
                "1 sample, s": t1,
                f"{samples} samples one at a time, s": serial,
                f"{samples} samples 8 at a time, s": parallel,
                "marginal per sample, one at a time, s": (serial - t1) / (samples - 1),
                "HTTP request in the sandbox, median s": statistics.median(http),
                "HTTPS request refused by the proxy, median s": statistics.median(https)
                if https
                else None,
            }
    return results


def table(results: dict[str, dict[str, Any]]) -> str:
    """The figures as a Markdown table, with the difference."""
    ordinary, blocking = results["ordinary"], results["blocking"]
    lines = [
        "| measure | ordinary run | block_answer_sources | difference |",
        "| --- | --- | --- | --- |",
    ]
    for name in ordinary:
        a, b = ordinary[name], blocking[name]
        cell = "—" if a is None else f"{a:.3f}"
        diff = "—" if a is None or b is None else f"{b - a:+.3f}"
        lines.append(f"| {name} | {cell} | {'—' if b is None else f'{b:.3f}'} | {diff} |")
    return "\n".join(lines)


def main() -> None:
    """Run both modes and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--image", default="inspect-gaia/sandbox:bookworm")
    parser.add_argument("--samples", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(table(measure(args.image, args.samples, args.repeats)))


if __name__ == "__main__":
    main()
