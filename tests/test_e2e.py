"""End to end: real `inspect eval`, real Docker sandboxes, the scripted model over HTTP."""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_ai import task_with
from inspect_ai.scorer import NOANSWER

from inspect_gaia import gaia
from inspect_gaia.defaults import SandboxKind
from support.scripted_model import Entry, ScriptedModel
from tests.helpers import Play, cli_eval, docker_leftovers, eval_gaia, eval_task, metrics
from tests.leak_scan import leak_scan
from tests.scenario import (
    EXPECTED_TEST_ANSWERS,
    EXPECTED_VALIDATION,
    GAIA_MEDIA,
    GAIA_TINY,
    LAGOON,
    NEVER_SUBMITS,
)

pytestmark = pytest.mark.docker


def test_cli_run_scores_per_level_and_cleans_up(
    sandbox_image: str,
    sandbox_kind: SandboxKind,
    scripted_validation: ScriptedModel,
    tmp_path: Path,
) -> None:
    before = docker_leftovers()
    log = cli_eval(
        [f"dataset_path={GAIA_TINY}", f"image={sandbox_image}", f"sandbox={sandbox_kind}"],
        tmp_path,
    )
    assert log.status == "success"
    assert log.eval.task == "inspect_gaia/gaia"

    scores = metrics(log)
    for name, expected in EXPECTED_VALIDATION.items():
        assert scores[name] == pytest.approx(expected), name
    assert {"stderr", "level1_stderr", "level2_stderr", "level3_stderr"} <= scores.keys()

    assert log.samples is not None and len(log.samples) == 7
    for sample in log.samples:
        assert sample.error is None
        score = sample.scores["gaia_scorer"] if sample.scores else None
        assert score is not None and score.answer is not None and score.explanation
    # The sample that never submits ends on its plain-text FINAL ANSWER, scored on what it said.
    (silent,) = [s for s in log.samples if NEVER_SUBMITS in str(s.input)]
    assert silent.limit is None and len([e for e in silent.events if e.event == "model"]) == 2
    assert silent.scores is not None
    assert silent.scores["gaia_scorer"].answer == "Wrenmarrow River"
    assert silent.scores["gaia_scorer"].value == "C"
    assert silent.scores["gaia_scorer"].metadata == {"answer_source": "final_answer_marker"}
    sources = {str((s.scores or {})["gaia_scorer"].metadata) for s in log.samples}
    assert "{'answer_source': 'submit'}" in sources

    # Provenance in the log header.
    gaia_meta = (log.eval.metadata or {})["gaia"]
    assert gaia_meta["image"] == sandbox_image and str(gaia_meta["image_id"]).startswith("sha256:")
    assert gaia_meta["tools"] == ["bash", "submit"] and gaia_meta["network"] is True
    assert gaia_meta["limits"]["message_limit"] == 100 and gaia_meta["limits"]["memory"] == "4g"
    assert len(gaia_meta["prompt_template_sha256"]) == 64
    provider = {"docker": "gaia-docker", "compose": "gaia-compose"}[sandbox_kind]
    assert (gaia_meta["sandbox"], gaia_meta["sandbox_provider"]) == (sandbox_kind, provider)
    assert log.eval.sandbox is not None and log.eval.sandbox.type == provider
    assert gaia_meta["inspect_ai_version"] and gaia_meta["inspect_gaia_version"]
    assert (gaia_meta["split"], gaia_meta["levels"], gaia_meta["hub"]) == (
        "validation",
        [1, 2, 3],
        "local",
    )
    # Answers came from the attachments inside the sandboxes.
    answers = {s.scores["gaia_scorer"].answer for s in log.samples if s.scores}
    assert {"48,671", "27519", "Marisol Vantreek; Odalys Pembury; Fenwick Astolar"} <= answers

    assert docker_leftovers() == before


NOSY = "ls -la / /shared_files 2>&1; env; tr '\\0' ' ' < /proc/1/cmdline; true"


@pytest.mark.parametrize(("fixture", "questions"), [(GAIA_TINY, 7), (GAIA_MEDIA, 6)], ids=str)
def test_no_answer_is_readable_in_any_sandbox(
    sandbox_image: str,
    sandbox_kind: SandboxKind,
    fixture: Path,
    questions: int,
    scripted: Play,
    tmp_path: Path,
) -> None:
    # The agent looks around (files, environment, PID 1) but never computes an answer, so any
    # target found in the sandbox or in its events came from the harness.
    scripted([Entry("", [{"bash": NOSY}, {"submit": "unknown"}])])
    task = gaia(dataset_path=str(fixture), image=sandbox_image, sandbox=sandbox_kind)
    targets = sorted({str(s.target) for s in task.dataset})
    assert len(targets) == questions
    scanned = task_with(task, scorer=[task.scorer[0], leak_scan(targets)] if task.scorer else None)
    log = eval_task(scanned, tmp_path)
    assert log.status == "success" and log.samples is not None
    assert len(log.samples) == questions
    for sample in log.samples:
        assert sample.scores is not None
        report = sample.scores["leak_scan"]
        assert report.metadata is not None
        assert report.metadata["files"] > 1000, "the scan must cover the whole filesystem"
        assert report.metadata["processes"] >= 2, (
            "the scan must cover the processes (PID 1 and more)"
        )
        assert report.metadata["hits"] == [], f"sample {sample.id} can read an answer"
        # Nothing the sandbox did or printed (its events, the env listing) carries a target.
        # (the scan's own exec, which receives the targets on stdin, is the test's, not the run's)
        sandbox_events = [
            e
            for e in sample.events
            if e.event == "sandbox" and "json.load(sys.stdin)" not in str(getattr(e, "cmd", ""))
        ]
        assert sandbox_events, "the log must record the sandbox's events"
        dumped = "\n".join(e.model_dump_json() for e in sandbox_events)
        assert "PATH=" in dumped  # the env listing is in there
        assert not [t for t in targets if t in dumped]


def test_only_the_own_attachment_is_in_the_sandbox(
    sandbox_image: str, sandbox_kind: SandboxKind, scripted: Play, tmp_path: Path
) -> None:
    scripted(
        [Entry("", [{"bash": "find /shared_files -type f 2>&1; true"}, {"submit_output": True}])]
    )
    log = eval_gaia(
        tmp_path,
        dataset_path=str(GAIA_TINY),
        image=sandbox_image,
        level="1,2",
        sandbox=sandbox_kind,
    )
    assert log.samples is not None and len(log.samples) == 4
    for sample in log.samples:
        assert sample.scores is not None
        seen = sample.scores["gaia_scorer"].answer
        file_name = sample.metadata["file_name"]
        if file_name:
            assert seen == f"/shared_files/{file_name}"
        else:
            assert "No such file or directory" in str(seen)


def test_test_split_records_answers_without_grading(
    sandbox_image: str, scripted_test_split: ScriptedModel, tmp_path: Path
) -> None:
    log = eval_gaia(tmp_path, dataset_path=str(GAIA_TINY), image=sandbox_image, split="test")
    assert log.status == "success" and log.samples is not None
    assert log.results is not None
    assert all(not score.metrics for score in log.results.scores)
    recorded = {}
    for sample in log.samples:
        assert sample.scores is not None
        score = sample.scores["gaia_scorer"]
        assert score.value == NOANSWER
        recorded[next(k for k in EXPECTED_TEST_ANSWERS if k in str(sample.input))] = score.answer
    assert recorded == EXPECTED_TEST_ANSWERS


def test_network_false_leaves_only_loopback(
    sandbox_image: str, sandbox_kind: SandboxKind, scripted: Play, tmp_path: Path
) -> None:
    scripted(
        [Entry("", [{"bash": "ls /sys/class/net | sort | tr '\\n' ' '"}, {"submit_output": True}])]
    )
    answers: dict[bool, str] = {}
    for network in (True, False):
        log = eval_gaia(
            tmp_path,
            dataset_path=str(GAIA_TINY),
            image=sandbox_image,
            ids=LAGOON,
            network=network,
            sandbox=sandbox_kind,
        )
        assert log.samples is not None and log.samples[0].scores is not None
        answers[network] = str(log.samples[0].scores["gaia_scorer"].answer)
    assert answers[False] == "lo"
    assert "eth0" in answers[True]
