"""The run's archive of the web its samples read (``-T web_record=bodies``), written beside the log.

The proxy keeps each response body as it streams, under its SHA-256 (``egress/recorder.py``), next
to the per-sandbox record lines; when the run ends, before its proxy is removed, ``export``
streams that directory out of the container as Docker gives it (a tar) into
``gaia-web-<run>-<id>.tar`` in the folder of the run's log (``--log-dir``; a log that is no local
file: ``INSPECT_LOG_DIR``, or ``./logs``), hashing it on the way, and writes the
hash beside it (``<archive>.sha256``, as ``sha256sum -c`` reads it). Each sample's store names
the archive (``web_record.ARCHIVE_KEY``) and holds every body's hash (its requests' ``sha256``).

The caps (bytes): ``INSPECT_GAIA_WEB_BODY_CAP`` per body, ``INSPECT_GAIA_WEB_SAMPLE_CAP`` for one
sample's bodies together (its share of the run's: one sample cannot fill the run's cap for every
later one), ``INSPECT_GAIA_WEB_RUN_CAP`` for the run's; a body over one is recorded (hash, size)
but not kept, and ``not_kept`` gives the run's end one line about them.

What makes an archive speak for itself: the run writes ``record/run.json`` (``manifest``: whether
it refused answer sources) when its proxy starts, and ``record/samples/<sandbox>`` (``name_sample``:
the sample and epoch of each sandbox) as each sample starts, so an archive alone says whose each
request was. Once the archive is closed, its SHA-256 goes into the log's provenance (``stamp``):
inspect writes a log's header before any sample runs and once more when the eval ends, both before
a sandbox provider's last cleanup, so the hash is added afterwards as inspect's own post-eval edit
(``edit_eval_log``, header only: the samples are not rewritten), recorded in the log's
``log_updates`` with its author and reason.

A replay's proxy receives what the host checked (``web_archive.proxy_stream``), never the file.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from ...egress.replay_source import checked
from ...egress.spec import EgressSpec
from ...egress.web_archive import ArchiveError, proxy_stream
from ...errors import GaiaError
from . import client

BODY_CAP_ENV = "INSPECT_GAIA_WEB_BODY_CAP"
RUN_CAP_ENV = "INSPECT_GAIA_WEB_RUN_CAP"
SAMPLE_CAP_ENV = "INSPECT_GAIA_WEB_SAMPLE_CAP"
BODY_CAP = 64 << 20
"""The largest body kept, unless ``BODY_CAP_ENV`` says otherwise (64 MiB)."""
RUN_CAP = 1 << 30
"""All the run's bodies kept, at most, unless ``RUN_CAP_ENV`` says otherwise (1 GiB)."""
SHARES = 8
"""A sample's share of the run's cap: 1/8 (128 MiB of the default 1 GiB, twice the per-body cap),
unless ``SAMPLE_CAP_ENV`` says otherwise. Eight greedy samples fill the run's cap at most; an
honest GAIA sample keeps a few MiB."""
_NOT_KEPT = '"body_not_kept"'


def _cap(name: str, default: int) -> int:
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    if not text.isdigit() or int(text) < 1:
        raise GaiaError(
            f"{name}={text} is not a size in bytes", fix=f"set {name} to a positive whole number"
        )
    return int(text)


def body_options() -> list[str]:
    """The proxy's options that keep the bodies, within the caps (raises ``GaiaError``)."""
    run_cap = _cap(RUN_CAP_ENV, RUN_CAP)
    return [
        *("--set", "gaia_bodies=true"),
        *("--set", f"gaia_body_cap={_cap(BODY_CAP_ENV, BODY_CAP)}"),
        *("--set", f"gaia_sample_cap={_cap(SAMPLE_CAP_ENV, max(run_cap // SHARES, 1))}"),
        *("--set", f"gaia_run_cap={run_cap}"),
    ]


def archive_dir(log_location: str | None = None) -> Path:
    """Where the archive goes: beside the run's log (``log_location``, inspect's path of it).

    A log that is no local file (``s3://…``), or none known: the log directory inspect uses by
    default (``INSPECT_LOG_DIR``, or ``./logs``).
    """
    if log_location and "://" not in log_location.removeprefix("file://"):
        return Path(log_location.removeprefix("file://")).parent
    return Path(os.environ.get("INSPECT_LOG_DIR") or "./logs")


def manifest(spec: EgressSpec) -> bytes:
    """``record/run.json``: what the archive's run did with answer sources (a replay reads it)."""
    return json.dumps(
        {
            "format": "inspect_gaia web archive",
            "blocked_answer_sources": bool(spec.rules),
            "rules": len(spec.rules),
        }
    ).encode()


def name_sample(proxy: str, record_dir: str, name: str, sample: object, epoch: int) -> None:
    """Tell the proxy which sample sandbox ``name`` is (blocking): ``samples/<name>``."""
    data = json.dumps({"id": str(sample), "epoch": epoch}).encode()
    client.api().put_archive(proxy, "/", client.tar_of({f"{record_dir}/samples/{name}": data}))


def send_replay(proxy: str, path: str, folder: str) -> None:
    """Send the proxy what the host checked of the archive at ``path`` into ``folder``.

    Raises:
        GaiaError: The archive changed since it was checked (or no longer reads).
    """
    try:
        client.api().put_archive(proxy, "/", proxy_stream(checked(path), folder.strip("/")))
    except ArchiveError as ex:
        raise GaiaError(
            f"-T web_replay: {ex}", fix="keep the archive unchanged while the run starts"
        ) from None


def export(
    proxy: str, name: str, record_dir: str, log_location: str | None
) -> tuple[list[str], str | None]:
    """Stream the proxy's record and bodies into the archive ``name`` (blocking).

    Returns:
        The run's lines about it, and its SHA-256 (``None``: not written).
    """
    target = archive_dir(log_location) / name
    part = target.with_name(name + ".part")
    digest = hashlib.sha256()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        stream, _ = client.api().get_archive(proxy, record_dir)
        with part.open("wb") as out:
            for chunk in stream:
                digest.update(chunk)
                out.write(chunk)
        part.replace(target)
        target.with_name(name + ".sha256").write_text(f"{digest.hexdigest()}  {name}\n")
    except Exception as ex:
        part.unlink(missing_ok=True)
        return [
            f"The run's web archive could not be written to {target}: {client.first_line(ex)}"
        ], None
    return [
        f"The web the samples read (record and bodies) is in {target}, SHA-256 "
        f"{digest.hexdigest()}: as sensitive as the log"
    ], digest.hexdigest()


async def stamp(logs: set[str], name: str, sha256: str, log_location: str | None) -> list[str]:
    """Write the closed archive's name, hash and size into each log's provenance (``gaia``).

    An edit of inspect's (``edit_eval_log``), header only; a log that cannot be edited is one
    line (the archive's ``.sha256`` beside it still names it).
    """
    from inspect_ai.log import (
        MetadataEdit,
        ProvenanceData,
        edit_eval_log,
        read_eval_log_async,
        write_eval_log_async,
    )

    size = (archive_dir(log_location) / name).stat().st_size
    lines = []
    for location in sorted(logs):
        try:
            log = await read_eval_log_async(location, header_only=True)
            record = (log.metadata or {}).get("gaia")
            if not isinstance(record, dict):
                continue
            edit = MetadataEdit(
                metadata_set={
                    "gaia": {
                        **record,
                        "web_archive": {"archive": name, "sha256": sha256, "bytes": size},
                    }
                }
            )
            why = ProvenanceData(
                author="inspect_gaia", reason="the run's web archive, hashed once it was closed"
            )
            await write_eval_log_async(edit_eval_log(log, [edit], why), location, header_only=True)
        except Exception as ex:
            lines.append(
                f"The web archive's hash could not be written into {location}: "
                f"{client.first_line(ex)} (its .sha256 file names it)"
            )
    return lines


def not_kept(proxy: str) -> list[str]:
    """One line on the bodies a cap kept out of the archive (none: no line)."""
    try:
        logs = client.api().logs(proxy).decode("utf-8", errors="replace")
    except Exception:
        return []
    reasons: dict[str, int] = {}
    for line in logs.splitlines():
        if _NOT_KEPT not in line:
            continue
        try:
            why = str(json.loads(line)["inspect_gaia"]["body_not_kept"])
        except (ValueError, KeyError, TypeError):
            continue
        reasons[why] = reasons.get(why, 0) + 1
    if not reasons:
        return []
    said = "; ".join(f"{n} {why}" for why, n in reasons.items())
    return [f"Response bodies not kept in the web archive (recorded, hashed): {said}"]
