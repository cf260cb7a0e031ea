"""The document ``inspect-gaia report`` prints: merged runs, their numbers and what sets them apart.

Groups come from ``results.group_runs`` (one per model and settings, and per run where a folder
holds separate runs of equal settings); each is labelled by what differs from the others of its
model, leaving out settings at the task's defaults, and by its run where it has one; the groups
are ranked by overall accuracy, those over part of their split (``coverage.partial``: a
``--limit`` look, one level, a stopped run) after every complete one. A probe of the sandbox
(``inspect_gaia/gaia_probe``) is a group of its own with a ``probe`` block (``probe``: routes by
outcome, and the line), ranked after every run that answered. ``--format json`` prints this
document as it is; the terminal, Markdown and CSV renderers in ``_cli/report.py`` read it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from inspect_ai.model import ModelCost

from .breakdown import where_it_fails
from .comparability import OWN_HARNESS, tools_label
from .contamination import contamination_block
from .coverage import partial
from .paired import CONFIDENCE
from .probe import is_probe, probe_block
from .results import RunGroup
from .stats import INTERVAL_METHOD, priced, summarise
from .web_reads import record_only, replay_block, replayed, web_block

REPORT_SCHEMA = 1

ALWAYS_NAMED = ("image", "sandbox")
"""Settings a label names whenever groups of a model differ in them, even at the default: two
runs of ``python:3.11`` a month apart may have run different images (``image`` is the identity a
log records), and a sandbox replaced by inspect's ``--sandbox`` is not the task's."""


def report_document(
    groups: Sequence[RunGroup],
    prices: Mapping[str, ModelCost] | None = None,
    *,
    defaults: Mapping[str, Any],
    extra: Callable[[RunGroup], Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """The whole report as one JSON-ready document (the schema is in the README).

    Args:
        groups: Merged runs, one per model and settings.
        prices: ``--model-cost-config`` prices; they replace the log's cost of the models they name.
        defaults: The task's defaults among the settings (``record.default_settings``): a label
            leaves out what is at its default.
        extra: More of a group's entry, beside its official numbers (``--judge``'s ``judge``,
            ``--question-set``'s ``question_set``); never part of its rank.
    """
    differ = _differing_keys([g.settings for g in groups])
    entries = []
    for group in groups:
        same_model = [  # another harness's group is labelled by its harness, and not compared
            g.settings
            for g in groups
            if g.model == group.model and g.settings["harness"] == group.settings["harness"]
        ]
        own = {k: group.settings.get(k) for k in _differing_keys(same_model)}
        # The label names what sets the group apart, leaving out settings at the task's default
        # (None: not set), except those a reader must see whenever groups differ in them.
        named = {k: v for k, v in own.items() if v != defaults.get(k) or k in ALWAYS_NAMED}
        if group.settings["harness"] != OWN_HARNESS:  # another harness: named by it, not its setup
            named = {"harness": f"{group.settings['harness']} {group.settings['task_version']}"}
        named |= {k: group.settings[k] for k in ("solver", "solver_args") if group.settings[k]}
        if group.settings.get("agent"):  # its tools are the agent's: the agent names them once
            named.pop("tools", None)
        samples = [priced(s, prices) for s in group.samples] if prices else list(group.samples)
        levels = [row.as_dict() for row in summarise(samples, graded=group.split != "test")]
        overall_cost = levels[-1]["cost"]
        contamination = contamination_block(samples, graded=group.split != "test")
        web = web_block(samples, record_only=any(record_only(run) for run in group.runs))
        archive = next((a for run in group.runs if (a := replayed(run)) is not None), None)
        if web is not None and archive is not None:  # the archive is a pooling setting: one
            web["replay"] = replay_block(samples, archive)
        repriced = bool(prices) and any(m in (prices or {}) for s in samples for m in s.usage)
        label = [_settings_text(named)] if named else []
        label += [group.run] if group.run else []  # runs of equal settings kept apart
        replay = web and web.get("replay")
        notes = (contamination["note"], web and web["note"], replay and replay["note"])
        flags = group.flags + [note for note in notes if note]
        entries.append(
            {
                "group": group.model + (f" [{', '.join(label)}]" if label else ""),
                "run": group.run or None,
                "model": group.model,
                "split": group.split,
                "task_version": group.settings["task_version"],
                "image": group.settings.get("image"),
                "epochs": group.settings["epochs"],
                "logs": [run.source for run in group.runs],
                "flags": flags,
                "partial": partial(flags),
                "differs": own,
                "settings": group.settings,
                "cost_source": None
                if overall_cost is None
                else ("model-cost-config" if repriced else "log"),
                "levels": levels,
                "contamination": contamination,
                "web": web,
                **(where_it_fails(samples) if group.split != "test" else {}),
                **(extra(group) if extra else {}),
                # a probe of the sandbox: its routes and its line, never a score
                "probe": probe_block(samples) if any(map(is_probe, group.runs)) else None,
            }
        )
    entries.sort(key=_rank)
    return {
        "schema_version": REPORT_SCHEMA,
        "interval": {"method": INTERVAL_METHOD, "confidence": CONFIDENCE, "over": "questions"},
        "settings_differ": differ,
        "groups": entries,
    }


def _differing_keys(settings: Sequence[Mapping[str, Any]]) -> list[str]:
    keys = [k for k in dict.fromkeys(k for s in settings for k in s) if k != "model"]
    return [k for k in keys if len({repr(s.get(k)) for s in settings}) > 1]


def _settings_text(settings: Mapping[str, Any]) -> str:
    def show(value: Any) -> str:
        if isinstance(value, dict):
            return "(" + ", ".join(f"{k}={v}" for k, v in value.items()) + ")"
        return ("+".join(map(str, value)) or "none") if isinstance(value, list) else str(value)

    return ", ".join(
        f"{key}={tools_label(value) if key == 'tools' and value is not None else show(value)}"
        for key, value in settings.items()
    )


def _rank(group: Mapping[str, Any]) -> tuple[bool, bool, bool, float, str]:
    accuracy = group["levels"][-1]["accuracy"]
    probe = bool(group["probe"])  # a probe has no score: after every run that answered
    return (probe, group["partial"], accuracy is None, -(accuracy or 0.0), str(group["group"]))
