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


def write_dataset(root: Path, questions: int, attachments: int) -> Path:
    """A synthetic GAIA snapshot at ``root``, for inspect_gaia and evalscope alike.

    ``questions`` rows, the first ``attachments`` with a 20-line .txt file; inspect_gaia reads it
    with ``dataset_path``, evalscope through its local hub (the README's ``configs:``).
    """
    split = root / "2023" / "validation"
    split.mkdir(parents=True, exist_ok=True)
    rows = []
    for i in range(questions):
        file_name = f"{task_id(i)}.txt" if i < attachments else ""
        if file_name:
            (split / file_name).write_text(f"line for sample {i}\n" * 20)
        rows.append(
            {
                "task_id": task_id(i),
                "Question": f"Benchmark question {i}: how many lines has the attached file?",
                "Level": str(1 + i % 3),
                "Final answer": "20",
                "file_name": file_name,
                "file_path": f"2023/validation/{file_name}" if file_name else "",
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


def scripted_model(questions: int, bash_turns: int, latency: float = 0.0) -> ScriptedModel:
    """Each question: ``bash_turns`` calls of ``wc -l`` on its attachment, then submit the output.

    A sample makes ``bash_turns + 1`` model calls; the answer submitted is ``20`` (correct).
    """
    entries = []
    for i in range(questions):
        command: Step = {"bash": f"wc -l < /shared_files/{task_id(i)}.txt"}
        steps: list[Step] = [command] * bash_turns + [{"submit_output": True}]
        # The colon keeps "question 1:" from matching "question 12: ...".
        entries.append(Entry(f"Benchmark question {i}:", steps))
    return ScriptedModel(entries, latency=latency)
