from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from inspect_gaia import (
    DEFAULT_INPUT_PROMPT,
    GaiaDatasetError,
    GaiaMetadata,
    GaiaParameterError,
)
from inspect_gaia.questions.dataset import (
    GaiaRecord,
    check_record,
    gaia_dataset,
    metadata_file,
    parse_level,
    record_to_sample,
)
from tests.helpers import rewrite_record
from tests.scenario import CREW, VALIDATION_DIR, VISITS

RECORD: dict[str, Any] = {
    "task_id": "00000000-aaaa-bbbb-cccc-000000000001",
    "Question": "How many rows does the attached sheet have?",
    "Level": "2",
    "Final answer": "17",
    "file_name": "00000000-aaaa-bbbb-cccc-000000000001.xlsx",
    "file_path": "2023/validation/00000000-aaaa-bbbb-cccc-000000000001.xlsx",
    "Annotator Metadata": {"Steps": "count", "Number of steps": "1"},
}


def _sample(raw: dict[str, Any], files_dir: Path) -> Any:
    record = check_record(raw, Path("metadata.parquet"), 1)
    return record_to_sample(record, files_dir / record.file_name if record.file_name else None)


def test_record_to_sample_with_attachment() -> None:
    sample = _sample(RECORD, Path("/data/2023/validation"))
    assert sample.id == RECORD["task_id"]
    assert sample.target == "17"
    assert sample.files == {
        "/shared_files/00000000-aaaa-bbbb-cccc-000000000001.xlsx": (
            "/data/2023/validation/00000000-aaaa-bbbb-cccc-000000000001.xlsx"
        )
    }
    assert isinstance(sample.input, str)
    assert sample.input == DEFAULT_INPUT_PROMPT.format(
        file="The following file is referenced in the question below and you will likely need to "
        "use it in order to find the correct answer: "
        "/shared_files/00000000-aaaa-bbbb-cccc-000000000001.xlsx",
        question=RECORD["Question"],
    )
    metadata = sample.metadata_as(GaiaMetadata)
    assert metadata.level == 2
    assert metadata.file_name == RECORD["file_name"]
    assert metadata.annotator_metadata == {"Steps": "count", "Number of steps": "1"}


def test_record_to_sample_without_attachment_old_layout() -> None:
    # metadata.jsonl era: integer Level, no file_path column.
    record = {
        "task_id": "t-2",
        "Question": "Name the colour.",
        "Level": 1,
        "Final answer": "teal",
        "file_name": "",
        "Annotator Metadata": None,
    }
    sample = _sample(record, Path("/data"))
    assert sample.files is None or sample.files == {}
    assert isinstance(sample.input, str)
    assert "/shared_files" not in sample.input
    assert sample.input.endswith("Here is the question:\n\nName the colour.")
    assert sample.metadata_as(GaiaMetadata).level == 1


def test_prompt_is_the_inspect_evals_and_evalscope_template() -> None:
    assert DEFAULT_INPUT_PROMPT.startswith("Please answer the question below. You should:\n\n")
    assert DEFAULT_INPUT_PROMPT.endswith("{file}\n\nHere is the question:\n\n{question}")


def test_loads_the_parquet_layout(gaia_tiny: Path) -> None:
    dataset = gaia_dataset(split="validation", dataset_path=str(gaia_tiny))
    assert len(dataset) == 7
    levels = sorted(s.metadata_as(GaiaMetadata).level for s in dataset)
    assert levels == [1, 1, 2, 2, 3, 3, 3]
    with_files = [s for s in dataset if s.files]
    assert len(with_files) == 4
    for sample in with_files:
        ((sandbox_path, host_path),) = (sample.files or {}).items()
        name = sample.metadata_as(GaiaMetadata).file_name
        assert sandbox_path == f"/shared_files/{name}"
        assert Path(host_path) == gaia_tiny / "2023" / "validation" / name
        assert Path(host_path).is_file()


def test_test_split_has_private_answers(gaia_tiny: Path) -> None:
    dataset = gaia_dataset(split="test", dataset_path=str(gaia_tiny))
    assert len(dataset) == 2
    assert {s.target for s in dataset} == {"?"}


def test_level_and_id_filters(gaia_tiny: Path) -> None:
    level3 = gaia_dataset(levels=(3,), dataset_path=str(gaia_tiny))
    assert len(level3) == 3
    assert {s.metadata_as(GaiaMetadata).level for s in level3} == {3}
    one_id = str(level3[0].id)
    picked = gaia_dataset(levels=(1, 3), ids=(one_id,), dataset_path=str(gaia_tiny))
    assert [s.id for s in picked] == [one_id]
    with pytest.raises(GaiaParameterError, match="ids not in the validation split"):
        gaia_dataset(levels=(1,), ids=(one_id,), dataset_path=str(gaia_tiny))


def _old_layout(source: Path, target: Path) -> None:
    """Rewrite a parquet snapshot as a metadata.jsonl one (integer levels, as old snapshots)."""
    for split in ("validation", "test"):
        src = source / "2023" / split
        dst = target / "2023" / split
        dst.mkdir(parents=True)
        rows = pq.read_table(src / "metadata.parquet").to_pylist()
        with (dst / "metadata.jsonl").open("w") as out:
            for row in rows:
                row.pop("file_path")
                row["Level"] = int(row["Level"])
                out.write(json.dumps(row) + "\n")
                if row["file_name"]:
                    shutil.copy(src / row["file_name"], dst / row["file_name"])


def test_loads_the_jsonl_layout_like_the_parquet_one(gaia_tiny: Path, tmp_path: Path) -> None:
    _old_layout(gaia_tiny, tmp_path / "old")
    old = gaia_dataset(dataset_path=str(tmp_path / "old"))
    new = gaia_dataset(dataset_path=str(gaia_tiny))
    assert [(s.id, s.input, s.target, s.metadata) for s in old] == [
        (s.id, s.input, s.target, s.metadata) for s in new
    ]
    assert [sorted((s.files or {}).keys()) for s in old] == [
        sorted((s.files or {}).keys()) for s in new
    ]


def test_not_a_snapshot(tmp_path: Path) -> None:
    with pytest.raises(
        GaiaDatasetError,
        match=r"is not a GAIA snapshot: no 2023/validation/metadata\.parquet .*in it — pass the "
        r"folder that holds 2023/$",
    ):
        metadata_file(tmp_path, "validation")
    with pytest.raises(GaiaDatasetError, match="is not a directory"):
        metadata_file(tmp_path / "nope", "validation")


@pytest.mark.parametrize("off", ["2023", "2023/validation", ".."])
def test_a_path_one_level_off_is_named_with_the_snapshot_it_means(
    gaia_tiny: Path, tmp_path: Path, off: str
) -> None:
    """Issue #50: `-T dataset_path=…/2023` said `expected …/2023/2023/validation/…`."""
    given = gaia_tiny / off if off != ".." else tmp_path
    if off == "..":
        (tmp_path / "GAIA").symlink_to(gaia_tiny)
        (tmp_path / "notes").mkdir()
    with pytest.raises(GaiaDatasetError) as raised:
        metadata_file(given, "validation")
    message = str(raised.value)
    assert "2023/2023" not in message and "validation/2023" not in message
    near = tmp_path / "GAIA" if off == ".." else gaia_tiny
    assert message.endswith(f"— pass the folder that holds 2023/: {near}"), message


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"split": "dev"}, "split must be one of validation, test"),
        ({"hub": "kaggle"}, "hub must be one of huggingface, modelscope"),
        # was a silently empty dataset
        ({"levels": [4]}, r"levels must be 1, 2 or 3, or a list of them — got \[4\]"),
        ({"levels": [1, 2.5]}, "levels must be 1, 2 or 3"),
        ({"levels": []}, "levels must be 1, 2 or 3"),
    ],
)
def test_bad_choices(gaia_tiny: Path, kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(GaiaParameterError, match=message):
        gaia_dataset(dataset_path=str(gaia_tiny), **kwargs)


# --- malformed metadata: one line naming the file, the row and the problem ------------------------


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"Level": ""}, "Level must be 1, 2 or 3, got ''"),
        ({"Level": None}, "Level must be 1, 2 or 3, got None"),
        ({"Level": "4"}, "Level must be 1, 2 or 3, got '4'"),
        ({"Level": "2.5"}, "Level must be 1, 2 or 3, got '2.5'"),
        ({"task_id": ""}, "task_id must be a non-empty string"),
    ],
)
def test_malformed_values_are_named(snapshot: Path, changes: dict[str, Any], message: str) -> None:
    """Issue #10 finding 7: these were tracebacks (or, for "4", a silently dropped question)."""
    rewrite_record(snapshot, VISITS, **changes)
    with pytest.raises(GaiaDatasetError) as caught:
        gaia_dataset(dataset_path=str(snapshot))
    text = str(caught.value)
    assert message in text and "metadata.parquet, row 1" in text and "\n" not in text


@pytest.mark.parametrize(
    ("value", "level"),
    [(1, 1), ("2", 2), (3.0, 3), (" 3.0 ", 3), (4, None), (0, None), (2.5, None), ("two", None)]
    + [(True, None), (None, None), ([1], None)],
)
def test_parse_level_is_the_one_reading_of_a_level(value: object, level: int | None) -> None:
    assert parse_level(value) == level


def test_level_written_as_a_float_is_read(snapshot: Path) -> None:
    rewrite_record(snapshot, VISITS, Level="1.0")
    (sample,) = gaia_dataset(ids=(VISITS,), dataset_path=str(snapshot))
    assert sample.metadata_as(GaiaMetadata).level == 1


@pytest.mark.parametrize("column", ["Level", "Final answer", "Question", "task_id"])
def test_a_missing_column_is_named(snapshot: Path, column: str) -> None:
    path = snapshot / VALIDATION_DIR / "metadata.parquet"
    pq.write_table(pq.read_table(path).drop_columns([column]), path)
    with pytest.raises(GaiaDatasetError, match=f"row 1.*no '{column}' column"):
        gaia_dataset(dataset_path=str(snapshot))


def test_duplicate_task_ids_are_named(snapshot: Path) -> None:
    rewrite_record(snapshot, CREW, task_id=VISITS, file_name="")
    with pytest.raises(GaiaDatasetError, match=f"task id\\(s\\) {VISITS} appear more than once"):
        gaia_dataset(dataset_path=str(snapshot))


def test_check_record_keeps_what_gaia_has() -> None:
    record = check_record(RECORD, Path("m.parquet"), 1)
    assert record == GaiaRecord(
        task_id=RECORD["task_id"],
        question=RECORD["Question"],
        level=2,
        answer="17",
        file_name=RECORD["file_name"],
        annotator_metadata=RECORD["Annotator Metadata"],
    )
