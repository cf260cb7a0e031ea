"""Named question sets: the shipped lists as documented, and the mechanism on a fixture's own set.

The shipped lists hold real GAIA task ids, which the invented fixtures do not have: each list is
checked on its own (it parses, holds the documented number of questions per level, hashes to the
documented SHA-256 and names a source with its commit); the mechanism (applied, recorded,
labelled, never pooled with another set) is checked with a set file made for gaia-tiny.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from inspect_gaia import GaiaParameterError, gaia
from inspect_gaia.logs.provenance import GaiaProvenance
from inspect_gaia.questions.named_sets import (
    DISPUTE_CLASSES,
    DISPUTED_FIELDS,
    NAMES,
    SETS_DIR,
    load_named_set,
)
from tests.helpers import SANDBOX_IMAGE, invoke, report_json, write_log
from tests.scenario import CREW, GAIA_TINY, LAGOON, TAVERN, VISITS

SHIPPED = {
    # name: (questions, per level, sha256 of the lists, source commit)
    "text-103": (
        103,
        ((1, 39), (2, 52), (3, 12)),
        "25ef40043797e5aaab1f12b2ffe902bd257dce94f7139967e2b5bb4568af1f8f",
        "991ff7775231823b2059e2409e2d9ff70c144932",
    ),
}
"""Every shipped set of kept questions, as docs/question-sets.md documents it."""

DISPUTED_SETS = {
    # name: (questions left out, sha256 of the lists)
    "undisputed": (4, "2e265116e0999f8053c326e9d0ddcc860215204f7af0e44ed4c0e35ff063b532"),
}
"""Every shipped set of disputed questions left out, as docs/question-sets.md documents it."""
DISCUSSIONS = "https://huggingface.co/datasets/gaia-benchmark/GAIA/discussions/"

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def test_the_shipped_sets_are_the_documented_ones() -> None:
    assert set(NAMES) == set(SHIPPED) | set(DISPUTED_SETS)
    docs = (Path(__file__).parent.parent / "docs" / "question-sets.md").read_text()
    for name, (count, levels, sha256, commit) in SHIPPED.items():
        named = load_named_set(name)
        ids = named.keep or named.exclude
        assert len(named.keep) == count and not named.exclude and not named.answers
        assert all(UUID.fullmatch(task_id) for task_id in ids)
        assert named.levels == levels and sum(n for _, n in levels) == count
        assert named.sha256 == sha256
        assert commit in named.source and named.source.startswith("https://github.com/")
        assert sha256 in docs and commit in docs and f"`{name}`" in docs


def test_a_shipped_file_holds_ids_and_no_question_or_answer() -> None:
    for path in SETS_DIR.glob("*.yaml"):
        data = yaml.safe_load(path.read_text())
        if "disputed" in data:
            assert set(data) <= {"name", "title", "split", "description", "source", "disputed"}
            continue
        assert set(data) <= {"name", "title", "split", "description", "source", "levels", "keep"}
        assert set(data["source"]) >= {"url", "commit", "path"}


def test_the_disputed_list_is_ids_with_a_class_and_a_source_each() -> None:
    """Exactly the documented fields per entry (never a question or an answer), each cited."""
    docs = (Path(__file__).parent.parent / "docs" / "question-sets.md").read_text()
    for name, (count, sha256) in DISPUTED_SETS.items():
        data = yaml.safe_load((SETS_DIR / f"{name}.yaml").read_text())
        entries = data["disputed"]
        assert len(entries) == count and data["split"] == "validation"
        for entry in entries:
            assert tuple(entry) == DISPUTED_FIELDS
            assert UUID.fullmatch(entry["task_id"]) and entry["class"] in DISPUTE_CLASSES
            assert entry["source"].startswith(DISCUSSIONS) and entry["read"].strip()
        named = load_named_set(name)
        assert named.exclude == tuple(sorted(e["task_id"] for e in entries))
        assert not named.keep and not named.answers and named.levels == ()
        assert named.sha256 == sha256 and sha256 in docs and f"`{name}`" in docs


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"answer": "x"}, "not exactly task_id, class, source, read"),
        ({"task_id": "not-an-id"}, "is not a GAIA task id"),
        ({"class": "boring"}, "is not one of drift, wrong gold"),
        ({"source": "thread 15"}, "has no source link"),
    ],
)
def test_a_disputed_entry_out_of_schema_is_refused(
    tmp_path: Path, change: dict[str, str], problem: str
) -> None:
    entry = {"task_id": CREW, "class": "wrong gold", "source": DISCUSSIONS + "1", "read": "title"}
    path = _disputed_set(tmp_path, [entry | change])
    with pytest.raises(GaiaParameterError, match=problem):
        load_named_set(str(path))


def _disputed_set(tmp_path: Path, entries: list[dict[str, str]], name: str = "tiny-d") -> Path:
    data = {
        "name": name,
        "split": "validation",
        "source": {"url": DISCUSSIONS},
        "disputed": entries,
    }
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _entry(task_id: str) -> dict[str, str]:
    return {"task_id": task_id, "class": "drift", "source": DISCUSSIONS + "9", "read": "title"}


def test_a_disputed_set_is_applied_labelled_and_a_new_list_never_pools(tmp_path: Path) -> None:
    first = _disputed_set(tmp_path, [_entry(CREW)])
    task = gaia(dataset_path=str(GAIA_TINY), image=SANDBOX_IMAGE, question_set=str(first))
    assert CREW not in {str(s.id) for s in task.dataset} and LAGOON in {
        str(s.id) for s in task.dataset
    }
    record = GaiaProvenance.from_metadata(task.metadata)
    assert record is not None and record.question_set is not None
    assert record.question_set.name == "tiny-d"
    # a newer list (one more disputed id) is a new version: another hash, another pool
    (tmp_path / "v2").mkdir()
    second = _disputed_set(tmp_path / "v2", [_entry(CREW), _entry(TAVERN)])
    assert load_named_set(str(second)).sha256 != load_named_set(str(first)).sha256
    logs = tmp_path / "logs"
    logs.mkdir()
    write_log(logs / "one.eval", LEVEL_1, params={"level": 1, "question_set": str(first)})
    write_log(logs / "two.eval", LEVEL_1, params={"level": 1, "question_set": str(second)})
    groups = report_json(str(logs))["groups"]
    assert len(groups) == 2
    assert all(any(f.startswith("question set tiny-d:") for f in g["flags"]) for g in groups)


LEVEL_1 = [
    {"id": LAGOON, "level": 1, "target": "x", "answer": "x", "value": "C"},
    {"id": VISITS, "level": 1, "target": "y", "answer": "z", "value": "I"},
]
"""Answers to gaia-tiny's two level-1 questions (a log's samples, written without a run)."""


def _tiny_set(tmp_path: Path, **fields: object) -> Path:
    """A set of gaia-tiny's validation split: the two level-1 questions and the crew (level 2)."""
    data: dict[str, object] = {
        "name": "tiny-3",
        "split": "validation",
        "source": {"url": "https://example.org/tiny-3/commit/abc", "commit": "abc"},
        "levels": {1: 2, 2: 1},
        "keep": [LAGOON, VISITS, CREW],
    } | fields
    path = tmp_path / "tiny-3.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_a_set_file_is_applied_recorded_and_labelled(tmp_path: Path) -> None:
    path = _tiny_set(tmp_path, answers={CREW: "seven"})
    task = gaia(dataset_path=str(GAIA_TINY), image=SANDBOX_IMAGE, question_set=str(path))
    assert sorted(str(s.id) for s in task.dataset) == sorted([LAGOON, VISITS, CREW])
    (crew,) = [s for s in task.dataset if s.id == CREW]
    assert crew.target == "seven"
    record = GaiaProvenance.from_metadata(task.metadata)
    assert record is not None and record.question_set is not None
    recorded = record.question_set
    named = load_named_set(str(path))
    assert (recorded.name, recorded.source, recorded.sha256) == (
        "tiny-3",
        "https://example.org/tiny-3/commit/abc",
        named.sha256,
    )
    assert len(recorded.exclude) == 4 and recorded.corrected == (CREW,)
    fingerprint = recorded.fingerprint()
    assert fingerprint is not None and fingerprint.startswith("tiny-3: exclude 4 (")
    # -T exclude narrows a named set further, and is part of what is pooled on
    narrower = gaia(
        dataset_path=str(GAIA_TINY), image=SANDBOX_IMAGE, question_set=str(path), exclude=CREW
    )
    assert len(narrower.dataset) == 2


def test_report_labels_the_set_and_never_pools_it_with_the_split(tmp_path: Path) -> None:
    path = _tiny_set(tmp_path)
    logs = tmp_path / "logs"
    logs.mkdir()
    write_log(logs / "full.eval", LEVEL_1, params={"level": 1})
    write_log(logs / "set.eval", LEVEL_1, params={"level": 1, "question_set": str(path)})
    groups = {g["group"]: g for g in report_json(str(logs))["groups"]}
    assert len(groups) == 2
    (labelled,) = [g for g in groups.values() if g["settings"]["question_set"]]
    assert "question set tiny-3: 2 of 2" in labelled["flags"]
    assert "question_set=tiny-3: exclude 4" in labelled["group"]
    others = [f for g in groups.values() if g is not labelled for f in g["flags"]]
    assert others == ["level 1 only"], "the set's flag is its group's alone"


def test_compare_scores_both_sides_on_a_named_set(tmp_path: Path) -> None:
    path = _tiny_set(tmp_path)
    a = write_log(tmp_path / "a.eval", LEVEL_1, params={"level": 1})
    b = write_log(tmp_path / "b.eval", LEVEL_1, params={"level": 1})
    code, out, err = invoke(
        "compare", str(a), str(b), "--question-set", str(path), "--dataset-path", str(GAIA_TINY)
    )
    assert code == 0, err
    assert "question set tiny-3: 3 of 7" in out


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (
            {"levels": {1: 2, 2: 2}},
            "its questions per level in this snapshot (level 1: 2, level 2: 1)",
        ),
        ({"keep": [LAGOON, "not-a-gaia-id"]}, "names 1 task id(s) not in the validation split"),
        ({"split": "test"}, "is a set of the test split"),
        ({"source": "nowhere"}, "source has no URL a reader can check"),
        ({"keep": [LAGOON, LAGOON]}, "keep names a task id twice"),
        ({"exclude": [TAVERN]}, "has both keep and exclude"),
        ({"levels": None}, "levels is not {level: questions}"),
        ({"split": "test", "answers": {CREW: "7"}}, "corrects answers of the test split"),
    ],
)
def test_a_set_that_does_not_match_is_refused_in_one_line(
    tmp_path: Path, fields: dict[str, object], message: str
) -> None:
    path = _tiny_set(tmp_path, **fields)
    with pytest.raises(GaiaParameterError) as caught:
        gaia(dataset_path=str(GAIA_TINY), image=SANDBOX_IMAGE, question_set=str(path))
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_a_shipped_set_on_a_snapshot_without_its_questions_is_refused() -> None:
    with pytest.raises(GaiaParameterError) as caught:
        gaia(dataset_path=str(GAIA_TINY), image=SANDBOX_IMAGE, question_set="text-103")
    assert "-T question_set=text-103 names 103 task id(s) not in the validation split" in str(
        caught.value
    )
    with pytest.raises(
        GaiaParameterError, match="neither a named set \\(text-103, undisputed\\) nor a file"
    ):
        gaia(dataset_path=str(GAIA_TINY), image=SANDBOX_IMAGE, question_set="text-104")
    code, _, err = invoke("compare", "a.eval", "b.eval", "--question-set", "text-104")
    assert code == 1 and err.startswith("inspect-gaia: --question-set=text-104 is neither")
