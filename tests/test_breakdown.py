"""Where a run fails: attachment types, annotator steps and tools, near misses per level."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from inspect_gaia.logs.breakdown import (
    attachment_type,
    breakdown,
    steps_bucket,
    tool_categories,
    where_it_fails,
)
from inspect_gaia.logs.results import SampleResult
from support.scripted_model import Entry
from tests.helpers import Play, eval_gaia, invoke


def notes(steps: str, tools: str) -> dict[str, Any]:
    return {"annotator_metadata": {"Number of steps": steps, "Tools": tools}}


@pytest.mark.parametrize(
    ("file_name", "kind"),
    [
        ("", "none"),
        ("x.xlsx", "spreadsheet"),
        ("x.CSV", "spreadsheet"),
        ("x.png", "image"),
        ("x.jpg", "image"),
        ("x.pdf", "pdf"),
        ("x.docx", "document"),
        ("x.pptx", "document"),
        ("x.mp3", "audio/video"),
        ("x.mov", "audio/video"),
        ("x.txt", "text/code"),
        ("x.py", "text/code"),
        ("x.jsonld", "text/code"),
        ("x.pdb", "text/code"),
        ("x.zip", "archive"),
        ("x.xyz", "other"),
    ],
)
def test_attachment_types(file_name: str, kind: str) -> None:
    assert attachment_type({"file_name": file_name}) == kind


def test_no_file_name_recorded_is_unknown() -> None:
    assert attachment_type({"level": 1}) == "unknown"


@pytest.mark.parametrize(
    ("steps", "bucket"),
    [("1", "1-3"), ("3", "1-3"), ("4", "4-6"), ("10", "7-10"), ("11", "11+"), ("", "unknown")],
)
def test_step_buckets(steps: str, bucket: str) -> None:
    assert steps_bucket(notes(steps, "None")) == bucket
    assert steps_bucket({"Annotator Metadata": {"Number of steps": steps}}) == bucket


@pytest.mark.parametrize(
    ("tools", "categories"),
    [
        ("1. Web browser\n2. Search engine", ["web browsing", "search"]),
        ("1. Python\n2. Calculator", ["coding"]),
        ("1. Image recognition tools\n2. Speech-to-text", ["multimodality"]),
        ("1. Microsoft Excel\n2. PDF viewer", ["file reading"]),
        ("None", ["none"]),
        ("1. No tools required", ["none"]),
        ("", ["none"]),
        ("1. A crystal ball", ["unknown"]),
    ],
)
def test_tool_categories(tools: str, categories: list[str]) -> None:
    assert tool_categories(notes("1", tools)) == categories


def test_no_annotator_metadata_is_unknown() -> None:
    assert tool_categories({"file_name": ""}) == ["unknown"]
    assert steps_bucket({}) == "unknown"


def sample(task_id: str, correct: bool, epoch: int = 1, **metadata: Any) -> SampleResult:
    return SampleResult(
        task_id=task_id,
        level=int(metadata.pop("level", 1)),
        target="x",
        answer="x" if correct else "y",
        correct=correct,
        epoch=epoch,
        metadata=metadata,
    )


def test_accuracy_per_category_is_the_mean_over_questions_of_epoch_means() -> None:
    web = notes("2", "1. Web browser\n2. Python")
    samples = [
        sample("a", True, 1, file_name="a.xlsx", **web),
        sample("a", False, 2, file_name="a.xlsx", **web),
        sample("b", True, 1, file_name="b.png", **notes("5", "1. OCR")),
        sample("b", True, 2, file_name="b.png", **notes("5", "1. OCR")),
        sample("c", False, 1, file_name="", **notes("12", "None")),
        sample("c", False, 2, file_name="", **notes("12", "None")),
    ]
    result = breakdown(samples)
    attachment = {row["category"]: row for row in result["attachment"]}
    assert list(attachment) == ["none", "spreadsheet", "image"]
    assert attachment["spreadsheet"] == {
        "category": "spreadsheet",
        "questions": 1,
        "samples": 2,
        "correct": 1,
        "accuracy": 0.5,
    }
    assert {row["category"]: row["accuracy"] for row in result["steps"]} == {
        "1-3": 0.5,
        "4-6": 1.0,
        "11+": 0.0,
    }
    tools = {row["category"]: row for row in result["tools"]}
    # question a needs web browsing and coding: counted in both
    assert tools["web browsing"]["questions"] == tools["coding"]["questions"] == 1
    assert tools["multimodality"]["accuracy"] == 1.0 and tools["none"]["accuracy"] == 0.0


def test_near_misses_counted_per_level() -> None:
    samples = [
        SampleResult("a", 1, "92", "92 days", False),
        SampleResult("b", 1, "48671", "48.671", False),
        SampleResult("c", 2, "Ilse, Osric", "Osric, Ilse", False),
        SampleResult("d", 2, "1299", "1298", False),
        SampleResult("e", 3, "root", "root", True),
    ]
    misses = where_it_fails(samples)["near_misses"]
    assert misses["levels"] == [
        {"level": "1", "near_misses": 2, "questions": 2},
        {"level": "2", "near_misses": 1, "questions": 1},
        {"level": "3", "near_misses": 0, "questions": 0},
        {"level": "all", "near_misses": 3, "questions": 3},
    ]
    assert [(m["task_id"], m["rule"]) for m in misses["items"]] == [
        ("a", "units_currency"),
        ("b", "thousands_separators"),
        ("c", "list_order"),
    ]


KINDS = Path(__file__).parent / "fixtures" / "gaia-kinds"
CSV = "/shared_files/4cfbf02a-7657-5b7d-9049-202f5b2f7b94.csv"
SCRIPT = "/shared_files/2e6ceee7-bd42-51a2-bc5b-6ff020d92af6.py"
KINDS_ANSWERS = [
    Entry("kiln bricks", [{"submit": "48.671"}]),  # L1 48671: thousands_separators
    Entry("kiln sheet", [{"bash": f"tail -n 1 {CSV} | cut -d, -f2"}, {"submit_output": True}]),
    Entry("glaze picture", [{"submit": "92 days"}]),  # L2 92: units_currency
    Entry("kiln memo", [{"submit": "St Petersburg, Oslo"}]),  # L2: case_spaces
    Entry("kiln recording", [{"submit": "The Harbour Mill Renovation"}]),  # L2: articles
    Entry("kiln film", [{"submit": "Osric, Ilse"}]),  # L3: list_order
    Entry("kiln script", [{"bash": f"python3 {SCRIPT}"}, {"submit_output": True}]),  # L3: right
    Entry("archive hold", [{"submit": "1298"}]),  # L3 1299: simply wrong
]


@pytest.mark.docker
def test_a_real_run_broken_down(sandbox_image: str, scripted: Play, tmp_path: Path) -> None:
    """gaia-kinds: one question per attachment type; one wrong answer per near-miss rule."""
    scripted(KINDS_ANSWERS)
    log = eval_gaia(tmp_path / "logs", dataset_path=str(KINDS), image=sandbox_image)
    assert log.status == "success"
    code, out, err = invoke("report", log.location, "--format", "json")
    assert code == 0, err
    (group,) = json.loads(out)["groups"]
    assert group["levels"][-1]["accuracy"] == 2 / 8  # near misses stay wrong
    parts = group["breakdown"]
    assert {
        row["category"]: (row["questions"], row["accuracy"]) for row in parts["attachment"]
    } == {
        "none": (1, 0.0),
        "spreadsheet": (1, 1.0),
        "image": (1, 0.0),
        "pdf": (1, 0.0),
        "audio/video": (2, 0.0),
        "text/code": (1, 1.0),
        "archive": (1, 0.0),
    }
    assert {row["category"]: row["accuracy"] for row in parts["steps"]} == {
        "1-3": 0.5,
        "4-6": 0.0,
        "7-10": 0.0,
        "11+": 0.5,
    }
    assert {row["category"]: (row["questions"], row["accuracy"]) for row in parts["tools"]} == {
        "web browsing": (1, 0.0),
        "search": (1, 0.0),
        "coding": (2, 0.5),  # Python; Calculator
        "multimodality": (3, 0.0),
        "file reading": (3, pytest.approx(1 / 3)),  # Excel; PDF viewer; a file interface
    }
    misses = group["near_misses"]
    assert [(m["level"], m["rule"]) for m in misses["items"]] == [
        (1, "thousands_separators"),
        (2, "units_currency"),  # sorted by level, then task id
        (2, "articles"),
        (2, "case_spaces"),
        (3, "list_order"),
    ]
    assert [row["near_misses"] for row in misses["levels"]] == [1, 3, 1, 5]
    code, out, _ = invoke("report", log.location, "--breakdown", "--format", "markdown")
    assert code == 0 and "| attachment | audio/video | 2 | 2 | 0 | 0.0000 |" in out
    assert "near misses per level: 1: 1, 2: 3, 3: 1, all: 5" in out
