import numpy as np
import pytest

from curation.mixture.fim import FimSentinels, fim_format, fim_inverse, fim_many, fim_parts, fim_split, fim_transform

S = FimSentinels()
CODE = "def add(a, b):\n    return a + b\n\nprint(add(1, 2))\n"


def test_three_parts_reassemble_the_original_in_psm():
    for seed in range(50):
        prefix, middle, suffix = fim_split(CODE, np.random.default_rng(seed))
        assert prefix + middle + suffix == CODE
        out = fim_format(prefix, middle, suffix, "psm", S)
        assert out.startswith(S.prefix) and out.index(S.suffix) < out.index(S.middle)
        assert fim_parts(out, "psm", S) == (prefix, middle, suffix)
        assert fim_inverse(out, "psm", S) == CODE


def test_spm_puts_the_suffix_first_and_round_trips():
    prefix, middle, suffix = "ab", "cd", "ef"
    out = fim_format(prefix, middle, suffix, "spm", S)
    assert out == f"{S.prefix}{S.suffix}ef{S.middle}abcd"
    assert fim_parts(out, "spm", S) == ("abcd", "", "ef")
    assert fim_inverse(out, "spm", S) == "abcdef"


def test_rate_and_mode_split_follow_the_configuration():
    keys = [f"doc{i}" for i in range(4000)]
    _, modes = fim_many([CODE] * len(keys), keys, seed=3, rate=0.5, spm_rate=0.5, sentinels=S)
    modes = np.array(modes)
    assert abs((modes != "none").mean() - 0.5) < 0.03
    applied = modes[modes != "none"]
    assert abs((applied == "spm").mean() - 0.5) < 0.04
    _, none = fim_many([CODE] * 10, keys[:10], seed=3, rate=0.0, spm_rate=0.5, sentinels=S)
    assert set(none) == {"none"}


def test_deterministic_by_seed_and_document():
    a = fim_transform(CODE, "x", seed=1, rate=1.0, spm_rate=0.5, sentinels=S)
    assert a == fim_transform(CODE, "x", seed=1, rate=1.0, spm_rate=0.5, sentinels=S)
    others = {fim_transform(CODE, "x", seed=s, rate=1.0, spm_rate=0.5, sentinels=S) for s in range(20)}
    assert len(others) > 5


def test_configurable_sentinels_and_texts_that_already_hold_one_are_skipped():
    custom = FimSentinels("<PRE>", "<MID>", "<SUF>")
    out, mode = fim_transform(CODE, "k", seed=0, rate=1.0, spm_rate=0.0, sentinels=custom)
    assert mode == "psm" and out.startswith("<PRE>") and "<|fim_prefix|>" not in out
    assert fim_inverse(out, mode, custom) == CODE
    text = "x = '<PRE>'"
    assert fim_transform(text, "k", seed=0, rate=1.0, spm_rate=0.0, sentinels=custom) == (text, "skipped_sentinel")


def test_bad_mode_is_rejected():
    with pytest.raises(ValueError, match="FIM mode"):
        fim_format("a", "b", "c", "mps", S)


def test_copies_of_a_repeated_document_get_their_own_fim_split():
    import pandas as pd

    from curation.mixture.phases import PhaseSpec
    from curation.mixture.replay import CopyPlan
    from curation.mixture.shards import ShardOptions, build_shard
    from curation.tokens import count_tokens

    text = "def add(a, b):\n    return a + b\n" * 5
    rows = pd.DataFrame({"doc_id": ["d"], "text": [text], "source": ["code"], "n_tokens": [60], "unit": ["d"]})
    spec = PhaseSpec("p", tokens=1, mix={"code": 1.0}, fim=True)
    frame, _, counts, _, _ = build_shard(rows, spec, "code/high", CopyPlan((("p", 4.0),)), ShardOptions(seed=3, fim_rate=1.0, materialize_repeats=True))
    assert sorted(frame["copy"]) == [0, 1, 2, 3] and sum(counts.values()) == 4
    assert frame["text"].nunique() == 4  # four copies, four different splits
    assert all(fim_inverse(t, m, FimSentinels()) == text for t, m in zip(frame["text"], frame["fim"], strict=True))
    # n_tokens is what the trainer sees: the FIM'd text with its three sentinels, counted again
    assert frame["n_tokens"].tolist() == count_tokens(frame["text"].tolist(), "qwen").tolist()
    assert (frame["n_tokens"] > count_tokens([text], "qwen")[0]).all()
    plain, _, _, _, _ = build_shard(rows, spec, "code/high", CopyPlan((("p", 2.6),)), ShardOptions(seed=3, fim_rate=1.0))
    assert plain["copies"].tolist() == [3] and len(plain) == 1  # not written out: one row, shown 2.6 → 3 times (token-nearest)
