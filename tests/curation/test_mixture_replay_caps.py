"""Per-document caps over the pre-training phases: a later phase gives its extra copies to the
documents the earlier ones showed least, so no document passes ⌈epochs so far⌉ (the cap)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from curation.mixture.replay import CopyPlan, shard_copies
from curation.mixture.replay_check import check_replay


def over_phases(ids: list[str], tokens: np.ndarray, steps: list[tuple[str, float]], cap: float, seed: int = 0) -> np.ndarray:
    """Each document's copies summed over the phases, each phase's shard task replaying the ones before."""
    return sum(shard_copies(ids, tokens, CopyPlan(tuple(steps[: k + 1]), cap), seed) for k in range(len(steps)))


def test_two_and_a_half_then_one_and_a_half_epochs_under_a_cap_of_4_show_every_document_4_times() -> None:
    ids, tokens = [f"d{i}" for i in range(40)], np.full(40, 10)
    total = over_phases(ids, tokens, [("p1", 2.5), ("p2", 1.5)], 4.0)
    assert total.tolist() == [4] * 40  # by hash order alone 9 documents got 5 copies, 9 got 3
    p2 = shard_copies(ids, tokens, CopyPlan((("p1", 2.5), ("p2", 1.5)), 4.0), 0)
    assert int((p2 * tokens).sum()) == 1.5 * 400  # phase 2 replays its plan exactly


@pytest.mark.parametrize("seed", range(5))
def test_a_cap_of_one_epoch_shows_no_document_twice(seed: int) -> None:
    rng = np.random.default_rng(seed)
    tokens = rng.integers(20, 400, 300)
    ids = [f"m{i:03d}" for i in range(len(tokens))]
    e1 = 0.45 + 0.1 * seed / 5
    total = over_phases(ids, tokens, [("p1", e1), ("p2", 1.0 - e1)], 1.0, seed)
    assert total.max() == 1  # with hash order alone ~a quarter of phase 2's documents were phase 1's
    p2 = shard_copies(ids, tokens, CopyPlan((("p1", e1), ("p2", 1.0 - e1)), 1.0), seed)
    assert abs(int((p2 * tokens).sum()) - (1.0 - e1) * tokens.sum()) <= tokens.max()  # the plan, within a document


@pytest.mark.parametrize("seed", range(20))
def test_no_document_passes_the_ceiling_of_the_epochs_so_far_and_the_group_stays_in_its_cap(seed: int) -> None:
    rng = np.random.default_rng(seed)
    tokens = np.concatenate([rng.integers(30, 400, int(rng.integers(25, 300))), rng.integers(2000, 9000, int(rng.integers(0, 5)))])
    ids = [f"d{i}" for i in range(len(tokens))]
    cap = float(rng.choice([1.0, 2.0, 3.0, 4.0]))
    e1 = float(rng.uniform(0, cap))
    steps = [("p1", e1), ("p2", float(rng.uniform(0, cap - e1)))]
    total = over_phases(ids, tokens, steps, cap, seed)
    assert total.max() <= math.ceil(e1 + steps[1][1] - 1e-9) <= cap
    assert int((total * tokens).sum()) <= cap * tokens.sum()


def test_a_phase_shows_the_least_shown_documents_first_and_keeps_phase_one_as_it_was() -> None:
    ids, tokens = [f"d{i}" for i in range(60)], np.arange(60) % 7 * 10 + 30
    p1 = shard_copies(ids, tokens, CopyPlan((("p1", 0.6),), 4.0), 3)
    p2 = shard_copies(ids, tokens, CopyPlan((("p1", 0.6), ("p2", 0.3)), 4.0), 3)
    assert not (p1 & p2).any()  # 0.6 + 0.3 < 1: the documents phase 1 left out take phase 2's copies
    assert abs(int((p2 * tokens).sum()) - 0.3 * tokens.sum()) <= tokens.max()


def test_the_replay_warning_ignores_a_group_within_one_of_its_documents() -> None:
    """math_science/all of two 2-token documents, planned 1 and replayed 2, is no finding; a group
    of long documents that replays none of its plan still is."""
    tiny = {"name": "math_science/all", "planned_tokens": 1, "replay_tokens": 2, "unique_tokens": 4, "unique_documents": 2}
    assert check_replay("p2", [tiny], 200_000) == []
    long = {"name": "long_docs/all", "planned_tokens": 2_922, "replay_tokens": 0, "unique_tokens": 180_000, "unique_documents": 2}
    (w,) = check_replay("p5", [long], 2_922)
    assert w["groups"][0]["group"] == "long_docs/all"
    off = {"name": "web/high", "planned_tokens": 10_000, "replay_tokens": 10_500, "unique_tokens": 8_000, "unique_documents": 40}
    assert check_replay("p1", [off], 100_000)[0]["check"] == "replay"  # 500 off: more than 2 % and than a 200-token document
