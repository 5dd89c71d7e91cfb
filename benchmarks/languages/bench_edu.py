"""The edu scorers on Chinese: do they rank Chinese technical text above Chinese reviews, and in which bands?

    python benchmarks/languages/bench_edu.py

Scorers, same run: the default settings' scorer (classifiers/models/edu_default: all-MiniLM-L6-v2
head + hashed n-grams, trained on English reference documents; its transformer vectors are read
from the cache of ``benchmarks/edu_score/distil_data.py`` or embedded there) and the CPU profile's
scorer (classifiers/models/edu_fast: hashed n-grams distilled from the default on English and
Chinese); peer: the previous fast path (the default's hashed member alone). Sets: the held-out split of ``distil_data`` (never trained on by edu_fast) — Chinese
computer-science note sections of 3 note files and their 600–1,200-character windows, real Chinese
reviews, English OpenStax modules and English web pages (WCXB). Reported per set and scorer: mean,
quartiles and the share in each band (low < 2 ≤ medium < 3 ≤ high), and the share of (note,
review) pairs ordered correctly (AUC).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks" / "edu_score"))

import distil_data  # noqa: E402

from classifiers.edu import fast_model_dir, get_edu_scorer  # noqa: E402
from classifiers.edu_train import roc_auc  # noqa: E402
from classifiers.scorer import Batch  # noqa: E402


def bands(s: np.ndarray) -> list[float]:
    return [round(float(x), 3) for x in ((s < 2).mean(), ((s >= 2) & (s < 3)).mean(), (s >= 3).mean())]


def main() -> None:
    df = distil_data.load_corpus()
    df = df[df["split"] == "heldout"].reset_index(drop=True)
    web = df["group"].str.startswith("web:") & (df["kind"].isin(["general_web", "commercial"]))
    sets = {"zh note sections": df["kind"] == "zh_note", "zh note windows": df["kind"] == "zh_note_window",
            "zh reviews": df["kind"] == "zh_review", "en OpenStax modules": df["kind"] == "textbook", "en web pages": web}
    keep = np.logical_or.reduce([m.to_numpy() for m in sets.values()])
    df = df[keep].reset_index(drop=True)
    texts = df["text"].tolist()
    scores = {"default settings (edu_default)": distil_data.teacher_scores(df),
              "--profile cpu (edu_fast)": get_edu_scorer(fast_model_dir()).score(Batch(texts)),
              "previous fast path (edu_default/hashed)": get_edu_scorer(ROOT / "classifiers/models/edu_default/hashed").score(Batch(texts))}
    for scorer, s in scores.items():
        for name, mask in sets.items():
            m = mask[keep].to_numpy()
            print(json.dumps({"scorer": scorer, "set": name, "docs": int(m.sum()), "mean": round(float(s[m].mean()), 2),
                              "q25_q50_q75": [round(float(x), 2) for x in np.percentile(s[m], [25, 50, 75])],
                              "low_medium_high": bands(s[m])}, ensure_ascii=False))
        zh = df["lang"].eq("zh").to_numpy()
        note = df["kind"].isin(["zh_note", "zh_note_window"]).to_numpy()
        print(json.dumps({"scorer": scorer, "zh notes and windows above zh reviews (AUC)": round(roc_auc(note[zh], s[zh]), 3)},
                         ensure_ascii=False))


if __name__ == "__main__":
    main()
