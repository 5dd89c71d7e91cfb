"""Is the local CPU annotator a usable teacher for the learned code-quality scorer?

    python benchmarks/code_quality/probe_code_annotator.py [--files 200] [--backend-json '{"backend": "local", …}']

Annotates a sample of programming-language files from ../shared/data with the ``code_quality``
rubric (answers cached under benchmarks/_work/ann_cache, so an interrupted run resumes) and
prints the Spearman correlation of its scores with the structural score and with file length.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from classifiers.annotation import get_annotator  # noqa: E402
from classifiers.code_quality import StructuralScorer  # noqa: E402
from classifiers.rubrics import get_rubric  # noqa: E402
from classifiers.scorer import Batch  # noqa: E402
from curation.quality.code_language import detect_language, language_kind  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--backend-json", default='{"backend": "local", "doc_tokens": 512, "threads": 2}')
    args = parser.parse_args()
    d = pd.read_parquet(ROOT / ".." / "shared" / "data" / "code" / "code_files.parquet")
    d["lang"] = [detect_language(p, t) for p, t in zip(d["path"], d["text"], strict=True)]
    d = d[[language_kind(lang) == "programming" for lang in d["lang"]]].sample(args.files, random_state=5)
    config = {**json.loads(args.backend_json), "cache_dir": str(ROOT / "benchmarks" / "_work" / "ann_cache")}
    started = time.time()
    scores = get_annotator(config).annotate(d["text"].tolist(), get_rubric("code_quality")).scores
    ok = ~np.isnan(scores)
    structural = StructuralScorer().score(Batch(d["text"].tolist(), d["lang"].tolist(), d["path"].tolist()))
    print(json.dumps({
        "files": int(ok.sum()), "seconds": round(time.time() - started, 1),
        "spearman_vs_structural": round(float(spearmanr(scores[ok], structural[ok]).statistic), 3),
        "spearman_vs_length": round(float(spearmanr(scores[ok], d["text"].str.len().to_numpy()[ok]).statistic), 3),
    }, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
