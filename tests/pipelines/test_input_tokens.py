"""Tokens in against what came in (pipelines.counts.with_input_tokens): a stage that counts tokens
again keeps "tokens in" equal to the previous stage's kept tokens and records the change, in the
totals and per source and language; a stage that changes nothing, or an input no stage wrote, is
left as its counts say."""

from __future__ import annotations

import copy

from pipelines.counts import with_input_tokens


def _block(docs: int, tokens: int, kept: int | None = None) -> dict:
    kept = tokens if kept is None else kept
    return {"in": {"documents": docs, "tokens": tokens}, "kept": {"documents": docs, "tokens": kept},
            "dropped": {"documents": 0, "tokens": tokens - kept}}


def _summary() -> dict:
    # the stage's own counts: web pages re-counted from 100 to 130 tokens, code unchanged
    out = _block(5, 230)
    out["dropped_by_reason"] = {}
    out["by_source"] = {"web": _block(3, 130), "code": _block(2, 100)}
    out["by_lang"] = {"en": _block(4, 200), "zh": _block(1, 30)}
    return out


def _recorded() -> dict:
    return {"kept": {"documents": 5, "tokens": 200},
            "by_source": {"web": {"kept": {"documents": 3, "tokens": 100}}, "code": {"kept": {"documents": 2, "tokens": 100}}},
            "by_lang": {"en": {"kept": {"documents": 4, "tokens": 180}}, "zh": {"kept": {"documents": 1, "tokens": 20}}}}


def test_recounted_tokens_are_told_apart_from_the_tokens_that_came_in():
    s = with_input_tokens(_summary(), _recorded())
    assert s["in"] == {"documents": 5, "tokens": 200} and s["recounted"] == {"tokens": 30}
    assert s["by_source"]["web"]["in"]["tokens"] == 100 and s["by_source"]["web"]["recounted"] == {"tokens": 30}
    assert "recounted" not in s["by_source"]["code"] and s["by_source"]["code"]["in"]["tokens"] == 100
    assert (s["by_lang"]["en"]["recounted"], s["by_lang"]["zh"]["recounted"]) == ({"tokens": 20}, {"tokens": 10})
    for block in [s, *s["by_source"].values(), *s["by_lang"].values()]:  # in + recounted = kept + dropped
        recounted = block.get("recounted", {}).get("tokens", 0)
        assert block["in"]["tokens"] + recounted == block["kept"]["tokens"] + block["dropped"]["tokens"]


def test_unchanged_counts_and_unknown_inputs_are_left_alone():
    same = _summary()
    recorded = {"kept": {"documents": 5, "tokens": 230}, "by_source": {"web": {"kept": {"documents": 3, "tokens": 130}}}}
    assert with_input_tokens(copy.deepcopy(same), recorded) == same  # nothing re-counted: nothing added
    assert with_input_tokens(copy.deepcopy(same), {}) == same  # an input folder no stage wrote
    other = {"kept": {"documents": 4, "tokens": 200}}  # other documents than the stage counted: not its input's figure
    assert with_input_tokens(copy.deepcopy(same), other) == same
    partial = with_input_tokens(copy.deepcopy(same), {"kept": {"documents": 5, "tokens": 200}})  # no per-source record
    assert partial["recounted"] == {"tokens": 30} and all("recounted" not in b for b in partial["by_source"].values())


def test_a_malformed_record_is_not_read_as_tokens():
    same = _summary()
    for recorded in ({"kept": "x"}, {"kept": {"documents": 5, "tokens": "200"}}, {"kept": {"documents": 5}},
                     {"kept": {"documents": 5, "tokens": 230}, "by_source": ["web"], "by_lang": {"en": "x"}}):
        assert with_input_tokens(copy.deepcopy(same), recorded) == same, recorded
