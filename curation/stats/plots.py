"""Matplotlib figures for each run-statistics view, for notebooks and the HTML report.

>>> # from curation.stats import plots, run as stats
>>> # run = stats.open_run("runs/sample")
>>> # plots.plot_funnel(stats.funnel(run))        # a Figure; shows inline in a notebook
>>> # plots.figure_png(fig)                       # PNG bytes (the report embeds them)

Each function takes the frame a view returns and draws exactly its numbers (tests read the
bars back). Figures are built with ``matplotlib.figure.Figure`` (no pyplot state, so any
backend works, Agg included); matplotlib is imported inside the functions.
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np
import pandas as pd

from curation.stats.scores import score_histogram

KEPT, DROPPED = "#4c78a8", "#e45756"
PALETTE = ["#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#eeca3b", "#b279a2", "#ff9da6", "#9d755d", "#bab0ac"]


def _figure(width: float = 8.0, height: float = 4.0, ncols: int = 1, nrows: int = 1) -> tuple[Any, list[Any]]:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False).ravel().tolist()
    return fig, axes


def compact(value: float, _pos: Any = None) -> str:
    """An axis label that stays short (tokens run to millions; full digits run into each other).

    >>> [compact(v) for v in (0, 950, 125000, 1500000, 2e9)]
    ['0', '950', '125k', '1.5M', '2G']
    """
    for unit, size in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(value) >= size:
            return f"{value / size:.3g}{unit}"
    return f"{value:.3g}"


def _compact_axis(ax: Any, axis: str = "y") -> None:
    from matplotlib.ticker import FuncFormatter

    (ax.xaxis if axis == "x" else ax.yaxis).set_major_formatter(FuncFormatter(compact))


def group_colours(groups: list[str]) -> dict[str, Any]:
    """A distinct colour per group: tab20 up to 20 groups, evenly spaced hues beyond (a 10-colour
    cycle gave web/high and code/medium the same green)."""
    from matplotlib import colormaps

    cmap = colormaps["tab20"] if len(groups) <= 20 else colormaps["hsv"].resampled(len(groups) + 1)
    return {g: cmap(i) for i, g in enumerate(groups)}


def empty_figure(message: str) -> Any:
    """A small figure that says why there is nothing to draw (e.g. a stage did not run)."""
    fig, (ax,) = _figure(6, 1.2)
    ax.axis("off")
    ax.text(0.5, 0.5, message, ha="center", va="center", wrap=True)
    return fig


def figure_png(fig: Any, dpi: int = 90) -> bytes:
    """The figure as PNG bytes."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()


def plot_funnel(funnel: pd.DataFrame) -> Any:
    """Kept and dropped documents (left) and tokens (right) per stage, stacked."""
    if funnel.empty:
        return empty_figure("no finished stages")
    fig, axes = _figure(10, 3.8, ncols=2)
    x = np.arange(len(funnel))
    for ax, unit in zip(axes, ("docs", "tokens"), strict=True):
        kept, dropped = funnel[f"{unit}_kept"].to_numpy(), funnel[f"{unit}_dropped"].to_numpy()
        ax.bar(x, kept, color=KEPT, label="kept")
        ax.bar(x, dropped, bottom=kept, color=DROPPED, label="dropped")
        ax.set_xticks(x, funnel["stage"], rotation=30, ha="right")
        ax.set_title("documents" if unit == "docs" else "tokens")
        _compact_axis(ax)
        ax.legend(loc="lower left", fontsize=8)
    return fig


def plot_drop_reasons(reasons: pd.DataFrame) -> Any:
    """Dropped documents and tokens per ``stage: reason`` (horizontal bars)."""
    if reasons.empty:
        return empty_figure("nothing was dropped")
    labels = [f"{s}: {r}" for s, r in zip(reasons["stage"], reasons["reason"], strict=True)]
    fig, axes = _figure(10, 0.9 + 0.3 * len(labels), ncols=2)
    y = np.arange(len(labels))
    for ax, col in zip(axes, ("documents", "tokens"), strict=True):
        ax.barh(y, reasons[col].to_numpy(), color=DROPPED)
        ax.set_yticks(y, labels if col == "documents" else [""] * len(labels), fontsize=8)
        ax.invert_yaxis()
        _compact_axis(ax, "x")
        ax.set_title(f"dropped {col}")
    return fig


def plot_sources(by_source: pd.DataFrame) -> Any:
    """Kept tokens per source after each stage (one line per source)."""
    if by_source.empty:
        return empty_figure("no finished stages")
    table = by_source.pivot_table(index="stage", columns="source", values="tokens_kept", aggfunc="sum", sort=False).fillna(0)
    fig, (ax,) = _figure(8, 3.6)
    for i, src in enumerate(table.columns):
        ax.plot(np.arange(len(table)), table[src].to_numpy(), marker="o", color=PALETTE[i % len(PALETTE)], label=str(src))
    ax.set_xticks(np.arange(len(table)), table.index, rotation=30, ha="right")
    ax.set_title("kept tokens per source")
    _compact_axis(ax)
    ax.legend(fontsize=8)
    return fig


def plot_score_distributions(scores: pd.DataFrame, thresholds: dict[str, list[float]] | None = None, bins: int = 40,
                             label: str = "thresholds") -> Any:
    """Token-weighted histogram per scorer, kept vs dropped stacked, with the bucket thresholds
    (or tier cuts: ``label`` names them); a title says "dotted" only above lines it draws."""
    names = sorted(scores["scorer"].unique()) if len(scores) else []
    if not names:
        return empty_figure("no scores")
    fig, axes = _figure(5 * min(len(names), 3), 3.4 * ((len(names) + 2) // 3), ncols=min(len(names), 3), nrows=(len(names) + 2) // 3)
    for ax, name in zip(axes, names, strict=False):
        sub = scores[scores["scorer"] == name]
        edges = _edges(sub["score"], bins)
        kept = score_histogram(sub[sub["kept"]], name, edges)
        dropped = score_histogram(sub[~sub["kept"]], name, edges)
        width = np.diff(edges)
        ax.bar(edges[:-1], kept["tokens"], width=width, align="edge", color=KEPT, label="kept")
        ax.bar(edges[:-1], dropped["tokens"], width=width, bottom=kept["tokens"], align="edge", color=DROPPED, label="dropped")
        lines = (thresholds or {}).get(name, [])
        for t in lines:
            ax.axvline(t, color="black", lw=0.6, ls=":")
        ax.set_title(f"{name} (tokens per bin; dotted: {label})" if lines else f"{name} (tokens per bin)", fontsize=9)
        _compact_axis(ax)
        ax.legend(fontsize=7)
    for ax in axes[len(names):]:
        ax.axis("off")
    return fig


def _edges(values: pd.Series, bins: int) -> np.ndarray:
    v = values.dropna().to_numpy(dtype="float64")
    lo, hi = (float(v.min()), float(v.max())) if len(v) else (0.0, 1.0)
    return np.linspace(lo, hi if hi > lo else lo + 1.0, bins + 1)


def plot_categories(frame: pd.DataFrame, title: str) -> Any:
    """Tokens per category value (level, tier, band), stacked by source; dropped values hatched."""
    if frame.empty:
        return empty_figure(f"{title}: the stage did not run")
    values = list(dict.fromkeys(frame["value"]))
    sources = sorted(frame["source"].unique())
    table = frame.pivot_table(index="value", columns="source", values="tokens", aggfunc="sum").reindex(index=values, columns=sources).fillna(0)
    dropped = frame.groupby("value")["kept"].apply(lambda k: not k.any()).reindex(values)
    fig, (ax,) = _figure(8, 3.6)
    x, bottom = np.arange(len(values)), np.zeros(len(values))
    for i, src in enumerate(sources):
        heights = table[src].to_numpy()
        bars = ax.bar(x, heights, bottom=bottom, color=PALETTE[i % len(PALETTE)], label=str(src))
        for bar, is_dropped in zip(bars, dropped, strict=True):
            if is_dropped:
                bar.set_hatch("//")
        bottom += heights
    ax.set_xticks(x, values, rotation=25, ha="right")
    ax.set_title(f"{title}: tokens (hatched: dropped)")
    _compact_axis(ax)
    ax.legend(fontsize=8)
    return fig


def plot_mixture(composition: pd.DataFrame) -> Any:
    """Per phase, the share of planned tokens by group (left) and each group's epochs (right)."""
    shipped = composition[composition["shipped"]] if len(composition) else composition
    if shipped.empty:
        return empty_figure("no group shipped: the mixture stage did not run, or its phases got no documents")
    phases = list(dict.fromkeys(shipped["phase"]))
    groups = sorted(shipped["group"].unique())
    share = shipped.pivot_table(index="phase", columns="group", values="token_share", aggfunc="sum").reindex(index=phases, columns=groups).fillna(0)
    fig, axes = _figure(12, 0.8 + 0.5 * max(len(phases), len(groups) * 0.6), ncols=2)
    y, left = np.arange(len(phases)), np.zeros(len(phases))
    colours = group_colours(groups)
    for g in groups:
        w = share[g].to_numpy()
        axes[0].barh(y, w, left=left, color=colours[g], label=g)
        left += w
    axes[0].set_yticks(y, phases, fontsize=8)
    axes[0].invert_yaxis()
    axes[0].set_title("share of planned tokens")
    axes[0].legend(fontsize=6, ncols=3, loc="upper center", bbox_to_anchor=(0.5, -0.12))
    epochs = shipped.pivot_table(index="group", columns="phase", values="epochs", aggfunc="sum").reindex(index=groups, columns=phases)
    yg, h = np.arange(len(groups)), 0.8 / max(len(phases), 1)
    for j, p in enumerate(phases):
        axes[1].barh(yg + j * h, epochs[p].fillna(0).to_numpy(), height=h, color=PALETTE[j % len(PALETTE)], label=p)
    axes[1].set_yticks(yg + 0.4 - h / 2, groups, fontsize=7)
    axes[1].invert_yaxis()
    axes[1].set_title("epochs per group and phase")
    axes[1].legend(fontsize=6)
    return fig


def plot_pretrain_epochs(epochs: pd.DataFrame, target: float = 3.2) -> Any:
    """Epochs of each group over pre-training, with the recipe's top-level target line."""
    if epochs.empty:
        return empty_figure("no pre-training manifests")
    fig, (ax,) = _figure(7, 0.8 + 0.3 * len(epochs))
    y = np.arange(len(epochs))
    ax.barh(y, epochs["total"].to_numpy(), color=KEPT)
    ax.axvline(target, color="black", ls="--", lw=0.8)
    ax.set_yticks(y, epochs["group"], fontsize=8)
    ax.invert_yaxis()
    ax.set_title(f"epochs over pre-training (dashed: {target})")
    return fig


def plot_edu_calibration(calibration: pd.DataFrame, threshold: float | None = None) -> Any:
    """Predicted edu score against the annotated one, with the mean per annotated score."""
    if calibration.empty:
        return empty_figure("no edu annotations: the edu_score stage did not run or stored none")
    fig, (ax,) = _figure(5, 4.5)
    ax.scatter(calibration["annotated"], calibration["predicted"], s=10, alpha=0.5, color=KEPT)
    means = calibration.groupby("annotated")["predicted"].mean()
    ax.plot(means.index, means.to_numpy(), color=DROPPED, marker="o", label="mean predicted")
    lo = float(min(calibration["annotated"].min(), calibration["predicted"].min(), 0))
    hi = float(max(calibration["annotated"].max(), calibration["predicted"].max(), 5))
    ax.plot([lo, hi], [lo, hi], color="grey", lw=0.6, ls="--")
    if threshold is not None:
        ax.axhline(threshold, color="black", lw=0.6, ls=":")
        ax.axvline(threshold, color="black", lw=0.6, ls=":")
    ax.set_xlabel("annotated (LLM)")
    ax.set_ylabel("predicted (classifier)")
    ax.legend(fontsize=8)
    return fig


def plot_cluster_sizes(distributions: dict[str, pd.DataFrame]) -> Any:
    """Number of duplicate clusters per cluster size, one panel per dedup stage."""
    items = [(k, v) for k, v in distributions.items() if not v.empty]
    if not items:
        return empty_figure("no duplicate clusters")
    fig, axes = _figure(4.5 * len(items), 3.2, ncols=len(items))
    for ax, (stage, dist) in zip(axes, items, strict=True):
        x = np.arange(len(dist))
        ax.bar(x, dist["clusters"].to_numpy(), color=KEPT)
        ax.set_xticks(x, [str(v) for v in dist["size"]])
        if dist["clusters"].max() > 50:  # long tails: a log scale keeps the rare big clusters visible
            ax.set_yscale("log")
        ax.set_xlabel("cluster size (kept + removed)")
        ax.set_title(f"{stage}: clusters per size", fontsize=9)
        ax.tick_params(axis="x", labelsize=7, rotation=45)
    return fig


def plot_compare(comparison: pd.DataFrame, a: str = "a", b: str = "b") -> Any:
    """Kept documents and tokens per stage in two runs side by side."""
    if comparison.empty:
        return empty_figure("nothing to compare")
    fig, axes = _figure(10, 3.6, ncols=2)
    x, w = np.arange(len(comparison)), 0.4
    for ax, col in zip(axes, ("docs_kept", "tokens_kept"), strict=True):
        ax.bar(x - w / 2, comparison[f"{col}_a"].to_numpy(), width=w, color=KEPT, label=a)
        ax.bar(x + w / 2, comparison[f"{col}_b"].to_numpy(), width=w, color=PALETTE[1], label=b)
        ax.set_xticks(x, comparison["stage"], rotation=30, ha="right")
        ax.set_title(col.replace("_", " "))
        _compact_axis(ax)
        ax.legend(fontsize=8)
    return fig
