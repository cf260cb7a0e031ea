"""A stand-in for ``inspect-evals-utils==0.2.0``, which inspect-evals 0.28.0 needs and PyPI lacks.

inspect-evals 0.28.0 moved its helpers into a separate ``inspect_evals_utils`` package that the
registry does not serve; its own ``inspect_evals.utils`` modules only re-export from it. Those same
helpers are still inside inspect-evals 0.26.0 (``inspect_evals/utils/*.py``), so the stand-in is
built from that wheel: each module copied under the name 0.28.0 imports it by, with the two imports
that pointed into ``inspect_evals`` itself rewritten, and a stub that raises for each name 0.28.0
imports that 0.26.0 did not have yet (none of them is used by the GAIA task).

The stand-in is built into a directory of your choice (never into ``src``) and put on
``sys.path`` by ``inspect_evals_gaia.py``, the script that runs inspect_evals' GAIA task to make
the test fixture ``tests/fixtures/inspect-evals-gaia``.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

SOURCE_VERSION = "0.26.0"
"""The last inspect-evals release that carries its helpers inside its own package."""

MODULES = {
    "cache": "constants.py",
    "code": "utils/code.py",
    "ids": "utils/deps_utils.py",
    "datasets": "utils/load_dataset.py",
    "messages": "utils/messages.py",
    "prompts": "utils/prompts.py",
    "scorers": "utils/scorers.py",
    "shuffle": "utils/shuffle.py",
    "huggingface": "utils/huggingface.py",
    "hf_telemetry": "utils/hf_telemetry.py",
}
"""``inspect_evals_utils.<name>`` -> the file of inspect-evals 0.26.0 it is copied from."""

REWRITES = {
    "from inspect_evals.constants import": "from inspect_evals_utils.cache import",
    "from inspect_evals.utils.hf_telemetry import": "from inspect_evals_utils.hf_telemetry import",
}

_IMPORT = re.compile(r"from inspect_evals_utils\.(\w+) import \(([^)]*)\)", re.S)


def download_source(directory: Path) -> Path:
    """Download the inspect-evals 0.26.0 wheel (no dependencies) into ``directory``."""
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(directory)]
        + [f"inspect-evals=={SOURCE_VERSION}"],
        check=True,
    )
    (wheel,) = directory.glob(f"inspect_evals-{SOURCE_VERSION}-*.whl")
    return wheel


def needed_names(installed: Path) -> dict[str, list[str]]:
    """The names installed inspect-evals 0.28.0 imports from each ``inspect_evals_utils`` module."""
    needed: dict[str, list[str]] = {}
    for module in installed.rglob("*.py"):
        for name, names in _IMPORT.findall(module.read_text(encoding="utf-8")):
            wanted = [n.strip().split(" as ")[0] for n in names.split(",") if n.strip()]
            needed.setdefault(name, []).extend(wanted)
    return needed


def build_shim(target: Path, wheel: Path | None = None) -> Path:
    """Write the ``inspect_evals_utils`` stand-in into ``target``; returns ``target``.

    Args:
        target: A directory to put on ``PYTHONPATH``.
        wheel: The inspect-evals 0.26.0 wheel; downloaded when not given.
    """
    import inspect_evals

    installed = Path(inspect_evals.__file__).parent
    with tempfile.TemporaryDirectory() as scratch:
        wheel = wheel or download_source(Path(scratch))
        package = target / "inspect_evals_utils"
        package.mkdir(parents=True, exist_ok=True)
        (package / "__init__.py").write_text(
            f'"""Stand-in for inspect-evals-utils 0.2.0, from inspect-evals {SOURCE_VERSION}."""\n'
        )
        with zipfile.ZipFile(wheel) as archive:
            for name, source in MODULES.items():
                text = archive.read(f"inspect_evals/{source}").decode("utf-8")
                for old, new in REWRITES.items():
                    text = text.replace(old, new)
                (package / f"{name}.py").write_text(text, encoding="utf-8")
    for name, names in needed_names(installed).items():
        module = package / f"{name}.py"
        text = module.read_text(encoding="utf-8") if module.exists() else ""
        missing = [n for n in dict.fromkeys(names) if not re.search(rf"\b{n}\b", text)]
        stubs = "".join(
            f"\n\ndef {n}(*args: object, **kwargs: object) -> object:\n"
            f"    raise NotImplementedError('{n}: not in inspect-evals {SOURCE_VERSION}')\n"
            for n in missing
        )
        module.write_text(text + stubs, encoding="utf-8")
    return target


if __name__ == "__main__":
    print(build_shim(Path(sys.argv[1])))
