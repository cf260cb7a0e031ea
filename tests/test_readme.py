"""The README and docs/ hold no command, link, path or version that does not work.

Every ``inspect-gaia`` and ``inspect`` command line in them (fenced ``bash`` blocks and inline code)
is parsed against the real command: ``inspect-gaia`` flags and choices against its click commands,
``inspect eval`` flags against ``inspect eval --help`` and ``-T`` names and values against the task's
own parameter parser. Links resolve, cited files exist, no path of a machine is published, and
the changelog's version is the package's.
"""

from __future__ import annotations

import ast
import importlib
import importlib.metadata
import inspect
import re
import shlex
import subprocess
import tomllib
from functools import cache
from pathlib import Path
from typing import Any

import click
import pytest
import yaml
from click.testing import CliRunner
from inspect_ai.log import read_eval_log

from inspect_gaia import gaia
from inspect_gaia._cli.main import cli
from inspect_gaia.probe.task import OWN_PARAMETERS
from inspect_gaia.task import parameter_names
from support.scripted_model import Entry
from tests.helpers import REPO, Play, eval_command, parse_params, report_json
from tests.scenario import GAIA_TINY, LAGOON

README = REPO / "README.md"
CHANGELOG = REPO / "CHANGELOG.md"
DOCS = sorted((REPO / "docs").glob("*.md"))
PAGES = [README, CHANGELOG, *DOCS]
PLACEHOLDER_REPO = "github.com/inspect-gaia/inspect-gaia"
"""The repository address pyproject.toml names until one is published: no page may link to it."""
PROBE = "inspect_gaia/gaia_probe"
TASKS = {"inspect_gaia/gaia", PROBE, *(f"inspect_gaia/gaia_level{n}" for n in (1, 2, 3))}
PLACEHOLDER = re.compile(r"<[^>]*>|\.\.\.|…")


def _name(page: Path) -> str:
    return str(page.relative_to(REPO))


def _fenced(text: str, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)


def command_lines(page: Path) -> list[tuple[str, bool]]:
    """The shell command lines of a page, each with whether it is inline code.

    Fenced ``bash`` blocks give whole command lines; inline code starting with ``inspect`` or
    ``inspect-gaia`` is a command line too, or a mention of a command (``inspect-gaia report``).
    """
    text = page.read_text(encoding="utf-8")
    lines: list[tuple[str, bool]] = []
    for block in _fenced(text, "bash"):
        pending = ""
        for line in block.replace("\\\n", " ").splitlines():
            pending += ("\n" if pending else "") + line
            try:  # a quoted argument may span lines (JSON in single quotes)
                shlex.split(pending, comments=True)
            except ValueError:
                continue
            if pending.strip():
                lines.append((pending, False))
            pending = ""
        assert not pending, f"{_name(page)}: unbalanced quotes in {pending!r}"
    prose = re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)
    lines += [
        (span, True)
        for span in re.findall(r"`([^`\n]+)`", prose)
        if re.match(r"(inspect-gaia|inspect) [a-z]", span)
    ]
    return lines


def _words(line: str) -> list[str]:
    words = shlex.split(line, comments=True)
    while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):  # HF_TOKEN=... inspect-gaia ...
        words.pop(0)
    return words


def commands(program: str) -> list[tuple[str, list[str]]]:
    """``(page, arguments)`` of every command line of ``program`` in the README and docs/.

    Inline code naming just a command (``inspect-gaia report``, ``inspect eval``) is a mention:
    its arguments are ``["--help"]``, so the command must exist but needs no arguments.
    """
    found = []
    for page in PAGES:
        for line, inline in command_lines(page):
            words = _words(line)
            if not words or words[0] != program:
                continue
            args = words[1:]
            if inline and all(re.fullmatch(r"[a-z][a-z-]*", word) for word in args):
                args.append("--help")
            found.append((_name(page), args))
    return found


# -- inspect-gaia -----------------------------------------------------------------------------------


def _option(command: click.Command, flag: str) -> click.Option | None:
    for param in command.params:
        if isinstance(param, click.Option) and flag in (*param.opts, *param.secondary_opts):
            return param
    return None


def check_inspect_gaia(args: list[str]) -> None:
    """Assert that ``inspect-gaia ARGS`` names a command, its flags, valid choices and arguments."""
    command: click.Command = cli
    rest = list(args)
    while isinstance(command, click.Group) and rest and not rest[0].startswith("-"):
        name = rest.pop(0)
        with click.Context(command) as ctx:
            sub = command.get_command(ctx, name)  # commands load on first use
        assert sub is not None, f"inspect-gaia has no command {name!r}"
        command = sub
    if rest == ["--help"]:
        return
    assert not isinstance(command, click.Group) or rest == ["--version"], (
        f"incomplete command: inspect-gaia {' '.join(args)}"
    )
    positional: list[str] = []
    while rest:
        word = rest.pop(0)
        if not word.startswith("-"):
            positional.append(word)
            continue
        flag, _, inline = word.partition("=")
        if flag in ("--help", "--version"):
            continue
        option = _option(command, flag)
        assert option is not None, f"inspect-gaia {command.name} has no option {flag}"
        if option.is_flag:
            continue
        value = inline or rest.pop(0)
        if isinstance(option.type, click.Choice) and not PLACEHOLDER.search(value):
            assert value in option.type.choices, f"{flag} {value}: not one of {option.type.choices}"
    arguments = [p for p in command.params if isinstance(p, click.Argument)]
    fixed = sum(a.nargs for a in arguments if a.nargs > 0)
    if any(a.nargs == -1 for a in arguments):
        assert len(positional) >= fixed + 1, f"inspect-gaia {command.name}: too few arguments"
    else:
        assert len(positional) == fixed, f"inspect-gaia {command.name}: {positional}"


def test_every_inspect_gaia_command_line_parses() -> None:
    found = commands("inspect-gaia")
    assert len(found) >= 10 and any(page == "README.md" for page, _ in found)
    for page, args in found:
        try:
            check_inspect_gaia(args)
        except AssertionError as ex:
            raise AssertionError(f"{page}: inspect-gaia {' '.join(args)}: {ex}") from ex


def test_the_checker_refuses_what_click_refuses() -> None:
    # The checker itself: each of these is a mistake a README could make.
    for wrong in (
        ["reprot", "logs/"],
        ["report", "logs/", "--formt", "json"],
        ["report", "logs/", "--format", "yaml"],
        ["download", "--hub", "github"],
        ["compare", "logs/x.eval"],
        ["image"],
    ):
        with pytest.raises(AssertionError):
            check_inspect_gaia(wrong)
    check_inspect_gaia(["submission", "logs/*.eval", "-o", "s.jsonl", "--allow-validation"])


# -- inspect -----------------------------------------------------------------------------------------


@cache
def inspect_help(*command: str) -> str:
    """``inspect COMMAND --help`` of the installed inspect_ai, rendered in this process.

    The ``inspect`` console script's own click group (found through its entry point), so the help
    is the one users get, without starting the CLI twice (~3 s of CPU each).
    """
    (script,) = importlib.metadata.entry_points(group="console_scripts", name="inspect")
    group = vars(importlib.import_module(script.module))["inspect"]
    assert isinstance(group, click.Group)
    shown = CliRunner().invoke(group, [*command, "--help"], prog_name="inspect")
    assert shown.exit_code == 0, shown.output
    return shown.output


def _task_values(args: list[str]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for index, word in enumerate(args[:-1]):
        if word == "-T":
            name, equals, value = args[index + 1].partition("=")
            assert equals, f"-T {args[index + 1]}: no value"
            values[name] = value
    return values


def check_inspect_eval(args: list[str], verb: str = "eval") -> None:
    """Assert ``inspect VERB ARGS``: GAIA tasks, the verb's flags, and ``-T`` values gaia takes."""
    if args == ["--help"]:
        return
    assert args and args[0] in TASKS, f"not a GAIA task: {args[:1]}"
    helps = inspect_help(verb)
    for word in args[1:]:
        if word.startswith("--"):
            flag = word.partition("=")[0]
            assert re.search(rf"(^|[\s,]){re.escape(flag)}([\s,=]|$)", helps, re.MULTILINE), (
                f"inspect eval has no option {flag}"
            )
    values = _task_values(args)
    names = set(parameter_names()) | (set(OWN_PARAMETERS) if args[0] == PROBE else set())
    assert set(values) <= names, f"{args[0]} takes no {sorted(set(values) - names)}"
    values = {name: value for name, value in values.items() if name not in OWN_PARAMETERS}
    if not any(PLACEHOLDER.search(value) for value in values.values()):
        # inspect hands -T values to the task YAML-parsed; the task's own parser must take them.
        level = args[0].removeprefix("inspect_gaia/gaia_level")
        parsed = {name: yaml.safe_load(value) for name, value in values.items()}
        parse_params(**({"level": int(level)} if level.isdigit() else {}), **parsed)


def test_every_inspect_command_line_parses() -> None:
    found = commands("inspect")
    runs = [(page, args) for page, args in found if args[:1] in (["eval"], ["eval-set"])]
    assert len(runs) >= 8 and any(args[0] == "eval-set" for _, args in runs)
    for page, (verb, *args) in runs:
        try:
            check_inspect_eval(args, verb)
        except Exception as ex:
            raise AssertionError(f"{page}: inspect {verb} {' '.join(args)}: {ex}") from ex
    others = {args[0] for _, args in found if args[:1] != ["eval"] and args[0] != "--help"}
    listed = inspect_help()
    for name in others:
        assert re.search(rf"^\s+{re.escape(name)}\s", listed, re.MULTILINE), f"inspect {name}"


def test_the_eval_checker_refuses_a_typo() -> None:
    for wrong in (
        ["inspect_gaia/gaia", "-T", "levle=1"],
        ["inspect_gaia/gaia", "-T", "level=4"],
        ["inspect_gaia/gaia", "--max-sample", "4"],
        ["inspect_gaia/gaya"],
    ):
        with pytest.raises(Exception):  # noqa: B017 -- an assertion or the task's own refusal
            check_inspect_eval(wrong)


TASK_PARAMETER = re.compile(r"(?<![\w-])-T (\w+)(?:=|`)")
"""``-T name=...`` or ``-T name`` in backticks: a task parameter named anywhere in the prose."""


def test_every_task_parameter_named_in_prose_is_one_gaia_takes() -> None:
    names = set(parameter_names()) | set(OWN_PARAMETERS)  # the probe's own, on its page
    named = 0
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for demo in ("-T levle=1", "-T limit=10", "-T tools=python", "-T name=value"):  # refusals
            text = text.replace(demo, "")
        for name in TASK_PARAMETER.findall(text):
            named += 1
            assert name in names, f"{_name(page)}: -T {name} is not a parameter of gaia()"
    assert named >= 20


def _parameter_table() -> list[tuple[str, str]]:
    """``(name, default)`` of each row of the README's Parameters table, in order."""
    section = README.read_text(encoding="utf-8").split("## Parameters\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `(\w+)` \| ([^|]+?) \|", section, re.MULTILINE)


def _shown(default: object) -> str | None:
    """How the README's table writes a scalar default (``None`` for defaults it words)."""
    if isinstance(default, bool):
        return f"`{str(default).lower()}`"
    if isinstance(default, float) and default.is_integer():
        return f"`{int(default)}`"
    if isinstance(default, (int, float, str)):
        return f"`{default}`"
    return None


def test_the_parameter_table_is_gaias_signature() -> None:
    rows = _parameter_table()
    parameters = inspect.signature(gaia).parameters
    assert [name for name, _ in rows] == list(parameter_names()), "every parameter, in order"
    for name, default in rows:
        value = parameters[name].default
        if value is None:
            assert default in ("none", "all", "pinned"), f"{name}: default {default}"
        elif _shown(value) is not None:
            assert default == _shown(value), f"{name}: README says {default}, gaia() {value!r}"


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _sections(path: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", path.read_text(encoding="utf-8"), flags=re.M | re.S)
    return {_slug(heading) for heading in re.findall(r"^#+ (.+)$", text, re.MULTILINE)}


def _targets(page: Path) -> list[str]:
    """Every link target of a page: inline ``[a](b)`` and reference ``[a]: b``."""
    text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.M | re.S)
    return re.findall(r"\]\(([^)\s]+)\)", text) + re.findall(
        r"^\[[^\]]+\]:\s*(\S+)", text, re.MULTILINE
    )


def test_links_to_a_section_find_its_heading() -> None:
    links: list[tuple[Path, Path, str]] = []
    for page in PAGES:
        for target in _targets(page):
            path, _, anchor = target.partition("#")
            if anchor and not target.startswith(("https://", "http://")):
                linked = (page.parent / path).resolve() if path else page
                links.append((page, linked, anchor))
    assert links
    for page, linked, anchor in links:
        assert anchor in _sections(linked), f"{_name(page)}: no #{anchor} in {linked.name}"


def test_python_blocks_are_python() -> None:
    for page in PAGES:
        for block in _fenced(page.read_text(encoding="utf-8"), "python"):
            ast.parse(block, filename=_name(page))


# -- links, paths, versions --------------------------------------------------------------------------


def test_links_to_the_repository_are_relative_and_resolve() -> None:
    """Not on PyPI yet, and no public address: a file of the repository is linked relatively, so
    the link works in a clone and on whichever host publishes it."""
    checked = 0
    for page in PAGES:
        for target in _targets(page):
            assert PLACEHOLDER_REPO not in target, f"{_name(page)}: placeholder link {target}"
            if target.startswith(("https://", "http://", "mailto:", "#")):
                continue
            path = (page.parent / target.partition("#")[0]).resolve()
            assert path.exists(), f"{_name(page)}: link to missing {target}"
            assert path.is_relative_to(REPO), f"{_name(page)}: {target} leaves the repository"
            checked += 1
    assert checked >= 20


def test_the_install_line_works_from_what_is_published() -> None:
    """The package is not on PyPI: the first install line installs a checkout."""
    first = _fenced(README.read_text(encoding="utf-8"), "bash")[0].splitlines()[0]
    assert first.split("#")[0].split() == ["pip", "install", "."], first
    assert "pip install inspect-gaia " not in README.read_text(encoding="utf-8")


def test_cited_files_exist() -> None:
    cited = re.compile(
        r"(?<![\w/])((?:tests|benchmarks|support|\.ci|src)/[\w./-]+\.(?:py|sh|yaml|md))"
    )
    for page in PAGES:
        for path in cited.findall(page.read_text(encoding="utf-8")):
            assert (REPO / path).exists(), f"{_name(page)} cites {path}, which does not exist"
        # the benchmarks and the support scripts run as modules from the root
        for module in re.findall(
            r"python -m ((?:benchmarks|support)\.\w+)", page.read_text("utf-8")
        ):
            path = module.replace(".", "/") + ".py"
            assert (REPO / path).exists(), f"{_name(page)} runs {module}, which does not exist"


def test_no_path_of_a_machine_is_published() -> None:
    machine = re.compile(r"(?<![\w~.])/(?:work|tmp|home|root|Users|opt|var/folders)/")
    for page in PAGES:
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            assert not machine.search(line), f"{_name(page)}:{number}: {line.strip()}"


def test_changelog_version_is_the_package_version() -> None:
    """CHANGELOG.md's newest release is the package's; the README links to it, not a copy."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    entries = re.findall(
        r"^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})$", CHANGELOG.read_text(), re.MULTILINE
    )
    assert entries, "the changelog has no '## [x.y.z] - YYYY-MM-DD' entry"
    versions = [version for version, _ in entries]
    assert len(set(versions)) == len(versions), "one entry per version"
    assert versions[0] == project["version"] == importlib.metadata.version("inspect-gaia")
    shown = CliRunner().invoke(cli, ["--version"])
    assert shown.exit_code == 0 and shown.output.split()[-1] == versions[0]
    assert "[changelog]: CHANGELOG.md" in README.read_text(encoding="utf-8")


def test_readme_test_command_is_the_one_ci_runs() -> None:
    readme = README.read_text(encoding="utf-8")
    development = readme.split("## Development", 1)[1].split("\n## ", 1)[0]
    assert "make test" in development and 'pip install -e ".[dev]"' in development
    assert re.search(r"^make test$", (REPO / ".ci" / "run").read_text(), re.MULTILINE)


def test_the_readme_stays_short() -> None:
    """Detail belongs in docs/: the README is what a newcomer reads first, whole."""
    lines = (Path(__file__).parent.parent / "README.md").read_text().splitlines()
    assert len(lines) < 350, f"README.md has {len(lines)} lines: move detail into docs/"


SECTIONS = (
    *("What a run prints", "Usage", "Parameters", "Dataset", "Scoring", "Reports"),
    *("Comparing with other harnesses", "Deviations from inspect_evals and EvalScope"),
    *("Web access and answer sources", "Your own agent", "Other agents", "Leaderboard submission"),
    *("Long and large runs", "Troubleshooting", "Citation", "Development", "Credits and license"),
)
"""The README's sections in a newcomer's order (issue #40): how to run, what success looks like,
the parameters, reading and comparing results, one's own agent, a full run's cost, citing."""


def test_the_readme_is_in_a_newcomers_order() -> None:
    text = README.read_text(encoding="utf-8")
    assert re.findall(r"^## (.+)$", text, re.MULTILINE) == list(SECTIONS)
    citation = text.split("## Citation", 1)[1]
    assert "eprint        = {2311.12983}" in citation and "Mialon" in citation


def readme_agent() -> str:
    """The ``my_agent.py`` of the README's "Your own agent"."""
    section = README.read_text(encoding="utf-8").split("## Your own agent", 1)[1]
    (block,) = _fenced(section.split("\n## ", 1)[0], "python")
    return block


def test_the_readme_agent_is_ten_lines() -> None:
    assert len(readme_agent().strip().splitlines()) <= 10


@pytest.mark.docker
def test_the_readme_agent_runs_in_the_tasks_sandbox_and_is_scored(
    sandbox_image: str, scripted: Play, tmp_path: Path
) -> None:
    """The README's `--solver my_agent.py@my_agent`, run as shown, on one question.

    The model writes text beside its submit call, as real models do; ``react`` then drops the call
    from the messages and appends the answer to that text: the submission is what is scored.
    """
    model = scripted(
        [
            Entry(
                "invented lagoon",
                [{"bash": "echo Quillfeather"}, {"submit": "Quillfeather Lagoon"}],
            )
        ]
    )
    (tmp_path / "my_agent.py").write_text(readme_agent())
    command = eval_command(
        [f"dataset_path={GAIA_TINY}", f"image={sandbox_image}"], tmp_path / "logs"
    )
    run = subprocess.run(
        [*command, "--solver", "my_agent.py@my_agent", "--sample-id", LAGOON],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    (log_file,) = (tmp_path / "logs").glob("*.eval")
    (sample,) = read_eval_log(str(log_file)).samples or []
    assert sample.scores is not None and sample.scores["gaia_scorer"].value == "C"
    score = sample.scores["gaia_scorer"]
    assert score.answer == "Quillfeather Lagoon"
    assert (score.metadata or {})["answer_source"] == "submit"
    assert sample.output.completion.startswith("Thought: I have the answer"), "text beside it"
    assert any("Quillfeather" in str(m.content) for m in sample.messages if m.role == "tool")
    assert "bash" in model.tools_offered[0]
    document = report_json(str(log_file))
    assert "custom solver: my_agent.py@my_agent" in document["groups"][0]["flags"]


def test_no_inspect_eval_in_the_docs_is_given_the_reports_prices() -> None:
    """Issue #50: docs/reports.md's first example gave `--model-cost-config` to `inspect eval`,
    where a price file `report` takes (input and output alone) is a 199-line traceback."""
    for page in PAGES:
        for line, _ in command_lines(page):
            if line.lstrip().startswith(("inspect eval ", "inspect eval-set ")):
                assert "--model-cost-config" not in line, (_name(page), line)
