"""Fetching GAIA snapshots from Hugging Face or ModelScope into a local cache.

A snapshot is downloaded once per (hub, revision) into ``cache_dir()/<hub>/<revision>`` and marked
complete per split only after the download returned; a later run finds the marker and contacts no
hub at all, so cached runs work offline. An interrupted download leaves no marker and is resumed by
the next call (both hubs' clients skip the files they already have).
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, get_args

from filelock import FileLock

from .errors import GaiaDatasetError

Hub = Literal["huggingface", "modelscope"]
HUBS: tuple[str, ...] = get_args(Hub)

HF_REPO_ID = "gaia-benchmark/GAIA"
HF_DATASET_URL = f"https://huggingface.co/datasets/{HF_REPO_ID}"
MODELSCOPE_DATASET_ID = "gaia-benchmark/GAIA"

HF_REVISION = "682dd723ee1e1697e00360edccf2366dc8418dd9"
"""The "convert to parquet" commit of gaia-benchmark/GAIA, the one inspect_evals pins."""

MODELSCOPE_REVISION = "master"
"""ModelScope's mirror has no commit matching the Hugging Face pin; its default branch is used."""

DEFAULT_REVISIONS: dict[str, str] = {"huggingface": HF_REVISION, "modelscope": MODELSCOPE_REVISION}

CACHE_ENV = "INSPECT_GAIA_CACHE_DIR"

GATED_MESSAGE = (
    f"GAIA is gated on Hugging Face — accept the terms at {HF_DATASET_URL} and set HF_TOKEN "
    "(or run `hf auth login`), or use `-T hub=modelscope` (no token needed)"
)


def hub_endpoint(hub: str) -> str:
    """The address the hub's client talks to (``HF_ENDPOINT`` / ``MODELSCOPE_DOMAIN`` move it)."""
    if hub == "huggingface":
        from huggingface_hub import constants

        return str(constants.ENDPOINT)
    return f"https://{os.environ.get('MODELSCOPE_DOMAIN', 'www.modelscope.cn')}"


def resolved_revision(hub: str, revision: str | None, dataset_path: str | None) -> str:
    """The revision a run reads: as asked, else ``local`` for a local copy, else the hub's pin."""
    if revision:
        return revision
    return "local" if dataset_path is not None else DEFAULT_REVISIONS[hub]


def cache_dir() -> Path:
    """Where snapshots are kept: ``$INSPECT_GAIA_CACHE_DIR``, else ``~/.cache/inspect_gaia``."""
    configured = os.environ.get(CACHE_ENV)
    if configured:
        return Path(configured).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "inspect_gaia"


def snapshot_dir(hub: str, revision: str) -> Path:
    """The cache directory of one hub revision."""
    safe_revision = re.sub(r"[^A-Za-z0-9._-]", "_", revision)
    return cache_dir() / hub / safe_revision


def _marker(directory: Path, key: str) -> Path:
    return directory / f".inspect_gaia-complete-{key}.json"


def cached_snapshot(hub: str, revision: str, key: str) -> Path | None:
    """The snapshot directory when ``key`` (a split) was downloaded completely, else ``None``."""
    directory = snapshot_dir(hub, revision)
    return directory if _marker(directory, key).is_file() else None


def fetch_snapshot(hub: str, revision: str, allow_patterns: Sequence[str], key: str) -> Path:
    """Return a local snapshot holding ``allow_patterns``, downloading it unless already complete.

    Args:
        hub: ``huggingface`` or ``modelscope``.
        revision: Hub revision (commit or branch).
        allow_patterns: Glob patterns of the repository files to fetch.
        key: Name of this part of the snapshot (the split) for the completeness marker.

    Returns:
        The snapshot's root directory.

    Raises:
        GaiaDatasetError: The hub refused or could not be reached; the message says what to do.
    """
    cached = cached_snapshot(hub, revision, key)
    if cached is not None:
        return cached
    directory = snapshot_dir(hub, revision)
    directory.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(directory) + ".lock"):
        if cached_snapshot(hub, revision, key) is not None:
            return directory
        if hub == "huggingface":
            _download_huggingface(directory, revision, allow_patterns)
        elif hub == "modelscope":
            _download_modelscope(directory, revision, allow_patterns)
        else:
            raise GaiaDatasetError(f"hub must be one of {', '.join(HUBS)}; got {hub!r}")
        _marker(directory, key).write_text(
            json.dumps(
                {
                    "hub": hub,
                    "revision": revision,
                    "patterns": list(allow_patterns),
                    "completed": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                }
            )
        )
    return directory


def _download_huggingface(directory: Path, revision: str, allow_patterns: Sequence[str]) -> None:
    from huggingface_hub import constants, get_token, snapshot_download
    from huggingface_hub.errors import (
        GatedRepoError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    if constants.HF_HUB_OFFLINE:
        raise GaiaDatasetError(
            f"Hugging Face offline mode is on (HF_HUB_OFFLINE) and GAIA is not cached in "
            f"{directory} — run once with network access, or pass `-T dataset_path=` a local "
            "GAIA snapshot"
        )
    try:
        snapshot_download(
            repo_id=HF_REPO_ID,
            repo_type="dataset",
            revision=revision,
            local_dir=directory,
            allow_patterns=list(allow_patterns),
        )
    except GatedRepoError as ex:
        hint = "no Hugging Face token found" if get_token() is None else "your token has no access"
        raise GaiaDatasetError(f"{GATED_MESSAGE} ({hint})") from ex
    except RevisionNotFoundError as ex:
        raise GaiaDatasetError(
            f"revision {revision!r} does not exist in {HF_REPO_ID} — omit `-T revision` to use "
            f"the pinned {HF_REVISION}"
        ) from ex
    except RepositoryNotFoundError as ex:
        # Hugging Face answers "not found" to a gated repository when the request carries no token.
        raise GaiaDatasetError(GATED_MESSAGE) from ex
    except Exception as ex:  # connection failures, hub outages, an incomplete snapshot
        raise GaiaDatasetError(
            f"could not download GAIA from Hugging Face ({type(ex).__name__}: {ex}) — check the "
            "network, or use `-T hub=modelscope`, or pass `-T dataset_path=` a local snapshot"
        ) from ex


def _download_modelscope(directory: Path, revision: str, allow_patterns: Sequence[str]) -> None:
    # MsDataset pins a conflicting `datasets`; the snapshot API downloads the same files.
    from modelscope import dataset_snapshot_download

    try:
        dataset_snapshot_download(
            dataset_id=MODELSCOPE_DATASET_ID,
            revision=revision,
            local_dir=str(directory),
            allow_patterns=list(allow_patterns),
        )
    except Exception as ex:  # modelscope raises plain requests/ValueError/HTTPError types
        raise GaiaDatasetError(
            f"could not download GAIA from ModelScope ({type(ex).__name__}: {ex}) — check the "
            "network, or pass `-T dataset_path=` a local GAIA snapshot"
        ) from ex
