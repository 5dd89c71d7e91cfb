"""Each Gopher / C4 / FineWeb signal on hand-written pages: the value, not only the decision."""

from __future__ import annotations

import numpy as np
import pytest

from classifiers.heuristics_repetition import repetition_signals
from classifiers.heuristics_signals import SIGNAL_NAMES, SIGNALS, signal_matrix, text_signals

ARTICLE = (
    "The river flooded the valley in the spring of that year.\n"
    "Farmers moved their animals to the hills and waited for the water to fall.\n"
    "When it did, they found that the soil was richer than before!"
)


def test_every_signal_is_listed_once_and_computed() -> None:
    assert len(SIGNAL_NAMES) == len(set(SIGNAL_NAMES))
    s = text_signals(ARTICLE)
    assert list(s) == list(SIGNAL_NAMES)
    assert all(np.isfinite(v) for v in s.values())


def test_empty_and_non_string_text() -> None:
    s = text_signals("")
    assert s["n_words"] == 0 and s["stop_word_frac"] == 0 and s["line_punct_frac"] == 0
    assert signal_matrix(["", "a"]).shape == (2, len(SIGNALS))


def test_word_counts_and_mean_length() -> None:
    s = text_signals("aa bbbb, cccccc.")
    assert s["n_words"] == 3
    assert s["mean_word_length"] == pytest.approx(4.0)  # punctuation stripped: aa, bbbb, cccccc


def test_symbol_word_ratio_counts_hashes_and_ellipses() -> None:
    s = text_signals("#tag #other wait... more … end")
    # two '#', one '...', one '…' over 6 words
    assert s["symbol_word_ratio"] == pytest.approx(4 / 6)


def test_bullet_and_ellipsis_lines() -> None:
    s = text_signals("• one\n- two\nthree...\nfour …\nfive")
    assert s["bullet_line_frac"] == pytest.approx(2 / 5)
    assert s["ellipsis_line_frac"] == pytest.approx(2 / 5)


def test_alpha_words_and_digits() -> None:
    s = text_signals("abc 123 4.5 x9")
    assert s["alpha_word_frac"] == pytest.approx(2 / 4)  # abc and x9 have a letter
    assert s["digit_frac"] == pytest.approx(6 / len("abc 123 4.5 x9"))  # 1 2 3 4 5 9


def test_stop_words() -> None:
    s = text_signals("The cat and the dog have a toy with them")
    assert s["gopher_stop_words"] == 4  # the, and, have, with
    # the, and, the, have, a, with, them are English function words
    assert s["stop_word_frac"] == pytest.approx(7 / 10)
    assert text_signals("Login Cart Checkout Wishlist")["stop_word_frac"] == 0


def test_duplicate_lines_and_paragraphs() -> None:
    s = text_signals("menu\nmenu\nmenu\nreal text here")
    assert s["dup_line_frac"] == pytest.approx(2 / 4)
    assert s["dup_line_char_frac"] == pytest.approx(8 / len("menu\nmenu\nmenu\nreal text here"))
    p = text_signals("first para\n\nsecond para\n\nfirst para")
    assert p["dup_para_frac"] == pytest.approx(1 / 3)
    assert p["dup_para_char_frac"] == pytest.approx(len("first para") / len("first para\n\nsecond para\n\nfirst para"))


def test_top_ngram_fraction() -> None:
    text = "buy now buy now buy now cheap"
    r = repetition_signals(text)
    # "buy now" occurs 3 times, 7 characters each
    assert r["top_2gram_char_frac"] == pytest.approx(3 * 7 / len(text))
    assert repetition_signals("a b c d")["top_2gram_char_frac"] == 0  # nothing repeats


def test_duplicate_ngram_fraction_covers_every_occurrence() -> None:
    phrase = "one two three four five"
    text = f"{phrase} six {phrase}"
    r = repetition_signals(text)
    # both occurrences of the 5-gram are covered: 2 × 19 word characters of 22 (+ "six")
    assert r["dup_5gram_char_frac"] == pytest.approx(38 / 41)
    assert r["dup_6gram_char_frac"] == 0
    assert repetition_signals("a b c d e f g h i j k")["dup_5gram_char_frac"] == 0


def test_line_punctuation_and_short_lines() -> None:
    s = text_signals("A full sentence ends here.\nMenu\nAnother one?\nShop now")
    assert s["line_punct_frac"] == pytest.approx(2 / 4)
    assert s["short_line_frac"] == pytest.approx(4 / 4)  # all lines ≤ 30 characters
    assert s["few_words_line_frac"] == pytest.approx(3 / 4)  # Menu, Another one?, Shop now
    long = text_signals("This line is definitely longer than thirty characters.\nok")
    assert long["short_line_frac"] == pytest.approx(1 / 2)


def test_sentences_and_newlines() -> None:
    s = text_signals("One. Two! Three? Four.\nFive")
    assert s["n_sentences"] == 4
    assert s["newline_word_ratio"] == pytest.approx(1 / 5)


def test_c4_markers() -> None:
    s = text_signals("Lorem ipsum dolor sit amet\nPlease enable JavaScript\nThis site uses cookies.\nvar x = {a: 1}")
    assert s["lorem_ipsum"] == 1 and s["curly_bracket"] == 1
    assert s["javascript_line_frac"] == pytest.approx(1 / 4)
    assert s["policy_line_frac"] == pytest.approx(1 / 4)
    assert text_signals(ARTICLE)["lorem_ipsum"] == 0


def test_uppercase_and_urls() -> None:
    s = text_signals("SHOP NOW at www.example.com")
    assert s["uppercase_frac"] == pytest.approx(7 / 22)  # SHOP NOW of 22 cased letters
    assert s["url_word_frac"] == pytest.approx(2 / 4)  # "www." and ".com" markers, 4 words
    assert text_signals("İstanbul")["uppercase_frac"] > 0  # a letter that changes length when lowered


def test_length_changing_case_is_classified_per_code_point_as_python_does() -> None:
    """The upper-case share of texts whose case mapping changes length uses a table filled in as
    code points are met: it must answer as str.isalpha / str.isupper for every code point, the
    surrogates that ``surrogatepass`` lets through included."""
    from classifiers.heuristics_chars import _AlphaUpper

    table = _AlphaUpper()
    rng = np.random.default_rng(7)
    cps = [np.array([ord(c) for c in "İßǅﬁΣ"], dtype=np.uint32), rng.integers(0, 0x110000, 5000).astype(np.uint32),
           np.arange(0xD7F0, 0xE010, dtype=np.uint32)]
    for cp in cps:
        alpha, upper = table(cp)
        assert alpha.tolist() == [chr(c).isalpha() for c in cp.tolist()]
        assert upper.tolist() == [chr(c).isupper() for c in cp.tolist()]
    assert table.known.sum() == len(np.unique(np.concatenate(cps)))  # only what was met
    s = text_signals("STRAßE İstanbul ǅ")  # STRA, E and İ of 15 letters (ß is lower case, ǅ title case)
    assert s["uppercase_frac"] == pytest.approx(6 / 15)


def test_signals_carry_the_published_pass_ranges() -> None:
    x = signal_matrix([ARTICLE * 5, "buy"])
    rule = SIGNALS[SIGNAL_NAMES.index("n_words")]
    assert (rule.source, rule.lo, rule.hi) == ("gopher", 50, 100_000)  # Gopher: 50 to 100,000 words
    col = SIGNAL_NAMES.index("n_words")
    assert rule.lo <= x[0, col] <= rule.hi and x[1, col] < rule.lo
    assert {s.name: s.hi for s in SIGNALS}["dup_line_frac"] == 0.3


def test_chinese_signals_use_chinese_words_stop_words_and_sentence_ends():
    from classifiers.heuristics_signals import split_words, text_signals

    text = "我们今天学习了索引。索引可以加快查询！\n但是它也会占用空间。"
    assert split_words("用Redis做缓存", "zh") == ["用", "Redis", "做", "缓", "存"]
    zh, as_en = text_signals(text, "zh"), text_signals(text, "en")
    assert zh["n_sentences"] == 3 and zh["n_words"] > 20 and as_en["n_words"] == 2
    assert zh["stop_word_frac"] > 0.15 and as_en["stop_word_frac"] == 0.0
    assert zh["gopher_stop_words"] >= 2
    # a language without a stop-word list: the stop-word signals are unknown, not zero
    assert np.isnan(text_signals("Ceci est une phrase.", "fr")["stop_word_frac"])


def test_chinese_pages_are_judged_against_chinese_text_and_only_marked_down():
    from classifiers.heuristics import HeuristicModel

    sc = HeuristicModel.default()
    assert "zh" in sc.languages and "zh" in sc.penalty_only
    prose = "数据库索引是一种数据结构，它可以加快查询的速度。我们在设计表的时候，需要根据查询的条件来选择合适的索引。" * 6
    good, junk = sc.predict([prose, "首页\n登录\n购物车"], ["zh", "zh"])
    assert good > junk and good <= 0.0  # penalty-only: the best a Chinese page can get is 0
    # English scores do not change with the language block (same as without langs)
    en = ["The council approved the new library after a long debate. It opens next year."]
    assert sc.predict(en, ["en"]).tolist() == sc.predict(en).tolist()
