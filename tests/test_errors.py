"""The errors every refusal is made of: one line, the problem and what to do."""

from __future__ import annotations

import ast
import importlib
import io
import pkgutil
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import rich
from rich.console import Console

import inspect_gaia
from inspect_gaia.errors import GaiaError, GaiaParameterError, one_of
from inspect_gaia.logs.leaderboard import Problem
from inspect_gaia.logs.read import LogProblem
from inspect_gaia.sandboxes.docker.engine import DockerProblem
from tests.helpers_errors import one_of_each


def test_one_of_returns_the_choice_or_lists_them_all() -> None:
    assert one_of("split", "test", ("validation", "test")) == "test"
    with pytest.raises(GaiaParameterError) as caught:
        one_of("split", "dev", ("validation", "test"))
    assert str(caught.value) == "split must be one of validation, test — got 'dev'"
    with pytest.raises(GaiaParameterError, match="got 1"):
        one_of("hub", 1, ("huggingface",))


# -- one type: every error is "problem — fix" ------------------------------------------------------


def test_every_error_class_prints_its_problem_then_its_fix() -> None:
    for error, problem in one_of_each("the fix"):
        assert (error.problem, error.fix) == (problem, "the fix")
        assert str(error) == f"{problem} — the fix"
    for error, problem in one_of_each(""):
        assert (str(error), error.fix) == (problem, "")


def test_a_refused_value_is_quoted_after_the_problem_once_joined_here() -> None:
    error = GaiaParameterError("max_attempts must be a whole number ≥ 1", "use 1", got=None)
    assert str(error) == "max_attempts must be a whole number ≥ 1 — got None — use 1"
    assert error.problem == "max_attempts must be a whole number ≥ 1 — got None"
    assert str(GaiaError("no value quoted")) == "no value quoted"
    # only errors.py joins "— got" into a problem: elsewhere the value is given as got=
    sources = Path(inspect_gaia.__file__).parent.rglob("*.py")
    hand_joined = {path.name for path in sources if "— got {" in path.read_text(encoding="utf-8")}
    assert hand_joined == {"errors.py"}


def test_the_errors_that_carry_more_keep_it_apart() -> None:
    docker = DockerProblem("sandbox image", "x:1 is not present", "pull it")
    assert (docker.subject, docker.detail) == ("sandbox image", "x:1 is not present")
    log = LogProblem("logs/a.eval", "no such file", fix="check the path")
    assert (log.path, log.reason, str(log)) == (
        "logs/a.eval",
        "no such file",
        "logs/a.eval: no such file — check the path",
    )
    assert Problem("flagged", "2 sample(s) read a known answer source").kind == "flagged"


def test_every_error_class_of_the_package_is_among_those_rendered() -> None:
    _modules()  # every class defined, wherever it lives

    def descendants(kind: type[GaiaError]) -> set[type[GaiaError]]:
        return {kind}.union(*(descendants(sub) for sub in kind.__subclasses__()))

    mine = {kind for kind in descendants(GaiaError) if kind.__module__.startswith("inspect_gaia")}
    assert mine == {type(error) for error, _ in one_of_each("")}


# -- every task-side message, as inspect prints it --------------------------------------------------

SOURCE = Path(inspect_gaia.__file__).parent


def _modules() -> dict[str, ModuleType]:
    """Every module of the package, by its file (importing them all).

    Not ``_egress``: the egress proxy's addon runs inside mitmproxy's image, not here.
    """
    found = {}
    for info in pkgutil.walk_packages([str(SOURCE)], prefix="inspect_gaia."):
        if info.name.startswith("inspect_gaia.egress"):
            continue
        module = importlib.import_module(info.name)
        if module.__file__:
            found[module.__file__] = module
    return found


def _text(node: ast.expr, namespace: dict[str, Any]) -> str:
    """A message argument as text: literals as written, a module's str constant as its value,
    anything computed as ``x``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name) and isinstance(namespace.get(node.id), str):
        return str(namespace[node.id])
    if isinstance(node, ast.JoinedStr):
        return "".join(_text(part, namespace) for part in node.values)
    if isinstance(node, ast.FormattedValue):
        return _text(node.value, namespace)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _text(node.left, namespace) + _text(node.right, namespace)
    return "x"


def _raised_errors() -> list[tuple[str, GaiaError]]:
    """Each ``raise SomeGaiaError(...)`` of the package, made with its own message text."""
    errors = []
    for file, module in _modules().items():
        namespace = vars(module)
        for node in ast.walk(ast.parse(Path(file).read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call)):
                continue
            kind = namespace.get(ast.unparse(node.exc.func))
            if not (isinstance(kind, type) and issubclass(kind, GaiaError)):
                continue
            args = [_text(arg, namespace) for arg in node.exc.args]
            kwargs = {k.arg: _text(k.value, namespace) for k in node.exc.keywords if k.arg}
            where = f"{Path(file).relative_to(SOURCE)}:{node.lineno}"
            errors.append((where, kind(*args, **kwargs)))
    return errors


def _as_inspect_prints(error: BaseException, monkeypatch: pytest.MonkeyPatch) -> str:
    """What `inspect eval` prints for an error raised while it creates or runs the task.

    inspect's handler prints with ``rich.print``, on rich's global console: a console of our own
    stands in for it (wide: the text as one line), whatever other tests did to the global one.
    """
    from inspect_ai._util.error import exception_hook  # the handler `inspect eval` installs

    out = io.StringIO()
    monkeypatch.setattr(rich, "_console", Console(file=out, width=2000, force_terminal=False))
    exception_hook()(type(error), error, None)
    return out.getvalue().strip()


def test_every_message_prints_through_inspects_console_as_written(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    errors = _raised_errors()
    assert len(errors) >= 90, "the sweep found too few raise sites"
    wrong = [(where, str(e), _as_inspect_prints(e, monkeypatch)) for where, e in errors]
    wrong = [item for item in wrong if item[1] != item[2]]
    assert wrong == []
    texts = {str(error) for _, error in errors}
    assert any("'inspect-gaia[mcp]'" in text for text in texts)
    assert any("'inspect-gaia[k8s]'" in text for text in texts)


def test_brackets_survive_inspects_console(monkeypatch: pytest.MonkeyPatch) -> None:
    for text in ("pip install 'inspect-gaia[mcp]'", "[max_attempts=2]", "a [/] b", r"c:\[x]"):
        assert _as_inspect_prints(GaiaError(text), monkeypatch) == text
    fixed = GaiaError("no MCP [tools]", "pip install 'inspect-gaia[mcp]'")
    assert (
        _as_inspect_prints(fixed, monkeypatch) == "no MCP [tools] — pip install 'inspect-gaia[mcp]'"
    )
