"""datatrove's MinHash dedup on the benchmark corpus (run with the benchmark venv's python).

    benchmarks/_work/dtenv/bin/python benchmarks/minhash_dedup/run_datatrove.py e2e CORPUS_DOCS OUT --tasks 2
    benchmarks/_work/dtenv/bin/python benchmarks/minhash_dedup/run_datatrove.py signatures PARQUET OUT

``e2e`` is datatrove's 4-stage local pipeline with its default ``MinhashConfig`` (5-grams, 14
buckets x 8 hashes, 64-bit xxhash), as in its ``examples/minhash_deduplication.py``; it also saves
cluster ids so the benchmark can score its clusters. ``signatures`` times the signature step alone
in this process (one core) and prints JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path


def e2e(docs: str, out: str, tasks: int) -> None:
    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.dedup import MinhashDedupCluster, MinhashDedupFilter, MinhashDedupSignature
    from datatrove.pipeline.dedup.minhash import MinhashConfig, MinhashDedupBuckets
    from datatrove.pipeline.readers import ParquetReader
    from datatrove.pipeline.writers import ParquetWriter

    cfg = MinhashConfig()
    base = Path(out)

    def reader() -> ParquetReader:
        return ParquetReader(docs, text_key="text", id_key="doc_id", glob_pattern="part-*.parquet")

    timings = {}
    steps = [
        ("signatures", [reader(), MinhashDedupSignature(output_folder=str(base / "sigs"), config=cfg)], tasks),
        ("buckets", [MinhashDedupBuckets(input_folder=str(base / "sigs"), output_folder=str(base / "buckets"), config=cfg)], cfg.num_buckets),
        ("cluster", [MinhashDedupCluster(input_folder=str(base / "buckets"), output_folder=str(base / "remove_ids"), config=cfg, save_cluster_id=True)], 1),
        ("filter", [reader(), MinhashDedupFilter(input_folder=str(base / "remove_ids"), load_cluster_ids=True,
                                                 exclusion_writer=ParquetWriter(str(base / "removed"))),
                    ParquetWriter(str(base / "deduped"))], tasks),
    ]
    for name, pipeline, n in steps:
        started = time.perf_counter()
        LocalPipelineExecutor(pipeline=pipeline, tasks=n, workers=min(n, tasks), logging_dir=str(base / "logs" / name)).run()
        timings[name] = round(time.perf_counter() - started, 2)
    (base / "timings.json").write_text(json.dumps(timings))


def signatures(parquet: str, out: str) -> None:
    import pyarrow.parquet as pq
    from datatrove.data import Document
    from datatrove.pipeline.dedup import MinhashDedupSignature

    table = pq.read_table(parquet, columns=["doc_id", "text"]).to_pydict()
    docs = [Document(text=t, id=i) for i, t in zip(table["doc_id"], table["text"], strict=True)]
    step = MinhashDedupSignature(output_folder=out)
    step.get_shingles("warm up the spaCy tokenizer before timing")
    started, cpu = time.perf_counter(), time.process_time()
    step.run(iter(docs), rank=0, world_size=1)  # writes the bucket files; returns nothing
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    mb = sum(len(t.encode("utf-8")) for t in table["text"]) / 1e6
    print(json.dumps({"documents": len(docs), "mb": mb, "seconds": seconds, "cpu_seconds": cpu, "hashes": step.num_hashes}))


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["e2e", "signatures"])
    p.add_argument("input")
    p.add_argument("output")
    p.add_argument("--tasks", type=int, default=2)
    a = p.parse_args()
    if a.mode == "e2e":
        e2e(a.input, a.output, a.tasks)
    else:
        signatures(a.input, a.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
