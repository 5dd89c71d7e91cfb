"""Main-content extractors on real pages: snippet recall/precision/F1, token F1, pages per CPU-second.

    python benchmarks/extract/bench_extract.py [--split held_out|tune|all] [--limit N] [--extractors trafilatura,datatrove,...]

Pages (../shared/data/web/web_docs.parquet):
- ``wcxb`` (web-content-extraction benchmark, dev split, 7 page types): raw HTML, human-reviewed
  main text, must-have snippets (``with_snippets``) and must-not snippets (``without_snippets``);
- ``scrapinghub_aeb``: news pages with their human-written article body.

Split: ``resiliparse_routed`` was fitted on the tune half (train_line_filter.py); a page is
**held out** when the SHA-1 of its host (``www.`` dropped) is odd, and the default ``--split
held_out`` measures every extractor on those pages only. ``datatrove`` is the peer
``datatrove.pipeline.extractors.Trafilatura`` (FineWeb's settings: ``favor_precision``, deduplicate).

The measure: per page, **recall** = share of its must-have snippets found in the extracted
text, **precision** = share of its must-not snippets absent from it; a page without snippets of a
kind does not count on that side. F1 = harmonic mean of mean recall and mean precision. Matching
is on NFKC, lower-cased text with typographic quotes and dashes folded to ASCII and
whitespace collapsed (extractors differ in how they render ’ and —; the snippets were written with '). Token F1 (bag of words against the human
text, as scrapinghub's benchmark) is reported beside it. Throughput is pages per CPU-second of
this process (``time.process_time``), one extractor after the other on the same pages, so the
machine's other load does not enter the comparison.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from curation.ingest.extract import EXTRACTORS, extract_text, snippet_scores, token_f1  # noqa: E402

DATA = Path(os.environ.get("CURATION_SHARED_DATA", ROOT.parent / "shared" / "data")) / "web" / "web_docs.parquet"
OUT = Path(__file__).resolve().parent / "results.json"
PEERS = ("datatrove",)


def held_out(url: str) -> bool:
    """The page's side of the tune / held-out split: the SHA-1 of its host (``www.`` dropped) is odd."""
    host = (urlsplit(url).hostname or "").removeprefix("www.")
    return int(hashlib.sha1(host.encode()).hexdigest(), 16) % 2 == 1


def load_pages(limit: int | None, split: str = "all") -> pd.DataFrame:
    df = pd.read_parquet(DATA)
    pages = df[df["source"].isin(["wcxb", "scrapinghub_aeb"]) & (df["html"].str.len() > 0)]
    if split != "all":
        pages = pages[pages["url"].map(held_out) == (split == "held_out")]
    pages = pages.reset_index(drop=True)
    return pages.groupby("source", group_keys=False).head(limit) if limit else pages


def extractor(name: str):
    """``html → text`` for a key of EXTRACTORS or a peer of :data:`PEERS`."""
    if name == "datatrove":
        from datatrove.pipeline.extractors import Trafilatura

        peer = Trafilatura()  # its defaults, as FineWeb ran it; .extract is the call without the timeout process
        return lambda html: peer.extract(html) or ""
    return lambda html: extract_text(html, name)


def f1(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r else 0.0


def run(pages: pd.DataFrame, names: list[str]) -> dict:
    results = {}
    wcxb = pages["source"] == "wcxb"
    for name in names:
        texts, cpu, fn = [], 0.0, extractor(name)
        for html in pages["html"]:
            t0 = time.process_time()
            texts.append(fn(html))
            cpu += time.process_time() - t0
        rec, prec, types = [], [], []
        for text, w, wo, kind in zip([t for t, k in zip(texts, wcxb, strict=True) if k], pages.loc[wcxb, "with_snippets"],
                                     pages.loc[wcxb, "without_snippets"], pages.loc[wcxb, "page_type"], strict=True):
            r, p = snippet_scores(text, json.loads(w or "[]"), json.loads(wo or "[]"))
            rec.append(r)
            prec.append(p)
            types.append(kind)
        s = pd.DataFrame({"recall": rec, "precision": prec, "type": types}, dtype=object)
        s[["recall", "precision"]] = s[["recall", "precision"]].astype(float)
        tf1 = [token_f1(t, h) for t, h in zip(texts, pages["text"], strict=True)]
        tf = pd.Series(tf1)
        mr, mp = float(s["recall"].mean()), float(s["precision"].mean())
        results[name] = {
            "pages": len(pages), "cpu_s": round(cpu, 2), "pages_per_cpu_s": round(len(pages) / cpu, 1),
            "snippet_recall": round(mr, 4), "snippet_precision": round(mp, 4), "snippet_f1": round(f1(mp, mr), 4),
            "wcxb_pages": int(wcxb.sum()), "empty": int(sum(not t for t in texts)),
            "token_f1_wcxb": round(float(tf[wcxb.to_numpy()].mean()), 4),
            "token_f1_scrapinghub": round(float(tf[~wcxb.to_numpy()].mean()), 4),
            "by_type": {k: round(f1(g["precision"].mean(), g["recall"].mean()), 4) for k, g in s.groupby("type")},
        }
        print(name, json.dumps(results[name]), flush=True)
    return results


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--limit", type=int, default=None, help="pages per source (default: all)")
    ap.add_argument("--split", choices=("held_out", "tune", "all"), default="held_out")
    ap.add_argument("--extractors", default=",".join([*EXTRACTORS, *PEERS]))
    args = ap.parse_args()
    if not DATA.exists():
        sys.exit(f"{DATA} is absent: this benchmark needs the shared real pages")
    pages = load_pages(args.limit, args.split)
    results = run(pages, args.extractors.split(","))
    OUT.write_text(json.dumps({"split": args.split, "extractors": results}, indent=1) + "\n")


if __name__ == "__main__":
    main()
