"""Peak memory of ``inspect-gaia report`` on hostile logs: large events, huge messages, a folder.

Three crafted logs, each written here (nothing big is committed), each measured as the maximum
resident set size under ``/usr/bin/time -v``:

* ``--events N --mib M`` (the default): the four samples of ``tests/fixtures/provenance-v1.eval``,
  each with N more model calls of M MiB of input. A log's bulk is its events (each model call logs
  the conversation so far); the reader leaves them unparsed. Measured against inspect reading every
  field (``read_eval_log``), as the reader once did.
* ``--hostile``: one log of ``--size`` MB on disk (21 by default) whose ``--samples`` samples each
  hold tool outputs of ``--sample-mib`` MiB in all: compressible text, padded with random text so
  that the file unpacks within the per-file caps (``files``: 200 times its size, at most 4 GiB).
  ``--sample-mib 0``: many small samples instead (the fixture's, padded).
* ``--folder N``: a folder of N copies of such a log (``--size``, ``--samples``, ``--sample-mib``).
* ``--messages N``: one log whose one sample holds N tiny messages (a few bytes of JSON each, a
  pydantic object each once parsed: the parse, not the bytes, is the cost), small on disk.

With ``--before SRC`` the same ``report`` also runs on another checkout's ``src`` (the code before
a change: ``git archive <commit> src | tar -x -C <dir>``), in the same run, and the table gives
both and their ratio. A command the reader refuses exits 1 with one line, which is shown.

    python -m benchmarks.reader_memory --events 12 --mib 4
    python -m benchmarks.reader_memory --hostile --before /tmp/before/src
    python -m benchmarks.reader_memory --folder 10 --size 4 --sample-mib 48
    python -m benchmarks.reader_memory --messages 1200000 --before /tmp/before/src
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

FIXTURE = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "provenance-v1.eval"
MiB = 2**20
_TEXT = b"a hostile sample's tool output, again and again. "
_PART = 4 * MiB  # each tool output of a hostile sample


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


def hostile_log(path: Path, *, size_mb: float, samples: int, sample_mib: float) -> Path:
    """An ``.eval`` of about ``size_mb`` MB whose ``samples`` samples hold ``sample_mib`` MiB each.

    Each sample is one of the fixture's, renamed, whose messages end with tool outputs of
    ``_PART`` bytes of compressible text, and one of random text that pads the file to its size
    (so it unpacks within 200 times that). Each part is streamed into the archive: the writer never
    holds a sample whole.
    """
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(FIXTURE))
    shapes = log.samples or []
    rng = random.Random(0)
    text = (_TEXT * (_PART // len(_TEXT))).decode()
    parts = int(sample_mib * MiB / _PART)  # 0: many small samples
    skeleton = shapes[0].model_dump_json(exclude={"events", "attachments"}).encode()
    packed = len(zlib.compress(text.encode(), 9)) * parts + len(zlib.compress(skeleton, 9)) + 150
    pad = max(0, int((size_mb * 1e6 / samples - packed) / 0.76))  # base64 of random bytes
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as made:
        for n in range(samples):
            shape = shapes[n % len(shapes)]
            data = json.loads(shape.model_dump_json(exclude={"events", "attachments"}))
            data.update(id=f"{shape.id}-{n}", events=[], attachments={})
            data["messages"] = [*data["messages"], {**data["messages"][-1], "content": "@@"}]
            head, tail = json.dumps(data).split('"@@"', 1)
            name = f"samples/{shape.id}-{n}_epoch_{shape.epoch}.json"
            with made.open(name, "w", force_zip64=True) as member:
                member.write(head.encode())
                for k in range(parts):  # each a tool message of its own (inspect shares equal ones)
                    call = f'"{text}", "role": "tool", "tool_call_id": "c{k}", '
                    member.write(call.encode())
                    member.write(b'"function": "bash"}, {"content": ')
                member.write(b'"' + base64.b64encode(rng.randbytes(pad * 3 // 4)) + b'"')
                member.write(tail.encode())
        made.writestr("header.json", log.model_copy(update={"samples": None}).model_dump_json())
    return path


def messages_log(path: Path, messages: int) -> Path:
    """An ``.eval`` whose one sample (the fixture's first) holds ``messages`` tiny messages.

    Each message is a distinct one (inspect shares equal messages on writing): a user or an
    assistant turn of a few characters; the sample is streamed into the archive.
    """
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(FIXTURE))
    shape = (log.samples or [])[0]
    data = json.loads(shape.model_dump_json(exclude={"events", "attachments"}))
    data.update(events=[], attachments={}, messages="@@")
    head, tail = json.dumps(data).split('"@@"', 1)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as made:
        with made.open(f"samples/{shape.id}_epoch_{shape.epoch}.json", "w") as member:
            member.write(head.encode() + b"[")
            for n in range(messages):
                role = "user" if n % 2 else "assistant"
                sep = b"," if n else b""
                member.write(sep + f'{{"role":"{role}","content":"m{n}"}}'.encode())
            member.write(b"]" + tail.encode())
        made.writestr("header.json", log.model_copy(update={"samples": None}).model_dump_json())
    return path


@dataclass
class Measured:
    """A command's peak RSS in MB, and its one line if it refused."""

    mb: float
    refused: str | None


def measured(command: list[str], src: str | None = None) -> Measured:
    """The command's maximum resident set size under ``/usr/bin/time -v``, in MB.

    ``src``: put first on the path (another checkout's code).
    """
    env = dict(os.environ, PYTHONPATH=src) if src else None
    run = subprocess.run(["/usr/bin/time", "-v", *command], capture_output=True, text=True, env=env)
    found = re.search(r"Maximum resident set size \(kbytes\): (\d+)", run.stderr)
    assert found is not None, run.stderr[-2000:]
    lines = [line for line in run.stderr.splitlines() if line.startswith("inspect-gaia:")]
    assert run.returncode == 0 or lines, run.stderr[-2000:]
    return Measured(int(found.group(1)) / 1024, lines[0] if lines and run.returncode else None)


def peak_mb(command: list[str]) -> float:
    """The command's peak RSS in MB; it must succeed."""
    result = measured(command)
    assert result.refused is None, result.refused
    return result.mb


def report(target: Path) -> list[str]:
    """``inspect-gaia report TARGET --format json`` in a new interpreter."""
    run = "from inspect_gaia._cli.main import main; main()"
    return [sys.executable, "-c", run, "report", str(target), "--format", "json"]


def unpacked_mib(paths: list[Path]) -> float:
    """What the logs unpack to, as their archives say."""
    return sum(i.file_size for p in paths for i in zipfile.ZipFile(p).infolist()) / MiB


def events_table(events: int, mib: float) -> None:
    """The first table: every field against the reader, on the events log."""
    with tempfile.TemporaryDirectory() as tmp:
        path = big_log(Path(tmp), events, mib)
        unpacked = unpacked_mib([path])
        code = f"from inspect_ai.log import read_eval_log; read_eval_log({str(path)!r})"
        full = peak_mb([sys.executable, "-c", code])
        ours = peak_mb(report(path))
        size = path.stat().st_size / MiB
    print(f"log: 4 samples, each {events} model calls of {mib:g} MiB more:")
    print(f"{size:.1f} MiB on disk, {unpacked:.0f} MiB unpacked\n")
    print("| read | peak RSS |\n| --- | --- |")
    print(f"| every field (`read_eval_log`) | {full:.0f} MB |")
    print(f"| `inspect-gaia report` | {ours:.0f} MB |")
    print(f"\nratio: {full / ours:.1f}x")


def _shown(result: Measured) -> str:
    return f"{result.mb:.0f} MB" + (f" (refused: `{result.refused}`)" if result.refused else "")


def hostile_table(args: argparse.Namespace) -> None:
    """The hostile log, or a folder of them: ``report`` here, and before if asked."""
    count = args.folder or 1
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "logs"
        folder.mkdir()
        first = hostile_log(
            folder / "hostile-0.eval",
            size_mb=args.size,
            samples=args.samples,
            sample_mib=args.sample_mib,
        )
        paths = [first] + [
            Path(shutil.copyfile(first, folder / f"hostile-{n}.eval")) for n in range(1, count)
        ]
        target = folder if args.folder else paths[0]
        on_disk = sum(p.stat().st_size for p in paths) / 1e6
        unpacked = unpacked_mib(paths)
        after = measured(report(target))
        before = measured(report(target), args.before) if args.before else None
    what = f"a folder of {count} logs" if args.folder else "one log"
    print(
        f"{what}, each {args.samples} samples of {args.sample_mib:g} MiB of tool output: "
        f"{on_disk:.1f} MB on disk, {unpacked:.0f} MiB unpacked in all\n"
    )
    print("| `inspect-gaia report` | peak RSS |\n| --- | --- |")
    if before is not None:
        print(f"| before | {_shown(before)} |")
    print(f"| now | {_shown(after)} |")
    if before is not None:
        print(f"\nratio before / now: {before.mb / after.mb:.1f}x")


def messages_table(messages: int, before: str | None) -> None:
    """One sample of ``messages`` tiny messages: ``report`` here, and before if asked."""
    with tempfile.TemporaryDirectory() as tmp:
        path = messages_log(Path(tmp) / "messages.eval", messages)
        on_disk = path.stat().st_size / 1e6
        unpacked = unpacked_mib([path])
        after = measured(report(path))
        earlier = measured(report(path), before) if before else None
    print(
        f"one log, one sample of {messages:,} tiny messages: {on_disk:.1f} MB on disk, "
        f"{unpacked:.0f} MiB unpacked\n"
    )
    print("| `inspect-gaia report` | peak RSS |\n| --- | --- |")
    if earlier is not None:
        print(f"| before | {_shown(earlier)} |")
    print(f"| now | {_shown(after)} |")
    if earlier is not None:
        print(f"\nratio before / now: {earlier.mb / after.mb:.1f}x")


def main() -> None:
    """Write the log(s), measure, print a Markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=12, help="model calls added to each sample")
    parser.add_argument("--mib", type=float, default=4.0, help="input of each call, MiB")
    parser.add_argument("--hostile", action="store_true", help="one hostile log (see above)")
    parser.add_argument("--folder", type=int, default=0, help="a folder of this many hostile logs")
    parser.add_argument("--size", type=float, default=21.0, help="each hostile log, MB on disk")
    parser.add_argument("--samples", type=int, default=16, help="samples of each hostile log")
    parser.add_argument(
        "--sample-mib", type=float, default=240.0, help="tool output of each sample, MiB"
    )
    parser.add_argument("--before", help="another checkout's src, measured in the same run")
    parser.add_argument("--messages", type=int, default=0, help="one sample of this many messages")
    args = parser.parse_args()
    if args.messages:
        messages_table(args.messages, args.before)
    elif args.hostile or args.folder:
        hostile_table(args)
    else:
        events_table(args.events, args.mib)


if __name__ == "__main__":
    main()
