"""Fetching GAIA snapshots from Hugging Face or ModelScope into a local cache.

A snapshot is downloaded once per (hub, revision) into ``cache_dir()/<hub>/<revision>`` and marked
complete per split only after the download returned; a later run finds the marker and contacts no
hub at all, so cached runs work offline. An interrupted download leaves no marker and is resumed by
the next call (both hubs' clients skip the files they already have).
"""

from __future__ import annotations

import json
import logging
import os
import re
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Literal, get_args

from filelock import FileLock

from ..errors import GaiaDatasetError
from ..flags import either, flag

Hub = Literal["huggingface", "modelscope"]
HUBS: tuple[Hub, ...] = get_args(Hub)
DEFAULT_HUB: Hub = "huggingface"
"""Where GAIA is fetched by default: its home, gated."""

HF_REPO_ID = "gaia-benchmark/GAIA"
HF_DATASET_URL = f"https://huggingface.co/datasets/{HF_REPO_ID}"
MODELSCOPE_DATASET_ID = "gaia-benchmark/GAIA"

HF_REVISION = "682dd723ee1e1697e00360edccf2366dc8418dd9"
"""The "convert to parquet" commit of gaia-benchmark/GAIA, the one inspect_evals pins."""

MODELSCOPE_REVISION = "master"
"""ModelScope's mirror has no commit matching the Hugging Face pin; its default branch is used."""

DEFAULT_REVISIONS: dict[str, str] = {"huggingface": HF_REVISION, "modelscope": MODELSCOPE_REVISION}

CACHE_ENV = "INSPECT_GAIA_CACHE_DIR"

PROBE_TIMEOUT = 10.0
"""Seconds the hub may take to answer at all before a download is refused as unreachable."""

_CHATTY_LOGGERS = ("huggingface_hub", "modelscope", "modelscope_hub")
"""The hub clients' loggers: their retry and progress notes are not the user's business."""


def gated_fix() -> str:
    """What to do about GAIA's gate on Hugging Face, in the flags of the command running."""
    return either(
        f"accept the terms at {HF_DATASET_URL} and set HF_TOKEN (or run `hf auth login`)",
        _use(flag("hub", "modelscope"), " (no token needed)"),
    )


GATED = "GAIA is gated on Hugging Face"
"""The problem a download meets without access (``gated_fix`` says what to do)."""


def download_command(hub: str, split: str | None = None) -> str:
    """The ``inspect-gaia download`` command line that fetches ``split`` from ``hub``."""
    return (
        "inspect-gaia download"
        + (f" --hub {hub}" if hub != DEFAULT_HUB else "")
        + (f" --split {split}" if split else "")
    )


def _use(option: str | None, note: str = "") -> str | None:
    return f"use `{option}`{note}" if option else None


def _pass_snapshot() -> str | None:
    option = flag("dataset_path")
    return f"pass `{option}` a local GAIA snapshot" if option else None


def hub_endpoint(hub: str) -> str:
    """The address the hub's client talks to (``HF_ENDPOINT``, ``MODELSCOPE_ENDPOINT`` move it)."""
    if hub == "huggingface":
        from huggingface_hub import constants

        return str(constants.ENDPOINT)
    # ModelScope's own precedence: MODELSCOPE_ENDPOINT, then the older MODELSCOPE_DOMAIN.
    endpoint = os.environ.get("MODELSCOPE_ENDPOINT") or os.environ.get("MODELSCOPE_DOMAIN")
    endpoint = (endpoint or "www.modelscope.cn").strip().rstrip("/")
    return endpoint if re.match(r"(?i)https?://", endpoint) else f"https://{endpoint}"


def unreachable(hub: str) -> str | None:
    """Why the hub's endpoint does not answer at all, or ``None`` when it answers.

    Any HTTP answer, an error status included, counts as an answer: the hub's client then says
    what is wrong. Only a refused connection, an unknown host or silence is reported here, at once
    and in a few words, instead of after the hub client's minute of retries.
    """
    try:
        urllib.request.urlopen(hub_endpoint(hub), timeout=PROBE_TIMEOUT).close()
    except urllib.error.HTTPError:
        return None
    except urllib.error.URLError as ex:
        reason = ex.reason
        if isinstance(reason, OSError) and reason.strerror:
            return reason.strerror.lower()
        return str(reason)
    except TimeoutError:
        return f"no answer within {PROBE_TIMEOUT:g} s"
    except Exception as ex:  # a host that answers, but not in HTTP
        return _first_line(ex)
    return None


def _first_line(ex: BaseException) -> str:
    return f"{type(ex).__name__}: {(str(ex).splitlines() or [''])[0][:300]}"


@contextmanager
def _quiet_clients() -> Iterator[None]:
    """Silence the hub clients' warnings (retries, deprecations) while they download."""
    loggers = [logging.getLogger(name) for name in _CHATTY_LOGGERS]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


def _check_reachable(hub: str, name: str, env: str) -> None:
    reason = unreachable(hub)
    if reason is None:
        return
    other = "huggingface" if hub == "modelscope" else "modelscope"
    raise GaiaDatasetError(
        f"cannot reach {name} at {hub_endpoint(hub)} ({reason})",
        fix=either(f"check the network (or {env})", _use(flag("hub", other)), _pass_snapshot()),
    )


def resolved_revision(hub: Hub, revision: str | None, dataset_path: str | None) -> str:
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


def fetch_snapshot(hub: Hub, revision: str, allow_patterns: Sequence[str], key: str) -> Path:
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
        else:
            _download_modelscope(directory, revision, allow_patterns)
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
            "Hugging Face offline mode is on (HF_HUB_OFFLINE) and GAIA is not cached in "
            f"{directory}",
            fix=either(
                "unset HF_HUB_OFFLINE and run `inspect-gaia download` where Hugging Face is "
                "reachable",
                _pass_snapshot(),
            ),
        )
    _check_reachable("huggingface", "Hugging Face", "HF_ENDPOINT")
    try:
        with _quiet_clients():
            snapshot_download(
                repo_id=HF_REPO_ID,
                repo_type="dataset",
                revision=revision,
                local_dir=directory,
                allow_patterns=list(allow_patterns),
            )
    except GatedRepoError as ex:
        hint = "no Hugging Face token found" if get_token() is None else "your token has no access"
        raise GaiaDatasetError(GATED, fix=f"{gated_fix()} ({hint})") from ex
    except RevisionNotFoundError as ex:
        omit = flag("revision")
        raise GaiaDatasetError(
            f"revision {revision!r} does not exist in {HF_REPO_ID}",
            fix=either(
                f"omit `{omit}` to use the pinned {HF_REVISION}" if omit else None,
                _pass_snapshot(),
            )
            or "check the revision",
        ) from ex
    except RepositoryNotFoundError as ex:
        # Hugging Face answers "not found" to a gated repository when the request carries no token.
        raise GaiaDatasetError(GATED, fix=gated_fix()) from ex
    except Exception as ex:  # hub outages, an incomplete snapshot
        raise GaiaDatasetError(
            f"could not download GAIA from Hugging Face ({_first_line(ex)})",
            fix=either("check the network", _use(flag("hub", "modelscope")), _pass_snapshot()),
        ) from ex


def _download_modelscope(directory: Path, revision: str, allow_patterns: Sequence[str]) -> None:
    # MsDataset pins a conflicting `datasets`; the snapshot API downloads the same files.
    _check_reachable("modelscope", "ModelScope", "MODELSCOPE_ENDPOINT")
    with _quiet_clients():
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
                f"could not download GAIA from ModelScope ({_first_line(ex)})",
                fix=either("check the network", _pass_snapshot()),
            ) from ex
