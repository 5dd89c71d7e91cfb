"""Does an ``explanatory`` member (DCLM / Nemotron-CC recipe) make the ensemble rank judged pages better?

    python benchmarks/web_quality/bench_members.py [--out benchmarks/_work/web_quality/members.json]

One run, one process, the same pages for every scorer:

1. **Each member alone** on the 328 judged Common Crawl WET pages (``wet_judgements.csv``):
   heuristics (with each page's language), the shipped ``linear`` model, the ``explanatory``
   member, the stop-word share; every page scored (language-blind) and the English pages.
2. **Ensembles as the stage computes them**: languages from :mod:`classifiers.langid`, English-only
   members NaN elsewhere (``scorer_languages``), per-language token-weighted ranks (a language with
   ≥ 50 pages ranks within itself, the rest against the whole corpus), the mean rank over members
   (``combine: mean``) and its bucket. The judged pages are split by a hash of their id into a
   **tune** part (40 %: the member set and the weights are chosen there) and a **held-out** part
   (60 %: the decision to ship is checked there); figures on all pages are given too.
3. **Chinese**: the ``explanatory_zh`` member and the heuristics on the tune split of
   :mod:`explanatory_data` (Chinese technical notes never trained on against reviews never trained
   on), also with the reviews as listing pages (20 reviews per page), and on the judged Chinese pages.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import data  # noqa: E402
import explanatory_data  # noqa: E402
from bench_validation import auc  # noqa: E402

from classifiers.langid import identify_docs  # noqa: E402
from classifiers.scorer import Batch  # noqa: E402
from classifiers.web_quality import get_scorer  # noqa: E402
from curation.quality.bucketing import OTHER_LANGS, bucket_of, language_groups, own_languages  # noqa: E402
from curation.quality.sketch import QuantileSketch, percentile_grid, token_weights  # noqa: E402

#: members restricted to some languages, as in the recipe's scorer_languages
LANGUAGES = {"linear": ["en"], "explanatory": ["en"], "explanatory_zh": ["zh"]}
TUNE_SHARE = 0.4
WEIGHTS = (0.0, 0.5, 1.0, 2.0)


def tune_part(doc_ids: pd.Series) -> np.ndarray:
    return np.array([int(hashlib.sha1(str(d).encode()).hexdigest()[:8], 16) / 0xFFFFFFFF < TUNE_SHARE for d in doc_ids])


def stage_rank(scores: dict[str, np.ndarray], weights: dict[str, float], langs: np.ndarray, ntok: np.ndarray,
               min_docs: int = 50) -> tuple[np.ndarray, np.ndarray]:
    """The stage's combined rank (weighted mean of per-language token-weighted ranks; weights 1 = the
    stage's ``combine: mean``) and its bucket (20 token-weighted buckets per language group)."""
    groups = language_groups(langs, own_languages(Counter(langs.tolist()), min_docs))
    rank, bucket = np.zeros(len(langs)), np.zeros(len(langs), dtype=np.int64)
    for g in sorted(set(groups.tolist())):
        ref = np.ones(len(langs), dtype=bool) if g == OTHER_LANGS else groups == g
        idx = groups == g
        num, den = np.zeros(idx.sum()), np.zeros(idx.sum())
        for name, s in scores.items():
            sk = QuantileSketch.from_values(s[ref], token_weights(ntok[ref]))
            r = sk.cdf(s[idx]) if sk.total > 0 else np.full(idx.sum(), np.nan)
            ok = ~np.isnan(r)
            num[ok] += weights[name] * r[ok]
            den[ok] += weights[name]
        rank[idx] = np.where(den > 0, num / np.maximum(den, 1e-12), 0.0)
        cth = QuantileSketch.from_values(rank[idx], token_weights(ntok[idx])).thresholds(percentile_grid(20))
        bucket[idx] = bucket_of(rank[idx], cth)
    return rank, bucket


def row(name: str, s: np.ndarray, rating: np.ndarray, parts: dict[str, np.ndarray]) -> dict:
    out: dict = {"scorer": name}
    for part, m in parts.items():
        ok = m & ~np.isnan(s)
        out[f"auc_{part}"] = round(auc(rating[ok] >= 4, s[ok]), 4)
        out[f"spearman_{part}"] = round(float(spearmanr(rating[ok], s[ok]).correlation), 4)
    return out


def judged(res: dict) -> None:
    j = data.judged()
    texts, rating = j["text"].tolist(), j["rating"].to_numpy()
    langs = np.array(identify_docs(texts, ["web"] * len(texts))[0], dtype=object)
    ntok = np.array([max(1, len(t.split())) for t in texts])
    heur, signals = get_scorer("heuristics").score_details(Batch(texts, languages=langs.tolist()))
    blind = {"heuristics": heur, "stop_word_frac": signals["stop_word_frac"].to_numpy(dtype=np.float64)}
    for name in ("linear", "explanatory"):
        blind[name] = get_scorer(name).score(Batch(texts))
    tune = tune_part(j["doc_id"])
    en = langs == "en"
    parts = {"all": np.ones(len(j), dtype=bool), "english": en, "held_out": ~tune, "tune": tune}
    res["judged"] = {"pages": len(j), "english": int(en.sum()), "tune": int(tune.sum()), "held_out": int((~tune).sum()),
                     "good": int((rating >= 4).sum()), "languages_with_own_buckets": own_languages(Counter(langs.tolist()), 50)}
    res["members_alone"] = [row(f"{k} (every page scored)", v, rating, parts) for k, v in blind.items()]
    staged = {k: np.where(np.isin(langs, LANGUAGES[k]), v, np.nan) if k in LANGUAGES else v
              for k, v in blind.items() if k != "stop_word_frac"}
    ens, ranks = [], {}
    for members in (("heuristics",), ("heuristics", "linear"), ("heuristics", "explanatory"), ("heuristics", "linear", "explanatory")):
        rank, bucket = stage_rank({k: staged[k] for k in members}, dict.fromkeys(members, 1.0), langs, ntok)
        ranks[members] = rank
        ens.append(row(f"mean rank: {' + '.join(members)}", rank, rating, parts) | {"members": list(members), "weights": None})
        ens.append(row(f"bucket: {' + '.join(members)}", bucket.astype(float), rating, parts))
    grid = []
    for wl, we in itertools.product(WEIGHTS, WEIGHTS):
        w = {"heuristics": 1.0, "linear": wl, "explanatory": we}
        rank, _ = stage_rank(staged, w, langs, ntok)
        grid.append((auc(rating[tune] >= 4, rank[tune]), wl, we, rank))
    best = max(grid, key=lambda g: (round(g[0], 4), -g[1] - g[2]))
    ens.append(row(f"weighted mean rank, weights tuned on the tune part (heuristics 1, linear {best[1]}, explanatory {best[2]})",
                   best[3], rating, parts) | {"weights": {"heuristics": 1.0, "linear": best[1], "explanatory": best[2]}})
    res["ensembles"] = ens
    res["weight_grid_tune_auc"] = [{"linear": g[1], "explanatory": g[2], "auc_tune": round(g[0], 4)} for g in grid]
    sets = [e for e in ens if e.get("members")]
    pick = max(sets, key=lambda e: e["auc_tune"])
    res["chosen_on_tune"] = {"members": pick["members"], "auc_tune": pick["auc_tune"], "auc_held_out": pick["auc_held_out"]}
    # paired bootstrap of the held-out AUC gain of the chosen set over the recipe's default (heuristics + linear)
    new, old = ranks[tuple(pick["members"])], ranks[("heuristics", "linear")]
    rng, held = np.random.default_rng(0), np.flatnonzero(~tune)
    good = rating >= 4
    gains = []
    for _ in range(2000):
        i = rng.choice(held, size=len(held))
        gains.append(auc(good[i], new[i]) - auc(good[i], old[i]))
    res["chosen_on_tune"] |= {"held_out_gain_over_default": round(auc(good[held], new[held]) - auc(good[held], old[held]), 4),
                              "gain_95ci": np.round(np.percentile(gains, [2.5, 97.5]), 4).tolist(),
                              "share_of_resamples_with_gain": round(float(np.mean(np.array(gains) > 0)), 3)}
    print(pd.DataFrame(res["members_alone"]).to_string(index=False))
    print(pd.DataFrame(ens).drop(columns=["members", "weights"], errors="ignore").to_string(index=False))
    print("chosen on the tune part:", res["chosen_on_tune"])
    zh = langs == "zh"
    zh_member = get_scorer("explanatory_zh").score(Batch([t for t, z in zip(texts, zh, strict=True) if z]))
    res["judged_chinese"] = {"pages": int(zh.sum()), "ratings": rating[zh].tolist(),
                             "explanatory_zh": zh_member.round(3).tolist(), "heuristics": np.round(heur[zh], 3).tolist(),
                             "auc_explanatory_zh": round(auc(rating[zh] >= 4, zh_member), 4),
                             "auc_heuristics": round(auc(rating[zh] >= 4, heur[zh]), 4)}
    print("judged Chinese pages:", res["judged_chinese"])


def chinese(res: dict) -> None:
    df, counts = explanatory_data.chinese_sets()
    tu = df[df["split"] == "tune"]
    notes, reviews = tu[tu["label"] == 1]["text"].tolist(), tu[tu["label"] == 0]["text"].tolist()
    listings = ["\n".join(reviews[i : i + 20]) for i in range(0, len(reviews) - 19, 20)]
    heur, member = get_scorer("heuristics"), get_scorer("explanatory_zh")
    out = {"counts": counts}
    for name, neg in (("reviews", reviews), ("listing pages of 20 reviews", listings)):
        texts = notes + neg
        y = np.r_[np.ones(len(notes)), np.zeros(len(neg))] == 1
        h = heur.score(Batch(texts, languages=["zh"] * len(texts)))
        m = member.score(Batch(texts))
        rh, rm = (pd.Series(h).rank(pct=True).to_numpy(), pd.Series(m).rank(pct=True).to_numpy())
        out[name] = {"notes": len(notes), "negatives": len(neg), "auc_heuristics": round(auc(y, h), 4),
                     "auc_explanatory_zh": round(auc(y, m), 4), "auc_mean_rank": round(auc(y, rh + rm), 4)}
    res["chinese"] = out
    print("chinese:", json.dumps(out, indent=1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=data.WORK / "members.json")
    args = ap.parse_args()
    res: dict = {}
    judged(res)
    chinese(res)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(res, indent=1, default=float))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
