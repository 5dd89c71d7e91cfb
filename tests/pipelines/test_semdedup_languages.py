"""SemDeDup on pages the embedder was not trained for: with all-MiniLM-L6-v2 (English), real Chinese
reviews of unrelated things sit above the cosine bar, and emoji-only pages embed as one vector. Their
pairs count only when the pages share text, and pages of unknown tokens only are never pruned."""

import logging
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from curation.dedup.semantic import similarity_pass
from tests.helpers import assert_conservation, docs_frame, make_stage_dir, run_one

DATA = Path(os.environ.get("CURATION_SHARED_DATA") or Path(__file__).resolve().parents[2].parent / "shared" / "data")
REVIEWS = DATA / "zh" / "zh_reviews.jsonl.gz"
#: Pages whose every WordPiece token is [UNK] to all-MiniLM-L6-v2: one vector for all of them.
UNKNOWN = ["😀🎉🔥", "🐱🐶🐭🐹", "ሰላም ለሁሉም ሰው", "ශ්‍රී ලංකාව ලස්සනයි", "ពិភពលោក"]


def reviews(n: int) -> list[str]:
    df = pd.read_json(REVIEWS, lines=True, nrows=4000)
    text = df["text"].astype(str)
    return text[text.str.len().between(40, 300)].drop_duplicates().sample(n, random_state=7).tolist()


@pytest.fixture(scope="module")
def transformer_run(tmp_path_factory):
    """The recipe as shipped (--profile gpu: the transformer, the static model mixed in for English)
    on 250 real Chinese reviews, two of them with a copy, and pages of unknown tokens only."""
    if not REVIEWS.is_file():
        pytest.skip(f"needs real Chinese reviews in {REVIEWS} (CURATION_SHARED_DATA)")
    texts = reviews(250)
    rows = [{"doc_id": f"zh-{i}", "text": t, "source": "web", "lang": "zh"} for i, t in enumerate(texts)]
    rows += [{"doc_id": f"zh-{i}-copy", "text": texts[i] + "！", "source": "web", "lang": "zh"} for i in (0, 1)]
    rows += [{"doc_id": f"unk-{i}", "text": t, "source": "web", "lang": "und"} for i, t in enumerate(UNKNOWN)]
    root = tmp_path_factory.mktemp("languages")
    inp = make_stage_dir(root / "in", docs_frame(rows), nparts=2)
    run_one("semdedup", inp, root / "out", ["semdedup.model=all-MiniLM-L6-v2"])
    _, ledger = assert_conservation(inp, root / "out")
    return set(ledger["doc_id"])


def test_real_chinese_reviews_are_not_removed_as_copies_of_unrelated_reviews(transformer_run):
    strangers = {
        d for d in transformer_run if d.startswith("zh-") and d not in {"zh-0", "zh-1", "zh-0-copy", "zh-1-copy"}
    }
    assert not strangers, sorted(strangers)


def test_copies_in_a_language_the_embedder_was_not_trained_on_are_still_removed(transformer_run):
    for i in (0, 1):
        assert len({f"zh-{i}", f"zh-{i}-copy"} & transformer_run) == 1, transformer_run


def test_pages_of_unknown_tokens_only_are_never_pruned(transformer_run):
    assert not {d for d in transformer_run if d.startswith("unk-")}


def test_a_page_of_unknown_tokens_makes_no_other_page_go():
    from pipelines.stages.semdedup_check import NO_MATCH, TextCheck, checked_pass

    # row 1 (English, not cut) is at cosine 1.0 to row 0, a page of unknown tokens only: the pair is
    # checked from either side and never counts; rows 2 and 3 (English twins) stand on their cosine
    members = pd.DataFrame(
        {
            "doc_id": ["u", "e", "a", "b"],
            "_part": 0,
            "source": "web",
            "cluster": 0,
            "keep_key": [4.0, 3.0, 2.0, 1.0],
            "length": 10,
            "lang": ["und", "en", "en", "en"],
            "sketch": [NO_MATCH, b"", b"", b""],
            "cut": False,
        }
    )
    vecs = np.array([[1, 0], [1, 0], [0, 1], [0, 1]], dtype=np.float32)
    out = checked_pass(members, vecs, TextCheck(model_languages=("en",), other_eps=0.3), 1024).set_index("doc_id")
    assert out.loc[["u", "e"], "max_sim"].max() < 0.5 and out.loc[["a", "b"], "max_sim"].max() > 0.99
    plain = similarity_pass(members.drop(columns=["sketch", "cut"]), vecs).set_index("doc_id")
    assert plain.loc[["u", "e"], "max_sim"].max() > 0.99  # what the cosine alone says


def test_a_source_whose_documents_are_in_no_pruned_language_is_said_once_with_counts(tmp_path, caplog):
    rows = [
        {"doc_id": f"web-{i}", "text": f"A page about topic number {i} and its details.", "source": "web", "lang": "en"}
        for i in range(4)
    ]
    rows += [
        {"doc_id": f"code-{i}", "text": f"def f{i}(x):\n    return x + {i}\n", "source": "code", "lang": "und"}
        for i in range(3)
    ]
    inp = make_stage_dir(tmp_path / "in", docs_frame(rows))
    with caplog.at_level(logging.WARNING):
        run_one(
            "semdedup",
            inp,
            tmp_path / "out",
            [
                "semdedup.model=minilm-static-bi",
                "semdedup.static_model=minilm-static-bi",
                "semdedup.static_languages=[en,zh]",
                "semdedup.sources=[web,code]",
                "semdedup.prune_sources=[web,code]",
            ],
        )
    said = [r.getMessage() for r in caplog.records if "prune_sources" in r.getMessage()]
    assert len(said) == 1 and "code: 3 documents (lang und: 3)" in said[0] and "'web'" not in said[0], said
