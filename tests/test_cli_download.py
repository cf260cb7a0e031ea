"""`inspect-gaia download`: the cache the task reads."""

from __future__ import annotations

import json
from pathlib import Path

import huggingface_hub
import pytest
from huggingface_hub import constants

from tests.helpers import StandInDownload, invoke
from tests.scenario import GAIA_MINI


def test_download_fills_the_cache_once(
    isolated_cache: Path, hubs_answer: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    stand_in = StandInDownload(GAIA_MINI)
    monkeypatch.setattr(huggingface_hub, "snapshot_download", stand_in)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    code, out, _ = invoke("download", "--json")
    assert code == 0
    fetched = {item["split"]: item for item in json.loads(out)}
    assert (fetched["validation"]["questions"], fetched["validation"]["attachments"]) == (9, 4)
    assert (fetched["test"]["questions"], fetched["test"]["attachments"]) == (4, 2)
    assert len(stand_in.calls) == 2
    code, out, _ = invoke("download", "--split", "validation")
    assert code == 0 and out.startswith("✓ validation: 9 questions, 4 attachments")
    assert len(stand_in.calls) == 2  # already complete: nothing fetched again


def test_download_gated_is_one_line(isolated_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    code, _, err = invoke("download", "--split", "test")
    assert code == 1 and err.count("\n") == 1 and "offline mode is on" in err
