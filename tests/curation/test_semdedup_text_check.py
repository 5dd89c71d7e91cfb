"""The text check of SemDeDup pairs and the per-language ε (curation.dedup.semantic, vectors)."""

import numpy as np
import pandas as pd

from curation.dedup.semantic import check_bars, decide, language_eps, max_similarity_to_earlier, similarity_pass
from curation.dedup.vectors import SKETCH_PERM, bigram_sketch, sketch_jaccard

REVIEW = "酒店位置很好，离地铁站只有五分钟，房间干净整洁，前台服务热情，早餐品种丰富，下次出差还会再来。"
TWIN = REVIEW.replace("五分钟", "八分钟").replace("下次", "以后")
OTHER = "房间有点小，隔音不好，晚上能听到走廊的声音，早餐一般，服务员态度还可以，性价比不高。"


def bigrams(t):
    return {t[i : i + 2] for i in range(len(t) - 1)}


def test_the_sketch_estimates_the_jaccard_of_character_bigrams():
    for a, b in ((REVIEW, TWIN), (REVIEW, OTHER)):
        exact = len(bigrams(a) & bigrams(b)) / len(bigrams(a) | bigrams(b))
        assert abs(float(sketch_jaccard(bigram_sketch(a), bigram_sketch(b))) - exact) < 0.15
    assert bigram_sketch(REVIEW).shape == (SKETCH_PERM,) and bigram_sketch(REVIEW).dtype == np.uint32
    # numbers are masked (template pages differ in them), whitespace runs folded
    assert float(sketch_jaccard(bigram_sketch("价格 59 元  包邮"), bigram_sketch("价格 1299 元 包邮"))) == 1.0
    assert float(sketch_jaccard(bigram_sketch(REVIEW), bigram_sketch(TWIN))) > 0.6 > float(
        sketch_jaccard(bigram_sketch(REVIEW), bigram_sketch(OTHER)))


def test_a_pair_above_the_bar_counts_only_when_the_texts_overlap():
    vecs = np.array([[1.0, 0.0], [0.995, 0.0998], [0.99, 0.141]], dtype=np.float32)  # all within cosine 0.98
    sketches = np.stack([bigram_sketch(t) for t in (REVIEW, OTHER, TWIN)])
    plain, _ = max_similarity_to_earlier(vecs)
    bars = np.full(3, 0.9)
    best, near = max_similarity_to_earlier(vecs, bars=bars, sketches=sketches, min_jaccard=0.6)
    assert (plain[1:] > 0.9).all()
    assert best[1] == -1.0 and near[1] == -1  # OTHER: close in cosine, no shared text, and nothing below the bar
    assert near[2] == 0 and best[2] > 0.9  # TWIN is confirmed against REVIEW (not OTHER, which is closer in cosine)
    assert float(vecs[2] @ vecs[1]) > float(vecs[2] @ vecs[0])
    # a row without a bar (NaN: a language not checked) is unchanged
    best_nan, near_nan = max_similarity_to_earlier(vecs, bars=np.full(3, np.nan), sketches=sketches, min_jaccard=0.6)
    np.testing.assert_array_equal(best_nan, plain)
    # pairs at or below the bar keep their cosine
    low, _ = max_similarity_to_earlier(vecs, bars=np.full(3, 0.9995), sketches=sketches, min_jaccard=0.6)
    np.testing.assert_array_equal(low, plain)


def test_the_eps_of_a_language_decides_its_rows_and_is_recorded():
    sims = pd.DataFrame({"doc_id": ["a", "b", "c", "d"], "_part": 0, "source": "web", "cluster": 0, "rank": [0, 1, 0, 1],
                         "max_sim": np.array([-1.0, 0.9, -1.0, 0.9], np.float32), "nearest": [None, "a", None, "c"],
                         "lang": ["en", "en", "zh", "zh"]})
    assert decide(sims, 0.05).empty
    out = decide(sims, 0.05, {"zh": 0.12})
    assert out["doc_id"].tolist() == ["d"] and '"eps": 0.12' in out["drop_detail"].iloc[0]
    assert language_eps(np.array(["zh", "en"], dtype=object), 0.05, {"zh": 0.12}).tolist() == [0.12, 0.05]
    bars = check_bars(np.array(["en", "zh"], dtype=object), ["zh"], 0.05, {"zh": 0.12})
    assert np.isnan(bars[0]) and abs(bars[1] - 0.88) < 1e-12


def test_the_similarity_pass_carries_the_language_and_applies_the_check():
    m = pd.DataFrame({"doc_id": ["r", "o", "t"], "_part": 0, "source": "web", "cluster": 0, "keep_key": [0.0, 1.0, 2.0],
                      "lang": "zh"})
    vecs = np.array([[1.0, 0.0], [0.995, 0.0998], [0.99, 0.141]], dtype=np.float32)
    sketches = np.stack([bigram_sketch(t) for t in (REVIEW, OTHER, TWIN)])
    sims = similarity_pass(m, vecs, bars=np.full(3, 0.88), sketches=sketches, min_jaccard=0.6)
    assert sims["lang"].tolist() == ["zh"] * 3
    assert decide(sims, 0.12)["doc_id"].tolist() == ["t"]
    assert set(decide(similarity_pass(m, vecs), 0.12)["doc_id"]) == {"o", "t"}  # without the check
