import itertools

import numpy as np
import pytest

from curation.mixture.packing import _CapacityTree, best_fit_pack, check_packing, split_chunks


def optimal_bins(sizes: list[int], cap: int) -> int:
    """Exact minimum number of bins by exhaustive search (small inputs only)."""
    sizes = sorted(sizes, reverse=True)
    best = len(sizes)

    def place(i: int, bins: list[int]) -> None:
        nonlocal best
        if len(bins) >= best:
            return
        if i == len(sizes):
            best = len(bins)
            return
        tried = set()
        for b in range(len(bins)):
            if bins[b] + sizes[i] <= cap and bins[b] not in tried:
                tried.add(bins[b])
                bins[b] += sizes[i]
                place(i + 1, bins)
                bins[b] -= sizes[i]
        bins.append(sizes[i])
        place(i + 1, bins)
        bins.pop()

    place(0, [])
    return best


def test_matches_brute_force_optimum_on_small_inputs():
    rng = np.random.default_rng(0)
    worse = 0
    for _ in range(300):
        cap = int(rng.integers(8, 30))
        sizes = rng.integers(1, cap + 1, size=int(rng.integers(1, 9))).tolist()
        p = best_fit_pack(sizes, cap)
        check_packing(p, sizes)
        opt = optimal_bins(sizes, cap)
        assert p.n_sequences >= opt
        assert p.n_sequences <= 11 / 9 * opt + 6 / 9  # the best-fit-decreasing bound (Dósa 2007)
        worse += p.n_sequences > opt
    assert worse <= 6  # optimal on (almost) every small instance


def test_best_fit_picks_the_fullest_sequence_that_fits():
    # 6 and 5 open two sequences (4 and 5 left); a 4 goes to the fuller one (4 left), not the first fit.
    p = best_fit_pack([6, 5, 4], 10)
    seq_of = dict(zip(p.spans["doc"], p.spans["sequence"], strict=True))
    assert seq_of[2] == seq_of[0]
    assert p.n_sequences == 2


def test_only_documents_longer_than_the_context_are_split():
    p = best_fit_pack([25, 10, 3], 10)
    check_packing(p, [25, 10, 3])
    chunks = p.spans[p.spans["doc"] == 0].sort_values("offset")
    assert chunks["offset"].tolist() == [0, 10, 20] and chunks["length"].tolist() == [10, 10, 5]
    assert (p.spans[p.spans["doc"] != 0].groupby("doc").size() == 1).all()
    assert p.n_sequences == 4 and p.fill_rate == pytest.approx(38 / 40)


def test_split_chunks_and_zero_length_documents():
    doc, off, length = split_chunks(np.array([0, 4, 9]), 4)
    assert doc.tolist() == [1, 2, 2, 2] and off.tolist() == [0, 0, 4, 8] and length.tolist() == [4, 4, 4, 1]
    with pytest.raises(ValueError):
        split_chunks(np.array([-1]), 4)


def test_capacity_tree_finds_smallest_capacity_at_least_s():
    t = _CapacityTree(16)
    for c in (3, 7, 7, 12):
        t.add(c, 1)
    assert [t.first_at_least(s) for s in (1, 3, 4, 8, 12, 13)] == [3, 3, 7, 12, 12, -1]
    t.add(7, -2)
    assert t.first_at_least(4) == 12


def test_fill_rate_is_high_on_realistic_lengths():
    rng = np.random.default_rng(1)
    lengths = (rng.lognormal(7.0, 1.0, 5_000).astype(int) + 1).tolist()
    p = best_fit_pack(lengths, 32_768)
    check_packing(p, lengths)
    assert p.fill_rate > 0.99


def test_deterministic_and_independent_of_equal_length_ties():
    sizes = [5, 5, 5, 3, 3, 2, 7]
    a, b = best_fit_pack(sizes, 10), best_fit_pack(sizes, 10)
    assert a.spans.equals(b.spans)
    assert list(itertools.chain(a.spans["length"])) and a.n_sequences == optimal_bins(sizes, 10)
