"""The content of one shard: build (repository / thread documents), shuffle, FIM, repeats, packing.

Pure pandas: :func:`build_shard` gets the membership rows of one (phase, group, shard) and
returns the frame to write (columns :data:`SHARD_SCHEMA`), the packing spans (for best-fit
phases), FIM counts, and each row's tokens before FIM (the text's own tokens: a document's epochs and
caps are counted on them, the same in every phase, while ``n_tokens`` is what the trainer sees). Order inside a shard is a hash of (seed, phase, doc_id), so a shard's
content does not depend on how the input was partitioned.

>>> rows = pd.DataFrame({"doc_id": ["b", "a"], "text": ["x y", "z"], "source": "web", "n_tokens": [2, 1], "unit": ["b", "a"]})
>>> spec = PhaseSpec("p", mix={"web": 1.0})
>>> built = build_shard(rows, spec, "web/all", CopyPlan((("p", 1.0),)), ShardOptions(seed=1))
>>> sorted(built.frame["doc_id"]), built.spans is None, built.text_unique_tokens
(['a', 'b'], True, 3)
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections import Counter
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
import pyarrow as pa

from curation.mixture.doc_repeats import copies_by_repeat
from curation.mixture.fim import FimSentinels, fim_many
from curation.mixture.groups import PROVENANCE_COLUMNS, REPO_GROUP, THREADS_GROUP, order_key
from curation.mixture.packing import best_fit_pack
from curation.mixture.phases import PhaseSpec
from curation.mixture.replay import CopyPlan
from curation.mixture.repo_concat import BuiltDoc, RepoHeaders, concat_repo
from curation.mixture.repo_threads import concat_threads
from curation.tokens import count_tokens

#: Tokens a trainer adds after every document (its end-of-document token); packing reserves them.
EOD_TOKENS = 1

SHARD_SCHEMA = pa.schema([
    ("doc_id", pa.string()), ("copy", pa.int64()), ("text", pa.string()), ("source", pa.string()),
    ("group", pa.string()), ("n_tokens", pa.int64()), ("url", pa.string()), ("repo", pa.string()),
    ("path", pa.string()), ("language", pa.string()), ("lang", pa.string()), ("fim", pa.string()), ("meta", pa.string()),
    ("provenance", pa.string()), ("copies", pa.int64()),
])
PACKING_SCHEMA = pa.schema([
    ("sequence", pa.int64()), ("position", pa.int64()), ("row", pa.int64()), ("doc_id", pa.string()),
    ("copy", pa.int64()), ("offset", pa.int64()), ("length", pa.int64()),
])


class BuiltShard(NamedTuple):
    """What :func:`build_shard` returns for one shard."""

    frame: pd.DataFrame  #: the rows to write (:data:`SHARD_SCHEMA`)
    spans: pd.DataFrame | None  #: packing spans (:data:`PACKING_SCHEMA`) of a best-fit phase, else None
    fim: dict[str, int]  #: FIM mode counts
    text_tokens: np.ndarray  #: each row's tokens before FIM (the text's own tokens)
    #: the text's own tokens of every document of the shard once, shown or not: materialized copies
    #: leave out a document its fractional epoch does not show, yet its epochs count over all of them
    text_unique_tokens: int


@dataclasses.dataclass(frozen=True)
class ShardOptions:
    seed: int = 1234
    fim_rate: float = 0.5
    fim_spm_rate: float = 0.5
    fim_sources: tuple[str, ...] = ("code",)
    sentinels: FimSentinels = FimSentinels()
    headers: RepoHeaders = RepoHeaders()
    tokenizer: str = "qwen"
    materialize_repeats: bool = False
    keep_meta: bool = False


def _col(df: pd.DataFrame, name: str) -> list[Any]:
    if name not in df.columns:
        return [None] * len(df)
    return [v if isinstance(v, str) else None for v in df[name].astype(object).tolist()]


#: ``json.dumps(..., sort_keys=True, ensure_ascii=False, default=str)`` as one reusable encoder
_PROVENANCE_JSON = json.JSONEncoder(sort_keys=True, ensure_ascii=False, default=str)


def provenance(df: pd.DataFrame) -> list[str]:
    """JSON of the earlier stages' columns per row (only those present and not null).

    Built column by column: each present value as its ``"key": value`` member (keys sorted, as
    ``sort_keys`` orders them), a row's members joined as ``json.dumps`` joins them.

    >>> provenance(pd.DataFrame({"quality_level": ["high", None], "edu_score": [2.5, float("nan")]}))
    ['{"edu_score": 2.5, "quality_level": "high"}', '{}']
    """
    cols = sorted(c for c in PROVENANCE_COLUMNS if c in df.columns)
    members = [_column_members(c, df[c]) for c in cols]
    return ["{" + ", ".join(m for m in row if m is not None) + "}" for row in zip(*members, strict=True)] if cols else ["{}"] * len(df)


def _column_members(key: str, values: pd.Series) -> list[str | None]:
    """:func:`_members` of a column. A column whose equal values encode alike (strings, booleans,
    integers: its dtype holds one type) encodes each distinct value once; a float64 column writes
    its finite values' ``repr`` without a test per value. Other columns (object, where ``1``,
    ``1.0`` and ``True`` are equal but encode apart; other floats) go value by value."""
    dtype = values.dtype
    if dtype == np.float64 and len(values):
        arr = values.to_numpy()
        finite = np.isfinite(arr)
        head = _PROVENANCE_JSON.encode(key) + ": "
        if finite.all():
            return [head + r for r in map(float.__repr__, arr.tolist())]
        if (finite | np.isnan(arr)).all():  # finite or missing
            return [head + float.__repr__(v) if ok else None for v, ok in zip(arr.tolist(), finite.tolist(), strict=True)]
        return _members(key, values.astype(object).tolist())
    if isinstance(dtype, (pd.StringDtype, pd.BooleanDtype)) or pd.api.types.is_integer_dtype(dtype):
        codes, uniques = pd.factorize(values, use_na_sentinel=True)
        table = _members(key, pd.Series(uniques).astype(object).tolist())
        table.append(None)  # code -1: missing
        return [table[c] for c in codes.tolist()]
    return _members(key, values.astype(object).tolist())


def _members(key: str, values: list[Any]) -> list[str | None]:
    encode = _PROVENANCE_JSON.encode
    head = encode(key) + ": "
    cache: dict[Any, str] = {}  # repeated labels (levels, tiers, languages) are encoded once
    out: list[str | None] = []
    for v in values:
        if v is None or v is pd.NA or v is pd.NaT or (isinstance(v, float) and np.isnan(v)):
            out.append(None)
            continue
        v = v.item() if isinstance(v, np.generic) else v
        kind = type(v)
        if kind is float and math.isfinite(v):
            out.append(head + float.__repr__(v))  # how json writes a finite float
        elif kind is int:
            out.append(head + int.__repr__(v))
        elif kind is str:
            text = cache.get(v)
            if text is None:
                text = cache[v] = head + encode(v)
            out.append(text)
        else:
            out.append(head + encode(v))
    return out


#: The dtype pandas gives a column of strings (and missing values) built from Python objects.
_STR = pd.Series(["x"]).dtype


def _strings(values: pd.Series) -> Any:
    """``values`` as a column of the frame that :func:`documents_frame` builds: the column's own
    array where it already has the dtype that building it from Python objects infers (the texts
    are not made Python strings and back), otherwise those objects."""
    if values.dtype == _STR and values.notna().any():  # (all missing, the objects would give an object column)
        array = values.array
        if array.__arrow_array__().num_chunks == 1:  # as one built from objects (chunks shape a Parquet file's pages)
            return array
    return values.astype(object).to_numpy()


def documents_frame(rows: pd.DataFrame, group: str, keep_meta: bool = False) -> pd.DataFrame:
    """Rows as shard documents, unchanged."""
    return pd.DataFrame({
        "doc_id": _strings(rows["doc_id"]),
        "text": _strings(rows["text"]),
        "source": _strings(rows["source"]),
        "group": group,
        "n_tokens": pd.to_numeric(rows["n_tokens"]).astype("int64").to_numpy(),
        "url": _col(rows, "url"), "repo": _col(rows, "repo"), "path": _col(rows, "path"),
        "language": _col(rows, "language"), "lang": _col(rows, "lang"), "meta": _col(rows, "meta") if keep_meta else None,
        "provenance": provenance(rows),
    })


def doc_limit(spec: PhaseSpec) -> int:
    """Tokens a built document may take: ``max_doc_tokens``, less than ``seq_length`` by its EOD (a
    document of ``seq_length`` tokens would be cut by packing, its EOD left alone in another sequence)."""
    return max(1, min(spec.max_doc_tokens, spec.seq_length - EOD_TOKENS))


def built_frame(rows: pd.DataFrame, spec: PhaseSpec, group: str, opts: ShardOptions) -> pd.DataFrame:
    """Repository documents (code) or thread contexts (issues/PRs/commits), one or more per unit."""
    def count(texts: list[str]) -> np.ndarray:
        return count_tokens(texts, opts.tokenizer)

    built: list[tuple[BuiltDoc, str]] = []
    limit = doc_limit(spec)
    rows = rows.assign(_path=[p or "" for p in _col(rows, "path")])  # no made-up path: an empty file header
    for unit, g in rows.sort_values(["unit", "_path", "doc_id"], kind="stable").groupby("unit", sort=True):
        repo = str(unit).split(":", 1)[1]
        if group == REPO_GROUP:
            docs = concat_repo(
                repo, g["_path"].tolist(), g["text"].tolist(), g["n_tokens"].tolist(), g["doc_id"].tolist(),
                max_tokens=limit, count=count, headers=opts.headers,
            )
            built += [(d, "code") for d in docs]
        else:  # a record without a repository (unit doc:<id>) is a context of its own, with no made-up header
            alone = str(unit).startswith("doc:")
            docs = concat_threads(
                repo, g["text"].tolist(), _col(g, "meta"), g["n_tokens"].tolist(), g["doc_id"].tolist(),
                max_tokens=limit, count=count, header="" if alone else opts.headers.repo,
            )
            built += [(dataclasses.replace(d, repo=None) if alone else d, "issues_prs_commits") for d in docs]
    return pd.DataFrame({
        "doc_id": [d.doc_id for d, _ in built],
        "text": [d.text for d, _ in built],
        "source": [s for _, s in built],
        "group": group,
        "n_tokens": np.array([d.n_tokens for d, _ in built], dtype=np.int64),
        "url": None, "repo": [d.repo for d, _ in built], "path": None, "language": None, "lang": None, "meta": None,
        "provenance": [json.dumps({"builder": spec.builder, "members": d.members}) for d, _ in built],
    })


def _first_in_order(frame: pd.DataFrame, seed: int, phase: str) -> tuple[pd.DataFrame, list[Any]]:
    """Each document's first row, ordered by (:func:`order_key`, ``doc_id``), with a fresh index;
    and its doc ids. One ``take`` of the rows: the order key decides alone unless two keys are
    equal, where the ``doc_id`` tie-break goes through pandas' sort."""
    ids = frame["doc_id"]
    first = np.flatnonzero(~ids.duplicated(keep="first").to_numpy())
    doc_ids = ids.to_numpy(dtype=object)[first].tolist()
    o = order_key(seed, phase, doc_ids)
    order = np.argsort(o, kind="stable")
    sorted_o = o[order]
    if len(sorted_o) > 1 and bool((sorted_o[1:] == sorted_o[:-1]).any()):
        keys = pd.DataFrame({"_o": o, "doc_id": ids.iloc[first].array})
        order = keys.sort_values(["_o", "doc_id"], kind="stable").index.to_numpy()
    return frame.take(first[order]).reset_index(drop=True), [doc_ids[i] for i in order.tolist()]


def build_shard(rows: pd.DataFrame, spec: PhaseSpec, group: str, plan: CopyPlan, opts: ShardOptions) -> BuiltShard:
    """The :class:`BuiltShard` of one shard's membership rows."""
    built = group in (REPO_GROUP, THREADS_GROUP)
    frame = built_frame(rows, spec, group, opts) if built else documents_frame(rows, group, opts.keep_meta)
    if not built and "repeat" in rows.columns:  # each document's repeat factor (language_repeat)
        frame["_repeat"] = pd.to_numeric(rows["repeat"]).to_numpy(dtype=np.float64)
    frame, doc_ids = _first_in_order(frame, opts.seed, spec.name)
    # copies: how many times the phase's plan shows each document, in proportion to its repeat factor
    # within its group (curation.mixture.replay, curation.mixture.doc_repeats)
    repeats = frame["_repeat"].to_numpy() if "_repeat" in frame.columns else None
    copies = copies_by_repeat(doc_ids, frame["n_tokens"].to_numpy(), repeats, plan, opts.seed)
    text_unique_tokens = int(frame["n_tokens"].sum())
    if opts.materialize_repeats:
        frame = frame.loc[np.repeat(frame.index.to_numpy(), copies)].reset_index(drop=True)
        frame["copies"] = np.int64(1)  # every written row is one of them
        frame["copy"] = frame.groupby("doc_id", sort=False).cumcount().astype("int64")
    else:
        frame["copies"] = copies
        frame["copy"] = np.zeros(len(frame), dtype=np.int64)  # one row per document
    frame["_text_tokens"] = frame["n_tokens"]  # before FIM's sentinels
    if opts.materialize_repeats:
        frame = frame.assign(_o=order_key(opts.seed, spec.name, [f"{d}#{c}" for d, c in zip(frame["doc_id"], frame["copy"], strict=True)]))
        frame = frame.sort_values(["_o", "doc_id", "copy"], kind="stable").drop(columns="_o").reset_index(drop=True)
    frame["fim"] = "none"
    fim_counts: dict[str, int] = {}
    if spec.fim:
        mask = frame["source"].isin(list(opts.fim_sources)).to_numpy()
        if mask.any():
            at = np.flatnonzero(mask)
            ids, copy = frame["doc_id"].to_numpy(dtype=object)[at].tolist(), frame["copy"].to_numpy()[at].tolist()
            keys = [f"{spec.name}|{d}|{c}" for d, c in zip(ids, copy, strict=True)]
            texts, modes = fim_many(
                frame["text"].to_numpy(dtype=object)[at].tolist(), keys, seed=opts.seed, rate=opts.fim_rate,
                spm_rate=opts.fim_spm_rate, sentinels=opts.sentinels,
            )
            frame.loc[mask, "text"] = pd.Series(texts, index=frame.index[mask], dtype=object)
            frame.loc[mask, "fim"] = pd.Series(modes, index=frame.index[mask], dtype=object)
            fim_counts = dict(sorted(Counter(modes).items()))
            # n_tokens is what the trainer sees: a FIM'd text carries three sentinels, and its
            # two cuts can split tokens the whole text merged (count them again, once)
            split = np.isin(modes, ("psm", "spm"))
            cut = frame.index[mask][split]
            if len(cut):  # the texts just written into the frame
                frame.loc[cut, "n_tokens"] = count_tokens([t for t, s in zip(texts, split.tolist(), strict=True) if s], opts.tokenizer)
    text_tokens = frame["_text_tokens"].to_numpy(dtype=np.int64)
    frame = frame[SHARD_SCHEMA.names]
    spans = None
    if spec.packing == "best_fit":
        # every copy the plan asks for is packed (a repeated long document fills as many sequences)
        rows = np.repeat(np.arange(len(frame)), frame["copies"].to_numpy())
        copy = frame["copy"].to_numpy()[rows] + pd.Series(rows).groupby(rows).cumcount().to_numpy()
        # a document takes its tokens and its end-of-document token (EOD) in a sequence
        p = best_fit_pack(frame["n_tokens"].to_numpy()[rows] + EOD_TOKENS, spec.seq_length)
        s = p.spans
        at = s["doc"].to_numpy()
        spans = pd.DataFrame({
            "sequence": s["sequence"].to_numpy(), "position": s["position"].to_numpy(), "row": rows[at],
            "doc_id": frame["doc_id"].to_numpy()[rows[at]], "copy": copy[at],
            "offset": s["offset"].to_numpy(), "length": s["length"].to_numpy(),
        })
    return BuiltShard(frame, spans, fim_counts, text_tokens, text_unique_tokens)
