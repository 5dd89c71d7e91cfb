"""Per-language centers and scales of the heuristic signals, from real text of each language.

    CURATION_SHARED_DATA=/path/to/shared/data python benchmarks/languages/build_heuristics_lang.py

Writes the ``languages`` block of ``classifiers/models/web_heuristics/model.json`` (run after
``benchmarks/web_quality/build_defaults.py``, which writes the English terms): for each term, the
median and spread (IQR, or the 10–90 spread / 2.56 when larger) of the signal over good real text
of the language, and ``penalty_only`` (a term only marks a page down for being worse than that
typical good text). Chinese reference: every other real tutorial section (the other 23 are held
out by the benchmark). A scale is never narrower than a quarter of the English term's (a small
reference set must not turn a tiny difference into a full ±3 penalty).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import data  # noqa: E402

from classifiers.heuristics import DEFAULT_MODEL_DIR, HeuristicModel, _transform  # noqa: E402
from classifiers.heuristics_signals import SIGNAL_NAMES, signal_matrix  # noqa: E402


def reference(lang: str) -> list[str]:
    if lang != "zh":
        raise SystemExit(f"no reference text for {lang}")
    return data.zh_notes()["text"].tolist()[::2]


def stats_for(texts: list[str], lang: str, card: dict) -> dict[str, dict[str, float]]:
    x = signal_matrix(texts, [lang] * len(texts))
    out = {}
    for term in card["terms"]:
        if term["signal"] == "lorem_ipsum":
            continue  # presence is the penalty, in every language
        tv = _transform(x[:, SIGNAL_NAMES.index(term["signal"])], term["transform"])
        tv = tv[~np.isnan(tv)]
        if not len(tv):
            continue
        q10, q25, q75, q90 = np.percentile(tv, [10, 25, 75, 90])
        scale = float(max(q75 - q25, (q90 - q10) / 2.56, term["scale"] / 4, 1e-3))
        out[term["signal"]] = {"center": round(float(np.median(tv)), 6), "scale": round(scale, 6)}
    return out


def main() -> None:
    path = DEFAULT_MODEL_DIR / "model.json"
    card = json.loads(path.read_text())
    langs = {}
    for lang in ("zh",):
        texts = reference(lang)
        langs[lang] = {"penalty_only": True, "signals": stats_for(texts, lang, card)}
        print(lang, len(texts), "texts")
    card["languages"] = langs
    card["languages_from"] = ("zh: median / spread of each signal on 24 real Chinese tutorial sections (CS-Notes, every other "
                              "section of ../shared/data/zh/zh_tech_notes)")
    card["languages_built_by"] = "benchmarks/languages/build_heuristics_lang.py"
    HeuristicModel.load(path)  # the old file still loads
    path.write_text(json.dumps(card, indent=2, ensure_ascii=False) + "\n")
    HeuristicModel.load(path)  # and so does the new one
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
