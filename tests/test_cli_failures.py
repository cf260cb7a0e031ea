"""`report --breakdown`, maj@k and question sets in the report, from fabricated logs."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from inspect_gaia.questions.dataset import split_levels
from tests.helpers import MODEL, invoke, parse_params, write_log
from tests.scenario import GAIA_TINY, LAGOON, TAVERN


def notes(steps: str, tools: str, file_name: str = "") -> dict[str, Any]:
    return {
        "file_name": file_name,
        "annotator_metadata": {"Number of steps": steps, "Tools": tools},
    }


SAMPLES = [
    # right, a spreadsheet, 2 steps, a calculator
    {"id": "s", "level": 1, "target": "48671", "answer": "48,671", "value": "C",
     "metadata": notes("2", "1. Calculator", "s.xlsx")},
    # wrong by a unit, no file, 5 steps, web browsing
    {"id": "u", "level": 1, "target": "92", "answer": "92 days", "value": "I",
     "metadata": notes("5", "1. Web browser\n2. Search engine")},
    # wrong by the order, an image, 8 steps, an image tool
    {"id": "o", "level": 2, "target": "Ilse, Osric", "answer": "Osric, Ilse", "value": "I",
     "metadata": notes("8", "1. Image recognition", "o.png")},
    # simply wrong, a PDF, 12 steps, no tools
    {"id": "w", "level": 3, "target": "1299", "answer": "1298", "value": "I",
     "metadata": notes("12", "None", "w.pdf")},
]  # fmt: skip


def report(*args: str) -> tuple[int, str, str]:
    return invoke("report", *args)


def test_the_json_always_says_where_it_fails(tmp_path: Path) -> None:
    log = write_log(tmp_path / "x.eval", SAMPLES)
    code, out, _ = report(str(log), "--format", "json")
    assert code == 0
    (group,) = json.loads(out)["groups"]
    attachment = {row["category"]: row["accuracy"] for row in group["breakdown"]["attachment"]}
    assert attachment == {"none": 0.0, "spreadsheet": 1.0, "image": 0.0, "pdf": 0.0}
    steps = {row["category"]: row["questions"] for row in group["breakdown"]["steps"]}
    assert steps == {"1-3": 1, "4-6": 1, "7-10": 1, "11+": 1}
    tools = {row["category"]: row["accuracy"] for row in group["breakdown"]["tools"]}
    assert tools == {
        "web browsing": 0.0,
        "search": 0.0,
        "coding": 1.0,
        "multimodality": 0.0,
        "none": 0.0,
    }
    misses = group["near_misses"]
    assert [(m["task_id"], m["rule"]) for m in misses["items"]] == [
        ("u", "units_currency"),
        ("o", "list_order"),
    ]
    assert [row["near_misses"] for row in misses["levels"]] == [1, 1, 0, 2]
    # a near miss never changes the score
    assert group["levels"][-1]["accuracy"] == 0.25


def test_breakdown_tables(tmp_path: Path) -> None:
    log = write_log(tmp_path / "x.eval", SAMPLES)
    code, out, _ = report(str(log), "--format", "markdown")
    assert code == 0 and "Where it fails" not in out and "Near misses" not in out
    code, out, _ = report(str(log), "--format", "markdown", "--breakdown")
    assert code == 0
    assert f"### Where it fails: {MODEL}" in out
    assert "| attachment | spreadsheet | 1 | 1 | 1 | 1.0000 |" in out
    assert "| annotator tools | multimodality | 1 | 1 | 0 | 0.0000 |" in out
    assert "| u | 1 | 1 | units_currency | 92 days | 92 |" in out
    assert "near misses per level: 1: 1, 2: 1, 3: 0, all: 2" in out
    code, out, _ = report(str(log), "--breakdown")
    assert code == 0 and "Near misses" in out and "list_order" in out
    code, out, _ = report(str(log), "--format", "csv", "--breakdown")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert code == 0 and len(rows) == 4 + 4 + 5
    assert rows[0] == {
        "group": MODEL,
        "dimension": "attachment",
        "category": "none",
        "questions": "1",
        "samples": "1",
        "correct": "0",
        "accuracy": "0",
    }


def test_the_unknown_footnote_only_with_an_unknown_row(tmp_path: Path) -> None:
    known = write_log(tmp_path / "k.eval", SAMPLES)
    code, out, _ = report(str(known), "--format", "markdown", "--breakdown")
    assert code == 0 and "unknown" not in out
    bare = [{k: v for k, v in s.items() if k != "metadata"} for s in SAMPLES]
    unknown = write_log(tmp_path / "u.eval", bare, model="openai/gpt-4o")
    code, out, _ = report(str(unknown), "--format", "markdown", "--breakdown")
    assert code == 0 and "| annotator steps | unknown |" in out
    assert "unknown: the log records no attachment name or annotator metadata" in out


def test_no_near_miss_is_said(tmp_path: Path) -> None:
    log = write_log(tmp_path / "x.eval", SAMPLES[:1])
    code, out, _ = report(str(log), "--format", "markdown", "--breakdown")
    assert code == 0 and "no near miss" in out


def test_maj_at_k_beside_pass_at_k(tmp_path: Path) -> None:
    answers = {
        "a": ["12,500", "12500", "13000"],  # right twice: maj right
        "b": ["Lyon", "Paris", "lyon"],  # right once: pass@3 but not maj@3
        "c": ["7", "8", "9"],  # a three-way tie: epoch 1's answer, wrong
    }
    targets = {"a": "12500", "b": "Paris", "c": "8"}
    samples = [
        {
            "id": q,
            "level": 1,
            "target": targets[q],
            "answer": answer,
            "value": "C" if answer.replace(",", "").lower() == targets[q].lower() else "I",
            "epoch": epoch,
        }
        for q, given in answers.items()
        for epoch, answer in enumerate(given, 1)
    ]
    log = write_log(tmp_path / "e.eval", samples, epochs=3, run_id="e")
    code, out, _ = report(str(log), "--format", "json")
    everything = json.loads(out)["groups"][0]["levels"][-1]
    assert everything["pass_at_k"] == 1.0 and everything["pass_hat_k"] == 0.0
    assert everything["maj_at_k"] == 1 / 3
    assert everything["accuracy"] == 4 / 9
    code, out, _ = report(str(log), "--format", "markdown")
    # Issue #33: the vote sits beside pass@1 under a name that says it is a vote
    assert "| level | n | k | pass@1 | 95% CI | maj@k (vote) |" in out
    assert "| all | 3 | 3 | 0.4444 | 0.102–0.849 | 0.3333 |" in out
    assert "pass@1: mean over the k epochs; maj@k (vote): the most frequent answer" in out


def test_a_question_set_is_its_own_labelled_group(tmp_path: Path) -> None:
    levels = split_levels(GAIA_TINY, "validation")
    samples = [
        {"id": task_id, "level": level, "target": "x", "answer": "x", "value": "C"}
        for task_id, level in levels.items()
        if task_id != LAGOON
    ]
    write_log(tmp_path / "full.eval", samples, run_id="f")
    answers = tmp_path / "corrected.json"
    answers.write_text(json.dumps({TAVERN: "Zorblat's Tavern"}))
    params: dict[str, object] = {"exclude": LAGOON, "answers": str(answers)}
    write_log(tmp_path / "set.eval", samples, run_id="s", params=params)
    code, out, err = report(str(tmp_path), "--format", "json")
    assert code == 0, err
    groups = {g["group"]: g for g in json.loads(out)["groups"]}
    fingerprint = parse_params(**params).dataset.question_set.fingerprint()
    assert fingerprint is not None and fingerprint.startswith("exclude 1 (")
    labelled = f"{MODEL} [question_set={fingerprint}]"
    assert set(groups) == {MODEL, labelled}
    assert groups[labelled]["flags"] == ["question set: 6 of 7, 1 answer corrected"]
    assert groups[MODEL]["flags"] == []
