"""``web/web.jsonl.gz``: articles, boilerplate, spam, exact and near copies, template pages,
code pages, math/science pages, long documents and empty records, shuffled together.

Every record carries ``meta.kind`` (what it was generated as) so stages can be checked against it;
copies name their original in ``meta.duplicate_of`` / ``meta.near_duplicate_of``.
"""

from __future__ import annotations

import random
import re

from _common import extract_text, person, render_page, rng_for
from _stem import ALL as STEM_GENERATORS
from _web_articles import FOOTER, NAV, articles, long_document
from _web_code import code_pages
from _web_junk import boilerplate_page, spam_page, template_pages

COUNTS = {"article": 150, "boilerplate": 50, "spam": 40, "exact_copy": 20, "near_copy": 40, "template": 60,
          "code": 30, "math_science": 20, "long": 5, "empty": 4}
LONG_WORDS = [16000, 22000, 28000, 34000, 41000]
EDIT_RATES = [0.01, 0.01, 0.02, 0.02, 0.03, 0.04, 0.05, 0.07, 0.1]
SYNONYMS = {"said": "stated", "says": "notes", "many": "numerous", "about": "around", "also": "too",
            "large": "big", "small": "little", "quickly": "rapidly", "often": "frequently", "new": "fresh",
            "people": "residents", "first": "initial", "most": "the majority of", "help": "assist"}
FILLERS = ["really", "quite", "very", "local", "recent", "actually", "indeed", "still", "now", "just"]


def slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:70]


def perturb(rng: random.Random, blocks: list[tuple], rate: float) -> list[tuple]:
    """Word swaps, insertions and deletions at ``rate`` per word in paragraphs; other blocks untouched."""
    out = []
    for block in blocks:
        if block[0] != "p":
            out.append(block)
            continue
        words = []
        for w in block[1].split():
            r = rng.random()
            if r >= rate:
                words.append(w)
                continue
            op = rng.random()
            if op < 0.4:
                words.append(SYNONYMS.get(w.lower().strip(".,"), rng.choice(FILLERS)))
            elif op < 0.7:
                words.extend([rng.choice(FILLERS), w])
            # else: deletion
        out.append(("p", " ".join(words)))
    return out


def change_header_footer(rng: random.Random, page: dict) -> list[tuple]:
    blocks = list(page["blocks"])
    choice = rng.randrange(4)
    if choice == 0:
        blocks.insert(1, ("p", "Advertisement"))
    elif choice == 1 and len(blocks) > 1 and blocks[1][0] == "byline":
        blocks[1] = ("byline", f"By {person(rng)} | Updated {rng.randint(1, 28)} days ago")
    elif choice == 2:
        blocks.append(("p", f"This story was first published by {page['site']} and is republished with permission."))
    else:
        blocks.append(("p", "Share this article: Facebook | Twitter | Email"))
    return blocks


def _stem_page(rng: random.Random, make) -> dict:
    title, body = make(rng)
    blocks = [("h1", title), ("byline", f"By {person(rng)}, science editor"), *body]
    site, domain = rng.choice([("Science Made Clear", "sciencemadeclear.example.org"),
                               ("The Chalkboard", "chalkboard.example.edu")])
    return {"title": title, "site": site, "domain": domain, "blocks": blocks, "topic": f"stem:{make.__name__}"}


def _empty_records(rng: random.Random) -> list[dict]:
    scripts_only = ("<!DOCTYPE html>\n<html><head><title></title><script>location.replace('/app');</script></head>"
                    "<body><script src=\"/bundle.js\"></script></body></html>\n")
    gallery = ("<!DOCTYPE html>\n<html><head><title>Gallery</title></head><body><main>"
               + "".join(f'<img src="/photos/{i}.jpg" alt="">' for i in range(8)) + "</main></body></html>\n")
    return [
        {"url": "https://app-shell.example.com/", "text": extract_text(scripts_only), "html": scripts_only},
        {"url": "https://photos-of-rivermouth.example.com/gallery/2", "text": extract_text(gallery), "html": gallery},
        {"url": "https://broken-feed.example.net/item/771", "text": ""},
        {"url": "https://broken-feed.example.net/item/772", "text": " \n\t  \n "},
    ]


def generate(seed: int) -> list[dict]:
    rng = rng_for(seed, "web")
    items: list[dict] = []  # {kind, page, meta, keep_html}

    def add(kind: str, page: dict, **meta) -> dict:
        item = {"kind": kind, "page": page, "meta": meta, "key": len(items)}
        items.append(item)
        return item

    arts = [add("article", p) for p in articles(rng, COUNTS["article"])]
    boiler = [add("boilerplate", boilerplate_page(rng)) for _ in range(COUNTS["boilerplate"])]
    spam = [add("spam", spam_page(rng, i)) for i in range(COUNTS["spam"])]
    for p in template_pages(rng, COUNTS["template"] // 3):
        add("template", p, template=p["section"])
    code = [add("code", p) for p in code_pages(rng)]
    for make in STEM_GENERATORS[: COUNTS["math_science"]]:
        add("math_science", _stem_page(rng, make))
    for i, words in enumerate(LONG_WORDS):
        add("long", long_document(rng, i, words))

    for item in items:
        p = item["page"]
        item["html"] = render_page(p["title"], p["site"], p["blocks"], NAV, FOOTER)
        item["text"] = extract_text(item["html"])
        item["url"] = f"https://{p['domain']}/{p.get('section', p['topic'].split(':')[0])}/{slug(p['title'])}"
        no_html = {"article": 0.05, "spam": 0.2, "template": 0.1}.get(item["kind"], 0.0)
        item["keep_html"] = rng.random() >= no_html

    # Near copies: re-rendered from edited blocks, so html and text stay consistent.
    for i, src in enumerate(rng.sample(arts, COUNTS["near_copy"])):
        rate = EDIT_RATES[i % len(EDIT_RATES)]
        page = dict(src["page"])
        if rng.random() < 0.5:
            page["blocks"] = change_header_footer(rng, page)
        page["blocks"] = perturb(rng, page["blocks"], rate)
        page["domain"] = rng.choice(["newswire-mirror.example.net", "dailydigest.example.com", "readlater.example.org"])
        item = add("near_copy", page, edit_rate=rate, near_duplicate_of=src["key"])
        item["html"] = render_page(page["title"], page["site"], page["blocks"], NAV, FOOTER)
        item["text"] = extract_text(item["html"])
        item["url"] = f"https://{page['domain']}/story/{slug(page['title'])}-{i}"
        item["keep_html"] = True

    # Exact copies: same text and html under another URL.
    sources = rng.sample(arts, 15) + rng.sample(spam, 3) + rng.sample(code, 1) + rng.sample(boiler, 1)
    for i, src in enumerate(sources):
        item = add("exact_copy", src["page"], duplicate_of=src["key"], copied_kind=src["kind"])
        item.update(html=src["html"], text=src["text"], keep_html=src["keep_html"],
                    url=f"https://content-farm-{i % 4}.example.info/p/{slug(src['page']['title'])}")

    for rec in _empty_records(rng):
        item = add("empty", {"topic": "empty"})
        item.update(text=rec["text"], url=rec["url"], html=rec.get("html"), keep_html="html" in rec)

    rng.shuffle(items)
    ids = {item["key"]: f"web-{n:05d}" for n, item in enumerate(items)}
    records, seen_urls = [], set()
    for item in items:
        url = item["url"]
        while url in seen_urls:
            url += "-2"
        seen_urls.add(url)
        meta = {"kind": item["kind"], "topic": item["page"].get("topic")}
        for k, v in item["meta"].items():
            meta[k] = ids[v] if k in ("duplicate_of", "near_duplicate_of") else v
        rec = {"id": ids[item["key"]], "source": "web", "url": url, "text": item["text"]}
        if item["keep_html"]:
            rec["html"] = item["html"]
        rec["meta"] = meta
        records.append(rec)
    return records

