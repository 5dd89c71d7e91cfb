"""``resiliparse_routed`` of another revision against this checkout's, in one process, page by page.

    python benchmarks/extract/bench_routed_ab.py [--base HEAD] [--split held_out]

The base revision's ``extract_lines.py`` and model are read with ``git show`` and loaded as a module
of their own; both sides then run the same steps as :func:`curation.ingest.extract.extract_page`
(filter, and ``trafilatura_fast`` for the pages their filter doubts), alternating page by page so
the machine's load falls on both alike. Printed: snippet recall / precision / F1 on the WCXB pages,
pages per CPU-second, pages sent to trafilatura; then the long-page sweep: ``<article><h1>Chapter</h1>``
and N paragraphs of ``math/openstax_modules.jsonl.gz``, each in a ``<p>``, and the characters kept.
"""

from __future__ import annotations

import argparse
import gzip
import html as htmllib
import importlib.util
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_extract import DATA, f1, load_pages  # noqa: E402

from curation.ingest import extract_lines  # noqa: E402
from curation.ingest.extract import _BLANKS, page_tree, snippet_scores, trafilatura_fast_text  # noqa: E402


def base_module(rev: str):
    """``curation/ingest/extract_lines.py`` and its model at ``rev``, as a module apart from this checkout's."""
    tmp = Path(tempfile.mkdtemp())
    for name in ("extract_lines.py", "extract_lines_model.json"):
        blob = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:curation/ingest/{name}"], check=True, capture_output=True).stdout
        (tmp / name).write_bytes(blob)
    spec = importlib.util.spec_from_file_location("base_extract_lines", tmp / "extract_lines.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def routed(filtered_page, html: str) -> tuple[str, bool]:
    """``routed_page`` of extract.py with the given filter: (text, sent to trafilatura)."""
    text, doubtful, _ = filtered_page(html)
    if doubtful and html:
        tree = page_tree(html)
        text = trafilatura_fast_text(html if tree is None else tree) or text
    return _BLANKS.sub("\n\n", text.replace("\r\n", "\n")).strip(), doubtful and bool(html)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", default="HEAD")
    ap.add_argument("--split", choices=("held_out", "tune", "all"), default="held_out")
    args = ap.parse_args()
    sides = {"base": base_module(args.base).filtered_page, "this": extract_lines.filtered_page}
    pages = load_pages(None, args.split)
    wcxb = pages[pages["source"] == "wcxb"]
    out = {k: {"cpu": 0.0, "routed": 0, "r": [], "p": []} for k in sides}
    for html, w, wo in zip(wcxb["html"], wcxb["with_snippets"], wcxb["without_snippets"], strict=True):
        for name, fn in sides.items():
            t0 = time.process_time()
            text, sent = routed(fn, html)
            out[name]["cpu"] += time.process_time() - t0
            r, p = snippet_scores(text, json.loads(w or "[]"), json.loads(wo or "[]"))
            out[name]["routed"] += sent
            out[name]["r"].append(r)
            out[name]["p"].append(p)
    for name, o in out.items():
        r, p = pd.Series(o["r"], dtype=float).mean(), pd.Series(o["p"], dtype=float).mean()
        print(f"{name}: {len(wcxb)} {args.split} WCXB pages, recall {r:.4f} precision {p:.4f} F1 {f1(p, r):.4f}, "
              f"{len(wcxb) / o['cpu']:.1f} pages/CPU-s, {o['routed']} sent to trafilatura")
    paras: list[str] = []
    with gzip.open(DATA.parents[1] / "math" / "openstax_modules.jsonl.gz", "rt", encoding="utf-8") as f:
        for line in f:
            paras += [p.strip() for p in json.loads(line)["text"].split("\n\n") if len(p.strip()) > 200]
            if len(paras) >= 600:
                break
    for n in (30, 60, 80, 100, 150, 300, 600):
        page = "<html><body><article><h1>Chapter</h1>" + "".join(f"<p>{htmllib.escape(p)}</p>" for p in paras[:n]) + "</article></body></html>"
        kept = {name: len(routed(fn, page)[0]) for name, fn in sides.items()}
        print(f"N={n}: {sum(len(p) for p in paras[:n])} chars of paragraphs; kept " + ", ".join(f"{k} {v}" for k, v in kept.items()))


if __name__ == "__main__":
    main()
