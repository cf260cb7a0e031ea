"""Peak memory of ``inspect-gaia report`` on a log whose samples carry large events and text.

A log's bulk is its events: each model call logs the whole conversation so far, so a long sample's
events grow with the square of its length. The reader reads what it reports (messages, scores,
usage) and leaves the events, the store and the attachments unparsed (inspect's
``exclude_fields``), except for a run of another solver, whose offered tools it reads from them.
Both figures come from one run, each the maximum resident set size under ``/usr/bin/time -v``:

* ``every field``: inspect reading the whole log (``read_eval_log(path)``), as the reader did;
* ``report``: ``inspect-gaia report LOG --format json``.

    python -m benchmarks.reader_memory --events 12 --mib 4
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

FIXTURE = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "provenance-v1.eval"


def big_log(out: Path, events: int, mib: float) -> Path:
    """The fixture log with ``events`` more model calls in each sample, each ``mib`` MiB of input.

    Written into the archive as a hostile log would be (inspect's writer condenses repeated
    inputs): a highly compressible text, so the file is small and unpacks within the readers' cap.
    """
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(FIXTURE))
    text = "a log's model input, repeated. " * int(mib * 2**20 / 31)
    path = out / "big.eval"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as made:
        for sample in log.samples or []:
            data = json.loads(sample.model_dump_json())
            model = next(e for e in data["events"] if e.get("event") == "model")
            big = {**model, "input": [{"role": "user", "content": text, "source": "input"}]}
            data["events"] += [big] * events
            made.writestr(f"samples/{sample.id}_epoch_{sample.epoch}.json", json.dumps(data))
        made.writestr("header.json", log.model_copy(update={"samples": None}).model_dump_json())
    return path


def peak_mb(command: list[str]) -> float:
    """The command's maximum resident set size under ``/usr/bin/time -v``, in MB."""
    run = subprocess.run(["/usr/bin/time", "-v", *command], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
    found = re.search(r"Maximum resident set size \(kbytes\): (\d+)", run.stderr)
    assert found is not None, run.stderr[-2000:]
    return int(found.group(1)) / 1024


def main() -> None:
    """Write the log, measure both reads, print a Markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=12, help="model calls added to each sample")
    parser.add_argument("--mib", type=float, default=4.0, help="input of each call, MiB")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = big_log(Path(tmp), args.events, args.mib)
        unpacked = sum(i.file_size for i in zipfile.ZipFile(path).infolist()) / 2**20
        full = peak_mb(
            [
                sys.executable,
                "-c",
                f"from inspect_ai.log import read_eval_log; read_eval_log({str(path)!r})",
            ]
        )
        report = peak_mb(
            [
                sys.executable,
                "-c",
                "from inspect_gaia._cli.main import main; main()",
                "report",
                str(path),
                "--format",
                "json",
            ]
        )
        size = path.stat().st_size / 2**20
    print(f"log: 4 samples, each {args.events} model calls of {args.mib:g} MiB more:")
    print(f"{size:.1f} MiB on disk, {unpacked:.0f} MiB unpacked\n")
    print("| read | peak RSS |\n| --- | --- |")
    print(f"| every field (`read_eval_log`) | {full:.0f} MB |")
    print(f"| `inspect-gaia report` | {report:.0f} MB |")
    print(f"\nratio: {full / report:.1f}x")


if __name__ == "__main__":
    main()
