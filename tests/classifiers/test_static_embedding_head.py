"""The static embedder tokenises each text in pieces up to its window (ASCII pieces lower-cased
without the normaliser): pinned to tokenising the whole prepared text with the full tokenizer."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import numpy as np
import pytest

from classifiers.embedding import prepare_texts
from classifiers.static_embedding import StaticEmbedder

MODELS = Path(__file__).resolve().parents[2] / "classifiers" / "models"
SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"


def reference_ids(emb: StaticEmbedder, prepared: list[str]) -> list[np.ndarray]:
    """Every prepared text tokenised whole, truncated to the window."""
    encs = emb.tokenizer.encode_batch(prepared, add_special_tokens=False)
    return [np.asarray(e.ids, dtype=np.int64) for e in encs]


def edge_texts() -> list[str]:
    rng = random.Random(7)
    words = [
        "naïve",
        "café",
        "e\u0301t\u00e9",
        "東京大学",
        "🙂🚀",
        "[CLS]",
        "[MASK]x",
        "don't",
        "x" * 120,
        "3.14159",
        "ÅNGSTRÖM",
        "İstanbul",
        "ΣΊΣΥΦΟΣ",
        "\u200b",
        "\t",
        "tab\tbed",
        "a\u0301\u0302",
        "\u0301",
        "ﬁne",
        "①②",
    ]
    texts = ["", " ", "\n", "word", "東" * 5000, "🙂" * 4000, "a" * 5000, ("x" * 99 + " ") * 80, "no-spaces-" * 600]
    for _ in range(60):
        n = rng.choice([5, 50, 300, 900, 2000])
        seps = [" ", "\n", "  ", " \u0301", "\r\n", ""]
        texts.append("".join(rng.choice(words) + rng.choice(seps) for _ in range(n)))
    # ASCII: every character (controls the normaliser deletes or maps to a space), upper case, runs
    # of spaces and newlines around the piece limits, words of a letter each (many tokens per char).
    ascii_chars = [chr(c) for c in range(128)]
    for _ in range(40):
        n = rng.choice([10, 200, 700, 1500, 3000])
        texts.append("".join(rng.choice(ascii_chars) for _ in range(n)))
        texts.append("".join(rng.choice(["A", "b ", "Word ", "\n", " ", "x\x0by", "\x1c", "\x7f", "\r\n", "a.b", "[MASK]", "[mask] ", "[Sep]", "[UNK]x"]) for _ in range(n)))
    texts.append(" ".join("ab" for _ in range(3000)))
    texts.append("\n" * 2000 + "tail words here")
    return texts


def sample_texts() -> list[str]:
    out = []
    for path in sorted(SAMPLE.glob("*/*.jsonl.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as f:
            out += [json.loads(line).get("text") or "" for _, line in zip(range(60), f, strict=False)]
    return out


@pytest.mark.parametrize("model", ["minilm_static", "minilm_static_bi"])
@pytest.mark.parametrize(("seq", "mask"), [(256, False), (256, True), (16, False), (512, True)])
def test_head_tokens_equal_whole_text_tokens(model: str, seq: int, mask: bool) -> None:
    emb = StaticEmbedder(MODELS / model, max_seq_length=seq, mask_digits=mask, batch_size=64)
    prepared = prepare_texts(edge_texts() + sample_texts(), seq, mask)
    got, want = emb._ids(prepared), reference_ids(emb, prepared)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.tolist() == w.tolist()


def test_pieces_tokenised_plain_and_full() -> None:
    emb = StaticEmbedder(MODELS / "minilm_static_bi", max_seq_length=64, batch_size=64)
    assert emb.plain is not None and emb.plain.normalizer is None
    pieces = ["Hello World", "a [MASK] b", "caf\u00e9 OK", "a\x0bb", "TAB\there\r\nX", ""]
    want = [e.ids for e in emb.tokenizer.encode_batch(pieces, add_special_tokens=False)]
    assert emb._encode(pieces) == want


def test_pieces_of_every_character_match_the_normaliser() -> None:
    """Every BMP character (and some beyond), among letters, marks, spaces and Han: pieces the
    embedder normalises itself tokenise as the full tokenizer does."""
    emb = StaticEmbedder(MODELS / "minilm_static_bi", max_seq_length=512, batch_size=64)
    rng = random.Random(11)
    chars = [chr(c) for c in range(128, 0x10000) if not 0xD800 <= c < 0xE000] + [chr(c) for c in range(0x1F300, 0x1F700)]
    extra = ["a", "B", " ", "\n", "\t", "\u0301", "\u7684", "\u03a3", "\u00a0", "x\u0308", "ab"]
    pieces = []
    for start in range(0, len(chars), 40):
        block = chars[start : start + 40]
        pieces.append("".join(block))
        pieces.append("".join(rng.choice(block + extra) for _ in range(60)))
        pieces.append(" ".join(rng.choice(block) + rng.choice(extra) for _ in range(10)))
    want = [e.ids for e in emb.tokenizer.encode_batch(pieces, add_special_tokens=False)]
    assert emb._encode(pieces) == want
    assert sum(emb._normalised(p) is not None for p in pieces) > len(pieces) // 4  # the plain path is taken


def test_embed_matches_whole_text_tokenisation() -> None:
    emb = StaticEmbedder(MODELS / "minilm_static", max_seq_length=256, batch_size=50)
    texts = edge_texts() + sample_texts()
    vecs = emb.embed(texts)
    stats = emb.last_stats
    emb._ids = lambda prepared: reference_ids(emb, prepared)  # type: ignore[method-assign]
    assert np.array_equal(vecs, emb.embed(texts)) and stats == emb.last_stats
