"""A scorer of the user's own joins web_quality's ensemble by ``kind: module:factory``, without
editing the package (the scorer protocol of classifiers/scorer.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from classifiers.web_quality import get_scorer
from tests.helpers import assert_conservation, importable_module, make_stage_dir, run_one
from tests.pipelines.test_web_quality_stage import corpus

TYPE_TOKEN = '''
import numpy as np


class TypeToken:
    """Distinct words over words: menus repeat little, prose repeats function words."""

    needs = frozenset({"text"})

    def __init__(self, name, min_words=1):
        self.name, self.min_words, self.version = name, min_words, f"type-token-1-{min_words}"

    def score(self, batch):
        out = []
        for t in batch.clean_texts():
            words = t.lower().split()
            out.append(len(words) / max(len(set(words)), 1) if len(words) >= self.min_words else 0.0)
        return np.array(out, dtype=np.float64)
'''


@pytest.fixture
def module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    yield from importable_module(tmp_path, monkeypatch, "my_scorers", TYPE_TOKEN)


def test_an_importable_factory_is_a_scorer_kind(tmp_path: Path, module: str) -> None:
    inp = make_stage_dir(tmp_path / "in", corpus(), nparts=2)
    run_one("web_quality", inp, tmp_path / "out", ["web_quality.scorers=[heuristics, ttr]",
                                                    "web_quality.scorer_options={ttr: {kind: 'my_scorers:TypeToken', min_words: 2}}"])
    kept, _ = assert_conservation(inp, tmp_path / "out")
    web = kept[kept["source"] == "web"]
    assert web["quality_score_ttr"].notna().all() and web["quality_score_ttr"].gt(0).all()
    assert get_scorer("ttr", {"kind": "my_scorers:TypeToken", "min_words": 2}).version == "type-token-1-2"


def test_a_factory_that_cannot_be_imported_says_where_to_put_it() -> None:
    with pytest.raises(ValueError, match=r"kind 'no_such_module:X'.*cannot be imported.*PYTHONPATH"):
        get_scorer("mine", {"kind": "no_such_module:X"})
    with pytest.raises(ValueError, match=r"unknown kind 'nope'.*module:factory"):
        get_scorer("mine", {"kind": "nope"})
