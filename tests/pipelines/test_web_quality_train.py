"""`curate train-classifier linear | web-embedding` and `curate web-quality` end to end."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from classifiers.linear import HashedLinearModel
from pipelines.cli import main as curate
from tests.helpers import assert_conservation, docs_frame, make_stage_dir

GOOD = [
    "The museum opened a new wing dedicated to the history of printing in the region.",
    "Scientists observed that the birds returned earlier each spring as the climate warmed.",
    "The author explains how the bridge was built and why its design has lasted a century.",
    "Students learned to measure the speed of sound with two microphones and a stopwatch.",
]
BAD = [
    "login | register | cart",
    "BUY NOW cheap deals click",
    "home about contact sitemap",
    "cookie settings accept all",
]


def write_jsonl(path: Path, texts: list[str]) -> Path:
    pd.DataFrame({"text": texts}).to_json(path, orient="records", lines=True)
    return path


@pytest.mark.slow
def test_train_linear_reference_vs_random_and_use_it(tmp_path: Path) -> None:
    pos = write_jsonl(tmp_path / "pos.jsonl", [f"{t} ({i})" for i in range(15) for t in GOOD])
    neg = tmp_path / "neg.txt"
    neg.write_text("\n".join(f"{t} {i}" for i in range(15) for t in BAD))
    rc = curate(
        [
            "train-classifier",
            "linear",
            "--positive",
            str(pos),
            "--negative",
            str(neg),
            "--output",
            str(tmp_path / "model"),
            "--n-features",
            "4096",
            "--epochs",
            "4",
            "--holdout",
            "0.2",
        ]
    )
    assert rc == 0
    card = json.loads((tmp_path / "model" / "model.json").read_text())
    assert card["heldout_metrics"]["n"] > 0 and card["heldout_metrics"]["auc"] > 0.9
    assert card["training_data"]["positive"] == [str(pos)]
    model = HashedLinearModel.load(tmp_path / "model")
    p = model.predict(["The museum explains how printing spread.", "cart login register"])
    assert p[0] > p[1]
    # the trained model drives the stage's linear scorer
    rows = [{"doc_id": f"d{i}", "text": (GOOD + BAD)[i % 8]} for i in range(16)]
    inp = make_stage_dir(tmp_path / "in", docs_frame(rows))
    rc = curate(
        [
            "web-quality",
            "--input",
            str(inp),
            "--output",
            str(tmp_path / "out"),
            "--quiet",
            f"scorer_options={{linear: {{model: {tmp_path / 'model'}}}}}",
        ]
    )
    assert rc == 0
    kept, _ = assert_conservation(inp, tmp_path / "out")
    stats = json.loads((tmp_path / "out" / "stats.json").read_text())
    assert stats["extra"]["scorers"]["linear"].startswith("linear-")


def test_train_linear_regression_from_labelled_file(tmp_path: Path, caplog) -> None:
    df = pd.DataFrame(
        {"body": [f"{t} {i}" for i in range(10) for t in GOOD + BAD], "rating": [4.0] * 4 * 10 + [1.0] * 4 * 10}
    )
    df["rating"] = [4.0 if i % 8 < 4 else 1.0 for i in range(len(df))]
    df.to_parquet(tmp_path / "judged.parquet")
    rc = curate(
        [
            "train-classifier",
            "linear",
            "--labelled",
            str(tmp_path / "judged.parquet"),
            "--text-column",
            "body",
            "--label-column",
            "rating",
            "--task",
            "regression",
            "--output",
            str(tmp_path / "reg"),
            "--n-features",
            "4096",
            "--epochs",
            "10",
        ]
    )
    assert rc == 0
    card = json.loads((tmp_path / "reg" / "model.json").read_text())
    assert card["config"]["task"] == "regression" and "mae" in card["heldout_metrics"]
    rc = curate(
        [
            "train-classifier",
            "linear",
            "--labelled",
            str(tmp_path / "judged.parquet"),
            "--text-column",
            "body",
            "--label-column",
            "rating",
            "--output",
            str(tmp_path / "bin"),
        ]
    )
    assert rc == 4 and "needs labels 0/1" in caplog.text  # one line, the exit code of an input problem


def test_train_web_embedding_from_annotations_and_stored_vectors(tmp_path: Path) -> None:
    from classifiers.embedding import get_embedder, write_embedding_part
    from classifiers.embedding_store import write_card

    texts = [f"{t} {i}" for i in range(8) for t in GOOD + BAD]
    ids = [f"p{i}" for i in range(len(texts))]
    docs = docs_frame([{"doc_id": d, "text": t} for d, t in zip(ids, texts, strict=True)])
    inp = make_stage_dir(tmp_path / "run" / "30_semdedup", docs)
    settings = {"model": "minilm-static", "max_seq_length": 128, "mask_digits": False}
    emb = get_embedder(**settings)
    store = tmp_path / "run" / "30_semdedup" / "artifacts" / "embeddings"
    write_embedding_part(
        store / "part-00000.parquet", ids[:40], emb.embed(texts[:40])
    )  # the rest is embedded by the trainer
    write_card(store, {"embedder": settings})
    pd.DataFrame({"doc_id": ids, "score": [4.5 if i % 8 < 4 else 0.5 for i in range(len(ids))]}).to_json(
        tmp_path / "ann.jsonl", orient="records", lines=True
    )
    rc = curate(
        [
            "train-classifier",
            "web-embedding",
            "--input",
            str(inp),
            "--embeddings",
            str(store),
            "--annotations",
            str(tmp_path / "ann.jsonl"),
            "--output",
            str(tmp_path / "head"),
            "--ridge",
            "0.1",
        ]
    )
    assert rc == 0
    card = json.loads((tmp_path / "head" / "model.json").read_text())
    assert card["embedder"]["model"] == "minilm-static" and card["dim"] == emb.dim
    assert card["heldout_metrics"]["spearman"] > 0.5
    from classifiers.scorer import Batch
    from classifiers.web_quality import get_scorer

    head = get_scorer("embedding", {"model": str(tmp_path / "head")})
    s = head.score(Batch([GOOD[0], BAD[0]]))
    assert s[0] > s[1]


def test_train_web_embedding_with_the_annotation_api(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import classifiers.annotation as annotation
    from classifiers.annotation import AnnotationResult

    seen: dict[str, object] = {}

    class FakeAnnotator:
        model_id = "fake:rubric-test"

        def annotate(self, texts: list[str], rubric) -> AnnotationResult:
            seen["rubric"] = rubric.name
            scores = np.array([4.0 if any(g.split()[1] in t for g in GOOD) else 1.0 for t in texts])
            failures: list[str | None] = [None] * len(texts)
            if not seen.get(
                "failed"
            ):  # one failure is tolerated (the command judges in steps: the first step's first text)
                scores[0], failures[0], seen["failed"] = np.nan, "parse", True
            return AnnotationResult(scores=scores, raw=[""] * len(texts), failures=failures)

    monkeypatch.setattr(annotation, "get_annotator", lambda cfg: FakeAnnotator())
    texts = [f"{t} {i}" for i in range(6) for t in GOOD + BAD]
    docs = docs_frame([{"doc_id": f"q{i}", "text": t} for i, t in enumerate(texts)])
    inp = make_stage_dir(tmp_path / "in", docs)
    rc = curate(
        [
            "train-classifier",
            "web-embedding",
            "--input",
            str(inp),
            "--embedder-model",
            "minilm-static",
            "--output",
            str(tmp_path / "head"),
            "--sample",
            "40",
        ]
    )
    assert rc == 0
    card = json.loads((tmp_path / "head" / "model.json").read_text())
    assert seen["rubric"] == "web_quality"
    assert card["labels"]["annotator"] == "fake:rubric-test" and card["labels"]["failures"] == 1
    assert card["n_train"] + card["heldout_metrics"]["n"] == 39
