"""Score distributions with their bucket thresholds, and tokens per level, tier and edu band.

>>> # s = scores(run)                                  # web_quality scores, kept and discarded
>>> # score_histogram(s, "heuristics")                 # token-weighted histogram of one scorer
>>> # bucket_thresholds(run)["heuristics"]             # the 19 thresholds the stage used
>>> # category_tokens(run, "quality_level", "web_quality")

Kept documents carry the scores as columns of the stage's ``docs/``; discarded documents
carry them in their ledger detail (keys ``quality_score_<name>``, ``<name>``, or a
``scores`` mapping). Nothing is rescored.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from curation.stats.drops import parse_detail
from curation.stats.run import Run, missing_stage_note

#: Where each category column comes from: (stage, sources whose kept rows it decided, or None for
#: every row with a value) — code_web's output still carries the code files' tiers from code_quality.
CATEGORIES: dict[str, tuple[tuple[str, tuple[str, ...] | None], ...]] = {
    "quality_level": (("web_quality", None),),
    "code_tier": (("code_quality", None), ("code_web", ("web", "code_web"))),  # recalled pages keep source web
    "edu_band": (("edu_score", None),),
}
#: The short detail key a ledger row may use for the category.
CATEGORY_DETAIL_KEYS = {"quality_level": "level", "code_tier": "tier", "edu_band": "band"}
#: The order categories are shown in (best first); unknown values go last.
CATEGORY_ORDER = {
    "quality_level": ["high", "medium_high", "medium", "medium_low", "low"],
    "code_tier": ["high", "medium", "low"],
    "edu_band": ["high", "medium", "low"],
}

SCORE_COLUMNS = ["doc_id", "source", "n_tokens", "kept", "scorer", "score"]


def score_columns(run: Run, stage: str = "web_quality", prefix: str = "quality_score_") -> dict[str, str]:
    """Scorer name → column of ``stage``'s score columns (a column equal to ``prefix`` is its own name).

    >>> # score_columns(run)  → {"heuristics": "quality_score_heuristics", "linear": "quality_score_linear"}
    """
    cols = [c for c in run.doc_columns(stage) if c.startswith(prefix)]
    return {(c[len(prefix):] or c): c for c in sorted(cols)}


def scores(run: Run, stage: str = "web_quality", prefix: str = "quality_score_", sources: tuple[str, ...] | None = None) -> pd.DataFrame:
    """Every document's score per scorer at ``stage``: kept ones from docs/, dropped from the ledger.

    ``sources`` limits the kept rows (e.g. ``("web", "code_web")`` at code_web, whose output still
    carries the code files' scores). Long format, columns :data:`SCORE_COLUMNS`.
    """
    if not run.has(stage):
        return _empty_scores()
    names = score_columns(run, stage, prefix)
    frames = []
    kept = run.docs(stage, ["doc_id", "source", "n_tokens", *names.values()])
    if sources is not None:
        kept = kept[kept["source"].isin(sources)]
    for name, col in names.items():
        frames.append(pd.DataFrame({
            "doc_id": kept["doc_id"], "source": kept["source"], "n_tokens": kept["n_tokens"],
            "kept": True, "scorer": name, "score": pd.to_numeric(kept[col], errors="coerce"),
        }))
    ledger = run.ledger(stage)
    dropped = [
        {"doc_id": i, "source": src, "n_tokens": n, "kept": False, "scorer": name, "score": value}
        for i, src, n, d in zip(ledger["doc_id"], ledger["source"], ledger["n_tokens"], ledger["detail"], strict=True)
        for name, value in _detail_scores(parse_detail(d), prefix).items()
    ]
    if dropped:
        frames.append(pd.DataFrame(dropped))
    if not frames:
        return _empty_scores()
    out = pd.concat(frames, ignore_index=True)
    out = out[out["score"].notna()]
    out["n_tokens"] = out["n_tokens"].astype("int64")
    out["score"] = out["score"].astype("float64")
    return out[SCORE_COLUMNS].reset_index(drop=True)


def _detail_scores(detail: dict[str, Any], prefix: str) -> dict[str, float]:
    out: dict[str, float] = {}
    nested = detail.get("scores")
    if isinstance(nested, dict):
        out.update({(k.removeprefix(prefix) or k): float(v) for k, v in nested.items() if _is_number(v)})
    out.update({(k[len(prefix):] or k): float(v) for k, v in detail.items() if k.startswith(prefix) and _is_number(v)})
    return out


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and np.isfinite(v)


def _empty_scores() -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=t) for c, t in zip(SCORE_COLUMNS, [object, object, "int64", bool, object, "float64"], strict=True)})


def bucket_thresholds(run: Run, stage: str = "web_quality") -> dict[str, list[float]]:
    """Per scorer, the bucket thresholds the stage recorded in its stats.json ``extra``.

    Accepts ``extra["thresholds"]`` or ``extra["bucket_thresholds"]`` as ``{scorer: [t5, …, t95]}``
    (scorer names with or without the ``quality_score_`` prefix).
    """
    out = run.stage(stage)
    if out is None:
        return {}
    extra = out.extra
    raw = extra.get("thresholds") or extra.get("bucket_thresholds") or {}
    if not isinstance(raw, dict):
        return {}
    return {
        str(k).removeprefix("quality_score_"): [float(x) for x in v]
        for k, v in raw.items() if isinstance(v, (list, tuple)) and all(_is_number(x) for x in v)
    }


#: The tier-cut group drawn on a code stage's score plot: code_quality's pooled cut (the one every
#: language without enough files of its own uses), code_web's only group.
CUT_GROUPS = ("*", "code_web")


def tier_cut_lines(run: Run, stage: str, prefix: str = "code_score_") -> dict[str, list[float]]:
    """The finite tier cuts (low, high) a code stage recorded in ``extra.tier_cuts``, per scorer.

    The cuts apply to the stage's combined score, which is the scorer's own score when the stage has
    one scorer; with several there is no line to draw on a single scorer's plot, so {} (as when the
    stage recorded no cut, or its cut is ±inf: too few files for percentiles).
    """
    out = run.stage(stage)
    cuts = out.extra.get("tier_cuts") if out is not None else None
    names = score_columns(run, stage, prefix)
    if not isinstance(cuts, dict) or len(names) != 1:
        return {}
    cut = next((cuts[g] for g in CUT_GROUPS if g in cuts), next(iter(cuts.values())) if len(cuts) == 1 else None)
    lines = [float(x) for x in cut if _is_number(x)] if isinstance(cut, (list, tuple)) else []
    return {next(iter(names)): lines} if lines else {}


def category_note(run: Run, column: str) -> str:
    """Why ``category_tokens(run, column)`` is empty: a stage that decides it did not run, or ran
    and gave no document a value (none of its sources reached it)."""
    parts = []
    for stage, _sources in CATEGORIES.get(column, ()):
        out = run.stage(stage)
        if out is None:
            parts.append(missing_stage_note(run, stage) or f"{stage} did not run")
            continue
        parts.append(scored_none_note(run, stage))
    return f"{column}: " + "; ".join(parts)


def scored_none_note(run: Run, stage: str) -> str:
    """A sentence for a stage that ran and scored no document: none of its sources reached it, those
    that did were dropped before scoring (code_quality's data-file rules), or it kept them with no
    score (the stage's dropped count says which)."""
    out = run.stage(stage)
    stats = out.stats if out is not None else {}
    sources = (stats.get("config") or {}).get("sources")
    sources = [str(x) for x in sources] if isinstance(sources, list) else []
    seen = (stats.get("in") or {}).get("documents", "?")
    head = f"{stage} ran in {run.name} ({seen} documents in) and scored none of them"
    by_source = stats.get("by_source") or {}

    def count(source: str, key: str) -> int:
        return int(((by_source.get(source) or {}).get(key) or {}).get("documents", 0))

    reached, dropped = sum(count(x, "in") for x in sources), sum(count(x, "dropped") for x in sources)
    if not sources:
        return head
    names = ", ".join(sources)
    if not reached:
        return f"{head}: no document of its sources ({names}) reached it"
    if not dropped:
        return f"{head}: it kept the {reached} documents of its sources ({names}) it got, none with a score"
    if dropped < reached:
        return (f"{head}: of the {reached} documents of its sources ({names}) it got, {dropped} were dropped "
                "(see the drop reasons) and it kept the others with no score")
    return f"{head}: the {reached} documents of its sources ({names}) it got were dropped before scoring (see the drop reasons)"


def score_histogram(frame: pd.DataFrame, scorer: str, bins: int | np.ndarray = 40) -> pd.DataFrame:
    """Documents and tokens per score bin of one scorer (kept and dropped together).

    >>> f = pd.DataFrame({"scorer": "s", "score": [0.1, 0.2, 0.9], "n_tokens": [10, 20, 5], "kept": True})
    >>> score_histogram(f, "s", bins=np.array([0.0, 0.5, 1.0]))[["documents", "tokens"]].values.tolist()
    [[2, 30], [1, 5]]
    """
    sub = frame[(frame["scorer"] == scorer) & frame["score"].notna()]
    values = sub["score"].to_numpy(dtype="float64")
    if isinstance(bins, int):
        lo, hi = (float(values.min()), float(values.max())) if len(values) else (0.0, 1.0)
        edges = np.linspace(lo, hi if hi > lo else lo + 1.0, bins + 1)
    else:
        edges = np.asarray(bins, dtype="float64")
    docs, _ = np.histogram(values, bins=edges)
    tokens, _ = np.histogram(values, bins=edges, weights=sub["n_tokens"].to_numpy(dtype="float64"))
    return pd.DataFrame({"left": edges[:-1], "right": edges[1:], "documents": docs.astype("int64"), "tokens": tokens.astype("int64")})


def category_tokens(run: Run, column: str, stage: str | None = None) -> pd.DataFrame:
    """Documents and tokens per value of ``column`` and source at the stage(s) that decide it.

    Kept documents are counted from the stage's ``docs/``; documents the stage dropped (e.g. the
    ``low`` level) from its ledger, by the value their detail names (``level``, ``tier``, ``band``
    or the column name), else by their reason. Columns: ``stage``, ``value``, ``source``,
    ``kept``, ``documents``, ``tokens``.
    """
    where = CATEGORIES.get(column, ((stage, None),)) if stage is None else ((stage, dict(CATEGORIES.get(column, ())).get(stage)),)
    short = CATEGORY_DETAIL_KEYS.get(column, column)
    frames = []
    for name, sources in where:
        if name is None or not run.has(name) or column not in run.doc_columns(name):
            continue
        kept = run.docs(name, ["source", "n_tokens", column])
        kept = kept[kept[column].notna() & (kept["source"].isin(sources) if sources else True)]
        frames.append(pd.DataFrame({"stage": name, "value": kept[column].astype(str), "source": kept["source"], "kept": True, "n_tokens": kept["n_tokens"]}))
        ledger = run.ledger(name)
        values = [_detail_value(parse_detail(d), column, short) for d in ledger["detail"]]
        frames.append(pd.DataFrame({"stage": name, "value": [v if v is not None else r for v, r in zip(values, ledger["reason"], strict=True)],
                                    "source": ledger["source"], "kept": False, "n_tokens": ledger["n_tokens"]}))
    cols = ["stage", "value", "source", "kept", "documents", "tokens"]
    frames = [f for f in frames if len(f)]
    if not frames:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in cols})
    both = pd.concat(frames, ignore_index=True)
    out = both.groupby(["stage", "value", "source", "kept"], sort=False).agg(
        documents=("n_tokens", "size"), tokens=("n_tokens", "sum")).reset_index()
    order = {v: i for i, v in enumerate(CATEGORY_ORDER.get(column, []))}
    stage_order = {n: i for i, (n, _s) in enumerate(where)}
    out["_s"] = out["stage"].map(stage_order)
    out["_o"] = out["value"].map(lambda v: order.get(v, len(order)))
    out = out.sort_values(["_s", "_o", "value", "source", "kept"]).drop(columns=["_s", "_o"]).reset_index(drop=True)
    out[["documents", "tokens"]] = out[["documents", "tokens"]].astype("int64")
    return out[cols]


def _detail_value(detail: dict[str, Any], column: str, short: str) -> str | None:
    for key in (column, short):
        value = detail.get(key)
        if value is not None and not isinstance(value, (dict, list)):
            return str(value)
    return None


def category_totals(frame: pd.DataFrame) -> pd.DataFrame:
    """``category_tokens`` summed over sources: value, kept → documents, tokens, token share."""
    if frame.empty:
        return pd.DataFrame(columns=["value", "kept", "documents", "tokens", "token_share"])
    out = frame.groupby(["value", "kept"], sort=False)[["documents", "tokens"]].sum().reset_index()
    total = out["tokens"].sum()
    out["token_share"] = out["tokens"] / total if total else 0.0
    return out
