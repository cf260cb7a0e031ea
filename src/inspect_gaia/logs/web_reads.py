"""What the samples read on the web, in ``report`` and ``compare`` (``web_record``).

A run whose sandboxes went through its egress proxy (``-T web_record``, ``-T block_answer_sources``)
holds, per sample, every request it made (``SampleResult.web``). ``report`` gets a ``web`` block per
group: per level the samples recorded, requests, distinct hosts, refusals and blocks, and the
samples that read nothing (no request a server answered); every sample's hosts; with ``--format
json`` every request, with its sample and epoch; and the one line a reader sees. ``compare`` lists
the questions whose two sides read from different sets of hosts.

A replayed group (``-T web_replay``) gets its **coverage** too (``replay_block``): per level and
per sample, the requests served from the sample's own recording, from the pool (another sample's,
or a HAR's with no sample), and refused as not recorded, so a reader sees whether a replayed
score is one of a frozen web or of a starved agent; its note names the archive and whether the
run that recorded it blocked answer sources.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..egress.replay_match import OWN, POOLED, REFUSAL
from ..egress.web_record import WebRequest, counts, hosts
from .provenance import WebReplayRecord
from .results import RunResults, SampleResult

RECORD_ONLY = (
    "-T web_record: the agent reached the web through the run's HTTPS-intercepting proxy (ports "
    "80 and 443 only, no host, loopback or private address, no WebSocket), which refused no "
    "answer source"
)
"""What recording alone changes for the agent (``report``'s flag)."""


def record_only(run: RunResults) -> bool:
    """Whether the run recorded its web without refusing answer sources (``-T web_record``)."""
    record = run.provenance
    blocked = (
        record is not None and record.answer_sources is not None and record.answer_sources.blocked
    )
    replayed = record is not None and record.web_replay is not None  # its own flag says it
    return record is not None and bool(record.web_record) and not blocked and not replayed


def replayed(run: RunResults) -> WebReplayRecord | None:
    """The archive a run replayed (``-T web_replay``), or ``None``."""
    return run.provenance.web_replay if run.provenance is not None else None


def served(requests: Sequence[WebRequest]) -> dict[str, int]:
    """A replay's requests: all, served from its own recording or the pool, or not recorded."""
    return {
        "requests": len(requests),
        "own": sum(r.decision == "allowed" and r.why == OWN for r in requests),
        "pooled": sum(r.decision == "allowed" and r.why == POOLED for r in requests),
        "not_recorded": sum(r.decision == "refused" and r.why == REFUSAL for r in requests),
    }


def _by_level(recorded: Sequence[SampleResult]) -> list[tuple[str, list[SampleResult]]]:
    """Each level's recorded samples, in level order, then ``all`` of them."""
    labels = [*sorted({str(s.level) for s in recorded}), "all"]
    return [
        (label, [s for s in recorded if label == "all" or str(s.level) == label])
        for label in labels
    ]


def _coverage(n: dict[str, int]) -> float | None:
    return round((n["own"] + n["pooled"]) / n["requests"], 4) if n["requests"] else None


def replay_block(
    samples: Sequence[SampleResult], archive: WebReplayRecord
) -> dict[str, Any] | None:
    """A replayed group's coverage (module docstring); ``None`` when no sample was recorded."""
    recorded = [s for s in samples if s.web is not None]
    if not recorded:
        return None
    levels = []
    for label, members in _by_level(recorded):
        n = served([r for s in members for r in s.web or ()])
        levels.append({"level": label, "samples": len(members), **n, "coverage": _coverage(n)})
    per_sample = []
    for s in recorded:
        n = served(s.web or ())
        per_sample.append(
            {
                "task_id": s.task_id,
                "epoch": s.epoch,
                "level": str(s.level),
                **n,
                "coverage": _coverage(n),
            }
        )
    overall = served([r for s in recorded for r in s.web or ()])
    blocked = {
        True: "its run blocked answer sources",
        False: "its run did not block answer sources",
        None: "whether its run blocked answer sources is not recorded",
    }
    note = (
        f"replayed web {archive.archive} ({archive.format}, sha256 {archive.sha256[:12]}; "
        f"{blocked[archive.blocked_answer_sources]}): {overall['own'] + overall['pooled']} of "
        f"{overall['requests']} requests served ({overall['pooled']} from the pool: another "
        f"sample's recording or none's), {overall['not_recorded']} refused as not recorded"
    )
    return {
        "archive": archive.model_dump(mode="json"),
        "levels": levels,
        "samples": per_sample,
        "note": note,
    }


def read_nothing(requests: Sequence[WebRequest]) -> bool:
    """No request of the sample was answered by a server (refused, blocked or failed only)."""
    return not any(r.decision == "allowed" and r.status is not None for r in requests)


def web_block(samples: Sequence[SampleResult], record_only: bool = False) -> dict[str, Any] | None:
    """The ``web`` entry of a report group; ``None`` when no sample was recorded.

    Args:
        samples: The group's samples.
        record_only: Whether a run of the group recorded without refusing answer sources.
    """
    recorded = [s for s in samples if s.web is not None]
    if not recorded:
        return None
    levels = []
    for label, members in _by_level(recorded):
        requests = [r for s in members for r in s.web or ()]
        n = counts(requests)
        levels.append(
            {
                "level": label,
                "samples": sum(1 for s in samples if label == "all" or str(s.level) == label),
                "recorded": len(members),
                "requests": n["requests"],
                "hosts": n["hosts"],
                "refused": n["refused"],
                "blocked": n["blocked"],
                "read_nothing": sum(read_nothing(s.web or ()) for s in members),
            }
        )
    per_sample = [
        {
            "task_id": s.task_id,
            "epoch": s.epoch,
            "level": str(s.level),
            **counts(s.web or ()),
            "host_names": hosts(s.web or ()),
            "read_nothing": read_nothing(s.web or ()),
        }
        for s in recorded
    ]
    every = [
        {"task_id": s.task_id, "epoch": s.epoch, **r.as_dict()}
        for s in recorded
        for r in s.web or ()
    ]
    block = {
        "record_only": record_only,
        "levels": levels,
        "samples": per_sample,
        "requests": every,
    }
    return {**block, "note": web_note(block, len(samples))}


def web_note(block: dict[str, Any], samples: int) -> str:
    """The one line: requests, hosts and samples that read nothing; what recording changed."""
    overall = block["levels"][-1]
    n, recorded = overall["requests"], overall["recorded"]
    line = (
        f"web recorded by the run's proxy: {n} request{'s' * (n != 1)} to {overall['hosts']} "
        f"host{'s' * (overall['hosts'] != 1)} in {recorded} of {samples} samples "
        f"({overall['read_nothing']} read nothing; every request in --format json)"
    )
    return f"{line}; {RECORD_ONLY}" if block["record_only"] else line


def host_differences(
    a: Sequence[SampleResult], b: Sequence[SampleResult], questions: Sequence[str]
) -> list[dict[str, Any]] | None:
    """The questions both sides recorded whose sides read from different sets of hosts.

    A question's hosts are those of all its epochs; a question a side did not record is left out;
    ``None`` when a side recorded none at all.
    """
    mine, theirs = _hosts_by_question(a), _hosts_by_question(b)
    if not mine or not theirs:
        return None
    differing = []
    for task_id in questions:
        if task_id not in mine or task_id not in theirs or mine[task_id] == theirs[task_id]:
            continue
        differing.append(
            {
                "task_id": task_id,
                "a_only": sorted(mine[task_id] - theirs[task_id]),
                "b_only": sorted(theirs[task_id] - mine[task_id]),
            }
        )
    return differing


def _hosts_by_question(samples: Sequence[SampleResult]) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for sample in samples:
        if sample.web is not None:
            found.setdefault(sample.task_id, set()).update(hosts(sample.web))
    return found
