"""The nesting guard (``too_deep``) on real pages and on hostile shapes, against a plain tag count.

    python benchmarks/extract/bench_nesting_guard.py

1. Real pages (``html`` of ../shared/data/web/web_docs.parquet): CPU seconds of the guard over all
   pages (best of 3 passes, this process), pages it rejects, and per page the depth it counts
   (:func:`curation.ingest.nesting.nesting_depth`) against the depth of the tree Resiliparse parses.
2. Hostile shapes (``<div/>``, ``<div></b>``, ``<p><b id=i>``, ``<optgroup>``, ``<em><nobr>``, and 150
   distinct ``<b>`` a paragraph closes, reopened by each ``<p>x`` after it): the guard's CPU seconds and verdict.

Both are run for the guard of ``curation.ingest.extract`` and for a plain tag count (open tags less
close tags of elements that nest, ``<x/>`` skipped), the reference the table compares to.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pandas as pd

from curation.ingest.extract import MAX_DEPTH, elements, too_deep
from curation.ingest.nesting import nesting_depth, parser_depth

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("CURATION_SHARED_DATA", ROOT.parent / "shared" / "data")) / "web" / "web_docs.parquet"
_TAG = re.compile(r"<(/?)([a-zA-Z][a-zA-Z0-9]*)[^>]*?(/?)>")
_FLAT = frozenset(["area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track", "wbr", "p", "li", "dt", "dd", "td", "th", "tr", "option"])


def tag_count_too_deep(html: str, limit: int = MAX_DEPTH) -> bool:
    """The reference: open less close tags, counting only elements that nest, ``<x/>`` as closed."""
    if elements(html) < max(10_000, limit):
        return False
    depth = 0
    for m in _TAG.finditer(html):
        if m.group(3) or m.group(2).lower() in _FLAT:
            continue
        depth += -1 if m.group(1) else 1
        if depth > limit:
            return True
        depth = max(depth, 0)
    return False


def cpu(guard, pages: list[str]) -> tuple[float, int]:
    """Best-of-3 CPU seconds of ``guard`` over ``pages``, and how many it rejects."""
    times, rejected = [], 0
    for _ in range(3):
        start = time.process_time()
        rejected = sum(guard(h) for h in pages)
        times.append(time.process_time() - start)
    return min(times), rejected


def main() -> None:
    pages = [h for h in pd.read_parquet(DATA, columns=["html"])["html"].tolist() if isinstance(h, str) and h]
    print(f"{len(pages)} real pages with HTML")
    for name, guard in (("tag count", tag_count_too_deep), ("too_deep", too_deep)):
        seconds, rejected = cpu(guard, pages)
        print(f"  {name:10} {seconds:6.3f} CPU-s over all pages ({seconds / len(pages) * 1e3:.3f} ms a page), {rejected} rejected")
    counted = [nesting_depth(h) for h in pages]
    parsed = [parser_depth(h) - 2 for h in pages]  # html and body: the guard leaves them out
    diff = [c - p for c, p in zip(counted, parsed, strict=True)]
    print(f"  depth counted: max {max(counted)}; parser's: max {max(parsed)}; counted - parser's: "
          f"min {min(diff)}, max {max(diff)}, pages counted deeper by > 10: {sum(d > 10 for d in diff)}")
    for shape, unit in (("<div/>", lambda i: "<div/>"), ("<div></b>", lambda i: "<div></b>"),
                        ("<p><b id=i>", lambda i: f"<p><b id={i}>"), ("<optgroup>", lambda i: "<optgroup>"),
                        ("<em><nobr>", lambda i: "<em><nobr>"),
                        ("<p>x, <b id=i> x 150 first", lambda i: "<p>" + "".join(f"<b id={j}>" for j in range(150))
                         if i == 0 else "<p>x")):
        for n in (10_000, 100_000) if shape.startswith(("<optgroup>", "<em>", "<p>x")) else (80_000, 1_000_000):
            html = "<html><body>" + "".join(unit(i) for i in range(n)) + "deep text</body></html>"
            for name, guard in (("tag count", tag_count_too_deep), ("too_deep", too_deep)):
                start = time.process_time()
                verdict = guard(html)
                print(f"  {shape:12} n={n:>9,} {len(html) / 1e6:5.1f} MB  {name:10} too deep: {verdict!s:5} "
                      f"{time.process_time() - start:6.3f} CPU-s")


if __name__ == "__main__":
    main()
