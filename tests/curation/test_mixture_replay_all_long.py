"""The replay's choice when every document of a group is long next to its fractional target (each
over 0.5 % of it): the nearest subset, not the first document in hash order that fits."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from curation.mixture.nearest_sum import CELLS, nearest_sum
from curation.mixture.replay import CLOSE_ENOUGH, CopyPlan, shard_copies

#: long_docs/all of a run over the sample corpus at min_tokens 16384: 21 documents of 16k–50k tokens,
#: planned 36,189 tokens in the 128K phase (the greedy choices showed the 35,376-token one alone: −2.2 %)
BOOKS = [16586, 16627, 16701, 16976, 17106, 17147, 17192, 17272, 17348, 17554, 17577,
         17896, 18795, 18813, 19204, 20877, 21012, 22177, 35158, 35376, 50095]  # fmt: skip
PLANNED = 36_189


def replayed(ids: list[str], tokens: np.ndarray, planned: int, seed: int) -> tuple[np.ndarray, int]:
    copies = shard_copies(ids, tokens, CopyPlan((("midtrain_long_context_128k", planned / tokens.sum()),), 4.0), seed)
    return copies, int((copies * tokens).sum())


def nearest_by_brute_force(tokens: list[int], target: int) -> int:
    sums = (sum(c) for k in range(4) for c in itertools.combinations(tokens, k))  # 4 documents pass 2 × target
    return min(abs(s - target) for s in sums)


@pytest.mark.parametrize("seed", [1234, *range(8)])
def test_a_group_of_21_long_documents_replays_the_nearest_subset(seed: int) -> None:
    tokens = np.array(BOOKS)
    ids = [f"openstax.jsonl-{i}" for i in range(len(BOOKS))]
    copies, got = replayed(ids, tokens, PLANNED, seed)
    assert abs(got - PLANNED) == nearest_by_brute_force(BOOKS, PLANNED) == 9  # 16,976 + 19,204 = 36,180
    assert set(copies.tolist()) <= {0, 1}
    assert abs(got - PLANNED) <= 0.02 * PLANNED  # the phase's replay check: met


def hundreds() -> tuple[list[str], np.ndarray]:
    """345 documents of 4k–50k tokens (the same phase at min_tokens 4096), the 21 above among them."""
    rng = np.random.default_rng(7)
    tokens = np.concatenate([np.array(BOOKS), np.clip(rng.lognormal(8.9, 0.5, 324), 4096, 16_000).astype(np.int64)])
    return [f"d{i:03d}" for i in range(len(tokens))], tokens


@pytest.mark.parametrize("seed", [1234, *range(5)])
def test_hundreds_of_long_documents_replay_their_plan_within_a_few_tokens(seed: int) -> None:
    ids, tokens = hundreds()
    copies, got = replayed(ids, tokens, PLANNED, seed)
    # the greedy choices showed the 35,376-token document alone on half of these seeds (−2.2 %): the
    # first fits in hash order left a gap no 4k-token document fills, and the longest first lands nearer
    assert abs(got - PLANNED) <= CLOSE_ENOUGH * PLANNED, got
    assert set(copies.tolist()) <= {0, 1}


def test_the_choice_does_not_depend_on_the_order_the_documents_come_in() -> None:
    ids, tokens = hundreds()
    copies, _ = replayed(ids, tokens, PLANNED, 3)
    perm = np.random.default_rng(1).permutation(len(ids))
    shuffled, _ = replayed([ids[i] for i in perm], tokens[perm], PLANNED, 3)
    assert dict(zip(ids, copies.tolist(), strict=True)) == dict(
        zip([ids[i] for i in perm], shuffled.tolist(), strict=True)
    )
    assert copies.sum() >= 2


def test_per_document_caps_hold_when_every_document_is_long() -> None:
    """Two pre-training phases under a cap of 1 epoch: phase 2 shows only documents phase 1 did not."""
    ids, tokens = hundreds()
    e1 = 0.3
    p1 = shard_copies(ids, tokens, CopyPlan((("p1", e1),), 1.0), 0)
    p2 = shard_copies(ids, tokens, CopyPlan((("p1", e1), ("p2", 0.6)), 1.0), 0)
    assert int((p1 + p2).max()) == 1
    assert abs(int((p2 * tokens).sum()) - 0.6 * tokens.sum()) <= CLOSE_ENOUGH * 0.6 * tokens.sum()


def test_sums_past_the_counted_cells_are_counted_in_steps_and_stay_under_the_cap() -> None:
    rng = np.random.default_rng(2)
    tokens = rng.integers(1_000_000, 5_000_000, 60)
    target, upper = 40_000_123, 40_050_000
    assert 2 * target > CELLS  # in steps of ⌈upper / CELLS⌉ tokens
    got = int(tokens[nearest_sum(tokens, target, upper)].sum())
    assert target - CLOSE_ENOUGH * target <= got <= upper
