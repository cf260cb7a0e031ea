"""A snapshot's files as the host reads them, trusting none: the metadata file and the attachments.

A snapshot (of a hub, of a mirror, a shared ``dataset_path``, a download cut short) is not trusted.
Its metadata file is read into plain rows, and a damaged, non-UTF-8 or empty one is one line naming
the fix (``read_records``; what a row must hold is GAIA's, ``dataset.check_record``). Metadata is
read directly with pyarrow or ``datasets`` (never through the old loading script, which
``datasets`` >= 4 refuses).

An attachment is a host file that inspect copies into a sample's sandbox, so only the sample's own
may be: ``attachment_path`` resolves a record's ``file_name`` to a file inside the snapshot that is
neither a metadata file (it holds every answer) nor another task's attachment, and
``claim_attachment`` refuses one file named by two tasks. All of it is checked for every record of
a split when the dataset loads, before any sandbox starts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import GaiaDatasetError


def read_records(path: Path) -> list[dict[str, Any]]:
    """Read a metadata file into plain dicts: parquet with pyarrow, jsonl with ``datasets``.

    Parquet (every snapshot since the repository's conversion) is read with pyarrow directly:
    importing ``datasets`` costs more than reading the file. The old jsonl layout goes through
    ``datasets``' JSON reader.

    Raises:
        GaiaDatasetError: The file cannot be read, or holds no questions.
    """
    try:
        if path.suffix == ".parquet":
            import pyarrow.parquet as pq

            # ParquetFile, not read_table: read_table imports pyarrow.dataset and pandas (0.2 s)
            with pq.ParquetFile(path) as parquet:
                records: list[dict[str, Any]] = parquet.read().to_pylist()
        else:
            path.read_bytes().decode("utf-8")  # datasets' own error for this is a traceback
            import datasets

            table = datasets.Dataset.from_json(str(path), keep_in_memory=True)
            assert isinstance(table, datasets.Dataset)
            records = list(table.to_list())
    except UnicodeDecodeError as ex:
        raise GaiaDatasetError(
            f"cannot read GAIA metadata {path}: not UTF-8 text (byte {ex.start})",
            fix="the snapshot is damaged; delete it and download again",
        ) from ex
    except Exception as ex:  # pyarrow/datasets raise many types for a damaged file
        raise GaiaDatasetError(
            f"cannot read GAIA metadata {path} ({type(ex).__name__}: "
            f"{str(ex).splitlines()[0] if str(ex) else ''})",
            fix="the snapshot is damaged; delete it and download again",
        ) from ex
    if not records:
        raise GaiaDatasetError(
            f"GAIA metadata {path} holds no questions",
            fix="the snapshot is incomplete; delete it and download again",
        )
    return records


def is_metadata_file(name: str) -> bool:
    """Whether a file name is one of a split's metadata files (every answer is in them)."""
    return name.startswith("metadata") and name.endswith((".parquet", ".jsonl", ".json", ".csv"))


def claim_attachment(claimed: dict[str, str], task_id: str, file_name: str) -> None:
    """Record that task ``task_id`` names ``file_name``; ``claimed`` maps each file to its task.

    Raises:
        GaiaDatasetError: Another task of the split already names the file.
    """
    other = claimed.setdefault(file_name, task_id)
    if other != task_id:
        raise GaiaDatasetError(
            f"attachment {file_name!r} is named by tasks {other} and {task_id}: one task's file "
            "would reach another's sandbox",
            fix="fix or re-download the snapshot",
        )


def attachment_path(
    task_id: str, name: str, files_dir: Path, root: Path, task_ids: set[str]
) -> Path:
    """The host file of a task's attachment, checked to be its own and inside the snapshot.

    A snapshot is not trusted: ``name`` (the record's ``file_name``) must be a plain name in the
    split's directory (``files_dir``), a regular file whose real path (symlinks followed) stays
    inside the snapshot (or, for a Hugging Face cache snapshot, inside that repository's blobs),
    never a metadata file and never another task's attachment (``task_ids``: the split's tasks).

    Raises:
        GaiaDatasetError: Any of that does not hold, or the file is missing.
    """

    def fail(problem: str, fix: str = "fix or re-download the snapshot") -> GaiaDatasetError:
        return GaiaDatasetError(f"attachment {name!r} of task {task_id} {problem}", fix=fix)

    if "/" in name or "\\" in name or name in (".", "..") or "\x00" in name:
        raise fail("is not a plain file name in the split's directory")
    if is_metadata_file(name):
        raise fail("is a metadata file (it holds every answer)")
    stem = name.split(".", 1)[0]
    if stem != task_id and stem in task_ids:
        raise fail("is another task's attachment")
    path = files_dir / name
    if not path.is_file():
        raise fail(
            f"is missing from {files_dir}",
            "the snapshot is incomplete; delete it and download again",
        )
    real = path.resolve()
    allowed = [root.resolve()]
    if root.parent.name == "snapshots":  # a Hugging Face cache snapshot: files link to blobs/
        allowed.append((root.parent.parent / "blobs").resolve())
    if not any(real.is_relative_to(base) for base in allowed):
        raise fail(f"links outside the snapshot (to {real})")
    if is_metadata_file(real.name):
        raise fail("links to a metadata file (it holds every answer)")
    return real
