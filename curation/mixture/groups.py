"""Which phases each document belongs to, and the shard it goes to (pure pandas, per partition).

Its group and repeat factor are the mixture policy's (:func:`curation.mixture.policy.doc_groups`).

:func:`memberships` lists, per document, the (phase, group, unit) rows it enters: the document
itself for ``documents`` phases; for ``repo_code`` phases the repository (files and issue threads
are built per repository; a code file with no ``repo`` enters as ``code/no_repo`` with repeat 0:
it belongs to no repository, see :data:`UNPLACED_GROUP`); for ``long_context``
phases long documents of the pre-training kinds (group ``long_docs/all``) plus the kinds the phase
names (e.g. ``agent``).

>>> df = pd.DataFrame({"doc_id": ["a", "b"], "source": ["web", "web"], "n_tokens": [5, 7],
...                    "text": ["x", "y"], "quality_level": ["high", "low"]})
>>> g = doc_groups(df, {"web/high": 4.0, "web/low": 0.0})
>>> memberships(df, [PhaseSpec("p", tokens=10, mix={"web": 1.0})], g)[["row", "group", "repeat"]].values.tolist()
[[0, 'web/high', 4.0], [1, 'web/low', 0.0]]
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from curation.mixture.phases import PhaseSpec
from curation.mixture.policy import doc_groups
from curation.mixture.repo_threads import parse_meta

log = logging.getLogger(__name__)

__all__ = ["doc_groups", "memberships", "unplaced_warnings", "assign_shards", "cap_scopes", "shard_count", "order_key", "stable_hash", "aggregate"]

#: Columns of earlier stages copied into a shard's ``provenance`` JSON when present.
PROVENANCE_COLUMNS = (
    "quality_level", "quality_bucket", "code_tier", "code_web_recall", "code_web_score",
    "edu_score", "edu_band", "edu_rich", "lang", "lang_score", "minhash_cluster", "semdedup_cluster",
)
REPO_GROUP = "code/repo_level"
#: Code files a repository-level phase leaves out: with no ``repo`` (nor ``meta.repo``) a
#: repository header would carry a made-up name (the document id) and the model would learn it.
#: Repeat 0: no shard; the manifest lists them under ``excluded_groups``, and the pre-training
#: phases still take them.
UNPLACED_GROUP = "code/no_repo"
THREADS_GROUP = "issues_prs_commits/threads"
LONG_GROUP = "long_docs/all"

MEMBER_COLUMNS = {
    "row": "int64", "phase": object, "group": object, "unit": object, "repeat": "float64",
    "n_tokens": "int64", "chars": "int64", "lang": object,
}


def long_source_kinds(specs: Sequence[PhaseSpec]) -> set[str]:
    """Kinds that some pre-training phase mixes in, less source code: the corpus long documents are
    drawn from (code gets its long contexts from the repository-level phase; a single code file that
    long is mostly data or generated)."""
    return {k for s in specs if s.stage == "pretrain" and s.builder == "documents" for k, v in s.mix.items() if v > 0} - {"code"}


def _repos(df: pd.DataFrame, mask: np.ndarray) -> list[str | None]:
    """Each masked row's repository: ``repo``, else ``meta.repo``; None where neither names one."""
    repo = df["repo"].astype(object).to_numpy()[mask] if "repo" in df.columns else np.full(mask.sum(), None)
    metas = df["meta"].astype(object).to_numpy()[mask] if "meta" in df.columns else np.full(mask.sum(), None)
    out = []
    for r, m in zip(repo, metas, strict=True):
        if not (isinstance(r, str) and r):
            r = parse_meta(m).get("repo") if m is not None else None
        out.append(r if isinstance(r, str) and r else None)
    return out


def _repo_units(df: pd.DataFrame, mask: np.ndarray) -> np.ndarray:
    """``repo:<name>`` per masked row; a thread record with no repository is a unit of its own (``doc:<id>``)."""
    ids = df["doc_id"].astype(object).to_numpy()[mask]
    return np.array([f"repo:{r}" if r else f"doc:{i}" for r, i in zip(_repos(df, mask), ids, strict=True)], dtype=object)


def _objects(values: np.ndarray) -> pd.Series | np.ndarray:
    """A column of strings as object (``MEMBER_COLUMNS`` keeps it object: no ``str`` inferred and
    undone); other values as they are, for pandas to infer as before (a missing doc id ends as NaN)."""
    if all(type(v) is str for v in values.tolist()):
        return pd.Series(values, dtype=object, copy=False)
    return values


def memberships(df: pd.DataFrame, specs: Sequence[PhaseSpec], groups: pd.DataFrame) -> pd.DataFrame:
    """One row per (document, phase) the document enters: ``row`` is its position in ``df``."""
    kind = groups["kind"].to_numpy()
    group = groups["group"].to_numpy()
    repeat = groups["repeat"].to_numpy()
    lang = groups["lang"].to_numpy() if "lang" in groups.columns else np.full(len(df), "und", dtype=object)
    tokens = pd.to_numeric(df["n_tokens"], errors="coerce").fillna(0).astype("int64").to_numpy()
    text = df["text"]
    if isinstance(text.dtype, pd.StringDtype):  # code points, as len() counts them; 0 where missing
        chars = text.str.len().fillna(0).to_numpy(dtype=np.int64)
    else:
        chars = text.astype(object).map(lambda t: len(t) if isinstance(t, str) else 0).to_numpy(dtype=np.int64)
    ids = df["doc_id"].astype(object).to_numpy()
    long_kinds = long_source_kinds(specs)
    frames: list[pd.DataFrame] = []

    def add(mask: np.ndarray, phase: str, grp: np.ndarray | str, unit: np.ndarray, rep: np.ndarray) -> None:
        if not mask.any():
            return
        n = int(mask.sum())
        frames.append(pd.DataFrame({
            "row": np.flatnonzero(mask).astype(np.int64),
            "phase": _objects(np.full(n, phase, dtype=object)),
            "group": _objects(np.full(n, grp, dtype=object) if isinstance(grp, str) else grp[mask]),
            "unit": _objects(unit),
            "repeat": rep[mask] if isinstance(rep, np.ndarray) else rep,
            "n_tokens": tokens[mask],
            "chars": chars[mask],
            "lang": _objects(lang[mask]),
        }))

    for spec in specs:
        mixed = {k for k, v in spec.mix.items() if v > 0}
        plain = np.isin(kind, list(mixed))
        if spec.builder == "repo_code":
            code = (kind == "code") & ("code" in mixed) & (repeat > 0)
            repos = _repos(df, code)  # a file naming no repository is left out (UNPLACED_GROUP)
            placed = code.copy()
            placed[code] = [r is not None for r in repos]
            add(placed, spec.name, REPO_GROUP, np.array([f"repo:{r}" for r in repos if r is not None], dtype=object), np.ones(len(df)))
            add(code & ~placed, spec.name, UNPLACED_GROUP, ids[code & ~placed], np.zeros(len(df)))
            threads = (kind == "issues_prs_commits") & ("issues_prs_commits" in mixed)
            add(threads, spec.name, THREADS_GROUP, _repo_units(df, threads), repeat)
            plain &= ~np.isin(kind, ["code", "issues_prs_commits"])
        elif spec.builder == "long_context" and "long_docs" in mixed:
            long = np.isin(kind, list(long_kinds)) & (repeat > 0) & (tokens >= spec.min_tokens)
            add(long, spec.name, LONG_GROUP, ids[long], np.ones(len(df)))
        add(plain, spec.name, group, ids[plain], repeat)
    if not frames:
        return pd.DataFrame({c: pd.Series(dtype=t) for c, t in MEMBER_COLUMNS.items()})
    return pd.concat(frames, ignore_index=True).astype(MEMBER_COLUMNS)


def unplaced_warnings(agg: pd.DataFrame) -> list[dict[str, Any]]:
    """A warning (also logged) per repository-level phase that left code files out for want of a
    ``repo`` (:data:`UNPLACED_GROUP`, from the accounting sums): the phase is thinner than the
    corpus looks, and the usual cause is an input that names the field otherwise.

    >>> agg = pd.DataFrame({"phase": ["m"], "group": [UNPLACED_GROUP], "zero_documents": [3], "zero_tokens": [90]})
    >>> [w["documents"] for w in unplaced_warnings(agg)]
    [3]
    """
    rows = agg[agg["group"] == UNPLACED_GROUP]
    out = []
    for phase, g in rows.groupby("phase", sort=True):
        n, tokens = int(g["zero_documents"].sum()), int(g["zero_tokens"].sum())
        if not n:
            continue
        out.append({
            "check": "repo_fields", "phase": phase, "group": UNPLACED_GROUP, "value": n, "limit": 0, "documents": n, "tokens": tokens,
            "message": (f"phase {phase}: {n:,} code file(s) ({tokens:,} tokens) name no repository, so they are not "
                        f"repository-level data and are left out of it ({UNPLACED_GROUP} in excluded_groups; the pre-training "
                        "phases still take them): map the input's repository field with ingest.fields.repo=<field> "
                        "(and its path with ingest.fields.path=<field>), or give each record a meta.repo"),
        })
    for w in out:
        log.warning("mixture: %s", w["message"])
    return out


def aggregate(members: pd.DataFrame) -> pd.DataFrame:
    """Per (phase, group): documents, tokens, chars, units and Σ repeat × tokens, over rows with repeat > 0.

    Rows with repeat 0 are counted in ``zero_*`` so the manifest can list what was left out.
    """
    m = members.assign(
        pos=members["repeat"] > 0,
        rep_tokens=members["repeat"] * members["n_tokens"],
    )
    m = m.assign(
        tokens=np.where(m["pos"], m["n_tokens"], 0),
        chars=np.where(m["pos"], m["chars"], 0),
        documents=m["pos"].astype("int64"),
        zero_tokens=np.where(m["pos"], 0, m["n_tokens"]),
        zero_documents=(~m["pos"]).astype("int64"),
    )
    out = m.groupby(["phase", "group"], sort=True).agg(
        documents=("documents", "sum"), tokens=("tokens", "sum"), chars=("chars", "sum"),
        repeat_tokens=("rep_tokens", "sum"), zero_documents=("zero_documents", "sum"), zero_tokens=("zero_tokens", "sum"),
    ).reset_index()
    units = m[m["pos"]].groupby(["phase", "group"], sort=True)["unit"].nunique().rename("units")
    return out.merge(units.reset_index(), on=["phase", "group"], how="left").fillna({"units": 0}).astype({"units": "int64"})


def stable_hash(keys: Sequence[str]) -> np.ndarray:
    """uint64 hashes of strings, the same in every process (pandas' fixed-key SipHash)."""
    return pd.util.hash_array(np.asarray(list(keys), dtype=object), categorize=False)


def cap_scopes(specs: Sequence[PhaseSpec]) -> dict[str, str]:
    """phase → the scope its caps hold over: ``pretrain`` for every pre-training phase (their caps
    are shared), the phase itself otherwise."""
    return {s.name: "pretrain" if s.stage == "pretrain" else s.name for s in specs}


def assign_shards(members: pd.DataFrame, n_shards: Mapping[tuple[str, str], int], seed: int,
                  scopes: Mapping[str, str] | None = None) -> np.ndarray:
    """Shard number of each membership row: a hash of (seed, scope, group, unit) modulo the group's
    shard count. The scope (:func:`cap_scopes`) leaves the phase out for pre-training, so a group's
    documents share a shard in every pre-training phase and its copies can be kept within the cap
    they share (:mod:`curation.mixture.replay`)."""
    if members.empty:
        return np.zeros(0, dtype=np.int64)
    scopes = scopes or {}
    keys = [f"{seed}|{scopes.get(p, p)}|{g}|{u}" for p, g, u in zip(members["phase"], members["group"], members["unit"], strict=True)]
    h = stable_hash(keys)
    n = np.array([n_shards.get((p, g), 1) for p, g in zip(members["phase"], members["group"], strict=True)], dtype=np.uint64)
    return (h % n).astype(np.int64)


def shard_count(chars: int, target_chars: float) -> int:
    """Shards for a group of ``chars`` characters at ``target_chars`` each (at least 1)."""
    return max(1, int(np.ceil(chars / max(target_chars, 1.0))))


def order_key(seed: int, phase: str, doc_ids: Sequence[str]) -> np.ndarray:
    """The deterministic shuffle order within a shard: hash of (seed, phase, doc_id)."""
    return stable_hash([f"{seed}|{phase}|order|{d}" for d in doc_ids])
