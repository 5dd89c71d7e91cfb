"""Signatures: value-for-value compatibility with datasketch, shingling rules, batching."""

import numpy as np
import pytest
from datasketch import LeanMinHash, MinHash, MinHashLSH

from curation.dedup import shingle_batch
from curation.dedup.minhash import MinHashParams, estimate_jaccard, permutations, signatures
from curation.dedup.shingle_batch import shingle_hashes
from curation.dedup.shingles import (
    ShingleSpec,
    char_shingle_hash32,
    scalar_hashfunc,
    shingles,
    tokens,
    word_shingle_hash64,
)
from curation.hashing import token_hash64

TEXTS = [
    "The quick brown fox jumps over the lazy dog. The quick brown fox jumps again!",
    "",
    "!!! ... ???",
    "two words",
    "Ünïcödé ＡＢＣ ﬁne—café 東京タワー naïve résumé “quoted” it’s",
    "x_y__z 3.14159 e=mc^2 \t\n tabs\tand\nnewlines",
    "emoji 😀 between 😀 words and 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 math letters",
    " ".join(f"w{i % 37}" for i in range(400)),
    "Redis 的持久化：快照（RDB）和只追加文件 AOF。한국어 문장과 ภาษาไทย 𠀋字",
]


def _datasketch(text: str, params: MinHashParams) -> np.ndarray:
    kw = {} if params.hash == "sha1" else {"hashfunc": scalar_hashfunc(params.shingle)}
    m = MinHash(num_perm=params.num_perm, seed=params.seed, scheme=params.scheme, **kw)
    for s in shingles(text, params.shingle):
        m.update(s.encode("utf-8") if params.hash == "sha1" else s)
    return m.hashvalues


@pytest.mark.parametrize("scheme", ["affine32", "legacy"])
@pytest.mark.parametrize("hash_", ["fast", "sha1"])
@pytest.mark.parametrize("spec", ["word:5", "word:1", "char:4", "script:5", "script:1"])
def test_signatures_equal_datasketch_value_for_value(scheme, hash_, spec):
    params = MinHashParams(num_perm=64, seed=7, scheme=scheme, hash=hash_, shingle=ShingleSpec.parse(spec))
    sig = signatures(TEXTS, params)
    for i, text in enumerate(TEXTS):
        np.testing.assert_array_equal(sig[i], _datasketch(text, params), err_msg=f"{text[:30]!r}")


@pytest.mark.parametrize("scheme", ["affine32", "legacy"])
def test_permutations_are_datasketch_ones(scheme):
    a, b = permutations(128, 42, scheme)
    np.testing.assert_array_equal(MinHash(num_perm=128, seed=42, scheme=scheme).permutations, np.array([a, b]))


def test_default_params_match_plain_datasketch_minhash_with_sha1():
    # A user's plain `MinHash(num_perm, seed)` (default hash and scheme) reproduces hash="sha1".
    params = MinHashParams(num_perm=128, seed=1, hash="sha1")
    m = MinHash(num_perm=128, seed=1)
    for s in shingles(TEXTS[0], params.shingle):
        m.update(s.encode("utf-8"))
    np.testing.assert_array_equal(signatures([TEXTS[0]], params)[0], m.hashvalues)


def test_signatures_load_into_lean_minhash_and_lsh():
    params = MinHashParams(num_perm=128, seed=1)
    a = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho"
    sig = signatures([a, a.replace("kappa", "KAPPA!"), "completely different words here and there"], params)
    lsh = MinHashLSH(threshold=0.5, num_perm=128)
    for i, s in enumerate(sig):
        lsh.insert(str(i), LeanMinHash(seed=1, hashvalues=s, scheme="affine32"))
    assert sorted(lsh.query(LeanMinHash(seed=1, hashvalues=sig[0], scheme="affine32"))) == ["0", "1"]
    assert LeanMinHash(seed=1, hashvalues=sig[0], scheme="affine32").jaccard(
        LeanMinHash(seed=1, hashvalues=sig[1], scheme="affine32")
    ) == pytest.approx(estimate_jaccard(sig[:1], sig[1:2])[0])


def test_normalisation_folds_case_width_and_punctuation():
    assert tokens("Hello, WORLD!! ＨＥＬＬＯ_world") == ["hello", "world", "hello", "world"]
    assert shingles("A, b; c", ShingleSpec("word", 2)) == ["a b", "b c"]
    assert shingles("Ab  --  cD", ShingleSpec("char", 3)) == ["ab ", "b c", " cd"]


def test_short_and_empty_documents_get_one_shingle_of_what_they_have():
    assert shingles("only three words", ShingleSpec("word", 5)) == ["only three words"]
    assert shingles("", ShingleSpec("word", 5)) == [""]
    assert shingles("ab", ShingleSpec("char", 5)) == ["ab"]
    h, off = shingle_hashes(["only three words", "", "!!!", "a b c d e f"], ShingleSpec("word", 5))
    assert np.diff(off).tolist() == [1, 1, 1, 2]
    # Empty and punctuation-only documents normalise to the same (empty) shingle.
    assert h[off[1]] == h[off[2]] == word_shingle_hash64("")


@pytest.mark.parametrize("spec", ["word:5", "word:2", "char:5", "char:1", "script:5", "script:2"])
def test_vectorised_hashes_equal_the_scalar_reference(spec):
    s = ShingleSpec.parse(spec)
    h, off = shingle_hashes(TEXTS, s)
    ref = token_hash64 if s.kind == "char" else word_shingle_hash64
    for i, text in enumerate(TEXTS):
        assert h[off[i] : off[i + 1]].tolist() == [ref(x) for x in shingles(text, s)]


def test_batches_do_not_change_hashes(monkeypatch):
    whole = shingle_hashes(TEXTS * 3, ShingleSpec("word", 5))
    monkeypatch.setattr(shingle_batch, "BATCH_CHARS", 64)
    small = shingle_hashes(TEXTS * 3, ShingleSpec("word", 5))
    np.testing.assert_array_equal(whole[0], small[0])
    np.testing.assert_array_equal(whole[1], small[1])


def test_char_hash_accepts_bytes_and_differs_by_content():
    assert char_shingle_hash32(b"abcde") == char_shingle_hash32("abcde") != char_shingle_hash32("abcdf")


def test_bad_specs_are_rejected_with_the_expected_form():
    with pytest.raises(ValueError, match="word:5"):
        ShingleSpec.parse("words:5")
    with pytest.raises(ValueError, match="scheme"):
        MinHashParams(scheme="affine64")


def test_script_shingles_split_unspaced_scripts_into_characters_and_keep_spaced_words():
    spec = ShingleSpec.parse("script:2")
    assert shingles("数据库 index 很快", spec) == ["数 据", "据 库", "库 index", "index 很", "很 快"]
    assert shingles("The quick brown fox", spec) == shingles("The quick brown fox", ShingleSpec("word", 2))
    # Chinese is one "word" per sentence for word shingles, so a single changed character changes
    # every shingle; script shingles keep most of them.
    a = "分布式系统中的缓存一致性是一个常见的问题需要仔细设计更新策略和失效策略"
    b = a.replace("常", "长")
    for kind, low, high in (("word", 0.0, 0.01), ("script", 0.7, 1.0)):
        sa, sb = set(shingles(a, ShingleSpec(kind, 5))), set(shingles(b, ShingleSpec(kind, 5)))
        assert low <= len(sa & sb) / len(sa | sb) <= high, kind
    assert ShingleSpec.parse("script:5").salt != ShingleSpec.parse("word:5").salt
