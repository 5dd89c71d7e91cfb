"""Token accounting: what each (phase, group, language) makes available, and the planner's view of it.

:func:`account` runs per input partition (the sums add up across partitions, see :func:`sum_accounts`);
:func:`group_stats` turns the sums into the planner's :class:`~curation.mixture.plan.GroupStat`,
and :func:`language_table` gives the manifests' per-language figures.

>>> from curation.mixture.phases import PhaseSpec
>>> from curation.mixture.policy import Policy
>>> df = pd.DataFrame({"doc_id": ["a", "b"], "text": ["xx", "yyy"], "source": ["web", "web"], "n_tokens": [5, 7],
...                    "quality_level": ["high", "low"], "lang": ["en", "en"]})
>>> agg = account(df, [PhaseSpec("p", tokens=10, mix={"web": 1.0})], Policy(repeat={"web/high": 4.0, "web/low": 0.0}))
>>> agg[["group", "documents", "tokens", "zero_tokens"]].values.tolist()
[['web/high', 1, 5, 0], ['web/low', 0, 0, 7]]
>>> group_stats(agg)["p"]["web/high"]
GroupStat(tokens=5, repeat=4.0, documents=1, max_doc_tokens=5, max_doc='a')
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from curation.mixture.groups import REPO_GROUP, memberships, shard_count
from curation.mixture.phases import PhaseSpec
from curation.mixture.plan import GroupStat, PhasePlan
from curation.mixture.policy import Policy, doc_groups
from curation.mixture.repo_concat import RepoHeaders
from curation.tokens import count_tokens

#: The accounting sums per (phase, group, language): documents, tokens and characters of the
#: documents with a repeat factor > 0, their repeat-weighted tokens, and the size of the rest.
AGG_META = pd.DataFrame({
    "phase": pd.Series(dtype=object), "group": pd.Series(dtype=object), "lang": pd.Series(dtype=object), "documents": pd.Series(dtype="int64"),
    "tokens": pd.Series(dtype="int64"), "chars": pd.Series(dtype="int64"), "repeat_tokens": pd.Series(dtype="float64"),
    "zero_documents": pd.Series(dtype="int64"), "zero_tokens": pd.Series(dtype="int64"), "max_tokens": pd.Series(dtype="int64"),
    "max_doc": pd.Series(dtype=object),
})
SUMS = list(AGG_META.columns[3:-2])
#: The ``phase`` of the rows that count the documents no phase takes: their kind is in no phase's mix
#: (ledger ``no_phase``; :func:`curation.mixture.unphased.no_phase_warnings`). Their sums are all "zero".
UNPHASED = ""


def _combine(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Rows of ``frame`` added up per ``keys``: the sums, and the largest document (repeat > 0) with its
    id (``max_doc``; ties to the smallest id, so the partitioning does not change it)."""
    out = frame.groupby(keys, sort=True)[SUMS].sum()
    top = frame.sort_values(["max_tokens", "max_doc"], ascending=[False, True], kind="stable").drop_duplicates(keys)
    return out.join(top.set_index(keys)[["max_tokens", "max_doc"]]).reset_index()


def account(df: pd.DataFrame, specs: list[PhaseSpec], policy: Policy, headers: RepoHeaders | None = None,
            tokenizer: str = "qwen") -> pd.DataFrame:
    """The accounting sums of one partition (``AGG_META``); repository documents count their file headers."""
    groups = doc_groups(df, policy)
    m = _with_unphased(memberships(df, specs, groups), df, specs, groups)
    repo = (m["group"] == REPO_GROUP).to_numpy()
    if headers is not None and repo.any():  # a repository document carries a file header per file: plan with its tokens
        paths = df["path"].astype(object).to_numpy()[m.loc[repo, "row"].to_numpy()] if "path" in df.columns else [None] * int(repo.sum())
        heads = [headers.file.format(path=p if isinstance(p, str) and p else "") for p in paths]
        m.loc[repo, "n_tokens"] = m.loc[repo, "n_tokens"].to_numpy() + count_tokens(heads, tokenizer).astype("int64")
    pos = m["repeat"] > 0
    m = m.assign(
        documents=pos.astype("int64"), tokens=np.where(pos, m["n_tokens"], 0), chars=np.where(pos, m["chars"], 0),
        repeat_tokens=m["repeat"] * m["n_tokens"], zero_documents=(~pos).astype("int64"), zero_tokens=np.where(pos, 0, m["n_tokens"]),
        max_tokens=np.where(pos, m["n_tokens"], 0),
        max_doc=np.where(pos, df["doc_id"].astype(str).to_numpy()[m["row"].to_numpy()], ""),
    )
    return _combine(m, ["phase", "group", "lang"]).astype(AGG_META.dtypes.to_dict())


def _with_unphased(m: pd.DataFrame, df: pd.DataFrame, specs: list[PhaseSpec], groups: pd.DataFrame) -> pd.DataFrame:
    """``m`` with a row of phase :data:`UNPHASED` and factor 0 per document whose kind no phase mixes
    (a factor of 0 is the policy's exclusion, with its own reason)."""
    mixed = [k for s in specs for k, v in s.mix.items() if v > 0]
    alone = np.flatnonzero((groups["repeat"].to_numpy() > 0) & ~np.isin(groups["kind"].to_numpy(), mixed))
    if not len(alone):
        return m
    tokens = pd.to_numeric(df["n_tokens"], errors="coerce").fillna(0).astype("int64").to_numpy()
    rows = pd.DataFrame({"row": alone, "phase": UNPHASED, "group": groups["group"].to_numpy()[alone], "unit": None, "repeat": 0.0,
                         "n_tokens": tokens[alone], "chars": 0, "lang": groups["lang"].to_numpy()[alone]})
    return pd.concat([m, rows.astype(m.dtypes.to_dict())], ignore_index=True)


def sum_accounts(parts: pd.DataFrame) -> pd.DataFrame:
    """The partitions' sums added up: one row per (phase, group, language)."""
    return _combine(parts, ["phase", "group", "lang"])


def group_stats(agg: pd.DataFrame) -> dict[str, dict[str, GroupStat]]:
    """phase → group → GroupStat from the accounting sums (zero-weight groups keep their size, repeat 0)."""
    out: dict[str, dict[str, GroupStat]] = {}
    agg = _combine(agg[agg["phase"] != UNPHASED], ["phase", "group"])
    for r in agg.itertuples(index=False):
        if r.tokens > 0:
            st = GroupStat(int(r.tokens), float(r.repeat_tokens) / float(r.tokens), int(r.documents), int(r.max_tokens), str(r.max_doc))
        else:
            st = GroupStat(int(r.zero_tokens), 0.0, int(r.zero_documents))
        out.setdefault(r.phase, {})[r.group] = st
    return out


def live_groups(plans: Mapping[str, PhasePlan]) -> set[tuple[str, str]]:
    """(phase, group) pairs the plan gives epochs and tokens: the ones that get shards."""
    return {(p, g.group) for p, plan in plans.items() for g in plan.groups if g.epochs > 0 and g.tokens > 0}


def shard_counts(agg: pd.DataFrame, live: set[tuple[str, str]], target_chars: float,
                 scopes: Mapping[str, str] | None = None) -> dict[tuple[str, str], int]:
    """How many shards each live group is written in (its characters over the target shard size),
    the same in every phase of a cap scope (:func:`~curation.mixture.groups.cap_scopes`)."""
    scopes = scopes or {}
    chars: dict[tuple[str, str], int] = {}
    for (phase, group), v in agg.groupby(["phase", "group"])["chars"].sum().items():
        key = (scopes.get(phase, phase), group)
        chars[key] = max(chars.get(key, 0), int(v))
    return {(p, g): shard_count(chars.get((scopes.get(p, p), g), 0), target_chars) for p, g in sorted(live)}


def language_table(agg: pd.DataFrame) -> dict[str, dict[str, dict[str, dict[str, int]]]]:
    """phase → group → language → unique documents and tokens (groups with a repeat factor > 0)."""
    out: dict[str, dict[str, dict[str, dict[str, int]]]] = {}
    for r in agg.itertuples(index=False):
        if r.documents > 0:
            out.setdefault(r.phase, {}).setdefault(r.group, {})[str(r.lang)] = {"documents": int(r.documents), "tokens": int(r.tokens)}
    return out
