"""Annotator throughput per backend on this machine, and how well a distilled head agrees with its annotator.

    python benchmarks/edu_score/bench_annotators.py [--docs 24] [--distil-docs 120]

- ``local``: SmolLM2-135M (one forward pass per document, shared prefix cached) on real reference
  documents, with 1 and 2 torch threads in the same run (documents/s, prompt tokens/s);
- ``openai``: the HTTP client (concurrency, retries, parsing) against an in-process
  OpenAI-compatible server answering after 50 ms, concurrency 1 and 8 — the client's own ceiling,
  a real server's speed is the server's;
- ``vllm``: needs a GPU (not here);
- distillation: SmolLM2 annotations of ``--distil-docs`` reference documents (cached) → ridge head on
  their embeddings, held-out Spearman / F1 at 3 against the annotations; and the same head
  trained on the reference targets (a stronger judgement) for comparison.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from reference_data import available, load_reference, split_by_group  # noqa: E402
from train_default import WORK, embeddings  # noqa: E402

from classifiers.annotation import get_annotator  # noqa: E402
from classifiers.edu_train import distil_head  # noqa: E402
from classifiers.rubrics import get_rubric  # noqa: E402

EDU = get_rubric("edu")


def local_throughput(texts: list[str]) -> dict:
    from classifiers.annotation.local import LocalAnnotator, load_model

    t = time.time()
    load_model(LocalAnnotator().model_path)
    out = {"load_s": round(time.time() - t, 1)}
    for threads in (1, 2):
        res = LocalAnnotator(batch_size=8, threads=threads).annotate(texts, EDU)
        out[f"threads_{threads}"] = {"docs": len(texts), "seconds": round(res.stats.seconds, 2),
                                     "docs_per_s": round(len(texts) / res.stats.seconds, 3),
                                     "prompt_tokens_per_s": round(res.stats.tokens_in / res.stats.seconds, 1)}
    return out


def openai_throughput(texts: list[str]) -> dict:
    from tests.classifiers.test_annotation_openai import FakeLLMServer

    out = {}
    with FakeLLMServer(delay_s=0.05) as srv:
        for conc in (1, 8):
            ann = get_annotator({"backend": "openai", "model": "fake", "base_url": srv.url, "concurrency": conc})
            res = ann.annotate(texts, EDU)
            out[f"concurrency_{conc}"] = {"docs": len(texts), "seconds": round(res.stats.seconds, 2),
                                          "docs_per_s": round(len(texts) / res.stats.seconds, 2),
                                          "failures": res.stats.failures}
    return out


def distillation(ref: pd.DataFrame, x: np.ndarray, n: int) -> dict:
    """Distil heads from SmolLM2's annotations and from the reference targets; held-out agreement."""
    rng = np.random.default_rng(0)
    idx = np.sort(rng.choice(len(ref), size=min(n, len(ref)), replace=False))
    sub = ref.iloc[idx]
    ann = get_annotator({"backend": "local", "threads": 1, "cache_dir": str(WORK / "annotation_cache")})
    res = ann.annotate(sub["text"].tolist(), EDU)
    ok = ~np.isnan(res.scores)
    groups = sub["group"].tolist()
    _, from_judge = distil_head(x[idx][ok], res.scores[ok], [g for g, o in zip(groups, ok, strict=True) if o], heldout_fraction=0.3)
    _, from_targets = distil_head(x[idx], sub["target"].to_numpy(), groups, heldout_fraction=0.3)
    from scipy.stats import spearmanr

    return {
        "n": len(sub), "judge_failures": int((~ok).sum()),
        "judge_vs_targets_spearman": round(float(spearmanr(res.scores[ok], sub["target"].to_numpy()[ok]).statistic), 4),
        "head_on_judge": {k: from_judge["heldout"][k] for k in ("n", "mae", "spearman", "f1_at_threshold")},
        "head_on_targets": {k: from_targets["heldout"][k] for k in ("n", "mae", "spearman", "f1_at_threshold")},
        "judge_stats": res.stats.to_dict(),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--docs", type=int, default=24)
    p.add_argument("--distil-docs", type=int, default=120)
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    if not available():
        print("../shared/data is absent")
        return 1
    ref = load_reference()
    ref["split"] = split_by_group(ref)
    sample = ref.groupby("kind", group_keys=False).apply(lambda g: g.sample(min(len(g), max(1, args.docs // 7)), random_state=1))
    texts = sample["text"].tolist()[: args.docs]
    out = {"local": local_throughput(texts), "openai": openai_throughput(texts * 4),
           "vllm": "not measured: no GPU on this machine (tests/classifiers/test_annotation_vllm.py runs where one is)"}
    if args.distil_docs > 0:
        x, _w, _rows, _rate = embeddings(ref)
        out["distillation"] = distillation(ref, x.astype(np.float64), args.distil_docs)
    (WORK / "annotators.json").write_text(json.dumps(out, indent=1, sort_keys=True))
    print(json.dumps(out, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
