"""The mixture policy: the one place that decides each document's group, its repeat factor and its exclusion.

Scoring stages only annotate (``quality_level``, ``code_tier``, ``code_web_recall``, ``edu_band``,
``lang`` …); this module turns those annotations into decisions, by one documented precedence:

1. a document whose ``source`` is a web source (``web``) and that ``code_web`` recalled
   (``code_web_recall`` not null) → ``code_web/<code_tier>``;
2. else a web page whose ``edu_band`` is one of ``web_edu_bands`` (math/science-rich) →
   ``web_edu/<edu_band>``;
3. else a web page → ``web/<quality_level>``;
4. any other document → ``<source>/<code_tier | edu_band | all>`` (code and code_web inputs by tier,
   math_science by band).

A group's repeat factor is ``repeat[group]`` (exact key, else the most specific glob, else ``*``),
times ``language_repeat[lang]`` for the kinds in ``language_kinds`` (``lang`` missing or null is
``und``). A factor of 0 excludes the document: the mixture writes it to its ledger with the
reason of the recipe's rule (``low_quality``, ``code_low_tier``, ``code_web_low_tier``, else
``zero_weight``) and the scores that decided.

>>> p = Policy(repeat={"web/high": 4.0, "web/low": 0.0, "code_web/*": 2.0, "*": 1.0})
>>> df = pd.DataFrame({"source": ["web", "web", "web"], "quality_level": ["high", "low", "low"],
...                    "code_web_recall": [None, None, "html_tags"], "code_tier": [None, None, "high"]})
>>> doc_groups(df, p)[["group", "repeat", "rule"]].values.tolist()
[['web/high', 4.0, 'web level'], ['web/low', 0.0, 'web level'], ['code_web/high', 2.0, 'code_web recall (html_tags)']]
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from curation.mixture.plan import lookup
from curation.schema import DropReason

UNKNOWN_LANG = "und"
_SAFE = re.compile(r"[^A-Za-z0-9_.-]")  # group names are folder names and manifest keys
#: The sub-group column of each kind (``all`` when the column is missing or null).
SUB_COLUMN = {"web": "quality_level", "web_edu": "edu_band", "code": "code_tier", "code_web": "code_tier", "math_science": "edu_band",
              "papers": "edu_band"}
#: Ledger reason of an excluded group (repeat 0 in the table) per kind: the recipe's rule.
EXCLUSION_REASON = {
    "web": DropReason.LOW_QUALITY, "web_edu": DropReason.LOW_QUALITY,
    "code": DropReason.CODE_LOW_TIER, "code_web": DropReason.CODE_WEB_LOW_TIER,
}
#: Annotation columns copied into an exclusion's ledger detail when present.
DETAIL_COLUMNS = (
    "quality_level", "quality_bucket", "quality_percentile", "code_tier", "code_web_recall", "code_web_score",
    "edu_score", "edu_band", "lang", "lang_score",
)


@dataclasses.dataclass(frozen=True)
class Policy:
    """Group precedence and the repeat table (the recipe's ``mixture`` section)."""

    repeat: Mapping[str, float] = dataclasses.field(default_factory=lambda: {"*": 1.0})
    web_sources: tuple[str, ...] = ("web",)
    web_edu_bands: tuple[str, ...] = ("high",)
    language_repeat: Mapping[str, float] = dataclasses.field(default_factory=dict)
    language_kinds: tuple[str, ...] = ("web", "web_edu")

    def table_repeat(self, group: str) -> float:
        return lookup(self.repeat, group, 1.0)

    def language_factor(self, lang: str) -> float:
        return lookup(self.language_repeat, lang, 1.0) if self.language_repeat else 1.0


def _col(df: pd.DataFrame, name: str) -> np.ndarray:
    if name not in df.columns:
        return np.full(len(df), None, dtype=object)
    return df[name].astype(object).where(df[name].notna(), None).to_numpy()


def languages(df: pd.DataFrame) -> np.ndarray:
    """The ``lang`` of each row, ``und`` where the column is missing or null."""
    vals = _col(df, "lang")
    return np.array([v if isinstance(v, str) and v else UNKNOWN_LANG for v in vals], dtype=object)


def doc_groups(df: pd.DataFrame, policy: Policy | Mapping[str, float]) -> pd.DataFrame:
    """``kind``, ``group``, ``repeat``, ``rule`` (which precedence step decided) and ``lang`` of every row."""
    if not isinstance(policy, Policy):
        policy = Policy(repeat=dict(policy))
    source = df["source"].astype(object).fillna("unknown").to_numpy()
    kind = np.array([_SAFE.sub("_", str(s)) for s in source], dtype=object)
    rule = np.full(len(df), "source", dtype=object)
    web = np.isin(source, list(policy.web_sources))
    rule[web] = "web level"
    recall = _col(df, "code_web_recall")
    recalled = web & np.array([isinstance(v, str) and bool(v) for v in recall], dtype=bool)
    band = _col(df, "edu_band")
    rich = web & ~recalled & np.isin(band, list(policy.web_edu_bands))
    kind[web] = "web"
    kind[rich] = "web_edu"
    rule[rich] = "edu band"
    kind[recalled] = "code_web"
    rule[recalled] = [f"code_web recall ({v})" for v in recall[recalled]]
    sub = np.full(len(df), "all", dtype=object)
    for k, col in SUB_COLUMN.items():
        mask = kind == k
        if mask.any():
            vals = _col(df, col)[mask]
            sub[mask] = [_SAFE.sub("_", v) if isinstance(v, str) and v else "all" for v in vals]
    group = np.array([f"{k}/{s}" for k, s in zip(kind, sub, strict=True)], dtype=object)
    table = {g: policy.table_repeat(g) for g in set(group)}
    repeat = np.array([table[g] for g in group], dtype=np.float64)
    lang = languages(df)
    if policy.language_repeat:
        factor = {g: policy.language_factor(g) for g in set(lang)}
        scaled = np.isin(kind, list(policy.language_kinds))
        repeat[scaled] *= np.array([factor[x] for x in lang[scaled]], dtype=np.float64)
    return pd.DataFrame(
        {"kind": kind, "group": group, "repeat": np.maximum(repeat, 0.0), "rule": rule, "lang": lang}, index=df.index
    )


def group_exclusion_reason(group: str, policy: Policy) -> str:
    """The ledger reason for the documents of a group that no phase gives epochs: the recipe's rule
    where its repeat factor is 0 (``low_quality``, ``code_low_tier``, ``code_web_low_tier``), else ``zero_weight``.

    >>> group_exclusion_reason("web/low", Policy(repeat={"web/low": 0.0}))
    'low_quality'
    """
    if policy.table_repeat(group) <= 0:
        return EXCLUSION_REASON.get(group.split("/", 1)[0], DropReason.ZERO_WEIGHT).value
    return DropReason.ZERO_WEIGHT.value


def exclusion(row: Mapping[str, Any], group: str, kind: str, rule: str, policy: Policy) -> tuple[str, str]:
    """(ledger reason, detail JSON) of a document the policy excludes (repeat factor 0)."""
    reason = group_exclusion_reason(group, policy)
    if policy.table_repeat(group) <= 0:
        decided = f"mixture.repeat[{group}] = 0"
    else:
        lang = row.get("lang")
        decided = f"mixture.language_repeat[{lang if isinstance(lang, str) and lang else UNKNOWN_LANG}] = 0"
    scores = {}
    for key, value in row.items():
        if not (key in DETAIL_COLUMNS or key.startswith(("quality_score_", "code_score_"))):
            continue
        if value is None or value is pd.NA or (isinstance(value, float) and not np.isfinite(value)):
            continue
        scores[key] = round(float(value), 6) if isinstance(value, (float, np.floating)) else (
            int(value) if isinstance(value, (int, np.integer)) and not isinstance(value, bool) else value)
    detail = {"group": group, "kind": kind, "precedence": rule, "rule": decided, "repeat": 0.0, "scores": scores}
    return reason, json.dumps(detail, sort_keys=True, ensure_ascii=False, default=str)
