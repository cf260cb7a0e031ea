"""The package's public names: importable as always, imported only when first used."""

from __future__ import annotations

import subprocess
import sys

import pytest

import inspect_gaia


def _fresh(code: str) -> str:
    """Run ``code`` in a new interpreter (nothing imported yet); its stdout."""
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
    return run.stdout.strip()


def test_importing_the_package_does_not_import_inspect_ai() -> None:
    code = "import sys, inspect_gaia; print(sorted(m for m in sys.modules if 'inspect_ai' in m))"
    assert _fresh(code) == "[]"


@pytest.mark.slow  # a new Python process: seconds each
def test_gaia_is_the_task_function_after_the_registry_imports_its_module() -> None:
    # inspect's registry imports the submodule inspect_gaia.task first; the package's `gaia`
    # attribute must still be the task function, not a module of that name.
    code = (
        "import inspect_gaia._registry\n"
        "from inspect_gaia import gaia, gaia_level1\n"
        "import inspect_gaia.task as module\n"
        "print(callable(gaia), gaia.__module__, module.gaia is gaia, callable(gaia_level1))"
    )
    assert _fresh(code) == "True inspect_gaia.task True True"


def test_every_public_name_resolves() -> None:
    for name in inspect_gaia.__all__:
        value = getattr(inspect_gaia, name)
        assert value is not None and not isinstance(value, type(inspect_gaia)), name
    assert set(inspect_gaia.__all__) <= set(dir(inspect_gaia))
