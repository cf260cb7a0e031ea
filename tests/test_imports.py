"""The page's import rules, held (docs/architecture.md): underscores, and the readers' bridge.

An underscored module is imported only from its own wing (the page's wings table), but for the
shared leaves and crossings ``SHARED`` and ``CROSSINGS`` list, which the page prints.

``logs/`` imports from the rest of the package only the modules ``LOGS_MAY_IMPORT`` lists (the
record's vocabulary, the leaves, and what ``compare`` reads the questions with), and running
``inspect-gaia report``, ``compare`` and ``submission`` on logs that real Docker runs wrote
(``tests/fixtures/real-logs``) loads neither the package's entry point, the task, the parser, an
agent, a scorer, the sandbox spec or its providers, an image builder, the web tools nor the
detection.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from support.real_logs import AGENTS, fixture
from tests.helpers import TWO_SAMPLES, write_log
from tests.helpers_imports import ROOT, imports, modules

LOGS_MAY_IMPORT = {
    f"{ROOT}.{name}"
    for name in (
        # the record's vocabulary
        "defaults",
        # leaves both sides share
        "errors",
        "web",
        "egress.web_record",
        "scoring.official",
        # the recorded web read as data: web export and web verify
        "egress.web_archive",
        "egress.replay_match",
        "egress.har_write",
        "imageref",
        "_compat",  # inspect_ai's private names: the samples of a log read one at a time
        "sandboxes.docker.config",  # the sandbox config a log holds, read back without providers
        # the questions; compare reads each side's with the hub and a snapshot's files
        "questions.dataset",
        "questions.questionset",
        "questions.hub",
        "questions.snapshot_files",
        # --judge re-scores answers with the judge (a leaf: its prompt and its reading of a
        # reply), --question-set names a set
        "scoring.judge",
        "questions.named_sets",
        # a probe run's routes, as its samples hold them (a leaf)
        "probe.outcomes",
    )
}
"""What ``logs/`` may import from outside itself (docs/architecture.md prints this list)."""


def test_logs_imports_only_the_record_and_the_leaves_from_the_rest_of_the_package() -> None:
    outside = {
        (name, imported)
        for name, path in modules().items()
        if name.startswith(f"{ROOT}.logs")
        for imported in imports(name, path)
        if imported.startswith(ROOT) and not imported.startswith(f"{ROOT}.logs")
        if imported not in LOGS_MAY_IMPORT
    }
    assert outside == set(), "logs/ reads runs back; it imports no parser, agent or builder"


def test_the_page_prints_what_logs_may_import() -> None:
    page = (Path(__file__).parent.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    bridge = page[page.index("**The one bridge**") : page.index("**A log is read without")]
    not_listed = {"logs/provenance", "logs/report", "logs/sidecar", "record", "task"}
    printed = set(re.findall(r"`([\w/]+)\.py", bridge)) - not_listed
    listed = {name.removeprefix(f"{ROOT}.").replace(".", "/") for name in LOGS_MAY_IMPORT}
    assert printed == (listed - {"web"}) | {"web/__init__"}


READERS_NEVER_LOAD = {
    f"{ROOT}.{name}"
    for name in (
        "_registry",  # the package's entry point: inspect loads it to find a provider it lacks
        "task",
        "_params",
        "_values",
        "scoring.scorer",
        "scoring.judge_scorer",
        "sandboxes.spec",
        "sandboxes.docker.gaia_docker",
        "sandboxes.docker.gaia_compose",
        "sandboxes.docker.engine",
        "sandboxes.docker.client",
        "web.browser",
        "web.reader",
        "web.session",
        "answer_sources.detect",
    )
}
"""What reading logs never loads: the task, its scorers, the sandbox spec and providers, the web tools
and the detection (and, by prefix, ``READERS_NEVER_LOAD_WINGS``)."""
READERS_NEVER_LOAD_WINGS = (f"{ROOT}.agents", f"{ROOT}.images")
"""Wings no reader loads any module of: the agents and the image builders."""
_LOADED_AFTER_EACH = """
import json, sys
from inspect_gaia._cli.main import cli
with open(sys.argv[2], "w") as loaded:
    for args in json.loads(sys.argv[1]):
        try:
            cli(args)
        except SystemExit as done:
            assert not done.code, (args, done.code)
        names = sorted(m for m in sys.modules if m.startswith("inspect_gaia"))
        print(json.dumps(names), file=loaded)
"""


@pytest.mark.slow  # a new Python process: seconds
def test_the_readers_load_no_task_agent_scorer_provider_or_builder_on_real_runs_logs(
    tmp_path: Path,
) -> None:
    """``report``, ``compare`` and ``submission`` on logs real Docker runs wrote (their headers
    name the ``gaia-docker`` sandbox: inspect looks the provider up to read its config), named one
    by one and as a folder, and on a hand-made log with no sandbox of ours."""
    assert READERS_NEVER_LOAD <= set(modules()), "a module renamed: name it again here"
    hand_made = tmp_path / "hand-made"
    write_log(hand_made / "run.eval", TWO_SAMPLES)
    # (default and web-record are two runs of one model and settings: named, report refuses them)
    real = [str(fixture(name)) for name in (*(f"agent-{a}" for a in AGENTS), "web-record")]
    replay = str(fixture("web-replay"))
    commands = {
        "report": ["report", *real, replay, str(hand_made), "--format", "json"],
        "report of a folder": ["report", str(fixture("default").parent), "--format", "json"],
        "compare": ["compare", str(fixture("default")), replay, "--format", "json"],
        "submission": ["submission", str(fixture("test")), "-o", str(tmp_path / "s.jsonl")],
    }
    arguments = json.dumps(list(commands.values()))
    listed = tmp_path / "loaded.jsonl"
    run = subprocess.run(
        [sys.executable, "-c", _LOADED_AFTER_EACH, arguments, str(listed)],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    loaded = [set(json.loads(line)) for line in listed.read_text().splitlines()]
    assert len(loaded) == len(commands)
    assert f"{ROOT}.logs.report" in loaded[0], "the report was built"
    for command, names in zip(commands, loaded, strict=True):  # cumulative: the first one says
        never = {m for m in names if m in READERS_NEVER_LOAD}
        never |= {m for m in names if m.startswith(READERS_NEVER_LOAD_WINGS)}
        assert never == set(), f"{command} loaded {sorted(never)}"


SHARED = {f"{ROOT}._compat"}
"""The one underscored module any wing may import: inspect_ai's private names (the page's)."""
SPINE = {
    "__init__",
    "_registry",
    "task",
    "_params",
    "_param_names",
    "_values",
    "options",
    "record",
    "defaults",
    "errors",
    "flags",
    "_compat",
    "shipped",
    "model_check",
    "next_steps",
    "imageref",
    "image_layout",
}
"""The task's spine: the only modules at the package's root (the page's)."""


def _page() -> str:
    return (Path(__file__).parent.parent / "docs" / "architecture.md").read_text(encoding="utf-8")


def _wings() -> dict[str, str]:
    """The first part of a module's name (``sandboxes``, ``logs``) -> its wing, from the page."""
    table = _page()[_page().index("## The wings") : _page().index("**An underscore**")]
    wings = {}
    for row in table.splitlines()[3:]:
        cells = row.split("|")
        if len(cells) > 2:
            for place in re.findall(r"`(\w+)/`", cells[2]):
                wings[place] = cells[1].strip()
    return wings


def _wing(name: str, wings: dict[str, str]) -> str:
    parts = name.split(".")
    return wings.get(parts[1], "the spine") if len(parts) > 2 else "the spine"


def _underscored(name: str) -> bool:
    return any(part.startswith("_") and not part.startswith("__") for part in name.split(".")[1:])


def test_an_underscored_module_is_imported_only_from_its_wing_or_is_compat() -> None:
    wings = _wings()
    assert {"questions", "agents", "scoring", "sandboxes", "egress", "logs", "_cli"} <= set(wings)
    crossing = {
        (name, imported)
        for name, path in modules().items()
        for imported in imports(name, path)
        if imported.startswith(f"{ROOT}.") and _underscored(imported)
        if _wing(imported, wings) != _wing(name, wings)
        if imported not in SHARED
    }
    assert crossing == set(), "import it within its wing, or drop its underscore: it is shared"


def test_the_page_prints_the_one_shared_underscored_module_and_the_spine() -> None:
    rule = _page()[_page().index("**An underscore**") : _page().index("**The one bridge**")]
    assert {f"{ROOT}.{name}" for name in re.findall(r"`(_\w+)\.py`", rule)} == SHARED
    spine = _page()[_page().index("**The spine**") : _page().index("## The wings")]
    assert set(re.findall(r"`(\w+)\.py`", spine)) == SPINE


def test_the_root_holds_only_the_spine() -> None:
    """House round 6: 39 modules had landed flat at the root; a new one goes into a wing."""
    root = {name.removeprefix(f"{ROOT}.") for name in modules() if name.count(".") == 1}
    root |= {"__init__"}
    folders = {name.split(".")[1] for name in modules() if name.count(".") > 1}
    assert root - folders == SPINE
