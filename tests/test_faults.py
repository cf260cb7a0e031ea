"""Sandbox faults end a sample as a scored, retryable error: never a skipped or inflated sample."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from inspect_ai import eval_retry
from inspect_ai.log import read_eval_log
from inspect_ai.util import SandboxUnavailableError

from inspect_gaia import gaia
from inspect_gaia.defaults import SandboxKind
from inspect_gaia.sandboxes.docker.spares import is_spare
from inspect_gaia.sandboxes.faults import (
    SandboxLostError,
    SandboxStartError,
    UnstartedSandbox,
    ending_on_sandbox_loss,
    start_or_stand_in,
    unread_sample_file,
)
from support.scripted_model import Entry
from tests.helpers import Play, docker_leftovers, eval_command, eval_task, inspect_cli, metrics
from tests.scenario import GAIA_MEDIA, GAIA_TINY, LAGOON, VALIDATION
from tests.spare_engine import SpareEngine, engine_env


def test_a_failed_start_stands_in_with_its_cause() -> None:
    async def fails() -> dict[str, object]:
        raise ConnectionError("socket gone")

    environments = anyio.run(start_or_stand_in, fails(), lambda ex: f"cause: {ex}")  # type: ignore[arg-type]
    stand_in = environments["default"]
    assert isinstance(stand_in, UnstartedSandbox) and stand_in.start_failure == "cause: socket gone"
    with pytest.raises(SandboxUnavailableError, match="cause: socket gone"):
        anyio.run(stand_in.exec, ["true"])
    anyio.run(stand_in.write_file, "/shared_files/x", b"dropped")  # set-up copies are dropped


def test_a_sample_file_inspect_could_not_read_is_named_and_never_copied(tmp_path: Path) -> None:
    """Issue #17 finding 5: inspect copies a host path it cannot read as that path's text."""
    attachment = tmp_path / "visits.csv"
    attachment.write_text("gallery,visitors\n")
    files = {"/shared_files/visits.csv": str(attachment)}
    assert unread_sample_file("/shared_files/visits.csv", b"gallery,visitors\n", files) is None
    assert unread_sample_file("/tmp/setup.sh", str(attachment), files) is None  # not a file
    own = tmp_path / "own.txt"
    own.write_text(str(own))  # a file that holds its own path is read as itself
    assert unread_sample_file("/x/own.txt", str(own).encode(), {"/x/own.txt": str(own)}) is None

    attachment.unlink()
    problem = unread_sample_file("/shared_files/visits.csv", str(attachment).encode(), files)
    assert problem is not None and "\n" not in problem
    assert problem.startswith("Attachment /shared_files/visits.csv could not be copied")
    assert f"{attachment}, cannot be read (No such file or directory)" in problem
    assert "inspect eval-retry" in problem
    through_a_file = own / "visits.csv"  # unreadable: its parent is a file
    problem = unread_sample_file(
        "/shared_files/visits.csv",
        str(through_a_file),
        {"/shared_files/visits.csv": str(through_a_file)},
    )
    assert problem is not None and "(Not a directory)" in problem


def test_a_lost_sandbox_ends_the_sample_instead_of_becoming_a_tool_error() -> None:
    from inspect_ai.tool import Tool, ToolDef, tool

    @tool
    def probe() -> Tool:
        async def execute(command: str) -> str:
            """Run a command.

            Args:
                command: The command.
            """
            raise SandboxUnavailableError("container gone")

        return execute

    wrapped = ending_on_sandbox_loss(probe())
    original, kept = ToolDef(probe()), ToolDef(wrapped)
    # every field the registry keeps, whatever ToolDef holds: a field is never dropped by a list
    assert {k: v for k, v in vars(kept).items() if k != "tool"} == {
        k: v for k, v in vars(original).items() if k != "tool"
    }
    with pytest.raises(SandboxLostError, match="container gone"):
        anyio.run(lambda: wrapped(command="ls"))
    assert not issubclass(SandboxLostError, SandboxUnavailableError)
    assert issubclass(SandboxStartError, RuntimeError)


# -- an attachment gone between dataset load and sample start ----------------------------------------

VISITS = "9410e454-b071-52ff-ac24-dce9845bebd0"
PICTURE = "d67aa2fa-a092-5c3e-85b2-886b5f88479e"
"""gaia-media's png question (its answer 30416879)."""


@pytest.mark.docker
@pytest.mark.parametrize("multimodal", [False, True], ids=["text", "multimodal"])
def test_an_attachment_gone_before_its_sample_starts_is_a_scored_retryable_error(
    sandbox_image: str, sandbox_kind: SandboxKind, multimodal: bool, scripted: Play, tmp_path: Path
) -> None:
    """Issue #17 finding 5: inspect copied the missing file's host path in as the file's text, and
    the sample ran as if nothing happened (multimodal: it ended unscored, the file unnamed)."""
    before = docker_leftovers()
    root = tmp_path / "gaia"
    shutil.copytree(GAIA_MEDIA if multimodal else GAIA_TINY, root)
    gone_id, other_id = (PICTURE, None) if multimodal else (VISITS, LAGOON)
    split = root / "2023" / "validation"
    (attachment,) = split.glob(f"{gone_id}.*")
    question = "number written in the attached image" if multimodal else "visitors per gallery"
    model = scripted(
        [
            Entry(question, [{"bash": f"cat /shared_files/{attachment.name}"}, {"submit": "x"}]),
            *VALIDATION,
        ]
    )
    task = gaia(
        dataset_path=str(root),
        image=sandbox_image,
        sandbox=sandbox_kind,
        multimodal=multimodal,
        ids=[i for i in (gone_id, other_id) if i],
    )
    kept = attachment.rename(tmp_path / attachment.name)  # gone after the dataset loaded
    log = eval_task(task, tmp_path / "logs")

    assert log.status == "error" and log.samples is not None
    gone = next(s for s in log.samples if s.id == gone_id)
    assert gone.error is not None and "\n" not in gone.error.message.strip()
    assert f"Attachment /shared_files/{attachment.name} could not be copied" in gone.error.message
    assert f"{attachment}, cannot be read (No such file or directory)" in gone.error.message
    assert gone.scores is not None and gone.scores["gaia_scorer"].value == "I"
    assert question not in model.calls, "the sample ends before any model call"
    for other in (s for s in log.samples if s.id != gone_id):
        assert other.error is None and other.scores is not None
        assert other.scores["gaia_scorer"].value == "C"
    assert docker_leftovers() == before

    kept.rename(attachment)
    model.entries = [Entry(question, [{"submit": "30416879" if multimodal else "48671"}])]
    model.calls.clear()
    (retried,) = eval_retry(log, log_dir=str(tmp_path / "retry"), display="none")
    assert retried.status == "success" and model.calls == [question]
    assert metrics(retried)["accuracy"] == 1.0
    assert docker_leftovers() == before


# -- the engine stops mid-run (a test-only engine) ---------------------------------------------------


@pytest.fixture
def spare_engine(sandbox_image: str) -> Iterator[SpareEngine]:
    """A fresh test-only engine with the sandbox image (never restarted: see spare_engine.py)."""
    # a short path: containerd's sockets under it must fit in 104 characters
    engine = SpareEngine(Path(tempfile.mkdtemp(prefix="gaia-spare-")))
    try:
        engine.start()
        engine.load_image(sandbox_image)
        yield engine
    finally:
        engine.remove()


def _slowly(entries: list[Entry]) -> list[Entry]:
    """The same answers, each after a few seconds' bash command."""
    return [Entry(e.match, [{"bash": "sleep 3; echo waited"}, *e.steps]) for e in entries]


def _containers_seen(engine: SpareEngine, seen: set[str]) -> set[str]:
    """The samples' containers seen so far (a run's spare is no sample's until one takes it)."""
    names = engine.docker("ps", "-a", "--format", "{{.Names}}", check=False).stdout.split()
    return seen | {n for n in names if n.startswith(("gaia-", "inspect-")) and not is_spare(n)}


@pytest.mark.docker
@pytest.mark.slow
def test_the_engine_stopping_mid_run_leaves_every_sample_scored(
    spare_engine: SpareEngine,
    sandbox_image: str,
    sandbox_kind: SandboxKind,
    scripted: Play,
    tmp_path: Path,
) -> None:
    """Issue #10 finding 2: samples that could not start got no score, and accuracy read 1.000."""
    before = docker_leftovers()
    model = scripted(_slowly(VALIDATION))
    run = subprocess.Popen(
        [
            *eval_command(
                [f"dataset_path={GAIA_TINY}", f"image={sandbox_image}", f"sandbox={sandbox_kind}"],
                tmp_path / "logs",
            ),
            "--max-samples",
            "1",
        ],
        env=engine_env(spare_engine),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        seen: set[str] = set()
        deadline = time.monotonic() + 180
        while len(seen) < 3 and time.monotonic() < deadline and run.poll() is None:
            seen = _containers_seen(spare_engine, seen)
            time.sleep(0.2)
        assert len(seen) >= 3, "two samples never finished: " + (
            run.communicate(timeout=60)[0][-3000:] if run.poll() is not None else "still running"
        )
        time.sleep(1)  # the third sample is inside its command
        spare_engine.stop()
        output, _ = run.communicate(timeout=300)
    finally:
        if run.poll() is None:
            run.kill()
    assert "Traceback" not in output, output[-3000:]

    (log_file,) = (tmp_path / "logs").glob("*.eval")
    log = read_eval_log(str(log_file))
    assert log.samples is not None and len(log.samples) == 7
    assert all(s.scores and "gaia_scorer" in s.scores for s in log.samples), "every one scored"
    failed = [s for s in log.samples if s.error is not None]
    finished = [s for s in log.samples if s.error is None]
    assert len(finished) >= 2 and len(failed) >= 4
    assert log.status == "error"
    correct = sum(s.scores["gaia_scorer"].value == "C" for s in finished if s.scores)
    scores = metrics(log)
    assert scores["accuracy"] == pytest.approx(correct / 7), "the denominator is every sample"
    assert {"level1_accuracy", "level2_accuracy", "level3_accuracy"} <= scores.keys()
    for sample in failed:
        assert sample.scores is not None and sample.scores["gaia_scorer"].value == "I"
        message = sample.error.message if sample.error else ""
        assert "\n" not in message.strip(), message
    not_started = [
        s
        for s in failed
        if s.scores and (s.scores["gaia_scorer"].metadata or {}).get("sandbox") == "not started"
    ]
    assert len(not_started) >= 3
    for sample in not_started:
        assert sample.error is not None
        assert "Docker Engine stopped answering during the run" in sample.error.message
        assert "inspect eval-retry" in sample.error.message

    # With an engine answering again (the shared one: a stopped dockerd is not restarted on
    # its data root, see spare_engine.py), eval-retry reruns exactly the failed samples.
    model.calls.clear()
    retry = subprocess.run(
        [inspect_cli(), "eval-retry", str(log_file), "--log-dir", str(tmp_path / "retry")],
        capture_output=True,
        text=True,
    )
    assert retry.returncode == 0, retry.stdout[-3000:] + retry.stderr[-3000:]
    (retried_file,) = (tmp_path / "retry").glob("*.eval")
    retried = read_eval_log(str(retried_file))
    assert retried.status == "success" and retried.samples is not None
    asked = {next(e.match for e in VALIDATION if e.match in str(s.input)) for s in failed}
    assert set(model.calls) == asked
    assert metrics(retried)["accuracy"] == pytest.approx(6 / 7)
    assert docker_leftovers() == before
