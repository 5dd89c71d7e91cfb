"""The sample run's FIM'd code: ``export.json``'s ``fim_tokens`` count each document's own text from the ids
of its FIM'd text (curation.export.fim_counts), and those counts are the own texts' own counts."""

import json

import pyarrow.parquet as pq

from curation.export.fim_counts import own_counts
from curation.mixture.fim import FimSentinels, fim_inverse
from curation.tokens import count_tokens, encode

S = FimSentinels()


def test_own_counts_of_the_sample_runs_fim_d_code(finished_run):
    """The sample run's FIM'd documents: the counts from their ids are those of their own texts."""
    mix = next(finished_run.glob("*_mixture"))
    texts, modes = [], []
    for path in sorted((mix / "manifests").glob("pretrain_*.json")):
        m = json.loads(path.read_text())
        for g in m["groups"]:
            for s in g["shards"]:
                t = pq.read_table(mix / s["path"], columns=["text", "fim"])
                for text, mode in zip(t.column("text").to_pylist(), t.column("fim").to_pylist(), strict=True):
                    if mode in ("psm", "spm"):
                        texts.append(text)
                        modes.append(mode)
    assert len(texts) > 100
    got = own_counts(texts, modes, encode(texts, "qwen"), S, "qwen")
    assert (
        got.tolist() == count_tokens([fim_inverse(t, m, S) for t, m in zip(texts, modes, strict=True)], "qwen").tolist()
    )
