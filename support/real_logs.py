"""Real runs' logs, the readers' fixtures: ``python -m support.real_logs`` makes them again.

Each log in ``tests/fixtures/real-logs/logs`` is written by a real run of the current code in a
real Docker sandbox, the scripted model (``scripted_model``) answering gaia-tiny's invented
questions (never GAIA's data), so that the readers (``report``, ``compare``, ``submission``) are
tested on what a user's run writes, not only on logs made by hand. The runs (``RUNS``, a few
samples each, to keep the files small):

- ``default``: the default agent on four validation questions over the three levels (``test``:
  the two test-split questions, for ``submission``);
- ``agent-<name>``: each packaged agent (``-T agent=``) through inspect's bridge, one question each;
- ``web-record``: ``-T web_record=bodies`` on the stand-in "internet" (``standins``), with its
  archive of bodies beside it; ``web-replay``: ``-T web_replay=`` that archive;
- ``browser``: ``-T browser=true`` on the browser image, opening a stand-in page;
- ``judged``: ``inspect score default.eval --scorer inspect_gaia/gaia_judge``, the scripted model
  the judge; ``cancelled``: ``inspect eval`` stopped by a Ctrl-C while a sample runs.

Then ``manifest.json``: what made them (this module's SHA-256, inspect's and inspect_gaia's
versions, the commit, each file's SHA-256) and the log format the code wrote (``log_format``).
``tests/test_real_logs.py`` fails when the code's log format, or this module, is no longer what
made the fixtures. A run that fails stops the generator and leaves the old fixtures in place.

Needs a Docker Engine and the images ``inspect-gaia/sandbox:bookworm``, ``:bookworm-agents``,
``:bookworm-browser`` and the egress proxy's (``.ci/sandbox-images.sh``). The runs name their
dataset by a path relative to the repository's root, as a user's command line would, and run
from there whatever the directory it is started in.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, get_args

from pydantic import BaseModel

REPO: Path = Path(__file__).resolve().parent.parent
FIXTURES: Path = REPO / "tests" / "fixtures" / "real-logs"
LOGS = "logs"
"""The fixtures' folder of logs (and the web archive beside its log), under ``FIXTURES``."""
MANIFEST = "manifest.json"
COMMAND = "python -m support.real_logs"
"""The command that regenerates the fixtures (from the repository root)."""

DATASET = "tests/fixtures/gaia-tiny"
MODEL = "openai-api/scripted/gaia-bot"
JUDGE = "openai-api/scripted/judge"
IMAGE = os.environ.get("INSPECT_GAIA_TEST_IMAGE", "inspect-gaia/sandbox:bookworm")
AGENTS_IMAGE = "inspect-gaia/sandbox:bookworm-agents"
BROWSER_IMAGE = "inspect-gaia/sandbox:bookworm-browser"

# gaia-tiny's questions, by their task ids and words of their text
LAGOON = ("7e472f07-8c34-532e-9ea2-293dc66819b2", "invented lagoon")
VISITS = ("9410e454-b071-52ff-ac24-dce9845bebd0", "visitors per gallery")
CREW = ("a3cdf335-799b-57ca-a178-6fe70216b1cd", "crew of a skiff")
LANTERNS = ("9f5ddf59-f099-5276-b702-dfa6abde1964", "lanterns were sold")
HERONS = ("08efad48-7b05-5662-b32c-3635fd01cd40", "heron or herons")
FILES = "/shared_files"

SUM_VISITORS = (
    "python3 -c \"import csv; print(format(sum(int(r['visitors']) for r in "
    f"csv.DictReader(open('{FILES}/{VISITS[0]}.csv'))), ','))\""
)
COUNT_HERONS = f"echo $(( $(grep -c heron {FILES}/{HERONS[0]}.txt) * 9173 ))"
LIST_CREW = (
    f"python3 -c \"import json; c=json.load(open('{FILES}/{CREW[0]}.json'))['crew']; "
    "print('; '.join(m['name'] for m in sorted(c, key=lambda m: m['joined'])))\""
)

Steps = list[dict[str, Any]]
DEFAULT: dict[str, Steps] = {
    VISITS[1]: [{"bash": SUM_VISITORS}, {"submit_output": True}],  # L1, right
    LAGOON[1]: [{"submit": "quillfeather   LAGOON"}],  # L1, right (case and spaces differ)
    LANTERNS[1]: [{"bash": f"ls {FILES}"}, {"submit": "1204.67"}],  # L2, wrong (1204.7)
    HERONS[1]: [{"bash": COUNT_HERONS}, {"submit_output": True}],  # L3, right
}
"""The default agent's steps per question (``default``, ``cancelled``)."""
TEST_SPLIT: dict[str, Steps] = {
    "word kettle": [
        {"bash": "grep -c kettle /shared_files/a09cd452-3bc3-5b50-aee7-f9f87624bb9f.txt"},
        {"submit_output": True},
    ],
    "Ysolde Brack": [{"submit": "astrolabe"}],
}
FOUND = r"answer=([\w,; ]+)"
AGENTS: dict[str, tuple[tuple[str, str], str]] = {
    "mini_swe_agent": (VISITS, SUM_VISITORS),
    "claude_code": (CREW, LIST_CREW),
    "codex_cli": (HERONS, COUNT_HERONS),
    "gemini_cli": (LAGOON, "echo Quillfeather Lagoon"),
}
"""Each packaged agent's question, and the command that answers it from the attachment."""
JUDGE_SAYS = {
    VISITS[1]: "The same number. GRADE: C",
    LAGOON[1]: "The same name. GRADE: C",
    LANTERNS[1]: "A different amount. GRADE: I",
    HERONS[1]: "I cannot tell.",  # no grade: N
}


def agent_steps(agent: str, command: str) -> Steps:
    """The attachment read, then the answer, as each agent's CLI takes them (as its test)."""
    shown = f"echo answer=$({command})"
    if agent == "mini_swe_agent":  # every turn calls its bash tool; it ends on its exit command
        done = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
        return [{"bash": shown}, {"bash": done, "answer_found": FOUND}]
    if agent == "claude_code":
        call = {"call": "Bash", "args": {"command": shown, "description": "read the file"}}
    elif agent == "gemini_cli":  # its shell refuses a command substitution
        piped = f"{command} | sed 's/^/answer=/'"
        call = {"call": "run_shell_command", "args": {"command": piped}}
    else:
        call = {"call": "exec_command", "args": {"cmd": shown}}
    return [call, {"answer_found": FOUND}]


@dataclass(frozen=True)
class Run:
    """A fixture: its file's name, the task's parameters and the scripted model's steps."""

    name: str
    params: dict[str, Any]
    steps: dict[str, Steps]


def _web_steps(replay: bool) -> dict[str, Steps]:
    from support.answer_pages import WAIT_FOR_STANDINS, WEATHER_HOST, WEATHER_PATH, fetch

    read = f"{WAIT_FOR_STANDINS}; {fetch(WEATHER_HOST, WEATHER_PATH)}"
    # the replay asks once more for a page never recorded: refused, and said so
    never = [{"bash": fetch(WEATHER_HOST, "/never-read")}] if replay else []
    return {
        LAGOON[1]: [{"bash": read}, *never, {"submit": "quillfeather   LAGOON"}],
        VISITS[1]: [{"bash": f"{read}; {SUM_VISITORS}"}, {"submit": "48,671"}],
    }


def _ids(*questions: tuple[str, str]) -> str:
    return ",".join(task_id for task_id, _ in questions)


RUNS: tuple[Run, ...] = (
    Run(
        "default",
        {"ids": _ids(VISITS, LAGOON, LANTERNS, HERONS), "image": IMAGE},
        DEFAULT,
    ),
    Run("test", {"split": "test", "image": IMAGE}, TEST_SPLIT),
    *(
        Run(f"agent-{agent}", {"ids": question[0], "image": AGENTS_IMAGE, "agent": agent}, {})
        for agent, (question, _) in AGENTS.items()
    ),
    Run(
        "web-record",
        {"ids": _ids(LAGOON, VISITS), "image": IMAGE, "web_record": "bodies"},
        _web_steps(replay=False),
    ),
    Run("web-replay", {"ids": _ids(LAGOON, VISITS), "image": IMAGE}, _web_steps(replay=True)),
    Run(
        "browser",
        {"ids": LAGOON[0], "image": BROWSER_IMAGE, "browser": True},
        {},  # its steps name the stand-in web's address (``_browse``)
    ),
    Run("cancelled", {"ids": _ids(LAGOON, HERONS), "image": IMAGE}, {}),
)
"""The runs, in the order they are made (``web-replay`` reads ``web-record``'s archive)."""
NAMES = (*(run.name for run in RUNS), "judged")
"""Every fixture log, as ``<name>.eval`` (``fixture``)."""


def fixture(name: str) -> Path:
    """The fixture log ``name`` (one of ``NAMES``)."""
    return FIXTURES / LOGS / f"{name}.eval"


# -- what made the fixtures, and the format they hold ---------------------------------------------


def generator_sha256() -> str:
    """The SHA-256 of the generator's source: this module's and ``real_logs_make``'s.

    A fixture another generator made is stale.
    """
    digest = hashlib.sha256()
    for module in ("real_logs.py", "real_logs_make.py"):
        digest.update((Path(__file__).parent / module).read_bytes())
    return digest.hexdigest()


def _sha256_json(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()


def _records(model: type[BaseModel]) -> dict[str, dict[str, str]]:
    """Each field of ``model`` and of the records it holds: type, constraints, default.

    Types by their names alone (a record moved to another module is the same record), and not
    pydantic's JSON schema, whose shape a pydantic release may change.
    """
    found: dict[str, dict[str, str]] = {}
    todo = [model]
    while todo:
        record = todo.pop()
        if record.__name__ in found:
            continue
        found[record.__name__] = {
            name: f"{_named(f.annotation)} {f.metadata} = {f.default!r}"
            for name, f in record.model_fields.items()
        }
        todo += [held for f in record.model_fields.values() for held in _held(f.annotation)]
    return found


def _named(annotation: Any) -> str:
    """``int``, ``AgentRecord | None``, ``Literal['validation', 'test']``: no module's path."""
    named = annotation.__name__ if isinstance(annotation, type) else str(annotation)
    return re.sub(r"\b(?:\w+\.)+(\w+)", r"\1", named)


def _held(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [model for arg in get_args(annotation) for model in _held(arg)]


def log_format() -> dict[str, Any]:
    """What the code writes into a log that the readers read: when any changes, regenerate.

    inspect's log format version; the ``gaia`` record's ``SCHEMA_VERSION`` and its fields (one
    changed without the version bumped is caught too); a web request's fields and the store keys
    they are kept under; the judge's default prompt (the judged log's verdicts are its).
    """
    from inspect_ai.log import EvalLog

    from inspect_gaia.egress.web_record import ARCHIVE_KEY, STORE_KEY, WebRequest
    from inspect_gaia.logs.provenance import SCHEMA_VERSION, GaiaProvenance
    from inspect_gaia.scoring.judge import load_prompt

    return {
        "inspect_log_version": EvalLog.model_fields["version"].default,
        "gaia_schema_version": SCHEMA_VERSION,
        "gaia_record_sha256": _sha256_json(_records(GaiaProvenance)),
        "judge_prompt_sha256": load_prompt(None).sha256,
        "web_request_sha256": _sha256_json(
            [STORE_KEY, ARCHIVE_KEY, *[f"{f.name}: {f.type}" for f in fields(WebRequest)]]
        ),
    }


def main(argv: list[str] | None = None) -> None:
    """``python -m support.real_logs [FOLDER]``: regenerate the fixtures (Docker; minutes)."""
    import argparse

    from support.real_logs_make import make

    parser = argparse.ArgumentParser(
        prog="python -m support.real_logs",
        description="Regenerate the readers' fixtures from real Docker runs of the current code "
        "(the sandbox images; about 7 minutes).",
    )
    parser.add_argument(
        "folder", nargs="?", type=Path, default=FIXTURES, help="default: %(default)s"
    )
    folder: Path = parser.parse_args(argv).folder
    print(json.dumps(make(folder.resolve()), indent=2))


if __name__ == "__main__":
    main()
