"""The mixture's shard-writing and manifest helpers pinned to the forms they replace (kept here as references)."""

from __future__ import annotations

import json
import random

import numpy as np
import pandas as pd

from curation.mixture.manifest import group_entries
from curation.mixture.phases import PhaseSpec
from curation.mixture.plan import GroupStat, plan_phases
from curation.mixture.shards import provenance
from pipelines.stages.mixture_write import RECORD_META, records_frame
from tests.curation.test_mixture_reference import reference_provenance


def reference_records_frame(records: list[dict]) -> pd.DataFrame:
    if not records:
        return RECORD_META.copy()
    return pd.DataFrame(records).astype(RECORD_META.dtypes.to_dict())


def reference_group_entries_shards(records: pd.DataFrame, group: str) -> tuple[list[dict], list[dict]]:
    g = records[records["group"] == group]
    shards = [
        {"path": r.path, "bytes": int(r.bytes), "sha256": r.sha256, "documents": int(r.documents), "tokens": int(r.tokens),
         "unique_documents": int(r.unique_documents), "unique_tokens": int(r.unique_tokens),
         "replay_documents": int(r.replay_documents), "replay_tokens": int(r.replay_tokens)}
        for r in g.itertuples(index=False)
    ]
    files = [
        {"path": r.packing_path, "bytes": int(r.packing_bytes), "sha256": r.packing_sha256, "sequences": int(r.sequences),
         "tokens": int(r.packing_tokens), "min_sequences": int(r.min_sequences)}
        for r in g.itertuples(index=False) if isinstance(r.packing_path, str) and r.packing_path
    ]
    return shards, files


def records(n: int, seed: int, packed: float) -> list[dict]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        rec = {c: rng.randint(0, 10**9) for c, t in RECORD_META.dtypes.items() if t.kind == "i"}
        rec.update({"phase": rng.choice(["p", "q"]), "group": rng.choice(["web/high", "code/high", "math/all"]), "shard": i,
                    "path": f"shards/x/part-{i:05d}.parquet", "sha256": f"{rng.getrandbits(64):016x}",
                    "fim": json.dumps({"psm": rng.randint(0, 3)} if rng.random() < 0.5 else {}),
                    "packing_path": None, "packing_sha256": None})
        if rng.random() < packed:
            rec.update({"packing_path": f"packing/x/part-{i:05d}.parquet", "packing_sha256": "ab" * 32})
        out.append({c: rec[c] for c in RECORD_META.columns})
    return out


def _none_for_nan(df: pd.DataFrame) -> pd.DataFrame:
    return df.astype(object).where(df.notna(), None)


def test_records_frame_matches_the_astype_form():
    """Same columns, dtypes and values; a missing packing path is ``None`` in every record (the
    ``astype`` form turned it into NaN where some shards of the partition are packed: both read as
    missing to :func:`group_entries`)."""
    for n, seed, packed in ((0, 1, 0.0), (1, 2, 1.0), (5, 3, 0.0), (26, 4, 0.5), (40, 5, 1.0)):
        recs = records(n, seed, packed)
        new, ref = records_frame(recs), reference_records_frame(recs)
        assert list(new.columns) == list(ref.columns) and new.dtypes.to_dict() == ref.dtypes.to_dict()
        pd.testing.assert_frame_equal(_none_for_nan(new), _none_for_nan(ref))
        assert all(v is None or isinstance(v, str) for v in new["packing_path"])


def test_group_entries_matches_the_itertuples_form():
    spec = PhaseSpec("p", tokens=100, mix={"web": 1.0, "code": 1.0, "math": 1.0}, seq_length=10, packing="best_fit")
    stats = {"p": {"web/high": GroupStat(30, 1.0, 3), "code/high": GroupStat(20, 1.0, 2), "math/all": GroupStat(10, 1.0, 1)}}
    plan = plan_phases([spec], stats, {"*": 4.0}, scale=1.0)["p"]
    for seed, packed in ((1, 0.0), (2, 0.5), (3, 1.0)):
        for frame in (reference_records_frame(records(30, seed, packed)), records_frame(records(30, seed, packed)),
                      pd.DataFrame(records(30, seed, packed))):
            entries, _ = group_entries(spec, plan, frame)
            for entry in entries:
                shards, files = reference_group_entries_shards(frame, entry["name"])
                assert entry["shards"] == shards
                assert (entry["packing"] or {}).get("files", []) == files


def test_provenance_of_typed_columns_matches_json_dumps_per_row():
    """The per-column fast paths (distinct values of string, boolean and integer columns; float64
    columns that are finite or missing) against ``json.dumps`` per row."""
    rng = random.Random(7)
    n = 400
    floats = [rng.choice([rng.random() * 10, -0.0, 0.0, 1e-300, 1e21, 3.0, float("nan")]) for _ in range(n)]
    df = pd.DataFrame({
        "quality_level": pd.array([rng.choice(["high", "low", "ü\"\\", "中", None]) for _ in range(n)], dtype="str"),
        "quality_bucket": pd.array([rng.choice([0, 3, -1, 2**40, None]) for _ in range(n)], dtype="Int64"),
        "code_tier": pd.array([rng.choice(["a", "b", None]) for _ in range(n)], dtype="string[pyarrow]"),
        "code_web_recall": pd.array([rng.choice([True, False, None]) for _ in range(n)], dtype="boolean"),
        "code_web_score": floats,
        "edu_score": [rng.choice([rng.random(), float("nan")]) for _ in range(n)],
        "edu_band": pd.array([rng.choice(["x", None]) for _ in range(n)], dtype="string[python]"),
        "edu_rich": [rng.choice([True, False]) for _ in range(n)],
        "lang": pd.Series([rng.choice([1, 1.0, True, "1", None, np.int64(1)]) for _ in range(n)], dtype=object),
        "lang_score": np.array([rng.random() for _ in range(n)], dtype=np.float32),
        "minhash_cluster": np.array([rng.randint(-5, 5) for _ in range(n)], dtype=np.int8),
        "semdedup_cluster": [rng.choice([1.5, float("inf"), -float("inf"), float("nan")]) for _ in range(n)],
    })
    for rows in (df, df.iloc[:1], df.iloc[:0], df.iloc[::7], df.sample(frac=1.0, random_state=1)):
        assert provenance(rows) == reference_provenance(rows)
    for col in df.columns:
        assert provenance(df[[col]]) == reference_provenance(df[[col]])
    one = pd.DataFrame({"edu_score": [float("nan")] * 3, "lang": pd.array([None] * 3, dtype="str")})
    assert provenance(one) == reference_provenance(one) == ["{}"] * 3
