"""The page's import rules, held (docs/architecture.md): the readers stand on the record alone.

``logs/`` imports from the rest of the package only the modules ``LOGS_MAY_IMPORT`` lists (the
record's vocabulary, the leaves, and what ``compare`` reads the questions with), and running
``inspect-gaia report`` on a folder of logs loads neither the agent, the task, the parser nor an
image builder.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import TWO_SAMPLES, write_log
from tests.helpers_imports import ROOT, imports, modules

LOGS_MAY_IMPORT = {
    f"{ROOT}.{name}"
    for name in (
        # leaves both wings share
        "defaults",
        "errors",
        "web",
        "_official_scorer",
        # the record's vocabulary: splits and levels, sandbox kinds, question sets, image refs
        "dataset",
        "sandbox",
        "k8s",
        "questionset",
        "imageref",
        # compare reads the questions of each side, and the detection's kinds
        "hub",
        "snapshot_files",
        "answer_sources.detect",
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
    bridge = page[page.index("**The one bridge**") : page.index("## The data flow")]
    not_listed = {"logs/provenance", "logs/report", "logs/sidecar", "record", "task"}
    not_listed.add("tests/test_imports")
    printed = set(re.findall(r"`([\w/]+)\.py", bridge)) - not_listed
    listed = {name.removeprefix(f"{ROOT}.").replace(".", "/") for name in LOGS_MAY_IMPORT}
    assert printed == (listed - {"web"}) | {"web/__init__"}


@pytest.mark.slow  # a new Python process: seconds
def test_report_on_a_folder_of_logs_loads_no_agent_task_parser_or_image_builder(
    tmp_path: Path,
) -> None:
    write_log(tmp_path / "run.eval", TWO_SAMPLES)
    code = (
        "import json, sys\n"
        "from inspect_gaia._cli.main import cli\n"
        "try:\n"
        f"    cli(['report', {str(tmp_path)!r}, '--format', 'json'])\n"
        "except SystemExit as done:\n"
        "    assert not done.code, done.code\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('inspect_gaia'))))"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
    loaded = set(json.loads(run.stdout.strip().splitlines()[-1]))
    assert f"{ROOT}.logs.report" in loaded, "the report was built"
    never = {
        f"{ROOT}.{name}"
        for name in (
            "agent",
            "task",
            "_params",
            "_values",
            "scorer",
            "image",
            "browser_image",
            "egress_image",
            "_docker.gaia_docker",
            "_docker.engine",
            "web.browser",
            "web.reader",
            "web.image_check",
        )
    }
    assert loaded & never == set()
