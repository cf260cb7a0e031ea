"""PNG charts for ``report --plot`` and ``compare --plot`` (matplotlib: ``inspect-gaia[plot]``)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from ..errors import GaiaError
from ..logs.stats import pareto_frontier, wilson_interval

_DPI = 130
IMAGE_EXTENSIONS = (".png", ".svg", ".pdf", ".jpg", ".jpeg")
"""What ``--plot`` may write: matplotlib picks the format by the name's extension."""
_F = TypeVar("_F", bound=Callable[..., Any])


def _image_name(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is not None and Path(value).suffix.lower() not in IMAGE_EXTENSIONS:
        raise click.BadParameter(
            f"{value!r} is not an image file name (the format goes by its ending: "
            f"{', '.join(IMAGE_EXTENSIONS[:-2])} or .jpg)"
        )
    return value


def plot_option(help: str) -> Callable[[_F], _F]:
    """``--plot FILE``: an image's name, refused before any work when it is not one."""
    return click.option("--plot", type=click.Path(dir_okay=False), callback=_image_name, help=help)


def _pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as ex:
        raise GaiaError(
            "--plot needs matplotlib", fix="install it with `pip install 'inspect-gaia[plot]'`"
        ) from ex
    return plt


def require_matplotlib() -> None:
    """Say now, before any log is read, that ``--plot`` cannot work (one line with the install).

    Raises:
        GaiaError: matplotlib is not installed.
    """
    _pyplot()


def _save(fig: Any, path: str) -> None:
    try:
        fig.savefig(path, dpi=_DPI)
    except OSError as ex:
        raise GaiaError(f"cannot write the plot to {path}: {ex.strerror or ex}") from ex
    finally:
        _pyplot().close(fig)


def _short(label: str, width: int = 38) -> str:
    return label if len(label) <= width else label[: width - 1] + "…"


_MARKERS = "osD^vPX*hp"


def plot_report(document: Mapping[str, Any], path: str) -> None:
    """Accuracy per level with 95% intervals per group, and for several groups the cost frontier.

    The frontier panel plots overall accuracy against cost per question (tokens per question when
    a group has no cost). Each group keeps one colour and marker in both panels; one legend below.

    Raises:
        GaiaError: No group has answers to score (test split), or matplotlib is missing.
    """
    groups = [g for g in document["groups"] if g["levels"][-1]["accuracy"] is not None]
    if not groups:
        raise GaiaError("nothing to plot: no group has graded answers (the test split has none)")
    plt = _pyplot()
    frontier = len(groups) > 1
    fig, axes = plt.subplots(
        1, 2 if frontier else 1, figsize=(13, 5.6) if frontier else (7.5, 5.2), squeeze=False
    )
    _accuracy_bars(axes[0][0], groups)
    if frontier:
        _frontier(axes[0][1], groups)
    # With a frontier panel its markers (colour and shape) name the groups in both panels.
    handles, labels = axes[0][1 if frontier else 0].get_legend_handles_labels()
    columns = 2 if frontier and len(labels) <= 4 and max(map(len, labels)) <= 60 else 1
    fig.legend(handles, labels, loc="lower center", ncol=columns, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.03 + 0.033 * math.ceil(len(labels) / columns), 1, 1))
    _save(fig, path)


def _label(group: Mapping[str, Any]) -> str:
    flags = group["flags"]
    epochs = f" (k={group['epochs']})" if group["epochs"] > 1 else ""
    return (
        _short(group["group"], 60)
        + epochs
        + (f"  ⚠ {_short('; '.join(flags), 60)}" if flags else "")
    )


def _accuracy_bars(ax: Any, groups: Sequence[Mapping[str, Any]]) -> None:
    labels = sorted(
        {level["level"] for g in groups for level in g["levels"]},
        key=lambda label: (label == "all", label),
    )
    width = 0.8 / len(groups)
    for index, group in enumerate(groups):
        by_level = {level["level"]: level for level in group["levels"]}
        xs: list[float] = []
        heights: list[float] = []
        below: list[float] = []
        above: list[float] = []
        for x, label in enumerate(labels):
            level = by_level.get(label)
            if level is None or level["accuracy"] is None:
                continue
            xs.append(x - 0.4 + width * (index + 0.5))
            heights.append(level["accuracy"])
            below.append(level["accuracy"] - level["ci_low"])
            above.append(level["ci_high"] - level["accuracy"])
        ax.bar(
            xs,
            heights,
            width * 0.92,
            yerr=[below, above],
            capsize=3,
            color=f"C{index % 10}",
            hatch="///" if group["flags"] else None,  # not comparable: oracle, other tools
            edgecolor="white",
            label=_label(group),
            error_kw={"elinewidth": 1.1, "ecolor": "#333333"},
        )
        # The value at the foot of its bar, where no interval whisker can hide it.
        for position, height in zip(xs, heights, strict=True):
            ax.text(
                position,
                0.012,
                f"{height:.2f}",
                ha="center",
                va="bottom",
                fontsize=7 if len(groups) > 3 else 8,
                rotation=90 if len(groups) > 3 else 0,
                color="white" if height > 0.09 else "#222222",
                # a solid patch under the value keeps it legible on a hatched bar
                bbox={"facecolor": f"C{index % 10}", "edgecolor": "none", "pad": 0.5}
                if height > 0.09
                else None,
            )
    counts = {level["level"]: level["questions"] for level in groups[0]["levels"]}
    ax.set_xticks(
        range(len(labels)),
        [
            (f"level {label}" if label != "all" else "all levels")
            + (f"\nn={counts[label]}" if len(groups) == 1 and label in counts else "")
            for label in labels
        ],
    )
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("accuracy (mean over epochs)")
    ax.set_title("GAIA accuracy per level, 95% Wilson interval")
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)


def _frontier(ax: Any, groups: Sequence[Mapping[str, Any]]) -> None:
    overall = [g["levels"][-1] for g in groups]
    by_cost = all(level["cost_per_question"] is not None for level in overall)
    key = "cost_per_question" if by_cost else "tokens_per_question"
    points = [(float(level[key] or 0.0), float(level["accuracy"])) for level in overall]
    # A flagged run (oracle retries, other tools) is not comparable: it is drawn hollow and kept
    # off the frontier, unless every run is flagged.
    eligible = [i for i, g in enumerate(groups) if not g["flags"]] or list(range(len(groups)))
    on_frontier = [eligible[i] for i in pareto_frontier([points[i] for i in eligible])]
    for index, (level, (x, y)) in enumerate(zip(overall, points, strict=True)):
        ax.errorbar(
            x,
            y,
            yerr=[[y - level["ci_low"]], [level["ci_high"] - y]],
            fmt=_MARKERS[index % len(_MARKERS)],
            color=f"C{index % 10}",
            capsize=4,
            markersize=9,
            markeredgecolor="black" if index in on_frontier else f"C{index % 10}",
            markerfacecolor=f"C{index % 10}" if index in eligible else "white",
            markeredgewidth=1.0 if index in on_frontier or index in eligible else 2.0,
            alpha=0.9,
            label=_label(groups[index]),
        )
    front = [points[i] for i in on_frontier]
    xs = [p[0] for p in points]
    log_scale = min(xs) > 0 and max(xs) / min(xs) > 20
    right = max(xs) * (3 if log_scale else 1.15) if max(xs) > 0 else 1.0
    # The frontier as a staircase: from each frontier run, flat until a costlier one beats it.
    ax.step(
        [p[0] for p in front] + [right],
        [p[1] for p in front] + [front[-1][1]],
        where="post",
        linestyle="--",
        color="#555555",
        linewidth=1,
        label="frontier: runs no cheaper run beats (black edge); flagged runs hollow, off it",
    )
    if log_scale:
        ax.set_xscale("log")
    else:
        ax.set_xlim(0, right)
    ax.set_ylim(0, 1.05)
    ax.set_xlabel(
        "$ per question and epoch" if by_cost else "tokens per question and epoch (no cost in logs)"
    )
    ax.set_ylabel("overall accuracy")
    ax.set_title("Accuracy against " + ("cost" if by_cost else "tokens") + ", all levels")
    ax.grid(alpha=0.3)
    ax.set_axisbelow(True)


def plot_compare(document: Mapping[str, Any], path: str) -> None:
    """Accuracy per level of the two sides (``compare``'s document), side by side.

    Raises:
        GaiaError: matplotlib is missing.
    """
    _save(compare_figure(document), path)


def compare_figure(document: Mapping[str, Any]) -> Any:
    """The figure of ``plot_compare``: what makes a difference noise is on it.

    Each bar has its side's 95% Wilson interval over the level's n questions (the x axis says n),
    and each level its A − B with the comparison's own 95% interval above the pair.
    """
    plt = _pyplot()
    summary = document["levels"]
    labels = [row["level"] for row in summary]
    width = 0.38
    xs = range(len(labels))
    fig, ax = plt.subplots(figsize=(7, 4.6))
    for offset, key, side in ((-1, "a_accuracy", "a"), (1, "b_accuracy", "b")):
        name = f"{side.upper()}: {_short(document[side]['label'], 60)}"
        values = [r[key] for r in summary]
        bounds = [
            wilson_interval(v, r["n"]) if r["n"] else (v, v)
            for v, r in zip(values, summary, strict=True)
        ]
        errors = [
            [v - low for v, (low, _) in zip(values, bounds, strict=True)],
            [high - v for v, (_, high) in zip(values, bounds, strict=True)],
        ]
        ax.bar(
            [x + offset * width / 2 for x in xs],
            values,
            width,
            yerr=errors,
            capsize=3,
            error_kw={"elinewidth": 1},
            label=name,
        )
    for x, row in zip(xs, summary, strict=True):
        difference = (
            f"A − B {row['difference']:+.2f}\n[{row['ci_low']:+.2f}, {row['ci_high']:+.2f}]"
        )
        ax.annotate(difference, (x, 1.02), ha="center", va="bottom", fontsize=7)
    ax.set_xticks(
        list(xs),
        [
            f"{'level ' + str(label) if label != 'all' else 'all'}\nn={row['n']}"
            for label, row in zip(labels, summary, strict=True)
        ],
    )
    ax.set_ylim(0, 1.22)
    ax.set_yticks([0, 0.2, 0.4, 0.6, 0.8, 1.0])
    ax.set_ylabel("accuracy (re-scored)")
    ax.set_title(
        "GAIA accuracy, A and B on the same questions: each with its 95% interval, "
        "A − B with its own",
        fontsize=9,
    )
    handles, names = ax.get_legend_handles_labels()
    fig.legend(handles, names, loc="lower center", ncol=1, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.11, 1, 1))
    return fig
