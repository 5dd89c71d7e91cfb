"""Tiers of kinds of real code files under two versions of the code: long files, type stubs, files without code.

    python benchmarks/code_quality/bench_file_kinds.py --before HEAD [--out benchmarks/_work/code_quality]

(``CURATION_DATA`` names the shared data folder when it is not ``../shared/data``.)

Every file of the code corpus goes through the stage's own steps, once with the working tree's code
and once with ``--before`` (a git revision, unpacked to a temporary folder and run in a subprocess
with only that tree importable): ``pipelines.stages.code_quality._score`` (language, rule signals,
scorers with the recipe's ``score_max_chars``), then the histogram, the percentile cuts, the tiers
and ``stats.json``'s ``extra.tiers`` (``tier_counts``), recipe defaults throughout, the whole corpus
as one partition (histograms add, so partitions do not change the cuts). Languages come from the
corpus's ``language`` column, as in a run (``language_from: missing``). Prints, before and after:
the tier split per language, of files longer than ``score_max_chars``, of ``.pyi`` stubs and ``.py``
files, of the files the working tree scores as having no line of code, and the totals of
``extra.tiers`` against the tiers given; and the CPU seconds of each side's scoring.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from two_trees import outcomes, report  # noqa: E402

DATA = Path(os.environ.get("CURATION_DATA", ROOT / ".." / "shared" / "data")) / "code" / "code_files.parquet"
TIERS = ("high", "medium", "low")


def corpus():
    import pandas as pd

    df = pd.read_parquet(DATA, columns=["repo", "path", "language", "text"])
    return pd.DataFrame({"doc_id": [f"f{i}" for i in range(len(df))], "source": "code", "text": df["text"], "path": df["path"],
                         "language": df["language"], "repo": df["repo"]})


def run_here(out: Path) -> None:
    """This tree's stage steps on the corpus: per file tier, rule reason, structural score; extra.tiers."""
    sys.path.insert(0, str(Path.cwd()))
    from curation.quality.code_files import annotate_files, file_histogram, tier_counts
    from curation.quality.code_language import UNPOOLED_GROUPS, tier_group
    from curation.quality.code_tiers import thresholds
    from pipelines.recipe import load_recipe, stage_config
    from pipelines.stages.code_quality import CodeQualityConfig, _score

    cfg = stage_config(load_recipe(None), "code_quality", CodeQualityConfig)
    df = corpus()
    t = time.process_time()
    scores = _score(0, df, cfg)
    cpu = time.process_time() - t
    hist = file_histogram(scores, cfg.rules, cfg.tiers.weights)
    default, overrides = cfg.tiers.rules()
    cuts = thresholds(hist, default, overrides, cfg.tiers.min_files, tier_group, UNPOOLED_GROUPS)
    ann = annotate_files(df, scores, list(cfg.scorers), cfg.rules, cfg.tiers, cuts)
    json.dump({"tier": ann["code_tier"].tolist(), "reason": ann["drop_reason"].tolist(), "language": ann["language"].tolist(),
               "score": [None if x != x else float(x) for x in scores.set_index("doc_id").loc[df["doc_id"], "code_score_structural"]],
               "extra_tiers": tier_counts(hist, cuts), "cuts": {k: list(v) for k, v in cuts.items()}, "score_cpu_s": round(cpu, 2),
               "max_chars": cfg.score_max_chars}, out.open("w"))


def split(tiers: list, sel) -> str:
    n = sum(1 for i in sel if tiers[i] is not None)
    counts = [sum(1 for i in sel if tiers[i] == k) for k in TIERS]
    return " / ".join(map(str, counts)) + (f" ({100 * counts[2] / n:.1f} % low, {100 * counts[0] / n:.1f} % high)" if n else "")


def main() -> None:
    got = outcomes(__file__, __doc__, "kinds", run_here)
    if got is None:
        return
    out, b, a = got
    df = corpus()
    lengths = df["text"].str.len().to_numpy()
    paths = df["path"].fillna("").tolist()
    kept = [i for i in range(len(df)) if a["reason"][i] is None and b["reason"][i] is None]
    langs = a["language"]
    lines = [f"scoring CPU-s (same process kind, one run): before {b['score_cpu_s']}, after {a['score_cpu_s']}",
             "", "| files (rule-passing, tier high / medium / low) | files | before | after |", "|---|---:|---|---|"]
    kinds = {
        f"longer than score_max_chars ({a['max_chars']:,})": [i for i in kept if lengths[i] > a["max_chars"]],
        "100,001–200,000 characters": [i for i in kept if 100_000 < lengths[i] <= a["max_chars"]],
        ".pyi stubs": [i for i in kept if paths[i].endswith(".pyi")],
        ".py files": [i for i in kept if paths[i].endswith(".py")],
        "no line of code (after: score 0)": [i for i in kept if a["score"][i] == 0.0],
    }
    for lang in sorted({langs[i] for i in kept if langs[i]}, key=lambda x: -sum(langs[i] == x for i in kept)):
        sel = [i for i in kept if langs[i] == lang]
        if len(sel) >= 50:
            kinds[f"language {lang}"] = sel
    for name, sel in kinds.items():
        lines.append(f"| {name} | {len(sel)} | {split(b['tier'], sel)} | {split(a['tier'], sel)} |")
    python = [i for i in kept if langs[i] == "Python"]
    stubs = [i for i in python if paths[i].endswith(".pyi")]
    for side, r in (("before", b), ("after", a)):
        low = [i for i in python if r["tier"][i] == "low"]
        lines.append(f"{side}: .pyi files in Python's low tier: {sum(i in set(stubs) for i in low)} of {len(low)}")
    lines += ["", "files longer than score_max_chars (all, rule-dropped too): score before → after, tier before → after"]
    for i in sorted((i for i in range(len(df)) if lengths[i] > a["max_chars"] and a["score"][i] is not None), key=lambda i: paths[i]):
        lines.append(f"- {df['repo'][i]} {paths[i]} ({langs[i]}): {b['score'][i]:.2f} → {a['score'][i]:.2f}, "
                     f"{b['tier'][i] or b['reason'][i]} → {a['tier'][i] or a['reason'][i]}")
    lines += ["", "no line of code (after), rule-passing: path, language, score before, tier before"]
    for i in kinds["no line of code (after: score 0)"]:
        lines.append(f"- {df['repo'][i]} {paths[i]} ({langs[i]}): {b['score'][i]:.2f}, {b['tier'][i]}")
    for side, r in (("before", b), ("after", a)):
        given = {k: sum(t == k for t in r["tier"]) for k in TIERS}
        per_lang = {k: sum(v[k] for lang, v in r["extra_tiers"].items() if lang != "*") for k in TIERS}
        lines.append(f"{side}: tiers given {given}; extra.tiers summed over languages {per_lang}; "
                     f"extra.tiers['*'] {r['extra_tiers'].get('*', 'absent')}")
    report(out, "file_kinds.md", lines)


if __name__ == "__main__":
    main()
