"""Reading inspect_gaia's logs: every field checked, one line per problem.

The damaged logs of the table go through the reader and through every subcommand that reads logs
(``report``, ``compare``, ``submission``): each is one line naming the log, the sample and the field.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import MODEL, invoke, write_log
from scenario import EVALSCOPE_RUN

from inspect_gaia import GaiaError
from inspect_gaia.inspect_logs import LogProblem, read_inspect_log, read_inspect_logs

SAMPLES = [
    {"id": "a", "level": 1, "target": "1", "answer": "1", "value": "C"},
    {"id": "b", "level": 1, "target": "2", "answer": "3", "value": "I"},
    {"id": "c", "level": 2, "target": "x", "answer": "x", "value": "C"},
    {"id": "d", "level": 2, "target": "y", "answer": "", "value": "I", "error": "boom"},
    {"id": "e", "level": 3, "target": "z", "answer": "", "value": "I", "limit": "message"},
]
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
    runs = read_inspect_logs([tmp_path / "logs"])
    assert sorted(Path(run.source).name for run in runs) == ["a.eval", "b.eval"]
    assert all(Path(run.source).is_file() for run in runs)
    (tmp_path / "empty").mkdir()
    with pytest.raises(GaiaError, match="no inspect logs"):
        read_inspect_logs([tmp_path / "empty"])


def test_the_same_log_twice_is_read_once(tmp_path: Path) -> None:
    log = write_log(tmp_path / "logs" / "a.eval", SAMPLES)
    assert len(read_inspect_logs([log, tmp_path / "logs", str(log)])) == 1


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
