"""The `inspect-gaia` command as a whole: help and the installed console script."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from helpers import invoke


def test_help_explains_every_subcommand() -> None:
    code, out, _ = invoke("--help")
    assert code == 0
    for name in ("download", "doctor", "image", "submission", "compare", "report"):
        assert name in out
    assert invoke("image", "build", "--help")[0] == 0


def test_console_script_is_installed() -> None:
    script = Path(sys.executable).parent / "inspect-gaia"
    run = subprocess.run(
        [str(script), "report", "/nonexistent.eval"], capture_output=True, text=True
    )
    assert run.returncode != 0
    assert "Traceback" not in run.stderr and "does not exist" in run.stderr
