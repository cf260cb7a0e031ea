"""The benchmarks' synthetic GAIA snapshot and the scripted trajectories run on it.

One snapshot serves both harnesses: GAIA's parquet layout (``2023/validation/metadata.parquet``
with every attachment beside it), which inspect_gaia reads with ``-T dataset_path=``, plus a
``README.md`` whose YAML ``configs:`` block names the subsets evalscope loads with
``datasets.load_dataset(dir, name=SUBSET, split="validation")`` (``2023_all`` and
``2023_level1..3``, each with its own parquet file, as on the Hugging Face hub). Without that block
evalscope fails with "BuilderConfig '2023_all' not found".

Question ``i`` (task id ``bench-NNNN``) asks about the 20-line attachment ``bench-NNNN.txt``; its
answer is ``20``. The scripted model names the file itself (``wc -l < /shared_files/NAME``) since
evalscope mounts the whole split directory at ``/shared_files`` and inspect_gaia copies only the
sample's own attachment there: the same command is right in both.
"""

from __future__ import annotations

import io
import json
import random
import zipfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from support.scripted_model import Entry, ScriptedModel, Step

SUBSET_README = """---
configs:
{configs}
---
Synthetic GAIA-format data written by inspect_gaia's benchmarks (benchmarks/fixture.py).
"""


def task_id(i: int) -> str:
    """The task id of question ``i``."""
    return f"bench-{i:04d}"


def _config(name: str, path: str) -> str:
    return f'- config_name: {name}\n  data_files:\n  - split: validation\n    path: "{path}"'


MIXED_KINDS = ("txt", "csv", "json", "py", "xlsx", "png", "pdf", "mp3")
"""The mixed-work fixture's attachment types, in turn (GAIA's commonest; binary ones are sized
like GAIA's: a zip container for xlsx, 1-2 MB of bytes for images and audio)."""


def attachment(kind: str, i: int) -> bytes:
    """Question ``i``'s attachment of type ``kind`` (text kinds: 20 lines)."""
    rows = range(20)
    if kind == "csv":
        return "".join(f"{n},sample {i},{n * i}\n" for n in rows).encode()
    if kind == "json":
        lines = [json.dumps({"row": n, "sample": i}) for n in rows]
        return ("[" + ",\n".join(lines) + "]\n").encode()
    if kind == "py":
        return "".join(f"value_{n} = {n * i}\n" for n in rows).encode()
    if kind == "xlsx":
        data = io.BytesIO()
        with zipfile.ZipFile(data, "w") as archive:
            archive.writestr("xl/worksheets/sheet1.xml", "<row/>\n" * 20)
        return data.getvalue()
    if kind in ("png", "mp3"):
        return random.Random(i).randbytes((1 if kind == "png" else 2) * 1024 * 1024)
    if kind == "pdf":
        return b"%PDF-1.4\n" + b"".join(f"% line {n}\n".encode() for n in range(19))
    return f"line for sample {i}\n".encode() * 20


def file_name(i: int, kinds: tuple[str, ...]) -> str:
    """Question ``i``'s attachment name."""
    return f"{task_id(i)}.{kinds[i % len(kinds)]}"


def write_dataset(
    root: Path, questions: int, attachments: int, kinds: tuple[str, ...] = ("txt",)
) -> Path:
    """A synthetic GAIA snapshot at ``root``, for inspect_gaia and evalscope alike.

    ``questions`` rows, the first ``attachments`` with a file of the ``kinds`` in turn (by
    default a 20-line .txt); inspect_gaia reads it with ``dataset_path``, evalscope through its
    local hub (the README's ``configs:``).
    """
    split = root / "2023" / "validation"
    split.mkdir(parents=True, exist_ok=True)
    rows = []
    for i in range(questions):
        name = file_name(i, kinds) if i < attachments else ""
        if name:
            (split / name).write_bytes(attachment(kinds[i % len(kinds)], i))
        rows.append(
            {
                "task_id": task_id(i),
                "Question": f"Benchmark question {i}: how many lines has the attached file?",
                "Level": str(1 + i % 3),
                "Final answer": "20",
                "file_name": name,
                "file_path": f"2023/validation/{name}" if name else "",
                "Annotator Metadata": {
                    "Steps": "",
                    "Number of steps": "",
                    "How long did this take?": "",
                    "Tools": "",
                    "Number of tools": "",
                },
            }
        )
    pq.write_table(pa.Table.from_pylist(rows), split / "metadata.parquet")
    configs = [_config("2023_all", "2023/validation/metadata.parquet")]
    for level in "123":
        subset = [row for row in rows if row["Level"] == level]
        if subset:
            name = f"metadata.level{level}.parquet"
            pq.write_table(pa.Table.from_pylist(subset), split / name)
            configs.append(_config(f"2023_level{level}", f"2023/validation/{name}"))
    (root / "README.md").write_text(SUBSET_README.format(configs="\n".join(configs)))
    return root


def scripted_model(
    questions: int, bash_turns: int, latency: float = 0.0, spread: int = 0
) -> ScriptedModel:
    """Each question: ``bash_turns`` calls of ``wc -l`` on its attachment, then submit the output.

    A sample makes ``bash_turns + 1`` model calls; the answer submitted is ``20`` (correct). With
    ``spread``, question ``i`` makes ``bash_turns_of(i, bash_turns, spread)`` calls instead.
    """
    entries = []
    for i in range(questions):
        command: Step = {"bash": f"wc -l < /shared_files/{task_id(i)}.txt"}
        turns = bash_turns_of(i, bash_turns, spread)
        steps: list[Step] = [command] * turns + [{"submit_output": True}]
        # The colon keeps "question 1:" from matching "question 12: ...".
        entries.append(Entry(f"Benchmark question {i}:", steps))
    return ScriptedModel(entries, latency=latency)


def bash_turns_of(i: int, bash_turns: int, spread: int) -> int:
    """Question ``i``'s bash turns: ``bash_turns`` give or take up to ``spread``.

    Every offset from ``-spread`` to ``spread`` comes once in each ``2 * spread + 1`` questions, in
    a mixed order, so the samples that start together do not all end together.
    """
    return bash_turns + (i * 37) % (2 * spread + 1) - spread


def mixed_model(questions: int, kinds: tuple[str, ...] = MIXED_KINDS) -> ScriptedModel:
    """Each question: six commands on its attachment of any type, then the answer (7 replies).

    A directory listing, a byte dump, a size, a hash in Python, a type-aware read in Python (csv,
    json, zip, or lines) and a line count: what an agent's first look at a GAIA file is like.
    """
    entries = []
    for i in range(questions):
        path = f"/shared_files/{file_name(i, kinds)}"
        read = (
            "import csv, json, sys, zipfile; p = sys.argv[1]; "
            "print(len(list(csv.reader(open(p)))) if p.endswith('.csv') else "
            "len(json.load(open(p))) if p.endswith('.json') else "
            "len(zipfile.ZipFile(p).namelist()) if zipfile.is_zipfile(p) else "
            "sum(1 for _ in open(p, 'rb')))"
        )
        steps: list[Step] = [
            {"bash": "ls -la /shared_files"},
            {"bash": f"head -c 64 {path} | od -c | head -n 3"},
            {"bash": f"wc -c {path}"},
            {
                "bash": "python3 -c 'import hashlib, sys; "
                f'print(hashlib.sha256(open(sys.argv[1], "rb").read()).hexdigest())\' {path}'
            },
            {"bash": f'python3 -c "{read}" {path}'},
            {"bash": f"grep -c '' {path}"},
            {"submit": "20"},
        ]
        entries.append(Entry(f"Benchmark question {i}:", steps))
    return ScriptedModel(entries)
