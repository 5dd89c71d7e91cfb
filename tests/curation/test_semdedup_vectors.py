"""The vectors SemDeDup works on: the k-means sample, the static mix, decoding; the ε sweep totals."""

import numpy as np
import pandas as pd

from curation.dedup.semantic import fold_sweep, sweep_counts
from curation.dedup.vectors import decode_vectors, in_sample, mix_static


def test_the_sample_is_decided_per_document_whatever_the_partitioning():
    ids = [f"doc-{i}" for i in range(4000)]
    whole = in_sample(ids, 7, 0.3)
    split = np.concatenate([in_sample(ids[:1234], 7, 0.3), in_sample(ids[1234:], 7, 0.3)])
    np.testing.assert_array_equal(whole, split)
    assert 0.27 < whole.mean() < 0.33
    assert not np.array_equal(whole, in_sample(ids, 8, 0.3))  # the seed changes the sample
    assert in_sample(ids, 7, 1.0).all() and in_sample([], 7, 0.5).size == 0


def test_the_static_model_is_mixed_in_only_for_its_languages():
    main = np.array([[1.0, 0.0], [1.0, 0.0]], dtype=np.float32)
    static = np.array([[0.0, 1.0], [0.0, 1.0]], dtype=np.float32)
    vecs = mix_static(main, static, 0.4, np.array(["en", "zh"], dtype=object), ("en",))
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, rtol=1e-5)
    assert vecs[0, 2:].sum() > 0 and vecs[1, 2:].sum() == 0  # zh: the transformer alone
    assert mix_static(main, static, 0.4, np.array(["en", "zh"], dtype=object))[1, 2:].sum() > 0  # no list: all
    assert vecs.dtype == np.float32


def test_decode_vectors_round_trips_rows():
    rows = np.array([[0.5, -1.0, 2.0], [3.0, 0.0, 1.0]], dtype=np.float16)
    np.testing.assert_array_equal(decode_vectors([r.tobytes() for r in rows], np.float16), rows.astype(np.float32))
    assert decode_vectors([], np.float16).shape == (0, 1)


def test_sweep_totals_add_partitions_per_source():
    a = pd.DataFrame({"source": ["web", "web", "math_science"], "max_sim": [0.99, 0.5, 0.95]})
    b = pd.DataFrame({"source": ["web"], "max_sim": [0.97]})
    summary = fold_sweep(pd.concat([sweep_counts(a, [0.02, 0.1]), sweep_counts(b, [0.02, 0.1])]))
    assert summary["pruned"] == 4
    assert summary["by_source"]["web"] == {"documents": 3, "removed": {"0.02": 1, "0.1": 2}, "rate": {"0.02": 0.333333, "0.1": 0.666667}}
    assert summary["by_source"]["math_science"]["removed"] == {"0.02": 0, "0.1": 1}
    assert fold_sweep(sweep_counts(a.iloc[:0], [0.1])) == {"pruned": 0, "by_source": {}, "by_language": {}}
