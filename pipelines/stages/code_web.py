"""``code_web``: recall code-related web pages, re-parse them with code formatting, tier them.

score (per web page, cached: HTML code-tag counts, code-content probability, re-parsed text,
structural score of its code blocks + surrounding text) → decide (recall by tags and/or the
classifier threshold; tier cuts over recalled pages). Every web page is a candidate (the quality
levels no longer remove any before this stage) and none is removed here: recalled pages keep
``source = "web"`` and get ``code_web_recall``, ``code_tier`` and the re-parsed text; the mixture
policy puts them in the ``code_web/<tier>`` groups (and excludes ``code_web/low``).
"""

from __future__ import annotations

import dataclasses
import json
import logging
from pathlib import Path
from typing import Any

import dask.dataframe as dd
import numpy as np
import pandas as pd

from classifiers.code_content import CodeContentClassifier, windows
from classifiers.code_quality import StructuralScorer
from classifiers.scorer import Batch
from curation.config import ConfigError, StageConfig, check_range
from curation.quality.code_language import language_from_name
from curation.quality.code_tiers import assign_tiers, combined_score, score_histogram, thresholds, tier_rules
from curation.quality.html_code import code_blocks, code_tag_stats, parse, reparse_html
from curation.schema import annotated_meta, mark_kept
from curation.tokens import count_tokens
from pipelines.io import write_frame
from pipelines.progress import compute_with_progress

log = logging.getLogger(__name__)

GROUP = "code_web"  #: recalled pages are tiered together (their language is often unknown)
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
            tier_rules(self.tier_mode, self.tier_high, self.tier_low, None)
        except ValueError as exc:
            raise ConfigError(f"CodeWebConfig: {exc}") from exc

    def score_params(self, tokenizer: str) -> dict[str, Any]:
        clf = CodeContentClassifier(self.classifier_model)
        return {"sources": list(self.sources), "classifier": clf.version, "floor": min(self.score_floor, self.classifier_threshold),
                "reparse": self.reparse, "tokenizer": tokenizer, "structural": StructuralScorer.version}


def page_html(meta: Any) -> str | None:
    """The page HTML carried in ``meta`` (``{"html": …}``) or None."""
    if not isinstance(meta, str) or '"html"' not in meta:
        return None
    try:
        value = json.loads(meta).get("html")
    except (json.JSONDecodeError, AttributeError):
        return None
    return value if isinstance(value, str) and value.strip() else None


def page_score(text: str, blocks: list[tuple[str, str]]) -> tuple[float, str | None]:
    """0–10 score of a code page and its main code language.

    80 %: the structural score of its code blocks (weighted by size); 20 %: explanation, i.e.
    prose around the code (a bare code dump or a page with a one-line snippet score lower).
    """
    blocks = [(lang, code) for lang, code in blocks if code.strip()]
    if not blocks:
        return float("nan"), None
    sizes = np.array([len(c) for _l, c in blocks], dtype=np.float64)
    langs = [language_from_name(lang) for lang, _c in blocks]
    scores = StructuralScorer().score(Batch([c for _l, c in blocks], langs, [None] * len(blocks)))
    code_share = float(sizes.sum()) / max(len(text), 1)
    explanation = float(np.clip(min(code_share / 0.1, (1.0 - code_share) / 0.2), 0.0, 1.0))
    known = [lg for lg in langs if lg]
    main = max(set(known), key=known.count) if known else None
    return 0.8 * float(np.average(scores, weights=sizes)) + 2.0 * explanation, main


def find_html_artifact(ctx: Any) -> str | None:
    """Ingest's ``artifacts/html`` of this run (resolved by the runner: ``requires_artifacts``)."""
    html = ctx.upstream.get("html")
    return str(html) if html is not None else None


def load_pages(html_dir: str | None, number: int, ids: list[str]) -> dict[str, str]:
    """HTML of ``ids`` from ingest's ``artifacts/html`` (``doc_id, html``), keyed by doc_id.

    The part of the same number is read first (stages keep ingest's partitioning); ids not in it
    are looked up across all parts.
    """
    if not html_dir or not ids:
        return {}
    import pyarrow.parquet as pq

    wanted = set(ids)
    out: dict[str, str] = {}
    own = Path(html_dir) / f"part-{number:05d}.parquet"
    for paths in ([own] if own.exists() else [], sorted(Path(html_dir).glob("part-*.parquet"))):
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
            row["score"], row["language"] = page_score(base, blocks)
            if row["reparsed"]:
                row["n_tokens"] = int(count_tokens([new_text], tokenizer)[0])
        rows.append(row)
    cols = ["doc_id", "has_html", "pre_blocks", "code_elements", "highlighted", "code_chars", "content_prob",
            "reparsed", "score", "language", "n_tokens"]
    return pd.DataFrame(rows, columns=cols)


def _score_part(df: pd.DataFrame, folder: str, cfg: CodeWebConfig, tokenizer: str, html_dir: str | None,
                partition_info: dict | None = None) -> pd.Series:
    number = (partition_info or {}).get("number", 0)
    pages = load_pages(html_dir, number, df.loc[df["source"].isin(cfg.sources), "doc_id"].tolist())
    out = score_frame(df, cfg, tokenizer, pages)
    write_frame(out, Path(folder) / f"part-{number:05d}.parquet")
    return pd.Series([len(out)], dtype="int64")


def recall_method(s: pd.DataFrame, cfg: CodeWebConfig) -> np.ndarray:
    """``html_tags`` | ``classifier`` | None per scored page (tags first when both apply)."""
    tags = (s["pre_blocks"] + s["highlighted"] >= max(cfg.min_code_blocks, 1)) & (s["code_chars"] >= cfg.min_code_chars)
    clf = s["content_prob"] >= cfg.classifier_threshold
    out = np.full(len(s), None, dtype=object)
    if "classifier" in cfg.recall:
        out[clf.to_numpy()] = "classifier"
    if "html_tags" in cfg.recall:
        out[tags.to_numpy()] = "html_tags"
    out[s["score"].isna().to_numpy()] = None  # nothing code-like to keep after re-parsing
    return out


def _scores_for_tiers(s: pd.DataFrame, cfg: CodeWebConfig) -> np.ndarray:
    frame = pd.DataFrame({"code_score_structural": s["score"], "code_score_content": s["content_prob"] * 10.0})
    return combined_score(frame, cfg.tier_weights)


def _hist_part(path: str, cfg: CodeWebConfig) -> pd.DataFrame:
    s = pd.read_parquet(path)
    recalled = recall_method(s, cfg)
    score = _scores_for_tiers(s, cfg)
    score[pd.isna(recalled)] = np.nan
    return score_histogram(np.full(len(s), GROUP, dtype=object), score)


def _decide_part(df: pd.DataFrame, folder: str, cfg: CodeWebConfig, cuts: dict[str, tuple[float, float]],
                 partition_info: dict | None = None) -> pd.DataFrame:
    number = (partition_info or {}).get("number", 0)
    df = df.copy()
    df["code_web_recall"] = pd.Series([None] * len(df), index=df.index, dtype=object)
    # code_quality's columns on code files pass through: only recalled pages get new values
    df["code_tier"] = df["code_tier"].astype(object) if "code_tier" in df.columns else pd.Series([None] * len(df), index=df.index, dtype=object)
    col = "code_score_structural"
    df[col] = pd.to_numeric(df[col], errors="coerce").astype("float64") if col in df.columns else np.nan
    df["code_web_score"] = np.nan
    df = mark_kept(df)
    path = Path(folder) / f"part-{number:05d}.parquet"
    if df.empty or not path.exists():
        return df
    s = pd.read_parquet(path)
    recalled = recall_method(s, cfg)
    s = s[~pd.isna(recalled)].assign(recall=recalled[~pd.isna(recalled)])
    if s.empty:
        return df
    s = s.assign(tier_score=_scores_for_tiers(s, cfg)).set_index("doc_id")
    default, _ = tier_rules(cfg.tier_mode, cfg.tier_high, cfg.tier_low, None)
    s["tier"] = assign_tiers(s["tier_score"].to_numpy(), np.full(len(s), GROUP, dtype=object), cuts, default)
    for col in ("language", "meta", "text", "source"):
        df[col] = df[col].astype(object)  # all-null input columns read back as float
    pos = np.flatnonzero(df["doc_id"].isin(s.index).to_numpy())
    for i in pos:
        idx = df.index[i]
        r = s.loc[df.at[idx, "doc_id"]]
        df.at[idx, "code_web_recall"] = r["recall"]
        df.at[idx, "code_tier"] = r["tier"]
        df.at[idx, "code_score_structural"] = r["score"]
        df.at[idx, "code_web_score"] = r["tier_score"]
        if isinstance(r["language"], str):
            df.at[idx, "language"] = r["language"]
        if isinstance(r["reparsed"], str) and r["reparsed"]:
            original = df.at[idx, "text"]
            df.at[idx, "meta"] = _with_original(df.at[idx, "meta"], original, cfg.keep_original_max_chars)
            df.at[idx, "text"] = r["reparsed"]
            df.at[idx, "n_tokens"] = int(r["n_tokens"])
    return df


def _with_original(meta: Any, original: Any, max_chars: int) -> str:
    data = {}
    if isinstance(meta, str) and meta:
        try:
            parsed = json.loads(meta)
            data = parsed if isinstance(parsed, dict) else {"meta": meta}
        except json.JSONDecodeError:
            data = {"meta": meta}
    if isinstance(original, str) and len(original) <= max_chars:
        data["original_text"] = original
    return json.dumps(data, sort_keys=True, ensure_ascii=False)


def _decide_ordered(df: pd.DataFrame, folder: str, cfg: Any, cuts: dict[str, tuple[float, float]], columns: list[str],
                    partition_info: dict | None = None) -> pd.DataFrame:
    return _decide_part(df, folder, cfg, cuts, partition_info=partition_info)[columns]


class CodeWebStage:
    name = "code_web"
    version = "1"
    config_cls = CodeWebConfig
    requires = ("doc_id", "text", "source", "meta")
    requires_artifacts = {"html": ("ingest", "html")}
    produces: dict[str, Any] = {"code_web_recall": object, "code_tier": object, "code_score_structural": "float64",
                                "code_web_score": "float64"}

    def build(self, docs: dd.DataFrame, cfg: CodeWebConfig, ctx: Any) -> dd.DataFrame:
        tokenizer = str(((ctx.recipe.get("stages") or {}).get("ingest") or {}).get("tokenizer", "qwen"))
        html_dir = find_html_artifact(ctx)
        log.info("code_web: page HTML from %s", html_dir or "meta.html (no ingest artifacts/html found)")
        ctx.extra_stats["html_artifact"] = html_dir is not None

        def produce(out: Path) -> None:
            graph = docs.map_partitions(_score_part, str(out), cfg, tokenizer, html_dir, meta=pd.Series(dtype="int64"))
            ctx.extra_stats["scored_pages"] = int(np.sum(compute_with_progress(graph, ctx.client, "code_web: score", ctx.quiet)))

        folder = ctx.cached("scores", {"version": self.version, **cfg.score_params(tokenizer), "html_artifact": html_dir is not None}, produce)
        files = sorted(str(p) for p in folder.glob("part-*.parquet"))
        hist = compute_with_progress(dd.from_map(_hist_part, files, cfg=cfg, meta=score_histogram(np.array([]), np.array([])),
                                                 enforce_metadata=False), ctx.client, "code_web: tier cuts", ctx.quiet)
        hist = hist if isinstance(hist, pd.DataFrame) else pd.concat(hist)
        default, _ = tier_rules(cfg.tier_mode, cfg.tier_high, cfg.tier_low, None)
        cuts = thresholds(hist, default, None, cfg.tier_min_files)
        recalled = int(hist.loc[hist["language"] == GROUP, "count"].sum()) if len(hist) else 0
        if recalled < cfg.tier_min_files and default.mode == "percentile":
            cuts[GROUP] = (float("-inf"), float("inf"))  # too few pages for percentiles: all medium
        ctx.extra_stats["tier_cuts"] = {k: [float(v[0]), float(v[1])] for k, v in cuts.items() if k == GROUP}
        ctx.extra_stats["recalled_pages"] = recalled
        ctx.extra_stats["annotated"] = {"recalled": recalled}
        meta = annotated_meta(docs._meta, dict(self.produces))
        return docs.map_partitions(_decide_ordered, str(folder), cfg, cuts, list(meta.columns), meta=meta)


STAGE = CodeWebStage()
