"""Peak memory of ``view_file`` asked for images over its limit, under ``/usr/bin/time -v``.

Each of ``--samples`` questions (all at once) writes a PNG-headed file of ``--size-mib`` MiB in its
sandbox, asks ``view_file`` for it (images are viewed up to 5 MiB), then submits. ``view_file``
stats the file in the sandbox first and refuses it unread; before that check it read the whole file
(inspect reads up to 100 MiB) and only then applied the limit. The figure is the maximum resident
set size of the ``inspect eval`` process as GNU time reports it (its children included).

    python -m benchmarks.view_file_memory --image inspect-gaia/sandbox:bookworm   # 8 x 99 MiB
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.fixture import write_dataset
from benchmarks.harnesses import MODEL
from benchmarks.stream_server import serve
from support.scripted_model import Entry, ScriptedModel, Step

PNG_HEAD = r"\x89PNG\r\n\x1a\n"


def view_model(samples: int, size_mib: int) -> ScriptedModel:
    """Each question: write ``/tmp/big.png`` of ``size_mib`` MiB, view it, submit ``20``."""
    make = f"(printf '{PNG_HEAD}'; head -c {size_mib * 2**20 - 8} /dev/zero) > /tmp/big.png"
    steps: list[Step] = [
        {"bash": make},
        {"call": "view_file", "args": {"path": "/tmp/big.png"}},
    ]
    entries = [
        Entry(f"Benchmark question {i}:", [*steps, {"submit": "20"}]) for i in range(samples)
    ]
    return ScriptedModel(entries)


def peak_rss_mb(image: str, samples: int, size_mib: int, workdir: Path) -> float:
    """One ``inspect eval`` run under ``/usr/bin/time -v``: its maximum resident set size, MB."""
    dataset = write_dataset(workdir / "gaia", samples, 0)
    with serve(view_model(samples, size_mib)) as url:
        run = subprocess.run(
            [
                "/usr/bin/time",
                "-v",
                str(Path(sys.executable).parent / "inspect"),
                "eval",
                "inspect_gaia/gaia",
                *("-T", f"dataset_path={dataset}", "-T", f"image={image}"),
                *("-T", "view_file=true", "--model", MODEL, "--max-samples", str(samples)),
                *("--log-dir", str(workdir / "logs"), "--display", "none"),
            ],
            env={**os.environ, "SCRIPTED_BASE_URL": url, "SCRIPTED_API_KEY": "bench"},
            capture_output=True,
            text=True,
        )
    found = re.search(r"Maximum resident set size \(kbytes\): (\d+)", run.stderr)
    if run.returncode != 0 or found is None:
        raise SystemExit(f"inspect eval failed:\n{run.stdout[-2000:]}{run.stderr[-2000:]}")
    (log,) = (workdir / "logs").glob("*.eval")
    _check(log, samples)
    return int(found.group(1)) / 1024


def _check(log: Path, samples: int) -> None:
    """Every sample viewed the file and got the limit's tool error."""
    from inspect_ai.log import read_eval_log
    from inspect_ai.model import ChatMessageTool

    read = read_eval_log(str(log))
    assert read.samples is not None and len(read.samples) == samples
    for sample in read.samples:
        errors = [
            m.error.message for m in sample.messages if isinstance(m, ChatMessageTool) if m.error
        ]
        assert any("image files are viewed up to 5 MiB" in e for e in errors), sample.id


def main() -> None:
    """Print the peak RSS of one run."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--image", default="inspect-gaia/sandbox:bookworm")
    parser.add_argument("--samples", type=int, default=8)
    parser.add_argument("--size-mib", type=int, default=99)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="gaia-view-memory-") as workdir:
        peak = peak_rss_mb(args.image, args.samples, args.size_mib, Path(workdir))
    print(
        f"{args.samples} samples at once, each viewing a {args.size_mib} MiB image: peak RSS "
        f"{peak:.0f} MB (/usr/bin/time -v)"
    )


if __name__ == "__main__":
    main()
