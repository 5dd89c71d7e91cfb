"""Good web articles (news, explainers, how-tos, histories, travel) and long multi-section documents.

Sentences come from the topic banks in ``_web_banks``; every sentence gets fresh slot values
(people, places, numbers), each article draws its own subset and order, so articles on one topic
share a subject but are not near-duplicates of each other.
"""

from __future__ import annotations

import random

from _common import CITIES, MONTHS, fill, person
from _web_banks import GENERIC, GENRE_LINKS, QUOTES, TOPICS, TRAVEL_SECTIONS

SITES = {
    "news": [("The Rivermouth Courier", "rivermouth-courier.example.com"),
             ("Eastbridge Daily", "eastbridgedaily.example.org"),
             ("Northfield Post", "northfieldpost.example.net")],
    "explainer": [("Plainly Explained", "plainlyexplained.example.com"),
                  ("The Curious Reader", "curiousreader.example.org")],
    "howto": [("Hands-On Living", "handsonliving.example.com"),
              ("The Weekend Workshop", "weekendworkshop.example.net")],
    "history": [("Local Past", "localpast.example.org"),
                ("Heritage Notes", "heritagenotes.example.com")],
    "travel": [("Slow Roads Travel", "slowroads.example.com"),
               ("The Wandering Map", "wanderingmap.example.org")],
}
NAV = ["Home", "News", "Features", "Opinion", "Travel", "About", "Contact"]
FOOTER = ["Copyright 2024. All rights reserved.", "Privacy policy", "Terms of use"]

# Sentence-initial words that may be lower-cased after an opener such as "In 2019, ".
_LOWERABLE = {"The", "Many", "Most", "Some", "Critics", "Experts", "Several", "Even", "Younger", "Funding",
              "Cows", "Apprentices", "Typefaces", "Coal", "Drivers", "Riders", "Officials", "Volunteers",
              "Anglers", "Schools", "Each", "Every", "Staff", "Smoke", "Salt", "Heat", "Keeping"}
_OPENERS = ["According to {person}, ", "By most accounts, ", "In {city}, ", "As a rule, ", "For now, ",
            "Perhaps surprisingly, ", "At the same time, ", "Even so, ", "In practice, "]


def _slots(rng: random.Random, topic: dict) -> dict[str, str]:
    nouns = rng.sample(topic["nouns"], 2)
    return {
        "noun": nouns[0], "noun2": nouns[1], "role": rng.choice(topic["roles"]),
        "place": rng.choice(topic["places"]), "org": rng.choice(topic["orgs"]), "city": rng.choice(CITIES),
        "person": person(rng), "n": str(rng.randint(2, 12)), "n2": str(rng.randint(12, 95)),
        "big": f"{rng.randint(2, 95) * 1000 + rng.randint(0, 9) * 100:,}", "pct": str(rng.randint(6, 85)),
        "year": str(rng.randint(1995, 2023)), "month": rng.choice(MONTHS),
        "a_role": "",
    }


def _with_article(noun: str) -> str:
    return ("an " if noun[0] in "aeiou" else "a ") + noun


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def sentence(rng: random.Random, topic: dict, template: str) -> str:
    slots = _slots(rng, topic)
    slots["a_role"] = _with_article(slots["role"])
    text = _cap(fill(template, slots))
    if rng.random() < 0.18 and not template.startswith("{") and text.split()[0] in _LOWERABLE:
        text = fill(rng.choice(_OPENERS), slots) + text[0].lower() + text[1:]
    return text


def quote(rng: random.Random, topic: dict) -> str:
    slots = _slots(rng, topic)
    said = rng.choice(["said", "says", "explained", "told this reporter"])
    return f'"{_cap(fill(rng.choice(QUOTES), slots))}," {said} {slots["person"]}, {_with_article(slots["role"])}.'


class _Pool:
    """Draws sentences from the topic bank without repeats until the bank is used up."""

    def __init__(self, rng: random.Random, topic: dict) -> None:
        self.rng, self.topic = rng, topic
        self.facts: list[str] = []
        self.generic: list[str] = []
        self.facts_used = False

    def _draw(self, name: str, source: list[str]) -> str:
        bag = getattr(self, name)
        if not bag:
            bag.extend(source)
            self.rng.shuffle(bag)
        return bag.pop()

    def next(self) -> str:
        r = self.rng.random()
        if r < 0.35 and (self.facts or not self.facts_used):
            self.facts_used = True
            return sentence(self.rng, self.topic, self._draw("facts", self.topic["facts"]))
        if r < 0.52:
            return quote(self.rng, self.topic)
        if r < 0.58:
            return sentence(self.rng, self.topic, self.rng.choice(GENRE_LINKS[self.topic["genre"]]))
        return sentence(self.rng, self.topic, self._draw("generic", GENERIC))

    def paragraph(self, lo: int = 3, hi: int = 6) -> str:
        return " ".join(self.next() for _ in range(self.rng.randint(lo, hi)))


def _body(rng: random.Random, topic: dict, pool: _Pool, target: int) -> list[tuple]:
    """Genre-shaped body blocks of roughly ``target`` words."""
    genre = topic["genre"]
    blocks: list[tuple] = []
    words = 0

    def para(prefix: str = "") -> None:
        nonlocal words
        text = prefix + pool.paragraph()
        blocks.append(("p", text))
        words += len(text.split())

    if genre == "howto":
        para()
        blocks.append(("h2", "What you need"))
        blocks.append(("ul", [_cap(n) for n in rng.sample(topic["nouns"], rng.randint(3, 6))]))
        steps = topic["steps"][: rng.randint(5, len(topic["steps"]))]
        blocks.append(("h2", "Step by step"))
        blocks.append(("ol", [s + (" " + pool.next() if rng.random() < 0.5 else "") for s in steps]))
        words += sum(len(s.split()) for s in blocks[-1][1])
        heads = ["Common mistakes", "Tips from experienced hands", "Troubleshooting", "Going further"]
        while words < target:
            if rng.random() < 0.35 and heads:
                blocks.append(("h2", heads.pop(rng.randrange(len(heads)))))
            para()
    elif genre == "history":
        years = sorted(rng.sample(range(1820, 2015), len(topic["events"])))
        para()
        for year, event in zip(years, topic["events"], strict=True):
            if words >= target and len(blocks) > 4:
                break
            para(fill(event, {"year": str(year)}) + " ")
        while words < target:
            para()
    elif genre == "travel":
        para()
        sections = list(TRAVEL_SECTIONS)
        rng.shuffle(sections)
        for head in sections:
            blocks.append(("h2", head))
            if head == "What to see":
                blocks.append(("ul", [sentence(rng, topic, s) for s in rng.sample(topic["sights"], 4)]))
            para()
            if words >= target:
                break
        while words < target:
            para()
    elif genre == "explainer":
        para()
        for q in rng.sample(topic["questions"], len(topic["questions"])):
            blocks.append(("h2", q))
            para()
            if rng.random() < 0.4:
                para()
            if words >= target:
                break
        while words < target:
            para()
    else:  # news
        city = rng.choice(CITIES).upper()
        para(f"{city} — ")
        while words < target:
            para()
    return blocks


def article(rng: random.Random, topic: dict, target: int) -> dict:
    """A page dict: ``title, site, domain, blocks`` (rendered later) plus its kind."""
    pool = _Pool(rng, topic)
    site, domain = rng.choice(SITES[topic["genre"]])
    title = fill(rng.choice(topic["titles"]), _slots(rng, topic))
    byline = f"By {person(rng)} | {rng.choice(MONTHS)} {rng.randint(1, 28)}, {rng.randint(2019, 2024)}"
    blocks = [("h1", title), ("byline", byline), *_body(rng, topic, pool, target)]
    return {"title": title, "site": site, "domain": domain, "blocks": blocks, "topic": topic["key"]}


def articles(rng: random.Random, count: int) -> list[dict]:
    out = []
    for i in range(count):
        topic = TOPICS[i % len(TOPICS)]
        target = int(rng.triangular(280, 1450, 650))
        out.append(article(rng, topic, target))
    return out


def long_document(rng: random.Random, index: int, target_words: int) -> dict:
    """A long report or book chapter: many titled sections, each drawn from a different topic."""
    kinds = ["Annual report of the {city} civic trust", "Collected essays on town and country life, volume {n}",
             "The {city} almanac: a year in {n2} chapters", "A field guide to {city} and its surroundings",
             "Proceedings of the {city} community forum"]
    slots = {"city": CITIES[(index * 7) % len(CITIES)], "n": str(index + 2), "n2": str(rng.randint(30, 90))}
    title = fill(kinds[index % len(kinds)], slots)
    blocks: list[tuple] = [("h1", title), ("byline", f"Edited by {person(rng)}")]
    words, chapter = 0, 0
    while words < target_words:
        chapter += 1
        topic = rng.choice(TOPICS)
        section = article(rng, topic, int(rng.uniform(500, 1400)))
        blocks.append(("h2", f"Chapter {chapter}. {section['title']}"))
        for b in section["blocks"][2:]:
            blocks.append(("h3", b[1]) if b[0] == "h2" else b)
            words += len(b[1].split()) if isinstance(b[1], str) else sum(len(x.split()) for x in b[1])
    site, domain = "Open Shelf Library", "openshelf.example.org"
    return {"title": title, "site": site, "domain": domain, "blocks": blocks, "topic": "long"}
