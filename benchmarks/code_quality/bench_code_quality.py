"""Rules, scores and tiers of code_quality on the real code corpus; recall and re-parse of code_web.

    python benchmarks/code_quality/bench_code_quality.py [--files N] [--out benchmarks/_work/code_quality]

Writes JSON figures under --out and prints a Markdown summary (copied into RESULTS.md).
Peers measured in the same process: a character-by-character rule pass written like the
BigCode reference filters (``sum(c.isalnum() for c in text)``…) for throughput, and lxml's
``text_content()`` of the page body for the re-parse.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
WORK = ROOT / "benchmarks" / "_work" / "code_quality"
DATA = ROOT / ".." / "shared" / "data"
sys.path.insert(0, str(ROOT))

from classifiers.code_content import CodeContentClassifier, windows  # noqa: E402
from classifiers.code_quality import StructuralScorer  # noqa: E402
from classifiers.scorer import Batch  # noqa: E402
from curation.quality.code_language import UNPOOLED_GROUPS, detect_language, tier_group  # noqa: E402
from curation.quality.code_pages import code_evidence, enough_evidence  # noqa: E402
from curation.quality.code_rules import decide_rule, failed_rules, rule_signals  # noqa: E402
from curation.quality.code_tiers import assign_tiers, score_histogram, thresholds  # noqa: E402
from curation.quality.html_code import code_blocks, code_tag_stats, parse, reparse_html  # noqa: E402
from curation.quality.html_main import text_content  # noqa: E402
from curation.tokens import count_tokens  # noqa: E402
from pipelines.recipe import load_recipe, stage_config  # noqa: E402
from pipelines.stages.code_quality import CodeQualityConfig  # noqa: E402
from pipelines.stages.code_web import CodeWebConfig  # noqa: E402


def peer_rules(text: str) -> tuple[int, float, float, float]:
    """BigCode-style reference statistics: per-character Python loops."""
    lines = text.splitlines() or [""]
    return (max(len(x) for x in lines), sum(len(x) for x in lines) / len(lines),
            sum(c.isalnum() for c in text) / max(len(text), 1), sum(c.isalpha() for c in text) / max(len(text), 1))


def bench_code(n: int | None) -> dict:
    cfg: CodeQualityConfig = stage_config(load_recipe(None), "code_quality", CodeQualityConfig)  # type: ignore[assignment]
    df = pd.read_parquet(DATA / "code" / "code_files.parquet")
    if n:
        df = df.sample(n, random_state=0).reset_index(drop=True)
    texts, paths = df["text"].tolist(), df["path"].tolist()
    out: dict = {"files": len(df), "megabytes": round(sum(map(len, texts)) / 1e6, 2)}
    t = time.process_time()
    langs = [detect_language(p, x) for p, x in zip(paths, texts, strict=True)]
    sigs = [rule_signals(x, p, lang, cfg.header_lines, cfg.long_line) for x, p, lang in zip(texts, paths, langs, strict=True)]
    out["rules_cpu_s"] = round(time.process_time() - t, 2)
    t = time.process_time()
    for x in texts:
        peer_rules(x)
    out["peer_rules_cpu_s"] = round(time.process_time() - t, 2)
    th = cfg.rules
    df["ours_language"] = [lang or "unknown" for lang in langs]
    df["reason"] = [decide_rule(s, th, lang)[0] for s, lang in zip(sigs, langs, strict=True)]
    df["all_rules"] = [failed_rules(s, th, lang) for s, lang in zip(sigs, langs, strict=True)]
    df["tokens"] = count_tokens(texts, "qwen")
    t = time.process_time()
    cut = [len(x) > cfg.score_max_chars for x in texts]  # as the stage does (curation.quality.code_files.score_frame)
    df["score"] = StructuralScorer().score(Batch([x[: cfg.score_max_chars] for x in texts], langs, paths, cut=cut))
    out["structural_cpu_s"] = round(time.process_time() - t, 2)
    out["language_agreement"] = round(float((df["ours_language"] == df["language"]).mean()), 4)
    dropped = df[df["reason"].notna()]
    out["dropped_by_rule"] = {r: {"files": int(len(g)), "tokens": int(g["tokens"].sum())} for r, g in dropped.groupby("reason")}
    out["dropped_by_rule_language"] = {f"{r}|{lang}": int(len(g)) for (r, lang), g in dropped.groupby(["reason", "ours_language"])}
    gen = df["generated_header"].fillna("") != ""
    minified = df["path"].str.contains(r"\.min\.(?:js|css)$") | ((df["avg_line_len"] > 300) & df["ours_language"].isin(["JavaScript", "CSS"]))
    for name, mask in (("generated_header", gen), ("minified", minified)):
        sub = df[mask]
        out[f"{name}_files"] = int(mask.sum())
        out[f"{name}_first_reason"] = {str(k): int(v) for k, v in sub["reason"].fillna("kept").value_counts().items()}
        out[f"{name}_any_rule"] = {r: int(sum(r in rules for rules in sub["all_rules"])) for r in sorted({r for rs in sub["all_rules"] for r in rs})}
    df[["repo", "path", "language", "ours_language", "reason", "tokens", "score", "generated_header"]].to_parquet(WORK / "code_files_scored.parquet")
    passing = df[df["reason"].isna()]
    default, overrides = cfg.tiers.rules()
    cuts = thresholds(score_histogram(passing["ours_language"].to_numpy(), passing["score"].to_numpy(), tier_group), default, overrides, cfg.tiers.min_files, tier_group, UNPOOLED_GROUPS)
    tiers = assign_tiers(passing["score"].to_numpy(), passing["ours_language"].to_numpy(), cuts, default, overrides)
    passing = passing.assign(tier=tiers)
    shares = passing.groupby("ours_language")["tier"].value_counts(normalize=True).unstack(fill_value=0).round(3)
    counts = passing.groupby("ours_language").size()
    out["tiers"] = {lang: {"files": int(counts[lang]), **shares.loc[lang].to_dict()} for lang in shares.index if counts[lang] >= 20}
    out["tier_cuts"] = {k: v for k, v in cuts.items() if k in out["tiers"] or k == "*"}
    out["repo_split"] = repo_split(passing, default, overrides, cfg)
    # tier stability across repositories: the share of a repo's files in each tier (the held-out check)
    return out


def norm(s: str) -> str:
    """Snippet matching: markdown marks dropped, whitespace folded, no space before punctuation."""
    s = " ".join(re.sub(r"[`#*|]", " ", s).split())
    s = re.sub(r"([(\[]) ", r"\1", re.sub(r" ([,.;:)\]!?])", r"\1", s))
    return s.replace("- ", "")


def repo_split(passing: pd.DataFrame, default, overrides, cfg: CodeQualityConfig) -> dict:
    """Cuts from half of the repositories applied to the other half: tier shares per language there."""
    import hashlib

    held = passing["repo"].map(lambda r: int(hashlib.blake2b(str(r).encode(), digest_size=2).hexdigest(), 16) % 2 == 1)
    a, b = passing[~held], passing[held]
    cuts = thresholds(score_histogram(a["ours_language"].to_numpy(), a["score"].to_numpy(), tier_group), default, overrides, cfg.tiers.min_files, tier_group, UNPOOLED_GROUPS)
    tiers = assign_tiers(b["score"].to_numpy(), b["ours_language"].to_numpy(), cuts, default, overrides)
    b = b.assign(tier=tiers)
    out = {"repos_fit": int(a["repo"].nunique()), "repos_held_out": int(b["repo"].nunique())}
    for lang, g in b.groupby("ours_language"):
        if len(g) >= 50:
            out[str(lang)] = {"files": len(g), **g["tier"].value_counts(normalize=True).round(3).to_dict()}
    return out


def bench_web() -> dict:
    w = pd.read_parquet(DATA / "web" / "web_docs.parquet")
    html = w[w["html"].fillna("").str.len() > 0].reset_index(drop=True)
    t = time.process_time()
    roots = [parse(h) for h in html["html"]]
    stats = [code_tag_stats(None, r) for r in roots]
    tag_cpu = time.process_time() - t
    html["tag_recall"] = [s.recalled() for s in stats]
    clf = CodeContentClassifier()
    texts = html["text"].fillna("").tolist()
    t = time.process_time()
    html["clf"] = clf.predict(texts)
    clf_cpu = time.process_time() - t
    cfg = stage_config(load_recipe(None), "code_web", CodeWebConfig)
    threshold, min_chars = cfg.classifier_threshold, cfg.classifier_min_code_chars  # type: ignore[attr-defined]
    per_page = [windows(t, clf.window_lines, min_chars=clf.min_chars) for t in texts]
    chars, lines = np.array([code_evidence(ws, q, threshold) for ws, q in zip(per_page, clf.predict_pages(per_page)[1], strict=True)]).T
    html["clf_recall"] = (html["clf"] >= threshold) & enough_evidence(chars, lines, min_chars)  # the recipe's classifier recall
    has_text = html["text"].fillna("").str.len() > 200
    tagged = html[html["tag_recall"] & has_text]
    # the reference texts of some pages leave code out: judge the classifier only where the text holds a block
    in_text = [any(len(c.strip()) >= 20 and c.strip().split("\n")[0][:40] in t for _lang, c in code_blocks(reparse_html(None, r)))
               for r, t in zip([roots[i] for i in tagged.index], tagged["text"], strict=True)]
    tagged_code = tagged[in_text]
    untagged = html[~html["tag_recall"] & has_text]
    out: dict = {
        "html_pages": len(html), "tag_cpu_ms_per_page": round(1000 * tag_cpu / len(html), 2),
        "classifier_cpu_ms_per_page": round(1000 * clf_cpu / len(html), 2),
        "tag_recall_by_page_type": {str(k): [int(v.sum()), int(len(v))] for k, v in html.groupby("page_type")["tag_recall"]},
        "classifier_threshold": threshold,
        "classifier_recall_of_tag_pages_from_text": round(float((tagged["clf"] >= threshold).mean()), 4),
        "classifier_recall_of_tag_pages_whose_text_has_code": round(float((tagged_code["clf"] >= threshold).mean()), 4),
        "classifier_flag_rate_on_untagged_pages": round(float((untagged["clf"] >= threshold).mean()), 4),
        # the same three with the recipe's code evidence (classifier_min_code_chars) as well as the threshold
        "classifier_min_code_chars": min_chars,
        "classifier_recall_of_tag_pages_from_text_with_evidence": round(float(tagged["clf_recall"].mean()), 4),
        "classifier_recall_of_tag_pages_whose_text_has_code_with_evidence": round(float(tagged_code["clf_recall"].mean()), 4),
        "classifier_flag_rate_on_untagged_pages_with_evidence": round(float(untagged["clf_recall"].mean()), 4),
        "n_tagged_with_text": len(tagged), "n_tagged_text_has_code": len(tagged_code), "n_untagged_with_text": len(untagged),
    }
    # re-parse on documentation pages with <pre>: indented code lines kept verbatim (ours vs lxml text_content)
    docs = html[(html["page_type"] == "documentation") & html["tag_recall"]]
    kept_ours = kept_peer = total = 0
    with_snip = without_snip = n_with = n_without = with_peer = without_peer = 0
    reparse_cpu = 0.0  # our re-parse alone (parse, boilerplate, render), not the reference lines or the peer's text
    for h, ws, wos in zip(docs["html"], docs["with_snippets"], docs["without_snippets"], strict=True):
        root = parse(h)
        pre_lines = [ln for p in root.xpath("//pre") for ln in text_content(p).split("\n") if ln.startswith((" ", "\t")) and ln.strip()]
        t = time.process_time()
        ours = reparse_html(h)
        reparse_cpu += time.process_time() - t
        body = root.xpath("//body") if root is not None else []
        peer = " ".join(text_content(body[0]).split()) if body else ""
        total += len(pre_lines)
        kept_ours += sum(ln.rstrip() in ours for ln in pre_lines)
        kept_peer += sum(ln.rstrip() in peer for ln in pre_lines)
        ours_n, peer_n = norm(ours), norm(peer)
        for s in json.loads(ws or "[]"):
            n_with += 1
            with_snip += norm(s) in ours_n
            with_peer += norm(s) in peer_n
        for s in json.loads(wos or "[]"):
            n_without += 1
            without_snip += norm(s) in ours_n
            without_peer += norm(s) in peer_n
    out["reparse_doc_pages"] = len(docs)
    out["reparse_ms_per_page"] = round(1000 * reparse_cpu / max(len(docs), 1), 1)
    out["indented_code_lines"] = total
    out["indented_lines_kept_ours"] = round(kept_ours / max(total, 1), 4)
    out["indented_lines_kept_peer_text_content"] = round(kept_peer / max(total, 1), 4)
    out["main_content_snippets_kept"] = round(with_snip / max(n_with, 1), 4)
    out["boilerplate_snippets_leaked"] = round(without_snip / max(n_without, 1), 4)
    out["peer_main_content_snippets_kept"] = round(with_peer / max(n_with, 1), 4)
    out["peer_boilerplate_snippets_leaked"] = round(without_peer / max(n_without, 1), 4)
    out["snippets"] = {"main": n_with, "boilerplate": n_without}
    out["fenced_blocks"] = int(sum(len(code_blocks(reparse_html(h))) for h in docs["html"].head(20)))
    return out


def markdown(code: dict, web: dict) -> str:
    """The figures of RESULTS.md as Markdown tables."""
    lines = ["| rule | files | tokens (Qwen) |", "|---|---:|---:|"]
    for rule, v in sorted(code["dropped_by_rule"].items(), key=lambda kv: -kv[1]["files"]):
        lines.append(f"| `{rule}` | {v['files']:,} | {v['tokens']:,} |")
    lines += ["", "| rule × language | files |", "|---|---:|"]
    for key, n in sorted(code["dropped_by_rule_language"].items(), key=lambda kv: -kv[1]):
        rule, lang = key.split("|")
        lines.append(f"| `{rule}` × {lang} | {n} |")
    lines += ["", "| language | files (rule-passing) | high | medium | low | cuts (low, high) |", "|---|---:|---:|---:|---:|---|"]
    for lang, v in sorted(code["tiers"].items(), key=lambda kv: -kv[1]["files"]):
        cut = code["tier_cuts"].get(lang)
        lines.append(f"| {lang} | {v['files']:,} | {v.get('high', 0):.1%} | {v.get('medium', 0):.1%} | {v.get('low', 0):.1%} | {cut} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=None, help="sample this many code files (default: all)")
    parser.add_argument("--web-only", action="store_true", help="only the code_web measurements")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "_work" / "code_quality"))
    args = parser.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if not args.web_only:
        code = bench_code(args.files)
        (out / "code.json").write_text(json.dumps(code, indent=2, sort_keys=True, default=str))
    web = bench_web()
    if args.web_only:
        print(json.dumps(web, indent=1, default=str))
        (out / "web.json").write_text(json.dumps(web, indent=2, sort_keys=True, default=str))
        return 0
    (out / "web.json").write_text(json.dumps(web, indent=2, sort_keys=True, default=str))
    print(json.dumps({"code": code, "web": web}, indent=1, default=str))
    (out / "tables.md").write_text(markdown(code, web) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
