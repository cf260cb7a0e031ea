"""The note ``inspect-gaia submission`` writes beside the leaderboard file: what produced it.

The leaderboard's form asks for a model name, its family, a system-prompt example, a URL and
contacts; it keeps none of what decides whether the number can be trusted or rerun. The note holds
both, read from the runs' records, ready to paste into the form's description: the model, the
scaffold (the task's agent, or the solver that replaced it), the settings that are not the task's
defaults, the question count per level, the inspect_gaia and inspect versions, the image (its
recorded identity, and whether it was pinned), the sandbox that ran, whether the answer sources
were blocked, and the samples flagged for reading one (packaged only with ``--allow-flagged``).

Runs are pooled into one group first (``results.group_runs``): a submission of runs that report
would not pool (two models, two settings) is one of those runs, not a submission.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import counted
from ..questions.dataset import DEFAULT_INPUT_PROMPT
from .comparability import OWN_HARNESS
from .results import RunGroup

_UNSHOWN = ("model", "split", "harness", "task_version", "epochs", "image", "sandbox")
"""Settings the note gives lines of their own, not in its list of non-default settings."""


def sidecar_text(
    group: RunGroup,
    output: str,
    flagged: Sequence[str],
    written: int,
    defaults: Mapping[str, Any],
) -> str:
    """The note for the submission ``output`` of the runs pooled into ``group``.

    Args:
        group: The submitted runs, pooled.
        output: The leaderboard file's name, as the note refers to it.
        flagged: Task ids flagged for reading an answer source (packaged with --allow-flagged).
        written: Lines in the leaderboard file.
        defaults: The task's defaults among the settings (``record.default_settings``).
    """
    settings = group.settings
    record = group.runs[0].provenance
    per_level: dict[int, int] = {}
    for sample in group.samples:
        per_level[sample.level] = per_level.get(sample.level, 0) + 1
    levels = ", ".join(f"level {level} {n}" for level, n in sorted(per_level.items()))
    lines = [
        f"# GAIA leaderboard submission: {output}",
        "",
        f"- model: {group.model}",
        f"- split: {group.split}, {counted(written, 'question')} ({levels})",
        f"- scaffold: {_scaffold(settings)}",
        f"- settings other than the task's defaults: {_non_default(settings, defaults) or 'none'}",
    ]
    if record is None:
        harness = group.runs[0].foreign
        lines.append(
            f"- harness: {settings['harness']} gaia {settings['task_version']} (no inspect_gaia "
            "record: image, sandbox and answer sources unknown)"
            if harness is not None
            else "- harness: unknown"
        )
    else:
        pinned = "pinned by digest" if record.image_pinned else "a tag, not pinned by digest"
        digest = f"; registry digest {record.image_digest}" if record.image_digest else ""
        local = f"; local id {record.image_id}" if record.image_id else ""
        blocked = (
            f"blocked by the run's egress proxy (list sha256 {settings['block_answer_sources']})"
            if settings.get("block_answer_sources")
            else "not blocked (the sandbox could reach them)"
        )
        lines += [
            f"- inspect_gaia {record.inspect_gaia_version} (task {settings['task_version']}), "
            f"inspect_ai {record.inspect_ai_version}",
            f"- image: {record.image_identity}, {pinned}{digest}{local}",
            f"- sandbox: {settings['sandbox']}",
            f"- answer sources: {blocked}",
            f"- prompt template (the first user message): {_prompt(record.prompt_template_sha256)}",
            f"- system prompt: {_system_prompt(settings, record.inspect_ai_version)}",
        ]
    lines.append(
        f"- samples flagged for reading an answer source, packaged with --allow-flagged: "
        f"{len(flagged)} ({', '.join(flagged)})"
        if flagged
        else "- samples flagged for reading an answer source: none"
    )
    for flag in group.flags:
        lines.append(f"- ⚠ {flag}")
    lines += ["- logs: " + ", ".join(run.source for run in group.runs), ""]
    return "\n".join(lines)


def _scaffold(settings: dict[str, Any]) -> str:
    tools = "+".join(settings.get("tools") or []) or "none"
    if settings.get("solver"):
        return f"custom solver {settings['solver']} (tools offered: {tools})"
    if settings.get("harness") != OWN_HARNESS:
        return f"{settings['harness']}'s agent (tools offered: {tools})"
    return f"inspect_gaia's agent: inspect's basic_agent with {tools}"


def _non_default(settings: dict[str, Any], defaults: Mapping[str, Any]) -> str:
    differ = {
        key: value
        for key, value in settings.items()
        if key not in _UNSHOWN and key in defaults and value != defaults[key]
    }
    return ", ".join(
        f"{key}={'+'.join(value) if isinstance(value, list) else value}"
        for key, value in differ.items()
    )


def _system_prompt(settings: Mapping[str, Any], inspect_ai_version: str | None) -> str:
    if settings.get("solver"):
        return "the custom solver's own (not recorded by inspect_gaia)"
    return f"inspect's basic_agent default system message (inspect_ai {inspect_ai_version})"


def _prompt(sha256: str) -> str:
    if hashlib.sha256(DEFAULT_INPUT_PROMPT.encode()).hexdigest() == sha256:
        return "inspect_evals' and EvalScope's GAIA prompt:\n\n" + "\n".join(
            f"      {line}" for line in DEFAULT_INPUT_PROMPT.splitlines()
        )
    return f"a prompt of its own (template sha256 {sha256})"
