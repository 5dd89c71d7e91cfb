"""``code_web``: recall code-related web pages, re-parse them with code formatting, tier them.

score (per web page, cached: HTML code-tag counts — read by ingest from the tree its extractor
parsed, ``artifacts/code_tags`` — and code-content probability with the code-like characters of the
windows at the threshold; for the pages the recall rule takes, the re-parsed text and the structural
score of its code blocks + surrounding text; only those pages' HTML is read and parsed here, but for
the pages ingest rendered while it counted their tags, ``artifacts/code_text``) → decide (recall by
tags and/or the classifier threshold with ``classifier_min_code_chars`` of code evidence; tier cuts
over recalled pages; ``stats.json`` counts the recalled pages re-parsed and those without HTML).
The recall rule is part of the score step's key: a change of it re-runs the re-parse of the pages it takes. Every web page is a candidate (web_quality
removes none before this stage) and none is removed here: recalled pages keep
``source = "web"`` and get ``code_web_recall``, ``code_tier`` and the re-parsed text; the mixture
policy puts them in the ``code_web/<tier>`` groups (and excludes ``code_web/low``). The skeleton
is :mod:`pipelines.stages.code_steps`, the logic :mod:`curation.quality.code_pages`.

Token counts of re-parsed pages use **ingest's tokenizer**, so that every ``n_tokens`` of a run is
counted alike: the stage declares ``settings = {"tokenizer": "ingest.tokenizer"}``, which the
runner resolves with :func:`pipelines.recipe.stage_settings` into ``ctx.settings`` (the typed
ingest config's value: its default when the recipe omits it). It is not part of this stage's config hash: ingest's hash covers it and reaches this
stage through its input fingerprint; the cached ``scores`` step is keyed by it.
"""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path
from typing import Any

import dask.dataframe as dd
import numpy as np
import pandas as pd

from classifiers.code_content import MAX_WINDOWS, CodeContentClassifier, all_windows, sample_windows
from classifiers.code_quality import StructuralScorer, structural_score
from classifiers.scorer import model_fingerprint
from curation.config import ConfigError, StageConfig, check_range
from curation.quality import code_pages
from curation.quality.code_pages import GROUP, annotate_pages, page_histogram, page_html, page_score, recall_method
from curation.quality.code_tiers import TierRule, thresholds, tier_rules
from curation.quality.html_code import code_blocks, code_tag_stats, markdown_blocks, parse, reparse_html
from curation.tokens import count_tokens
from pipelines.kit import Plan, RowStage, StageContext, StageFigures
from pipelines.kit.preflight import check_model
from pipelines.stages import folder_name
from pipelines.stages.code_steps import Histogram, cut_figures, scores_and_histogram
from pipelines.stages.code_web_pages import TAG_COLUMNS, load_code_tags, load_pages, reparse_counts, reparse_note

log = logging.getLogger(__name__)

CODE_WINDOW = 0.5  #: a window is code for page scoring at even odds with code evidence (code_pages.code_windows)


@dataclasses.dataclass(frozen=True)
class CodeWebConfig(StageConfig):
    sources: tuple[str, ...] = ("web",)
    recall: tuple[str, ...] = ("html_tags", "classifier")
    min_code_blocks: int = 1
    min_code_chars: int = 40
    classifier_model: str | None = None
    classifier_threshold: float = 0.7
    #: code evidence a classifier-only recall needs: code-like characters ([!-~]) in the windows at the threshold
    #: (half as many on two lines or more; 0: the probability alone)
    classifier_min_code_chars: int = 40
    #: no effect since code tags come from ingest and only recalled pages are re-parsed; kept so that
    #: recipes naming it, and the config hash manifests cite, stay as they are
    score_floor: float = 0.2
    reparse: bool = True
    keep_original_max_chars: int = 2000
    tier_mode: str = "percentile"
    tier_high: float = 80.0
    tier_low: float = 10.0
    tier_min_files: int = 20
    tier_weights: dict[str, float] = dataclasses.field(default_factory=lambda: {"structural": 1.0, "content": 0.0})

    def validate(self) -> None:
        for r in self.recall:
            if r not in ("html_tags", "classifier"):
                raise ConfigError(f"CodeWebConfig.recall: unknown method {r!r}; choose html_tags and/or classifier")
        check_range(self, "classifier_threshold", 0.0, 1.0)
        check_range(self, "score_floor", 0.0, 1.0)
        if self.score_floor != 0.2:  # accepted (recipes name it) but said: it changes nothing the stage does
            log.warning("code_web.score_floor = %g has no effect: code blocks come from ingest and only recalled pages are "
                        "re-parsed; leave it out (recall, min_code_blocks and classifier_threshold choose the pages)", self.score_floor)
        check_range(self, "min_code_blocks", 0, None)
        check_range(self, "min_code_chars", 0, None)
        check_range(self, "classifier_min_code_chars", 0, None)
        try:
            self.tier_rule()
        except ValueError as exc:
            raise ConfigError(f"CodeWebConfig: {exc}") from exc

    def tier_rule(self) -> TierRule:
        return tier_rules(self.tier_mode, self.tier_high, self.tier_low, None)[0]

    def recalled(self, s: pd.DataFrame) -> np.ndarray:
        """:func:`~curation.quality.code_pages.recall_method` with this config's rules."""
        return recall_method(s, self.recall, self.min_code_blocks, self.min_code_chars, self.classifier_threshold,
                             self.classifier_min_code_chars)

    def score_params(self, tokenizer: str) -> dict[str, Any]:
        """The ``scores`` step's key: the recall rule picks the pages it re-parses."""
        clf = CodeContentClassifier(self.classifier_model)
        # a model of the user's by its files too: its card's version stays "1" when it is retrained in place
        files = model_fingerprint(Path(self.classifier_model).expanduser()) if self.classifier_model else None
        return {"sources": list(self.sources), "classifier": clf.version, **({"classifier_files": files} if files else {}),
                "scores": 3, "recall": list(self.recall),
                "min_code_blocks": self.min_code_blocks, "min_code_chars": self.min_code_chars,
                "classifier_threshold": self.classifier_threshold,
                "classifier_min_code_chars": self.classifier_min_code_chars, "reparse": self.reparse, "tokenizer": tokenizer,
                "structural": StructuralScorer.version}


def block_score(code: str, language: str | None) -> float:
    """The structural score (0–10) of one code block."""
    return structural_score(StructuralScorer().features([code], [language], [None])[0])


SCORE_COLUMNS = ["doc_id", "has_html", "pre_blocks", "code_elements", "highlighted", "code_chars", "content_prob",
                 "content_code_chars", "content_code_lines", "reparsed", "score", "language", "n_tokens", "html_parsed"]


def score_frame(df: pd.DataFrame, cfg: CodeWebConfig, tokenizer: str, pages: dict[str, str] | None = None,
                tags: pd.DataFrame | None = None, load: Any = None, rendered: Any = None) -> pd.DataFrame:
    """Per in-scope page: tag counts, classifier probability; for the pages the recall rule takes,
    the re-parse and score.

    ``tags``: the code tags ingest read (:func:`load_code_tags`); then only the pages the rule
    recalls are parsed, their HTML from ``load(ids)``, but for those ``rendered(ids)`` gives the
    re-parsed text of (ingest's ``artifacts/code_text``: rendered from the parse that counted their
    tags, the same text). Without ``tags`` every page with HTML is parsed (``pages[doc_id]``,
    ingest's HTML artifact, else an ``html`` key in ``meta``).
    """
    inside = df["source"].isin(cfg.sources).to_numpy()
    scope = df if inside.all() else df[inside]  # most partitions are all web: no copy
    ids = scope["doc_id"].tolist()
    texts = [t if isinstance(t, str) else "" for t in scope["text"].tolist()]
    clf = CodeContentClassifier(cfg.classifier_model)
    lines = clf.window_lines if texts else 12
    page_windows, n_windows = [], []  # the windows predict reads (at most MAX_WINDOWS a page), and how many the page has
    for t in texts:
        full = all_windows(t, lines, min_chars=clf.min_chars)
        page_windows.append(sample_windows(full))
        n_windows.append(len(full))
    probs, window_probs = clf.predict_pages(page_windows) if texts else (np.zeros(0), [])
    evidence = np.array([code_pages.code_evidence(ws, q, cfg.classifier_threshold)  # (characters, lines) per page
                         for ws, q in zip(page_windows, window_probs, strict=True)], dtype="int64").reshape(-1, 2)
    n = len(ids)  # the columns as plain arrays, made a frame once at the end (a pandas column write costs more)
    cols: dict[str, Any] = {"has_html": np.zeros(n, dtype=bool), **{c: np.zeros(n, dtype="int64") for c in TAG_COLUMNS},
                            "content_prob": probs.astype("float64"), "content_code_chars": evidence[:, 0],
                            "content_code_lines": evidence[:, 1]}
    roots: dict[str, Any] = {}
    if tags is not None:
        known = tags.reindex(ids)
        cols["has_html"] = known["has_html"].fillna(0).astype(bool).to_numpy()
        for col in TAG_COLUMNS:
            cols[col] = known[col].fillna(0).astype("int64").to_numpy()
    else:
        for i, (doc_id, meta) in enumerate(zip(ids, scope["meta"], strict=True)):
            html = (pages or {}).get(doc_id) or page_html(meta)
            root = parse(html) if html else None
            stats = code_tag_stats(None, root)
            cols["has_html"][i] = root is not None
            for col in TAG_COLUMNS:  # pre_blocks, code_elements, highlighted, code_chars
                cols[col][i] = getattr(stats, col)
            if html:
                roots[doc_id] = root
    take = ~pd.isna(cfg.recalled({**cols, "score": np.zeros(n)}))  # the pages recalled, before their re-parse is known
    done: dict[str, str] = {}  # re-parsed texts ingest rendered
    if tags is not None and take.any():
        wanted = [ids[i] for i in np.flatnonzero(take).tolist()]
        done = rendered(wanted) if rendered is not None and cfg.reparse else {}
        wanted = [d for d in wanted if d not in done]
        html = load(wanted) if load is not None and wanted else {}
        meta = dict(zip(ids, scope["meta"].tolist(), strict=True)) if wanted else {}
        for doc_id in wanted:
            page = html.get(doc_id) or page_html(meta[doc_id])
            if page:
                roots[doc_id] = parse(page)
    text_of = dict(zip(ids, texts, strict=True))
    reparsed, language = np.full(n, None, dtype=object), np.full(n, None, dtype=object)
    score, n_tokens = np.full(n, np.nan), np.full(n, -1, dtype="int64")
    # re-parse every recalled page first, so that the windows of those without code blocks are scored
    # in one model call (a page's windows that predict scored already are not scored again)
    recalled = np.flatnonzero(take).tolist()
    new_texts: list[str] = []
    page_blocks: list[list[tuple[str, str]] | None] = []
    pending: list[tuple[int, list[str]]] = []  # (recalled page, windows to score)
    for j, i in enumerate(recalled):
        doc_id = ids[i]
        root, text = roots.get(doc_id), text_of[doc_id]
        if doc_id in done:
            new_text = done[doc_id]
        else:
            new_text = reparse_html(None, root) if (root is not None and cfg.reparse) else ""
        new_texts.append(new_text)
        blocks = [b for b in (code_blocks(new_text) if new_text else markdown_blocks(text)) if b[1].strip()]  # its own fences
        if blocks:
            page_blocks.append(blocks)
            continue
        # no code blocks: the windows the classifier calls code, with code evidence, stand in for them
        page_blocks.append(None)
        full = all_windows(new_text, lines, min_chars=clf.min_chars) if new_text else None
        if full is None and texts[i] == text and n_windows[i] <= MAX_WINDOWS:  # all its windows: predict scored them
            page_blocks[j] = [("", w) for w in code_pages.code_windows(page_windows[i], window_probs[i], CODE_WINDOW, cfg.classifier_min_code_chars)]
            continue
        ws = sample_windows(full if full is not None else all_windows(text, lines, min_chars=clf.min_chars), 10_000)
        pending.append((j, ws))
    flat = [w for _j, ws in pending for w in ws]
    p = clf.predict_windows(flat) if flat else np.zeros(0)
    at = 0
    for j, ws in pending:
        page_blocks[j] = [("", w) for w in code_pages.code_windows(ws, p[at : at + len(ws)], CODE_WINDOW, cfg.classifier_min_code_chars)]
        at += len(ws)
    counted = [t for t in new_texts if t]
    counts = iter(count_tokens(counted, tokenizer).tolist() if counted else [])
    for j, i in enumerate(recalled):
        new_text = new_texts[j]
        reparsed[i] = new_text or None
        score[i], language[i] = page_score(new_text or text_of[ids[i]], page_blocks[j], block_score)
        if new_text:
            n_tokens[i] = int(next(counts))
    return pd.DataFrame({"doc_id": scope["doc_id"].to_numpy(), **cols,
                         "reparsed": pd.Series(reparsed, dtype=object), "score": score,  # object, not str
                         "language": pd.Series(language, dtype=object), "n_tokens": n_tokens,
                         "html_parsed": np.fromiter((d in roots for d in ids), dtype=bool, count=n)})[SCORE_COLUMNS]


def _score(number: int, df: pd.DataFrame, cfg: CodeWebConfig, tokenizer: str, html_dir: Path | None,
           tags_dir: Path | None, text_dir: Path | None = None) -> pd.DataFrame:
    inside = df["source"].isin(cfg.sources).to_numpy()
    ids = (df["doc_id"] if inside.all() else df.loc[inside, "doc_id"]).tolist()
    if tags_dir is not None:
        rendered = (lambda wanted: load_pages(text_dir, number, wanted, column="text", own_part=True)) if text_dir is not None else None
        return score_frame(df, cfg, tokenizer, tags=load_code_tags(tags_dir, number, ids),
                           load=lambda wanted: load_pages(html_dir, number, wanted), rendered=rendered)
    return score_frame(df, cfg, tokenizer, load_pages(html_dir, number, ids))


#: what the recall rule and the tier score read of the scores (not the re-parsed text)
HIST_COLUMNS = ["pre_blocks", "highlighted", "code_chars", "content_prob", "content_code_chars", "content_code_lines", "score"]


def _hist(s: pd.DataFrame, cfg: CodeWebConfig) -> pd.DataFrame:
    return page_histogram(s, cfg.recalled(s), cfg.tier_weights)


class CodeWebStage(RowStage):
    name = "code_web"
    version = "5"  # 2: ties at a tier cut medium (code_tiers); 3: structural_v5; 4: structural_v6; 5: text pages' fences, code evidence
    config_cls = CodeWebConfig
    requires = ("doc_id", "text", "source", "meta")
    requires_artifacts = {"html": ("ingest", "html"), "code_tags": ("ingest", "code_tags"), "code_text": ("ingest", "code_text")}
    settings = {"tokenizer": "ingest.tokenizer"}
    rebuilds_text = "reparse"  # the config key under which recalled pages' text is rebuilt from ingest's HTML
    produces: dict[str, Any] = {"code_web_recall": object, "code_tier": object, "code_score_structural": "float64",
                                "code_web_score": "float64"}

    def preflight(self, cfg: CodeWebConfig) -> None:
        check_model("code_web.classifier_model", cfg.classifier_model, "hashed_linear", "binary",
                    how="train one with `curate train-classifier code-content`, or leave it unset for the shipped model")

    def model_paths(self, cfg: CodeWebConfig) -> dict[str, str]:
        return {"classifier_model": cfg.classifier_model} if cfg.classifier_model else {}

    def prepare(self, docs: dd.DataFrame, cfg: CodeWebConfig, ctx: StageContext) -> Plan:
        tokenizer = str(ctx.settings["tokenizer"])
        html_dir, tags_dir, text_dir = ctx.upstream.get("html"), ctx.upstream.get("code_tags"), ctx.upstream.get("code_text")
        log.info("code_web: page HTML from %s; code tags from %s", html_dir or "meta.html (no ingest artifacts/html found)",
                 tags_dir or "a parse of every page (no ingest artifacts/code_tags found)")
        if html_dir is None:  # a stage folder outside the run whose ingest kept the pages' HTML
            log.warning("code_web: no ingest stage on its input's chain (the folders it was made from; a run has "
                        "RUN/%s/artifacts/html), so pages are parsed from meta.html, and pages whose HTML ingest kept apart are "
                        "scored on their text alone: recall and tiers can differ from the recipe's. Give an --input made from "
                        "the run's ingest (e.g. RUN/%s) to use it", folder_name("ingest"), folder_name("code_quality"))
        params = {"version": self.version, **cfg.score_params(tokenizer), "html_artifact": html_dir is not None,
                  "code_tags": tags_dir is not None, "code_text": text_dir is not None}
        histogram = Histogram(_hist, (cfg,), [*HIST_COLUMNS, "has_html", "n_tokens"], ("html_parsed",), reparse_counts)
        scores, hist, totals = scores_and_histogram(ctx, docs, params, "scored_pages", cfg.sources, _score, cfg, tokenizer, html_dir,
                                                    tags_dir, text_dir, columns=["doc_id", "source", "text", "meta"], histogram=histogram)
        rule = cfg.tier_rule()
        cuts = thresholds(hist, rule, None, cfg.tier_min_files)
        recalled = int(hist.loc[hist["language"] == GROUP, "count"].sum()) if len(hist) else 0
        if recalled < cfg.tier_min_files and rule.mode == "percentile":
            cuts[GROUP] = (float("-inf"), float("inf"))  # too few pages for percentiles: all medium
        log.info("%s", reparse_note(recalled, totals, cfg.reparse))
        figures = StageFigures({"html_artifact": html_dir is not None, "code_tags_artifact": tags_dir is not None, "tier_cuts": cut_figures(cuts, lambda k: k == GROUP),
                                "recalled_pages": recalled, "html_parsed_pages": totals["html_parsed"],
                                **{k: totals.get(k, 0) for k in ("reparsed_pages", "recalled_without_html")}}, marks={"recalled": recalled})
        return Plan((scores, cuts), figures)

    def decide(self, number: int, df: pd.DataFrame, state: Any, cfg: CodeWebConfig) -> pd.DataFrame:
        scores, cuts = state
        s = scores.read_part(number)
        return annotate_pages(df, s, cfg.recalled(s) if s is not None else None, cfg.tier_weights, cfg.tier_rule(), cuts,
                              cfg.keep_original_max_chars)


STAGE = CodeWebStage()
