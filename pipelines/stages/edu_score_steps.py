"""The sub-steps of ``edu_score`` (see :mod:`pipelines.stages.edu_score`): each writes one artifact folder."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any

import dask.dataframe as dd
import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from classifiers.embedding_store import embedding_card, read_embedding_part, write_card, write_embedding_part
from classifiers.sampling import allocate, candidates, select, stratum_counts
from pipelines.io import write_frame, write_json
from pipelines.progress import compute_with_progress

log = logging.getLogger(__name__)

#: Score histogram resolution (0–5 in bins of 0.01): band counts for any edge on a 0.01 grid.
HIST_BINS = 500
EMBED_META = pd.DataFrame({k: pd.Series(dtype="float64") for k in ("reused", "embedded", "seconds")})
SCORE_META = pd.DataFrame({"part": pd.Series(dtype="int64"), "source": pd.Series(dtype=object), "bin": pd.Series(dtype="int64"),
                           "count": pd.Series(dtype="int64"), "seconds": pd.Series(dtype="float64")})


# --------------------------------------------------------------------------- sample


def write_sample(docs: dd.DataFrame, key: dict[str, Any], out: Path, ctx: Any) -> None:
    """Two passes: stratum counts, then candidates below each stratum's priority cut; then the texts."""
    sources, edges, seed = list(key["sources"]), list(key["edges"]), int(key["seed"])
    light = docs[["doc_id", "source", "n_tokens"]]
    light = light[light["source"].isin(sources)]
    counts_graph = light.map_partitions(lambda df: stratum_counts(df, edges).rename_axis("stratum").reset_index(name="n"),
                                        meta=pd.DataFrame({"stratum": pd.Series(dtype=object), "n": pd.Series(dtype="int64")}))
    counts_df = compute_with_progress(counts_graph, ctx.client, "edu_score: sample (count)", ctx.quiet)
    counts = {str(k): int(v) for k, v in counts_df.groupby("stratum")["n"].sum().items()}
    quotas = allocate(counts, int(key["size"]), key["allocation"])
    meta = light._meta.assign(stratum=pd.Series(dtype=object), priority=pd.Series(dtype="float64"))
    cands = compute_with_progress(light.map_partitions(candidates, quotas, counts, edges, seed, meta=meta),
                                  ctx.client, "edu_score: sample (candidates)", ctx.quiet)
    chosen = select(cands, quotas)
    if len(chosen) < sum(quotas.values()):  # the priority cut was too tight (very unlikely): take every candidate
        cands = compute_with_progress(light.map_partitions(candidates, quotas, counts, edges, seed, float("inf"), meta=meta),
                                      ctx.client, "edu_score: sample (all)", ctx.quiet)
        chosen = select(cands, quotas)
    ids = set(chosen["doc_id"].astype(str))
    texts_graph = docs[["doc_id", "text"]].map_partitions(lambda df: df[df["doc_id"].astype(str).isin(ids)],
                                                          meta=docs[["doc_id", "text"]]._meta)
    texts = compute_with_progress(texts_graph, ctx.client, "edu_score: sample (texts)", ctx.quiet)
    sample = chosen.merge(texts.drop_duplicates("doc_id"), on="doc_id", how="left")
    write_frame(sample.reset_index(drop=True), out / "sample.parquet")
    write_json(out / "sample.json", {"strata": counts, "quotas": quotas, "size": len(sample)})


# --------------------------------------------------------------------------- annotate


def annotate(sample_dir: Path, annotator: Any, rubric: Any, out: Path) -> None:
    """Annotate the sample (through the persistent cache) and write scores, answers and failures."""
    sample = pd.read_parquet(sample_dir / "sample.parquet")
    res = annotator.annotate(sample["text"].fillna("").tolist(), rubric)
    frame = pd.DataFrame({
        "doc_id": sample["doc_id"].astype(str), "source": sample["source"], "n_tokens": sample["n_tokens"],
        "stratum": sample["stratum"], "score": res.scores, "failure": res.failures, "raw": res.raw,
        "tokens_in": res.tokens_in or [0] * len(sample), "tokens_out": res.tokens_out or [0] * len(sample),
        "text": sample["text"],
    })
    write_frame(frame, out / "annotations.parquet")
    ok = frame["score"].notna()
    write_json(out / "annotations.json", {
        "annotator": annotator.model_id, "rubric": rubric.version, "rubric_name": rubric.name,
        "annotated": int(ok.sum()), "failed": int((~ok).sum()),
        "mean_score": round(float(frame.loc[ok, "score"].mean()), 4) if ok.any() else None,
        "stats": res.stats.to_dict(),
    })


# --------------------------------------------------------------------------- embeddings


def compatible_upstream(folder: Path | None, embedder: dict[str, Any]) -> Path | None:
    """SemDeDup's embeddings when they were made with ``embedder``'s settings, else None."""
    if folder is None:
        return None
    card = embedding_card(folder).get("embedder", {})
    same = all(card.get(k) == v for k, v in embedder.items())
    if not same:
        log.warning("edu_score: semdedup embeddings use %s, the edu head needs %s; embedding again", card, embedder)
        return None
    return folder


def upstream_tag(folder: Path | None) -> str | None:
    """What identifies upstream vectors in cache keys: the card's name and count."""
    if folder is None:
        return None
    card = embedding_card(folder)
    return f"{folder.parent.parent.name}:{card.get('name')}:{card.get('count')}"


def embed_missing(docs: dd.DataFrame, sources: tuple[str, ...], upstream: Path | None, cfg: Any, out: Path, ctx: Any) -> None:
    """Embed the scored documents that are not in ``upstream`` (per input partition, same layout)."""
    from classifiers.edu import DEFAULT_EMBEDDER
    from classifiers.embedding import embedder_name

    settings = {**DEFAULT_EMBEDDER, "device": cfg.embed_device, "batch_size": cfg.embed_batch_size}
    started = time.time()
    graph = docs[["doc_id", "text", "source"]].map_partitions(
        _embed_part, str(out), str(upstream) if upstream else None, settings, sources, meta=EMBED_META)
    stats = compute_with_progress(graph, ctx.client, "edu_score: embed missing", ctx.quiet)
    embedded = int(stats["embedded"].sum())
    write_card(out, {
        "embedder": dict(DEFAULT_EMBEDDER), "name": embedder_name(DEFAULT_EMBEDDER["model"], DEFAULT_EMBEDDER["max_seq_length"], DEFAULT_EMBEDDER["mask_digits"]),
        "count": embedded,
        "reused_upstream": int(stats["reused"].sum()), "sources": list(sources), "normalized": True, "dtype": "float16",
        "seconds": round(time.time() - started, 3),
        "docs_per_second": round(embedded / max(float(stats["seconds"].sum()), 1e-9), 2) if embedded else None,
    })


def _upstream_ids(upstream: str | None, number: int) -> set[str]:
    if upstream is None:
        return set()
    path = Path(upstream) / f"part-{number:05d}.parquet"
    return set(pq.read_table(path, columns=["doc_id"]).column("doc_id").to_pylist()) if path.exists() else set()


def _embed_part(df: pd.DataFrame, out: str, upstream: str | None, settings: dict[str, Any], sources: tuple[str, ...],
                partition_info: dict | None = None) -> pd.DataFrame:
    from classifiers.embedding import get_embedder

    number = (partition_info or {}).get("number", 0)
    rows = df[df["source"].isin(sources)]
    have = _upstream_ids(upstream, number)
    todo = rows[~rows["doc_id"].astype(str).isin(have)]
    started = time.perf_counter()
    if len(todo):
        vecs = get_embedder(**settings).embed(todo["text"].fillna("").tolist())
    else:
        vecs = np.zeros((0, 1), dtype=np.float32)
    write_embedding_part(Path(out) / f"part-{number:05d}.parquet", todo["doc_id"].astype(str).tolist(), vecs, "float16")
    return pd.DataFrame({"reused": [float(len(rows) - len(todo))], "embedded": [float(len(todo))],
                         "seconds": [time.perf_counter() - started]})


def read_vectors(folders: list[Path], number: int, wanted: list[str]) -> dict[str, np.ndarray]:
    """doc_id → vector for ``wanted`` ids from partition ``number`` of each folder."""
    need = set(wanted)
    found: dict[str, np.ndarray] = {}
    for folder in folders:
        path = Path(folder) / f"part-{number:05d}.parquet"
        if not need or not path.exists():
            continue
        ids, vecs = read_embedding_part(path)
        for i, d in enumerate(ids):
            if d in need:
                found[d] = vecs[i]
                need.discard(d)
    return found


def vectors_for(folders: list[Path], doc_ids: list[str]) -> dict[str, np.ndarray]:
    """doc_id → vector for ``doc_ids`` from any partition of ``folders`` (a sample: small)."""
    need = set(doc_ids)
    found: dict[str, np.ndarray] = {}
    for folder in folders:
        for path in sorted(Path(folder).glob("part-*.parquet")):
            ids = pq.read_table(path, columns=["doc_id"]).column("doc_id").to_pylist()
            if not need.intersection(ids):
                continue
            pid, vecs = read_embedding_part(path)
            for i, d in enumerate(pid):
                if d in need:
                    found[d] = vecs[i]
            need -= set(found)
    return found


# --------------------------------------------------------------------------- distil


def distil(annotations: Path, cfg: Any, vector_dirs: list[Path], out: Path) -> None:
    """Train the distilled scorer on the sample's annotations.

    ``distillation.json`` holds the metrics at the FineWeb-Edu threshold 3 (also in the model
    card); ``heldout.parquet`` keeps the held-out annotations and predictions so the stats can
    report F1 at whatever threshold the recipe uses without training again.
    """
    from classifiers.edu import DEFAULT_EMBEDDER
    from classifiers.edu_train import distil_head, regression_metrics

    ann = pd.read_parquet(annotations / "annotations.parquet")
    meta = json.loads((annotations / "annotations.json").read_text())
    ok = ann[ann["score"].notna()].reset_index(drop=True)
    report: dict[str, Any] = {"kind": cfg.distil, "annotator": meta["annotator"], "rubric": meta["rubric"], "n_annotated": len(ok)}
    if len(ok) < cfg.min_annotations:
        report["skipped"] = f"{len(ok)} usable annotations, fewer than min_annotations = {cfg.min_annotations}"
        write_json(out / "distillation.json", report)
        return
    card = {"name": "edu_distilled", "version": "1", "trained_on": "LLM annotations of a stratified sample of the run",
            "annotator": meta["annotator"], "rubric": meta["rubric"], "n_annotations": len(ok)}
    held = _heldout(ok["doc_id"].tolist(), cfg.holdout_fraction)
    if held.all():
        held[:] = False
    if cfg.distil == "hashed":
        from classifiers.linear import HashedLinearModel

        model = HashedLinearModel(task="regression").fit(ok.loc[~held, "text"].fillna("").tolist(), ok.loc[~held, "score"], epochs=20)
        pred = np.clip(model.predict(ok.loc[held, "text"].fillna("").tolist()), 0, 5) if held.any() else np.zeros(0)
        metrics: dict[str, Any] = {"n_train": int((~held).sum())}
        if held.any():
            metrics["heldout"] = regression_metrics(ok.loc[held, "score"].to_numpy(), pred, 3.0)
        model.save(out / "model", **card, metrics=metrics)
    else:
        found = vectors_for(vector_dirs, ok["doc_id"].tolist())
        missing = [d for d in ok["doc_id"] if d not in found]
        if missing:  # sampled documents outside the stored embeddings: embed them here
            from classifiers.embedding import get_embedder

            texts = ok.set_index("doc_id").loc[missing, "text"].fillna("").tolist()
            for d, v in zip(missing, get_embedder(**DEFAULT_EMBEDDER, device=cfg.embed_device).embed(texts), strict=True):
                found[d] = v
        x = np.stack([found[d] for d in ok["doc_id"]]).astype(np.float64)
        head, metrics = distil_head(x[~held], ok.loc[~held, "score"].to_numpy(), heldout_fraction=0.0, threshold=3.0, card=card)
        pred = head.predict_embeddings(x[held]) if held.any() else np.zeros(0)
        if held.any():
            metrics["heldout"] = regression_metrics(ok.loc[held, "score"].to_numpy(), pred, 3.0)
            head.card["metrics"] = metrics
        head.save(out / "model")
    write_frame(pd.DataFrame({"doc_id": ok.loc[held, "doc_id"], "annotation": ok.loc[held, "score"], "prediction": pred}),
                out / "heldout.parquet")
    report["metrics"] = metrics
    write_json(out / "distillation.json", report)


def distillation_report(distilled: Path, threshold: float) -> dict[str, Any]:
    """``distillation.json`` plus held-out metrics at the recipe's threshold (computed, not trained)."""
    from classifiers.edu_train import regression_metrics

    report = json.loads((distilled / "distillation.json").read_text())
    path = distilled / "heldout.parquet"
    if path.exists():
        held = pd.read_parquet(path)
        if len(held):
            report["heldout_at_threshold"] = regression_metrics(held["annotation"].to_numpy(), held["prediction"].to_numpy(), threshold)
    return report


def _heldout(ids: list[str], fraction: float) -> np.ndarray:
    from classifiers.edu_train import heldout_mask

    return heldout_mask(ids, fraction) if fraction > 0 else np.zeros(len(ids), dtype=bool)


def skip_reason(distilled: Path | None) -> str:
    if distilled is None:
        return "no annotations"
    return str(json.loads((distilled / "distillation.json").read_text()).get("skipped", "unknown"))


def card_summary(folder: Path) -> dict[str, Any]:
    path = Path(folder) / "model.json"
    card = json.loads(path.read_text()) if path.exists() else {}
    return {k: card[k] for k in ("name", "version", "kind", "rubric", "annotator", "embedder") if k in card}


# --------------------------------------------------------------------------- score


def write_scores(docs: dd.DataFrame, scorer_dir: Path, sources: tuple[str, ...], vector_dirs: list[Path], cfg: Any,
                 out: Path, ctx: Any) -> None:
    """``part-NNNNN.parquet`` (doc_id, edu_score) per input partition and ``scores.json`` (histogram, rate)."""
    started = time.time()
    graph = docs[["doc_id", "text", "source"]].map_partitions(
        _score_part, str(out), str(scorer_dir), sources, [str(p) for p in vector_dirs], cfg.embed_device,
        cfg.embed_batch_size, meta=SCORE_META)
    hist = compute_with_progress(graph, ctx.client, "edu_score: score", ctx.quiet)
    histogram = {}
    for source, g in hist[hist["bin"] >= 0].groupby("source"):
        counts = np.zeros(HIST_BINS, dtype=np.int64)
        np.add.at(counts, g["bin"].to_numpy(), g["count"].to_numpy())
        histogram[str(source)] = counts.tolist()
    n = int(hist.loc[hist["bin"] >= 0, "count"].sum())
    model_seconds = float(hist.groupby("part")["seconds"].first().sum()) if len(hist) else 0.0
    write_json(out / "scores.json", {
        "documents": n, "seconds": round(time.time() - started, 3),
        "model_seconds": round(model_seconds, 3),
        "mean_by_source": {s: round(float(np.dot(c, (np.arange(HIST_BINS) + 0.5) / 100) / max(sum(c), 1)), 4)
                           for s, c in histogram.items()},
        "histogram": histogram,
    })


def _score_part(df: pd.DataFrame, out: str, scorer_dir: str, sources: tuple[str, ...], vector_dirs: list[str],
                device: str, batch_size: int, partition_info: dict | None = None) -> pd.DataFrame:
    from classifiers.edu import get_edu_scorer

    number = (partition_info or {}).get("number", 0)
    rows = df[df["source"].isin(sources)]
    ids = rows["doc_id"].astype(str).tolist()
    texts = rows["text"].fillna("").tolist()
    scorer = get_edu_scorer(scorer_dir, device=device, batch_size=batch_size)
    started = time.perf_counter()
    vectors = None
    if scorer.needs_vectors and ids:
        found = read_vectors([Path(p) for p in vector_dirs], number, ids)
        missing = [i for i, d in enumerate(ids) if d not in found]
        dim = len(next(iter(found.values()))) if found else 0
        if missing:  # not stored (e.g. the scorer was chosen without the embeddings step): embed now
            from classifiers.embedding import get_embedder

            fresh = get_embedder(**scorer.embedder_settings(), device=device, batch_size=batch_size).embed(
                [texts[i] for i in missing])
            dim = fresh.shape[1]
        vectors = np.zeros((len(ids), dim), dtype=np.float32)
        for i, d in enumerate(ids):
            if d in found:
                vectors[i] = found[d]
        if missing:
            vectors[missing] = fresh
    scores = scorer.score(texts, vectors) if ids else np.zeros(0)
    seconds = time.perf_counter() - started
    write_frame(pd.DataFrame({"doc_id": ids, "edu_score": np.asarray(scores, dtype=np.float64)}),
                Path(out) / f"part-{number:05d}.parquet")
    bins = np.clip((np.asarray(scores) * HIST_BINS / 5.0).astype(int), 0, HIST_BINS - 1)
    frame = pd.DataFrame({"source": rows["source"].astype(object).to_numpy(), "bin": bins})
    counted = frame.groupby(["source", "bin"]).size().reset_index(name="count")
    counted["seconds"] = seconds
    if counted.empty:  # keep the partition's time on record
        counted = pd.DataFrame({"source": ["_none"], "bin": [-1], "count": [0], "seconds": [seconds]})
    counted.insert(0, "part", number)
    return counted.astype({"part": "int64", "bin": "int64", "count": "int64", "seconds": "float64"})
