"""Reading inspect_gaia's logs: every field checked, one line per problem, shared folders skipped through.

The damaged logs of the table go through the reader and through every subcommand that reads logs
(``report``, ``compare``, ``submission``): each is one line naming the log, the sample and the field.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from inspect_gaia import GaiaError
from inspect_gaia.logs.read import LogProblem, read_inspect_log, read_inspect_logs
from tests.helpers import MODEL, invoke, write_log
from tests.scenario import EVALSCOPE_RUN, GAIA_MINI, GAIA_TINY

SAMPLES = [
    {"id": "a", "level": 1, "target": "1", "answer": "1", "value": "C"},
    {"id": "b", "level": 1, "target": "2", "answer": "3", "value": "I"},
    {"id": "c", "level": 2, "target": "x", "answer": "x", "value": "C"},
    {"id": "d", "level": 2, "target": "y", "answer": "", "value": "I", "error": "boom"},
    {"id": "e", "level": 3, "target": "z", "answer": "", "value": "I", "limit": "message"},
]
TINY_TEST_IDS = ("a09cd452-3bc3-5b50-aee7-f9f87624bb9f", "7ec4b1d0-7687-5166-a877-1242918506cd")
INTERNALS = ("Traceback", "EOCD", "validation error", "pydantic", "For further information")


def test_read_inspect_log(tmp_path: Path) -> None:
    run = read_inspect_log(write_log(tmp_path / "x.eval", SAMPLES))
    assert (run.model, run.split) == (MODEL, "validation")
    by_id = {s.task_id: s for s in run.samples}
    assert by_id["a"].correct and not by_id["b"].correct
    assert by_id["d"].error == "boom" and by_id["d"].failed
    assert by_id["e"].limit == "message" and by_id["e"].failed
    assert (by_id["c"].level, by_id["c"].answer, by_id["c"].target) == (2, "x", "x")
    assert run.provenance is not None and run.provenance.limits.max_attempts == 1
    assert (run.task_version, run.epochs) == ("1.0.0", 1)


def test_read_usage_time_and_epochs(tmp_path: Path) -> None:
    samples = [
        {
            **SAMPLES[0],
            "epoch": epoch,
            "input_tokens": 1000,
            "output_tokens": 50,
            "reasoning_tokens": 30,
            "cache_read": 600,
            "cache_write": 20,
            "cost": 0.004,
            "working_time": 12.5,
        }
        for epoch in (1, 2)
    ]
    run = read_inspect_log(write_log(tmp_path / "x.eval", samples, epochs=2, run_id="t1"))
    first, second = run.samples
    assert (first.epoch, second.epoch, run.epochs, run.run_id) == (1, 2, 2, "t1")
    assert [first.tokens(k) for k in ("input", "output", "reasoning", "cache_read")] == [
        1000,
        50,
        30,
        600,
    ]
    assert (first.tokens("cache_write"), first.tokens("total"), first.cost) == (20, 1050, 0.004)
    assert first.working_time == 12.5


def test_oracle_retries_are_read_from_the_provenance(tmp_path: Path) -> None:
    run = read_inspect_log(write_log(tmp_path / "x.eval", SAMPLES, params={"max_attempts": 3}))
    assert run.provenance is not None and run.provenance.limits.max_attempts == 3


def test_read_a_directory_of_logs(tmp_path: Path) -> None:
    (tmp_path / "logs" / "nested").mkdir(parents=True)
    write_log(tmp_path / "logs" / "a.eval", SAMPLES[:2])
    write_log(tmp_path / "logs" / "nested" / "b.eval", SAMPLES[2:])
    found = read_inspect_logs([tmp_path / "logs"])
    assert sorted(Path(run.source).name for run in found.runs) == ["a.eval", "b.eval"]
    assert all(Path(run.source).is_file() for run in found.runs) and found.skipped == []
    (tmp_path / "empty").mkdir()
    with pytest.raises(GaiaError, match="no inspect logs"):
        read_inspect_logs([tmp_path / "empty"])


def test_the_same_log_twice_is_read_once(tmp_path: Path) -> None:
    log = write_log(tmp_path / "logs" / "a.eval", SAMPLES)
    assert len(read_inspect_logs([log, tmp_path / "logs", str(log)]).runs) == 1


# -- files that are not inspect_gaia logs ----------------------------------------------------------


def _not_logs(directory: Path) -> dict[str, tuple[Path, str]]:
    """Files a shared log folder may hold, each with the reason it cannot be read."""
    directory.mkdir(parents=True, exist_ok=True)
    real = write_log(directory / "real.eval", SAMPLES).read_bytes()
    truncated = directory / "2026-12-03T10-00-00+00-00_gaia_cut.eval"
    truncated.write_bytes(real[: len(real) // 2])
    random = directory / "random.eval"
    random.write_bytes(b"PK\x03\x04 not really a zip")
    (directory / "real.eval").unlink()
    not_a_log = directory / "2026-12-03T10-00-00+00-00_notes_x1.json"
    not_a_log.write_text(json.dumps({"notes": "not a log"}))
    broken = directory / "2026-12-03T11-00-00+00-00_gaia_x2.json"
    broken.write_text('{"version": 2, "status": "succ')
    other = write_log(directory / "other.eval", SAMPLES, metadata={}, task="toy/arithmetic")
    return {
        "truncated": (truncated, "not an inspect log (not a zip archive, or a truncated one)"),
        "random": (random, "not an inspect log (not a zip archive, or a truncated one)"),
        "json": (not_a_log, "not an inspect log (JSON without inspect's eval header)"),
        "broken": (broken, "not an inspect log (not JSON, or truncated JSON)"),
        "other": (
            other,
            "not an inspect_gaia log (a log of toy/arithmetic, with no gaia task metadata)",
        ),
    }


@pytest.mark.parametrize("kind", ["truncated", "random", "json", "broken", "other"])
def test_a_file_that_is_not_an_inspect_gaia_log_is_one_line(tmp_path: Path, kind: str) -> None:
    path, reason = _not_logs(tmp_path)[kind]
    with pytest.raises(LogProblem) as raised:
        read_inspect_log(path)
    assert str(raised.value).startswith(f"{path}: {reason}") and "\n" not in str(raised.value)
    for command in (
        ["report", str(path)],
        ["compare", str(path), str(EVALSCOPE_RUN)],
        ["submission", str(path), "-o", str(tmp_path / "s.jsonl")],
    ):
        code, _, err = invoke(*command)
        assert code == 1 and err.count("\n") == 1, (command, err)
        assert err.startswith(f"inspect-gaia: {path}: {reason}"), (command, err)
        assert not any(internal in err for internal in INTERNALS), (command, err)


# -- damaged logs, through every subcommand -------------------------------------------------------


Edit = Callable[[dict[str, Any]], None]


def _set(*keys: str | int, value: Any = None, delete: bool = False) -> Edit:
    def edit(log: dict[str, Any]) -> None:
        target: Any = log
        for key in keys[:-1]:
            target = target[key]
        if delete:
            del target[keys[-1]]
        else:
            target[keys[-1]] = value

    return edit


def _twin(log: dict[str, Any]) -> None:
    log["samples"].append(dict(log["samples"][0]))


LEVEL = ("samples", 0, "metadata", "level")
RECORD = ("eval", "metadata", "gaia")
DAMAGED: dict[str, tuple[Edit, str]] = {
    "level two": (_set(*LEVEL, value="two"), "sample a (epoch 1): metadata.level is 'two', not a"),
    "level null": (_set(*LEVEL, value=None), "sample a (epoch 1): metadata.level is None, not a"),
    "level a list": (_set(*LEVEL, value=[1]), "sample a (epoch 1): metadata.level is [1], not a"),
    "level 2.5": (_set(*LEVEL, value=2.5), "sample a (epoch 1): metadata.level is 2.5, not a"),
    "level missing": (_set(*LEVEL, delete=True), "sample a (epoch 1): metadata.level is missing"),
    "no id": (_set("samples", 0, "id", delete=True), "sample #1 of the log: id is missing"),
    "duplicate id": (_twin, "sample a (epoch 1) is there twice"),
    "max_attempts two": (
        _set(*RECORD, "limits", "max_attempts", value="two"),
        "gaia.limits.max_attempts is 'two', not a whole number",
    ),
    "limits a list": (_set(*RECORD, "limits", value=[100]), "gaia.limits is [100], not a mapping"),
    "tools a string": (_set(*RECORD, "tools", value="bash"), "gaia.tools is 'bash', not a list"),
    "split missing": (_set(*RECORD, "split", delete=True), "gaia.split is missing"),
    "record not a mapping": (_set(*RECORD, value="gaia"), "gaia is 'gaia', not a mapping"),
}


def _damaged_log(directory: Path, edit: Edit) -> Path:
    """A real-shaped JSON log (through ``write_log``), then one field damaged as an edit would."""
    directory.mkdir(parents=True, exist_ok=True)
    path = write_log(directory / "2026-12-03T10-00-00+00-00_gaia_damaged.json", SAMPLES)
    log = json.loads(path.read_text())
    edit(log)
    path.write_text(json.dumps(log))
    return path


@pytest.mark.parametrize("damage", list(DAMAGED))
def test_a_damaged_log_is_one_line_naming_the_log_the_sample_and_the_field(
    tmp_path: Path, damage: str
) -> None:
    edit, problem = DAMAGED[damage]
    log = _damaged_log(tmp_path / "logs", edit)
    with pytest.raises(LogProblem) as raised:
        read_inspect_log(log)
    assert str(raised.value).startswith(f"{log}: {problem}") and "\n" not in str(raised.value)
    for command in (
        ["report", str(log)],
        ["report", str(log), "--format", "json"],
        ["compare", str(log), str(EVALSCOPE_RUN)],
        ["submission", str(log), "-o", str(tmp_path / "s.jsonl"), "--allow-validation"],
    ):
        code, out, err = invoke(*command)
        assert code == 1 and out == "", (command, out)
        assert err.startswith(f"inspect-gaia: {log}: {problem}"), (command, err)
        assert err.count("\n") == 1 and not any(i in err for i in INTERNALS), (command, err)
    # in a folder it is skipped, with its reason; nothing else left is one more line
    code, _, err = invoke("report", str(tmp_path / "logs"))
    lines = err.splitlines()
    assert code == 1 and len(lines) == 2 and lines[0].startswith(f"skipped {log}: {problem}")
    assert lines[1].startswith("inspect-gaia: no usable inspect_gaia log in")


# -- a shared log folder ---------------------------------------------------------------------------


def _toy_log(directory: Path) -> Path:
    """A real log of another task, run in-process with inspect's mock model."""
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.scorer import match

    (log,) = inspect_eval(
        Task(dataset=[Sample(input="say hi", target="hi")], scorer=match(), name="toy"),
        model="mockllm/model",
        log_dir=str(directory),
        display="none",
    )
    return Path(log.location)


def test_report_on_a_shared_log_folder_skips_what_is_not_a_gaia_run(tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    gaia_log = write_log(folder / "2026-12-03T09-00-00+00-00_gaia_g1.eval", SAMPLES, run_id="g1")
    toy = _toy_log(folder)
    killed = write_log(
        folder / "2026-12-03T08-00-00+00-00_gaia_k1.eval", [], run_id="k1", status="started"
    )
    others = _not_logs(folder)
    (folder / "notes.json").write_text("{}")  # not named as a log: inspect does not list it
    code, out, err = invoke("report", str(folder), "--format", "json")
    assert code == 0, err
    (group,) = json.loads(out)["groups"]
    assert group["logs"] == [str(gaia_log)] and group["levels"][-1]["questions"] == 5
    skipped = err.splitlines()
    assert sorted(skipped) == sorted(
        [f"skipped {toy}: not an inspect_gaia log (a log of toy, with no gaia task metadata)"]
        + [
            f"skipped {killed}: no sample finished before the run stopped (status started)",
        ]
        + [f"skipped {path}: {reason}" for path, reason in others.values()]
    ), err
    assert "notes.json" not in err and not any(internal in err for internal in INTERNALS)


def test_a_stopped_runs_empty_log_beside_its_eval_retry_is_left_out_without_a_word(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "logs"
    stopped = write_log(folder / "stopped.eval", [], run_id="r1", status="started")
    retry = write_log(
        folder / "retry.eval", SAMPLES, run_id="r1", created="2026-12-04T00:00:00+00:00"
    )
    for args in ([str(folder)], [str(stopped), str(retry)]):
        code, out, err = invoke("report", *args, "--format", "json")
        assert code == 0 and err == "", err
        (group,) = json.loads(out)["groups"]
        assert group["logs"] == [str(retry)] and group["flags"] == []


def test_named_files_stay_strict(tmp_path: Path) -> None:
    stopped = write_log(tmp_path / "stopped.eval", [], run_id="r1", status="started")
    code, _, err = invoke("report", str(stopped))
    assert code == 1 and err.strip() == (
        f"inspect-gaia: {stopped}: no sample finished before the run stopped (status started) — "
        f"finish it with `inspect eval-retry {stopped}`"
    )
    folder = tmp_path / "logs"
    others = _not_logs(folder)
    good = write_log(tmp_path / "good.eval", SAMPLES)
    code, _, err = invoke("report", str(good), str(others["other"][0]))
    assert code == 1 and err.count("\n") == 1 and "not an inspect_gaia log" in err
    assert "or a folder of logs (other tasks' are skipped there)" in err
    # named on its own, a file is read strictly even when its folder is named too
    truncated, reason = others["truncated"]
    for args in ([str(folder), str(truncated)], [str(truncated), str(folder)]):
        code, _, err = invoke("report", str(good), *args)
        assert code == 1 and err.startswith(f"inspect-gaia: {truncated}: {reason}"), err


def test_a_folder_with_no_usable_log_fails_in_one_more_line(tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    others = _not_logs(folder)
    code, out, err = invoke("report", str(folder))
    lines = err.splitlines()
    assert code == 1 and out == "" and len(lines) == len(others) + 1
    assert lines[-1] == (
        f"inspect-gaia: no usable inspect_gaia log in {folder} ({len(others)} file(s) skipped) — "
        "name inspect_gaia's logs, or the folder `inspect eval` wrote them to"
    )


# -- submission -------------------------------------------------------------------------------------


def _test_split_log(path: Path, ids: tuple[str, ...], dataset: Path = GAIA_TINY) -> Path:
    samples = [
        {"id": i, "level": 1, "target": "?", "answer": f"x{i[:4]}", "value": "N"} for i in ids
    ]
    return write_log(path, samples, params={"split": "test", "dataset_path": str(dataset)})


def test_submission_reads_a_log_named_twice_once(tmp_path: Path) -> None:
    log = _test_split_log(tmp_path / "t.eval", TINY_TEST_IDS)
    out_file = tmp_path / "s.jsonl"
    code, out, err = invoke("submission", str(log), str(log), "-o", str(out_file))
    assert code == 0, err
    assert sorted(json.loads(line)["task_id"] for line in out_file.read_text().splitlines()) == (
        sorted(TINY_TEST_IDS)
    )


def test_submission_names_a_few_missing_ids_and_their_count(tmp_path: Path) -> None:
    log = _test_split_log(tmp_path / "t.eval", ("d458266e-23df-591b-bd01-92ce51d255e9",), GAIA_MINI)
    code, _, err = invoke("submission", str(log), "-o", str(tmp_path / "s.jsonl"))
    assert code == 1 and err.count("\n") == 1
    assert err.startswith(
        "inspect-gaia: 3 task id(s) of the test split missing: 6d24cb8f-5443-5c24-9ac6-69bb97f0faf5, "
        "f4b6e86d-4ee3-5950-8eb8-e53fe80d1f92, 419cdd18-608d-5453-8f6d-1d340a0b25fa — give the logs"
    ), err
    none = _test_split_log(tmp_path / "none.eval", ("not-a-gaia-id",), GAIA_MINI)
    code, _, err = invoke("submission", str(none), "-o", str(tmp_path / "s.jsonl"))
    assert code == 1 and "4 task id(s) of the test split missing: " in err
    assert "419cdd18" not in err and "and 1 more — " in err
