"""A small synthetic run for the statistics, report and notebook tests, built by the real runner.

ingest and exact_dedup are the real stages; minhash_dedup, web_quality, code_quality, edu_score
and mixture are small stand-ins that write what the contract says those stages write (columns,
ledger details, stats ``extra``, the annotations artifact, schema-valid manifests with real
shards), so these tests do not wait for the real stages. ``build_run(path)`` is imported by the
other stats tests; the tests here check that the fixture itself is a sound run.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import random
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np
import pandas as pd

import pipelines.runner
from curation.config import StageConfig
from curation.mixture.manifest import SCHEMA_VERSION
from curation.schema import DROP_DETAIL, DROP_REASON, DropReason, annotated_meta, detail_json
from pipelines.cluster import open_client
from pipelines.io import write_frame, write_json
from pipelines.runner import run_recipe
from pipelines.stages import STAGES, folder_name, load_stage

WORDS = ["river", "stone", "light", "market", "garden", "number", "theory", "proof", "energy", "field", "cell", "protein", "signal", "data", "table", "window", "cookie", "price", "offer", "shipping", "review", "author", "chapter", "lemma", "function", "vector", "matrix"]
LEVELS = [(19, "high"), (18, "medium_high"), (12, "medium"), (7, "medium_low"), (0, "low")]
QUALITY_REPEAT = {"high": 5.0, "medium_high": 2.0, "medium": 1.0, "medium_low": 0.0, "low": 0.0}
PHASES = {
    "pretrain_phase1": ("pretrain", 4096, "none", {"web": 0.75, "web_edu": 0.5, "code": 0.4, "code_web": 0.4, "math_science": 0.4}),
    "pretrain_phase2": ("pretrain", 4096, "none", {"web": 0.25, "web_edu": 0.5, "code": 0.6, "code_web": 0.6, "math_science": 0.6}),
    "midtrain_long_context_128k": ("midtrain", 131072, "best_fit", {"long_docs": 1.0}),
}


def _h(text: str) -> float:
    """A deterministic number in [0, 1) from a string (stands in for a model's score)."""
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16) / 16**8


def write_corpus(folder: Path, seed: int = 7) -> Path:
    """JSONL inputs: web pages with exact and near duplicates, code, math, agent, one broken line."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)

    def words(n: int) -> str:
        return " ".join(rng.choice(WORDS) for _ in range(n))

    rows: list[dict[str, Any]] = []
    for i in range(36):
        rows.append({"id": f"web-{i:02d}", "source": "web", "text": f"Page {i}. {words(rng.randint(20, 120))}."})
    for i in range(3):  # exact duplicates (whitespace differs), one with markup that a report must escape
        rows.append({"id": f"web-copy-{i}", "source": "web", "text": rows[i]["text"].replace(" ", "  ", 1)})
    rows[0]["text"] = "<script>alert('x')</script> & " + rows[0]["text"]
    rows[36]["text"] = rows[0]["text"] + " "
    for g in range(3):  # near duplicates: same first words, different endings
        head = f"Template {g} shop item {words(12)}"
        for k in range(g + 2):
            rows.append({"id": f"near-{g}-{k}", "source": "web", "text": f"{head} variant {k} {words(5)}"})
    for i in range(12):
        rows.append({"id": f"code-{i:02d}", "source": "code", "text": f"def f{i}(x):\n    return x + {i}  # {words(8)}\n"})
    for i in range(12):
        rows.append({"id": f"math-{i:02d}", "source": "math_science", "text": f"Lemma {i}. {words(rng.randint(30, 90))}."})
    for i in range(2):
        rows.append({"id": f"agent-{i}", "source": "agent", "text": f"step {i}: {words(10)}"})
    with open(folder / "corpus.jsonl", "w") as fh:
        for r in rows:
            fh.write(json.dumps(r) + "\n")
        fh.write('{"id": "broken", "text": \n')
    return folder


@dataclasses.dataclass(frozen=True)
class FakeConfig(StageConfig):
    low_max_bucket: int = 6  # web_quality: buckets 0..N are the discarded level
    max_epochs: float = 4.0  # mixture: cap over the pre-training phases


class FakeStage:
    """A stand-in stage: ``decide(all_docs, cfg, ctx)`` returns per doc_id the produced columns + drop."""

    version = "fake-1"
    config_cls = FakeConfig
    requires = ("doc_id", "text", "source", "n_tokens")

    def __init__(self, name: str, produces: dict[str, Any], decide: Any) -> None:
        self.name, self.produces, self.decide = name, produces, decide

    def build(self, docs: Any, cfg: FakeConfig, ctx: Any) -> Any:
        table = self.decide(docs.compute().reset_index(drop=True), cfg, ctx).set_index("doc_id")
        meta = annotated_meta(docs._meta, self.produces)
        return docs.map_partitions(_apply, table, list(meta.columns), meta=meta)


def _apply(df: pd.DataFrame, table: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    out = df.copy()
    for col in table.columns:
        out[col] = table[col].reindex(out["doc_id"]).to_numpy()
    for col in (DROP_REASON, DROP_DETAIL):
        out[col] = out[col].astype(object).where(out[col].notna(), None)
    return out[columns]


def _frame(df: pd.DataFrame, **cols: Any) -> pd.DataFrame:
    out = pd.DataFrame({"doc_id": df["doc_id"].to_numpy()})
    for k, v in cols.items():
        out[k] = v
    out[DROP_REASON] = out.get(DROP_REASON, pd.Series([None] * len(df), dtype=object))
    out[DROP_DETAIL] = out.get(DROP_DETAIL, pd.Series([None] * len(df), dtype=object))
    return out


def _minhash(df: pd.DataFrame, cfg: FakeConfig, ctx: Any) -> pd.DataFrame:
    key = df["text"].map(lambda t: " ".join(t.split()[:8]) if t.startswith("Template") else None)
    cluster, reason, detail = [None] * len(df), [None] * len(df), [None] * len(df)
    for k, idx in df.groupby(key).groups.items():
        members = sorted(df.loc[idx, "doc_id"])
        cid = f"mh-{hashlib.sha1(k.encode()).hexdigest()[:8]}"
        for i in idx:
            cluster[i] = cid
            if df.at[i, "doc_id"] != members[0]:
                reason[i] = DropReason.NEAR_DUPLICATE.value
                detail[i] = detail_json(duplicate_of=members[0], cluster=cid, cluster_size=len(members), jaccard=0.875)
    return _frame(df, minhash_cluster=cluster, drop_reason=reason, drop_detail=detail)


def weighted_thresholds(scores: np.ndarray, weights: np.ndarray) -> list[float]:
    order = np.argsort(scores, kind="stable")
    cum = np.cumsum(weights[order]) / weights.sum()
    return [float(scores[order][np.searchsorted(cum, p / 100)]) for p in range(5, 100, 5)]


def _web_quality(df: pd.DataFrame, cfg: FakeConfig, ctx: Any) -> pd.DataFrame:
    web = (df["source"] == "web").to_numpy()
    sc = {
        "heuristics": np.array([len(set(t.split())) / max(len(t.split()), 1) for t in df["text"]]),
        "linear": np.array([_h("lin" + i) for i in df["doc_id"]]),
    }
    tokens = df["n_tokens"].to_numpy(dtype=float)
    th = {n: weighted_thresholds(v[web], tokens[web]) for n, v in sc.items()}
    ctx.extra_stats["thresholds"] = th
    bucket = np.max([np.searchsorted(th[n], v, side="right") for n, v in sc.items()], axis=0)
    levels = np.array([next(lv for lo, lv in LEVELS if b >= lo) if b > cfg.low_max_bucket else "low" for b in bucket], dtype=object)
    out = _frame(df, **{f"quality_score_{n}": np.where(web, v, np.nan) for n, v in sc.items()})
    out["quality_bucket"] = np.where(web, bucket, np.nan)
    out["quality_level"] = np.where(web, levels, None)
    out["quality_repeat"] = [QUALITY_REPEAT[lv] if w else np.nan for lv, w in zip(levels, web, strict=True)]
    low = web & (levels == "low")
    out.loc[low, DROP_REASON] = DropReason.LOW_QUALITY.value
    out.loc[low, DROP_DETAIL] = [detail_json(level="low", bucket=int(bucket[i]), scores={n: float(sc[n][i]) for n in sc}) for i in np.flatnonzero(low)]
    return out


def _code_quality(df: pd.DataFrame, cfg: FakeConfig, ctx: Any) -> pd.DataFrame:
    code = (df["source"] == "code").to_numpy()
    score = np.array([_h("code" + i) for i in df["doc_id"]])
    tier = np.where(score >= 0.7, "high", np.where(score >= 0.3, "medium", "low"))
    ctx.extra_stats["tier_cuts"] = {"*": [0.3, 0.7]}
    out = _frame(df, code_score_structural=np.where(code, score, np.nan), code_tier=np.where(code, tier, None),
                 code_repeat=np.where(code, np.select([tier == "high", tier == "medium"], [2.0, 1.0], 0.0), np.nan))
    low = code & (tier == "low")
    out.loc[low, DROP_REASON] = DropReason.CODE_LOW_TIER.value
    out.loc[low, DROP_DETAIL] = [detail_json(tier="low", language="Python", score=float(score[i]), scores={"code_score_structural": float(score[i])}) for i in np.flatnonzero(low)]
    return out


def _code_web(df: pd.DataFrame, cfg: FakeConfig, ctx: Any) -> pd.DataFrame:
    """Recall a few web pages as code_web and tier them; code files keep their code_quality columns."""
    recalled = ((df["source"] == "web") & df["doc_id"].map(lambda i: _h("cw" + i) < 0.25)).to_numpy()
    score = np.array([_h("cws" + i) for i in df["doc_id"]])
    tier = np.where(score >= 0.6, "high", np.where(score >= 0.2, "medium", "low"))
    out = _frame(df, source=np.where(recalled, "code_web", df["source"]),
                 code_score_structural=np.where(recalled, score, df["code_score_structural"]),
                 code_tier=np.where(recalled, tier, df["code_tier"]),
                 code_repeat=np.where(recalled, np.select([tier == "high", tier == "medium"], [2.0, 1.0], 0.0), df["code_repeat"]),
                 code_web_recall=np.where(recalled, "classifier", None))
    ctx.extra_stats["tier_cuts"] = {"code_web": [0.2, 0.6]}
    low = recalled & (tier == "low")
    out.loc[low, DROP_REASON] = DropReason.CODE_WEB_LOW_TIER.value
    out.loc[low, DROP_DETAIL] = [detail_json(tier="low", score=float(score[i]), recall="classifier") for i in np.flatnonzero(low)]
    return out


def _edu(df: pd.DataFrame, cfg: FakeConfig, ctx: Any) -> pd.DataFrame:
    src = df["source"].to_numpy()
    scored = np.isin(src, ["web", "math_science"])
    score = np.array([2.5 + 2.5 * _h("edu" + i) if s == "math_science" else 3.5 * _h("edu" + i) for i, s in zip(df["doc_id"], src, strict=True)])
    band = np.where(score >= 3, "high", np.where(score >= 2, "medium", "low"))
    out = _frame(df, edu_score=np.where(scored, score, np.nan), edu_band=np.where(scored, band, None),
                 edu_repeat=np.where(scored, np.where(band == "high", 2.0, 1.0), np.nan), edu_rich=(src == "web") & (score >= 3))
    sample = sorted(df.loc[scored, "doc_id"])[::2]
    failed = sample[-1]
    ann = pd.DataFrame({"doc_id": sample, "source": df.set_index("doc_id").loc[sample, "source"].to_numpy(),
                        "score": [float(np.clip(round(score[df.index[df["doc_id"] == i][0]] + _h("ann" + i) - 0.5), 0, 5)) for i in sample],
                        "failure": None})
    ann.loc[ann["doc_id"] == failed, ["score", "failure"]] = [np.nan, "no_final_score"]
    write_frame(ann, ctx.artifacts_dir / "annotations" / "annotations.parquet")  # the layout of the real stage
    ctx.extra_stats["annotation"] = {"annotator": "fake-judge", "annotated": len(sample) - 1, "failed": 1}
    ctx.extra_stats["distillation"] = {"kind": "head", "n_annotated": len(sample) - 1, "metrics": {
        "n_train": len(sample) - 5, "heldout": {"n": 4, "mae": 0.5, "spearman": 0.8, "confusion": [[1, 0], [1, 2]]}}}
    row = df.index[df["doc_id"] == failed][0]
    out.loc[row, DROP_REASON] = DropReason.ANNOTATION_FAILED.value
    out.loc[row, DROP_DETAIL] = detail_json(error="no score in the answer")
    return out


def _group(row: Any) -> tuple[str, str, float]:
    if row.source == "web":
        return ("web_edu" if row.edu_rich else "web"), row.quality_level, float(row.quality_repeat)
    if row.source in ("code", "code_web"):
        return str(row.source), row.code_tier, float(row.code_repeat)
    if row.source == "math_science":
        return "math_science", row.edu_band, float(row.edu_repeat)
    return str(row.source), "all", 1.0


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _mixture(df: pd.DataFrame, cfg: FakeConfig, ctx: Any) -> pd.DataFrame:
    g = pd.DataFrame([_group(r) for r in df.itertuples()], columns=["kind", "sub", "repeat"])
    df = df.assign(kind=g["kind"], group=g["kind"] + "/" + g["sub"], repeat=g["repeat"])
    used: dict[str, float] = {}
    in_phase = np.zeros(len(df), dtype=bool)
    for phase, (stage, seq, packing, mix) in PHASES.items():
        groups, excluded, shortfalls = [], [], []
        for name, members in df[df["kind"].isin(list(mix))].groupby("group", sort=True):
            kind = name.split("/")[0]
            tokens, docs = int(members["n_tokens"].sum()), len(members)
            wanted = mix[kind] * float(members["repeat"].iloc[0])
            if wanted <= 0:
                excluded.append({"name": name, "documents": docs, "tokens": tokens, "reason": "zero_weight"})
                continue
            in_phase |= df["group"].eq(name).to_numpy()
            cap = cfg.max_epochs - used.get(name, 0.0) if stage == "pretrain" else cfg.max_epochs
            epochs = min(wanted, cap)
            if stage == "pretrain":
                used[name] = used.get(name, 0.0) + epochs
            short = int(round((wanted - epochs) * tokens))
            if short:
                shortfalls.append({"group": name, "reason": "epoch_cap", "tokens": short, "cap": cap, "wanted_epochs": wanted})
            rel = f"shards/{phase}/{name}/part-00000.parquet"
            shard = members[["doc_id", "text", "source", "group", "n_tokens"]].reset_index(drop=True)
            write_frame(shard, ctx.work_dir / rel)
            groups.append({
                "name": name, "kind": kind, "repeat": float(members["repeat"].iloc[0]), "mix": mix[kind], "nominal_epochs": wanted,
                "epochs": epochs, "cap": cap, "documents": docs, "tokens": tokens, "unique_documents": docs, "unique_tokens": tokens,
                "planned_tokens": int(round(epochs * tokens)), "shortfall_tokens": short, "fim": None, "packing": None,
                "replay_documents": docs, "replay_tokens": tokens, "replay_epochs": 1.0,
                "shards": [{"path": rel, "bytes": (ctx.work_dir / rel).stat().st_size, "sha256": _sha(ctx.work_dir / rel), "documents": docs, "tokens": tokens}],
            })
        if not groups:
            shortfalls.append({"group": None, "reason": "no_data", "tokens": 0, "cap": None, "wanted_epochs": None})
        write_json(ctx.work_dir / "manifests" / f"{phase}.json", _manifest(phase, stage, seq, packing, groups, excluded, shortfalls, ctx))
    agent = ~df["kind"].isin({k for _s, _q, _p, m in PHASES.values() for k in m})
    reason = np.where(in_phase, None, np.where(agent, DropReason.NO_PHASE.value, DropReason.ZERO_WEIGHT.value))
    detail = [None if r is None else detail_json(group=grp) for r, grp in zip(reason, df["group"], strict=True)]
    return _frame(df, mixture_group=df["group"].to_numpy(), drop_reason=reason, drop_detail=detail)


def _manifest(phase: str, stage: str, seq: int, packing: str, groups: list, excluded: list, shortfalls: list, ctx: Any) -> dict:
    planned = sum(g["planned_tokens"] for g in groups)
    for g in groups:
        g["weight"] = g["planned_tokens"] / planned if planned else 0.0
    return {
        "schema_version": SCHEMA_VERSION, "kind": "curation.mixture.manifest", "phase": phase, "tokenizer": "whitespace",
        "stage": stage, "builder": "documents",
        "base_dir": "..", "created_by": {"stage": "mixture", "stage_version": "fake-1", "versions": {}},
        "config_hash": "0" * 64, "input_fingerprint": ctx.input_fingerprint, "upstream": ctx.lineage, "seed": 1,
        "budget": {"spec": {"fraction": 1.0}, "tokens": planned, "nominal_tokens": planned + sum(s["tokens"] for s in shortfalls),
                   "unique_tokens": sum(g["tokens"] for g in groups), "planned_tokens": planned, "replay_tokens": sum(g["replay_tokens"] for g in groups),
                   "met": not shortfalls, "scale": 1.0,
                   "full_scale_tokens": None},
        "seq_length": seq,
        "packing": {"mode": packing, "truncation": "random"} if packing == "none" else {"mode": packing, "sequences": 0, "tokens": 0, "fill_rate": 1.0},
        "fim": {"enabled": False}, "repeats": "weights", "groups": groups, "excluded_groups": excluded, "shortfalls": shortfalls,
        "totals": {"documents": sum(g["documents"] for g in groups), "tokens": sum(g["tokens"] for g in groups),
                   "shards": len(groups), "bytes": sum(s["bytes"] for g in groups for s in g["shards"])},
    }


FAKES = {
    "minhash_dedup": FakeStage("minhash_dedup", {"minhash_cluster": object}, _minhash),
    "web_quality": FakeStage("web_quality", {"quality_score_heuristics": "float64", "quality_score_linear": "float64", "quality_bucket": "float64",
                                             "quality_level": object, "quality_repeat": "float64"}, _web_quality),
    "code_quality": FakeStage("code_quality", {"code_score_structural": "float64", "code_tier": object, "code_repeat": "float64"}, _code_quality),
    "code_web": FakeStage("code_web", {"code_web_recall": object}, _code_web),
    "edu_score": FakeStage("edu_score", {"edu_score": "float64", "edu_band": object, "edu_repeat": "float64", "edu_rich": bool}, _edu),
    "mixture": FakeStage("mixture", {"mixture_group": object}, _mixture),
}


def build_run(path: Path, raw: Path | None = None, stages: tuple[str, ...] = tuple(FAKES),
              config: dict[str, dict[str, Any]] | None = None) -> Path:
    """Run ingest, exact_dedup and the stand-ins ``stages`` on the synthetic corpus into ``path``.

    ``config`` sets keys per stage, e.g. ``{"web_quality": {"low_max_bucket": 9}}`` to move a threshold.
    """
    raw = raw or write_corpus(path.parent / f"{path.name}-raw")
    sections: dict[str, Any] = {"ingest": {"tokenizer": "whitespace"}, "exact_dedup": {"keep": "first"}}
    for name in STAGES:
        if name not in sections:
            sections[name] = {"enabled": name in stages, **((config or {}).get(name, {}) if name in stages else {})}
    recipe = {"name": "stats-fixture", "seed": 1, "stages": sections}

    def loader(name: str) -> Any:
        return FAKES[name] if name in FAKES else load_stage(name)

    with mock.patch.object(pipelines.runner, "load_stage", loader), open_client("synchronous") as client:
        run_recipe(recipe, [str(raw)], path, client=client, quiet=True)
    return path


def run_stages(stages: tuple[str, ...] = tuple(FAKES)) -> list[str]:
    """The stages ``build_run(…, stages)`` runs, in the runner's order: ingest, exact_dedup and ``stages``."""
    return [s for s in STAGES if s in ("ingest", "exact_dedup") or s in stages]


_BUILT: dict[tuple[str, ...], Path] = {}


def shared_run(factory: Any, name: str = "run", stages: tuple[str, ...] = tuple(FAKES),
               config: dict[str, dict[str, Any]] | None = None) -> Path:
    """``build_run`` once per pytest session and arguments (``factory`` is ``tmp_path_factory``); read-only."""
    key = (str(factory.getbasetemp()), name, repr(stages), json.dumps(config, sort_keys=True))
    if key not in _BUILT:
        _BUILT[key] = build_run(factory.mktemp(name) / "run", stages=stages, config=config)
    return _BUILT[key]


def test_fixture_run_is_sound_and_its_manifests_match_the_schema(tmp_path_factory):
    from pipelines.verify import verify_run

    run = shared_run(tmp_path_factory)
    assert [p.name for p in sorted(run.iterdir()) if p.name[:2].isdigit()] == [folder_name(s) for s in run_stages()]
    try:
        from curation.mixture.manifest_check import validate_manifest
    except ImportError:  # the mixture helper's module is not there yet: conservation only
        validate_manifest = None
    assert verify_run(run, validate_manifest) == []
    assert len(list((run / "80_mixture" / "manifests").glob("*.json"))) == len(PHASES)
    reasons = {json.loads((run / d / "stats.json").read_text())["stage"]: set(json.loads((run / d / "stats.json").read_text())["dropped_by_reason"])
               for d in ("00_ingest", "10_exact_dedup", "20_minhash_dedup", "40_web_quality", "50_code_quality", "60_code_web", "70_edu_score", "80_mixture")}
    assert reasons == {"ingest": {"malformed_json"}, "exact_dedup": {"exact_duplicate"}, "minhash_dedup": {"near_duplicate"},
                       "web_quality": {"low_quality"}, "code_quality": {"code_low_tier"}, "code_web": {"code_web_low_tier"},
                       "edu_score": {"annotation_failed"},
                       "mixture": {"no_phase", "zero_weight"}}
