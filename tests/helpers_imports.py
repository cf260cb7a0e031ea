"""The package's imports, read from its source (AST): which module imports which, at any depth.

Function-level imports count (a lazy import is still an import); those under ``TYPE_CHECKING``
do not (they never run). Modules are named as Python names them (``inspect_gaia.logs.read``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import inspect_gaia

PACKAGE = Path(inspect_gaia.__file__).parent
ROOT = "inspect_gaia"


def module_name(path: Path) -> str:
    """``inspect_gaia.logs.read`` for ``logs/read.py``, ``inspect_gaia.web`` for its ``__init__``."""
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([ROOT, *parts])


def modules() -> dict[str, Path]:
    """Every module of the package, by name."""
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _runs(node: ast.AST) -> Iterator[ast.AST]:
    """The nodes that run: everything but the body of an ``if TYPE_CHECKING:``."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
            yield from (n for orelse in child.orelse for n in [orelse, *_runs(orelse)])
            continue
        yield child
        yield from _runs(child)


def imports(name: str, path: Path) -> set[str]:
    """The modules ``name`` (at ``path``) imports, absolute: ours as modules, others by top name."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    known = modules()
    found: set[str] = set()
    for node in _runs(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(parent + ([base] if base else []))
            for alias in node.names:
                child = f"{base}.{alias.name}"
                found.add(child if child in known else base)
    return {_ours(module, known) for module in found} - {name}


def _ours(module: str, known: dict[str, Path]) -> str:
    """One of our modules by its name, another package by its top name."""
    if module.split(".")[0] != ROOT:
        return module.split(".")[0]
    while module not in known:
        module = module.rpartition(".")[0]
    return module
