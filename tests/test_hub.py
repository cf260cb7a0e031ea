from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import huggingface_hub
import pytest
from huggingface_hub import constants

from inspect_gaia import GaiaDatasetError, gaia_dataset
from inspect_gaia.questions.hub import (
    HF_REPO_ID,
    HF_REVISION,
    MODELSCOPE_DATASET_ID,
    cache_dir,
    fetch_snapshot,
    hub_endpoint,
    snapshot_dir,
    unreachable,
)
from tests.helpers import StandInDownload, invoke, quiet_handler, serve_http


class _GatedHub(BaseHTTPRequestHandler):
    """Answers every request as the Hub answers for a gated repo without accepted terms."""

    seen: list[str] = []

    def _refuse(self) -> None:
        self.seen.append(self.path)
        body = json.dumps(
            {"error": "Access to dataset gaia-benchmark/GAIA is restricted."}
        ).encode()
        self.send_response(401)
        self.send_header("X-Error-Code", "GatedRepo")
        self.send_header("X-Error-Message", "Access to dataset gaia-benchmark/GAIA is restricted.")
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = _refuse
    do_HEAD = _refuse

    def log_message(self, format: str, *args: Any) -> None:
        return


@pytest.fixture
def gated_hub(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    _GatedHub.seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _GatedHub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setattr(constants, "ENDPOINT", f"http://127.0.0.1:{server.server_address[1]}")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    try:
        yield _GatedHub.seen
    finally:
        server.shutdown()
        server.server_close()


def test_cache_dir_follows_the_environment(isolated_cache: Path) -> None:
    assert cache_dir() == isolated_cache
    assert snapshot_dir("huggingface", "refs/pr/1") == isolated_cache / "huggingface" / "refs_pr_1"


def test_gated_without_token_says_how_to_fix(
    isolated_cache: Path, gated_hub: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setattr(huggingface_hub, "get_token", lambda: None)
    with pytest.raises(GaiaDatasetError) as caught:
        gaia_dataset(split="validation", hub="huggingface")
    message = str(caught.value)
    assert "GAIA is gated on Hugging Face" in message
    assert "set HF_TOKEN" in message and "-T hub=modelscope" in message
    assert "https://huggingface.co/datasets/gaia-benchmark/GAIA" in message
    assert gated_hub, "the stand-in hub was never asked"
    assert any(HF_REVISION in path and "gaia-benchmark/GAIA" in path for path in gated_hub), (
        gated_hub
    )
    assert not list(isolated_cache.glob("**/.inspect_gaia-complete-*")), (
        "a refused download must not be marked complete"
    )


def test_offline_without_cache_fails_clearly(
    isolated_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(GaiaDatasetError, match="offline mode is on .* not cached") as caught:
        gaia_dataset(hub="huggingface")
    assert "unset HF_HUB_OFFLINE and run `inspect-gaia download`" in str(caught.value)


def test_huggingface_download_is_cached_and_then_offline(
    isolated_cache: Path, hubs_answer: str, gaia_tiny: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    download = StandInDownload(gaia_tiny)
    monkeypatch.setattr(huggingface_hub, "snapshot_download", download)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)

    first = gaia_dataset(split="validation", hub="huggingface")
    assert len(first) == 7
    (call,) = download.calls
    assert call["repo_id"] == HF_REPO_ID and call["repo_type"] == "dataset"
    assert call["revision"] == HF_REVISION
    assert call["allow_patterns"] == ["2023/validation/*"]

    # The second run reads the cache and asks no hub, even in offline mode.
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    second = gaia_dataset(split="validation", hub="huggingface")
    assert [s.id for s in second] == [s.id for s in first]
    assert len(download.calls) == 1


def test_interrupted_download_is_not_mistaken_for_complete(
    isolated_cache: Path, hubs_answer: str, gaia_tiny: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    broken = StandInDownload(gaia_tiny, fail_after=2)
    monkeypatch.setattr(huggingface_hub, "snapshot_download", broken)
    with pytest.raises(
        GaiaDatasetError, match="could not download GAIA from Hugging Face .*ConnectionError"
    ):
        gaia_dataset(hub="huggingface")
    assert not (
        snapshot_dir("huggingface", HF_REVISION) / ".inspect_gaia-complete-validation.json"
    ).exists()

    resumed = StandInDownload(gaia_tiny)
    monkeypatch.setattr(huggingface_hub, "snapshot_download", resumed)
    assert len(gaia_dataset(hub="huggingface")) == 7
    assert len(resumed.calls) == 1


def test_modelscope_download_uses_the_snapshot_api(
    isolated_cache: Path, hubs_answer: str, gaia_tiny: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import modelscope

    download = StandInDownload(gaia_tiny)
    monkeypatch.setattr(modelscope, "dataset_snapshot_download", download)
    dataset = gaia_dataset(split="test", hub="modelscope")
    assert len(dataset) == 2
    (call,) = download.calls
    assert call["dataset_id"] == MODELSCOPE_DATASET_ID
    assert call["revision"] == "master"
    assert call["allow_patterns"] == ["2023/test/*"]
    assert Path(call["local_dir"]) == snapshot_dir("modelscope", "master")
    # the split downloaded is marked, the other one is not
    assert fetch_snapshot("modelscope", "master", ["2023/test/*"], key="test") == Path(
        call["local_dir"]
    )
    assert len(download.calls) == 1


def test_modelscope_failure_is_one_line(
    isolated_cache: Path, hubs_answer: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import modelscope

    def refuse(**kwargs: Any) -> str:
        raise ValueError("dataset not found")

    monkeypatch.setattr(modelscope, "dataset_snapshot_download", refuse)
    with pytest.raises(GaiaDatasetError, match="could not download GAIA from ModelScope"):
        gaia_dataset(hub="modelscope")


CLOSED = "http://127.0.0.1:9"
"""An address where nothing listens: the connection is refused at once."""


@pytest.mark.parametrize(
    ("hub", "other"), [("huggingface", "modelscope"), ("modelscope", "huggingface")]
)
def test_an_unreachable_hub_is_refused_at_once_without_the_clients_retries(
    isolated_cache: Path, monkeypatch: pytest.MonkeyPatch, hub: str, other: str
) -> None:
    import modelscope

    monkeypatch.setattr(constants, "ENDPOINT", CLOSED)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setenv("MODELSCOPE_ENDPOINT", CLOSED)
    download = StandInDownload(Path("/nonexistent"))
    monkeypatch.setattr(huggingface_hub, "snapshot_download", download)
    monkeypatch.setattr(modelscope, "dataset_snapshot_download", download)
    with pytest.raises(GaiaDatasetError) as caught:
        gaia_dataset(hub=hub)  # type: ignore[arg-type]
    message = str(caught.value)
    assert f"at {CLOSED} (connection refused) — check the network" in message
    # inspect eval's flags, since no inspect-gaia command is running
    assert f"`-T hub={other}`" in message and "`-T dataset_path=`" in message
    assert download.calls == [], "the hub client (and its minute of retries) never ran"


def test_hub_endpoint_follows_the_clients_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(constants, "ENDPOINT", "http://127.0.0.1:8000")
    assert hub_endpoint("huggingface") == "http://127.0.0.1:8000"
    monkeypatch.delenv("MODELSCOPE_ENDPOINT", raising=False)
    monkeypatch.delenv("MODELSCOPE_DOMAIN", raising=False)
    assert hub_endpoint("modelscope") == "https://www.modelscope.cn"
    monkeypatch.setenv("MODELSCOPE_DOMAIN", "mirror.example")
    assert hub_endpoint("modelscope") == "https://mirror.example"
    monkeypatch.setenv("MODELSCOPE_ENDPOINT", "http://127.0.0.1:8001/")
    assert hub_endpoint("modelscope") == "http://127.0.0.1:8001"


def test_a_hub_that_answers_with_an_error_status_is_reachable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # any answer will do: the hub client, not the probe, then says what is wrong
    with serve_http(quiet_handler({"/": (503, "text/plain", b"down for maintenance")})) as url:
        monkeypatch.setattr(constants, "ENDPOINT", url)
        monkeypatch.setenv("MODELSCOPE_ENDPOINT", url)
        assert unreachable("huggingface") is None
        assert unreachable("modelscope") is None
    assert unreachable("huggingface") == "connection refused"


class _NoSuchRevision(BaseHTTPRequestHandler):
    """Answers every request as the Hub answers for a revision the repository does not have."""

    def _refuse(self) -> None:
        body = b'{"error": "Invalid rev id: nope"}'
        self.send_response(404)
        self.send_header("X-Error-Code", "RevisionNotFound")
        self.send_header("X-Error-Message", "Invalid rev id: nope")
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = _refuse
    do_HEAD = _refuse

    def log_message(self, format: str, *args: Any) -> None:
        return


def test_an_unknown_revision_names_the_flag_that_set_it(
    isolated_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    with serve_http(_NoSuchRevision) as url:
        monkeypatch.setattr(constants, "ENDPOINT", url)
        with pytest.raises(GaiaDatasetError) as caught:
            gaia_dataset(hub="huggingface", revision="nope")
        assert str(caught.value) == (
            f"revision 'nope' does not exist in {HF_REPO_ID} — omit `-T revision=` to use the "
            f"pinned {HF_REVISION}, or pass `-T dataset_path=` a local GAIA snapshot"
        )
        code, _, err = invoke("download", "--revision", "nope", "--split", "test")
    assert code == 1 and err == (
        f"inspect-gaia: revision 'nope' does not exist in {HF_REPO_ID} — omit `--revision` to "
        f"use the pinned {HF_REVISION}\n"
    )
