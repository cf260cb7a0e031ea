"""The compat layer: every private inspect_ai name the package uses still exists, in one place."""

from __future__ import annotations

import ast
from pathlib import Path

import inspect_gaia._compat as compat

SOURCE = Path(compat.__file__).parent


def test_every_private_name_imports() -> None:
    for name in compat.__all__:
        assert getattr(compat, name) is not None, name


def test_no_other_module_imports_a_private_inspect_module() -> None:
    offenders = []
    for path in sorted(SOURCE.rglob("*.py")):
        if path.name == "_compat.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                parts = node.module.split(".")
                if parts[0] == "inspect_ai" and any(p.startswith("_") for p in parts):
                    offenders.append(f"{path.relative_to(SOURCE)}: from {node.module}")
    assert offenders == []


def test_unproxied_sees_through_inspects_event_recorder() -> None:
    from inspect_gaia._faults import UnstartedSandbox

    inner = UnstartedSandbox("engine gone")
    assert compat.unproxied(compat.SandboxEnvironmentProxy(inner)) is inner
    assert compat.unproxied(inner) is inner
