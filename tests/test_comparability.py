"""Which runs pool and how a score is flagged: the settings every harness's runs share."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inspect_gaia.logs.comparability import (
    OWN_HARNESS,
    Scaffold,
    comparability_flags,
    pooled_settings,
)
from inspect_gaia.logs.read import read_inspect_log
from inspect_gaia.logs.results import comparable_settings
from tests.helpers import TWO_SAMPLES, write_log


def test_comparability_flags(tmp_path: Path) -> None:
    def flags(**options: Any) -> list[str]:
        run = read_inspect_log(write_log(tmp_path / "x.eval", TWO_SAMPLES, **options))
        return comparability_flags(comparable_settings(run))

    assert flags() == []
    assert flags(params={"max_attempts": 2}) == ["oracle retries, not pass@1 (max_attempts=2)"]
    assert flags(params={"web_search": True}) == ["non-default tools: bash, submit, web_search"]
    assert flags(params={"multimodal": True}) == [
        "non-default tools: bash, submit, view_file",
        "multimodal: true",
    ]
    assert flags(message_limit=30) == ["message limit 30 (default 100)"]
    # the in-sandbox browser's ten tools are named as one, beside the reader's fetch
    assert flags(params={"browser": True, "web_reader": True}) == [
        "non-default tools: bash, submit, browser (10 tools), fetch"
    ]


def test_every_harness_has_the_settings_of_one_shape() -> None:
    def settings(harness: str, scaffold: Scaffold | None = None) -> dict[str, Any]:
        return pooled_settings(
            model="m",
            split="validation",
            harness=harness,
            task_version="1",
            epochs=1,
            scaffold=scaffold,
            tools=("bash", "submit"),
            multimodal=False,
            max_attempts=1,
            run_config={"message_limit": None},
        )

    own = settings(OWN_HARNESS)
    assert (own["tools"], own["solver"], own["sandbox"]) == (["bash", "submit"], None, None)
    assert comparability_flags(own) == []
    replaced = settings("inspect_evals", Scaffold("react", {"attempts": 1}, ("python",)))
    assert list(replaced) == list(own), "the same keys, in the same order"
    assert (replaced["tools"], replaced["solver_args"]) == (["python"], {"attempts": 1})
    assert comparability_flags(replaced) == [
        "another harness: inspect_evals gaia 1",
        "custom solver: react",
        "non-default tools: python",
    ]


def test_a_browser_runs_label_names_what_it_adds_in_short() -> None:
    """Issue #40: the label listed all twelve tool names (a 15-line cell in the overview)."""
    from inspect_gaia.logs.comparability import tools_label
    from inspect_gaia.web import BROWSER_TOOLS

    assert tools_label(["bash", "submit", *BROWSER_TOOLS, "fetch"]) == "+browser, +fetch"
    assert tools_label(["bash", "python", "submit"]) == "+python"
    assert tools_label(["python", "submit"]) == "+python, -bash"
    assert tools_label([]) == "none"
    assert tools_label(["bash", "submit"]) == "default"
