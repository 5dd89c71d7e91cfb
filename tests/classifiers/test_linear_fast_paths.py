"""The hashed n-gram featurisation, the linear model's mean and the Han shares, pinned to plain
reference implementations kept here (per-block padding masks, per-text counts)."""

from __future__ import annotations

import numpy as np
import pytest

from classifiers.edu import han_share, han_shares
from classifiers.linear import HashedLinearModel
from classifiers.linear_features import ngram_blocks
from curation.hashing import BASE, GOLDEN, alnum_table, bucket, codepoints, powers

TEXTS = [
    "",
    "The cat sat on the mat. The dog ate the bone!",
    "函数的导数 f(x) = 2x，我们今天学习了数据库的索引。",
    "emoji 😀🎉 mixed — naïve café ΣΑΣ İstanbul",
    "  lots   of\twhitespace\n\n\nand\x00nul\x00 inside  ",
    "a",
    "ab",
    "x" * 50,
    "lone \ud800 surrogate \udfff here",
    "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 outside the BMP 𠀀𠀁",
    "Ünïcödé wörds ünd ß straße STRASSE",
    "word_with_underscore and 123 numbers 4.5 e\u0301",
]

_U64 = np.uint64


def _reference_blocks(texts, n_features, word_ngrams=(1, 2), char_ngrams=(3, 5), max_chars=20000):
    folded = [" ".join(str(t)[: max_chars * 2].replace("\x00", " ").lower().split())[:max_chars] for t in texts]
    cp = codepoints(folded, "\x00").astype(_U64)
    lengths = np.fromiter((len(f) + 1 for f in folded), dtype=np.int64, count=len(folded))
    doc = np.repeat(np.arange(len(folded), dtype=np.int64), lengths)[: len(cp)]
    n = len(cp)
    pad = _U64(n_features)
    sep = cp == 0
    with np.errstate(over="ignore"):
        lo, hi = char_ngrams
        h, bad = cp, sep
        for k in range(2, hi + 1):
            if n < k:
                break
            h = h[:-1] * _U64(BASE) + cp[k - 1 :]
            bad = bad[:-1] | sep[k - 1 :]
            if k >= lo:
                col = bucket(h + _U64(k) * _U64(0x51ED27), n_features)
                col[bad] = pad
                yield doc[: len(col)], col.view(np.int64)
        wlo, whi = word_ngrams
        if whi >= 1 and n:
            small = cp < 0x10000
            is_word = np.ones(n, dtype=bool)
            is_word[small] = alnum_table()[cp[small].astype(np.int64)]
            is_word &= ~sep
            edges = np.diff(np.concatenate([[0], is_word.view(np.int8), [0]]))
            starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
            if len(starts):
                pw, inv = powers(n + 1)
                prefix = np.concatenate([[_U64(0)], np.cumsum(cp * inv[:n], dtype=_U64)])
                wh = (prefix[ends] - prefix[starts]) * pw[starts]
                wdoc = doc[starts]
                if wlo <= 1:
                    yield wdoc, bucket(wh + _U64(0xA5A5), n_features).view(np.int64)
                g = wh
                for k in range(2, whi + 1):
                    if len(g) < 2:
                        break
                    same = wdoc[k - 1 :] == wdoc[: len(wdoc) - k + 1]
                    g = (g[:-1] ^ (g[:-1] >> _U64(29))) * _U64(GOLDEN) + wh[k - 1 :]
                    if k >= wlo:
                        col = bucket(g + _U64(k), n_features)
                        col[~same] = pad
                        yield wdoc[: len(col)], col.view(np.int64)


def _reference_decision(model, texts, batch_size=256):
    out = np.empty(len(texts), dtype=np.float64)
    w = np.concatenate([model.weights, np.zeros(1, dtype=np.float32)])
    for i in range(0, len(texts), batch_size):
        batch = texts[i : i + batch_size]
        total, n = np.zeros(len(batch)), np.zeros(len(batch))
        blocks = _reference_blocks(batch, model.n_features, model.word_ngrams, model.char_ngrams, model.max_chars)
        for doc, col in blocks:
            total += np.bincount(doc, weights=w[col], minlength=len(batch))
            n += np.bincount(doc, minlength=len(batch)) - np.bincount(doc[col == model.n_features], minlength=len(batch))
        out[i : i + len(batch)] = total / np.maximum(n, 1.0) + model.bias
    return out


def _reference_han_share(text, chars=2000):
    head = text[:chars]
    han = sum(1 for c in head if "\u4e00" <= c <= "\u9fff" or "\u3400" <= c <= "\u4dbf")
    latin = sum(1 for c in head if c.isascii() and c.isalpha())
    return han / (han + latin) if han + latin else 0.0


def _random_texts(n, seed=0):
    rng = np.random.default_rng(seed)
    alphabet = list("abcXYZ 019_.,\n\t\x00éßİΣ函数的学习😀\ud800") + ["  ", "the ", "数据"]
    return ["".join(rng.choice(alphabet, size=int(rng.integers(0, 60)))) for _ in range(n)]


CONFIGS = [((1, 2), (3, 5), 2**16), ((1, 1), (3, 3), 1000), ((2, 3), (2, 4), 2**10), ((0, 0), (1, 5), 97), ((1, 3), (6, 6), 2**12)]


@pytest.mark.parametrize(("word", "char", "n_features"), CONFIGS)
@pytest.mark.parametrize("texts", [TEXTS, _random_texts(80), [""], ["", ""], ["a b"], []])
def test_blocks_match_reference(texts, word, char, n_features):
    got = list(ngram_blocks(texts, n_features, word_ngrams=word, char_ngrams=char, max_chars=30))
    want = list(_reference_blocks(texts, n_features, word, char, 30))
    assert len(got) == len(want)
    for (gd, gc), (wd, wc) in zip(got, want, strict=True):
        assert np.array_equal(gd, wd) and np.array_equal(gc, wc)


@pytest.mark.parametrize(("word", "char", "n_features"), CONFIGS)
@pytest.mark.parametrize("task", ["binary", "regression"])
def test_decision_function_matches_reference_bit_for_bit(word, char, n_features, task):
    model = HashedLinearModel(n_features=n_features, word_ngrams=word, char_ngrams=char, task=task, max_chars=40)
    model.weights = np.random.default_rng(1).normal(size=n_features).astype(np.float32)
    model.bias = 0.25
    texts = TEXTS + _random_texts(300, seed=2)
    for batch_size in (1, 7, 256):
        got = model.decision_function(texts, batch_size=batch_size)
        assert got.tobytes() == _reference_decision(model, texts, batch_size).tobytes()


def test_new_weights_array_is_picked_up():
    model = HashedLinearModel(n_features=2**10)
    before = model.decision_function(["some words here"])
    model.weights = np.ones(2**10, dtype=np.float32)
    assert model.decision_function(["some words here"])[0] == pytest.approx(1.0) != before[0]


def test_han_shares_match_reference():
    texts = TEXTS + _random_texts(200, seed=3) + ["函" * 3000 + "a" * 10, "a" * 1999 + "函数", "ＡＢＣ full width"]
    want = [_reference_han_share(t) for t in texts]
    assert han_shares(texts).tolist() == want
    assert [han_share(t) for t in texts] == want
    assert han_shares(texts, chars=5).tolist() == [_reference_han_share(t, 5) for t in texts]
    assert han_shares([]).tolist() == []


def _reference_fold(texts, max_chars):
    return [" ".join(str(t)[: max_chars * 2].replace("\x00", " ").lower().split())[:max_chars] for t in texts]


@pytest.mark.parametrize("max_chars", [1, 3, 30, 20000])
def test_fold_matches_split_and_join(max_chars):
    from classifiers.linear_features import _codepoints

    spaces = "".join(chr(c) for c in range(0x110000) if chr(c).isspace())
    texts = TEXTS + _random_texts(200, seed=4) + [spaces, "a" + spaces + "b", spaces + "x" + spaces, "\x00", " \x00 "]
    texts += ["w " * 40, " " * 100 + "tail", "ΣΑΣ ΟΔΟΣ", "İİİ " * 10]
    for batch in (texts, texts[:1], ["", ""], [spaces]):
        cp, doc, lengths = _codepoints(batch, max_chars)
        folded = _reference_fold(batch, max_chars)
        assert cp.tolist() == codepoints(folded, "\x00").tolist()
        assert lengths.tolist() == [len(f) for f in folded]
        assert doc.tolist() == [d for d, f in enumerate(folded) for _ in range(len(f) + 1)][: len(cp)]
    assert [len(a) for a in _codepoints([], max_chars)] == [0, 0, 0]


def test_space_table_is_str_isspace_everywhere():
    from classifiers.linear_features import _space_flags

    assert np.flatnonzero(_space_flags()).tolist() == [c for c in range(0x110000) if chr(c).isspace()]


def test_class_table_is_space_and_word_tables():
    from classifiers.linear_features import _SPACE, _WORD, _classes, _space_flags, _word_flags

    space, word = _space_flags(), _word_flags()
    want = np.where(space, _SPACE, np.where(word, _WORD, 0)).astype(np.uint8)
    assert np.array_equal(_classes(), want)
    assert _classes()[0] == 0


@pytest.mark.parametrize("max_chars", [1, 3, 30, 20000])
def test_folded_classes_are_the_folded_code_points_classes(max_chars):
    from classifiers.linear_features import _SPACE, _WORD, _codepoints, _folded, _word_flags

    spaces = "".join(chr(c) for c in range(0x110000) if chr(c).isspace())
    texts = TEXTS + _random_texts(200, seed=5) + [spaces + "ab" + spaces, "x" * 70 + " y", "İİ ΣΑΣ " * 20]
    for batch in (texts, texts[:1], ["", ""], [spaces], []):
        cp, doc, lengths, cls = _folded(batch, max_chars)
        want = np.where(_word_flags()[cp], _WORD, np.where(cp == 32, _SPACE, 0))
        assert cls.tolist() == want.tolist()
        for got, ref in zip((cp, doc, lengths), _codepoints(batch, max_chars), strict=True):
            assert np.array_equal(got, ref)


@pytest.mark.parametrize(("word", "char", "max_chars"), [((1, 2), (3, 5), 20000), ((1, 2), (2, 4), 1500)])
def test_decision_function_matches_reference_on_long_texts(word, char, max_chars):
    rng = np.random.default_rng(7)
    alphabet = list("abcdefXYZ 0123_.,;(){}=\n\t\x00éßİΣ函数的学习😀") + ["  ", "the ", "def ", "数据", "\u3000"]
    texts = ["".join(rng.choice(alphabet, size=int(rng.integers(0, 4000)))) for _ in range(60)]
    model = HashedLinearModel(n_features=2**18, word_ngrams=word, char_ngrams=char, max_chars=max_chars)
    model.weights = rng.normal(size=2**18).astype(np.float32)
    model.bias = -0.5
    for batch_size in (7, 128, 256):
        got = model.decision_function(texts, batch_size=batch_size)
        assert got.tobytes() == _reference_decision(model, texts, batch_size).tobytes()
