"""The shipped edu scorer on Chinese: does it rank Chinese technical text above Chinese reviews?

    CURATION_SHARED_DATA=/path/to/shared/data python benchmarks/languages/bench_edu.py

The default edu scorer (classifiers/models/edu_default: all-MiniLM-L6-v2 head + hashed n-grams,
trained on English reference documents) on: the 47 real Chinese computer-science tutorial sections,
300 real Chinese reviews, 150 OpenStax modules (English textbook, the top of the scale) and 150 WCXB
pages (English web). Reported: mean and quartiles of the 0–5 score per set, and the share of
(tutorial, review) pairs the scorer orders correctly (AUC).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import data  # noqa: E402

from classifiers.edu import get_edu_scorer  # noqa: E402
from classifiers.scorer import Batch  # noqa: E402


def main() -> None:
    scorer = get_edu_scorer()
    openstax = pd.read_json(data.require() / "math" / "openstax_modules.jsonl.gz", lines=True)["text"].astype(str).head(150).tolist()
    sets = {"zh tutorial sections": data.zh_notes()["text"].tolist(), "zh reviews": data.zh_reviews(300, seed=7)["text"].tolist(),
            "en OpenStax": openstax, "en WCXB pages": data.en_pages()["text"].head(150).tolist()}
    scores = {k: np.asarray(scorer.score(Batch(v)), dtype=np.float64) for k, v in sets.items()}
    for k, s in scores.items():
        print(json.dumps({"set": k, "docs": len(s), "mean": round(float(s.mean()), 2),
                          "q25_q50_q75": [round(float(x), 2) for x in np.percentile(s, [25, 50, 75])]}, ensure_ascii=False))
    a, b = scores["zh tutorial sections"], scores["zh reviews"]
    auc = float(np.mean(a[:, None] > b[None, :]) + 0.5 * np.mean(a[:, None] == b[None, :]))
    print(json.dumps({"zh tutorials above zh reviews (AUC)": round(auc, 3)}, ensure_ascii=False))


if __name__ == "__main__":
    main()
