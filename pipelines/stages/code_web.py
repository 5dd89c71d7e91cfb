"""``code_web``: recall code-related web pages, re-parse them with code formatting, tier them.

score (per web page, cached: HTML code-tag counts, code-content probability, re-parsed text,
structural score of its code blocks + surrounding text) → decide (recall by tags and/or the
classifier threshold; tier cuts over recalled pages). Every web page is a candidate (web_quality
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

from classifiers.code_content import CodeContentClassifier, windows
from classifiers.code_quality import StructuralScorer, structural_score
from curation.config import ConfigError, StageConfig, check_range
from curation.quality.code_pages import GROUP, annotate_pages, page_histogram, page_html, page_score, recall_method
from curation.quality.code_tiers import TierRule, thresholds, tier_rules
from curation.quality.html_code import code_blocks, code_tag_stats, parse, reparse_html
from curation.tokens import count_tokens
from pipelines.kit import Artifact, Plan, RowStage, StageContext, StageFigures
from pipelines.stages.code_steps import cut_figures, score_step, tier_histogram

log = logging.getLogger(__name__)

CODE_WINDOW = 0.5  #: a window is code for page scoring when the classifier says so at even odds


@dataclasses.dataclass(frozen=True)
class CodeWebConfig(StageConfig):
    sources: tuple[str, ...] = ("web",)
    recall: tuple[str, ...] = ("html_tags", "classifier")
    min_code_blocks: int = 1
    min_code_chars: int = 40
    classifier_model: str | None = None
    classifier_threshold: float = 0.7
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
        check_range(self, "min_code_blocks", 0, None)
        check_range(self, "min_code_chars", 0, None)
        try:
            self.tier_rule()
        except ValueError as exc:
            raise ConfigError(f"CodeWebConfig: {exc}") from exc

    def tier_rule(self) -> TierRule:
        return tier_rules(self.tier_mode, self.tier_high, self.tier_low, None)[0]

    def recalled(self, s: pd.DataFrame) -> np.ndarray:
        """:func:`~curation.quality.code_pages.recall_method` with this config's rules."""
        return recall_method(s, self.recall, self.min_code_blocks, self.min_code_chars, self.classifier_threshold)

    def score_params(self, tokenizer: str) -> dict[str, Any]:
        clf = CodeContentClassifier(self.classifier_model)
        return {"sources": list(self.sources), "classifier": clf.version, "floor": min(self.score_floor, self.classifier_threshold),
                "reparse": self.reparse, "tokenizer": tokenizer, "structural": StructuralScorer.version}


def block_score(code: str, language: str | None) -> float:
    """The structural score (0–10) of one code block."""
    return structural_score(StructuralScorer().features([code], [language], [None])[0])


def load_pages(html_dir: str | Path | None, number: int, ids: list[str]) -> dict[str, str]:
    """HTML of ``ids`` from ingest's ``artifacts/html`` (``doc_id, html``), keyed by doc_id.

    The part of the same number is read first (stages keep ingest's partitioning); ids not in it
    are looked up across all parts.
    """
    if not html_dir or not ids:
        return {}
    import pyarrow.parquet as pq

    html = Artifact(Path(html_dir))
    wanted = set(ids)
    out: dict[str, str] = {}
    own = html.part_path(number)
    for paths in ([own] if own.exists() else [], html.parts()):
        for path in paths:
            missing = sorted(wanted - out.keys())
            if not missing:
                return out
            table = pq.read_table(path, filters=[("doc_id", "in", missing)]) if pq.read_metadata(path).num_rows else None
            if table is not None and table.num_rows:
                out.update(zip(table.column("doc_id").to_pylist(), table.column("html").to_pylist(), strict=True))
    return out


def score_frame(df: pd.DataFrame, cfg: CodeWebConfig, tokenizer: str, pages: dict[str, str] | None = None) -> pd.DataFrame:
    """Per in-scope page: tag counts, classifier probability; for candidates the re-parse and score.

    The page HTML is ``pages[doc_id]`` (ingest's HTML artifact), else an ``html`` key in ``meta``.
    """
    scope = df[df["source"].isin(cfg.sources)]
    texts = [t if isinstance(t, str) else "" for t in scope["text"]]
    clf = CodeContentClassifier(cfg.classifier_model)
    probs = clf.predict(texts) if texts else np.zeros(0)
    floor = min(cfg.score_floor, cfg.classifier_threshold)
    rows = []
    for doc_id, text, meta, prob in zip(scope["doc_id"], texts, scope["meta"], probs, strict=True):
        html = (pages or {}).get(doc_id) or page_html(meta)
        root = parse(html) if html else None
        stats = code_tag_stats(None, root)
        row: dict[str, Any] = {"doc_id": doc_id, "has_html": root is not None, "pre_blocks": stats.pre_blocks,
                               "code_elements": stats.code_elements, "highlighted": stats.highlighted,
                               "code_chars": stats.code_chars, "content_prob": float(prob), "reparsed": None,
                               "score": np.nan, "language": None, "n_tokens": -1}
        if stats.pre_blocks + stats.highlighted + stats.code_elements > 0 or prob >= floor:
            new_text = reparse_html(None, root) if (root is not None and cfg.reparse) else ""
            row["reparsed"] = new_text or None
            base = new_text or text
            blocks = code_blocks(new_text) if new_text else []
            if not blocks:  # no code markup: the windows the classifier calls code stand in for code blocks
                ws = windows(base, clf.window_lines, max_windows=10_000, min_chars=clf.min_chars)
                p = clf.predict_windows(ws) if ws else np.zeros(0)
                blocks = [("", w) for w, q in zip(ws, p, strict=True) if q >= CODE_WINDOW]
            row["score"], row["language"] = page_score(base, blocks, block_score)
            if row["reparsed"]:
                row["n_tokens"] = int(count_tokens([new_text], tokenizer)[0])
        rows.append(row)
    cols = ["doc_id", "has_html", "pre_blocks", "code_elements", "highlighted", "code_chars", "content_prob",
            "reparsed", "score", "language", "n_tokens"]
    return pd.DataFrame(rows, columns=cols)


def _score(number: int, df: pd.DataFrame, cfg: CodeWebConfig, tokenizer: str, html_dir: Path | None) -> pd.DataFrame:
    pages = load_pages(html_dir, number, df.loc[df["source"].isin(cfg.sources), "doc_id"].tolist())
    return score_frame(df, cfg, tokenizer, pages)


def _hist(s: pd.DataFrame, cfg: CodeWebConfig) -> pd.DataFrame:
    return page_histogram(s, cfg.recalled(s), cfg.tier_weights)


def _annotate(df: pd.DataFrame, s: pd.DataFrame | None, cfg: CodeWebConfig, cuts: dict[str, tuple[float, float]]) -> pd.DataFrame:
    recalled = cfg.recalled(s) if s is not None else None
    return annotate_pages(df, s, recalled, cfg.tier_weights, cfg.tier_rule(), cuts, cfg.keep_original_max_chars)


class CodeWebStage(RowStage):
    name = "code_web"
    config_cls = CodeWebConfig
    requires = ("doc_id", "text", "source", "meta")
    requires_artifacts = {"html": ("ingest", "html")}
    settings = {"tokenizer": "ingest.tokenizer"}
    produces: dict[str, Any] = {"code_web_recall": object, "code_tier": object, "code_score_structural": "float64",
                                "code_web_score": "float64"}

    def prepare(self, docs: dd.DataFrame, cfg: CodeWebConfig, ctx: StageContext) -> Plan:
        tokenizer = str(ctx.settings["tokenizer"])
        html_dir = ctx.upstream.get("html")
        log.info("code_web: page HTML from %s", html_dir or "meta.html (no ingest artifacts/html found)")
        params = {"version": self.version, **cfg.score_params(tokenizer), "html_artifact": html_dir is not None}
        scores = score_step(ctx, docs, params, "scored_pages", cfg.sources, _score, cfg, tokenizer, html_dir)
        hist = tier_histogram(ctx, scores, _hist, cfg)
        rule = cfg.tier_rule()
        cuts = thresholds(hist, rule, None, cfg.tier_min_files)
        recalled = int(hist.loc[hist["language"] == GROUP, "count"].sum()) if len(hist) else 0
        if recalled < cfg.tier_min_files and rule.mode == "percentile":
            cuts[GROUP] = (float("-inf"), float("inf"))  # too few pages for percentiles: all medium
        figures = StageFigures({"html_artifact": html_dir is not None, "tier_cuts": cut_figures(cuts, lambda k: k == GROUP),
                                "recalled_pages": recalled}, marks={"recalled": recalled})
        return Plan((scores, cuts), figures)

    def decide(self, number: int, df: pd.DataFrame, state: Any, cfg: CodeWebConfig) -> pd.DataFrame:
        scores, cuts = state
        return _annotate(df, scores.read_part(number), cfg, cuts)


STAGE = CodeWebStage()
