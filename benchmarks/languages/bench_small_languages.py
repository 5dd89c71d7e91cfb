"""Level split of web pages per language group of web_quality stage folders (token shares and
documents per level: the small-language group ``*``, en, zh, de, and ja, ko, es, it alone); given
two folders made from one input, whether the en, zh and de pages' buckets and levels are identical.

    python benchmarks/languages/bench_small_languages.py BEFORE/40_web_quality AFTER/40_web_quality
"""

from __future__ import annotations

import glob
import json
import sys
from pathlib import Path

import pandas as pd

LEVELS = ["high", "medium_high", "medium", "medium_low", "low"]


def load(folder: str) -> pd.DataFrame:
    cols = ["doc_id", "source", "lang", "n_tokens", "quality_bucket", "quality_level"]
    df = pd.concat([pd.read_parquet(f, columns=cols) for f in sorted(glob.glob(f"{folder}/docs/*.parquet"))])
    df = df[df.source == "web"].copy()
    groups = json.loads(Path(folder, "stats.json").read_text())["extra"]["language_groups"]
    df["group"] = df.lang.where(df.lang.isin([g for g in groups if g != "*"]), "*")
    return df


def split(df: pd.DataFrame, name: str) -> str:
    tok = df.groupby("quality_level").n_tokens.sum().reindex(LEVELS, fill_value=0)
    doc = df.groupby("quality_level").size().reindex(LEVELS, fill_value=0)
    share = (100 * tok / max(tok.sum(), 1)).round(1)
    return (f"{name:4s} docs={len(df):4d}  tokens% " + " ".join(f"{lv}={share[lv]:5.1f}" for lv in LEVELS)
            + "  docs " + "/".join(str(doc[lv]) for lv in LEVELS))


def main(folders: list[str]) -> None:
    for folder in folders:
        df = load(folder)
        print("==", folder)
        for g in ["*", "en", "zh", "de"]:
            print(split(df[df.group == g], g))
        for lang in ["ja", "ko", "es", "it"]:
            print(split(df[df.lang == lang], lang))
        small = df[df.group == "*"]
        gone = sum(1 for _, g in small.groupby("lang") if (g.quality_level == "low").all())
        print(f"'*' languages with no page above low: {gone} of {small.lang.nunique()}")
    if len(folders) == 2:
        a, b = load(folders[0]).set_index("doc_id"), load(folders[1]).set_index("doc_id")
        for lang in ["en", "zh", "de"]:
            x = a[a.lang == lang]
            y = b.loc[x.index]
            print(lang, len(x), "pages; identical buckets:", bool((x.quality_bucket.values == y.quality_bucket.values).all()),
                  "levels:", bool((x.quality_level.values == y.quality_level.values).all()))


if __name__ == "__main__":
    main(sys.argv[1:])
