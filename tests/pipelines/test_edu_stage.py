"""The edu_score stage on 2-partition frames: annotate → distil → score → decide, conservation, caching."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from classifiers.scorer import Batch
from curation.config import ConfigError
from curation.errors import ServiceError
from pipelines.recipe import load_recipe, stage_config
from pipelines.runner import run_stage
from pipelines.stages import edu_score_steps as steps
from pipelines.stages.edu_score import EduScoreConfig
from tests.classifiers.test_annotation_openai import FakeLLMServer
from tests.helpers import assert_conservation, docs_frame, make_stage_dir, run_one

WORDS = ["theorem proof integral", "energy equation velocity", "shoes on sale today", "derivative of the velocity", "celebrity gossip news"]


def corpus(n: int = 36, garbled: tuple[int, ...] = (7,)) -> pd.DataFrame:
    rows = []
    for i in range(n):
        text = f"Document {i}. " + " ".join([WORDS[i % 5]] * (1 + i % 3))
        if i in garbled:
            text += " [[garbled]]"
        rows.append({"doc_id": f"d{i:02d}", "text": text, "source": ["web", "math_science", "code"][i % 3]})
    return docs_frame(rows)


def overrides(server: FakeLLMServer, **kw: object) -> list[str]:
    base = {"annotator": "openai", "annotator_model": "fake-judge", "annotator_base_url": server.url,
            "annotator_max_retries": 0, "sample_size": 40, "min_annotations": 5} | kw
    return [f"edu_score.{k}={v}" for k, v in base.items()]


def test_config_errors_say_what_to_change():
    with pytest.raises(ConfigError, match="needs an annotator"):
        EduScoreConfig.from_dict({"annotator": "none", "scorer": "distilled"})
    with pytest.raises(ConfigError, match="band_names"):
        EduScoreConfig.from_dict({"band_edges": [1.0, 2.0, 3.0]})
    with pytest.raises(ConfigError, match="annotator_model"):
        EduScoreConfig.from_dict({"annotator": "openai"})
    with pytest.raises(ConfigError, match="choose auto"):
        EduScoreConfig.from_dict({"scorer": "/no/such/folder"})
    cfg = stage_config(load_recipe(None), "edu_score", EduScoreConfig)
    assert cfg.threshold == 3.0 and cfg.annotator == "none" and cfg.scorer == "auto"


def test_hashed_distillation_scores_every_document_and_ledgers_unreadable_answers(tmp_path):
    inp = make_stage_dir(tmp_path / "in", corpus())
    with FakeLLMServer() as srv:
        res = run_one("edu_score", inp, tmp_path / "out", overrides(srv, distil="hashed", scorer="distilled",
                                                                      on_annotation_failure="ledger"))
    kept, ledger = assert_conservation(inp, tmp_path / "out")
    assert ledger["doc_id"].tolist() == ["d07"] and ledger["reason"].tolist() == ["annotation_failed"]
    detail = json.loads(ledger["detail"].iloc[0])
    assert detail["failure"] == "no_final_score" and detail["annotator"].startswith("openai:fake-judge")
    code = kept[kept["source"] == "code"]
    assert code["edu_score"].isna().all() and code["edu_band"].isna().all() and code["edu_rich"].isna().all()
    scored = kept[kept["source"] != "code"]
    assert scored["edu_score"].between(0, 5).all() and set(scored["edu_band"]) <= {"low", "medium", "high"}
    science = scored["text"].str.contains("theorem|energy|derivative")
    assert scored.loc[science, "edu_score"].mean() > scored.loc[~science, "edu_score"].mean() + 1.0
    extra = res.stats["extra"]
    assert extra["annotation"]["stats"]["failure_reasons"] == {"no_final_score": 1}
    assert extra["distillation"]["metrics"]["heldout"]["n"] > 0
    assert extra["scorer"]["card"]["kind"] == "hashed_linear" and "embedding" not in extra
    assert not (tmp_path / "out" / "artifacts" / "embeddings").exists()  # the hashed path embeds nothing
    assert res.stats["dropped_by_reason"] == {"annotation_failed": {"documents": 1, "tokens": int(corpus()["n_tokens"].iloc[7])}}


def test_keep_policy_never_drops(tmp_path):
    """The default: a scoring stage annotates and removes nothing, an unreadable answer included."""
    inp = make_stage_dir(tmp_path / "in", corpus())
    with FakeLLMServer() as srv:
        res = run_one("edu_score", inp, tmp_path / "out", overrides(srv, distil="hashed", scorer="distilled"))
    kept, ledger = assert_conservation(inp, tmp_path / "out")
    assert len(ledger) == 0 and len(kept) == 36 and res.stats["extra"]["ledgered_annotation_failures"] == 0


def test_unreachable_annotator_fails_loudly(tmp_path):
    inp = make_stage_dir(tmp_path / "in", corpus())
    bad = ["edu_score.annotator=openai", "edu_score.annotator_model=m", "edu_score.annotator_base_url=http://127.0.0.1:9/v1",
           "edu_score.annotator_max_retries=0", "edu_score.distil=hashed"]
    with pytest.raises(ServiceError, match="failed in transport .*nothing answers at http://127.0.0.1:9/v1"):
        run_one("edu_score", inp, tmp_path / "out", bad)
    assert not (tmp_path / "out" / "_SUCCESS").exists()


@pytest.mark.slow
def test_real_llm_path_distils_a_head_and_a_changed_threshold_reuses_every_model(tmp_path, monkeypatch):
    inp = make_stage_dir(tmp_path / "in", corpus())
    with FakeLLMServer() as srv:
        res = run_one("edu_score", inp, tmp_path / "a", overrides(srv))
        assert_conservation(inp, tmp_path / "a")
        extra = res.stats["extra"]
        assert extra["scorer"]["card"]["name"] == "edu_distilled"  # auto + a real (openai) annotator → distilled head
        assert "distilled-" in extra["scorer"]["path"]
        assert extra["distillation"]["metrics"]["heldout"]["spearman"] > 0.5
        assert extra["embedding"]["count"] == 24  # web + math_science documents, embedded once
        n_requests = len(srv.requests)

        def boom(*args: object, **kwargs: object) -> None:
            raise AssertionError("a model ran again for a decision change")

        monkeypatch.setattr(steps, "score_part", boom)
        monkeypatch.setattr(steps, "embed_part", boom)
        res2 = run_one("edu_score", inp, tmp_path / "b", overrides(srv, threshold=4.0, band_edges="[1.0, 4.0]"))
        assert len(srv.requests) == n_requests  # no annotation request either
    kept_a = pd.read_parquet(tmp_path / "a" / "docs").set_index("doc_id")
    kept_b = pd.read_parquet(tmp_path / "b" / "docs").set_index("doc_id")
    pd.testing.assert_series_equal(kept_a["edu_score"], kept_b.loc[kept_a.index, "edu_score"])
    assert (kept_b["edu_rich"].fillna(False) <= kept_a["edu_rich"].fillna(False)).all()
    assert res2.stats["extra"]["decision"]["threshold"] == 4.0


def test_a_head_that_does_not_score_embeds_only_the_annotated_sample(tmp_path, monkeypatch):
    """With scorer: fast (or the local judge under --profile cpu) the distilled head is reported, not
    used: only its sample needs transformer vectors, and the scores do not depend on them (every
    scored document was embedded: 387 s on a CPU against 4.9 s without the judge)."""
    inp = make_stage_dir(tmp_path / "in", corpus(garbled=()))
    run_one("edu_score", inp, tmp_path / "plain", ["edu_score.scorer=fast"])
    plain = pd.read_parquet(tmp_path / "plain" / "docs").set_index("doc_id")["edu_score"]

    def boom(*args: object, **kwargs: object) -> None:
        raise AssertionError("the fast scorer scored again: its step's key named vectors it does not read")

    monkeypatch.setattr(steps, "score_part", boom)
    with FakeLLMServer() as srv:
        res = run_one("edu_score", inp, tmp_path / "judged", overrides(srv, sample_size=12, scorer="fast"))
    extra = res.stats["extra"]
    assert extra["scorer"]["card"]["name"] == "edu_fast" and extra["distillation"]["metrics"]["heldout"]["n"] > 0
    sample = pd.read_parquet(tmp_path / "judged" / "artifacts" / "annotations" / "annotations.parquet")["doc_id"]
    embedded = pd.read_parquet(tmp_path / "judged" / "artifacts" / "embeddings" / "part-00000.parquet")["doc_id"]
    assert len(sample) == 12 and sorted(embedded) == sorted(sample)  # of the 24 scored documents
    assert extra["embedding"]["count"] == 12
    judged = pd.read_parquet(tmp_path / "judged" / "docs").set_index("doc_id")["edu_score"]
    pd.testing.assert_series_equal(judged, plain.loc[judged.index])


@pytest.mark.slow
def test_semdedup_vectors_are_reused_and_only_missing_documents_embedded(tmp_path, monkeypatch):
    from classifiers.edu import get_edu_scorer
    from classifiers.embedding import embedder_name, get_embedder
    from classifiers.embedding_head import DEFAULT_EMBEDDER
    from classifiers.embedding_store import write_card, write_embedding_part

    df = corpus(garbled=())
    run = tmp_path / "run"
    inp = make_stage_dir(run / "60_code_web", df)
    emb = get_embedder(**DEFAULT_EMBEDDER)
    up = run / "30_semdedup" / "artifacts" / "embeddings"
    parts = np.array_split(np.arange(len(df)), 2)
    upstream_ids = []
    for n, idx in enumerate(parts):
        part = df.iloc[idx]
        part = part[(part["source"] != "code") & (part.index % 2 == 0)]  # semdedup embedded half of them
        upstream_ids += part["doc_id"].tolist()
        write_embedding_part(up / f"part-{n:05d}.parquet", part["doc_id"].tolist(), emb.embed(part["text"].tolist()), "float16")
    write_card(up, {"embedder": {**DEFAULT_EMBEDDER, "batch_size": 64}, "name": embedder_name("all-MiniLM-L6-v2", 256, True)})
    (run / "30_semdedup" / "_SUCCESS").write_text("{}")  # a finished stage: the runner resolves its artifacts
    embedded: list[str] = []
    real = type(emb).embed

    def counting(self: object, texts: list[str]) -> np.ndarray:
        embedded.extend(texts)
        return real(self, texts)

    monkeypatch.setattr(type(emb), "embed", counting)
    rec = load_recipe(None, ["edu_score.annotator=none"])
    import dask

    with dask.config.set(scheduler="synchronous"):
        res = run_stage("edu_score", rec, stage_dir=run / "70_edu_score", input_dir=inp, run_dir=run, quiet=True)
    kept, _ = assert_conservation(inp, run / "70_edu_score")
    scored = df[df["source"] != "code"]
    assert len(embedded) == len(scored) - len(upstream_ids)
    assert not set(embedded) & set(df.set_index("doc_id").loc[upstream_ids, "text"])
    assert res.stats["extra"]["embedding"]["reused_upstream"] == len(upstream_ids)
    assert res.stats["extra"]["scorer"]["choice"] == "auto" and res.stats["extra"]["scorer"]["card"]["name"] == "edu_default"
    direct = get_edu_scorer().score(Batch(scored["text"].tolist()))
    got = kept.set_index("doc_id").loc[scored["doc_id"], "edu_score"].to_numpy()
    np.testing.assert_allclose(got, direct, atol=0.02)  # float16 storage of upstream vectors


def test_fast_scorer_embeds_nothing_and_scores_with_the_shipped_cpu_model(tmp_path, monkeypatch):
    """``scorer: fast`` (``--profile cpu``) scores with ``classifiers/models/edu_fast`` and never runs the transformer."""
    from classifiers.edu import fast_model_dir, get_edu_scorer
    from classifiers.embedding import get_embedder

    df = corpus(garbled=())
    run = tmp_path / "run"
    inp = make_stage_dir(run / "60_code_web", df)
    emb = get_embedder(model="all-MiniLM-L6-v2", max_seq_length=256, mask_digits=True)
    embedded: list[str] = []
    monkeypatch.setattr(type(emb), "embed", lambda self, texts: embedded.extend(texts) or np.zeros((len(texts), 384)))
    rec = load_recipe(None, ["edu_score.annotator=none", "edu_score.scorer=fast"])
    import dask

    with dask.config.set(scheduler="synchronous"):
        res = run_stage("edu_score", rec, stage_dir=run / "70_edu_score", input_dir=inp, run_dir=run, quiet=True)
    kept, _ = assert_conservation(inp, run / "70_edu_score")
    assert embedded == [] and "embedding" not in res.stats["extra"]
    assert res.stats["extra"]["scorer"]["choice"] == "fast" and res.stats["extra"]["scorer"]["card"]["name"] == "edu_fast"
    scored = df[df["source"] != "code"]
    direct = get_edu_scorer(fast_model_dir()).score(Batch(scored["text"].tolist()))
    got = kept.set_index("doc_id").loc[scored["doc_id"], "edu_score"].to_numpy()
    np.testing.assert_allclose(got, direct, atol=1e-6)


def test_cpu_profile_reaches_run_and_single_stage_commands(tmp_path):
    from pipelines.recipe import profile_overrides

    assert "edu_score.fallback_scorer=fast" in profile_overrides("cpu") and "semdedup.model=minilm-static-bi" in profile_overrides("cpu")
    assert profile_overrides("cpu", "edu_score") == ["fallback_scorer=fast"]  # no judge runs by default in any profile
    with pytest.raises(ConfigError, match="does not exist; choose one of"):
        profile_overrides("tpu")
    rec = load_recipe(None, profile_overrides("cpu"))
    assert stage_config(rec, "edu_score", EduScoreConfig).fallback_scorer == "fast"
    from pathlib import Path

    from pipelines.cli import main

    repo = Path(__file__).resolve().parents[2]
    argv = ["run", str(repo / "pipelines/configs/glm45.yaml"), "--input", str(repo / "sample_data"), "--output", str(tmp_path / "r"), "--dry-run"]
    assert main([*argv, "--profile", "cpu"]) == 0
    assert main([*argv, "--profile", "tpu"]) == 2


def test_judge_annotations_are_used_to_measure_the_scorer_in_use(tmp_path):
    from pipelines.stages.edu_score_distil import judge_agreement

    (tmp_path / "ann").mkdir()
    (tmp_path / "scores").mkdir()
    pd.DataFrame({"doc_id": ["a", "b", "c", "d", "e"], "score": [0.0, 1.0, 3.0, 4.0, None]}).to_parquet(tmp_path / "ann" / "annotations.parquet")
    pd.DataFrame({"doc_id": ["a", "b"], "edu_score": [0.5, 1.5]}).to_parquet(tmp_path / "scores" / "part-00000.parquet")
    pd.DataFrame({"doc_id": ["c", "d", "e"], "edu_score": [2.5, 4.5, 3.0]}).to_parquet(tmp_path / "scores" / "part-00001.parquet")
    out = judge_agreement(tmp_path / "ann", tmp_path / "scores", 3.0)
    assert out == {"documents": 4, "mae": 0.5, "spearman": 1.0, "agreement_at_threshold": 0.75}


def test_annotator_settings_are_one_nested_config_with_the_flat_keys_still_working():
    from pipelines.recipe import load_recipe, stage_config
    from pipelines.stages import load_stage

    cls = load_stage("edu_score").config_cls
    flat = stage_config(load_recipe(None, ["edu_score.annotator=openai", "edu_score.annotator_model=judge", "edu_score.annotator_concurrency=3"]), "edu_score", cls)
    nested = cls.from_dict({"annotator": "openai", "annotation": {"model": "judge", "concurrency": 3}})
    assert flat.annotation == nested.annotation and flat.annotation.concurrency == 3
    assert flat.flat_dict()["annotator_concurrency"] == 3 and "annotation" not in flat.flat_dict()  # hashed as before
    assert flat.annotation.backend_config("openai")["concurrency"] == 3
    with pytest.raises(ConfigError, match="concurrency"):
        cls.from_dict({"annotation": {"concurrency": 0}})


def test_a_page_too_short_to_judge_gets_no_score_and_keeps_its_web_level(tmp_path):
    """A one-word crawled page ("Europa") was scored high by both shipped scorers and went to web_edu/high."""
    from curation.mixture.policy import Policy, doc_groups

    df = pd.concat([corpus(n=12, garbled=()), docs_frame([
        {"doc_id": "title", "text": "Europa", "source": "web", "quality_level": "medium"},
        {"doc_id": "short", "text": "Photosynthesis turns light into sugar", "source": "web", "quality_level": "medium"}])],
        ignore_index=True)
    inp = make_stage_dir(tmp_path / "in", df)
    run_one("edu_score", inp, tmp_path / "out", ["edu_score.scorer=fast"])
    kept, _ = assert_conservation(inp, tmp_path / "out")
    by_id = kept.set_index("doc_id")
    assert pd.isna(by_id.loc["title", "edu_score"]) and pd.isna(by_id.loc["title", "edu_band"])
    assert by_id.loc["short", "edu_band"] in ("low", "medium", "high")  # 5 tokens: scored
    groups = doc_groups(kept.set_index("doc_id").loc[["title"]].reset_index(), Policy(repeat={"*": 1.0}))
    assert groups["group"].tolist() == ["web/medium"]
    run_one("edu_score", inp, tmp_path / "all", ["edu_score.scorer=fast", "edu_score.min_tokens=0"])
    every, _ = assert_conservation(inp, tmp_path / "all")
    assert every.set_index("doc_id").loc["title", "edu_band"] in ("low", "medium", "high")
