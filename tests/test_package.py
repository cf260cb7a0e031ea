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
def test_gaia_stays_the_task_after_its_module_is_imported() -> None:
    # inspect's registry imports the submodule inspect_gaia.gaia first, which sets the package's
    # `gaia` attribute to the module unless the package refuses it.
    code = (
        "import inspect_gaia._registry\n"
        "from inspect_gaia import gaia, gaia_level1\n"
        "import inspect_gaia.gaia as imported\n"
        "print(callable(gaia), gaia.__module__, imported is gaia, callable(gaia_level1))"
    )
    assert _fresh(code) == "True inspect_gaia.gaia True True"


def test_every_public_name_resolves() -> None:
    for name in inspect_gaia.__all__:
        value = getattr(inspect_gaia, name)
        assert value is not None and not isinstance(value, type(inspect_gaia)), name
    assert set(inspect_gaia.__all__) <= set(dir(inspect_gaia))
