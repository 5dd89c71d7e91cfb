"""A run whose documents quote the end-of-document token's text (``<|endoftext|>``, as a reasoning
trace about tokenizers does), exported for the trainer: every document is its ids and exactly one
EOD, at its end (Megatron's --reset-attention-mask --reset-position-ids --eod-mask-loss cut at every
EOD), and the export's ids are the counts the run planned with."""

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pipelines.cli import main as curate

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"
EOD = "<|endoftext|>"
PHASE = "midtrain_reasoning_32k"  # best-fit packed: the phase the three Megatron flags are for


@pytest.fixture(scope="module")
def quoting_run(tmp_path_factory):
    """The recipe on the sample's reasoning traces, every other one quoting the EOD token's text."""
    src = SAMPLE / "reasoning" / "reasoning.jsonl"
    if not src.is_file():
        pytest.skip("sample_data/ has not been generated")
    root = tmp_path_factory.mktemp("eodtext")
    (root / "in" / "reasoning").mkdir(parents=True)
    records = [json.loads(line) for line in src.read_text(encoding="utf-8").splitlines() if line.strip()]
    for r in records[::2]:
        r["text"] = r["text"].replace("\n\n", f"\n\nAside: Qwen ends each document with {EOD} (id 151643).\n\n", 1) + f"\n{EOD}"
    for r in records[1::6]:  # a chat turn's end: a special token of its own, counted as one id
        r["text"] += "\n<|im_start|>assistant\nDone.<|im_end|>"
    (root / "in" / "reasoning" / "reasoning.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    run = root / "run"
    assert curate(["run", "pipelines/configs/glm45.yaml", "--input", str(root / "in"), "--output", str(run), "--scheduler", "synchronous",
                   "--quiet", "--profile", "cpu"]) == 0
    return run


def shard_texts(run: Path) -> dict[str, str]:
    m = json.loads((run / "80_mixture" / "manifests" / f"{PHASE}.json").read_text())
    frames = [pd.read_parquet(run / "80_mixture" / s["path"]) for g in m["groups"] for s in g["shards"]]
    docs = pd.concat(frames)
    texts = dict(zip(docs["doc_id"], docs["text"], strict=True))
    assert sum(EOD in t for t in texts.values()) >= 10  # the quoting documents reached the phase
    return texts


def test_datasets_export_gives_each_document_one_eod_at_its_end(quoting_run, tmp_path):
    import datasets

    from curation.tokens import encode

    out = tmp_path / "datasets"
    assert curate(["export", "datasets", str(quoting_run), "--output", str(out), "--phase", PHASE, "--scheduler", "synchronous",
                   "--quiet"]) == 0
    eod = json.loads((out / "export.json").read_text())["eod_id"]
    assert eod == 151643
    texts = shard_texts(quoting_run)
    rows = datasets.load_from_disk(str(out / PHASE))
    seen = set()
    for row in rows:
        ids = np.asarray(row["input_ids"])
        assert len(row["document_lengths"]) == len(row["doc_ids"]) and sum(row["document_lengths"]) == len(ids)
        ends = np.cumsum(row["document_lengths"]) - 1
        assert np.flatnonzero(ids == eod).tolist() == ends.tolist()  # one EOD per document, at its end; none inside
        starts = np.concatenate([[0], ends[:-1] + 1])
        for doc, a, b in zip(row["doc_ids"], starts, ends, strict=True):
            assert ids[a:b].tolist() == encode([texts[doc]], "qwen")[0].tolist(), doc  # whole documents (none cut: 32K bins)
            seen.add(doc)
    assert any(EOD in texts[d] for d in seen)


def test_megatron_export_cuts_the_bins_into_the_documents_only(quoting_run, tmp_path):
    """What Megatron's three flags make of a .bin: a document between consecutive EODs. Splitting the
    file at its EODs gives exactly the documents' ids (a bin's padding gives a run of pad ids)."""
    from curation.export.megatron_index import read_index
    from curation.tokens import encode

    out = tmp_path / "megatron"
    assert curate(["export", "megatron", str(quoting_run), "--output", str(out), "--phase", PHASE, "--scheduler", "synchronous",
                   "--quiet"]) == 0
    exp = json.loads((out / "export.json").read_text())
    eod = exp["eod_id"]
    texts = shard_texts(quoting_run)
    ids = {d: tuple(x.tolist()) for d, x in zip(texts, encode(list(texts.values()), "qwen"), strict=True)}
    assert all(eod not in x for x in ids.values())
    pieces = []
    for prefix in exp["phases"][PHASE]["groups"]["reasoning/all"]["prefixes"]:
        index = read_index(out / prefix)
        data = np.fromfile(str(out / prefix) + ".bin", dtype=index["dtype"])
        assert len(data) == int(index["lengths"].sum())
        cuts = np.flatnonzero(data == eod)
        assert len(cuts) and cuts[-1] == len(data) - 1
        pieces += [tuple(p.tolist()) for p in np.split(data, cuts + 1)[:-1]]
    docs = [p[:-1] for p in pieces if len(p) > 1 and p[0] != exp["pad_id"]]  # a document's ids and its EOD; pads and an EOD end a bin
    known = set(ids.values())
    assert docs and all(d in known for d in docs)
    assert any(EOD in texts[d] and ids[d] in set(docs) for d in texts)


def test_another_eod_token_held_by_a_document_stops_the_export(quoting_run, tmp_path, caplog):
    """--eod-token <|im_end|>: a document holding that token would reach Megatron as two documents;
    its counts (the plan's) hold it as one id, so the export stops (exit 4) and writes nothing."""
    assert any("<|im_end|>" in t for t in shard_texts(quoting_run).values())
    out = tmp_path / "imend"
    assert curate(["export", "datasets", str(quoting_run), "--output", str(out), "--phase", PHASE, "--eod-token", "<|im_end|>",
                   "--scheduler", "synchronous", "--quiet"]) == 4
    assert "holds the end-of-document id 151645" in caplog.text and not out.exists()
    # where: the phase, the shard and the document, one the shards hold with that token
    said = re.search(rf"phase {PHASE}, shard (shards/{PHASE}/\S+\.parquet): document (\S+) \(row \d+\) holds", caplog.text)
    assert said and "<|im_end|>" in shard_texts(quoting_run)[said[2]]
    assert said[2] in pd.read_parquet(quoting_run / "80_mixture" / said[1])["doc_id"].tolist()
