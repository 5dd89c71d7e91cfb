"""Shared helpers for the sample-data generators: seeded RNGs, name banks, HTML render/extract.

Everything here is deterministic: randomness only comes from ``random.Random`` objects seeded
with strings (seeded through SHA-512, so ``PYTHONHASHSEED`` does not matter).
"""

from __future__ import annotations

import html
import random
import re
from html.parser import HTMLParser

FIRST_NAMES = [
    "Amara", "Bjorn", "Carla", "Dmitri", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jonas",
    "Kofi", "Lena", "Mateo", "Nadia", "Oskar", "Priya", "Quinn", "Rosa", "Samir", "Tessa",
    "Umar", "Vera", "Wen", "Ximena", "Yusuf", "Zoe", "Aiden", "Beatriz", "Chen", "Dalia",
    "Emil", "Fatima", "Gareth", "Hana", "Ivan", "Julia", "Kenji", "Lucia", "Marek", "Noor",
]
LAST_NAMES = [
    "Okafor", "Lindqvist", "Moreau", "Petrov", "Alvarez", "Haddad", "Nakamura", "Silva", "Brennan",
    "Kowalski", "Mensah", "Fischer", "Rossi", "Iyer", "Dubois", "Larsen", "Tanaka", "Novak",
    "Garcia", "Abbott", "Castillo", "Weber", "Osei", "Horvath", "Kim", "Ferreira", "Yilmaz",
    "Johansson", "Murphy", "Chowdhury", "Santos", "Becker", "Adeyemi", "Laurent", "Park", "Costa",
]
CITIES = [
    "Rivermouth", "Eastbridge", "Northfield", "Lakeview", "Port Alder", "Greenhollow", "Ashford",
    "Millbrook", "Stonehaven", "Westmere", "Cedar Falls", "Brightwater", "Kingsport", "Elmstead",
    "Harborview", "Oakridge", "Fairhaven", "Redcliff", "Silverton", "Marlow Bay",
]
MONTHS = [
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
]
GITHUB_USERS = [
    "amokafor", "blindqvist", "cmoreau", "dpetrov", "ealvarez", "fhaddad", "hnakamura", "isilva",
    "jbrennan", "kkowalski", "lmensah", "mfischer", "nrossi", "piyer", "qdubois", "rlarsen",
]


def rng_for(seed: int, name: str) -> random.Random:
    """An independent generator per kind, so editing one generator leaves the others' output alone."""
    return random.Random(f"{seed}:{name}")


def person(rng: random.Random) -> str:
    return f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}"


def date(rng: random.Random, lo: int = 2019, hi: int = 2024) -> str:
    return f"{rng.choice(MONTHS)} {rng.randint(1, 28)}, {rng.randint(lo, hi)}"


def iso_date(rng: random.Random, lo: int = 2021, hi: int = 2024) -> str:
    return (
        f"{rng.randint(lo, hi)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
        f"T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}Z"
    )


def n_words(text: str) -> int:
    return len(text.split())


def est_tokens(text: str) -> int:
    """The brief's rough estimate: ~1.3 tokens per whitespace word."""
    return int(n_words(text) * 1.3)


def esc(text: str) -> str:
    return html.escape(text, quote=False)


def fill(template: str, slots: dict[str, str]) -> str:
    """``str.format`` that leaves unknown ``{names}`` (e.g. LaTeX braces) alone."""
    return re.sub(r"\{(\w+)\}", lambda m: str(slots.get(m.group(1), m.group(0))), template)


# --------------------------------------------------------------------------- HTML pages

SKIP_TAGS = {"script", "style", "head", "nav", "header", "footer", "aside", "noscript"}
BLOCK_TAGS = {
    "p", "div", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "blockquote", "table", "section",
    "article", "main", "ul", "ol", "dl", "form", "figure", "figcaption", "hr",
}
LINE_TAGS = {"li", "br", "tr", "dt", "dd"}


class _Extractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skip = 0

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag in SKIP_TAGS:
            self.skip += 1
        elif tag in BLOCK_TAGS:
            self.parts.append("\n\n")
        elif tag in LINE_TAGS:
            self.parts.append("\n")
        elif tag in ("td", "th"):
            self.parts.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag in SKIP_TAGS:
            self.skip = max(0, self.skip - 1)
        elif tag in BLOCK_TAGS:
            self.parts.append("\n\n")

    def handle_data(self, data: str) -> None:
        if not self.skip:
            # A naive extractor: every whitespace run (code indentation included) becomes one space.
            self.parts.append(re.sub(r"\s+", " ", data))


def extract_text(page_html: str) -> str:
    """Naive main-content extraction: drops nav/header/footer/aside/scripts, flattens whitespace.

    Boilerplate that a site puts in plain ``<div>``s survives, as it does with real extractors.
    """
    ex = _Extractor()
    ex.feed(page_html)
    ex.close()
    lines = [" ".join(line.split()) for line in "".join(ex.parts).split("\n")]
    text = "\n".join(lines)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def render_blocks(blocks: list[tuple]) -> str:
    """Blocks are ``(kind, payload, ...)`` tuples; payloads are plain text unless kind ends in ``_html``."""
    out: list[str] = []
    for block in blocks:
        kind, payload = block[0], block[1]
        if kind in ("h1", "h2", "h3", "p", "blockquote"):
            out.append(f"<{kind}>{esc(payload)}</{kind}>")
        elif kind == "p_html":
            out.append(f"<p>{payload}</p>")
        elif kind == "byline":
            out.append(f'<p class="byline">{esc(payload)}</p>')
        elif kind in ("ul", "ol"):
            items = "".join(f"<li>{esc(i)}</li>" for i in payload)
            out.append(f"<{kind}>{items}</{kind}>")
        elif kind == "pre":
            lang = block[2]
            out.append(f'<pre><code class="language-{lang}">{esc(payload)}</code></pre>')
        elif kind == "table":
            head, *rows = payload
            th = "".join(f"<th>{esc(c)}</th>" for c in head)
            trs = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in r) + "</tr>" for r in rows)
            out.append(f"<table><thead><tr>{th}</tr></thead><tbody>{trs}</tbody></table>")
        elif kind == "div_lines":  # boilerplate that the extractor cannot tell from content
            cls = block[2] if len(block) > 2 else "block"
            out.append(f'<div class="{cls}">' + "<br>".join(f"<span>{esc(i)}</span>" for i in payload) + "</div>")
        elif kind == "raw":
            out.append(payload)
        else:
            raise ValueError(f"unknown block kind {kind!r}")
    return "\n".join(out)


def render_page(title: str, site: str, blocks: list[tuple], nav: list[str], footer: list[str]) -> str:
    """A whole page: head with scripts, semantic nav/footer (dropped by the extractor), article body."""
    nav_html = "".join(f'<li><a href="/{i.lower().replace(" ", "-")}">{esc(i)}</a></li>' for i in nav)
    foot_html = "".join(f"<p>{esc(i)}</p>" for i in footer)
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>{esc(title)} | {esc(site)}</title>\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<link rel="stylesheet" href="/static/css/main.css">\n'
        "<script>window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push(arguments);}</script>\n"
        "</head>\n<body>\n"
        f'<header><div class="logo">{esc(site)}</div><nav><ul>{nav_html}</ul></nav></header>\n'
        f"<main>\n<article>\n{render_blocks(blocks)}\n</article>\n</main>\n"
        f"<footer>{foot_html}</footer>\n"
        '<script src="/static/js/app.js" defer></script>\n</body>\n</html>\n'
    )
