"""Bad input at the user's surface: one clear line, no run, no traceback.

Through `inspect eval`: every refusal is tested in-process where it is made (``test_params.py``,
``test_dataset.py``, ``test_snapshot_files.py``); these few cases check that `inspect eval` prints
the one line and no log.
Through `inspect-gaia`: a table of bad inputs to each command, each one line on stderr that
names the fix in that command's own flags.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import click
import pytest
from huggingface_hub import constants as hf_constants

from inspect_gaia._cli.main import cli
from inspect_gaia.questions.hub import HF_REVISION
from tests.helpers import (
    TWO_SAMPLES,
    eval_command,
    invoke,
    run_eval_cli,
    silent_endpoint,
    write_log,
)
from tests.scenario import EVALSCOPE_RUN, GAIA_MINI, GAIA_TINY, MINI_CREW


def _assert_refused(run_output: str, returncode: int, message: str, workdir: Path) -> None:
    output = " ".join(run_output.split())
    assert returncode != 0, output[-500:]
    assert message in output, output[-800:]
    assert "Traceback" not in output
    assert not list(workdir.glob("**/*.eval")), "nothing may start"


@pytest.mark.slow  # a new inspect/inspect-gaia process: seconds each
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["level=4"], "level must be 1, 2 or 3"),
        (["split=test", "max_attempts=2"], "max_attempts=2 needs answers"),
        (["hub=huggingface", "split=test", "revision=main"], "offline mode is on"),
    ],
)
def test_a_refused_parameter_stops_inspect_eval_in_one_line(
    args: list[str], message: str, tmp_path: Path
) -> None:
    if not any(a.startswith("hub=") for a in args):
        args = [*args, f"dataset_path={GAIA_TINY}"]
    run = run_eval_cli(
        args,
        tmp_path,
        env={"INSPECT_GAIA_CACHE_DIR": str(tmp_path / "cache"), "HF_HUB_OFFLINE": "1"},
    )
    _assert_refused(run.stdout + run.stderr, run.returncode, message, tmp_path)
    assert not list((tmp_path / "cache").glob("**/.inspect_gaia-complete-*"))


@pytest.mark.slow  # a new inspect process: seconds each
@pytest.mark.parametrize("display", ["none", "plain", "rich"])
@pytest.mark.parametrize(
    ("args", "base_url", "line"),
    [
        (["levle=1"], None, "unknown parameter levle — did you mean level?"),
        (
            ["level=1"],
            "http://127.0.0.1:9/v1",
            "cannot reach the model openai-api/scripted/gaia-bot at http://127.0.0.1:9/v1 "
            "(connection refused) — start the endpoint or fix its address",
        ),
    ],
)
def test_a_refusal_reaches_stderr_under_every_display(
    display: str, args: list[str], base_url: str | None, line: str, tmp_path: Path
) -> None:
    """Issue #50: under --display none (scripts, CI) a refusal printed nothing: exit 1, no output.
    inspect printed it on stdout through its console, which --display none silences."""
    command = eval_command([*args, f"dataset_path={GAIA_TINY}"], tmp_path / "logs")
    command[command.index("--display") + 1] = display
    env = {**os.environ, "SCRIPTED_API_KEY": "x", "SCRIPTED_BASE_URL": silent_endpoint()}
    if base_url:
        env["SCRIPTED_BASE_URL"] = base_url
    run = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, env=env)
    assert run.returncode == 1
    assert run.stdout.strip() == ""
    (said,) = run.stderr.strip().splitlines()
    assert said.startswith(line), run.stderr
    assert not list(tmp_path.glob("**/*.eval"))


@pytest.mark.slow  # a new inspect/inspect-gaia process: seconds each
def test_a_hostile_snapshot_stops_inspect_eval_in_one_line(tmp_path: Path) -> None:
    snapshot = tmp_path / "snapshot"
    shutil.copytree(GAIA_TINY, snapshot)
    attachment = next((snapshot / "2023" / "validation").glob("*.csv"))
    attachment.unlink()
    attachment.symlink_to("/etc/hostname")
    run = run_eval_cli([f"dataset_path={snapshot}"], tmp_path)
    _assert_refused(run.stdout + run.stderr, run.returncode, "links outside the snapshot", tmp_path)


@pytest.mark.slow  # a new inspect/inspect-gaia process: seconds each
def test_bogus_docker_host_is_named(tmp_path: Path) -> None:
    run = run_eval_cli(
        [f"dataset_path={GAIA_TINY}", "level=1"], tmp_path, env={"DOCKER_HOST": "tcp://127.0.0.1:9"}
    )
    _assert_refused(
        run.stdout + run.stderr,
        run.returncode,
        "Docker Engine not running at tcp://127.0.0.1:9 (connection refused) — DOCKER_HOST "
        "points at tcp://127.0.0.1:9, where nothing answers: unset it or fix it",
        tmp_path,
    )


@pytest.mark.docker
@pytest.mark.parametrize("kind", ["docker", "compose"])
def test_missing_image_without_registry_is_named(
    sandbox_image: str, kind: str, tmp_path: Path
) -> None:
    run = run_eval_cli(
        [
            f"dataset_path={GAIA_TINY}",
            "image=inspect-gaia/no-such-image:0",
            "level=1",
            f"sandbox={kind}",
        ],
        tmp_path,
    )
    output = run.stdout + run.stderr
    _assert_refused(
        output,
        run.returncode,
        "sandbox image inspect-gaia/no-such-image:0 is not present and cannot be pulled",
        tmp_path,
    )
    assert "inspect-gaia image build --offline" in " ".join(output.split())


# -- inspect-gaia's own commands: every bad input is one line in that command's flags -------------

INTERNALS = (
    "Traceback",
    "EOCD",
    "validation error",
    "Connection aborted",
    "Errno",
    "Retrying",
    "retry in",
    "Usage:",
    "-T ",
)
"""Library internals, retry chatter, usage dumps and inspect eval's flags: never in a CLI error."""

CLOSED = "http://127.0.0.1:9"
"""An address where nothing listens."""


def _command(words: list[str]) -> click.Command:
    """The inspect-gaia command (or group) that ``words`` (after ``inspect-gaia``) name."""
    command: click.Command = cli
    for word in words:
        if not isinstance(command, click.Group) or word.startswith("-"):
            break
        found = command.get_command(click.Context(command), word)
        if found is None:
            break
        command = found
    return command


def _options(command: click.Command) -> set[str]:
    params = command.get_params(click.Context(command))
    return {opt for param in params for opt in param.opts if opt.startswith("--")}


def _flags(text: str) -> set[str]:
    return set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", text))


def assert_names_own_flags(message: str, args: list[str]) -> None:
    """Every --flag in ``message`` is an option of the command it is written for.

    A backticked ``inspect-gaia ...`` command line is checked against that command; any other
    flag against the command the user ran. Quoted input ('--bogus') is the user's, echoed.
    """
    text = re.sub(r"'[^']*'", "", message)
    for segment in re.findall(r"`([^`]*)`", text):
        words = segment.split()
        if words and words[0] == "inspect-gaia":
            named = _command(words[1:])
            assert _flags(segment) <= _options(named), (segment, _flags(segment) - _options(named))
            text = text.replace(f"`{segment}`", "")
    ran = _command(args)
    assert _flags(text) <= _options(ran), (message, _flags(text) - _options(ran))


def _no_engine(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("DOCKER_HOST", "tcp://127.0.0.1:9")


def _no_hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("INSPECT_GAIA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(hf_constants, "ENDPOINT", CLOSED)
    monkeypatch.setattr(hf_constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setenv("MODELSCOPE_ENDPOINT", CLOSED)


def _test_log_no_hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _no_hub(monkeypatch, tmp_path)
    sample = {"id": "t1", "level": 1, "target": "?", "answer": "4", "value": "I"}
    params: dict[str, object] = {
        "split": "test",
        "hub": "huggingface",
        "revision": HF_REVISION,
        "dataset_path": None,
    }
    write_log(tmp_path / "test.eval", [sample], params=params)


def _hf_offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("INSPECT_GAIA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(hf_constants, "HF_HUB_OFFLINE", True)


def _no_matplotlib(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` raises ImportError
    (tmp_path / "broken.eval").write_bytes(b"not a zip")  # never read: the check comes first


def _nothing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    return None


def _a_log(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    write_log(tmp_path / "run.eval", TWO_SAMPLES)


def _compare_sides(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Sides for compare: evalscope's run, gaia-mini, leaderboard files; no snapshot cached."""
    monkeypatch.setenv("INSPECT_GAIA_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "evalscope").symlink_to(EVALSCOPE_RUN)
    (tmp_path / "GAIA").symlink_to(GAIA_MINI)
    line = json.dumps({"task_id": MINI_CREW, "model_answer": "92"}) + "\n"
    (tmp_path / "answers.jsonl").write_text(line)
    (tmp_path / "twice.jsonl").write_text(line * 2)


BAD_INPUT = [
    # (the command line, what the one line says, the environment)
    (["bogus"], "no such command 'bogus'", _nothing),
    (["--bogus"], "no such option", _nothing),
    (["doctor", "--max-sandboxes", "0"], "'--max-sandboxes': 0 is not in the range", _nothing),
    (["doctor", "--max-sandboxes", "-3"], "'--max-sandboxes': -3 is not in the range", _nothing),
    (["doctor", "--max-sandboxes", "many"], "'many' is not a valid integer", _nothing),
    (["doctor", "--min-free-gb", "-1"], "'--min-free-gb': -1.0 is not in the range", _nothing),
    (["doctor", "--disk", "banana"], "'banana' is not a size such as 512m or 4g", _nothing),
    (["doctor", "--hub", "hf"], "'hf' is not one of 'huggingface', 'modelscope'", _nothing),
    (["doctor", "--dataset-path", "{tmp}/nowhere"], "does not exist", _nothing),
    (["download", "--split", "train"], "'train' is not one of", _nothing),
    (["download", "--split", "test"], f"cannot reach Hugging Face at {CLOSED}", _no_hub),
    (["download", "--hub", "modelscope"], f"cannot reach ModelScope at {CLOSED}", _no_hub),
    (["download", "--split", "test"], "offline mode is on (HF_HUB_OFFLINE)", _hf_offline),
    (
        ["submission", "{tmp}/test.eval", "-o", "{tmp}/s.jsonl"],
        "or pass `--dataset-path` a local GAIA snapshot",
        _test_log_no_hub,
    ),
    (["image", "build", "--tag", "Bad Tag!!"], "'Bad Tag!!' is not an image name", _nothing),
    (["image", "build", "--offline"], "Docker Engine not running at tcp://127.0.0.1:9", _no_engine),
    (["image", "build"], "Docker Engine not running at tcp://127.0.0.1:9", _no_engine),
    (["image", "bogus"], "no such command 'bogus'", _nothing),
    (
        ["report", "{tmp}/broken.eval", "--plot", "{tmp}/p.png"],
        "--plot needs matplotlib — install it with `pip install 'inspect-gaia[plot]'`",
        _no_matplotlib,
    ),
    (
        ["compare", "{tmp}/broken.eval", "{tmp}", "--plot", "{tmp}/p.png"],
        "--plot needs matplotlib",
        _no_matplotlib,
    ),
    (
        ["report", "{tmp}/run.eval", "--plot", "{tmp}/p.txt"],
        "'{tmp}/p.txt' is not an image file name (the format goes by its ending: .png, .svg",
        _a_log,
    ),
    (
        ["compare", "{tmp}/run.eval", "{tmp}/run.eval", "--plot", "{tmp}/noext"],
        "'{tmp}/noext' is not an image file name",
        _a_log,
    ),
    (
        ["compare", "{tmp}/twice.jsonl", "{tmp}/evalscope"],
        f"task id {MINI_CREW} is on lines 1 and 2 — keep one answer per question",
        _compare_sides,
    ),
    (
        ["compare", "{tmp}/answers.jsonl", "{tmp}/evalscope"],
        "carries no answers to score against and no GAIA snapshot was found — give --dataset-path",
        _compare_sides,
    ),
    (
        ["compare", "{tmp}/evalscope", "{tmp}/answers.jsonl", "--dataset-path", "{tmp}/GAIA"]
        + ["--exclude", "not-an-id"],
        "--exclude names 1 task id(s) not in the validation split: not-an-id",
        _compare_sides,
    ),
]


@pytest.mark.parametrize(
    ("args", "says", "setup"),
    BAD_INPUT,
    ids=[f"{' '.join(a)} [{s.__name__.strip('_')}]" for a, _, s in BAD_INPUT],
)
def test_every_bad_input_to_inspect_gaia_is_one_line_in_its_own_flags(
    args: list[str],
    says: str,
    setup: Callable[[pytest.MonkeyPatch, Path], None],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    setup(monkeypatch, tmp_path)
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    says = says.replace("{tmp}", str(tmp_path))
    code, out, err = invoke(*args)
    assert code != 0 and out == ""
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert says in err, err
    assert err.startswith("inspect-gaia"), err
    for internal in INTERNALS:
        assert internal not in err, (internal, err)
    assert_names_own_flags(err, args)


@pytest.mark.slow  # a new inspect/inspect-gaia process: seconds each
@pytest.mark.parametrize(
    ("hub", "variable", "other"),
    [
        ("huggingface", "HF_ENDPOINT", "modelscope"),
        ("modelscope", "MODELSCOPE_ENDPOINT", "huggingface"),
    ],
)
def test_download_from_an_unreachable_hub_says_one_line_at_once(
    hub: str, variable: str, other: str, tmp_path: Path
) -> None:
    # The installed command in a process of its own: the hub clients' loggers and warnings write
    # to the real stderr, which an in-process run would not see.
    env = {**os.environ, variable: CLOSED, "INSPECT_GAIA_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("HF_HUB_OFFLINE", None)
    script = Path(sys.executable).parent / "inspect-gaia"
    run = subprocess.run(
        [str(script), "download", "--hub", hub], capture_output=True, text=True, env=env
    )
    assert run.returncode == 1 and run.stdout == ""
    (line,) = run.stderr.splitlines()
    assert line.startswith("inspect-gaia: cannot reach ") and f"`--hub {other}`" in line
    for internal in INTERNALS:
        assert internal not in run.stderr, (internal, run.stderr)


@pytest.mark.docker
@pytest.mark.parametrize("kind", ["docker", "compose"])
def test_a_disk_limit_the_engine_cannot_enforce_is_refused(
    sandbox_image: str, kind: str, tmp_path: Path
) -> None:
    """Issue #17 finding 3: with compose every sample failed ("No services started"), exit 0."""
    run = run_eval_cli(
        [f"dataset_path={GAIA_TINY}", f"image={sandbox_image}", "level=1", "disk=10g"]
        + [f"sandbox={kind}"],
        tmp_path,
    )
    output = run.stdout + run.stderr
    _assert_refused(
        output, run.returncode, "-T disk=10g cannot be applied by this Docker Engine", tmp_path
    )
    assert "No services started" not in output
