"""The caps of ``-T web_record=bodies``, as the proxy is told them (``sandboxes/docker/egress_archive.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspect_gaia.errors import GaiaError
from inspect_gaia.sandboxes.docker.egress_archive import (
    BODY_CAP,
    BODY_CAP_ENV,
    RUN_CAP,
    RUN_CAP_ENV,
    SAMPLE_CAP_ENV,
    SHARES,
    archive_dir,
    body_options,
)


def test_the_caps_default_and_follow_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (BODY_CAP_ENV, SAMPLE_CAP_ENV, RUN_CAP_ENV):
        monkeypatch.delenv(name, raising=False)
    assert body_options() == [
        *("--set", "gaia_bodies=true"),
        *("--set", f"gaia_body_cap={BODY_CAP}"),
        *("--set", f"gaia_sample_cap={RUN_CAP // SHARES}"),  # 128 MiB: a share of the run's
        *("--set", f"gaia_run_cap={RUN_CAP}"),
    ]
    monkeypatch.setenv(BODY_CAP_ENV, "1024")
    monkeypatch.setenv(RUN_CAP_ENV, " 4096 ")
    assert body_options()[3::2] == [
        "gaia_body_cap=1024",
        "gaia_sample_cap=512",
        "gaia_run_cap=4096",
    ]
    monkeypatch.setenv(SAMPLE_CAP_ENV, "2048")
    assert body_options()[5] == "gaia_sample_cap=2048"


@pytest.mark.parametrize("value", ["1g", "-5", "0", "2.5"])
def test_a_cap_that_is_no_size_is_one_line_naming_the_fix(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv(RUN_CAP_ENV, value)
    with pytest.raises(GaiaError) as caught:
        body_options()
    assert f"{RUN_CAP_ENV}={value} is not a size in bytes" in str(caught.value)
    assert "set INSPECT_GAIA_WEB_RUN_CAP to a positive whole number" in str(caught.value)


def test_an_archive_goes_beside_the_log(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INSPECT_LOG_DIR", "/runs/today")
    assert archive_dir("/work/my-logs/2026-12-06T10-00-00_gaia_x.eval") == Path("/work/my-logs")
    assert archive_dir("file:///work/my-logs/run.eval") == Path("/work/my-logs")


def test_beside_a_log_that_is_no_local_file_inspects_default_log_dir(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("INSPECT_LOG_DIR", raising=False)
    assert archive_dir(None) == Path("./logs")
    monkeypatch.setenv("INSPECT_LOG_DIR", "/runs/today")
    assert archive_dir("s3://bucket/logs/run.eval") == Path("/runs/today")
