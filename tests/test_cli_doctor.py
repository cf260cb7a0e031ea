"""`inspect-gaia doctor`: the preflight checks."""

from __future__ import annotations

import json
import re
from pathlib import Path

import huggingface_hub
import pytest
from huggingface_hub import constants

from inspect_gaia._cli.doctor import LAST_STEP
from tests.helpers import invoke, quiet_handler, serve_http
from tests.helpers_errors import one_of_each


@pytest.mark.docker
def test_doctor_passes_with_the_engine_up(sandbox_image: str, gaia_tiny: Path) -> None:
    code, out, _ = invoke(
        "doctor",
        "--image",
        sandbox_image,
        "--dataset-path",
        str(gaia_tiny),
        "--max-sandboxes",
        "4",
        "--min-free-gb",
        "1",
        "--json",
    )
    checks = {c["name"]: c for c in json.loads(out)}
    assert code == 0, checks
    assert set(checks) == {
        "Docker Engine",
        "Docker Compose",
        "sandbox image",
        "image pin",
        "disk limit",
        "other runs' sandboxes",
        "dataset",
        "free disk",
        "address pools",
    }
    assert all(c["ok"] for c in checks.values())
    assert "is a local build (id sha256:" in checks["image pin"]["detail"]
    # in words, the last line names the probe: the last step before a published run
    code, text, _ = invoke(
        *("doctor", "--image", sandbox_image, "--dataset-path", str(gaia_tiny)),
        *("--max-sandboxes", "4", "--min-free-gb", "1"),
    )
    assert code == 0 and text.rstrip().splitlines()[-1] == LAST_STEP
    # this engine stores containers on overlay2 over ext4: doctor warns, and refuses -T disk=
    assert "a sandbox can write until the host's disk is full" in checks["disk limit"]["detail"]
    code, out, _ = invoke(
        "doctor",
        "--image",
        sandbox_image,
        "--dataset-path",
        str(gaia_tiny),
        "--min-free-gb",
        "1",
        "--disk",
        "10g",
        "--json",
    )
    checks = {c["name"]: c for c in json.loads(out)}
    assert code == 1 and not checks["disk limit"]["ok"]
    assert "cannot be enforced" in checks["disk limit"]["detail"]


def test_doctor_fails_with_a_bogus_docker_host(
    monkeypatch: pytest.MonkeyPatch, gaia_tiny: Path
) -> None:
    monkeypatch.setenv("DOCKER_HOST", "tcp://127.0.0.1:9")
    code, out, _ = invoke("doctor", "--dataset-path", str(gaia_tiny), "--min-free-gb", "0")
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith(
        "✗ Docker Engine: not running at tcp://127.0.0.1:9 (connection refused) — DOCKER_HOST "
        "points at tcp://127.0.0.1:9, where nothing answers: unset it or fix it"
    )
    assert "HTTPConnectionPool" not in out and "Errno" not in out


def test_doctor_without_an_engine_says_why_in_words(
    monkeypatch: pytest.MonkeyPatch, gaia_tiny: Path, tmp_path: Path
) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/docker.sock")
    args = ("doctor", "--dataset-path", str(gaia_tiny), "--min-free-gb", "0", "--disk", "10g")
    code, out, _ = invoke(*args)
    assert code == 1
    assert "Connection aborted" not in out and "FileNotFoundError" not in out
    text = " ".join(out.split())  # lines wrap at the terminal's width
    assert f"✗ Docker Engine: not running at unix://{tmp_path}/docker.sock (no socket at " in text
    # --disk cannot be checked without an engine, and doctor says so; the engine line says why
    # (not running here, or running and refusing this user): the others point to it
    assert (
        "✗ disk limit: -T disk=10g: cannot tell without an engine — see Docker Engine above" in text
    )
    assert "start the engine" not in text
    code, out, _ = invoke(*args, "--json")
    checks = {c["name"]: c for c in json.loads(out)}
    engine = checks["Docker Engine"]
    assert (
        engine["detail"]
        == f"not running at unix://{tmp_path}/docker.sock (no socket at {tmp_path}/docker.sock)"
    )
    assert engine["fix"].startswith(f"DOCKER_HOST points at unix://{tmp_path}/docker.sock, where")


def test_doctor_names_the_download_command_of_the_hub_checked(
    isolated_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCKER_HOST", "tcp://127.0.0.1:9")
    monkeypatch.setenv("MODELSCOPE_ENDPOINT", "http://127.0.0.1:9")
    code, out, _ = invoke("doctor", "--hub", "modelscope", "--split", "test", "--json")
    checks = {c["name"]: c for c in json.loads(out)}
    assert code == 1 and "HF token" not in checks
    dataset = checks["dataset"]
    assert (
        dataset["detail"] == "test not cached; http://127.0.0.1:9 unreachable (connection refused)"
    )
    assert dataset["fix"].startswith("run `inspect-gaia download --hub modelscope --split test`")
    assert "-T " not in dataset["fix"] and "`--dataset-path`" in dataset["fix"]


def test_doctor_says_a_snapshot_problem_once(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("DOCKER_HOST", "tcp://127.0.0.1:9")
    code, out, _ = invoke("doctor", "--dataset-path", str(tmp_path), "--min-free-gb", "0")
    checks = [" ".join(c.split()) for c in re.split(r"^(?=[✓!✗] )", out, flags=re.M) if c]
    (line,) = [c for c in checks if c.startswith("✗ dataset")]
    assert code == 1 and line.count("pass the folder that holds 2023/") == 1


def test_doctor_flags_a_missing_token_and_asks_the_configured_hub(
    isolated_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hub = quiet_handler({"/": (200, "text/html", b"a hub")})
    monkeypatch.setattr(huggingface_hub, "get_token", lambda: None)
    monkeypatch.setenv("DOCKER_HOST", "tcp://127.0.0.1:9")
    with serve_http(hub) as url:
        # doctor asks the endpoint the hub client would use (never a fixed public address)
        monkeypatch.setattr(constants, "ENDPOINT", url)
        code, out, _ = invoke("doctor", "--json", "--min-free-gb", "0")
    checks = {c["name"]: c for c in json.loads(out)}
    assert code == 1
    token = checks["HF token"]
    assert not token["ok"] and "HF_TOKEN" in token["fix"]
    assert "`--hub modelscope`" in token["fix"] and "-T " not in token["fix"]
    assert checks["dataset"]["detail"] == f"validation not cached; {url} reachable"
    assert hub.seen == ["/"]


@pytest.mark.docker
def test_doctor_address_pools_depend_on_the_sandbox(sandbox_image: str) -> None:
    from inspect_gaia._cli._checks import check_networks

    # gaia-docker: one network per run, so any number of sandboxes fits
    assert check_networks(100, True, "docker").ok
    # compose: one network per sandbox, and Docker's default pools hold ~31
    crowded = check_networks(100, True, "compose")
    assert not crowded.ok and "-T sandbox=docker" in crowded.fix
    assert check_networks(100, False, "compose").ok


def test_the_checks_without_the_command(
    monkeypatch: pytest.MonkeyPatch, gaia_tiny: Path, tmp_path: Path
) -> None:
    """``check_docker`` without an engine, and ``check_local_dataset``, called directly."""
    from inspect_gaia._cli._checks import check_docker, check_local_dataset

    monkeypatch.setenv("DOCKER_HOST", "tcp://127.0.0.1:9")
    checks = check_docker("some/image:1", "10g", compose=False)
    engine, compose, *needing = checks  # Compose, not required, passes present or not
    assert (engine.name, engine.ok, compose.ok) == ("Docker Engine", False, True)
    assert [(c.name, c.ok) for c in needing] == [("sandbox image", False), ("disk limit", False)]
    assert needing[0].detail == "some/image:1: cannot tell without an engine"
    assert [c.name for c in check_docker("some/image:1", None, compose=False)][2:] == [
        "sandbox image"
    ]
    assert check_local_dataset(str(gaia_tiny), "validation").ok
    snapshot = check_local_dataset(str(tmp_path), "validation")
    assert not snapshot.ok and "is not a GAIA snapshot" in snapshot.detail
    assert snapshot.fix == "pass the folder that holds 2023/"


def test_a_warning_has_its_own_mark_and_the_engine_s_reason_in_words() -> None:
    from click import unstyle

    from inspect_gaia._cli._checks import Check, _engine_reason
    from inspect_gaia._cli.doctor import _line

    raw = (
        "500 Server Error for http+docker://localhost/v1.45/containers/create: Internal Server "
        "Error (\"--storage-opt is supported only for overlay over xfs with 'pquota' mount option\")"
    )
    assert _engine_reason(raw) == (
        "--storage-opt is supported only for overlay over xfs with 'pquota' mount option"
    )
    assert _engine_reason("no such image") == "no such image" and _engine_reason(None) is None
    warning = Check("disk limit", True, "none on this engine (why)", "what to do", warning=True)
    assert unstyle(_line(warning, 80)) == "! disk limit: none on this engine (why) — what to do"
    assert unstyle(_line(Check("dataset", True, "cached", "unused"), 80)) == "✓ dataset: cached"
    failed = Check("dataset", False, "x " * 50, "the fix")
    lines = unstyle(_line(failed, 40)).splitlines()
    assert lines[0].startswith("✗ dataset: x x") and all(len(line) <= 40 for line in lines)
    assert all(line.startswith("    ") for line in lines[1:]) and lines[-1].endswith("the fix")


def test_any_error_is_a_failed_check_with_its_fix() -> None:
    from click import unstyle

    from inspect_gaia._cli._checks import Check
    from inspect_gaia._cli.doctor import _line
    from inspect_gaia.sandboxes.docker.engine import DockerProblem

    for fix, shown in (("the fix", " — the fix"), ("", "")):
        for error, problem in one_of_each(fix):
            if isinstance(error, DockerProblem):  # it names its own check: its subject
                check, expected = Check.failed(error), f"✗ Docker Engine: not running{shown}"
            else:
                check, expected = Check.failed(error, "logs"), f"✗ logs: {problem}{shown}"
            assert (check.ok, check.fix) == (False, fix)
            assert unstyle(_line(check, 200)) == expected


DIGEST = "sha256:" + "1a" * 32


@pytest.mark.parametrize(
    ("image", "identity", "says"),
    [
        (f"python:3.11@{DIGEST}", (None, DIGEST), "is pinned by digest"),
        (
            "python:3.11",
            ("sha256:" + "9f" * 32, DIGEST),
            f"is not pinned: runs record this engine's copy (sha256:1a1a1a1a1a1a), but the tag "
            f"may name another image later — pin it with -T image=python:3.11@{DIGEST}",
        ),
        ("gaia:1", ("sha256:" + "9f" * 32, None), "is a local build (id sha256:9f9f9f9f9f9f)"),
        ("python:3.11", (None, None), "is not pinned and not here: a run pulls it"),
    ],
)
def test_doctor_says_whether_the_image_is_pinned(
    monkeypatch: pytest.MonkeyPatch, image: str, identity: tuple[str | None, str | None], says: str
) -> None:
    from inspect_gaia._cli import _checks as doctor
    from inspect_gaia.sandboxes.docker import engine

    monkeypatch.setattr(engine, "image_identity", lambda reference: identity)
    check = doctor.check_pinned(image)
    assert check.ok and check.name == "image pin" and says in check.detail


@pytest.mark.docker
def test_doctor_checks_the_egress_proxy_image_when_asked(
    egress_image: str, gaia_tiny: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue #50: doctor had no check for the image web_record and web_replay run."""
    from inspect_gaia._cli import _checks

    args = ["doctor", "--dataset-path", str(gaia_tiny), "--min-free-gb", "1", "--json"]
    code, out, _ = invoke(*args, "--egress-proxy")
    checks = {c["name"]: c for c in json.loads(out)}
    assert checks["egress proxy image"] == {
        "name": "egress proxy image",
        "ok": True,
        "detail": f"{egress_image} present",
        "fix": "",
        "warning": False,
    }
    code, out, _ = invoke(*args)
    assert "egress proxy image" not in {c["name"] for c in json.loads(out)}
    monkeypatch.setattr(_checks, "PROXY_IMAGE", "inspect-gaia/egress-proxy:not-built")
    code, out, _ = invoke(*args, "--egress-proxy")
    missing = {c["name"]: c for c in json.loads(out)}["egress proxy image"]
    assert code == 1 and not missing["ok"] and "web_record and web_replay" in missing["detail"]
    assert missing["fix"].startswith("build it with `inspect-gaia image build --egress-proxy")
    code, out, _ = invoke("image", "build", "--help")
    assert "-T web_record and -T web_replay run it" in " ".join(out.split())
