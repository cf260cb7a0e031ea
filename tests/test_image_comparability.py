"""Runs on different images are never pooled silently: `report` and `compare` say so (issue #33).

``python:3.11`` names whatever its owner pushed last; two runs a month apart may have run two
images. The log records the image's id and registry digest, and the identity runs are pooled on
is built from them (``imageref.identity``); logs are written here without a run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.helpers import gaia_record, invoke, report_json, write_log
from tests.scenario import CREW, GAIA_TINY, LAGOON, VISITS

OLD = "sha256:" + "1a" * 32
NEW = "sha256:" + "2b" * 32
SAMPLES = [
    {"id": LAGOON, "level": 1, "target": "x", "answer": "x", "value": "C"},
    {"id": VISITS, "level": 1, "target": "y", "answer": "z", "value": "I"},
]


def _run(path: Path, digest: str | None, image_id: str, level: int = 1) -> Path:
    record: dict[str, Any] = gaia_record(level=level)
    record |= {"image_id": image_id, "image_digest": digest}
    samples = (
        SAMPLES
        if level == 1
        else [{"id": CREW, "level": 2, "target": "7", "answer": "7", "value": "C"}]
    )
    return write_log(path, samples, metadata={"gaia": record}, run_id=path.stem)


def test_report_keeps_runs_on_two_images_apart_and_names_them(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    _run(logs / "march.eval", OLD, "sha256:" + "aa" * 32)
    _run(logs / "april.eval", NEW, "sha256:" + "bb" * 32)
    document = report_json(str(logs))
    assert document["settings_differ"] == ["image"]
    groups = sorted(g["group"] for g in document["groups"])
    assert groups == [
        "openai-api/scripted/gaia-bot [image=python:3.11 @sha256:1a1a1a1a1a1a]",
        "openai-api/scripted/gaia-bot [image=python:3.11 @sha256:2b2b2b2b2b2b]",
    ]
    assert {g["image"] for g in document["groups"]} == {
        "python:3.11 @sha256:1a1a1a1a1a1a",
        "python:3.11 @sha256:2b2b2b2b2b2b",
    }
    code, out, _ = invoke("report", str(logs))
    assert code == 0 and "groups differ in image: not directly comparable" in " ".join(out.split())
    # one image pulled on two machines (two ids, one digest) is one image: their runs pool
    _run(logs / "april-arm.eval", NEW, "sha256:" + "cc" * 32, level=2)
    document = report_json(str(logs / "april.eval"), str(logs / "april-arm.eval"))
    (group,) = document["groups"]
    assert len(group["logs"]) == 2


def test_compare_says_the_images_differ(tmp_path: Path) -> None:
    a = _run(tmp_path / "a.eval", OLD, "sha256:" + "aa" * 32)
    b = _run(tmp_path / "b.eval", NEW, "sha256:" + "bb" * 32)
    code, out, err = invoke("compare", str(a), str(b), "--dataset-path", str(GAIA_TINY))
    assert code == 0, err
    assert (
        "⚠ the runs used different images: A python:3.11 @sha256:1a1a1a1a1a1a; "
        "B python:3.11 @sha256:2b2b2b2b2b2b"
    ) in out
    same = _run(tmp_path / "c.eval", OLD, "sha256:" + "dd" * 32)
    code, out, err = invoke("compare", str(a), str(same), "--dataset-path", str(GAIA_TINY))
    assert code == 0, err
    assert "different images" not in out
