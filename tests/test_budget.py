"""One memory budget per command: files within their own limits that add up past it are one line.

And what keeps the memory of a command bounded whatever one log holds: an ``.eval``'s samples are
read one at a time (the records are the same as from the log read whole), and a record's trace is
cut in all (test_samples). The limits are lowered here (they are module constants) so that small logs cross them.
"""

from __future__ import annotations

import json
import os
import tracemalloc
import zipfile
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.log import read_eval_log

from benchmarks.reader_memory import hostile_log, messages_log
from inspect_gaia.logs import budget, parsed
from inspect_gaia.logs.budget import FEWER, OverBudget, ReadBudget, command_budget
from inspect_gaia.logs.files import check_log
from inspect_gaia.logs.read import read_inspect_log, read_inspect_logs
from inspect_gaia.logs.samples import TRACE_TOTAL, SampleTally
from tests.helpers import RUN_SAMPLES, TWO_SAMPLES, invoke, write_log
from tests.helpers_hostile import MiB


def _padded(path: Path, samples: list[dict[str, Any]], mib: int) -> Path:
    """A log of ``samples`` with ``mib`` MiB more in an extra part, far within each file's limits.

    Each of a model of its own (``openai/<file name>``): logs named together are separate runs.
    """
    write_log(path, samples, model=f"openai/{path.stem}")
    with zipfile.ZipFile(path, "a") as archive:
        archive.writestr("padding.bin", os.urandom(mib * MiB))
    check_log(path)  # within its own limits
    return path


def _one_line(code: int, out: str, err: str, *says: str) -> None:
    assert code == 1 and out == "" and err.count("\n") == 1, (code, out, err)
    assert "Traceback" not in err and all(words in err for words in says), err


def test_a_folder_of_logs_each_within_its_limits_is_one_line_over_the_commands_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    logs = [_padded(folder / f"run{n}.eval", TWO_SAMPLES, 2) for n in range(3)]
    monkeypatch.setattr(budget, "MAX_READ", 5 * MiB)  # two logs fit, the third does not
    _one_line(*invoke("report", str(folder)), "the 3 logs given: 6 MB unpacked", FEWER)
    _one_line(*invoke("report", *map(str, logs)), "more than the 5 MB one command reads")
    assert invoke("report", str(logs[0]), str(logs[1]))[0] == 0
    # refused before any is read: a log that cannot be read named first is not reached
    (tmp_path / "broken.eval").write_text("not a zip archive")
    code, out, err = invoke("report", str(tmp_path / "broken.eval"), *map(str, logs))
    _one_line(code, out, err, "the 4 logs given: ", FEWER)
    # compare: each side within the budget, both together past it (one budget for the command)
    monkeypatch.setattr(budget, "MAX_READ", 3 * MiB)
    _one_line(*invoke("compare", str(logs[0]), str(logs[1])), "MB read already", FEWER)


def test_files_that_say_nothing_of_their_size_are_counted_as_they_are_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Leaderboard files (and a log whose directory understates) are counted as they are read."""
    sides = []
    for name in ("a", "b"):
        row = {"task_id": "t1", "model_answer": "x" * (2 * MiB)}
        sides.append(tmp_path / f"{name}.jsonl")
        sides[-1].write_text(json.dumps(row) + "\n")
    monkeypatch.setattr(budget, "MAX_READ", 3 * MiB)
    code, out, err = invoke("compare", *map(str, sides))
    _one_line(code, out, err, "b.jsonl: the files read so far unpack to more than the 3 MB", FEWER)


def test_the_records_a_command_keeps_are_bounded_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = write_log(tmp_path / "run.eval", RUN_SAMPLES)
    monkeypatch.setattr(budget, "MAX_KEPT", 3 * 4096)  # three records' fixed cost: five are more
    _one_line(*invoke("report", str(log)), "of records one command keeps", FEWER)
    with pytest.raises(OverBudget, match="records"):
        read_inspect_logs([log])
    monkeypatch.setattr(budget, "MAX_KEPT", 6 * 4096)
    assert len(read_inspect_log(log).samples) == len(RUN_SAMPLES)


def test_one_budget_spans_the_reads_of_a_command_and_a_library_call_opens_its_own(
    tmp_path: Path,
) -> None:
    log = _padded(tmp_path / "run.eval", TWO_SAMPLES, 1)
    with command_budget(ReadBudget(max_read=3 * MiB // 2)) as spent:
        read_inspect_logs([log])
        assert MiB < spent.read < 3 * MiB // 2 and spent.kept > 0
        with pytest.raises(OverBudget, match="one command reads"):
            read_inspect_logs([log])  # the second read adds to the first
    read_inspect_logs([log])  # outside a command: a budget of its own, the default
    read_inspect_logs([log])


@pytest.mark.parametrize("suffix", [".eval", ".json"])
def test_samples_read_one_at_a_time_make_the_records_of_the_log_read_whole(
    tmp_path: Path, suffix: str
) -> None:
    rows = [{**row, "epoch": epoch} for epoch in (1, 2) for row in reversed(RUN_SAMPLES)]
    rows += [{"id": "f", "level": 1, "target": "t", "answer": "", "value": "I", "error": "stop"}]
    log = write_log(tmp_path / f"run{suffix}", rows, epochs=2)
    whole = SampleTally(str(log), levels_as_text=False, tools=False)
    for sample in read_eval_log(str(log)).samples or []:
        whole.add(sample)
    read = read_inspect_log(log)
    assert read.samples == whole.results and len(read.samples) == len(rows)
    assert [(s.epoch, s.task_id) for s in read.samples] == sorted(
        (s.epoch, s.task_id) for s in read.samples
    )


def test_the_reader_holds_one_sample_of_an_eval_at_a_time(tmp_path: Path) -> None:
    """Eight samples of 4 MiB each: the reader's peak is under half of them (it held all 8)."""
    log = hostile_log(tmp_path / "big.eval", size_mb=0.3, samples=8, sample_mib=4)
    tracemalloc.start()
    try:
        run = read_inspect_log(log)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(run.samples) == 8 and all(len(s.trace) < TRACE_TOTAL + 100 for s in run.samples)
    assert peak < 16 * MiB, f"{peak / MiB:.0f} MiB"


def test_max_read_gb_raises_the_commands_budget_and_takes_only_a_positive_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    logs = [_padded(tmp_path / f"run{n}.eval", TWO_SAMPLES, 2) for n in range(2)]
    monkeypatch.setattr(budget, "MAX_READ", 3 * MiB)
    _one_line(*invoke("report", *map(str, logs)), "--max-read-gb N")
    assert invoke("report", *map(str, logs), "--max-read-gb", "0.01")[0] == 0  # 10 MiB
    err = invoke("compare", *map(str, logs), "--max-read-gb", "0.01")[2]
    assert "task id(s)" in err and "one command reads" not in err  # read; then no answer key
    code, _, err = invoke("report", str(logs[0]), "--max-read-gb", "0")
    assert code == 2 and err.count("\n") == 1 and "--max-read-gb" in err, err


def test_the_records_of_leaderboard_files_count_against_the_same_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sides = []
    for name in ("a", "b"):
        rows = [{"task_id": f"t{n}", "model_answer": str(n)} for n in range(100)]
        sides.append(tmp_path / f"{name}.jsonl")
        sides[-1].write_text("".join(json.dumps(row) + "\n" for row in rows))
    monkeypatch.setattr(budget, "MAX_KEPT", 150 * budget.RECORD)  # one side's lines, not both
    code, out, err = invoke("compare", *map(str, sides))
    _one_line(code, out, err, "b.jsonl: the samples read so far come to more than", FEWER)


def test_a_sample_of_many_small_messages_is_read_without_its_transcript_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue #49 (M6): inspect builds an object of about a kilobyte per message, so a 6.2 MB log of
    2.4 million tiny messages took `report` to 3 GB. Here 20,000 messages (60,000 values) against
    a cap lowered to 30,000: read without them, in one line, and within a small peak."""
    monkeypatch.setattr(parsed, "MAX_VALUES", 30_000)
    log = messages_log(tmp_path / "messages.eval", 20_000)
    code, out, err = invoke("report", str(log), "--format", "json")
    assert code == 0, err
    (line,) = err.splitlines()
    assert line.startswith(f"note: {log}: sample ") and "60,001 values in its messages" in line
    assert "read without its transcript (its score counts" in line
    (group,) = json.loads(out)["groups"]
    assert group["levels"][-1]["samples"] == 1
    tracemalloc.start()
    try:
        run = read_inspect_log(log)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(run.samples) == 1 and run.samples[0].trace == ""
    assert peak < 12 * MiB, f"{peak / MiB:.0f} MiB"  # parsed, the messages alone took ~25 MiB


def test_a_sample_over_the_cap_without_its_transcript_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(parsed, "MAX_VALUES", 60)  # the fixture's sample holds more besides
    log = messages_log(tmp_path / "messages.eval", 10)
    _one_line(*invoke("report", str(log)), "JSON values, more than the 60 a reader parses")
