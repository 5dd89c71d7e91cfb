"""Tiers of the real code files under two versions of the code: where Cython, the rare data formats and
headers against implementation files (C, C++, TypeScript by file extension) land.

    python benchmarks/code_quality/bench_tier_groups.py --before HEAD [--out benchmarks/_work/code_quality]

(``CURATION_DATA`` names the shared data folder when it is not ``../shared/data``.)

The same files (the whole corpus, and the tester's mix: up to 150 files of each big language, 40
of each other one, plus 80 generated and 60 minified files, as in a real run of 1,399 code files)
go through language → rules → structural score → percentile tiers (recipe defaults), once with
the working tree's code and once with ``--before`` (a git revision, unpacked to a temporary folder
and run in a subprocess). Prints the tier split per language under both and the files of other
languages whose tier moved. Languages come from the corpus's ``language`` column, as in a run
(``language_from: missing``).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from two_trees import outcomes, report  # noqa: E402

DATA = Path(os.environ.get("CURATION_DATA", ROOT / ".." / "shared" / "data")) / "code" / "code_files.parquet"
BIG = ("Python", "Rust", "C", "JavaScript", "Go", "JSON")


def samples():
    import pandas as pd

    df = pd.read_parquet(DATA)
    c = df[df.text.str.len() < 200000]
    parts = [g.sample(min(len(g), 150 if lang in BIG else 40), random_state=4) for lang, g in c.groupby("language")]
    gen = c[c.generated_header != ""].sample(80, random_state=5)
    mini = c[c.max_line_len > 1000]
    mini = mini.sample(min(60, len(mini)), random_state=6)
    mix = pd.concat([*parts, gen, mini]).drop_duplicates("sha256", keep="first")
    return {"corpus": df, "mix": mix}


def tiers_of(frame) -> list[str | None]:
    """Tier of each file of ``frame`` (None: a rule removed it), with the code on ``sys.path``."""
    import numpy as np

    from classifiers.code_quality import StructuralScorer, structural_score
    from curation.quality.code_language import UNPOOLED_GROUPS, tier_group
    from curation.quality.code_rules import decide_rule, rule_signals
    from curation.quality.code_tiers import assign_tiers, score_histogram, thresholds
    from pipelines.recipe import load_recipe, stage_config
    from pipelines.stages.code_quality import CodeQualityConfig

    cfg = stage_config(load_recipe(None), "code_quality", CodeQualityConfig)
    texts, paths, langs = frame["text"].tolist(), frame["path"].tolist(), frame["language"].tolist()
    passing = [decide_rule(rule_signals(x, p, lang, cfg.header_lines, cfg.long_line), cfg.rules, lang)[0] is None
               for x, p, lang in zip(texts, paths, langs, strict=True)]
    idx = [i for i, ok in enumerate(passing) if ok]
    feats = StructuralScorer().features([texts[i][: cfg.score_max_chars] for i in idx], [langs[i] for i in idx], [paths[i] for i in idx])
    scores = np.array([structural_score(f) for f in feats])
    lang_arr = np.array([langs[i] for i in idx], dtype=object)
    default, overrides = cfg.tiers.rules()
    cuts = thresholds(score_histogram(lang_arr, scores, tier_group), default, overrides, cfg.tiers.min_files, tier_group, UNPOOLED_GROUPS)
    out: list[str | None] = [None] * len(frame)
    for i, t in zip(idx, assign_tiers(scores, lang_arr, cuts, default, overrides), strict=True):
        out[i] = t
    return out


def run_here(out: Path) -> None:
    sys.path.insert(0, str(Path.cwd()))
    json.dump({name: tiers_of(frame) for name, frame in samples().items()}, out.open("w"))


def table(frame, before: list, after: list, languages) -> list[str]:
    rows = ["| language | files (rule-passing) | before: high / medium / low | after: high / medium / low |", "|---|---:|---|---|"]
    for lang in languages:
        sel = [i for i, v in enumerate(frame["language"]) if v == lang and after[i] is not None]
        if not sel:
            continue
        split = [" / ".join(str(sum(t[i] == k for i in sel)) for k in ("high", "medium", "low")) for t in (before, after)]
        rows.append(f"| {lang} | {len(sel)} | {split[0]} | {split[1]} |")
    return rows


#: languages whose files are split by extension: declarations (``.h``, ``.hpp``, ``.d.ts``) against implementations
BY_EXTENSION = ("C", "C++", "TypeScript")


def extension_table(frame, before: list, after: list) -> list[str]:
    """The tier split of :data:`BY_EXTENSION`'s files per extension (``.d.ts`` apart from ``.ts``)."""
    ext = frame["path"].str.extract(r"(\.d\.ts|\.[^./]+)$")[0].fillna("(none)")
    rows = ["| language | extension | files (rule-passing) | before: high / medium / low | after: high / medium / low |",
            "|---|---|---:|---|---|"]
    for (lang, e), group in frame.groupby([frame["language"], ext], sort=True):
        sel = [frame.index.get_loc(i) for i in group.index]
        sel = [i for i in sel if after[i] is not None]
        if lang not in BY_EXTENSION or not sel:
            continue
        split = [" / ".join(str(sum(t[i] == k for i in sel)) for k in ("high", "medium", "low")) for t in (before, after)]
        rows.append(f"| {lang} | `{e}` | {len(sel)} | {split[0]} | {split[1]} |")
    return rows


def main() -> None:
    got = outcomes(__file__, __doc__, "tiers", run_here)
    if got is None:
        return
    out, before, after = got
    lines = []
    for name, frame in samples().items():
        b, a = before[name], after[name]
        moved: dict[str, int] = {}
        for lang, x, y in zip(frame["language"], b, a, strict=True):
            moved[lang] = moved.get(lang, 0) + (x != y)
        shown = [x for x in frame["language"].value_counts().index if x in ("Cython", "JSON", "TOML", "YAML") or moved[x]]
        lines += [f"\n{name}: {len(frame)} files", *table(frame, b, a, shown)]
        lines += ["", *extension_table(frame.reset_index(drop=True), b, a)]
        lines.append(f"files whose tier moved: {({k: v for k, v in moved.items() if v}) or 'none'}; "
                     f"no other language moved ({sum(len(frame[frame.language == k]) for k, v in moved.items() if not v)} files)")
    report(out, "tier_groups.md", lines)


if __name__ == "__main__":
    main()
