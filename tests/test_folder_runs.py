"""A log folder kept for a week: a `--limit 2` look, a full run, an `--epochs 2` run and a retry.

`report` shows separate runs of equal settings as separate groups labelled by run, `--latest`
keeps the newest complete one, and `compare` takes one run of the folder and says which. Files
named one by one are still read strictly. On logs written here without a run; a real `inspect
eval` pair into one folder is the Docker test at the end.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from inspect_gaia import GaiaError
from inspect_gaia.logs.evalscope import read_evalscope_run
from inspect_gaia.logs.read import read_inspect_logs
from inspect_gaia.logs.results import group_runs
from support.scripted_model import Entry
from tests.helpers import MODEL, Play, eval_command, invoke, overall, report_json, write_log
from tests.scenario import EVALSCOPE_RUN, GAIA_MINI, GAIA_TINY

VISITS_RIGHT = [Entry("visitors per gallery", [{"submit": "48671"}])]

SNAPSHOT = ("--dataset-path", str(GAIA_MINI))


def _samples(epochs: int = 1, errored: str | None = None) -> list[dict[str, Any]]:
    """gaia-mini's questions answered as the evalscope fixture answered them."""
    return [
        {
            "id": s.task_id,
            "level": s.level,
            "target": s.target,
            "answer": s.answer,
            "value": "C" if s.correct and s.task_id != errored else "I",
            "epoch": epoch,
            **({"error": "model API gone"} if s.task_id == errored else {}),
        }
        for s in read_evalscope_run(EVALSCOPE_RUN).samples
        for epoch in range(1, epochs + 1)
    ]


def week(folder: Path) -> dict[str, Path]:
    """The README's week in one log folder, each log as inspect names it (time first)."""
    folder.mkdir(parents=True, exist_ok=True)
    first = _samples()[0]["id"]
    errored = _samples()[2]["id"]

    def log(day: int, name: str, samples: list[dict[str, Any]], **options: Any) -> Path:
        created = f"2026-12-0{day}T10:00:00+00:00"
        path = folder / f"2026-12-0{day}T10-00-00+00-00_gaia_{name}.eval"
        return write_log(path, samples, created=created, run_id=name, **options)

    return {
        "look": log(1, "look", _samples()[:2], limit=2),
        "full": log(2, "full", _samples(errored=errored), status="error"),
        "twice": log(3, "twice", _samples(epochs=2), epochs=2),
        # inspect eval-retry of the full run: its task id, every sample, the errored one rerun
        "retry": log(4, "full", _samples()),
        "first": folder / first,  # not a file: the id of the question every run asked
    }


def test_a_folder_of_a_week_reports_each_run(tmp_path: Path) -> None:
    logs = week(tmp_path / "logs")
    code, out, err = invoke("report", str(tmp_path / "logs"), "--format", "json")
    assert code == 0 and err == "", err
    groups = {g["group"]: g for g in json.loads(out)["groups"]}
    assert set(groups) == {
        f"{MODEL} [run 2026-12-01 10:00 look]",
        f"{MODEL} [run 2026-12-02 10:00 full]",
        f"{MODEL} [epochs=2]",  # other settings: a group of its own, as before
    }
    look, full = (
        groups[f"{MODEL} [run 2026-12-01 10:00 look]"],
        groups[f"{MODEL} [run 2026-12-02 10:00 full]"],
    )
    assert (
        look["run"] == "run 2026-12-01 10:00 look" and groups[f"{MODEL} [epochs=2]"]["run"] is None
    )
    assert (overall(look)["questions"], overall(full)["questions"]) == (2, 9)
    # the full run and its retry are one run: the retried sample replaced the errored one
    assert full["logs"] == [str(logs["full"]), str(logs["retry"])]
    assert (overall(full)["errored"], overall(full)["accuracy"]) == (0, pytest.approx(6 / 9))
    assert full["flags"] == [] and look["flags"] == []
    # the terminal shows the labels too
    code, out, _ = invoke("report", str(tmp_path / "logs"))
    assert code == 0 and "run 2026-12-01 10:00 look" in out


def test_latest_keeps_the_newest_complete_run_and_names_the_rest(tmp_path: Path) -> None:
    logs = week(tmp_path / "logs")
    code, out, err = invoke("report", str(tmp_path / "logs"), "--latest", "--format", "json")
    assert code == 0
    groups = json.loads(out)["groups"]
    # the run kept still says which it is
    assert sorted(g["group"] for g in groups) == [
        f"{MODEL} [epochs=2]",
        f"{MODEL} [run 2026-12-02 10:00 full]",
    ]
    assert err.splitlines() == [
        f"left out by --latest: {MODEL} run 2026-12-01 10:00 look (2 questions, 1 log, --limit "
        f"or --sample-id): {logs['look']}"
    ]


def test_the_latest_line_shows_a_model_name_s_escapes_never_obeys_them(tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    evil = "openai/x\x1b]0;PWNED\x07\x1b[2J"
    for day, limit in ((1, 2), (2, None)):
        path = folder / f"2026-12-0{day}T10-00-00+00-00_gaia_r{day}.eval"
        created = f"2026-12-0{day}T10:00:00+00:00"
        write_log(
            path,
            _samples()[: limit or 9],
            model=evil,
            created=created,
            run_id=f"r{day}",
            limit=limit,
        )
    code, _, err = invoke("report", str(folder), "--latest", "--format", "json")
    assert code == 0 and "left out by --latest: openai/x\\x1b]0;PWNED\\x07\\x1b[2J" in err
    assert "\x1b" not in err and "\x07" not in err


def test_latest_prefers_a_full_run_to_a_newer_look(tmp_path: Path) -> None:
    """A `--limit 10` look after the full run is not what a user means by the latest result."""
    folder = tmp_path / "logs"
    folder.mkdir()
    write_log(folder / "a.eval", _samples(), created="2026-12-01T10:00:00+00:00", run_id="full")
    later = write_log(
        folder / "b.eval", _samples()[:2], created="2026-12-02T10:00:00", run_id="look", limit=2
    )
    document = report_json(str(folder), "--latest")
    (group,) = document["groups"]
    assert overall(group)["questions"] == 9 and group["logs"] == [str(folder / "a.eval")]
    code, _, err = invoke("report", str(folder), "--latest", "--format", "json")
    assert err.strip().endswith(str(later))
    # a newer complete run wins, and an unfinished one does not
    write_log(folder / "c.eval", _samples(), created="2026-12-03T10:00:00", run_id="rerun")
    write_log(
        folder / "d.eval",
        _samples()[:3],
        created="2026-12-04T10:00:00",
        run_id="cut",
        status="cancelled",
    )
    (group,) = report_json(str(folder), "--latest")["groups"]
    assert group["logs"] == [str(folder / "c.eval")]


def test_files_named_one_by_one_are_still_refused(tmp_path: Path) -> None:
    logs = week(tmp_path / "logs")
    code, _, err = invoke("report", str(logs["look"]), str(logs["full"]))
    assert code == 1 and len(err.strip().splitlines()) == 1
    assert f"is in both {logs['look']} and {logs['full']}" in err
    assert "name one of them, or their folder" in err and "report them" not in err
    with pytest.raises(GaiaError, match="separate runs of one model and settings"):
        group_runs(read_inspect_logs([logs["look"], logs["full"]]).runs)


def test_level_runs_then_a_full_run_then_level_runs_again(tmp_path: Path) -> None:
    """Runs that ask none of the same questions pool; asking one again starts the next run."""
    folder = tmp_path / "logs"
    folder.mkdir()
    samples = _samples()
    for day, level in ((1, 1), (2, 2), (3, 3), (5, 1)):
        write_log(
            folder / f"l{level}-{day}.eval",
            [s for s in samples if s["level"] == level],
            run_id=f"l{level}-{day}",
            created=f"2026-12-0{day}T10:00:00",
            params={"level": level},
            task=f"inspect_gaia/gaia_level{level}",
        )
    write_log(folder / "all.eval", samples, run_id="all", created="2026-12-04T10:00:00")
    groups = group_runs(*_read(folder))
    assert [(g.run, len(g.runs), len(g.samples)) for g in groups] == [
        ("run 2026-12-01 10:00 l1-1 +2", 3, 9),
        ("run 2026-12-04 10:00 all", 1, 9),
        ("run 2026-12-05 10:00 l1-5", 1, 3),
    ]


def _read(folder: Path) -> tuple[Any, frozenset[str]]:
    found = read_inspect_logs([folder])
    return found.runs, found.in_folder


def test_compare_takes_one_run_of_the_folder_and_says_which(tmp_path: Path) -> None:
    logs = week(tmp_path / "logs")
    code, out, err = invoke(
        "compare", str(tmp_path / "logs"), str(EVALSCOPE_RUN), *SNAPSHOT, "--format", "json"
    )
    assert code == 0, err
    document = json.loads(out)
    # the newest run started is the --epochs 2 one; the retry of the full run came later, but
    # a retry does not make its run newer
    assert document["a"]["logs"] == [str(logs["twice"])] and document["a"]["epochs"] == 2
    assert err.splitlines() == [
        f"A: took {MODEL} [epochs=2] run 2026-12-03 10:00 twice (9 questions, 1 log): "
        f"{logs['twice']}",
        f"A: left out {MODEL} [epochs=1] run 2026-12-02 10:00 full (9 questions, 2 logs): "
        f"{logs['full']}",
        f"A: left out {MODEL} [epochs=1] run 2026-12-01 10:00 look (2 questions, 1 log, --limit "
        f"or --sample-id): {logs['look']}",
    ]
    # without the --epochs 2 run, the full run and its retry
    logs["twice"].unlink()
    document = json.loads(
        invoke(
            "compare", str(logs["full"].parent), str(EVALSCOPE_RUN), *SNAPSHOT, "--format", "json"
        )[1]
    )
    assert document["a"]["logs"] == [str(logs["full"]), str(logs["retry"])]
    assert document["levels"][-1]["n"] == 9


def test_compare_refuses_a_folder_of_two_models(tmp_path: Path) -> None:
    write_log(tmp_path / "a.eval", _samples())
    write_log(tmp_path / "b.eval", _samples(), model="openai/gpt-4o")
    code, _, err = invoke("compare", str(tmp_path), str(EVALSCOPE_RUN), *SNAPSHOT)
    assert code == 1 and len(err.strip().splitlines()) == 1
    assert f"holds runs of 2 models ({MODEL}, openai/gpt-4o) — give one model's logs" in err


def test_skipped_files_are_named_as_the_folder_was(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.chdir(tmp_path)
    week(Path("logs"))
    (Path("logs") / "2026-12-09T10-00-00+00-00_gaia_x.eval").write_text("not a zip")
    code, _, err = invoke("report", "logs", "--latest")
    assert code == 0
    assert "skipped logs/2026-12-09T10-00-00+00-00_gaia_x.eval: not an inspect log" in err
    assert "): logs/2026-12-01T10-00-00+00-00_gaia_look.eval" in err
    assert os.sep + "logs" + os.sep not in err.replace(f" logs{os.sep}", " ")


@pytest.mark.docker
def test_a_real_look_then_a_real_run_in_one_folder(
    sandbox_image: str, scripted: Play, tmp_path: Path
) -> None:
    """Two `inspect eval`s into inspect's default ./logs, as the README's Usage suggests."""
    scripted([Entry("invented lagoon", [{"submit": "Quillfeather Lagoon"}]), *VISITS_RIGHT])
    task_args = [f"dataset_path={GAIA_TINY}", f"image={sandbox_image}", "level=1"]
    for extra in (["--limit", "1"], []):
        run = subprocess.run(
            [*eval_command(task_args, tmp_path / "logs"), *extra],
            capture_output=True,
            text=True,
            cwd=tmp_path,
        )
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    code, out, err = invoke("report", str(tmp_path / "logs"), "--format", "json")
    assert code == 0, err
    runs = sorted((overall(g)["questions"], g["run"][:4]) for g in json.loads(out)["groups"])
    assert runs == [(1, "run "), (2, "run ")]
    code, out, err = invoke("report", str(tmp_path / "logs"), "--latest", "--format", "json")
    (group,) = json.loads(out)["groups"]
    assert (overall(group)["questions"], overall(group)["accuracy"]) == (2, 1.0)
    (left,) = err.splitlines()
    assert (
        left.startswith(f"left out by --latest: {MODEL} run ")
        and "(1 question, 1 log, --limit" in left
    )
