"""``mixture``: token budgets, epochs, Parquet shards and manifests for the training phases.

account (per-partition token sums per phase × group × language, summed on the client) → plan
(the paper's budgets × one scale, the policy's repeat factors, caps → epochs and weights; checks of
the top web level's epochs and of groups of few documents) → write shards (one shuffle on the shard key; each
shard is built, shuffled, FIM'd, packed and written by a worker) → manifests (from the shard
records, so token sums are the shards' own) → annotate (a document is kept if it is in at least
one phase; otherwise the policy's exclusion reason — ``low_quality``, ``code_low_tier``,
``code_web_low_tier``, ``zero_weight`` — with the scores and the rule, or ``no_phase``).
"""

from __future__ import annotations

import dataclasses
import json
import logging
from typing import Any

import dask.dataframe as dd
import numpy as np
import pandas as pd

from curation.config import ConfigError, StageConfig, check_choice, check_range
from curation.mixture.checks import check_plans
from curation.mixture.fim import FimSentinels
from curation.mixture.groups import REPO_GROUP, THREADS_GROUP, memberships, shard_count
from curation.mixture.manifest import build_manifest, group_entry, validate_schema
from curation.mixture.plan import (
    ON_CAP,
    GroupStat,
    PhasePlan,
    PhaseSpec,
    fit_scale,
    plan_phases,
    pretrain_epochs,
    with_epochs,
)
from curation.mixture.policy import Policy, doc_groups, exclusion
from curation.mixture.repo_concat import RepoHeaders
from curation.mixture.shards import ShardOptions
from curation.schema import DROP_DETAIL, DROP_REASON, DropReason, annotated_meta, detail_json
from curation.tokens import count_tokens
from pipelines.io import write_json
from pipelines.progress import compute_with_progress
from pipelines.stages.mixture_write import KEY_SEP, RECORD_META, explode_meta, explode_partition, write_shards

log = logging.getLogger(__name__)

#: The GLM-4.5 phases (arXiv 2508.06471 §2.2–2.4); the recipe repeats these with their sources.
DEFAULT_PHASES: dict[str, dict[str, Any]] = {
    "pretrain_phase1": {
        "stage": "pretrain", "builder": "documents", "tokens": 15_000_000_000_000,
        "seq_length": 4096, "packing": "none", "truncation": "random", "fim": True,
        "mix": {"web": 0.75, "web_edu": 0.5, "code": 0.4, "code_web": 0.4, "math_science": 0.4, "long_context": 0.75},
    },
    "pretrain_phase2": {
        "stage": "pretrain", "builder": "documents", "tokens": 7_000_000_000_000,
        "seq_length": 4096, "packing": "none", "truncation": "random", "fim": True,
        "mix": {"web": 0.25, "web_edu": 0.5, "code": 0.6, "code_web": 0.6, "math_science": 0.6, "long_context": 0.25},
    },
    "midtrain_repo_code_32k": {
        "stage": "midtrain", "builder": "repo_code", "tokens": 500_000_000_000,
        "seq_length": 32768, "packing": "best_fit", "max_doc_tokens": 32768, "mix": {"code": 1.0, "issues_prs_commits": 1.0},
    },
    "midtrain_reasoning_32k": {
        "stage": "midtrain", "builder": "documents", "tokens": 500_000_000_000,
        "seq_length": 32768, "packing": "best_fit", "mix": {"reasoning": 1.0},
    },
    "midtrain_long_context_128k": {
        "stage": "midtrain", "builder": "long_context", "tokens": 100_000_000_000,
        "seq_length": 131072, "packing": "best_fit", "min_tokens": 16384, "mix": {"long_docs": 2.0, "agent": 1.0},
    },
}
DEFAULT_REPEATS: dict[str, float] = {
    "web/high": 4.0, "web/medium_high": 2.0, "web/medium": 1.0, "web/medium_low": 0.5, "web/low": 0.0,
    "web_edu/high": 2.0, "web_edu/medium": 1.0, "web_edu/low": 0.5,
    "code/high": 2.0, "code/medium": 1.0, "code/low": 0.0, "code_web/high": 2.0, "code_web/medium": 1.0, "code_web/low": 0.0,
    "math_science/high": 2.0, "math_science/medium": 1.0, "math_science/low": 0.5, "*": 1.0,
}


@dataclasses.dataclass(frozen=True)
class MixtureConfig(StageConfig):
    seed: int | None = None
    tokenizer: str = "qwen"
    shard_target_mb: float = 256.0
    materialize_repeats: bool = False
    keep_meta: bool = False
    on_cap: str = "shortfall"
    max_shuffle_partitions: int = 4096
    fim_rate: float = 0.5
    fim_spm_rate: float = 0.5
    fim_sources: tuple[str, ...] = ("code",)
    fim_sentinels: dict[str, str] = dataclasses.field(default_factory=lambda: dataclasses.asdict(FimSentinels()))
    repo_header: str = "<|repo_name|>{repo}\n"
    file_header: str = "<|file_sep|>{path}\n"
    repeat: dict[str, float] = dataclasses.field(default_factory=lambda: dict(DEFAULT_REPEATS))
    web_sources: tuple[str, ...] = ("web",)
    web_edu_bands: tuple[str, ...] = ("high",)
    language_repeat: dict[str, float] = dataclasses.field(default_factory=dict)
    language_kinds: tuple[str, ...] = ("web", "web_edu")
    scale: float | str = "auto"
    scale_fit: tuple[str, ...] = ("pretrain",)
    top_group: str = "web/high"
    min_top_epochs: float = 3.2
    concentration_max_share: float = 0.25
    concentration_max_documents: int = 10
    on_concentration: str = "warn"
    max_epochs: dict[str, float] = dataclasses.field(default_factory=lambda: {"*": 4.0})
    phases: dict[str, Any] = dataclasses.field(default_factory=lambda: json.loads(json.dumps(DEFAULT_PHASES)))

    def validate(self) -> None:
        check_range(self, "shard_target_mb", 0.001, 1e6)
        check_range(self, "fim_rate", 0.0, 1.0)
        check_range(self, "fim_spm_rate", 0.0, 1.0)
        check_range(self, "max_shuffle_partitions", 1, 1 << 20)
        check_choice(self, "on_cap", ON_CAP)
        check_choice(self, "on_concentration", ("warn", "fail"))
        check_range(self, "concentration_max_share", 0.0, 1.0)
        check_range(self, "concentration_max_documents", 0, None)
        check_range(self, "min_top_epochs", 0.0, None)
        if self.scale != "auto":
            try:
                ok = float(self.scale) >= 0
            except (TypeError, ValueError):
                ok = False
            if not ok:
                raise ConfigError(f"MixtureConfig.scale = {self.scale!r}; give auto or a number ≥ 0 (budget = scale × each phase's tokens)")
        bad = sorted(set(self.scale_fit) - {"pretrain", "midtrain"})
        if bad:
            raise ConfigError(f"MixtureConfig.scale_fit has {bad}; list pretrain and/or midtrain")
        if set(self.fim_sentinels) != {"prefix", "middle", "suffix"}:
            raise ConfigError(f"MixtureConfig.fim_sentinels needs exactly the keys prefix, middle, suffix; got {sorted(self.fim_sentinels)}")
        for table in ("repeat", "max_epochs", "language_repeat"):
            for k, v in getattr(self, table).items():
                if float(v) < 0:
                    raise ConfigError(f"MixtureConfig.{table}[{k!r}] = {v} must be ≥ 0")
        if "{path}" not in self.file_header:
            raise ConfigError("MixtureConfig.file_header must contain {path}")
        try:
            specs = self.phase_specs()
        except ValueError as exc:
            raise ConfigError(str(exc)) from exc
        if not specs:
            raise ConfigError("MixtureConfig.phases is empty; the mixture stage needs at least one phase")

    def phase_specs(self) -> list[PhaseSpec]:
        """The enabled phases: the recipe's ``phases`` merged by name over the five default phases.

        A recipe entry replaces the keys it gives (``mix`` as a whole); a phase set to null or
        with ``enabled: false`` is left out; a new name adds a phase.
        """
        merged: dict[str, Any] = json.loads(json.dumps(DEFAULT_PHASES))
        for name, data in (self.phases or {}).items():
            base = merged.get(str(name))
            merged[str(name)] = None if data is None else {**(base or {}), **dict(data)}
        out = []
        for name, data in merged.items():
            if data is None:
                continue
            data = dict(data)
            if not data.pop("enabled", True):
                continue
            out.append(PhaseSpec.parse(name, data))
        return out

    def policy(self) -> Policy:
        """The mixture policy: group precedence, the one repeat table (the recipe's over the defaults), languages."""
        return Policy(
            repeat={**DEFAULT_REPEATS, **{str(k): float(v) for k, v in self.repeat.items()}},
            web_sources=tuple(self.web_sources), web_edu_bands=tuple(self.web_edu_bands),
            language_repeat={str(k): float(v) for k, v in self.language_repeat.items()}, language_kinds=tuple(self.language_kinds),
        )

    def shard_options(self, seed: int) -> ShardOptions:
        return ShardOptions(
            seed=seed, fim_rate=self.fim_rate, fim_spm_rate=self.fim_spm_rate, fim_sources=tuple(self.fim_sources),
            sentinels=FimSentinels(**self.fim_sentinels), headers=RepoHeaders(self.repo_header, self.file_header),
            tokenizer=self.tokenizer, materialize_repeats=self.materialize_repeats, keep_meta=self.keep_meta,
        )


AGG_META = pd.DataFrame({
    "phase": pd.Series(dtype=object), "group": pd.Series(dtype=object), "lang": pd.Series(dtype=object), "documents": pd.Series(dtype="int64"),
    "tokens": pd.Series(dtype="int64"), "chars": pd.Series(dtype="int64"), "repeat_tokens": pd.Series(dtype="float64"),
    "zero_documents": pd.Series(dtype="int64"), "zero_tokens": pd.Series(dtype="int64"),
})


def _account(df: pd.DataFrame, specs: list[PhaseSpec], policy: Policy, headers: RepoHeaders | None = None,
             tokenizer: str = "qwen") -> pd.DataFrame:
    m = memberships(df, specs, doc_groups(df, policy))
    repo = (m["group"] == REPO_GROUP).to_numpy()
    if headers is not None and repo.any():  # a repository document carries a file header per file: plan with its tokens
        paths = df["path"].astype(object).to_numpy()[m.loc[repo, "row"].to_numpy()] if "path" in df.columns else [None] * int(repo.sum())
        heads = [headers.file.format(path=p if isinstance(p, str) and p else "") for p in paths]
        m.loc[repo, "n_tokens"] = m.loc[repo, "n_tokens"].to_numpy() + count_tokens(heads, tokenizer).astype("int64")
    pos = m["repeat"] > 0
    m = m.assign(
        documents=pos.astype("int64"), tokens=np.where(pos, m["n_tokens"], 0), chars=np.where(pos, m["chars"], 0),
        repeat_tokens=m["repeat"] * m["n_tokens"], zero_documents=(~pos).astype("int64"), zero_tokens=np.where(pos, 0, m["n_tokens"]),
    )
    out = m.groupby(["phase", "group", "lang"], sort=True)[list(AGG_META.columns[3:])].sum().reset_index()
    return out.astype(AGG_META.dtypes.to_dict())


def group_stats(agg: pd.DataFrame) -> dict[str, dict[str, GroupStat]]:
    """phase → group → GroupStat from the accounting sums (zero-weight groups keep their size, repeat 0)."""
    out: dict[str, dict[str, GroupStat]] = {}
    agg = agg.groupby(["phase", "group"], sort=True)[list(AGG_META.columns[3:])].sum().reset_index()
    for r in agg.itertuples(index=False):
        if r.tokens > 0:
            st = GroupStat(int(r.tokens), float(r.repeat_tokens) / float(r.tokens), int(r.documents))
        else:
            st = GroupStat(int(r.zero_tokens), 0.0, int(r.zero_documents))
        out.setdefault(r.phase, {})[r.group] = st
    return out


def _with_destination(df: pd.DataFrame, dest: dict[str, int]) -> pd.DataFrame:
    """``_dest``: the output partition of each row's shard (every shard key is planned)."""
    out = df.assign(_dest=df["_key"].map(dest))
    if out["_dest"].isna().any():
        raise RuntimeError(f"mixture: shard keys outside the plan: {sorted(set(out.loc[out['_dest'].isna(), '_key']))[:5]}")
    return out.assign(_dest=out["_dest"].astype("int64"))


def _annotate(df: pd.DataFrame, specs: list[PhaseSpec], policy: Policy, live: set[tuple[str, str]]) -> pd.DataFrame:
    df = df.copy()
    groups = doc_groups(df, policy)
    m = memberships(df, specs, groups)
    in_live = np.array([(p, g) in live for p, g in zip(m["phase"], m["group"], strict=True)], dtype=bool) & (m["repeat"] > 0).to_numpy()
    phases: dict[int, list[str]] = {}
    for row, phase in zip(m["row"][in_live], m["phase"][in_live], strict=True):
        phases.setdefault(int(row), []).append(phase)
    listed = {int(r) for r in m["row"]}
    mixed = {k for s in specs for k, v in s.mix.items() if v > 0}
    reasons: list[str | None] = []
    details: list[str | None] = []
    records = df.to_dict("records") if len(df) else []
    for i, (grp, kind, rep, rule) in enumerate(zip(groups["group"], groups["kind"], groups["repeat"], groups["rule"], strict=True)):
        if i in phases:
            reasons.append(None)
            details.append(None)
        elif rep <= 0:  # the policy excludes it: the recipe's rule, with the scores that decided
            reason, detail = exclusion(records[i], grp, kind, rule, policy)
            reasons.append(reason)
            details.append(detail)
        elif i in listed or kind in mixed:
            reasons.append(DropReason.ZERO_WEIGHT.value)
            details.append(detail_json(group=grp, repeat=float(rep), rule="no phase gives its group epochs at this scale"))
        else:
            reasons.append(DropReason.NO_PHASE.value)
            details.append(detail_json(group=grp, kind=kind, phases=[s.name for s in specs]))
    df["mixture_group"] = groups["group"].to_numpy()
    df["mixture_phases"] = [",".join(sorted(set(phases[i]), key=[s.name for s in specs].index)) if i in phases else None for i in range(len(df))]
    df[DROP_REASON] = pd.Series(reasons, index=df.index, dtype=object)
    df[DROP_DETAIL] = pd.Series(details, index=df.index, dtype=object)
    return df


def upstream_stages(ctx: Any) -> list[dict[str, Any]]:
    """Version, config hash and config of every finished earlier stage of the run (from _SUCCESS and stats.json)."""
    run_dir = getattr(ctx, "run_dir", None)
    if run_dir is None or not run_dir.exists():
        return []
    out = []
    for child in sorted(run_dir.iterdir()):
        marker = child / "_SUCCESS"
        if not child.is_dir() or not marker.exists() or child.name.split("_", 1)[-1] == "mixture":
            continue
        try:
            m = json.loads(marker.read_text())
            stats = json.loads((child / "stats.json").read_text()) if (child / "stats.json").exists() else {}
        except (OSError, json.JSONDecodeError):
            continue
        out.append({
            "stage": m.get("stage", child.name.split("_", 1)[-1]), "folder": child.name, "version": m.get("version"),
            "config_hash": m.get("config_hash"), "output_fingerprint": m.get("output_fingerprint"), "config": stats.get("config"),
        })
    return out


class MixtureStage:
    name = "mixture"
    version = "1"
    config_cls = MixtureConfig
    requires = ("doc_id", "text", "source", "n_tokens")
    produces: dict[str, Any] = {"mixture_group": object, "mixture_phases": object}
    global_keys = ("seed",)

    def build(self, docs: dd.DataFrame, cfg: MixtureConfig, ctx: Any) -> dd.DataFrame:
        specs = cfg.phase_specs()
        seed = int(cfg.seed if cfg.seed is not None else (ctx.recipe or {}).get("seed", 1234))
        agg = compute_with_progress(
            docs.map_partitions(_account, specs, cfg.policy(), RepoHeaders(cfg.repo_header, cfg.file_header), cfg.tokenizer, meta=AGG_META),
            ctx.client, "mixture: token accounting", ctx.quiet
        )
        agg = agg.groupby(["phase", "group", "lang"], sort=True)[list(AGG_META.columns[3:])].sum().reset_index()
        stats0 = group_stats(agg)
        scale = self.resolve_scale(cfg, specs, stats0)
        plan0 = plan_phases(specs, stats0, cfg.max_epochs, cfg.on_cap, scale)
        live = {(p, g.group) for p, plan in plan0.items() for g in plan.groups if g.epochs > 0 and g.tokens > 0}
        chars = {k: int(v) for k, v in agg.groupby(["phase", "group"])["chars"].sum().items()}
        n_shards = {key: shard_count(chars.get(key, 0), cfg.shard_target_mb * 1e6) for key in sorted(live)}
        epochs0 = {(p, g.group): g.epochs for p, plan in plan0.items() for g in plan.groups}
        records = self._write(docs, cfg, ctx, specs, seed, live, n_shards, epochs0)
        self._manifests(cfg, ctx, specs, seed, agg, records, scale, epochs0)
        return docs.map_partitions(
            _annotate, specs, cfg.policy(), live, meta=annotated_meta(docs._meta, self.produces)
        )

    @staticmethod
    def resolve_scale(cfg: MixtureConfig, specs: list[PhaseSpec], stats: dict[str, dict[str, GroupStat]]) -> float:
        """``scale`` as a number: ``auto`` fits the largest the data supplies within the caps (``scale_fit`` phases)."""
        if cfg.scale != "auto":
            return float(cfg.scale)
        fitted = fit_scale(specs, stats, cfg.max_epochs, tuple(cfg.scale_fit))
        if fitted <= 0:  # no data in the scale_fit phases (e.g. only reasoning traces): fit the phases that have some
            fitted = fit_scale(specs, stats, cfg.max_epochs, ("pretrain", "midtrain"))
        log.info("mixture: scale auto = %.6g (the %s phases' budgets as large as the data allows under max_epochs)",
                 fitted, "/".join(cfg.scale_fit))
        return fitted * (1.0 - 1e-9)  # the binding group lands on its cap, not a rounding error above it

    def _write(self, docs: dd.DataFrame, cfg: MixtureConfig, ctx: Any, specs: list[PhaseSpec], seed: int,
               live: set[tuple[str, str]], n_shards: dict[tuple[str, str], int], epochs0: dict[tuple[str, str], float]) -> pd.DataFrame:
        if not live:
            return RECORD_META.copy()
        keep_cols = explode_meta(docs._meta)
        rows = docs.map_partitions(explode_partition, specs, cfg.policy(), live, n_shards, seed, cfg.keep_meta, meta=keep_cols)
        # Each shard goes to a partition of its own (range partitioning on the shard's ordinal; a hash
        # shuffle put two or three 32 MB shards in one partition and killed a 1 GB worker building them).
        keys = sorted(f"{p}{KEY_SEP}{g}{KEY_SEP}{s:05d}" for (p, g), k in n_shards.items() if (p, g) in live for s in range(k))
        nparts = max(1, min(len(keys), cfg.max_shuffle_partitions))
        per = -(-max(len(keys), 1) // nparts)
        dest = {k: i // per for i, k in enumerate(keys)}
        rows = rows.map_partitions(_with_destination, dest, meta=rows._meta.assign(_dest=pd.Series(dtype="int64")))
        shuffled = rows.set_index("_dest", divisions=list(range(nparts + 1)))
        spec_map = {s.name: s for s in specs}
        written = shuffled.map_partitions(write_shards, str(ctx.work_dir), spec_map, cfg.shard_options(seed), epochs0, meta=RECORD_META)
        out = compute_with_progress(written, ctx.client, "mixture: write shards", ctx.quiet)
        return out.sort_values(["phase", "group", "shard"]).reset_index(drop=True)

    def _manifests(self, cfg: MixtureConfig, ctx: Any, specs: list[PhaseSpec], seed: int, agg: pd.DataFrame,
                   records: pd.DataFrame, scale: float, epochs0: dict[tuple[str, str], float]) -> None:

        stats = group_stats(agg)
        for key, g in records.groupby(["phase", "group"], sort=True):
            phase, group = key
            old = stats[phase][group]
            stats[phase][group] = GroupStat(int(g["unique_tokens"].sum()), old.repeat, int(g["unique_documents"].sum()))
        plans = plan_phases(specs, stats, cfg.max_epochs, cfg.on_cap, scale)
        for name, plan in plans.items():  # built groups: the epochs their shards were written with (see with_epochs)
            with_epochs(plan, {g: e for (p, g), e in epochs0.items() if p == name and g in (REPO_GROUP, THREADS_GROUP)})
        warnings = check_plans(plans, specs, top_group=cfg.top_group, min_top_epochs=cfg.min_top_epochs,
                               max_share=cfg.concentration_max_share, max_documents=cfg.concentration_max_documents,
                               on_concentration=cfg.on_concentration)
        if not ctx.quiet:
            for w in warnings:
                print(f"WARNING (mixture plan) {w['message']}", flush=True)  # the console, besides the log and the manifests
        langs = language_table(agg)
        chash = ctx.config_hash
        provenance = {
            "created_by": {"stage": self.name, "stage_version": self.version, "versions": ctx.versions()},
            "config_hash": chash, "input_fingerprint": ctx.input_fingerprint, "upstream": upstream_stages(ctx), "seed": seed,
        }
        fim_base = {
            "enabled": True, "rate": cfg.fim_rate, "spm_rate": cfg.fim_spm_rate, "sources": list(cfg.fim_sources),
            "sentinels": dict(cfg.fim_sentinels), "split": "character, two uniform points (Bavarian et al. 2022); SPM as prefix-suffix-middle variant of StarCoder",
        }
        summary: dict[str, Any] = {}
        for spec in specs:
            plan = plans[spec.name]
            entries, fim_total = self._group_entries(spec, plan, records[records["phase"] == spec.name])
            manifest = build_manifest(
                spec, plan, entries, provenance=provenance, fim={**fim_base, "documents": fim_total},
                repeats="materialized" if cfg.materialize_repeats else "weights",
                languages=langs.get(spec.name, {}), warnings=[w for w in warnings if w["phase"] in (None, spec.name)],
            )
            errors = validate_schema(manifest)
            if errors:
                raise RuntimeError(f"mixture: manifest {spec.name} does not match its schema (a bug): {errors[:3]}")
            write_json(ctx.work_dir / "manifests" / f"{spec.name}.json", manifest)
            summary[spec.name] = _phase_summary(plan, manifest)
        ctx.extra_stats["phases"] = summary
        ctx.extra_stats["scale"] = {"config": cfg.scale, "value": scale}
        ctx.extra_stats["pretrain_epochs"] = {k: round(v, 6) for k, v in sorted(pretrain_epochs(plans, specs).items())}
        ctx.extra_stats["warnings"] = warnings
        ctx.extra_stats["languages"] = langs

    @staticmethod
    def _group_entries(spec: PhaseSpec, plan: PhasePlan, recs: pd.DataFrame) -> tuple[list[dict[str, Any]], dict[str, int]]:
        entries = []
        fim_total: dict[str, int] = {}
        for gp in plan.groups:
            g = recs[recs["group"] == gp.group]
            shards = [
                {"path": r.path, "bytes": int(r.bytes), "sha256": r.sha256, "documents": int(r.documents), "tokens": int(r.tokens),
                 "unique_documents": int(r.unique_documents), "unique_tokens": int(r.unique_tokens),
                 "replay_documents": int(r.replay_documents), "replay_tokens": int(r.replay_tokens)}
                for r in g.itertuples(index=False)
            ]
            fim: dict[str, int] = {}
            for raw in g["fim"]:
                for mode, n in json.loads(raw).items():
                    fim[mode] = fim.get(mode, 0) + int(n)
                    fim_total[mode] = fim_total.get(mode, 0) + int(n)
            packing = None
            files = [
                {"path": r.packing_path, "bytes": int(r.packing_bytes), "sha256": r.packing_sha256, "sequences": int(r.sequences),
                 "tokens": int(r.packing_tokens), "min_sequences": int(r.min_sequences)}
                for r in g.itertuples(index=False) if isinstance(r.packing_path, str) and r.packing_path
            ]
            if files:
                seqs = sum(f["sequences"] for f in files)
                toks = sum(f["tokens"] for f in files)
                packing = {"sequences": seqs, "tokens": toks, "fill_rate": round(toks / (seqs * spec.seq_length), 6) if seqs else 1.0,
                           "min_sequences": sum(f["min_sequences"] for f in files), "files": files}
            entries.append(group_entry(gp, shards, fim or None, packing))
        return entries, fim_total


def language_table(agg: pd.DataFrame) -> dict[str, dict[str, dict[str, dict[str, int]]]]:
    """phase → group → language → unique documents and tokens (groups with a repeat factor > 0)."""
    out: dict[str, dict[str, dict[str, dict[str, int]]]] = {}
    for r in agg.itertuples(index=False):
        if r.documents > 0:
            out.setdefault(r.phase, {}).setdefault(r.group, {})[str(r.lang)] = {"documents": int(r.documents), "tokens": int(r.tokens)}
    return out


def _phase_summary(plan: PhasePlan, manifest: dict[str, Any]) -> dict[str, Any]:
    return {
        "budget_tokens": plan.budget_tokens, "planned_tokens": plan.planned_tokens, "budget_met": plan.budget_met,
        "replay_tokens": manifest["totals"]["replay_tokens"], "languages": manifest["languages"],
        "shard_tokens": manifest["totals"]["tokens"], "shards": manifest["totals"]["shards"],
        "fill_rate": manifest["packing"].get("fill_rate"), "shortfalls": plan.shortfalls,
        "groups": {g.group: {"epochs": round(g.epochs, 6), "weight": round(g.weight, 6), "tokens": g.tokens} for g in plan.groups},
    }


STAGE = MixtureStage()
