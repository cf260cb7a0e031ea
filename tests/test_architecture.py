"""docs/architecture.md, the map of the code, held to the folders as test_readme holds the README."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import inspect_gaia

PACKAGE = Path(inspect_gaia.__file__).parent
PAGE = PACKAGE.parent.parent / "docs" / "architecture.md"


def _modules() -> set[str]:
    """Every module of the package, as the page names it: ``logs/read.py``, ``task.py``."""
    return {str(path.relative_to(PACKAGE)) for path in PACKAGE.rglob("*.py")}


def test_the_page_names_every_module() -> None:
    named = set(re.findall(r"`([\w/]+\.py)(?::\w+)?`", PAGE.read_text(encoding="utf-8")))
    missing = sorted(_modules() - named)
    assert not missing, f"docs/architecture.md does not name {missing}: add each where it lives"


def test_every_module_the_page_names_exists() -> None:
    text = PAGE.read_text(encoding="utf-8")
    named = set(re.findall(r"`([\w/]+\.py)(?::\w+)?`", text)) - {"__init__.py"}
    # tests and other folders are named with their folder (tests/test_params.py)
    ours = {name for name in named if not name.startswith(("tests/", "support/", "benchmarks/"))}
    stale = sorted(name for name in ours if not (PACKAGE / name).is_file())
    assert not stale, f"docs/architecture.md names modules that are gone: {stale}"


def test_every_wing_folder_is_in_the_wings_table() -> None:
    text = PAGE.read_text(encoding="utf-8")
    table = text[text.index("## The wings") : text.index("**The one bridge**")]
    folders = {path.name for path in PACKAGE.iterdir() if (path / "__init__.py").is_file()}
    assert {f for f in folders if f"`{f}/`" not in table} == set()


FOLDERS = sorted(path for path in PACKAGE.iterdir() if (path / "__init__.py").is_file())


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda folder: folder.name)
def test_each_wing_folders_init_maps_every_module_of_the_folder(folder: Path) -> None:
    """Issue #34: ``_docker``'s map named 8 of 12 modules; #44: ``logs``' named 16 of 20."""
    doc = ast.get_docstring(ast.parse((folder / "__init__.py").read_text(encoding="utf-8")))
    named = set(re.findall(r"``(\w+)(?:\.py)?``", doc or ""))
    modules = {path.stem for path in folder.glob("*.py")} - {"__init__"}
    assert modules - named == set(), f"{folder.name}/__init__.py does not name them"
