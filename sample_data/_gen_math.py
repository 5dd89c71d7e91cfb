"""``math_science/math_science.jsonl.gz``: documents of varied educational value, each with the
intended value in ``meta.edu_label`` (0-5, FineWeb-Edu scale) and its kind in ``meta.kind``.

Kinds: ``textbook`` (5: derivation, worked example and exercises with answers), ``explainer``
(4: derivation and one example), ``lecture_note`` (3: formula and example only), ``abstract``
(2-3), ``forum`` (1-3), ``off_topic_article`` (1), ``product`` and ``gossip`` and ``horoscope`` (0).
"""

from __future__ import annotations

import random
import re

from _common import CITIES, FIRST_NAMES, LAST_NAMES, person, rng_for
from _stem import ALL as STEM
from _stem import as_text
from _web_articles import article
from _web_banks import TOPICS

COUNTS = {"textbook": 30, "explainer": 20, "lecture_note": 15, "abstract": 35, "forum": 30,
          "off_topic_article": 10, "product": 8, "gossip": 7, "horoscope": 5}

FIELDS = [
    ("condensed matter physics", ["twisted bilayer graphene", "a frustrated kagome antiferromagnet", "thin films of niobium nitride", "a quasi-one-dimensional organic conductor"],
     ["angle-resolved photoemission spectroscopy", "low-temperature transport measurements", "density functional theory", "quantum Monte Carlo simulations"],
     ["a flat band near the Fermi level", "an anomalous Hall response below {t} K", "a superconducting transition at {t} K", "a charge density wave with a period of {n} unit cells"]),
    ("number theory", ["sums of three cubes", "the distribution of primes in short intervals", "class numbers of imaginary quadratic fields", "additive energy of multiplicative subgroups"],
     ["the circle method", "sieve methods", "an explicit zero-density estimate", "large-scale computer search"],
     ["a new upper bound of order $N^{{{e}}}$", "an asymptotic formula with a power-saving error term", "{n} new solutions below $10^{{{k}}}$", "an unconditional lower bound"]),
    ("ecology", ["pollinator networks in alpine meadows", "seed dispersal by fruit bats", "invasive crayfish in lowland rivers", "soil microbial communities after wildfire"],
     ["a {n}-year field survey", "metabarcoding of environmental DNA", "a stochastic population model", "a before-after control-impact design"],
     ["a {p}% decline in interaction diversity", "strong seasonal turnover in species composition", "recovery to pre-disturbance levels within {n} years", "a threshold response to water temperature"]),
    ("organic chemistry", ["a photoredox-catalysed C-H amination", "the total synthesis of a marine alkaloid", "enantioselective hydrogenation of enamides", "a recyclable iron catalyst for cross-coupling"],
     ["kinetic isotope effect experiments", "DFT calculations of transition states", "in situ NMR monitoring", "a design-of-experiments screen"],
     ["yields of up to {p}%", "enantiomeric excess above {p}%", "a turnover number of {big}", "a short route of {n} steps"]),
    ("machine learning", ["graph neural networks for molecular property prediction", "sparse attention for long documents", "calibration of deep classifiers under shift", "data pruning for language model pre-training"],
     ["a controlled ablation over {n} datasets", "a theoretical analysis in the infinite-width limit", "a large-scale benchmark", "synthetic experiments with known ground truth"],
     ["a {p}% reduction in error", "matching accuracy with {p}% less compute", "improved calibration on every shifted test set", "a scaling law with exponent {x}"]),
    ("atmospheric science", ["urban heat islands in coastal cities", "aerosol-cloud interactions over the Southern Ocean", "the timing of monsoon onset", "methane emissions from wetlands"],
     ["satellite retrievals", "a regional climate model at {n} km resolution", "eddy-covariance flux towers", "reanalysis data from 1979 to 2022"],
     ["a warming trend of {x} K per decade", "a {p}% increase in cloud droplet number", "an earlier onset by {n} days", "strong interannual variability linked to ENSO"]),
]
QUESTIONS = ["limit", "by_parts", "at_least_one", "moles", "kinematics", "system", "repeating", "log_rule"]


def _abstract(rng: random.Random) -> tuple[str, str, int]:
    field, systems, methods, findings = rng.choice(FIELDS)
    slots = {"t": rng.randint(2, 40), "n": rng.randint(3, 12), "e": f"{rng.randint(1, 9)}/{rng.randint(10, 12)}",
             "k": rng.randint(12, 18), "p": rng.randint(12, 97), "big": f"{rng.randint(2, 90) * 1000:,}",
             "x": f"{rng.uniform(0.1, 0.6):.2f}"}
    system, method = rng.choice(systems), rng.choice(methods).format(**slots)
    f1, f2 = (f.format(**slots) for f in rng.sample(findings, 2))
    title = f"{f1[0].upper() + f1[1:]} in {system}"
    authors = ", ".join(person(rng) for _ in range(rng.randint(2, 6)))
    detailed = rng.random() < 0.5
    text = (f"{title}\n\n{authors}\n\nAbstract. We study {system} using {method}. Previous work in {field} has "
            f"left open how robust this behaviour is. We find {f1}, together with {f2}. "
            + ("We explain the mechanism with a minimal model, derive its scaling analytically, and test the prediction "
               "against independent measurements; the agreement holds over the full range studied. " if detailed else "")
            + f"These results constrain current theories and suggest directions for further work.\n\n"
            f"Keywords: {field}; {system.split(' ')[-1]}; {method.split(' ')[-1]}")
    return title, text, 3 if detailed else 2


def _forum(rng: random.Random, kind: str) -> tuple[str, str, int]:
    user = f"{rng.choice(FIRST_NAMES).lower()}{rng.randint(1, 999)}"
    if kind == "limit":
        k = rng.randint(2, 9)
        q, a = (f"How do I find $\\lim_{{x \\to 0}} \\frac{{\\sin({k}x)}}{{x}}$? Plugging in gives 0/0.",
                f"Write $\\frac{{\\sin({k}x)}}{{x}} = {k} \\cdot \\frac{{\\sin({k}x)}}{{{k}x}}$. As $x \\to 0$, ${k}x \\to 0$ and "
                f"$\\frac{{\\sin u}}{{u}} \\to 1$, so the limit is ${k}$.")
    elif kind == "by_parts":
        a_ = rng.randint(2, 5)
        q, a = (f"Can someone help me integrate $\\int x e^{{{a_}x}}\\,dx$? I tried substitution and got stuck.",
                f"Use integration by parts with $u = x$, $dv = e^{{{a_}x}}dx$, so $du = dx$ and $v = \\frac{{1}}{{{a_}}}e^{{{a_}x}}$. "
                f"Then $\\int x e^{{{a_}x}}dx = \\frac{{x}}{{{a_}}}e^{{{a_}x}} - \\frac{{1}}{{{a_}}}\\int e^{{{a_}x}}dx = "
                f"e^{{{a_}x}}\\left(\\frac{{x}}{{{a_}}} - \\frac{{1}}{{{a_ * a_}}}\\right) + C$. Differentiate to check.")
    elif kind == "at_least_one":
        n = rng.randint(2, 8)
        q, a = (f"What is the probability of getting at least one six in {n} rolls of a fair die? I keep getting more than 1.",
                f"Adding $\\frac{{1}}{{6}}$ {n} times double counts. Use the complement: $P = 1 - \\left(\\frac{{5}}{{6}}\\right)^{{{n}}} "
                f"\\approx {1 - (5 / 6) ** n:.4f}$.")
    elif kind == "moles":
        g = rng.randint(5, 200)
        q, a = (f"How many moles are in {g} g of NaCl? Homework due tomorrow.",
                f"Molar mass of NaCl is $22.99 + 35.45 = 58.44$ g/mol, so $n = {g}/58.44 \\approx {g / 58.44:.3f}$ mol.")
    elif kind == "kinematics":
        v, t = rng.randint(10, 40), rng.randint(3, 12)
        q, a = (f"A car goes from rest to {v} m/s in {t} s with constant acceleration. How far does it travel?",
                f"$a = {v}/{t} \\approx {v / t:.2f}$ m/s$^2$ and $d = \\frac{{1}}{{2}}at^2 = \\frac{{1}}{{2}} \\cdot {v} \\cdot {t} = {v * t / 2:g}$ m "
                f"(the average speed is {v / 2:g} m/s).")
    elif kind == "system":
        x, y = rng.randint(-5, 9), rng.randint(-5, 9)
        q, a = (f"Solve $2x + y = {2 * x + y}$ and $x - y = {x - y}$. My answer doesn't check out.",
                f"Add the equations: $3x = {3 * x}$, so $x = {x}$. Then $y = {2 * x + y} - 2 \\cdot {x} = {y}$. "
                f"Check: ${x} - ({y}) = {x - y}$.")
    elif kind == "repeating":
        q, a = ("Is 0.999... really equal to 1? It seems like it should be slightly less.",
                "Let $x = 0.999\\ldots$. Then $10x = 9.999\\ldots$ and $10x - x = 9$, so $x = 1$. Equivalently, "
                "$\\sum_{k\\ge1} 9 \\cdot 10^{-k} = 9 \\cdot \\frac{1/10}{1 - 1/10} = 1$. Two different decimal "
                "expansions can name the same real number.")
    else:
        n = rng.randint(2, 6)
        q, a = (f"What's the derivative of $x^{n} \\ln x$?",
                f"Product rule: $\\frac{{d}}{{dx}}(x^{n} \\ln x) = {n}x^{n - 1}\\ln x + x^{n} \\cdot \\frac{{1}}{{x}} = x^{n - 1}({n}\\ln x + 1)$.")
    title = q.split("?")[0][:80] + "?"
    if rng.random() < 0.25:  # unanswered
        return title, f"{title}\n\nPosted by {user}\n\n{q}\n\npls help, exam is tomorrow\n\n0 answers", 1
    helper = f"{rng.choice(FIRST_NAMES).lower()}_{rng.choice(LAST_NAMES).lower()}"
    thanks = rng.choice(["Thanks, that makes sense now!", "Got it, thank you.", "Ah, I forgot the complement trick."])
    text = f"{title}\n\nPosted by {user}\n\n{q}\n\nAnswer by {helper} (score {rng.randint(1, 60)}):\n\n{a}\n\n{user}: {thanks}"
    return title, text, 3 if len(a) > 180 else 2


def _framed(rng: random.Random, make, kind: str) -> tuple[str, str]:
    title, blocks = make(rng)
    if kind == "lecture_note":
        paras = [b for b in blocks if b[0] == "p"]
        course = f"{rng.choice(['MATH', 'PHYS', 'CHEM', 'BIO'])} {rng.randint(101, 299)}, lecture {rng.randint(2, 24)}"
        example = next((p for p in reversed(paras) if re.search(r"\d{2}", p[1])), paras[-1])  # the numbers
        return f"Notes: {title}", as_text(f"Notes: {title}", [("p", course), paras[0], example])
    if kind == "explainer":
        return title, as_text(title, [("p", f"By {person(rng)}, updated {rng.randint(2019, 2024)}"), *blocks])
    chapter, section = rng.randint(1, 12), rng.randint(1, 9)
    _, again = make(rng)
    exercise = [b for b in again if b[0] == "p"][-1][1]
    body = [("p", "Learning objectives: after this section you should be able to state the result, explain why it "
                  "holds, and apply it to a concrete problem."), *blocks,
            ("h2", "Exercise"), ("p", "Work through the following example yourself before reading the solution."),
            ("p", f"Solution. {exercise}"),
            ("h2", "Summary"), ("p", f"{blocks[0][1] if blocks[0][0] == 'p' else title} Check every answer by substituting it back.")]
    full = f"Chapter {chapter}, Section {chapter}.{section}: {title}"
    return full, as_text(full, body)


def _low(rng: random.Random, kind: str) -> tuple[str, str]:
    if kind == "product":
        model = f"{rng.choice(['CalcPro', 'MathMate', 'NumberWiz', 'SciBrain'])} {rng.choice(['X', 'FX', 'S'])}{rng.randint(100, 990)}"
        title = f"{model} Scientific Calculator - Best Price!"
        text = (f"{title}\n\nOnly ${rng.randint(9, 79)}.99! FREE shipping. {rng.randint(240, 417)} functions, solar + battery, "
                f"2-line display. Perfect for students, exams, math and science class!!! Buy now - limited stock.\n\n"
                f"Customers say: \"works great\" \"good value\" \"arrived fast\"\n\nAdd to cart | Add to wishlist | Compare")
    elif kind == "gossip":
        star = f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}"
        title = f"{star} spotted with mystery partner in {rng.choice(CITIES)}"
        text = (f"{title}\n\nFans went wild this week after {star} was photographed leaving a restaurant in "
                f"{rng.choice(CITIES)} with a mystery companion. Sources close to the star say the pair have been "
                f"'inseparable' for {rng.randint(2, 9)} weeks. The outfit? A {rng.choice(['red', 'silver', 'black'])} jacket "
                f"that sold out within hours. Neither has commented. Scroll down for all the photos!\n\n"
                f"You won't believe what {star} said about the rumours last year.")
    else:
        sign = rng.choice(["Aries", "Taurus", "Gemini", "Leo", "Virgo", "Libra", "Scorpio", "Pisces"])
        nums = ", ".join(str(rng.randint(1, 49)) for _ in range(6))
        title = f"{sign}: your lucky numbers and the mathematics of fate this week"
        text = (f"{title}\n\nThe numbers never lie! This week the planets align in a perfect sacred ratio for {sign}. "
                f"Your lucky numbers are {nums}. Add the digits of your birthday and you will find your hidden life "
                f"path number, the secret code of the universe. Wear {rng.choice(['green', 'gold', 'blue'])} on Thursday.")
    return title, text


def generate(seed: int) -> list[dict]:
    rng = rng_for(seed, "math_science")
    items: list[tuple[str, str, str, int]] = []  # (kind, title, text, edu)
    for kind, edu in (("textbook", 5), ("explainer", 4), ("lecture_note", 3)):
        for i in range(COUNTS[kind]):
            title, text = _framed(rng, STEM[(i * 7 + len(items)) % len(STEM)], kind)
            items.append((kind, title, text, edu))
    for _ in range(COUNTS["abstract"]):
        title, text, edu = _abstract(rng)
        items.append(("abstract", title, text, edu))
    for i in range(COUNTS["forum"]):
        title, text, edu = _forum(rng, QUESTIONS[i % len(QUESTIONS)])
        items.append(("forum", title, text, edu))
    for i in range(COUNTS["off_topic_article"]):
        page = article(rng, TOPICS[(i * 5) % len(TOPICS)], rng.randint(300, 700))
        paras = [b[1] if isinstance(b[1], str) else "\n".join(b[1]) for b in page["blocks"] if b[0] != "byline"]
        items.append(("off_topic_article", page["title"], "\n\n".join(paras), 1))
    for kind in ("product", "gossip", "horoscope"):
        for _ in range(COUNTS[kind]):
            title, text = _low(rng, kind)
            items.append((kind, title, text, 0))
    rng.shuffle(items)
    hosts = {"textbook": "openmathbook.example.edu", "explainer": "sciencemadeclear.example.org",
             "lecture_note": "courses.example.edu", "abstract": "preprints.example.org", "forum": "mathforum.example.com",
             "off_topic_article": "mathsci-digest.example.net", "product": "mathsci-digest.example.net",
             "gossip": "mathsci-digest.example.net", "horoscope": "numbers-daily.example.com"}
    records = []
    for n, (kind, title, text, edu) in enumerate(items):
        slug = "-".join("".join(c for c in title.lower() if c.isalnum() or c == " ").split())[:60]
        records.append({"id": f"ms-{n + 1:05d}", "source": "math_science", "url": f"https://{hosts[kind]}/{n + 1}/{slug}",
                        "title": title, "text": text, "meta": {"edu_label": edu, "kind": kind}})
    return records

