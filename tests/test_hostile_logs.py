"""Readers that treat logs as hostile (issue #32): one line, bounded memory, no hang, no markup.

Every hostile file is made here: zip bombs named ``.eval`` (one that says its size, one that
lies), a FIFO, a symlink to ``/dev/zero``, JSON nested 100,000 deep, escape sequences and Markdown
in a model's name and answers, EvalScope folders of two models or with a question twice.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import threading
import time
import zipfile
from pathlib import Path

import pytest

from inspect_gaia.logs import files
from inspect_gaia.logs.files import FLOOR, MAX_SAMPLE, check_log
from inspect_gaia.logs.read import LogProblem, read_inspect_log
from tests.helpers import TWO_SAMPLES, invoke, write_log
from tests.helpers_hostile import ESCAPES, MiB, deep_json, zip_bomb
from tests.scenario import EVALSCOPE_RUN

INTERNALS = ("Traceback", "RecursionError", "MemoryError", "Errno", "EOCD", "validation error")


@pytest.fixture(scope="module")
def bombs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A log, and zip bombs made of it: one saying it unpacks too far, one lying that it does not."""
    root = tmp_path_factory.mktemp("bombs")
    log = write_log(root / "log.eval", TWO_SAMPLES)
    return {
        "log": log,
        "says": zip_bomb(log, root / "says.eval", FLOOR + 16 * MiB),
        "lies": zip_bomb(log, root / "lies.eval", FLOOR + 16 * MiB, says=1000),
    }


def _one_line(code: int, out: str, err: str, *says: str) -> None:
    """One line on stderr, saying each of ``says`` (or the first of ``a|b``), no internals."""
    assert code in (1, 2) and out == "", (code, out, err)
    assert err.count("\n") == 1 and err.startswith("inspect-gaia"), err
    for words in says:
        assert any(w in err for w in words.split("|")), err
    for internal in INTERNALS:
        assert internal not in err, err


@pytest.mark.parametrize("which", ["says", "lies"])
def test_a_zip_bomb_is_refused_before_it_is_unpacked(which: str, bombs: dict[str, Path]) -> None:
    bomb = bombs[which]
    _one_line(*invoke("report", str(bomb)), str(bomb), "zip bomb", "leave it out")
    _one_line(*invoke("compare", str(bomb), str(bombs["log"])), "zip bomb")
    # in a folder it is skipped with its reason, and the good log is read
    code, out, err = invoke("report", str(bomb.parent), "--format", "json")
    assert code == 0 and f"skipped {bomb}: " in err and "zip bomb" in err
    assert [len(g["logs"]) for g in json.loads(out)["groups"]] == [1]


def test_a_sample_over_its_limit_is_refused_whatever_the_archives_size(tmp_path: Path) -> None:
    log = write_log(tmp_path / "log.eval", TWO_SAMPLES)
    with zipfile.ZipFile(log, "a") as archive:  # a large archive may unpack further in all …
        archive.writestr("padding.bin", os.urandom(2 * MiB))
    bomb = zip_bomb(log, tmp_path / "big.eval", MAX_SAMPLE + MiB)
    with pytest.raises(LogProblem, match="bomb_epoch_1.json unpacks to 257 MB, over the 256 MB"):
        read_inspect_log(bomb)  # … but no sample beyond its own limit


def test_real_logs_pass_the_checks(bombs: dict[str, Path]) -> None:
    check_log(bombs["log"])  # no exception: a regular file, within every size


@pytest.mark.timeout(60)  # a hang guard: a FIFO named .eval blocked the reader forever
@pytest.mark.parametrize("kind", ["fifo", "device", "loop"])
def test_a_log_that_is_no_regular_file_is_refused_without_opening_it(
    kind: str, tmp_path: Path
) -> None:
    path = tmp_path / ("run.eval" if kind == "fifo" else "run.json")
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "device":
        path.symlink_to("/dev/zero")
    else:
        path.symlink_to(path)
    says = {
        "fifo": "a FIFO",
        "device": "a character device",
        "loop": "cannot be read (Too many levels of symbolic links)|does not exist",
    }[kind]
    for command in (["report", str(path)], ["compare", str(path), str(EVALSCOPE_RUN)]):
        _one_line(*invoke(*command), says)


def test_deeply_nested_json_is_one_line(tmp_path: Path) -> None:
    deep = deep_json(100_000)
    log = tmp_path / "deep.json"
    log.write_text('{"version": 2, "eval": ' + deep + "}")
    _one_line(*invoke("report", str(log)), "nested too deeply")
    answers = tmp_path / "answers.jsonl"
    answers.write_text(json.dumps({"task_id": "a", "model_answer": "1"}) + "\n" + deep + "\n")
    _one_line(*invoke("compare", str(answers), str(EVALSCOPE_RUN)), "line 2", "nested too deeply")
    run = tmp_path / "evalscope"
    shutil.copytree(EVALSCOPE_RUN, run)
    review = next(run.glob("reviews/*/gaia_*level1.jsonl"))
    review.write_text(review.read_text() + deep + "\n")
    _one_line(*invoke("compare", str(run), str(EVALSCOPE_RUN)), "nested too deeply")
    # the user's own files too: corrected answers, prices
    corrections = tmp_path / "corrections.json"
    corrections.write_text('{"a": ' + deep + "}")
    compare = ["compare", str(EVALSCOPE_RUN), str(EVALSCOPE_RUN), "--answers", str(corrections)]
    _one_line(*invoke(*compare), "--answers", "line 1 is not")
    prices = tmp_path / "prices.yaml"
    prices.write_text("m: " + deep)
    good = write_log(tmp_path / "good.eval", TWO_SAMPLES)
    report = ["report", str(good), "--model-cost-config", str(prices)]
    _one_line(*invoke(*report), "cannot read prices", "nested too deeply")


def test_flags_of_any_shape_in_a_log_are_read_without_a_traceback(tmp_path: Path) -> None:
    odd: list[object] = [
        {"kind": ["a", "list"]},
        {"no": "kind"},
        5,
        None,
        {"kind": "omitted", "of": "refused", "where": "result", "count": "lots"},
        {"kind": "refused", "where": "result", "url": 7},
    ]
    rows = [{**TWO_SAMPLES[0], "contamination": odd}, TWO_SAMPLES[1]]
    log = write_log(tmp_path / "odd.eval", rows)
    for fmt in ("table", "json"):
        code, out, err = invoke("report", str(log), "--format", fmt, "--flagged-wrong")
        assert code == 0, err
    (group,) = json.loads(out)["groups"]
    overall = group["contamination"]["levels"][-1]
    assert (overall["flagged"], overall["refused_requests"]) == (1, 1)


def test_an_evalscope_folder_of_two_models_is_refused_and_one_models_folder_is_a_side(
    tmp_path: Path,
) -> None:
    run = tmp_path / "evalscope"
    shutil.copytree(EVALSCOPE_RUN, run)
    (model,) = (run / "reviews").iterdir()
    shutil.copytree(model, run / "reviews" / "other-model")
    _one_line(
        *invoke("compare", str(run), str(EVALSCOPE_RUN)),
        "holds the reviews of 2 models (fake-gaia, other-model)",
        f"name one model's folder, e.g. {run / 'reviews' / 'fake-gaia'}",
    )
    code, out, err = invoke("compare", str(model), str(EVALSCOPE_RUN), "--format", "json")
    assert code == 0, err
    document = json.loads(out)
    assert document["a"]["model"] == "fake-gaia"
    assert document["levels"][-1]["a_accuracy"] == document["levels"][-1]["b_accuracy"]


def test_a_question_reviewed_twice_is_refused_not_averaged(tmp_path: Path) -> None:
    run = tmp_path / "evalscope"
    shutil.copytree(EVALSCOPE_RUN, run)
    review = next(run.glob("reviews/*/gaia_*level1.jsonl"))
    first = review.read_text().splitlines()[0]
    review.write_text(review.read_text() + first + "\n")
    task_id = json.loads(first)["sample_score"]["sample_metadata"]["task_id"]
    _one_line(
        *invoke("compare", str(run), str(EVALSCOPE_RUN)),
        f"task id {task_id} is reviewed twice",
        "keep one review per question",
    )


# -- what a model wrote, shown and never obeyed --------------------------------------------------

ANSWER = "41\n# Injected heading\n![pixel](https://t.example/p.png)<img src=x onerror=alert(1)>|x|"
MODEL = f"openai-api/scripted/evil{ESCAPES}"


@pytest.fixture
def hostile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """Two runs of a model with escape sequences in its name, answering in escapes and Markdown."""
    monkeypatch.setenv("INSPECT_GAIA_CACHE_DIR", str(tmp_path / "cache"))  # no snapshot to find
    rows = [
        {"id": "a", "level": 1, "target": "41", "answer": ANSWER + ESCAPES, "value": "I"},
        {"id": "b", "level": 2, "target": "7", "answer": "7", "value": "C"},
    ]
    hub: dict[str, object] = {"dataset_path": None}  # answers: the runs' own targets
    a = write_log(tmp_path / "a.eval", rows, model=MODEL, params=hub)
    right = [{**r, "answer": r["target"], "value": "C"} for r in rows]
    b = write_log(tmp_path / "b.eval", right, params=hub)
    return a, b


def _strings(value: object) -> str:
    if isinstance(value, dict):
        return "\n".join(_strings(v) for v in value.values())
    if isinstance(value, list):
        return "\n".join(_strings(v) for v in value)
    return value if isinstance(value, str) else ""


def _no_control_codes(text: str) -> None:
    for code in ("\x1b", "\x07", "\x9b", "\r"):
        assert code not in text, repr(text)


@pytest.mark.parametrize("fmt", ["table", "markdown", "csv", "json"])
def test_escape_sequences_in_a_model_name_and_an_answer_never_reach_the_terminal(
    fmt: str, hostile: tuple[Path, Path]
) -> None:
    a, b = hostile
    for command in (["report", str(a), str(b)], ["compare", str(a), str(b)]):
        code, out, err = invoke(*command, "--format", fmt)
        assert code == 0, err
        _no_control_codes(out + err)
        shown = {"table": "\\x1b]0;pwned\\x07", "markdown": "\\\\x1b]0;pwned\\\\x07"}
        if fmt in shown:
            assert shown[fmt] in out  # shown, as text (in Markdown: its backslash escaped)
        elif fmt == "csv" and command[0] == "report":
            assert "\\x1b]0;pwned\\x07" in out
        elif fmt == "json":
            assert ESCAPES in _strings(json.loads(out))  # the data itself is kept whole


def test_an_answer_cannot_break_a_markdown_table_or_inject_markup(
    hostile: tuple[Path, Path],
) -> None:
    a, b = hostile
    code, out, err = invoke("compare", str(a), str(b), "--format", "markdown")
    assert code == 0, err
    for line in out.splitlines():
        assert not line.startswith("#") or line.startswith("### "), line
        assert not line.startswith(("![", "<", "---", "==="))
    assert "![pixel]" not in out and "<img" not in out
    (row,) = [line for line in out.splitlines() if line.startswith("| a |")]
    assert "# Injected heading" in row and "\\!\\[pixel\\]" not in row  # one row, all of it shown
    assert row.count(" | ") == 6  # seven cells: the answer's own | are escaped


@pytest.mark.slow  # new processes, and a zip bomb of 1 GB
@pytest.mark.timeout(300)
def test_report_and_compare_on_a_1_gb_zip_bomb_stay_within_a_memory_limit(tmp_path: Path) -> None:
    log = write_log(tmp_path / "log.eval", TWO_SAMPLES)
    bombs = [
        zip_bomb(log, tmp_path / "says.eval", 1024 * MiB, method=zipfile.ZIP_DEFLATED),
        zip_bomb(log, tmp_path / "lies.eval", 1024 * MiB, says=1000),
    ]
    limit = 1536 * MiB  # far more than a report needs, far less than a bomb takes
    command = Path(sys.executable).parent / "inspect-gaia"
    for bomb in bombs:
        assert bomb.stat().st_size < 1.1 * MiB
        for args in (["report", str(bomb)], ["compare", str(bomb), str(log)]):
            run = subprocess.run(
                [str(command), *args],
                capture_output=True,
                text=True,
                timeout=120,
                preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit)),
            )
            _one_line(run.returncode, run.stdout, run.stderr, "zip bomb")


@pytest.mark.timeout(120)  # a hang guard: a log swapped for a FIFO after its check hung the reader
def test_a_log_swapped_for_a_fifo_after_its_check_is_never_opened_again(tmp_path: Path) -> None:
    good = write_log(tmp_path / "good.eval", TWO_SAMPLES)
    fifo = tmp_path / "fifo.eval"
    os.mkfifo(fifo)
    race = tmp_path / "race.eval"
    race.symlink_to(good)
    stop = threading.Event()

    def flip() -> None:  # the name points at the log, then at the FIFO, every millisecond
        while not stop.is_set():
            for target in (fifo, good):
                swap = tmp_path / "swap.eval"
                swap.unlink(missing_ok=True)
                swap.symlink_to(target)
                swap.replace(race)
                time.sleep(0.001)

    flipper = threading.Thread(target=flip, daemon=True)
    flipper.start()
    outcomes: list[str] = []
    try:
        for _ in range(15):
            reader = threading.Thread(target=_read_into, args=(race, outcomes), daemon=True)
            reader.start()
            reader.join(20)
            assert not reader.is_alive(), f"the reader hung after {outcomes}"
    finally:
        stop.set()
        flipper.join()
        try:  # a hung reader is let go (with no reader waiting, there is nothing to open)
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass
    assert len(outcomes) == 15 and set(outcomes) <= {"read", "a FIFO"}, outcomes


def _read_into(path: Path, outcomes: list[str]) -> None:
    try:
        read_inspect_log(path)
        outcomes.append("read")
    except LogProblem as ex:
        outcomes.append("a FIFO" if "a FIFO" in ex.reason else ex.reason)


def test_a_json_log_too_large_to_read_whole_is_one_line_naming_the_conversion(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = write_log(tmp_path / "run.json", TWO_SAMPLES)
    monkeypatch.setattr(files, "MAX_JSON_LOG", log.stat().st_size - 1)
    code, out, err = invoke("report", str(log))
    _one_line(code, out, err, "a JSON log of", "read whole", "inspect log convert --to eval")
    monkeypatch.setattr(files, "MAX_JSON_LOG", log.stat().st_size)
    assert invoke("report", str(log))[0] == 0
