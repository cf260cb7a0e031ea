"""What the host reads of an untrusted snapshot: damaged metadata named, only own attachments."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from inspect_gaia import GaiaDatasetError, gaia
from inspect_gaia.defaults import SandboxKind
from inspect_gaia.questions.dataset import gaia_dataset
from tests.helpers import rewrite_record
from tests.scenario import CREW, VALIDATION_DIR, VISITS

# --- damaged snapshots: one line naming the file and the fix --------------------------------------


def test_missing_attachment_is_named(gaia_tiny: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(gaia_tiny, copy)
    victim = next((copy / "2023" / "validation").glob("*.csv"))
    victim.unlink()
    with pytest.raises(GaiaDatasetError, match=f"attachment '{victim.name}' of task .* is missing"):
        gaia_dataset(dataset_path=str(copy))


def test_damaged_metadata_is_named(gaia_tiny: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(gaia_tiny, copy)
    (copy / "2023" / "validation" / "metadata.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(GaiaDatasetError, match="cannot read GAIA metadata"):
        gaia_dataset(dataset_path=str(copy))


def test_non_utf8_jsonl_is_named(tmp_path: Path) -> None:
    split = tmp_path / VALIDATION_DIR
    split.mkdir(parents=True)
    (split / "metadata.jsonl").write_bytes(b'{"task_id": "t", "Question": "caf\xe9"}\n')
    with pytest.raises(GaiaDatasetError, match=r"metadata.jsonl: not UTF-8 text \(byte 33\)"):
        gaia_dataset(dataset_path=str(tmp_path))


def test_an_empty_parquet_is_called_empty_not_damaged(snapshot: Path) -> None:
    path = snapshot / VALIDATION_DIR / "metadata.parquet"
    pq.write_table(pq.read_table(path).slice(0, 0), path)
    with pytest.raises(GaiaDatasetError, match="holds no questions") as caught:
        gaia_dataset(dataset_path=str(snapshot))
    assert "damaged" not in str(caught.value)


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        ("attachment_is_dir", "is missing from"),
        ("corrupt", "cannot read GAIA metadata"),
        ("truncated", "cannot read GAIA metadata"),
        ("empty_split", "is not a GAIA snapshot"),
    ],
)
def test_damaged_snapshots_are_named(snapshot: Path, damage: str, message: str) -> None:
    split = snapshot / VALIDATION_DIR
    metadata = split / "metadata.parquet"
    if damage == "attachment_is_dir":
        xlsx = next(split.glob("*.xlsx"))
        xlsx.unlink()
        xlsx.mkdir()
    elif damage == "corrupt":
        metadata.write_bytes(b"PAR1\x00garbage")
    elif damage == "truncated":
        metadata.write_bytes(metadata.read_bytes()[: metadata.stat().st_size // 2])
    else:
        for item in split.iterdir():
            item.unlink()
    with pytest.raises(GaiaDatasetError, match=message) as caught:
        gaia(dataset_path=str(snapshot))
    assert "\n" not in str(caught.value)


# --- untrusted snapshots: nothing but the sample's own attachment may reach a sandbox -------------


@pytest.fixture
def host_secret(tmp_path: Path) -> Path:
    secret = tmp_path / "outside" / "token"
    secret.parent.mkdir()
    secret.write_text("hf_not_for_sandboxes")
    secret.chmod(0o600)
    return secret


@pytest.mark.parametrize("kind", ["docker", "compose"])
@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("absolute", "is not a plain file name in the split's directory"),
        ("dotdot", "is not a plain file name in the split's directory"),
        ("symlink", "links outside the snapshot"),
        ("metadata", "is a metadata file (it holds every answer)"),
        ("symlink_to_metadata", "links to a metadata file"),
        ("other_task", "is another task's attachment"),
        ("shared", "one task's file would reach another's sandbox"),
    ],
)
def test_hostile_attachments_are_refused_before_any_sandbox(
    snapshot: Path, host_secret: Path, case: str, message: str, kind: SandboxKind
) -> None:
    """Issue #10 finding 1: these names used to copy host files (or every answer) in."""
    split = snapshot / VALIDATION_DIR
    own = split / f"{VISITS}.csv"
    if case == "absolute":
        rewrite_record(snapshot, VISITS, file_name=str(host_secret))
    elif case == "dotdot":
        rewrite_record(snapshot, VISITS, file_name=f"../../../outside/{host_secret.name}")
    elif case == "symlink":
        own.unlink()
        own.symlink_to(host_secret)
    elif case == "metadata":
        rewrite_record(snapshot, VISITS, file_name="metadata.parquet")
    elif case == "symlink_to_metadata":
        own.unlink()
        own.symlink_to(split / "metadata.parquet")
    elif case == "other_task":
        rewrite_record(snapshot, VISITS, file_name=f"{CREW}.json")
    elif case == "shared":
        (split / "notes.txt").write_text("shared")
        rewrite_record(snapshot, VISITS, file_name="notes.txt")
        rewrite_record(snapshot, CREW, file_name="notes.txt")
    with pytest.raises(GaiaDatasetError) as caught:
        gaia(dataset_path=str(snapshot), sandbox=kind)
    text = str(caught.value)
    assert message in text and "\n" not in text
    assert VISITS in text  # the sample is named


def test_a_symlink_inside_the_snapshot_is_followed(snapshot: Path) -> None:
    """A link that stays inside the snapshot is fine (mirrors deduplicate files so)."""
    split = snapshot / VALIDATION_DIR
    own = split / f"{VISITS}.csv"
    store = snapshot / "store"
    store.mkdir()
    own.rename(store / "visits.csv")
    own.symlink_to(store / "visits.csv")
    (sample,) = gaia_dataset(ids=(VISITS,), dataset_path=str(snapshot))
    assert sample.files == {f"/shared_files/{VISITS}.csv": str((store / "visits.csv").resolve())}


def test_a_hugging_face_cache_snapshot_may_link_to_its_blobs(
    gaia_tiny: Path, tmp_path: Path
) -> None:
    repo = tmp_path / "datasets--gaia-benchmark--GAIA"
    root = repo / "snapshots" / "682dd723"
    shutil.copytree(gaia_tiny, root)
    (repo / "blobs").mkdir()
    own = root / VALIDATION_DIR / f"{VISITS}.csv"
    blob = repo / "blobs" / "0a1b2c"
    own.rename(blob)
    own.symlink_to(Path("../../../../blobs/0a1b2c"))
    (sample,) = gaia_dataset(ids=(VISITS,), dataset_path=str(root))
    assert sample.files == {f"/shared_files/{VISITS}.csv": str(blob.resolve())}
