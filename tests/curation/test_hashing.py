"""The shared hashing kernel: its doctests, and the two uses that must agree with it."""

import doctest

import numpy as np

import curation.hashing as hashing
from curation.hashing import BASE, BASE_INV, MASK64, codepoints, fmix64_int, powers, span_hash, span_poly, token_hash64


def test_doctests():
    assert doctest.testmod(hashing).failed == 0


def test_span_hashes_equal_the_scalar_hash_of_each_span():
    words = ["", "a", "hello", "東京", "😀x", "x" * 300]
    cp = codepoints(words, " ")
    lengths = np.array([len(w) for w in words])
    starts = np.r_[0, np.cumsum(lengths + 1)[:-1]]
    got = span_hash(cp, starts, starts + lengths)
    assert got.tolist() == [token_hash64(w) for w in words]


def test_span_poly_in_both_directions():
    text = "abcdef"
    cp = codepoints([text], "")
    s, e = np.array([1]), np.array([5])
    up = sum(ord(c) * pow(BASE, j, 1 << 64) for j, c in enumerate(text[1:5])) & MASK64
    down = sum(ord(c) * pow(BASE_INV, j, 1 << 64) for j, c in enumerate(text[1:5])) & MASK64
    assert int(span_poly(cp, s, e)[0]) == up
    assert int(span_poly(cp, s, e, descending=True)[0]) == down


def test_power_tables_grow_and_stay_consistent():
    pw, inv = powers(10)
    big_pw, big_inv = powers(len(pw) + 1)
    assert len(big_pw) > len(pw)
    np.testing.assert_array_equal(big_pw[: len(pw)], pw)
    np.testing.assert_array_equal(big_inv[: len(inv)], inv)
    assert fmix64_int(0) == 0
