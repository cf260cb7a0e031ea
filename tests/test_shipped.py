"""Programs that run elsewhere: marked, standard library only, and shipped one way (``shipped``)."""

from __future__ import annotations

import ast
import sys

import pytest

from inspect_gaia.shipped import MARKER, PROGRAMS, Program, source
from tests.helpers_imports import ROOT, imports, modules


def _marked(name: str) -> bool:
    doc = ast.get_docstring(ast.parse(modules()[name].read_text(encoding="utf-8"))) or ""
    return any(line.startswith(MARKER) for line in doc.splitlines())


def test_the_programs_that_run_elsewhere_are_the_marked_modules() -> None:
    marked = {name for name in modules() if _marked(name)}
    assert marked == {f"{ROOT}.{program.module}" for program in PROGRAMS}


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda program: program.module)
def test_a_program_imports_only_the_standard_library_and_its_siblings(program: Program) -> None:
    name = f"{ROOT}.{program.module}"
    siblings = {other.name.removesuffix(".py") for other in PROGRAMS}
    allowed = set(sys.stdlib_module_names) | {"__future__"} | siblings | set(program.host)
    assert imports(name, modules()[name]) - allowed == set()


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda program: program.module)
def test_a_program_is_shipped_as_its_file(program: Program) -> None:
    assert source(program) == modules()[f"{ROOT}.{program.module}"].read_text(encoding="utf-8")
