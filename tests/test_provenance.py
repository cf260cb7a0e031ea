"""The typed ``gaia`` record: written from parsed parameters, validated on reading, old logs too."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.log import read_eval_log
from pydantic import ValidationError

from inspect_gaia import DEFAULT_INPUT_PROMPT, gaia
from inspect_gaia.defaults import DEFAULT_MESSAGE_LIMIT
from inspect_gaia.logs.comparability import PROBE_FLAG, comparability_flags
from inspect_gaia.logs.provenance import (
    SCHEMA_VERSION,
    GaiaProvenance,
    ProvenanceError,
)
from inspect_gaia.logs.read import read_inspect_log
from inspect_gaia.logs.results import comparable_settings
from inspect_gaia.record import default_settings, provenance_of
from tests.helpers import MODEL, TWO_SAMPLES, gaia_record, parse_params, write_log
from tests.scenario import GAIA_TINY

OLD_LOG = Path(__file__).parent / "fixtures" / "provenance-v1.eval"
"""A real log written by inspect_gaia 0.1.0 (commit 05e62f2), before the record had a type."""


def _of(**params: object) -> GaiaProvenance:
    return provenance_of(
        parse_params(**params),
        prompt="p",
        image_id="sha256:x",
        sandbox_provider="gaia-docker",
    )


def test_the_record_of_a_run() -> None:
    record = _of(level="1,2", python=True, dataset_path="/data/GAIA", memory="2g")
    assert record.schema_version == SCHEMA_VERSION == 10 and record.final_answer_ends is True
    assert (record.split, record.levels, record.hub, record.revision) == (
        "validation",
        (1, 2),
        "local",
        "local",
    )
    assert record.tools == ("bash", "submit", "python")
    assert record.limits.message_limit == DEFAULT_MESSAGE_LIMIT == 100
    assert record.limits.memory == "2g" and record.limits.max_attempts == 1
    assert (record.sandbox, record.sandbox_provider, record.image_id) == (
        "docker",
        "gaia-docker",
        "sha256:x",
    )
    assert record.multimodal is False and record.view_file is False
    assert len(record.prompt_template_sha256) == 64
    assert record.inspect_ai_version and record.inspect_gaia_version
    pinned = _of(hub="modelscope")
    assert (pinned.hub, pinned.revision) == ("modelscope", "master")
    assert _of(multimodal=True).view_file is True
    with pytest.raises(ValidationError, match="frozen"):
        record.split = "test"


def test_a_probe_is_recorded_as_one_and_never_pooled_with_a_run_that_answered() -> None:
    answered = _of()
    probe = provenance_of(
        parse_params(), prompt="p", image_id="sha256:x", sandbox_provider="gaia-docker", probe=True
    )
    assert answered.probe is None and "probe" not in answered.as_metadata()
    assert probe.probe is True and probe.as_metadata()["probe"] is True
    assert GaiaProvenance.from_metadata({"gaia": probe.as_metadata()}) == probe
    settings = {"model": "m", "task_version": "1", "epochs": 1, "run_config": {}}
    ours, theirs = (r.comparable_settings(**settings) for r in (answered, probe))  # type: ignore[arg-type]
    assert ours["probe"] is None and theirs["probe"] is True
    assert comparability_flags(theirs)[0] == PROBE_FLAG and PROBE_FLAG not in comparability_flags(
        ours
    )


def test_the_web_tools_and_their_versions_are_recorded_only_when_offered() -> None:
    versions = {"chromium": "156.0", "playwright_mcp": "0.0.76", "mcp_server_fetch": "2026.10.24"}
    record = provenance_of(
        parse_params(browser=True, web_reader=True),
        prompt="p",
        image_id=None,
        sandbox_provider="gaia-docker",
        web_versions=versions,
    )
    assert record.web_tools is not None and record.web_tools.versions == versions
    assert record.tools[-2:] == ("browser_download", "fetch")
    written = record.as_metadata()
    assert written["web_tools"] == {"browser": True, "web_reader": True, "versions": versions}
    assert GaiaProvenance.from_metadata({"gaia": written}) == record
    # without them nothing is written, and a version-3 record (none) still reads
    plain = _of().as_metadata()
    assert "web_tools" not in plain
    older = GaiaProvenance.from_metadata({"gaia": {**plain, "schema_version": 3}})
    assert older is not None and older.web_tools is None


def test_a_run_behind_the_proxy_is_recorded_as_recorded() -> None:
    for raw in ({"web_record": True}, {"block_answer_sources": True}):
        record = _of(**raw)
        assert record.web_record is True and record.as_metadata()["web_record"] is True
        assert GaiaProvenance.from_metadata({"gaia": record.as_metadata()}) == record
    # without the proxy nothing is written, and a version-4 record (none) still reads
    plain = _of().as_metadata()
    assert "web_record" not in plain
    older = GaiaProvenance.from_metadata({"gaia": {**plain, "schema_version": 4}})
    assert older is not None and older.web_record is None


def test_the_task_writes_the_record() -> None:
    task = gaia(dataset_path=str(GAIA_TINY), level=2, python=True)
    assert task.metadata is not None
    written = task.metadata["gaia"]
    assert json.loads(json.dumps(written)) == written, "plain JSON types only"
    assert written["schema_version"] == SCHEMA_VERSION and written["levels"] == [2]
    record = GaiaProvenance.from_metadata(task.metadata)
    assert record is not None and record.tools == ("bash", "submit", "python")
    expected = provenance_of(
        parse_params(dataset_path=str(GAIA_TINY), level=2, python=True),
        prompt=DEFAULT_INPUT_PROMPT,
        image_id=record.image_id,
        sandbox_provider="gaia-docker",
    )
    assert record == expected


@pytest.mark.parametrize("suffix", [".eval", ".json"])
def test_the_record_round_trips_through_a_log(tmp_path: Path, suffix: str) -> None:
    params: dict[str, object] = {"level": 3, "max_attempts": 2, "web_search": True, "disk": "8g"}
    run = read_inspect_log(write_log(tmp_path / f"x{suffix}", TWO_SAMPLES, params=params))
    assert run.provenance == GaiaProvenance.from_metadata({"gaia": gaia_record(**params)})
    assert run.provenance is not None
    assert run.provenance.limits.max_attempts == 2 and run.provenance.limits.disk == "8g"
    assert run.provenance.tools == ("bash", "submit", "web_search")


def test_a_log_written_by_inspect_gaia_0_1_0_still_reads() -> None:
    header = read_eval_log(str(OLD_LOG), header_only=True)
    assert "schema_version" not in (header.eval.metadata or {})["gaia"], "the old, untyped record"
    run = read_inspect_log(OLD_LOG)
    old = run.provenance
    assert old is not None and old.schema_version == 1
    assert (old.split, old.levels, old.hub, old.dataset_path) == (
        "validation",
        (1, 2),
        "local",
        "tests/fixtures/gaia-tiny",
    )
    assert old.tools == ("bash", "submit") and old.limits.max_attempts == 1
    assert (old.sandbox_provider, old.inspect_gaia_version) == ("gaia-docker", "0.1.0")
    assert len(run.samples) == 4 and sum(s.correct for s in run.samples) == 3
    assert {s.level for s in run.samples} == {1, 2}
    # the same settings and the same image today: the same comparable settings, so they pool
    new = provenance_of(
        parse_params(
            level="1,2",
            dataset_path="tests/fixtures/gaia-tiny",
            image=old.image,
            cpus=old.limits.cpus,
        ),
        prompt=DEFAULT_INPUT_PROMPT,
        image_id=old.image_id,
        sandbox_provider="gaia-docker",
    )
    arguments: dict[str, Any] = {
        "model": run.model,
        "task_version": run.task_version,
        "epochs": 1,
        "run_config": run.config,
    }
    assert comparable_settings(run) == new.comparable_settings(**arguments)
    assert comparability_flags(comparable_settings(run)) == []
    assert (old.final_answer_ends, new.final_answer_ends) == (False, True)


def test_a_version_3_record_reads_as_a_run_that_nudged_plain_answers() -> None:
    """Version 4 added ``final_answer_ends``; a record written before it is a run without it."""
    record = _of().as_metadata()
    del record["final_answer_ends"]
    old = GaiaProvenance.from_metadata({"gaia": {**record, "schema_version": 3}})
    assert old is not None and old.final_answer_ends is False
    assert old.comparable_settings(
        model="m", task_version="1.0.0", epochs=1, run_config={}
    ) == _of().comparable_settings(model="m", task_version="1.0.0", epochs=1, run_config={})


def test_a_record_from_early_0_1_0_reads_with_the_values_those_runs_had() -> None:
    header = read_eval_log(str(OLD_LOG), header_only=True)
    record: dict[str, Any] = dict((header.eval.metadata or {})["gaia"])
    for added in ("multimodal", "view_file", "sandbox_provider"):
        del record[added]
    record["limits"] = {k: v for k, v in record["limits"].items() if k != "disk"}
    early = GaiaProvenance.from_metadata({"gaia": record})
    assert early is not None
    assert (early.multimodal, early.view_file, early.sandbox_provider, early.limits.disk) == (
        False,
        False,
        None,
        None,
    )


def _damaged(edit: dict[str, Any]) -> dict[str, Any]:
    record = gaia_record()
    for dotted, value in edit.items():
        *parents, name = dotted.split(".")
        target = record
        for parent in parents:
            target = target[parent]
        if value is DELETE:
            del target[name]
        else:
            target[name] = value
    return {"gaia": record}


DELETE = object()


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        ({"limits.max_attempts": "two"}, "gaia.limits.max_attempts is 'two', not a whole number"),
        ({"limits.max_attempts": True}, "gaia.limits.max_attempts is True, not a whole number"),
        ({"limits.max_attempts": 0}, "gaia.limits.max_attempts is 0, should be greater than or"),
        ({"limits": [1, 2]}, "gaia.limits is [1, 2], not a mapping"),
        ({"limits.cpus": "2"}, "gaia.limits.cpus is '2', not a number"),
        ({"tools": "bash"}, "gaia.tools is 'bash', not a list"),
        ({"tools": []}, "gaia.tools is empty"),
        ({"levels": [4]}, "gaia.levels is [4], not a list of GAIA levels (1, 2, 3)"),
        ({"levels": "two"}, "gaia.levels is 'two', not a list"),
        ({"split": "dev"}, "gaia.split is 'dev', not one of 'validation' or 'test'"),
        ({"multimodal": "yes"}, "gaia.multimodal is 'yes', not true or false"),
        ({"split": DELETE}, "gaia.split is missing"),
        ({"limits.command_timeout": DELETE}, "gaia.limits.command_timeout is missing"),
        ({"unknown": 1}, "gaia.unknown is not a field of the record"),
    ],
)
def test_a_damaged_record_is_one_line_naming_the_field(edit: dict[str, Any], problem: str) -> None:
    with pytest.raises(ProvenanceError) as raised:
        GaiaProvenance.from_metadata(_damaged(edit))
    assert str(raised.value).startswith(problem) and "\n" not in str(raised.value)


def test_a_record_that_is_not_a_mapping_or_newer_is_refused() -> None:
    with pytest.raises(ProvenanceError, match="^gaia is 'x', not a mapping$"):
        GaiaProvenance.from_metadata({"gaia": "x"})
    with pytest.raises(ProvenanceError) as raised:
        GaiaProvenance.from_metadata(_damaged({"schema_version": SCHEMA_VERSION + 1}))
    assert raised.value.problem == (
        f"gaia.schema_version is {SCHEMA_VERSION + 1}, newer than this inspect_gaia reads "
        f"(up to {SCHEMA_VERSION})"
    )
    assert raised.value.fix.startswith("upgrade inspect-gaia")
    assert str(raised.value) == f"{raised.value.problem} — {raised.value.fix}"
    assert GaiaProvenance.from_metadata({"other": {}}) is None
    assert GaiaProvenance.from_metadata(None) is None


def test_the_questions_of_a_run_are_found_again() -> None:
    local = _of(dataset_path="/data/GAIA", split="test")
    assert local.dataset_arguments() == {"dataset_path": "/data/GAIA", "revision": None}
    assert local.dataset_arguments("/elsewhere") == {"dataset_path": "/elsewhere", "revision": None}
    hub = _of(hub="modelscope")
    assert hub.dataset_arguments() == {
        "hub": "modelscope",
        "revision": "master",
        "dataset_path": None,
    }
    assert hub.dataset_arguments("/copy") == {"dataset_path": "/copy", "revision": None}


def test_the_defaults_are_those_of_a_default_run(tmp_path: Path) -> None:
    run = read_inspect_log(write_log(tmp_path / "x.eval", TWO_SAMPLES))
    settings = comparable_settings(run)
    assert {k: v for k, v in settings.items() if k not in ("model", "task_version")} == (
        default_settings()
    )
    assert settings["model"] == MODEL
