"""The sample run's record (tests/golden.py): exact for everything but floats, which may move by a
model's last bits between CPUs and no further."""

from __future__ import annotations

import json

import pandas as pd

from tests.golden import compare, file_digest


def _digest(tmp_path, name: str, df: pd.DataFrame) -> str:
    path = tmp_path / f"{name}.parquet"
    df.to_parquet(path)
    return file_digest(path)


def test_floats_may_move_by_their_last_bits_and_nothing_else_may_change(tmp_path):
    base = pd.DataFrame({"doc_id": ["a", "b", "c"], "score": [0.25, 1.5, float("nan")],
                         "detail": ['{"similarity": 0.9512}', "{}", "not json {"]})
    record = {"docs/part-0.parquet": _digest(tmp_path, "base", base)}

    def differs(df: pd.DataFrame) -> list[str]:
        return compare(record, {"docs/part-0.parquet": _digest(tmp_path, "other", df)})

    assert not differs(base.assign(score=[0.25 + 3e-5, 1.5 - 1e-6, float("nan")]))
    assert not differs(base.assign(detail=['{"similarity": 0.95121}', "{}", "not json {"]))
    assert differs(base.assign(score=[0.25, 1.6, float("nan")]))  # a float that really moved
    assert differs(base.assign(score=[1.5, 0.25, float("nan")]))  # floats swapped between rows
    assert differs(base.assign(score=[0.25, 1.5, 0.0]))  # a NaN filled
    assert differs(base.assign(doc_id=["a", "b", "d"]))
    assert differs(base.assign(detail=['{"similarity": 0.9512, "kept": "x"}', "{}", "not json {"]))


def test_json_files_leave_out_sizes_and_checksums_of_parquet_files(tmp_path):
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"shards": [{"path": "p", "bytes": 10, "sha256": "00", "tokens": 5}]}))
    before = file_digest(path)
    path.write_text(json.dumps({"shards": [{"path": "p", "bytes": 12, "sha256": "ff", "tokens": 5}]}))
    assert compare({"m": before}, {"m": file_digest(path)}) == []
    path.write_text(json.dumps({"shards": [{"path": "p", "bytes": 12, "sha256": "ff", "tokens": 6}]}))
    assert compare({"m": before}, {"m": file_digest(path)}) == ["changed: m"]
