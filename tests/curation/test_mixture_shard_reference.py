"""``build_shard`` pinned to the form it replaces (kept here as the reference): the same frame, packing
spans, FIM counts and text tokens, and the same Parquet bytes, on varied shards."""

from __future__ import annotations

import io
import random
from collections import Counter

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import curation.mixture.shards as shards_mod
from curation.mixture.fim import fim_many
from curation.mixture.groups import PROVENANCE_COLUMNS, REPO_GROUP, THREADS_GROUP
from curation.mixture.packing import best_fit_pack
from curation.mixture.phases import PhaseSpec
from curation.mixture.replay import CopyPlan, shard_copies
from curation.mixture.shards import (
    EOD_TOKENS,
    PACKING_SCHEMA,
    SHARD_SCHEMA,
    ShardOptions,
    build_shard,
    built_frame,
    documents_frame,
)
from curation.tokens import count_tokens


def reference_build_shard(rows, spec, group, plan, opts):
    frame = built_frame(rows, spec, group, opts) if group in (REPO_GROUP, THREADS_GROUP) else documents_frame(rows, group, opts.keep_meta)
    frame = frame.drop_duplicates("doc_id")
    text_unique_tokens = int(frame["n_tokens"].sum())
    frame = frame.assign(_o=shards_mod.order_key(opts.seed, spec.name, frame["doc_id"].tolist()))
    frame = frame.sort_values(["_o", "doc_id"], kind="stable").drop(columns="_o").reset_index(drop=True)
    copies = shard_copies(frame["doc_id"].tolist(), frame["n_tokens"].to_numpy(), plan, opts.seed)
    if opts.materialize_repeats:
        frame = frame.loc[np.repeat(frame.index.to_numpy(), copies)].reset_index(drop=True)
        frame["copies"] = np.int64(1)
    else:
        frame["copies"] = copies
    frame["_text_tokens"] = frame["n_tokens"]
    frame["copy"] = frame.groupby("doc_id", sort=False).cumcount().astype("int64")
    if opts.materialize_repeats:
        frame = frame.assign(_o=shards_mod.order_key(opts.seed, spec.name, [f"{d}#{c}" for d, c in zip(frame["doc_id"], frame["copy"], strict=True)]))
        frame = frame.sort_values(["_o", "doc_id", "copy"], kind="stable").drop(columns="_o").reset_index(drop=True)
    frame["fim"] = "none"
    fim_counts: dict[str, int] = {}
    if spec.fim:
        mask = frame["source"].isin(list(opts.fim_sources)).to_numpy()
        if mask.any():
            keys = [f"{spec.name}|{d}|{c}" for d, c in zip(frame.loc[mask, "doc_id"], frame.loc[mask, "copy"], strict=True)]
            texts, modes = fim_many(frame.loc[mask, "text"].tolist(), keys, seed=opts.seed, rate=opts.fim_rate,
                                    spm_rate=opts.fim_spm_rate, sentinels=opts.sentinels)
            frame.loc[mask, "text"] = pd.Series(texts, index=frame.index[mask], dtype=object)
            frame.loc[mask, "fim"] = pd.Series(modes, index=frame.index[mask], dtype=object)
            fim_counts = dict(sorted(Counter(modes).items()))
            cut = frame.index[mask][np.isin(modes, ("psm", "spm"))]
            if len(cut):
                frame.loc[cut, "n_tokens"] = count_tokens(frame.loc[cut, "text"].tolist(), opts.tokenizer)
    text_tokens = frame["_text_tokens"].to_numpy(dtype=np.int64)
    frame = frame[SHARD_SCHEMA.names]
    spans = None
    if spec.packing == "best_fit":
        rows_ = np.repeat(np.arange(len(frame)), frame["copies"].to_numpy())
        copy = frame["copy"].to_numpy()[rows_] + pd.Series(rows_).groupby(rows_).cumcount().to_numpy()
        p = best_fit_pack(frame["n_tokens"].to_numpy()[rows_] + EOD_TOKENS, spec.seq_length)
        s = p.spans
        at = s["doc"].to_numpy()
        spans = pd.DataFrame({
            "sequence": s["sequence"].to_numpy(), "position": s["position"].to_numpy(), "row": rows_[at],
            "doc_id": frame["doc_id"].to_numpy()[rows_[at]], "copy": copy[at],
            "offset": s["offset"].to_numpy(), "length": s["length"].to_numpy(),
        })
    return frame, spans, fim_counts, text_tokens, text_unique_tokens


def rows_of(n: int, seed: int, group: str, arrow: bool) -> pd.DataFrame:
    """Shard rows as they come back from the exchange (repeated doc ids included)."""
    rng = random.Random(seed)
    ids = [f"d{rng.randint(0, max(1, n - n // 4))}" for _ in range(n)]
    code = ["def f(x):\n    return x + 1\n", "int main() { return 0; }\n", "import os\nprint(os.sep)\n", "<|fim_prefix|> odd", ""]
    prose = ["A short page.", "中文 文本 和 more words here", "😀 emoji line\n", "x " * 50]
    source = [rng.choice(["code", "web", "code", "math_science"]) for _ in range(n)]
    text = [rng.choice(code) * rng.randint(1, 4) if s == "code" else rng.choice(prose) for s in source]
    df = pd.DataFrame({
        "doc_id": ids, "text": text, "source": source,
        "url": [rng.choice(["http://a", None]) for _ in range(n)],
        "repo": [rng.choice(["r1", "r2"]) for _ in range(n)],
        "path": [rng.choice(["a.py", "src/b.py", "README.md", "c.h", None]) for _ in range(n)],
        "language": [rng.choice(["Python", None]) for _ in range(n)], "lang": [rng.choice(["en", "zh", None]) for _ in range(n)],
        "n_tokens": [rng.randint(0, 300) for _ in range(n)],
        "meta": [rng.choice([None, '{"kind": "issue", "number": 3}']) for _ in range(n)],
        "quality_level": [rng.choice(["high", None]) for _ in range(n)], "edu_score": [rng.choice([1.5, float("nan")]) for _ in range(n)],
        "unit": [f"repo:{rng.choice(['r1', 'r2'])}" if group in (REPO_GROUP, THREADS_GROUP) else i for i in ids],
    })
    if group == THREADS_GROUP:
        df["source"] = "issues_prs_commits"
    if not arrow:
        for c in ("doc_id", "text", "source", "url", "repo", "path", "language", "lang", "quality_level", "unit"):
            df[c] = df[c].astype(object)
    assert set(df.columns) & set(PROVENANCE_COLUMNS)
    return df


def _parquet(frame: pd.DataFrame, schema: pa.Schema) -> bytes:
    buf = io.BytesIO()
    pq.write_table(pa.Table.from_pandas(frame, schema=schema, preserve_index=False), buf, compression="zstd")
    return buf.getvalue()


def _same(new, ref) -> None:
    (frame, spans, fim, text_tokens, unique), (rframe, rspans, rfim, rtext_tokens, runique) = new, ref
    assert unique == runique
    pd.testing.assert_frame_equal(frame, rframe)
    assert frame.dtypes.to_dict() == rframe.dtypes.to_dict()
    assert _parquet(frame, SHARD_SCHEMA) == _parquet(rframe, SHARD_SCHEMA)
    assert fim == rfim and text_tokens.dtype == rtext_tokens.dtype and text_tokens.tolist() == rtext_tokens.tolist()
    assert (spans is None) == (rspans is None)
    if spans is not None:
        pd.testing.assert_frame_equal(spans, rspans)
        assert _parquet(spans, PACKING_SCHEMA) == _parquet(rspans, PACKING_SCHEMA)


CASES = [
    ("web/high", PhaseSpec("p", tokens=100, mix={"web": 1.0, "code": 1.0}), CopyPlan((("p", 1.0),))),
    ("code/high", PhaseSpec("p", tokens=100, mix={"code": 1.0}, fim=True), CopyPlan((("p", 2.6),))),
    ("code/high", PhaseSpec("q", tokens=100, mix={"code": 1.0}, fim=True, packing="best_fit", seq_length=64), CopyPlan((("p", 1.5), ("q", 0.4)))),
    (REPO_GROUP, PhaseSpec("p", tokens=100, mix={"code": 1.0}, fim=True, max_doc_tokens=400), CopyPlan((("p", 1.0),))),
    (THREADS_GROUP, PhaseSpec("p", tokens=100, mix={"issues_prs_commits": 1.0}, packing="best_fit", seq_length=128), CopyPlan((("p", 3.0),))),
]


@pytest.mark.parametrize("materialize", [False, True])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_build_shard_matches_the_reference(case: int, materialize: bool) -> None:
    group, spec, plan = CASES[case]
    for seed, n, arrow in ((1, 0, True), (2, 1, False), (3, 7, True), (4, 60, False), (5, 200, True)):
        rows = rows_of(n, seed, group, arrow)
        if n:
            rows = rows.set_axis(np.arange(len(rows)) * 3 + 5)  # a group's rows keep the exchange's index
        opts = ShardOptions(seed=seed, fim_rate=0.7, materialize_repeats=materialize, keep_meta=seed % 2 == 0)
        _same(build_shard(rows, spec, group, plan, opts), reference_build_shard(rows, spec, group, plan, opts))


def test_equal_order_keys_fall_back_to_the_doc_id_tie_break(monkeypatch: pytest.MonkeyPatch) -> None:
    real = shards_mod.order_key
    monkeypatch.setattr(shards_mod, "order_key", lambda seed, phase, ids: real(seed, phase, ids) % np.uint64(3))
    for group, spec, plan in CASES:
        for materialize in (False, True):
            rows = rows_of(80, 9, group, True)
            opts = ShardOptions(seed=9, fim_rate=0.7, materialize_repeats=materialize)
            _same(build_shard(rows, spec, group, plan, opts), reference_build_shard(rows, spec, group, plan, opts))


def reference_documents_frame(rows: pd.DataFrame, group: str, keep_meta: bool = False) -> pd.DataFrame:
    return pd.DataFrame({
        "doc_id": rows["doc_id"].astype(object).to_numpy(),
        "text": rows["text"].astype(object).to_numpy(),
        "source": rows["source"].astype(object).to_numpy(),
        "group": group,
        "n_tokens": pd.to_numeric(rows["n_tokens"]).astype("int64").to_numpy(),
        "url": shards_mod._col(rows, "url"), "repo": shards_mod._col(rows, "repo"), "path": shards_mod._col(rows, "path"),
        "language": shards_mod._col(rows, "language"), "lang": shards_mod._col(rows, "lang"),
        "meta": shards_mod._col(rows, "meta") if keep_meta else None, "provenance": shards_mod.provenance(rows),
    })


def test_documents_frame_matches_the_reference() -> None:
    """String columns pass through where they already have the dtype building them from objects gives."""
    for seed, n, kind in ((1, 0, "str"), (2, 1, "object"), (3, 9, "str"), (4, 120, "object"), (5, 120, "str"), (6, 50, "string")):
        rows = rows_of(n, seed, "web/high", kind != "object")
        if kind == "string":  # pandas' other string dtype (missing as pd.NA): not passed through
            rows["text"] = rows["text"].astype("string[pyarrow]")
        if n > 3:
            rows.loc[rows.index[2], "text"] = None
        if kind == "str" and n == 9:  # every value missing
            rows["source"] = pd.Series([None] * n, dtype="str", index=rows.index)
            rows = rows.set_axis(np.arange(len(rows)) * 2 + 1)
        for keep_meta in (False, True):
            new, ref = documents_frame(rows, "web/high", keep_meta), reference_documents_frame(rows, "web/high", keep_meta)
            pd.testing.assert_frame_equal(new, ref)
            assert new.dtypes.to_dict() == ref.dtypes.to_dict()
            schema = pa.schema([f for f in SHARD_SCHEMA if f.name in new.columns])  # as build_shard writes them, reordered by a take
            back = np.arange(len(new))[::-1]
            assert _parquet(new.take(back)[schema.names], schema) == _parquet(ref.take(back)[schema.names], schema)


def test_documents_frame_of_a_text_column_in_chunks_writes_the_same_parquet() -> None:
    """A string column of several Arrow chunks is built from objects as before: the chunks of a
    column decide where a Parquet writer cuts its pages, so the bytes could differ."""
    rng = random.Random(3)
    texts = ["".join(rng.choice("abc de\n中") for _ in range(rng.randint(500, 6000))) for _ in range(900)]
    chunked = pa.chunked_array([pa.array(texts[:300], pa.large_string()), pa.array(texts[300:], pa.large_string())])
    rows = pd.DataFrame({"doc_id": [f"d{i}" for i in range(900)], "text": pd.array(chunked, dtype="str"), "source": "web",
                         "n_tokens": 1, "unit": [f"d{i}" for i in range(900)]})
    assert rows["text"].array.__arrow_array__().num_chunks == 2
    new, ref = documents_frame(rows, "web/high"), reference_documents_frame(rows, "web/high")
    pd.testing.assert_frame_equal(new, ref)
    schema = pa.schema([f for f in SHARD_SCHEMA if f.name in new.columns])
    assert _parquet(new[schema.names], schema) == _parquet(ref[schema.names], schema)
    spec, plan = PhaseSpec("p", tokens=1, mix={"web": 1.0}), CopyPlan((("p", 1.0),))
    _same(build_shard(rows, spec, "web/high", plan, ShardOptions(seed=2)), reference_build_shard(rows, spec, "web/high", plan, ShardOptions(seed=2)))
