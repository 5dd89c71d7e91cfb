"""CUDA embedding and faiss-gpu k-means against the CPU path (run it when a GPU machine is lent).

    python benchmarks/semdedup/bench_gpu.py --docs 2000 --vectors 200000 --k 1000

Prints one JSON object. Embedding: the same real web pages through ``get_embedder(device=cuda)``
(fp16) and ``device=cpu`` (on ``--cpu-docs`` of them, since the CPU is ~100× slower), with the
cosine agreement of the two on the shared documents. k-means: ``train_kmeans`` + ``assign`` on
synthetic 384-d vectors with ``use_gpu`` True and False. Without CUDA or faiss-gpu it says so and
exits 0, so it can sit in a script that also runs on CPU machines.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import twins  # noqa: E402
from bench_embed import load_docs  # noqa: E402

from classifiers.embedding import get_embedder  # noqa: E402
from curation.dedup.kmeans import assign, gpu_available, train_kmeans  # noqa: E402


def timed(fn) -> tuple[object, float]:
    started = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=2000)
    parser.add_argument("--cpu-docs", type=int, default=200)
    parser.add_argument("--vectors", type=int, default=200_000)
    parser.add_argument("--k", type=int, default=1000)
    args = parser.parse_args()
    import torch

    result: dict = {"cuda": torch.cuda.is_available(), "faiss_gpu": gpu_available()}
    if result["cuda"]:
        texts = load_docs(args.docs)
        gpu = get_embedder(model="all-MiniLM-L6-v2", device="cuda", batch_size=256)
        gpu.embed(texts[:64])  # warm-up (CUDA context, kernels)
        torch.cuda.synchronize()
        vg, tg = timed(lambda: gpu.embed(texts))
        cpu = get_embedder(model="all-MiniLM-L6-v2", device="cpu", batch_size=64)
        vc, tc = timed(lambda: cpu.embed(texts[: args.cpu_docs]))
        result["embedding"] = {
            "gpu": torch.cuda.get_device_name(0), "gpu_docs": len(texts), "gpu_docs_per_second": round(len(texts) / tg, 1),
            "cpu_docs": len(vc), "cpu_docs_per_second": round(len(vc) / tc, 2),
            "cosine_gpu_vs_cpu_min": round(float((vg[: len(vc)] * vc).sum(axis=1).min()), 5),
        }
    if result["faiss_gpu"]:
        from bench_prune import synthetic

        x, _ = synthetic(args.vectors)
        out = {}
        for label, use_gpu in (("gpu", True), ("cpu", False)):
            cents, t_train = timed(lambda use_gpu=use_gpu: train_kmeans(x, args.k, seed=1, use_gpu=use_gpu))
            (labels, _), t_assign = timed(lambda use_gpu=use_gpu, cents=cents: assign(x, cents, use_gpu=use_gpu))
            out[label] = {"train_seconds": round(t_train, 2), "assign_seconds": round(t_assign, 2)}
        result["kmeans"] = {"vectors": len(x), "k": args.k, **out}
    if not (result["cuda"] or result["faiss_gpu"]):
        result["note"] = "no CUDA device and no faiss-gpu here: nothing to compare (the CPU path is bench_embed/bench_prune)"
    (twins.WORK).mkdir(parents=True, exist_ok=True)
    (twins.WORK / "bench_gpu.json").write_text(json.dumps(result, indent=1))
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
