"""The sub-steps of ``edu_score`` that touch every document (see :mod:`pipelines.stages.edu_score`):
the stratified sample, its annotation, the vectors SemDeDup did not store, and the scores. Each
``produce(out)`` fills one :meth:`~pipelines.kit.StageContext.step` folder and returns its figures."""

from __future__ import annotations

import dataclasses
import functools
import json
import logging
import shutil
import time
from pathlib import Path
from typing import Any

import dask.dataframe as dd
import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from classifiers.annotation import AnnotationStats, get_annotator
from classifiers.annotation.retry_log import stats_summary
from classifiers.embedding import embedder_name
from classifiers.embedding_store import write_card, write_embedding_part
from classifiers.sampling import allocate, candidates, select, stratum_counts
from classifiers.scorer import Batch
from classifiers.vector_source import VectorSource
from curation.quality.edu_bands import HIST_BINS, histogram_bins
from pipelines.io import read_rows, write_frame, write_json
from pipelines.kit import Artifact, StageContext

log = logging.getLogger(__name__)

EMBED_META = pd.DataFrame({k: pd.Series(dtype="float64") for k in ("reused", "embedded", "seconds")})
SCORE_META = pd.DataFrame({"part": pd.Series(dtype="int64"), "source": pd.Series(dtype=object), "bin": pd.Series(dtype="int64"),
                           "count": pd.Series(dtype="int64"), "seconds": pd.Series(dtype="float64")})


# --------------------------------------------------------------------------- sample


def write_sample(docs: dd.DataFrame, key: dict[str, Any], out: Path, ctx: StageContext) -> None:
    """Two passes: stratum counts, then candidates below each stratum's priority cut; then the texts."""
    sources, edges, seed = list(key["sources"]), list(key["edges"]), int(key["seed"])
    light = docs[["doc_id", "source", "n_tokens"]]
    light = light[light["source"].isin(sources)]
    counts_graph = light.map_partitions(lambda df: stratum_counts(df, edges).rename_axis("stratum").reset_index(name="n"),
                                        meta=pd.DataFrame({"stratum": pd.Series(dtype=object), "n": pd.Series(dtype="int64")}))
    counts_df = ctx.compute(counts_graph, "sample (count)")
    counts = {str(k): int(v) for k, v in counts_df.groupby("stratum")["n"].sum().items()}
    quotas = allocate(counts, int(key["size"]), key["allocation"])
    meta = light._meta.assign(stratum=pd.Series(dtype=object), priority=pd.Series(dtype="float64"))
    cands = ctx.compute(light.map_partitions(candidates, quotas, counts, edges, seed, meta=meta), "sample (candidates)")
    chosen = select(cands, quotas)
    if len(chosen) < sum(quotas.values()):  # the priority cut was too tight (very unlikely): take every candidate
        cands = ctx.compute(light.map_partitions(candidates, quotas, counts, edges, seed, float("inf"), meta=meta), "sample (all)")
        chosen = select(cands, quotas)
    ids = set(chosen["doc_id"].astype(str))
    texts_graph = docs[["doc_id", "text"]].map_partitions(lambda df: df[df["doc_id"].astype(str).isin(ids)],
                                                          meta=docs[["doc_id", "text"]]._meta)
    texts = ctx.compute(texts_graph, "sample (texts)")
    sample = chosen.merge(texts.drop_duplicates("doc_id"), on="doc_id", how="left")
    # row groups of one annotation task each: a task reads its own rows, not the whole sample
    write_frame(sample.reset_index(drop=True), out / "sample.parquet", row_group_size=ANNOTATION_TASK_DOCS)
    write_json(out / "sample.json", {"strata": counts, "quotas": quotas, "size": len(sample)})


# --------------------------------------------------------------------------- annotate


#: Documents per annotation task of an HTTP judge (see :func:`task_docs`): fixed, so the tasks (and
#: the judge's batches within them) are the same whatever the number of workers.
ANNOTATION_TASK_DOCS = 256
#: Documents per task of the local CPU judge: small, so that a sample spreads over every worker.
LOCAL_TASK_DOCS = 4
ANNOTATE_META = pd.DataFrame({"task": pd.Series(dtype="int64"), "stats": pd.Series(dtype=object)})


def annotate(sample_dir: Path, config: dict[str, Any], rubric: Any, out: Path, ctx: StageContext) -> dict[str, Any]:
    """Annotate the sample on the workers (through the persistent cache); write scores, answers and failures.

    The sample is cut into tasks of :func:`task_docs` rows, each read, annotated and written by a
    worker, the costliest first: the driver sends no request and loads no judge (the vLLM engine
    is one task on one worker: it takes a whole GPU). An HTTP judge's
    ``concurrency`` and ``rate_limit_rps`` are budgets for the whole run, shared by the tasks that
    run at once (:func:`share_budget`); the local judge loads once per worker process.
    """
    path = sample_dir / "sample.parquet"
    rows = pq.ParquetFile(path).metadata.num_rows
    size = task_docs(config, rows)
    starts = list(range(0, rows, size)) or [0]
    shared = share_budget(config, min(len(starts), worker_slots(ctx.client)))
    parts = Artifact(out / "parts")
    started = time.time()
    _annotator.cache_clear()  # this process's judges start afresh: an earlier run's tripped breaker asks the server again
    graph = dd.from_map(annotate_task, list(enumerate(starts)), args=(str(path), size, shared, rubric, parts),
                        meta=ANNOTATE_META, enforce_metadata=False)
    # one delayed per task: the progress counts the tasks the summary names (a dataframe added a task gathering them)
    done = ctx.compute(graph.to_delayed(), "annotate", costs=task_costs(path, size, config.get("doc_tokens") or rubric.doc_tokens))
    stats = AnnotationStats()
    for item in done.sort_values("task")["stats"]:
        stats = stats + AnnotationStats(**json.loads(item))
    stats.seconds = time.time() - started
    if config.get("backend") == "openai":  # the workers said the first of each kind; here, the whole run's counts
        log.info("edu_score: %s (stats.json: annotation.stats)", stats_summary(config.get("base_url", ""), stats))
    frame = parts.read_all()
    write_frame(frame, out / "annotations.parquet")
    shutil.rmtree(parts.path)
    ok = frame["score"].notna()
    summary = {
        "annotator": get_annotator(config).model_id, "rubric": rubric.version, "rubric_name": rubric.name,
        "annotated": int(ok.sum()), "failed": int((~ok).sum()),
        "mean_score": round(float(frame.loc[ok, "score"].mean()), 4) if ok.any() else None,
        "stats": stats.to_dict(),
    }
    log.info("edu_score: annotated %d documents in %d tasks, %d at a time", len(frame), len(starts), min(len(starts), worker_slots(ctx.client)))
    write_json(out / "annotations.json", summary)
    return {"annotation": summary}


def task_docs(config: dict[str, Any], rows: int) -> int:
    """Sample rows per annotation task; from the configuration only, never from the number of workers.

    - ``vllm``: the whole sample. The offline engine takes a whole GPU and batches internally, so
      one task, hence one engine, whatever the workers (to spread a sample over GPUs, serve
      replicas and use ``openai``).
    - ``local``: :data:`LOCAL_TASK_DOCS`. A CPU judge takes about a second per document; in
      tasks of 256 rows the sample run's 24 documents were one task on one worker (92 s) while
      the other idled.
    - HTTP judges: :data:`ANNOTATION_TASK_DOCS`; each task gets its share of the run's concurrency.

    >>> task_docs({"backend": "vllm"}, 600), task_docs({"backend": "local"}, 600), task_docs({"backend": "openai"}, 600)
    (600, 4, 256)
    """
    backend = config.get("backend", "local")
    if backend == "vllm":
        return max(rows, 1)
    if backend == "local":
        return LOCAL_TASK_DOCS
    return ANNOTATION_TASK_DOCS


def task_costs(path: Path, size: int, doc_tokens: int | None) -> list[int]:
    """Each task's tokens (``n_tokens`` capped at the judge's document budget), so the longest start first."""
    tokens = pq.read_table(path, columns=["n_tokens"]).column("n_tokens").to_numpy(zero_copy_only=False)
    if doc_tokens:
        tokens = np.minimum(tokens, int(doc_tokens))
    return [int(tokens[i : i + size].sum()) for i in range(0, len(tokens), size)] or [0]


def annotate_task(item: tuple[int, int], path: str, size: int, config: dict[str, Any], rubric: Any, parts: Artifact) -> pd.DataFrame:
    """Annotate rows ``[start, start + size)`` of the sample; write them as part ``task``."""
    task, start = item
    sample = read_rows(path, start, size)
    res = _annotator(json.dumps(config, sort_keys=True)).annotate(sample["text"].fillna("").tolist(), rubric)
    frame = pd.DataFrame({
        "doc_id": sample["doc_id"].astype(str), "source": sample["source"], "n_tokens": sample["n_tokens"],
        "stratum": sample["stratum"], "score": res.scores, "failure": res.failures, "raw": res.raw,
        "tokens_in": res.tokens_in or [0] * len(sample), "tokens_out": res.tokens_out or [0] * len(sample),
        "text": sample["text"],
    })
    parts.write_part(task, frame)
    return pd.DataFrame({"task": [task], "stats": [json.dumps(dataclasses.asdict(res.stats))]})  # JSON: any string dtype carries it


@functools.lru_cache(maxsize=4)
def _annotator(config: str) -> Any:
    """One annotator per worker process and configuration (the local judge's weights load once)."""
    return get_annotator(json.loads(config))


def worker_slots(client: Any) -> int:
    """Tasks a client runs at once: its workers' threads (1 for the synchronous scheduler)."""
    if client is None:
        return 1
    return max(1, sum(client.nthreads().values()))


def share_budget(config: dict[str, Any], running: int) -> dict[str, Any]:
    """``config`` with an HTTP judge's ``concurrency`` and ``rate_limit_rps`` divided among ``running`` tasks.

    >>> share_budget({"backend": "openai", "concurrency": 8, "rate_limit_rps": 10.0}, 3)
    {'backend': 'openai', 'concurrency': 2, 'rate_limit_rps': 3.3333333333333335}
    >>> share_budget({"backend": "local", "batch_size": 8}, 2)
    {'backend': 'local', 'batch_size': 8}
    """
    out = dict(config)
    running = max(1, int(running))
    if "concurrency" in out:
        out["concurrency"] = max(1, int(out["concurrency"]) // running)
    if out.get("rate_limit_rps"):
        out["rate_limit_rps"] = float(out["rate_limit_rps"]) / running
    return out


# --------------------------------------------------------------------------- embeddings


def embed_missing(docs: dd.DataFrame, sources: tuple[str, ...], vectors: VectorSource, cfg: Any, out: Path,
                  ctx: StageContext) -> dict[str, Any]:
    """Embed the scored documents that ``vectors`` does not store (per input partition, same layout)."""
    settings = vectors.embedder
    vectors.warn_rejected("edu_score")
    started = time.time()
    graph = ctx.map_parts(docs[["doc_id", "text", "source"]], embed_part, Artifact(out), vectors, sources,
                          {"device": cfg.embed_device, "batch_size": cfg.embed_batch_size}, meta=EMBED_META)
    stats = ctx.compute(graph, "embed missing", costs=ctx.costs(sources))
    embedded = int(stats["embedded"].sum())
    card = {
        "embedder": dict(settings), "name": embedder_name(settings["model"], settings["max_seq_length"], settings["mask_digits"]),
        "count": embedded,
        "reused_upstream": int(stats["reused"].sum()), "sources": list(sources), "normalized": True, "dtype": "float16",
        "seconds": round(time.time() - started, 3),
        "docs_per_second": round(embedded / max(float(stats["seconds"].sum()), 1e-9), 2) if embedded else None,
    }
    write_card(out, card)
    return {"embedding": card}


def embed_part(number: int, df: pd.DataFrame, out: Artifact, vectors: VectorSource, sources: tuple[str, ...],
               runtime: dict[str, Any]) -> pd.DataFrame:
    rows = df[df["source"].isin(sources)]
    have = vectors.stored_ids(number)
    todo = rows[~rows["doc_id"].astype(str).isin(have)]
    started = time.perf_counter()
    vecs = vectors.embed(todo["text"].fillna("").tolist(), **runtime) if len(todo) else np.zeros((0, 1), dtype=np.float32)
    write_embedding_part(out.part_path(number), todo["doc_id"].astype(str).tolist(), vecs, "float16")
    return pd.DataFrame({"reused": [float(len(rows) - len(todo))], "embedded": [float(len(todo))],
                         "seconds": [time.perf_counter() - started]})


# --------------------------------------------------------------------------- score


def write_scores(docs: dd.DataFrame, scorer_dir: Path, sources: tuple[str, ...], vectors: VectorSource, cfg: Any,
                 out: Path, ctx: StageContext) -> None:
    """``part-NNNNN.parquet`` (doc_id, edu_score) per input partition and ``scores.json`` (histogram, rate)."""
    started = time.time()
    graph = ctx.map_parts(docs[["doc_id", "text", "source", "n_tokens"]], score_part, Artifact(out), str(scorer_dir), sources, vectors,
                          cfg.embed_device, cfg.embed_batch_size, int(cfg.min_tokens), meta=SCORE_META)
    hist = ctx.compute(graph, "score", costs=ctx.costs(sources))
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


def score_part(number: int, df: pd.DataFrame, out: Artifact, scorer_dir: str, sources: tuple[str, ...], vectors: VectorSource,
               device: str, batch_size: int, min_tokens: int = 0) -> pd.DataFrame:
    """Scores of the partition's documents from ``sources`` with at least ``min_tokens`` tokens: a
    one-word page ("Europa") cannot be judged, and scorers put such pages anywhere (both shipped
    scorers put that one in the high band)."""
    from classifiers.edu import get_edu_scorer

    long_enough = pd.to_numeric(df["n_tokens"], errors="coerce").fillna(0).to_numpy() >= min_tokens
    rows = df[df["source"].isin(sources).to_numpy() & long_enough]
    ids = rows["doc_id"].astype(str).tolist()
    texts = rows["text"].fillna("").tolist()
    scorer = get_edu_scorer(scorer_dir, device=device, batch_size=batch_size)
    started = time.perf_counter()
    batch = Batch(texts)
    if "vectors" in scorer.needs and ids:  # stored where the run has them, embedded with the scorer's settings otherwise
        source = VectorSource(vectors.folders, scorer.embedder, vectors.upstream)
        batch.vectors = source.vectors(ids, texts, number, device=device, batch_size=batch_size)
    scores = scorer.score(batch) if ids else np.zeros(0)
    seconds = time.perf_counter() - started
    out.write_part(number, pd.DataFrame({"doc_id": ids, "edu_score": np.asarray(scores, dtype=np.float64)}))
    frame = pd.DataFrame({"source": rows["source"].astype(object).to_numpy(), "bin": histogram_bins(scores)})
    counted = frame.groupby(["source", "bin"]).size().reset_index(name="count")
    counted["seconds"] = seconds
    if counted.empty:  # keep the partition's time on record
        counted = pd.DataFrame({"source": ["_none"], "bin": [-1], "count": [0], "seconds": [seconds]})
    counted.insert(0, "part", number)
    return counted.astype({"part": "int64", "bin": "int64", "count": "int64", "seconds": "float64"})
