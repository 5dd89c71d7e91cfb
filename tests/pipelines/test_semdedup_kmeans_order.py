"""SemDeDup's k-means does not depend on the order of the input files: faiss seeds its centroids by
row index, so the training sample is ordered by a seeded hash of each document's id."""

import gzip
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.helpers import docs_frame, make_stage_dir, run_one

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data" / "web" / "web.jsonl.gz"


def centroids(root: Path) -> np.ndarray:
    (found,) = sorted((root / ".cache" / "semdedup").glob("centroids-*/centroids.npy"))
    return np.load(found, allow_pickle=False)


def test_centroids_and_clusters_do_not_depend_on_input_order(tmp_path):
    if not SAMPLE.exists():
        pytest.skip(f"no sample data in {SAMPLE}")
    with gzip.open(SAMPLE, "rt") as f:
        rows = [json.loads(line) for line in f][:120]
    frame = docs_frame(
        [{"doc_id": f"p-{i}", "text": r["text"], "source": "web", "lang": "en"} for i, r in enumerate(rows)]
    )
    labels, cents = [], []
    for name, df in (("forward", frame), ("reversed", frame.iloc[::-1].reset_index(drop=True))):
        root = tmp_path / name  # each order its own cache: nothing is reused between them
        inp = make_stage_dir(root / "in", df, nparts=3)
        run_one(
            "semdedup", inp, root / "out", ["semdedup.model=minilm-static", "semdedup.k=4", "semdedup.kmeans_iter=5"]
        )
        out = pd.concat([pd.read_parquet(p) for p in sorted((root / "out" / "docs").glob("*.parquet"))])
        labels.append(out.set_index("doc_id")["semdedup_cluster"].sort_index())
        cents.append(centroids(root))
    np.testing.assert_array_equal(cents[0], cents[1])
    pd.testing.assert_series_equal(labels[0], labels[1])
