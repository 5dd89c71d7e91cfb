"""``acme-labs/handbook``: a static HTML site (text-rich pages, markup-only fragments, CSS, JS,
SVG and an Atom feed) so that the HTML/XML rules of the code filters have both kinds of file."""

from __future__ import annotations

import random

from _common import esc

PAGES = ["onboarding", "expenses", "travel", "security", "remote-work", "holidays", "equipment", "code-review",
         "incident-response", "glossary"]
POLICY = [
    "Every new {role} gets a buddy for the first {n} weeks, who answers questions and reviews the first pull requests.",
    "Submit {thing} within {n} days; late submissions are still accepted but need a short explanation.",
    "If you are unsure whether {thing} is covered, ask in the #people channel before you commit to anything.",
    "Managers approve {thing} in the HR system, usually within two working days.",
    "Keep receipts for {thing} for at least {n} years, as required by the tax authorities.",
    "We prefer written decisions: summarise the outcome of any meeting about {thing} in the team channel.",
    "For anything involving customer data, follow the data classification guide before you start.",
    "The on-call {role} owns the incident until it is handed over explicitly, in writing.",
    "We review this page every {n} months; suggest changes with a pull request to the handbook repository.",
    "Laptops are encrypted, updated automatically and replaced every {n} years.",
    "Use the company password manager for every shared credential; never paste secrets into chat.",
    "Core hours are 11:00 to 15:00 in your local time zone; outside them, plan your day as you like.",
    "A good review comment explains why, not only what, and separates blocking issues from suggestions.",
    "Book {thing} through the travel portal so that we can reach you if plans change.",
    "Public holidays follow the country you live in; swap them with a colleague if that suits you better.",
]
THINGS = ["expense claims", "travel bookings", "equipment requests", "time off", "training budgets",
          "conference tickets", "home-office purchases", "team events"]
ROLES = ["engineer", "designer", "support specialist", "team lead", "analyst"]


def _para(rng: random.Random, k: int) -> str:
    return " ".join(rng.choice(POLICY).format(role=rng.choice(ROLES), thing=rng.choice(THINGS), n=rng.randint(2, 6))
                    for _ in range(k))


def page(rng: random.Random, slug: str) -> str:
    title = slug.replace("-", " ").capitalize()
    sections = "".join(f"    <h2>{esc(h)}</h2>\n    <p>{esc(_para(rng, rng.randint(2, 4)))}</p>\n"
                       for h in rng.sample(["Why", "How it works", "Who to ask", "Exceptions", "Checklist", "History"], 3))
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n  <meta charset="utf-8">\n  <title>{esc(title)} · Handbook</title>\n'
            '  <link rel="stylesheet" href="../assets/style.css">\n</head>\n<body>\n  <!--#include virtual="../layouts/nav.html" -->\n'
            f"  <main>\n    <h1>{esc(title)}</h1>\n    <p class=\"lead\">{esc(_para(rng, 2))}</p>\n{sections}  </main>\n"
            '  <script src="../assets/site.js"></script>\n</body>\n</html>\n')


def handbook(rng: random.Random) -> list[tuple[str, str]]:
    nav = ('<nav class="site-nav">\n  <ul>\n' + "".join(f'    <li><a href="/pages/{p}.html" class="nav-link" data-page="{p}"></a></li>\n'
                                                        for p in PAGES) + "  </ul>\n</nav>\n")
    feed = ['<?xml version="1.0" encoding="utf-8"?>', '<feed xmlns="http://www.w3.org/2005/Atom">',
            "  <title>Handbook changes</title>", "  <id>urn:uuid:4f1b2c1e-0000-4000-8000-handbook</id>"]
    for p in PAGES:
        feed += ["  <entry>", f"    <title>{p.replace('-', ' ').capitalize()} updated</title>",
                 f'    <link href="https://handbook.example.com/pages/{p}.html"/>',
                 f"    <updated>2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T09:00:00Z</updated>", "  </entry>"]
    feed.append("</feed>")
    icons = ['<svg xmlns="http://www.w3.org/2000/svg" style="display:none">']
    for name in ["home", "search", "menu", "close", "arrow", "external", "edit", "info"]:
        d = " ".join(f"{rng.choice('MLQC')}{rng.randint(0, 24)} {rng.randint(0, 24)}" for _ in range(12))
        icons.append(f'  <symbol id="icon-{name}" viewBox="0 0 24 24"><path d="{d}Z"/></symbol>')
    icons.append("</svg>")
    files = [
        ("README.md", "# handbook\n\nThe company handbook as a static site. Edit the pages in `pages/`, open a pull "
                      "request, and the site is published by the Pages workflow.\n"),
        (".github/workflows/pages.yml", "name: pages\non:\n  push:\n    branches: [main]\njobs:\n  deploy:\n    runs-on: ubuntu-latest\n"
                                        "    steps:\n      - uses: actions/checkout@v4\n      - uses: actions/upload-pages-artifact@v3\n"
                                        "        with:\n          path: .\n      - uses: actions/deploy-pages@v4\n"),
        ("index.html", '<!DOCTYPE html>\n<html lang="en">\n<head><meta charset="utf-8"><title>Handbook</title>'
                       '<link rel="stylesheet" href="assets/style.css"></head>\n<body>\n<div id="app"><div class="grid">'
                       + "".join(f'<div class="card" data-href="pages/{p}.html"><span class="icon icon-{i}"></span></div>'
                                 for i, p in enumerate(PAGES)) + "</div></div>\n<script src=\"assets/site.js\"></script>\n</body>\n</html>\n"),
        ("layouts/nav.html", nav),
        ("layouts/footer.html", '<footer class="site-footer"><div class="row"><div class="col"></div><div class="col">'
                                '<a href="/feed.xml" class="rss"></a></div></div></footer>\n'),
        ("assets/style.css", ":root {\n  --fg: #1d1d1f;\n  --bg: #ffffff;\n  --accent: #0a66c2;\n}\n\nbody {\n  margin: 0 auto;\n  max-width: 46rem;\n"
                             "  font: 17px/1.6 system-ui, sans-serif;\n  color: var(--fg);\n  background: var(--bg);\n}\n\n"
                             ".site-nav ul {\n  display: flex;\n  flex-wrap: wrap;\n  gap: 0.75rem;\n  list-style: none;\n  padding: 0;\n}\n\n"
                             ".lead {\n  font-size: 1.15rem;\n  color: #444;\n}\n\n.grid {\n  display: grid;\n  grid-template-columns: repeat(auto-fill, minmax(10rem, 1fr));\n  gap: 1rem;\n}\n"),
        ("assets/site.js", "// Fill nav labels from data attributes and highlight the current page.\n"
                           "document.querySelectorAll('.nav-link').forEach((a) => {\n  const page = a.dataset.page;\n"
                           "  a.textContent = page.replace(/-/g, ' ');\n  if (location.pathname.endsWith(`/${page}.html`)) {\n"
                           "    a.classList.add('active');\n  }\n});\n"),
        ("assets/icons.svg", "\n".join(icons) + "\n"),
        ("feed.xml", "\n".join(feed) + "\n"),
        ("docs/CONTRIBUTING.md", "# Contributing\n\n1. Create a branch.\n2. Edit or add a page under `pages/`.\n"
                                 "3. Preview with `python -m http.server`.\n4. Open a pull request; two approvals are needed for policy changes.\n"),
        ("docs/style-guide.md", "# Style guide\n\n- Write in plain English, second person.\n- One idea per paragraph.\n"
                                "- Link to the source of any rule (contract, law, board decision).\n"),
    ]
    for p in PAGES:
        files.append((f"pages/{p}.html", page(rng, p)))
    return files
