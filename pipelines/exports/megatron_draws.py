"""How megatron-core 0.16 draws a pre-training phase's weighted blend: the samples its greedy index takes
from each prefix (:func:`blend_draws`), the ``--mid-level-dataset-surplus`` it needs to build them
(:func:`blend_surplus`), and what rounding to whole samples leaves undrawn (:func:`draw_warnings`)."""

from __future__ import annotations

import math

import numpy as np

MEGATRON_SURPLUS = 0.005  # megatron-core's GPTDatasetConfig.mid_level_dataset_surplus (Megatron-LM's --mid-level-dataset-surplus) by default
SURPLUS_STEP = 0.001  # a surplus the flags list is a multiple of this
UNDRAWN = 0.05  # the share of a pre-training phase's planned tokens that rounding to whole samples may leave out unsaid
SIMULATE_MAX = (
    5_000_000  # blend draws x prefixes up to which the blend's index is replayed exactly (above: its proven bound)
)


def draw_warnings(
    phase: str, weights: dict[str, float], group_of: dict[str, str], total: float, samples: int, seq: int
) -> list[str]:
    """What rounding a pre-training phase's planned tokens (``total``, with their EODs) down to whole
    samples leaves out: more than :data:`UNDRAWN` of them never drawn (Megatron drops the last partial
    sample), or a group the blend draws no sample from in ``samples`` (megatron-core's greedy index,
    :func:`blend_draws`; a group of less than one sample's share)."""
    if not samples or not weights:
        return []
    out, undrawn = [], 1 - samples * seq / total
    if undrawn > UNDRAWN:
        out.append(
            f"{phase}: --train-samples {samples:,} of {seq:,} tokens draw {samples * seq:,} of the phase's {round(total):,} "
            f"planned tokens (with their EODs): Megatron drops the last partial sample, so {undrawn:.0%} of the plan is "
            "never drawn; a shorter seq_length or a larger budget leaves less out"
        )
    w = [float(f"{x:.12g}") for x in weights.values()]  # as Megatron reads them from the .data-args
    w = [x / math.fsum(w) for x in w]
    drawn = (
        blend_draws(w, samples) if samples * len(w) <= SIMULATE_MAX else [x * samples for x in w]
    )  # above: the expected draws
    per_group: dict[str, list[float]] = {}
    for p, x, d in zip(weights, w, drawn, strict=True):
        g = per_group.setdefault(group_of[p], [0.0, 0.0])
        g[0], g[1] = g[0] + x, g[1] + d
    missing = [f"{g} (weight {x:.3g})" for g, (x, d) in sorted(per_group.items()) if d < 1]
    if missing:
        out.append(
            f"{phase}: of its {samples:,} samples of {seq:,} tokens, Megatron's blend draws none from {', '.join(missing)}: "
            "a group of less than one sample's share is not trained on in this phase; a shorter seq_length or a larger "
            "budget gives it samples"
        )
    return out


def blend_surplus(weights: list[float], tokens: list[int], samples: int, seq_length: int) -> float | None:
    """The ``mid_level_dataset_surplus`` a weighted blend needs to draw ``samples`` in megatron-core
    (0.16's BlendedMegatronDatasetBuilder), or ``None`` where its default (0.005) is enough.

    Megatron normalises the weights ``w``, builds prefix ``i`` (``tokens[i]`` tokens with their EODs)
    as a GPTDataset of ``ceil(ceil(n·w_i)·(1 + surplus))`` samples — whole epochs, so
    ``(e·tokens − 1) // seq_length`` samples for the fewest epochs ``e`` that hold them — and blends
    ``Σ ceil(n·w_i)`` draws (more than ``n`` when the weights are many) with its greedy index, which
    refuses to build if it draws more samples from a prefix than it built. Those draws are replayed
    exactly (below :data:`SIMULATE_MAX`) or bounded: the greedy index draws from a prefix only while
    it is behind its share, so after ``N`` draws it has drawn at most ``w_i·(N − 1) + 1``. The
    surplus returned is the smallest multiple of :data:`SURPLUS_STEP` that builds every prefix for
    its draws, checked with Megatron's own arithmetic."""
    if not weights or samples <= 0:
        return None
    w = (
        np.asarray(weights, dtype=np.float64) / np.sum(np.asarray(weights, dtype=np.float64))
    ).tolist()  # megatron's normalize()
    target = [math.ceil(samples * x) for x in w]
    drawn = blend_draws(w, sum(target))

    def built(surplus: float) -> list[int]:  # len() of each GPTDataset megatron builds at this surplus
        out = []
        for t, n_tok in zip(target, tokens, strict=True):
            asked = int(math.ceil(t * (1 + surplus)))
            epochs = max(1, -(-(asked * seq_length + 1) // n_tok))
            out.append((epochs * n_tok - 1) // seq_length)
        return out

    def enough(surplus: float) -> bool:
        return all(b >= d for b, d in zip(built(surplus), drawn, strict=True))

    if enough(MEGATRON_SURPLUS):
        return None
    need = max(
        (d - t) / t for d, t in zip(drawn, target, strict=True) if t
    )  # building each prefix for its draws is enough
    k = max(1, math.floor(need / SURPLUS_STEP))
    while k > 1 and enough(round((k - 1) * SURPLUS_STEP, 6)):  # whole epochs may need less
        k -= 1
    while not enough(round(k * SURPLUS_STEP, 6)):
        k += 1
    return round(k * SURPLUS_STEP, 6)


def blend_draws(weights: list[float], size: int) -> list[int]:
    """How many samples megatron-core's ``build_blending_indices`` (its C++ extension) draws from each
    dataset in a blend of ``size``: at every step the dataset furthest behind ``w_i·max(step, 1)``,
    the first on a tie. Replayed step by step while ``size × datasets`` is at most
    :data:`SIMULATE_MAX`; above, each count's bound ``floor(w_i·max(size − 1, 1)) + 1``."""
    k = len(weights)
    if size * k > SIMULATE_MAX:
        return [min(size, math.floor(x * max(size - 1, 1) * (1 + 1e-12) + 1 + 1e-9)) for x in weights]
    counts = [0] * k
    for step in range(size):
        x = float(max(step, 1))
        best, best_err = 0, weights[0] * x - counts[0]
        for i in range(1, k):
            err = weights[i] * x - counts[i]
            if err > best_err:
                best, best_err = i, err
        counts[best] += 1
    return counts
