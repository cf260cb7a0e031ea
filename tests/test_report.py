"""``report_document``: merged runs as the one document ``inspect-gaia report`` renders.

Runs are read from logs written here without a run and grouped as the command groups them; the
command itself (formats, folders, errors) is tested in ``test_cli_report``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from inspect_ai.model import ModelCost

from inspect_gaia.logs.paired import CONFIDENCE
from inspect_gaia.logs.read import read_inspect_log
from inspect_gaia.logs.report import REPORT_SCHEMA, report_document
from inspect_gaia.logs.results import RunGroup, group_runs
from inspect_gaia.logs.stats import INTERVAL_METHOD
from inspect_gaia.record import default_settings
from tests.helpers import MODEL, RUN_SAMPLES, TWO_SAMPLES, write_log

DEFAULTS = default_settings()

ALL_RIGHT = [
    {"id": "a", "level": 1, "target": "1", "answer": "1", "value": "C"},
    {"id": "b", "level": 2, "target": "2", "answer": "2", "value": "C"},
]


def groups(
    tmp_path: Path, *logs: tuple[str, list[dict[str, Any]], dict[str, Any]]
) -> list[RunGroup]:
    """Each ``(name, samples, write_log options)`` written, read and grouped as ``report`` does."""
    runs = [
        read_inspect_log(write_log(tmp_path / f"{name}.eval", samples, **options))
        for name, samples, options in logs
    ]
    return group_runs(runs)


def test_the_document_is_versioned_and_names_its_interval(tmp_path: Path) -> None:
    document = report_document(groups(tmp_path, ("run", RUN_SAMPLES, {})), defaults=DEFAULTS)
    assert document["schema_version"] == REPORT_SCHEMA
    assert document["interval"] == {
        "method": INTERVAL_METHOD,
        "confidence": CONFIDENCE,
        "over": "questions",
    }
    (group,) = document["groups"]
    assert group["group"] == MODEL and group["flags"] == [] and group["differs"] == {}
    assert [row["level"] for row in group["levels"]] == ["1", "2", "3", "all"]
    assert group["levels"][-1]["accuracy"] == pytest.approx(2 / 5)
    assert group["cost_source"] is None  # no price in the log: no cost, never 0
    assert group.keys() >= {"breakdown", "near_misses"}  # where a graded run fails


def test_groups_are_ranked_by_overall_accuracy_and_labelled_by_what_differs(tmp_path: Path) -> None:
    document = report_document(
        groups(
            tmp_path,
            ("default", TWO_SAMPLES, {}),
            ("python", ALL_RIGHT, {"params": {"python": True}}),
            ("other", RUN_SAMPLES, {"model": "openai-api/other/model"}),
        ),
        defaults=DEFAULTS,
    )
    labels = [group["group"] for group in document["groups"]]
    # the better run first; a setting at the task's default is not named in a label
    assert labels == [f"{MODEL} [tools=+python]", MODEL, "openai-api/other/model"]
    assert "tools" in document["settings_differ"]
    assert document["groups"][1]["differs"] == {"tools": ["bash", "submit"]}


def test_prices_replace_the_logs_cost_and_say_so(tmp_path: Path) -> None:
    priced = [dict(s, input_tokens=1_000_000, output_tokens=0) for s in TWO_SAMPLES]
    prices = {MODEL: ModelCost(input=2.0, output=8.0, input_cache_read=0, input_cache_write=0)}
    (group,) = report_document(groups(tmp_path, ("run", priced, {})), prices, defaults=DEFAULTS)[
        "groups"
    ]
    assert group["cost_source"] == "model-cost-config"
    assert group["levels"][-1]["cost"] == pytest.approx(4.0)


def test_the_test_split_has_no_accuracy_and_no_breakdown(tmp_path: Path) -> None:
    ungraded = [dict(s, target="?", value="I") for s in TWO_SAMPLES]
    (group,) = report_document(
        groups(tmp_path, ("run", ungraded, {"params": {"split": "test"}})), defaults=DEFAULTS
    )["groups"]
    assert group["split"] == "test"
    assert group["levels"][-1]["accuracy"] is None
    assert "near_misses" not in group
